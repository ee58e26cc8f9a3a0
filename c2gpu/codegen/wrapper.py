"""The host side of a ported nest: the wrapper that copies arrays, launches the kernels (inside the host
loops the plan keeps) and restores what C leaves behind (loop variables' exit values, live-out scalars).

`build_nest_code(nest, plan)` is the entry point: it renders every kernel of the plan (codegen.kernel,
codegen.tiled) and the wrapper around them, and returns the call that replaces the nest in the user's file.
"""
from __future__ import annotations

import functools
import re
from dataclasses import field, replace
from typing import Callable

import islpy as isl

from ..analysis import isl_sets as ph
from ..frontend.cxx import CXX_KEYWORDS
from ..intexpr import CInt
from ..ir import Loop, Nest, line_of
from ..pipeline import memo
from ..planning.plan import Kernel, NestPlan, require_plan
from .arrays import ArrayPlan, plan_arrays
from .kernel import CodegenError, KernelCode, _flat, device_function, kernel_code, wide_index
from .precompiled import templates
from .tiled import checked_tiles, tiled_kernel, tiles_bytes
from ..records import dataclass
from ..symbolic import Poly

NARROW_INTS = {"int", "signed int", "unsigned int", "unsigned", "signed", "short", "unsigned short", "char",
               "signed char", "unsigned char", "_Bool"}


@dataclass
class NestCode:
    """A nest's CUDA: its kernels and the host wrapper (static, for a whole-file port) that launches them."""
    nest: Nest
    kernels: list[KernelCode]
    arrays: list[ArrayPlan]
    call: str                       # the statement that replaces the nest
    name: str                       # the wrapper function's name
    params: str                     # its parameter list
    notes: list[str]
    reductions: list[dict]
    shared_decisions: list = field(default_factory=list)   # (kernel, every shared-memory opportunity and its decision)
    render: Callable[[str], str] | None = field(default=None, repr=False)   # linkage -> kernels and wrapper

    @functools.cached_property
    def wrapper(self) -> str:
        """The kernels, then the wrapper function (static, for a whole-file port).  Rendered when first read:
        with ptxas's counts the performance pass prints the kernels of the candidates it predicts, and reads
        only those."""
        return self.render("static")

    def prototype(self, linkage: str = "static") -> str:
        """`static void c2gpu_f_12(float *a, int n)`; linkage "" for a plain declaration, 'extern "C"' for C."""
        return f"{linkage} void {self.name}({self.params})".lstrip()

    def wrapper_with(self, linkage: str) -> str:
        """The kernels and the wrapper declared with another linkage (a split port: extern "C" for the C file)."""
        return self.render(linkage)



@dataclass(frozen=True)
class LoopFinal:
    """A loop variable declared outside its `for` header, or an induction counter the nest's C no longer steps
    (frontend/inductions.py): C leaves it a value after the nest; the port restores it."""
    name: str       # as the C code names it
    ctype: str
    when: str       # C condition on the nest's parameters under which the loop's header runs at least once
    value: str      # the variable's value after the nest in that case (otherwise it keeps the value it had)
    added: bool = False     # value is what the nest adds to the variable's value at entry (a counter)


def _c_var(lp: Loop) -> str:
    return lp.source_var


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
            if problem and name not in nest.live_after:
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
    return out + [_counter_final(nest, ind, params) for ind in nest.inductions if ind.name in nest.live_after]


def _counter_final(nest: Nest, ind, params: str) -> LoopFinal:
    """What an induction counter gains in the nest: its step times the outer loop's trip count (none when the
    loop does not run)."""
    if ind.trip is None:
        raise CodegenError(f"counter '{ind.name}' (line {ind.line}) keeps a value after the nest, and the loop "
                           "it counts has an unknown trip count")
    if ind.inner_trips:
        # stepped in an inner loop: the product of the trip counts (none below one), which isl cannot state for
        # symbolic sizes (n * m is not affine): plain C, in 64 bits
        factors = [ind.trip.to_c(), *ind.inner_trips]
        gain = " * ".join(f"(long long)(({f}) > 0 ? ({f}) : 0)" for f in factors)
        return LoopFinal(ind.name, ind.ctype, "1", f"{ind.step} * {gain}", added=True)
    trip = ph.sym_to_isl(ind.trip, {})
    gain = isl.Set(f"{params} -> {{ [c2gpu_x] : exists (c2gpu_t : c2gpu_t = {trip} and ((c2gpu_t >= 1 and "
                   f"c2gpu_x = {ind.step} * c2gpu_t) or (c2gpu_t <= 0 and c2gpu_x = 0))) }}").dim_max(0).coalesce()
    return LoopFinal(ind.name, ind.ctype, "1", ph.to_c(gain, list(nest.params)), added=True)


