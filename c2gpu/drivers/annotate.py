"""`c2gpu annotate FILE --openmp`: the C file with `#pragma omp parallel for` on the loops c2gpu proves parallel,
with exactly the clauses its dependence analysis found (a second way to run the code in parallel, for compilers
that offload or thread OpenMP).  `--openmp-target` writes `#pragma omp target teams distribute parallel for` and
`--openacc` `#pragma acc parallel loop`, on the same loops with the same clauses, plus the clauses that copy what
the loop reads to the device and what it writes back (`_data_clauses`).

For each nest, the outermost loop that is proven parallel (or a reduction OpenMP expresses) gets the directive,
and nothing inside it does (one parallel region per nest).  The clauses come from the loop's verdict, never from
a guess:
  private(v)      the scalars the analysis privatized (written before read in every iteration, dead after), the
                  variables of the loops inside it declared outside it, and its own variable when it is declared
                  outside the `for` (OpenMP makes that one private anyway: said for the reader)
  reduction(op:s) each scalar reduction (+, * on any arithmetic type; max and min on integers), and each array
                  of one dimension and known extent whose elements it reduces into, as an array section
                  (`reduction(+:rms[0:5])`, OpenMP 4.5)
A loop is left alone, with the reason, when OpenMP would not compute what the C computes or the analysis cannot
say that it would: a reduction into an element of a pointer or of a multi-dimensional array, a scatter, a counter stepped in each iteration, a scalar
written in it and read after it, an array made private that is not an array of the function, a float max or min
(the order decides which NaN or signed zero survives), a variable made private that the function reads after the
loop (a private copy leaves it unspecified), a header OpenMP does not accept, a loop that already has an OpenMP
directive (or is inside one), or code from another file or function (inlined calls).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import islpy as isl

from ..analysis import isl_sets as ph
from ..frontend import functions_as_written, load_program_recovering
from ..frontend.source import SpanError, for_span, line_offsets
from ..diagnostics import C2GPUError
from ..ir import Loop, Nest, Program, reduction_type
from ..syntax_tree import (Assign, Binary, Block, Call, Comma, Decl, Decls, DoWhile, For, If, Jump, Label,
                           Name, Switch, While, children, walk)
from ..frontend.ctypes import INT_RANGES
from ..frontend.libc import MATH_FUNCTIONS
from .driver import make_manager
from .options import Options

PASSES = ("normalize", "dependence")
# each dialect's directive, and its clauses for the arrays copied to the device and back (none: the host's threads)
DIRECTIVES = {"openmp": "#pragma omp parallel for", "openmp-target": "#pragma omp target teams distribute parallel for",
              "openacc": "#pragma acc parallel loop"}
DATA_CLAUSES = {"openmp-target": ("map(to: {})", "map(tofrom: {})"), "openacc": ("copyin({})", "copy({})")}
# a canonical loop (OpenMP 4.5, 2.6): var = lb; var relop b; var++, var--, var += s, var -= s, var = var +/- s
_CANONICAL = re.compile(r"for\s*\(\s*(?:[A-Za-z_][\w\s]*\s)?(?P<v>[A-Za-z_]\w*)\s*=[^;]+;\s*(?P=v)\s*(<|<=|>|>=)[^;]+;"
                        r"\s*(\+\+\s*(?P=v)|--\s*(?P=v)|(?P=v)\s*(\+\+|--|\+=[^;)]+|-=[^;)]+|=\s*(?P=v)\s*[-+][^;)]+))"
                        r"\s*\)\s*$")
_OPS = {"+": "+", "*": "*", "max": "max", "min": "min"}


@dataclass(frozen=True)
class Directive:
    """A directive c2gpu writes before a loop."""
    line: int
    col: int
    var: str
    text: str            # "#pragma omp parallel for private(j) reduction(+:s)"


@dataclass(frozen=True)
class LeftAlone:
    """A loop proven parallel that gets no directive, and why."""
    line: int
    var: str
    why: str


@dataclass
class Annotated:
    source: str                      # the annotated file
    directives: list[Directive]
    left: list[LeftAlone]
    errors: list                     # C2GPUError of the input (syntax errors cost their declaration)


DIALECT_NAMES = {"openmp": "OpenMP", "openmp-target": "OpenMP offload directives", "openacc": "OpenACC"}


def said(path: str, result: Annotated, dialect: str) -> str:
    """What `annotate` tells the user on stderr: the input errors, each directive written, each proven loop left
    without one and why, and the count."""
    lines = [str(e) for e in result.errors]
    if not os.path.isfile(path):
        return "\n".join(lines)
    lines += [f"{path}:{d.line}:{d.col}: note: loop '{d.var}': {d.text}" for d in result.directives]
    lines += [f"{path}:{a.line}: note: loop '{a.var}' is proven parallel but gets no directive: {a.why}"
              for a in result.left]
    n = len(result.directives)
    return "\n".join(lines + [f"c2gpu: {n} loop{'s' if n != 1 else ''} annotated with {DIALECT_NAMES[dialect]}"])


def annotate_file(path: str, options: Options, dialect: str = "openmp") -> Annotated:
    """The file with a directive of `dialect` (DIRECTIVES) on each loop c2gpu proves parallel (module doc)."""
    manager = make_manager(PASSES, options.pass_options())
    program, errors = load_program_recovering(path, options.preprocess)
    with open(path, encoding="utf-8", errors="replace") as f:
        source = f.read()
    if program is None:
        return Annotated(source, [], [], errors)
    program = manager.run(program)
    # the file as written (the frontend's tree may hold inlined calls and substituted counters): where each
    # variable is used
    try:
        functions = functions_as_written(path, options.preprocess)
    except C2GPUError:             # (a missing header the recovering load stood in for): no loop is annotated
        functions = {}
    spans = {name: _span(f) for name, f in functions.items()}
    directives: list[Directive] = []
    left: list[LeftAlone] = []
    for nest in program.nests:
        deps = manager.result("dependence", nest)
        if deps is not None:
            _annotate_nest(program, nest, deps, source, functions.get(nest.function), spans, options.exact_fp,
                           dialect, directives, left)
    return Annotated(_insert(source, directives), directives, left, errors)


def _annotate_nest(program: Program, nest: Nest, deps, source: str, function, spans: dict, exact_fp: bool,
                   dialect: str, directives: list, left: list) -> None:
    def visit(loop: Loop, inside_omp: bool) -> None:
        verdict = deps.verdicts.get(loop.lid)
        inside_omp = inside_omp or any(p.split()[:1] in (["omp"], ["acc"]) for p in loop.pragmas)
        if verdict is not None and verdict.status in ("parallel", "reduction") and not inside_omp:
            clauses, why = _clauses(program, nest, loop, verdict, source, function, spans, exact_fp)
            if why is None and dialect in DATA_CLAUSES:
                data, why = _data_clauses(nest, loop, verdict, function, dialect)
                clauses = clauses + data
            if why is None:
                directives.append(Directive(loop.loc.line, loop.loc.col, verdict.var,
                                            " ".join([DIRECTIVES[dialect], *clauses])))
                return
            left.append(LeftAlone(loop.loc.line, verdict.var, why))
        for node in loop.body:
            if isinstance(node, Loop):
                visit(node, inside_omp)
    visit(nest.root, False)


def _clauses(program: Program, nest: Nest, loop: Loop, verdict, source: str, function, spans: dict,
             exact_fp: bool) -> tuple[list[str], str | None]:
    """The clauses of the loop's directive, or why it gets none."""
    if loop.loc.file != program.path or not _inside(source, nest.root, loop) or function is None \
            or _for_node(function, loop) is None:
        return [], "its code comes from another function or file (an inlined call)"
    cond = _for_node(function, loop).cond
    if not _CANONICAL.match(loop.header.strip()) or not (isinstance(cond, Binary) and
                                                         cond.op in ("<", "<=", ">", ">=")):
        # (a conjunction of bounds, `ii < i + T && ii < n`, is a min to c2gpu, not a test OpenMP accepts)
        return [], f"its header `{loop.header}` is not a loop OpenMP accepts (canonical form)"
    try:
        start, _ = for_span(source, loop.loc.line, loop.loc.col)
    except SpanError:
        return [], "its `for` is not where the parser puts it (a macro?)"
    line_start = line_offsets(source)[loop.loc.line - 1]
    if source[line_start:start].strip():
        return [], "other code shares the line of its `for`"
    jump = _jump_out(_for_node(function, loop))
    if jump is not None or any(isinstance(n, Label) or (isinstance(n, Jump) and n.kind == "goto")
                               for n in walk(function.body)):
        return [], f"control leaves the loop at line {jump}" if jump is not None else "the function has a goto"
    scalars = {s.name: s for s in nest.scalars}
    stands_for = dict(nest.stands_for)
    arrays = {a.name: a for a in nest.arrays}
    kept = [s for s in verdict.outer_writes if s not in verdict.private]
    if kept:
        return [], f"it writes {_names(kept, scalars)}, declared outside it, whose value after it C keeps"
    if any(st.scatter for st in loop.statements()):
        return [], "an iteration updates an element chosen by data (a scatter): OpenMP needs an atomic there"
    if loop is nest.root and nest.inductions:
        return [], f"it steps {_names([i.name for i in nest.inductions], scalars)} in every iteration (a counter)"
    ops = {r.target: r for r in nest.reductions()}
    reductions: dict[str, list[str]] = {}
    sections: dict[str, set[str]] = {}          # op -> whole arrays reduced element by element ("rms[0:5]")
    for target in verdict.reductions:
        r = ops.get(target)
        section = _array_section(nest, r) if r is not None and "[" in target else None
        if ("[" in target and section is None) or r is None or r.op not in _OPS:
            return [], f"it reduces into {target}, which OpenMP cannot name in a reduction clause"
        ctype = reduction_type(nest, r)
        if exact_fp and r.op in ("+", "*") and ctype not in INT_RANGES:
            return [], f"--exact-fp keeps the floating-point {r.op} of {target} in C's order, in one thread"
        if r.op in ("max", "min") and ctype not in INT_RANGES:     # equal integers are one value
            return [], f"the {r.op} of {target} is over floating point: the order decides which of equal values survives"
        if section is not None:
            sections.setdefault(_OPS[r.op], set()).add(section)
            continue
        reductions.setdefault(_OPS[r.op], []).append(target)
    # a local of an inlined call is the callee's own variable, one per call: nothing to say about it
    private = {s for s in verdict.private if s not in scalars or _declared_in(function, spans, scalars[s].loc)}
    for name in verdict.private_arrays:
        info = arrays.get(name)
        if info is None or info.storage != "local" or any(d is None for d in info.dims):
            return [], f"each iteration needs its own '{name}', which is not an array of the function"
        private.add(name)
    declared_inside = {st.decl for st in loop.statements() if st.decl}
    counters = []                                   # loop variables made private, read after the loop maybe
    if not loop.declared_in_header:
        counters.append(verdict.var)
    for inner in list(loop.loops())[1:]:
        var = inner.source_var
        if not _inside(source, loop, inner):
            continue              # a loop of an inlined call: its variable is the callee's, one per call
        if not inner.declared_in_header and var not in declared_inside:
            counters.append(var)
            private.add(var)
    for var in counters:
        where = _read_after(function, loop, var)
        if where is not None:
            return [], f"'{var}' is used at line {where} outside the loop, where a private copy leaves it unspecified"
    names = {}
    for name in sorted(private | {t for ts in reductions.values() for t in ts}):   # (the same name first, every run)
        c_name = scalars[name].source_name if name in scalars else name
        if name in stands_for or not c_name.isidentifier():
            return [], f"'{c_name}' is not a variable of the C code (c2gpu's name for {stands_for.get(name, name)})"
        names[name] = c_name
    clauses = []
    if private - {verdict.var}:
        clauses.append(f"private({', '.join(sorted(names[n] for n in private - {verdict.var}))})")
    for op in sorted(set(reductions) | set(sections)):
        listed = sorted(names[t] for t in reductions.get(op, ())) + sorted(sections.get(op, ()))
        clauses.append(f"reduction({op}:{', '.join(listed)})")
    return clauses, None


