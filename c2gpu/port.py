"""Whole-file port: the user's file with each ported nest replaced by a call to its host wrapper.

Everything outside the ported nests stays exactly as the user wrote it: the
file is spliced by source coordinates, never regenerated.  `#line`
directives keep compiler messages pointing at the user's own lines.
Nests that cannot be ported stay as they were, preceded by a comment that
says why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import islpy as isl

from . import __version__
from . import polyhedral as ph
from .codegen import ArrayPlan, CodegenError, KernelCode, kernel_code, plan_arrays, templates
from .diagnostics import C2GPUError
from .frontend import PreprocessOptions, load_program
from .ir import Loc, Loop, Nest, Program
from .pipeline import PassManager
from .poly import Poly
from .source import SpanError, for_span
from .tiling import tiled_kernel

PIPELINE = ["normalize", "dependence", "mapping", "shared-memory"]
NARROW_INTS = {"int", "signed int", "unsigned int", "unsigned", "signed", "short", "unsigned short", "char",
               "signed char", "unsigned char", "_Bool"}


@dataclass
class NestCode:
    nest: Nest
    wrapper: str
    kernels: list[KernelCode]
    arrays: list[ArrayPlan]
    call: str                       # the statement that replaces the nest
    prototype: str
    notes: list[str]
    reductions: list[dict]
    shared_decisions: list = field(default_factory=list)   # every shared-memory opportunity and its decision


@dataclass
class NestOutcome:
    nest: Nest
    ported: bool
    reason: str = ""
    loc: Loc | None = None
    code: NestCode | None = None
    mapping: object = None
    dependence: object = None
    performance: object = None      # c2gpu.perf NestPerformance, when a GPU was given


@dataclass
class PortResult:
    source_path: str
    text: str                                   # the .cu file
    outcomes: list[NestOutcome] = field(default_factory=list)
    host_text: str | None = None                # split mode: the user's C file calling the wrappers
    split_reasons: list[str] = field(default_factory=list)

    @property
    def ported(self) -> list[NestOutcome]:
        return [o for o in self.outcomes if o.ported]


def with_blocks(mapping, blocks: dict[str, tuple[int, int, int]]):
    """The mapping with the given kernels' block shapes (a block-tree reduction keeps a power-of-two block)."""
    from dataclasses import replace as _replace

    def fix(item):
        if hasattr(item, "loops"):
            b = tuple(blocks.get(item.name, item.block))
            n = b[0] * b[1] * b[2]
            if item.reductions and n & (n - 1):
                return item
            return _replace(item, block=b)
        return _replace(item, body=tuple(fix(x) for x in item.body))
    return _replace(mapping, items=tuple(fix(x) for x in mapping.items))


@dataclass(frozen=True)
class LoopFinal:
    """A loop variable declared outside its `for` header: C leaves it a value after the nest; the port restores it."""
    name: str       # as the C code names it
    ctype: str
    when: str       # C condition on the nest's parameters under which the loop's header runs at least once
    value: str      # the variable's value after the nest in that case (otherwise it keeps the value it had)


def _c_var(lp: Loop) -> str:
    return lp.origin.var if lp.origin is not None else lp.var