def declared_in_nest(nest: Nest) -> set[str]:
    """Names declared inside the nest (`int j;` in a loop body): gone after it, nothing to restore."""
    return {name for lp in nest.loops() for name in lp.declared}


def _kernels_with_hosts(items, host_vars):
    for it in items:
        if isinstance(it, Kernel):
            yield it, list(host_vars)
        else:
            yield from _kernels_with_hosts(it.body, host_vars + [it])


def _once_per_nest(fn, nest: Nest):
    """fn(nest), computed once per nest (pipeline.memo): the performance pass lays out (or prints) every candidate
    plan (plain kernels, each shared-memory budget, each structure) of the same nest, and plan_arrays (isl ranges
    of every array) and loop_finals (isl maxima) depend on the nest alone.  Keyed by identity: passes return a
    new Nest rather than changing one; the results (or the CodegenError raised) are not modified after."""
    table = memo(nest, "per nest")
    if fn not in table:
        try:
            table[fn] = fn(nest)
        except CodegenError as e:
            table[fn] = e
    if isinstance(table[fn], CodegenError):
        raise table[fn]
    return list(table[fn])


def _arrays_of(nest: Nest) -> list:
    return _once_per_nest(_planned_arrays, nest)


def _check_locals_stay_in_their_kernel(nest: Nest, mapping, by_id) -> None:
    """A variable declared in the nest lives in the kernel whose statements declare it: another kernel of the
    plan (the body of a host loop split into several kernels) can neither see it nor get it from the host, where
    it is not in scope.  Such a plan is refused (CodegenError) before any code is made."""
    # what each kernel runs: a kernel with a view of its own (statements sunk between its mapped loops, a
    # distributed or interchanged body) numbers its loops in that view
    runs = {k.name: k.statements({lp.lid: lp for lp in k.view.loops()}) if k.view is not None else k.statements(by_id)
            for k in mapping.kernels()}
    declared: dict[str, tuple[str, str]] = {}       # variable -> (kernel, the line of its declaration)
    for k in mapping.kernels():
        for st in runs[k.name]:
            if st.decl:
                declared[st.decl] = (k.name, line_of(st.loc, nest.loc.file))
    local = {s.name: s for s in nest.scalars if s.declared_in is not None}
    for k in mapping.kernels():
        for st in runs[k.name]:
            for v in (*st.scalar_reads, *st.scalar_writes):
                name = local[v].source_name if v in local else v
                if v in declared and declared[v][0] != k.name:
                    raise CodegenError(f"'{name}' is declared at {declared[v][1]} in the part of the loop body that "
                                       f"{declared[v][0]} runs, and used at {line_of(st.loc, nest.loc.file)} in the "
                                       f"part {k.name} runs: the loop body cannot be split there")
                # declared without a value in the body of a host loop (no statement of a kernel declares it): no
                # kernel's text declares it, and the host has no such variable at the nest
                if v in local and v not in declared and (k.serial or k.body_lid not in local[v].declared_in):
                    raise CodegenError(f"'{name}' is declared in the body of a loop that stays on the host, and used "
                                       f"at line {st.loc.line} in {k.name}: the kernel cannot see it")


def _planned_arrays(nest: Nest) -> list:
    return plan_arrays(nest, set())


def build_nest_code(nest: Nest, plan: NestPlan, kernels_only: bool = False) -> NestCode | list[KernelCode]:
    """The kernels, the host wrapper and the call that replaces the nest, as `plan` decided them; with
    `kernels_only`, the kernels alone (their text as ptxas compiles it), without the checks of the wrapper.

    Rendered once per plan (object) while a pass manager is at work (pipeline.memo): the plan pass renders the
    chosen plan to check that it can be emitted, and the port, `emit` and the reports read that rendering; what
    code generation refuses is refused again from the table.  The result is not to be changed by its readers."""
    return _memoized(nest, plan, "kernels" if kernels_only else "code")


def nest_layout(nest: Nest, plan: NestPlan) -> NestCode:
    """What build_nest_code decides for `plan`, without printing a kernel or the wrapper: the same refusals
    (CodegenError), the arrays it copies, the scalars that live on the device, each kernel's parameters, grid
    and shared memory (KernelCode.body None, no text, `render` None).  The performance search reads this for
    every candidate it ranks; only the chosen plan is printed."""
    return _memoized(nest, plan, "layout")