def _data_clauses(nest: Nest, loop: Loop, verdict, function, dialect: str) -> tuple[list[str], str | None]:
    """The clauses that copy what the loop reads to the device and what it writes back (`map(to: ...)`,
    `map(tofrom: ...)`; OpenACC's `copyin`, `copy`), or why the loop gets no directive.  An array of complete type
    (the file's or the function's own) is named whole; a pointer or an array parameter by the section of the
    elements the nest touches (isl, exact: its first dimension as a range, the others whole); a written array is
    copied both ways (elements the loop does not write keep their values).  A reduction's variable is copied both
    ways too.  A call left in the loop (one c2gpu did not inline, or its body) would have to be compiled for the
    device: such a loop is left alone."""
    node = _for_node(function, loop)
    calls = sorted({n.callee for n in walk(node) if isinstance(n, Call) and n.callee is not None and
                    n.callee not in MATH_FUNCTIONS})
    if calls:
        return [], f"it calls {', '.join(calls)}(), which the device would need a copy of (declare target)"
    accesses: dict[str, list] = {}
    for st in loop.statements():
        for a in st.accesses:
            accesses.setdefault(a.array, []).append(a)
    stands_for = dict(nest.stands_for)
    named = {"to": [], "tofrom": []}
    for name, accs in sorted(accesses.items()):
        info = nest.array(name)
        if name in stands_for or not name.isidentifier() or info.fields or info.rows_source:
            return [], f"'{stands_for.get(name, name)}' is not an array the directive can name"
        if name in verdict.private_arrays:
            continue
        section = name if info.dims and all(d is not None for d in info.dims) and \
            info.storage not in ("param-pointer", "param-array") else _section(nest, info, accs)
        if section is None:
            return [], f"the elements of '{name}' it touches are not a range a directive can copy"
        named["tofrom" if any(a.kind == "write" for a in accs) else "to"].append(section)
    scalars = {s.name: s for s in nest.scalars}
    named["tofrom"] += sorted(scalars[t].source_name if t in scalars else t for t in verdict.reductions if "[" not in t)
    to, both = DATA_CLAUSES[dialect]
    return [f.format(", ".join(named[k])) for f, k in ((to, "to"), (both, "tofrom")) if named[k]], None