def loop_finals(nest: Nest) -> list[LoopFinal]:
    """The value every loop variable declared outside its header has after the nest, as C on the parameters.

    `for (i = lo; cond; i += step)` leaves i == lo + step * max(0, trip) after each execution of its
    header.  The value after the nest is the one of the header execution that comes last: isl takes
    the lexicographic maximum over the schedule (enclosing iterations interleaved with the textual
    position of each loop in its parent's body) of every loop with that variable, within their
    domains; the variable is unchanged when no such header runs.  Computed from the bounds at nest
    entry, never by running the loops.  Refuses (CodegenError) what it cannot state exactly: a
    condition around the loop that is not affine, a loop inside another loop with the same variable.
    """
    parent: dict[int, Loop | None] = {nest.root.lid: None}
    position: dict[int, int] = {nest.root.lid: 0}
    for lp in nest.loops():
        for k, child in enumerate(lp.body):
            if isinstance(child, Loop):
                parent[child.lid], position[child.lid] = lp, k

    def enclosing(lp: Loop) -> list[Loop]:
        out = []
        while parent[lp.lid] is not None:
            lp = parent[lp.lid]
            out.insert(0, lp)
        return out

    inside = declared_in_nest(nest)
    by_name: dict[str, list[Loop]] = {}
    for lp in nest.loops():
        if not lp.declared_in_header and _c_var(lp) not in inside:
            by_name.setdefault(_c_var(lp), []).append(lp)
    params = f"[{', '.join(nest.params)}]"
    out = []
    for name, loops in by_name.items():
        depth = max(len(enclosing(lp)) for lp in loops)
        headers = None
        for lp in loops:
            where = f"loop variable '{name}' (line {lp.loc.line})"
            path = enclosing(lp)
            bad = next((g for g in lp.guards if g.constraints is None), None)
            problem = ("is also the variable of a loop around it" if any(p in loops for p in path) else
                       f"keeps a value after the nest that depends on the condition '{bad.text}' (line "
                       f"{bad.loc.line}), which c2gpu cannot evaluate on the host" if bad is not None else
                       "has an unknown trip count" if lp.trip_count is None or not lp.normalized else "")
            if problem and not _may_be_read_after(nest, name):
                headers = None
                break                  # its value after the nest is never read: nothing to restore
            if problem:
                raise CodegenError(f"{where} {problem}")
            names = {p.var: ph.dim(p.lid) for p in path}
            # schedule: [v0, pos1, v1, pos2, ..., v(d-1), pos(d)], padded with zeros to the deepest loop
            sched = [term for p, q in zip(path, path[1:] + [lp]) for term in (names[p.var], str(position[q.lid]))]
            sched += ["0"] * (2 * (depth - len(path)))
            start = ph.poly_to_isl(lp.origin.lower, names) if lp.origin is not None else "0"
            step = lp.origin.step if lp.origin is not None else 1
            trip = ph.sym_to_isl(lp.trip_count, names)
            # (prefixed names: the nest's parameters may be called s0, x or t)
            dims = [f"c2gpu_s{k}" for k in range(2 * depth)] + ["c2gpu_x"]
            cons = ph.domain_constraints(path, names, lp.guards)
            cons += [f"c2gpu_s{k} = {term}" for k, term in enumerate(sched)]
            cons.append(f"exists (c2gpu_t : c2gpu_t = {trip} and ((c2gpu_t >= 1 and c2gpu_x = {start} + {step} * "
                        f"c2gpu_t) or (c2gpu_t <= 0 and c2gpu_x = {start})))")
            inner = ", ".join(names[p.var] for p in path)
            exists = f"exists ({inner} : {' and '.join(cons)})" if inner else " and ".join(cons)
            e = isl.Set(f"{params} -> {{ [{', '.join(dims)}] : {exists} }}")
            headers = e if headers is None else headers.union(e)
        if headers is None:
            continue
        value = headers.lexmax().dim_max(2 * depth).coalesce()
        if value.domain().is_empty():
            continue               # no header runs: the variable keeps its value
        last = loops[-1]
        out.append(LoopFinal(name, last.c_type, ph.to_c(value.domain().coalesce(), list(nest.params)),
                             ph.to_c(value, list(nest.params))))
    return out


def _may_be_read_after(nest: Nest, name: str) -> bool:
    """Nest.live_after when the IR has it; without it, every variable may be read after the nest."""
    return name in nest.live_after if hasattr(nest, "live_after") else True


def declared_in_nest(nest: Nest) -> set[str]:
    """Names declared inside the nest (`int j;` in a loop body): gone after it, nothing to restore."""
    return {name for lp in nest.loops() for name in lp.declared}


def _kernels_with_hosts(items, host_vars):
    for it in items:
        if hasattr(it, "loops"):
            yield it, list(host_vars)
        else:
            yield from _kernels_with_hosts(it.body, host_vars + [it])