def _memoized(nest: Nest, plan: NestPlan, mode: str):
    table = memo(nest, "nest code")
    hit = table.get((id(plan), mode))
    if hit is None or hit[0] is not plan:
        try:
            value = _build_nest_code(nest, plan, mode)
        except (CodegenError, ValueError) as e:
            value = e
        hit = table[id(plan), mode] = (plan, value)
    if isinstance(hit[1], Exception):
        raise hit[1]
    return hit[1]


def _build_nest_code(nest: Nest, plan: NestPlan, mode: str) -> NestCode | list[KernelCode]:
    """mode: "code" (NestCode), "kernels" (the printed kernels alone) or "layout" (nest_layout)."""
    printed = mode != "layout"
    plan = require_plan(plan, "code generation")
    mapping, shared = plan.mapping, plan.tiles
    by_id = {lp.lid: lp for lp in nest.loops()}
    _check_locals_stay_in_their_kernel(nest, mapping, by_id)
    arrays = _arrays_of(nest)
    array_map = {a.name: a for a in arrays}
    # arrays private to the threads of a kernel live in the kernel alone: no parameter, copy or device memory
    private = {a for k in mapping.kernels() for a in k.private_arrays}
    for info in nest.arrays:
        if info.declared_in is not None and info.name not in private:
            # (an array declared inside the nest exists only inside the loops around its declaration: the host has
            # no array to copy, so it can only live in the threads of one kernel)
            raise CodegenError(f"array '{info.name}' is declared inside the nest (line {info.loc.line}), but no "
                               "kernel gives each thread its own copy of it: the kernels would share it")
    arrays = [a for a in arrays if a.name not in private]
    scalar_types = {s.name: s.ctype for s in nest.scalars}
    kernels: list[KernelCode] = []
    launch_items = []
    # a reduction result read by a later kernel (in a host time loop) is read where it is: on the device; so
    # is a scalar a one-thread kernel writes (it lives on the device between the launches)
    reduced = frozenset(r.target for k in mapping.kernels() for r in k.reductions if r.array_access is None)
    serial_written = frozenset(v for k in mapping.kernels() if k.serial for st in k.statements(by_id)
                               for v in st.scalar_writes if v in scalar_types
                               and v not in {x.decl for x in k.statements(by_id)})
    on_device = reduced | serial_written
    wname = "c2gpu_" + "".join(c if c.isalnum() or c == "_" else "_" for c in nest.name)  # function@line: unique
    # the file's pure functions the nest calls, as __device__ copies named after the wrapper (unique per file)
    device_names = {f.name: f"{wname}_{f.name}" for f in nest.functions}
    functions_text = "".join(device_function(f, device_names[f.name], device_names) for f in nest.functions) \
        if printed else ""

    def host_var_decls(host_loops) -> list[tuple[str, str]]:
        out = []
        for h in host_loops:
            lp = by_id[h.lid]
            out.append((lp.source_var, lp.c_type))
            if lp.origin is not None:
                out.append((lp.var, "int"))
        return out

    def build(items, host_loops):
        result = []
        for it in items:
            if isinstance(it, Kernel):
                kc = kernel_code(nest, it, array_map, host_var_decls(host_loops), on_device, device_names,
                                 plan.scalar_replacement, printed)
                splan = shared.kernels.get(it.name) if shared is not None else None
                tiled = splan is not None and splan.chosen
                if not printed:
                    if tiled:
                        checked_tiles(nest, it, splan)
                        kc = replace(kc, shared_bytes=tiles_bytes(splan))
                    text = None
                elif tiled:
                    kc, text = tiled_kernel(nest, it, splan, array_map, kc)
                else:
                    text = templates().get_template("kernel.cu.j2").render(k=kc)
                kc.text, kc.prelude = text, functions_text
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
    if mode == "kernels":
        for k in kernels:
            k.text = rename_cxx_keywords(k.text)
        return kernels
    reductions = []          # the scalars that live on the device during the nest, copied in and out
    for k in kernels:
        for target, ctype in [(r["target"], r["type"]) for r in k.reductions if not r["element"]] + k.device_writes:
            if target not in [x["target"] for x in reductions]:
                reductions.append({"target": target, "type": ctype})
    # host loop variables declared outside their for header need a declaration in the wrapper
    decls = []
    for lp in nest.loops():
        decl = f"{lp.c_type} {lp.source_var};"
        if lp.lid in _host_lids(mapping.items) and not lp.declared_in_header and decl not in decls:
            decls.append(decl)
    # the wrapper's parameters: arrays, scalars the kernels read, reduction results
    red_names = {r["target"] for r in reductions}
    host_names = {n for k in _host_lids(mapping.items) for n in (by_id[k].var, by_id[k].source_var)}
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
    at_nest = dict(nest.stands_for)     # a variable standing for a struct field is passed as the field (v->n)

    def address_of(name: str) -> str:   # where the host keeps a value the kernels leave (w__re: &(w.re))
        return f"&({at_nest[name]})" if name in at_nest else f"&{name}"
    for a in arrays:
        const = "" if a.written or a.packed else "const "
        stars = "*" * (a.ndims if a.packed else 1)     # a table of rows is passed as the table
        params.append(f"{const}{a.ctype} {stars}{a.name}")
        args.append(f"({const}{a.ctype} {stars})({at_nest.get(a.name, a.name)})")
    widened = []
    for p, a in scalar_params:
        ctype = p[:-len(a)].strip()
        if ctype in NARROW_INTS:
            # the wrapper's sizes, offsets and grid are computed from these: in 64 bits, since n * m
            # elements may pass 2^31 where n and m do not
            widened.append(f"const long long {a} = c2gpu_arg_{a};")
            p = f"{ctype} c2gpu_arg_{a}"
        params.append(p)
        args.append(f"({at_nest[a]})" if a in at_nest else a)
    for r in reductions:
        params.append(f"{r['type']} *{r['target']}")
        args.append(address_of(r['target']))
    privates = {v: k.name for k in kernels for v, _ in k.last_values}
    shared_private = next((v for v in privates if v in on_device), None)
    if shared_private is not None:
        raise CodegenError(f"scalar '{shared_private}' is private to the threads of {privates[shared_private]} and "
                           "also lives on the device for another kernel")
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
                args.append(address_of(v))
    finals = _once_per_nest(loop_finals, nest)
    for f in finals:
        params.append(f"{f.ctype} *c2gpu_final_{f.name}")
        args.append(address_of(f.name))
    # the kernels and wrapper are C++: a C name that is a C++ keyword (`new`) gets another spelling there
    param_list = rename_cxx_keywords(", ".join(params))
    call = f"{wname}({', '.join(args)});"
    decisions = [(name, d) for name, k in (shared.kernels.items() if shared is not None else ()) for d in k.decisions]
    if not printed:
        return NestCode(nest, kernels, arrays, call, wname, param_list, list(mapping.notes), reductions, decisions)
    nonempty = nonempty_condition(nest)
    for k in kernels:
        k.text = rename_cxx_keywords(k.text)
    kernel_text = rename_cxx_keywords(functions_text) + "\n".join(k.text for k in kernels)

    def render(linkage: str) -> str:
        text = templates().get_template("wrapper.cu.j2").render(w={
            "nest": nest.name, "source": f"{nest.loc.file}:{nest.loc.line}",
            "signature": f"{linkage} void {wname}({', '.join(params)})",
            "nonempty": nonempty, "decls": decls, "finals": finals, "widened": widened, "lasts": lasts,
            "arrays": arrays, "reductions": reductions, "plan": launch_items,
            "packs": {a.name: (_pack_lines(a, True), _pack_lines(a, False)) for a in arrays if a.packed}})
        return kernel_text + "\n" + rename_cxx_keywords(text)

    return NestCode(nest, kernels, arrays, call, wname, param_list, list(mapping.notes),
                    reductions, decisions, render)


def _pack_lines(a: ArrayPlan, gather: bool) -> list[str]:
    """The host loops that gather the rows of a table that the nest touches (ArrayPlan.packed) into its staging
    block `c2gpu_pack_<name>`, laid out as on the device, or scatter them back from there."""
    scan = a.packed
    k = f"c2gpu_{a.name}_k"
    cell = [CInt.of_poly(Poly.var(v)) for v in (*scan.rows, k)]
    staged = f"c2gpu_pack_{a.name}[{_flat(cell, a.extents, wide_index(a))} - ({a.low})]"
    row = a.name + "".join(f"[{r}]" for r in scan.rows) + f"[{k}]"
    copy = f"{staged} = {row};" if gather else f"{row} = {staged};"
    return scan.code(f"for (long long {k} = {scan.first}; {k} <= {scan.last}; {k}++) {copy}")


def _host_lids(items) -> set[int]:
    out = set()
    for it in items:
        if not isinstance(it, Kernel):
            out.add(it.lid)
            out |= _host_lids(it.body)
    return out


def nonempty_condition(nest: Nest) -> str:
    """C condition on the parameters under which the nest executes at least one statement."""
    params = ph.run_params(nest)
    return "1" if params is None else ph.to_c(params, list(nest.params))


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