def _section(nest: Nest, info, accs) -> str | None:
    """`p[lo:len]`: the range of the first subscript the accesses take (one affine piece in the nest's sizes, as
    C); for a pointer to rows (`double a[][N]`, `double (*a)[N]`) each element of the section is a whole row.
    None when that cannot be written."""
    ndims = {len(a.subscripts) for a in accs}
    if len(ndims) != 1 or next(iter(ndims)) != max(1, len(info.dims)):
        return None
    try:
        ranges = ph.subscript_ranges(nest, accs, next(iter(ndims)), True)
    except (ValueError, isl.Error):
        return None
    if ranges is None:
        return None
    lo, hi = ranges[0]
    length = hi.sub(lo).add_constant_val(isl.Val.one(hi.get_ctx()))
    if lo.n_piece() != 1 or length.n_piece() != 1 or any(p in dict(nest.stands_for) for p in nest.params):
        return None
    return f"{info.name}[{ph.to_c(lo, list(nest.params))}:{ph.to_c(length, list(nest.params))}]"


def _array_section(nest: Nest, r) -> str | None:
    """The elements of a one-dimensional array the loop reduces into, as an OpenMP array section (`rms[0:5]`,
    OpenMP 4.5): each thread adds into a private copy of each, the identity where it adds nothing.  The section
    is every element the nest's reductions into the array may touch (isl, exact); None when that is not a
    constant range, or the array is not one-dimensional."""
    a = r.array_access
    if a is None or len(a.subscripts) != 1 or nest.array(a.array).fields:
        return None
    accs = [x for st in nest.statements() for x in st.accesses if x.array == a.array]
    try:
        ranges = ph.subscript_ranges(nest, accs, 1, True)
    except (ValueError, isl.Error):
        return None
    if ranges is None:
        return None
    lo, hi = ranges[0]
    if not (lo.is_cst() and hi.is_cst()):
        return None
    first, last = (int(str(p.get_pieces()[0][1].get_constant_val())) for p in (lo, hi))
    return f"{a.array}[{first}:{last - first + 1}]"