def build_nest_code(nest: Nest, mapping, shared=None) -> NestCode:
    by_id = {lp.lid: lp for lp in nest.loops()}
    arrays = plan_arrays(nest, set())
    array_map = {a.name: a for a in arrays}
    scalar_types = {s.name: s.ctype for s in nest.scalars}
    kernels: list[KernelCode] = []
    launch_items = []
    # a reduction result read by a later kernel (in a host time loop) is read where it is: on the device
    reduced = frozenset(r.target for k in mapping.kernels() for r in k.reductions)

    def host_var_decls(host_loops) -> list[tuple[str, str]]:
        out = []
        for h in host_loops:
            lp = by_id[h.lid]
            out.append((lp.origin.var if lp.origin else lp.var, lp.c_type))
            if lp.origin is not None:
                out.append((lp.var, "int"))
        return out

    def build(items, host_loops):
        result = []
        for it in items:
            if hasattr(it, "loops"):
                kc = kernel_code(nest, it, array_map, host_var_decls(host_loops), reduced)
                splan = shared.kernels.get(it.name) if shared is not None else None
                if splan is not None and splan.chosen:
                    kc, text = tiled_kernel(nest, it, splan, array_map, kc)
                else:
                    text = templates().get_template("kernel.cu.j2").render(k=kc)
                kc.text = text
                kernels.append(kc)
                result.append({"kind": "launch", "k": kc})
            else:
                lp = by_id[it.lid]
                prologue = []
                if lp.origin is not None:
                    o = lp.origin
                    prologue.append(f"const int {lp.var} = ({o.var} - ({o.lower.to_c()})) / ({o.step});")
                result.append({"kind": "loop", "header": lp.header, "prologue": prologue,
                               "body": build(it.body, host_loops + [it])})
        return result

    launch_items = build(mapping.items, [])
    reductions = []
    for k in kernels:
        for r in k.reductions:
            if r["target"] not in [x["target"] for x in reductions]:
                reductions.append({"target": r["target"], "type": r["type"]})
    # host loop variables declared outside their for header need a declaration in the wrapper
    decls = []
    for lp in nest.loops():
        if lp.lid in _host_lids(mapping.items) and not lp.declared_in_header:
            decls.append(f"{lp.c_type} {lp.origin.var if lp.origin else lp.var};")
    # the wrapper's parameters: arrays, scalars the kernels read, reduction results
    red_names = {r["target"] for r in reductions}
    host_names = {n for k in _host_lids(mapping.items) for n in (by_id[k].var, by_id[k].origin.var if by_id[k].origin else by_id[k].var)}
    scalar_params = []
    for k in kernels:
        for p, a in zip(k.params, k.args):
            if a.startswith("d_") or a in host_names or a in red_names:
                continue
            if (p, a) not in scalar_params:
                scalar_params.append((p, a))
    for name in nest.params:
        t = scalar_types.get(name, "int")
        if (f"{t} {name}", name) not in scalar_params:
            scalar_params.append((f"{t} {name}", name))
    params, args = [], []
    for a in arrays:
        const = "" if a.written else "const "
        params.append(f"{const}{a.ctype} *{a.name}")
        args.append(f"({const}{a.ctype} *)({a.name})")
    widened = []
    for p, a in scalar_params:
        ctype = p[:-len(a)].strip()
        if ctype in NARROW_INTS:
            # the wrapper's sizes, offsets and grid are computed from these: in 64 bits, since n * m
            # elements may pass 2^31 where n and m do not
            widened.append(f"const long long {a} = c2gpu_arg_{a};")
            p = f"{ctype} c2gpu_arg_{a}"
        params.append(p)
        args.append(a)
    for r in reductions:
        params.append(f"{r['type']} *{r['target']}")
        args.append(f"&{r['target']}")
    privates = {v: k.name for k in kernels for v, _ in k.last_values}
    for k in kernels:
        stale = next((a for a in k.args if privates.get(a, k.name) != k.name), None)
        if stale is not None:
            # it would get the host's value from before the nest, not the one the other kernel's threads left
            raise CodegenError(f"scalar '{stale}' is private to the threads of {privates[stale]} and read by {k.name}")
    lasts = []
    for k in kernels:
        for v, t in k.last_values:
            if v not in [x["name"] for x in lasts]:
                lasts.append({"name": v, "type": t})
                params.append(f"{t} *c2gpu_out_{v}")
                args.append(f"&{v}")
    finals = loop_finals(nest)
    for f in finals:
        params.append(f"{f.ctype} *c2gpu_final_{f.name}")
        args.append(f"&{f.name}")
    wname = "c2gpu_" + "".join(c if c.isalnum() or c == "_" else "_" for c in nest.name)  # function@line: unique
    signature = f"static void {wname}({', '.join(params)})"
    nonempty = _nonempty(nest)
    wrapper = templates().get_template("wrapper.cu.j2").render(w={
        "nest": nest.name, "source": f"{nest.loc.file}:{nest.loc.line}", "signature": signature,
        "nonempty": nonempty, "decls": decls, "finals": finals, "widened": widened, "lasts": lasts,
        "arrays": arrays, "reductions": reductions, "plan": launch_items})
    # the kernels and wrapper are C++: a C name that is a C++ keyword (`new`) gets another spelling there
    for k in kernels:
        k.text = rename_cxx_keywords(k.text)
    wrapper, signature = rename_cxx_keywords(wrapper), rename_cxx_keywords(signature)
    kernel_text = "\n".join(k.text for k in kernels)
    call = f"{wname}({', '.join(args)});"
    decisions = [d for k in (shared.kernels.values() if shared is not None else ()) for d in k.decisions]
    return NestCode(nest, kernel_text + "\n" + wrapper, kernels, arrays, call, signature,
                    list(mapping.notes), reductions, decisions)