def _names(names, scalars) -> str:
    return ", ".join(f"'{scalars[n].source_name if n in scalars else n}'" for n in names)


def _for_node(function, loop: Loop):
    for n in walk(function.body):
        if isinstance(n, For) and n.at is not None and (n.at.line, n.at.col, n.at.file) == \
                (loop.loc.line, loop.loc.col, loop.loc.file):
            return n
    return None


def _jump_out(loop_node) -> int | None:
    """The line of a `return`, or of a `break` of the loop itself, in its body (OpenMP allows neither)."""
    def find(node, own: bool):
        if isinstance(node, Jump) and (node.kind == "return" or (own and node.kind == "break")):
            return node.at.line if node.at else 0
        inner = own and not isinstance(node, (For, While, DoWhile, Switch))
        for c in children(node):
            found = find(c, inner)
            if found is not None:
                return found
        return None
    return find(loop_node.body, True)


def _declared_in(function, spans: dict, loc) -> bool:
    """Whether a declaration at `loc` is the function's or the file's, not another function's (a local of an
    inlined call); `spans`: (file, first line, last line) of every function of the file."""
    here = spans.get(function.name)
    if here is not None and loc.file == here[0] and here[1] <= loc.line <= here[2]:
        return True
    return not any(loc.file == f and first <= loc.line <= last for f, first, last in spans.values())


def _span(function) -> tuple[str, int, int]:
    lines = [function.at.line] + [n.at.line for n in walk(function.body) if n.at is not None]
    return function.at.file, min(lines), max(lines)


def _inside(source: str, root: Loop, loop: Loop) -> bool:
    """Whether `loop`'s `for` is written inside the nest's outermost one (not a loop of an inlined call)."""
    try:
        start, end = for_span(source, root.loc.line, root.loc.col)
    except SpanError:
        return False
    offs = line_offsets(source)
    return loop.loc.file == root.loc.file and start <= offs[loop.loc.line - 1] + loop.loc.col - 1 < end