def _host_lids(items) -> set[int]:
    out = set()
    for it in items:
        if not hasattr(it, "loops"):
            out.add(it.lid)
            out |= _host_lids(it.body)
    return out


def _nonempty(nest: Nest) -> str:
    """C condition on the parameters under which the nest executes at least one statement."""
    params = None
    for stmt in nest.statements():
        dom, _ = ph.statement_domain(nest, stmt)
        p = dom.params()
        params = p if params is None else params.union(p)
    if params is None:
        return "1"
    return ph.to_c(params.coalesce(), list(nest.params))


def analyse_for_port(path: str, options: PreprocessOptions, manager: PassManager, source: str | None = None):
    program = load_program(path, options, source=source)
    program = manager.run(program)
    outcomes = []
    for nest in program.nests:
        errs = manager.errors.get(nest.name, [])
        mapping = manager.result("mapping", nest)
        dep = manager.result("dependence", nest)
        shared = manager.result("shared-memory", nest)
        perf = manager.result("performance", nest) if "performance" in manager.providers else None
        if perf is not None and mapping is not None:
            # with a GPU, the model decided the block shapes, and no tiles or those of the best budget
            from .passes.shared_memory import plan_shared_memory
            mapping = with_blocks(mapping, {k.name: k.block for k in perf.kernels})
            budget = perf.shared_budget if perf.shared_trials else None
            shared = None if (perf.shared_trials and budget is None) or shared is None else \
                plan_shared_memory(nest, mapping, manager.options, budget)
        if mapping is None:
            reason = errs[-1].message if errs else "not mapped"
            outcomes.append(NestOutcome(nest, False, reason, nest.loc, mapping=None, dependence=dep))
            continue
        try:
            if all(ph.statement_domain(nest, s)[0].is_empty() for s in nest.statements()):
                raise CodegenError("the nest never executes a statement (empty iteration domain)")
            code = build_nest_code(nest, mapping, shared)
        except (CodegenError, ValueError) as e:
            outcomes.append(NestOutcome(nest, False, str(e), nest.loc, mapping=mapping, dependence=dep))
            continue
        except Exception as e:  # a bug in code generation must cost one nest, not the file
            outcomes.append(NestOutcome(nest, False, f"internal error in code generation: {type(e).__name__}: {e}",
                                        nest.loc, mapping=mapping, dependence=dep))
            continue
        outcomes.append(NestOutcome(nest, True, "", nest.loc, code, mapping, dep, perf))
    return program, outcomes


def _read_source(path: str) -> str:
    return Path(path).read_bytes().decode("utf-8", "surrogateescape")


def splice(path: str, source: str, outcomes: list[NestOutcome], after_nest=None, line_file: str | None = None):
    """The user's text with ported nests replaced by calls and refused ones annotated.

    after_nest(outcome) may return extra C text to put right after the nest (or its call): used by verify
    to dump outputs at the same point in the original and in the port.
    Returns (text, list of (outcome, SpanError) for nests whose text could not be located).
    """
    edits = []   # (start, end, replacement)
    failures = []
    for o in outcomes:
        if o.nest.loc.file != path:
            continue
        try:
            start, end = for_span(source, o.nest.loc.line, o.nest.loc.col)
        except SpanError as e:
            failures.append((o, e))
            continue
        extra = after_nest(o) if after_nest and o.ported and o.code is not None else ""
        if o.ported and o.code is not None:
            repl = "{ " + o.code.call + (" " + extra if extra else "") + " }"
            repl += f" /* c2gpu: ported nest {o.nest.name} to the GPU */"
            edits.append((start, end, repl))
        else:
            reason = o.reason.replace("*/", "* /")
            if extra:
                edits.append((end, end, " " + extra))
            edits.append((start, start, f"/* c2gpu: not ported: {reason} */ "))
    edits.sort(key=lambda e: (e[0], e[1]))
    out = []
    pos = 0
    q = line_file or path
    for start, end, repl in edits:
        out.append(source[pos:start])
        out.append(repl)
        if end > start:
            # keep the rest of the last line, then resynchronise line numbers
            nl = source.find("\n", end)
            nl = len(source) if nl < 0 else nl + 1
            out.append(source[end:nl])
            line_after = source.count("\n", 0, nl) + 1
            out.append(f'#line {line_after} "{_esc(q)}"\n')
            pos = nl
        else:
            pos = start
    out.append(source[pos:])
    return "".join(out), failures


def _esc(p: str) -> str:
    return p.replace("\\", "\\\\").replace('"', '\\"')


# C++ keywords that are ordinary names in C (`bool`, `true` and `false` left out: C code that has them
# usually means stdbool's, which C++ accepts)
CXX_KEYWORDS = frozenset("""
    alignas alignof and and_eq asm bitand bitor catch char8_t char16_t char32_t class compl concept consteval
    constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export
    friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    reinterpret_cast requires static_assert static_cast template this thread_local throw try typeid typename
    using virtual wchar_t xor xor_eq""".split())
# malloc, calloc and realloc return a void * the prelude's shim converts (templates/prelude.cu.j2)
SHIMMED_ALLOCATORS = ("malloc", "calloc", "realloc")


def _user_nodes(program: Program):
    """(node, its line) for every AST node of the user's code (c2gpu's own libc headers left out).

    A node without coordinates (a designated initializer) gets the line of the nearest node around it.
    """
    include_dir = str(Path(__file__).resolve().parent / "include")
    stack = [(n, None) for n in reversed(program.ast.ext)] if program.ast is not None else []
    while stack:
        n, line = stack.pop()
        if n.coord is not None and str(n.coord.file).startswith(include_dir):
            continue
        line = n.coord.line if n.coord is not None else line
        yield n, line
        stack.extend((c, line) for _, c in reversed(n.children()))


def _names(node) -> list[str]:
    from pycparser import c_ast
    if isinstance(node, c_ast.IdentifierType):
        return list(node.names)
    return [v for v in (getattr(node, "name", None), getattr(node, "declname", None), getattr(node, "field", None))
            if isinstance(v, str)]


def _is_void_ptr(t) -> bool:
    from pycparser import c_ast
    return (isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.TypeDecl)
            and isinstance(t.type.type, c_ast.IdentifierType) and t.type.type.names == ["void"])