def _read_after(function, loop: Loop, var: str) -> int | None:
    """The line of a use of `var` that may read the value it has when `loop` ends (which a private copy leaves
    unspecified), or None when it is dead there.  Every way on from the loop's end, in the order C runs it: the
    statements after it in each block around it, and, in a loop around it, the next iteration (its step, its test,
    then its body from the start, the annotated loop included); a use before an assignment from something else
    (`var = e;`, a `for` starting `var = e`) reads it.  Where its block ends (a variable of that block) or the
    function ends (a local or a parameter), it dies; a global or static may be read elsewhere."""
    target = _for_node(function, loop)
    parents = {id(c): n for n in walk(function.body) for c in children(n)}
    node = target
    while id(node) in parents:
        parent = parents[id(node)]
        if isinstance(parent, Block):
            items = parent.items
            at = next(k for k, item in enumerate(items) if item is node)
            for item in items[at + 1:]:
                effect = _effect(item, var)
                if effect is not None:
                    return effect[1]
            if any(isinstance(item, Decl) and item.name == var for item in items[:at]):
                return None                     # the block's own variable: it ends here
        elif isinstance(parent, (For, While, DoWhile)) and node is parent.body:
            again = [parent.next, parent.cond, parent.body] if isinstance(parent, For) else [parent.cond, parent.body]
            effect = _sequence(again, var)
            if effect is not None and effect[0] == "read":
                return effect[1]
        node = parent
    local = var in function.params or any(isinstance(n, Decl) and n.name == var and "static" not in n.storage
                                          for n in walk(function.body))
    return None if local else function.at.line


def _sequence(items, var: str) -> tuple[str, int | None] | None:
    for item in items:
        effect = _effect(item, var)
        if effect is not None:
            return effect
    return None


def _effect(node, var: str) -> tuple[str, int | None] | None:
    """What running `node` first does to `var`: ("kill", None) when it assigns it from something else before
    any use, ("read", line) when it may use it first, None when it does neither (or declares its own)."""
    if node is None:
        return None
    if isinstance(node, Name):
        return ("read", node.at.line if node.at else 0) if node.name == var else None
    if isinstance(node, Assign) and isinstance(node.target, Name) and node.target.name == var:
        if node.op != "=":
            return "read", node.at.line if node.at else 0
        return _effect(node.value, var) or ("kill", None)
    if isinstance(node, Block):
        for item in node.items:
            if isinstance(item, Decl) and item.name == var:
                return _effect(item.init, var)      # from here on the name is the block's own variable
            effect = _effect(item, var)
            if effect is not None:
                return effect
        return None
    if isinstance(node, For):
        if isinstance(node.init, Decls) and any(d.name == var for d in node.init.items):
            return None
        first = _effect(node.init, var)
        if first is not None:
            return first
        return _reads(_sequence([node.cond, node.body, node.next], var))   # the body may not run
    if isinstance(node, While):
        return _reads(_sequence([node.cond, node.body], var))
    if isinstance(node, If):
        first = _effect(node.cond, var)
        if first is not None:
            return first
        a, b = _effect(node.then, var), _effect(node.otherwise, var)
        for e in (a, b):
            if e is not None and e[0] == "read":
                return e
        return ("kill", None) if a is not None and b is not None else None
    if isinstance(node, Decl):
        return _effect(node.init, var)
    return _sequence(list(children(node)), var)     # (a field's name is no child: not a variable)


def _reads(effect):
    """A kill that may not happen (in a loop body that may not run) is no kill."""
    return effect if effect is not None and effect[0] == "read" else None


def _assigns_first(init, var: str) -> bool:
    """Whether a `for` header's first part assigns `var` from something else (or declares a new one)."""
    if isinstance(init, Assign):
        return init.op == "=" and isinstance(init.target, Name) and init.target.name == var \
            and _effect(init.value, var) is None
    if isinstance(init, Decls):
        return any(d.name == var for d in init.items)
    if isinstance(init, Comma):
        return bool(init.items) and _assigns_first(init.items[0], var)
    return False


def _insert(source: str, directives: list[Directive]) -> str:
    """The source with each directive on its own line before its `for`, indented like it."""
    offs = line_offsets(source)
    out = source
    for d in sorted(directives, key=lambda d: (d.line, d.col), reverse=True):
        start = offs[d.line - 1]
        indent = re.match(r"[ \t]*", source[start:]).group(0)
        out = out[:start] + indent + d.text + "\n" + out[start:]
    return out