def c_only_constructs(program: Program) -> list[str]:
    """Why this file's host code cannot be compiled as C++ (then the port is split into .cu + .c).

    Variable-length array parameters, C++ keywords used as names (`int new;`), a void * value
    converted implicitly to another pointer type (`int *p = v;`; malloc's is shimmed), designated
    initializers.  Each reason names the construct and its line.
    """
    from pycparser import c_ast
    reasons = []
    for ext in program.ast.ext if program.ast is not None else ():
        if isinstance(ext, c_ast.FuncDef) and ext.decl.type.args is not None:
            for p in ext.decl.type.args.params:
                t = getattr(p, "type", None)
                while isinstance(t, (c_ast.ArrayDecl, c_ast.PtrDecl)):
                    if isinstance(t, c_ast.ArrayDecl) and t.dim is not None and not isinstance(t.dim, c_ast.Constant):
                        reasons.append(f"{ext.decl.name}() has a variable-length array parameter '{p.name}'")
                        break
                    t = t.type
    located = list(_user_nodes(program))
    nodes = [n for n, _ in located]
    lines = {id(n): line for n, line in located}
    where = lambda n: f"line {lines[id(n)]}"  # noqa: E731
    keyword = next(((name, n) for n in nodes for name in _names(n) if name in CXX_KEYWORDS), None)
    if keyword is not None:
        reasons.append(f"'{keyword[0]}' ({where(keyword[1])}) is a C++ keyword")
    # void * values: variables and parameters declared void *, functions returning one (not the shimmed allocators)
    void_vars = {n.name for n in nodes if isinstance(n, c_ast.Decl) and _is_void_ptr(n.type)}
    void_funcs = {n.name for n in nodes if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.FuncDecl)
                  and _is_void_ptr(n.type.type) and n.name not in SHIMMED_ALLOCATORS}
    void_vars -= void_funcs

    def is_void_value(e) -> bool:
        return ((isinstance(e, c_ast.ID) and e.name in void_vars)
                or (isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) and e.name.name in void_funcs))

    for n in nodes:
        if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.PtrDecl) and not _is_void_ptr(n.type) \
                and is_void_value(n.init):
            reasons.append(f"'{n.name}' ({where(n)}) is initialized from a void * without a cast")
            break
        if isinstance(n, c_ast.Assignment) and n.op == "=" and is_void_value(n.rvalue) \
                and not (isinstance(n.lvalue, c_ast.ID) and n.lvalue.name in void_vars):
            reasons.append(f"a void * is assigned without a cast ({where(n)})")
            break
    named = next((n for n in nodes if isinstance(n, c_ast.NamedInitializer)), None)
    if named is not None:
        reasons.append(f"a designated initializer ({where(named)})")
    clash = next((n for n in nodes if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.FuncDecl)
                  and n.name in CUDA_FUNCTIONS), None)
    if clash is not None:
        reasons.append(f"{clash.name}() ({where(clash)}) has the name of a CUDA function")
    return reasons


# Functions CUDA (and so c2gpu's CPU execution layer) defines that C does not: a C file defining one cannot
# be compiled together with the kernels.
CUDA_FUNCTIONS = frozenset("min max umin umax llmin llmax ullmin ullmax rsqrt rsqrtf saturate".split())


_COMMENT_OR_LITERAL = r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"


def rename_cxx_keywords(text: str) -> str:
    """Generated CUDA with C names that are C++ keywords renamed (`new` -> `new_`, longer if that is taken).

    Comments and literals are left as they are ("copies in what it reads, and ..." keeps its `and`).
    """
    words = set(re.findall(r"[A-Za-z_]\w*", re.sub(_COMMENT_OR_LITERAL, " ", text, flags=re.S)))
    renames = {}
    for kw in sorted(words & CXX_KEYWORDS):
        new = kw + "_"
        while new in words:
            new += "_"
        renames[kw] = new
    if not renames:
        return text
    pattern = re.compile(f"({_COMMENT_OR_LITERAL})|\\b({'|'.join(renames)})\\b", re.S)
    return pattern.sub(lambda m: m.group(1) or renames[m.group(2)], text)


def render_split(path: str, source: str, outcomes: list[NestOutcome], cu_name: str, host_name: str,
                 after_nest=None, prefix: str = "") -> tuple[str, str]:
    """(kernels and extern "C" wrappers for nvcc, the user's C file calling them for cc)."""
    spliced, failures = splice(path, source, outcomes, after_nest)
    for o, e in failures:
        o.ported, o.reason = False, f"cannot locate the nest in the source text: {e}"
    if failures:
        spliced, _ = splice(path, source, outcomes, after_nest)
    ported = [o for o in outcomes if o.ported]
    atomics = any(r["helper"] for o in ported for k in o.code.kernels for r in k.reductions)
    cu = templates().get_template("prelude.cu.j2").render(
        version=__version__, source=path, output=cu_name, summary=f"kernels and host wrappers for {host_name}",
        cxx_compat=False, atomics=atomics, prototypes=[])
    cu += "\n".join(o.code.wrapper.replace("static void " + _wname(o), 'extern "C" void ' + _wname(o)) for o in ported)
    protos = "".join(o.code.prototype.replace("static void", "void") + ";\n" for o in ported)
    host = (prefix + f"/* Generated by c2gpu {__version__} from {path}: the nests marked below call the CUDA "
            f"wrappers in {cu_name}. */\n" + protos + f'#line 1 "{_esc(path)}"\n' + spliced)
    return cu, host


def _wname(o: NestOutcome) -> str:
    return o.code.prototype.split("(")[0].split()[-1]


def render_port(path: str, source: str, outcomes: list[NestOutcome], output_name: str, after_nest=None,
                prefix: str = "") -> str:
    ported = [o for o in outcomes if o.ported]
    spliced, failures = splice(path, source, outcomes, after_nest)
    for o, e in failures:
        o.ported = False
        o.reason = f"cannot locate the nest in the source text: {e}"
    if failures:  # redo without the nests we could not find
        spliced, _ = splice(path, source, outcomes, after_nest)
        ported = [o for o in outcomes if o.ported]
    atomics = any(r["helper"] for o in ported for k in o.code.kernels for r in k.reductions)
    summary = (f"{len(ported)} of {len(outcomes)} loop nests ported" if outcomes else "no loop nests found")
    head = prefix + templates().get_template("prelude.cu.j2").render(
        version=__version__, source=path, output=output_name, summary=summary, cxx_compat=True, atomics=atomics,
        prototypes=[o.code.prototype for o in ported])
    body = f'#line 1 "{_esc(path)}"\n' + spliced
    if not body.endswith("\n"):
        body += "\n"
    before = head + body + "\n"
    directive_line = before.count("\n") + 1
    return before + f'#line {directive_line + 1} "{_esc(output_name)}"\n' + "\n".join(o.code.wrapper for o in ported)


def host_name_for(output_name: str) -> str:
    base = output_name[:-3] if output_name.endswith(".cu") else output_name
    return base + ".host.c"


def port_file(path: str, options: PreprocessOptions, manager: PassManager, output_name: str,
              split: bool | None = None) -> PortResult:
    """Port a file; split=None splits only when the host code cannot be compiled as C++."""
    program, outcomes = analyse_for_port(path, options, manager)
    source = _read_source(path)
    reasons = c_only_constructs(program)
    if split is None:
        split = bool(reasons)
    if split:
        cu, host = render_split(path, source, outcomes, output_name, host_name_for(output_name))
        result = PortResult(path, cu, outcomes)
        result.host_text = host
        result.split_reasons = reasons or ["--split was given"]
        return result
    return PortResult(path, render_port(path, source, outcomes, output_name), outcomes)


def emit_kernels(outcomes: list[NestOutcome], path: str) -> str:
    """Just the kernels and wrappers (c2gpu emit)."""
    ported = [o for o in outcomes if o.ported]
    atomics = any(r["helper"] for o in ported for k in o.code.kernels for r in k.reductions)
    head = templates().get_template("prelude.cu.j2").render(
        version=__version__, source=path, output="kernels.cu", summary=f"kernels and host wrappers of {len(ported)} nests",
        cxx_compat=False, atomics=atomics, prototypes=[])
    return head + "\n".join(o.code.wrapper for o in ported)
