"""Array plans of a ported nest: how the host handles each array (its device allocation, what is copied in and
out, and why), the exact checks behind them (dense writes, written before read, elements that may not exist) and
the row scans of a table of rows.

`plan_arrays(nest, kernel_lids)` is the entry point (codegen.wrapper); codegen.kernel and codegen.tiled index the
arrays as planned here.
"""
from __future__ import annotations

import islpy as isl

from ..analysis import isl_sets as ph
from ..syntax_tree import For, Index, While, to_c, walk
from ..intexpr import CInt, op, plain_c
from ..ir import Access, Guard, Loop, Nest
from ..planning.promotion import certain_write
from ..records import dataclass
from ..symbolic import Poly
from .kernel import CodegenError, flat_index


@dataclass
class ArrayPlan:
    """How the host code handles one array of a ported nest: its device allocation and what is copied in
    and out (and why)."""
    name: str
    ctype: str
    ndims: int
    extents: tuple[CInt, ...]     # the inner extents (row-major strides), len ndims-1
    read: bool
    written: bool
    alloc: CInt                   # elements to allocate on the device (from index `low`)
    copy_in: tuple[CInt, CInt] | None    # (first element, count)
    copy_out: tuple[CInt, CInt] | None
    why: str = ""
    low: CInt = CInt.const(0)     # first element the device copy holds: negative for a pointer into an object
    #                               (`p = buf + 1; ... p[i - 1]`); d_<name> then points `-low` elements into it
    written_in_full: bool = False  # every run writes every element copied out: the copy-out puts back nothing
    #                               the nest did not write (else it puts back what was copied in)
    fields: tuple[str, ...] = ()  # an array of structs seen by field (ArrayInfo.fields): its last dimension
    packed: "RowScan | None" = None   # a table of rows (ArrayInfo.rows_source): the rows the host gathers into
    #                               the device block (the box of subscripts, row-major) and scatters back


ZERO = CInt.const(0)


def _c(pw, params) -> CInt:
    return ph.to_cint(pw, list(params))


def _count(first: CInt, last: CInt) -> CInt:
    """The elements from `first` to `last`."""
    return CInt.folded(f"({last}) - ({first}) + 1", op("+", op("-", last.expr, first.expr), Poly.const(1)))


def _up_to(last: CInt, low: CInt) -> CInt:
    """The elements from `low` to `last` (an allocation's size)."""
    return CInt.folded(f"({last}) + 1 - ({low})", op("-", op("+", last.expr, Poly.const(1)), low.expr))


def _array_shape(nest: Nest, accesses: list[Access]) -> tuple[int, tuple[Poly, ...], bool]:
    """(dimensions, inner extents, flat) of an array as the kernel indexes it.

    flat=True: the accesses mix a[i*W + j] forms that could and could not be
    delinearized (a constant row, a[0*W + j]); all are then used as written, 1-D.
    """
    shapes = {(len(ph.access_shape(nest, a)[0]), ph.access_shape(nest, a)[1]) for a in accesses}
    if len(shapes) != 1:
        if all(len(a.subscripts) == 1 and a.subscripts[0] is not None and a.subscripts[0].is_affine() for a in accesses):
            return 1, (), True
        raise CodegenError(f"array '{accesses[0].array}' is accessed with different shapes")
    ndims, extents = shapes.pop()
    if extents is None:
        raise CodegenError(f"array '{accesses[0].array}': the extents of its inner dimensions are unknown")
    return ndims, extents, False


def _dense(nest: Nest, accesses: list[Access], extents: tuple[Poly, ...], flat: bool = False) -> bool:
    """Do the writes cover a contiguous run of rows completely (all inner dimensions full)? Exact, with isl.

    Then the device copy needs no copy-in: every element copied out was written.
    """
    params = ", ".join(nest.params)
    image = None
    wanted = ph._lookup(accesses)   # a set: `in` on a list is quadratic for generated code with 1000s of accesses
    for stmt in nest.statements():
        for a in stmt.accesses:
            if a not in wanted:
                continue
            if any(g.constraints is None for g in stmt.guards):
                return False  # a data-dependent or non-affine guard: some elements may not be written
            if not certain_write(stmt, a):
                return False  # a write inside an expression (`c ? (a[i] = 1) : 0`) may not happen
            subs = a.subscripts if flat else ph.access_shape(nest, a)[0]
            dom, names = ph.statement_domain(nest, stmt)
            dims = ", ".join(names[lp.var] for lp in ph.loop_path(nest, stmt))
            outs = ", ".join(f"c2gpu_e{k}" for k in range(len(subs)))
            eqs = " and ".join(f"c2gpu_e{k} = {ph.poly_to_isl(s, names)}" for k, s in enumerate(subs))
            img = dom.apply(isl.Map(f"[{params}] -> {{ [{dims}] -> [{outs}] : {eqs} }}"))
            image = img if image is None else image.union(img)
    if image is None:
        return False
    # the copy-out's extent is computed from the writes: for sizes where the nest runs but writes nothing, it
    # would copy back elements nobody wrote
    runs = None
    try:
        for stmt in nest.statements():
            p = ph.statement_domain(nest, stmt)[0].params()
            runs = p if runs is None else runs.union(p)
    except ValueError:
        return False             # a loop isl cannot describe: when the nest runs is not known
    if runs is not None and not runs.is_subset(image.params()):
        return False
    n = len(extents) + 1
    rows = isl.Set.from_basic_set(image.project_out(isl.dim_type.set, 1, n - 1).polyhedral_hull())
    if n == 1:
        return image.is_equal(rows)
    inner = " and ".join(f"0 <= c2gpu_e{k + 1} < {ph.poly_to_isl(e, {})}" for k, e in enumerate(extents))
    box = isl.Set(f"[{params}] -> {{ [{', '.join(f'c2gpu_e{k + 1}' for k in range(n - 1))}] : {inner} }}")
    return image.is_equal(rows.flat_product(box))


def _schedule_positions(nest: Nest) -> dict[int, list]:
    """Each statement's place in the nest's order as isl schedule terms: [0, L0, position, L1, ..., position]
    (loop dimensions named as in isl_sets; a statement and a loop never share a position in a body)."""
    out: dict[int, list] = {}

    def walk(lp: Loop, prefix: list) -> None:
        for pos, node in enumerate(lp.body):
            if isinstance(node, Loop):
                walk(node, prefix + [str(pos), ph.dim(node.lid)])
            else:
                out[node.sid] = prefix + [str(pos)]
    walk(nest.root, ["0", ph.dim(nest.root.lid)])
    width = max((len(v) for v in out.values()), default=0)
    return {sid: v + ["0"] * (width - len(v)) for sid, v in out.items()}


def _written_before_read(nest: Nest, accesses: list[Access], flat: bool) -> bool:
    """Does the nest write every element it reads of an array before reading it? Exact, with isl.

    Every read instance (a statement's iteration and the element it reads) must have a write of the same
    element by an earlier statement instance, in the nest's order (the port keeps every flow dependence, so
    the read then sees the nest's own value, never the copy-in's).  Only writes that certainly happen count:
    a write under a condition that is not affine, or inside an expression, may not run.  A read and a write in
    one statement instance (`c[i] += x`): the read comes first.  Reads in loop headers, or of statements the order does not place,
    keep the copy-in.
    """
    params = ", ".join(nest.params)
    wanted = ph._lookup(accesses)
    order = _schedule_positions(nest)
    reads, writes, sched = [], [], []
    space = f"[{params}] -> "
    for stmt in nest.statements():
        mine = [a for a in stmt.accesses if a in wanted]
        if not mine:
            continue
        if stmt.sid not in order:
            return False                   # a loop header's read of a bound
        dom, names = ph.statement_domain(nest, stmt)
        dims = [names[lp.var] for lp in ph.loop_path(nest, stmt)]
        inst = f"S{stmt.sid}[{', '.join(dims)}]"
        cons = " and ".join(ph.domain_constraints(ph.loop_path(nest, stmt), names, stmt.guards)) or "true"
        sched.append(f"{inst} -> [{', '.join(order[stmt.sid])}] : {cons}")
        affine = all(g.constraints is not None for lp in ph.loop_path(nest, stmt) for g in lp.guards) and \
            all(g.constraints is not None for g in stmt.guards)
        for a in mine:
            subs = a.subscripts if flat else ph.access_shape(nest, a)[0]
            if any(x is None or not x.is_affine() for x in subs):
                return False
            rel = f"{inst} -> {a.array}[{', '.join(ph.poly_to_isl(x, names) for x in subs)}] : {cons}"
            if a.kind == "read":
                reads.append(rel)
            elif affine and certain_write(stmt, a):
                writes.append(rel)
    if not reads:
        return True
    if not writes:
        return False
    R = isl.UnionMap(space + "{ " + "; ".join(reads) + " }")
    W = isl.UnionMap(space + "{ " + "; ".join(writes) + " }")
    S = isl.UnionMap(space + "{ " + "; ".join(sched) + " }")
    earlier = S.lex_gt_union_map(S)          # r -> w: w runs before r
    written = earlier.apply_range(W)          # r -> an element some earlier instance certainly writes
    return R.subtract(written).is_empty()


def _written_before_read_exactly(nest: Nest, accesses: list[Access], flat: bool) -> bool:
    """_written_before_read, False where isl cannot state the domains (the copy-in then stays)."""
    try:
        return _written_before_read(nest, accesses, flat)
    except (ValueError, isl.Error):
        return False


def _declared_bounds(info, ndims: int, flat: bool) -> list[tuple[CInt | None, CInt | None]]:
    """Per dimension, the index range the declaration allows: ranges computed with a non-affine guard left
    out may overshoot it (fdtd's `if (i == 0) ... else hz[i-1]`), and a C program cannot touch outside it."""
    dims = info.dims
    # an array's first element is its element 0; a pointer may point into an object (`p = buf + 1` makes
    # p[-1] legal C), so nothing bounds its subscripts from below
    first = ZERO if dims and dims[0] is not None else None
    if flat or len(dims) != ndims:
        # a pointer (or a view that does not match the declaration): at most the start is known
        return [(first, None)] + [(None, None)] * (ndims - 1)
    return [(first, None if d is None else CInt.of_poly(d - 1)) for d in dims]


def _clamp(expr: CInt, low: CInt | None = None, high: CInt | None = None) -> CInt:
    """`expr`, at least `low` and at most `high`: folded where the difference is a constant."""
    for bound, keep_larger in ((low, True), (high, False)):
        if bound is None:
            continue
        p, b = expr.poly, bound.poly
        if p is not None and b is not None and (p - b).is_const():
            if ((p - b).const_value() < 0) == keep_larger:
                expr = bound
            continue
        compare = ">" if keep_larger else "<"
        expr = CInt(f"(({expr}) {compare} ({bound}) ? ({expr}) : ({bound}))",
                    op("?:", op(compare, expr.expr, bound.expr), expr.expr, bound.expr))
    return expr


def plan_arrays(nest: Nest, kernel_lids: set[int]) -> list[ArrayPlan]:
    params = list(nest.params)
    plans = []
    by_array: dict[str, list[Access]] = {}
    unscattered: set[str] = set()        # arrays some statement touches other than as its scatter target
    for stmt in nest.statements():
        for a in stmt.accesses:
            by_array.setdefault(a.array, []).append(a)
            if stmt.scatter != a.array:
                unscattered.add(a.array)
    for name, accs in by_array.items():
        info = nest.array(name)
        if info.rows_source:
            plans.append(_table_plan(nest, info, accs))
            continue
        if any(not a.affine for a in accs):
            plans.append(_gathered(info, accs, scattered=name not in unscattered))
            continue
        ndims, extents, flat = _array_shape(nest, accs)
        ranges = ph.subscript_ranges(nest, accs, ndims, flat)
        if ranges is None:
            raise CodegenError(f"cannot bound the elements of '{name}' the nest touches")
        reads = [a for a in accs if a.kind == "read"]
        writes = [a for a in accs if a.kind == "write"]
        ext_c = tuple(CInt.of_poly(e) for e in extents)
        bounds = _declared_bounds(info, ndims, flat)
        _check_maybe_touched(nest, name, accs, ndims, flat, bounds)
        lo = flat_index([_clamp(_c(lo, params), low=b[0]) for (lo, _), b in zip(ranges, bounds)], ext_c)
        hi = flat_index([_clamp(_c(hi, params), high=b[1]) for (_, hi), b in zip(ranges, bounds)], ext_c)
        count = _only_when_touched(nest, accs, _count(lo, hi))
        copy_in = (lo, count)
        why = "read by the nest" if reads else ""
        copy_out, dense = None, False
        if writes:
            dense = _dense(nest, writes, extents, flat)
            wr = ph.subscript_ranges(nest, writes, ndims, flat)
            wlo = flat_index([_clamp(_c(l, params), low=b[0]) for (l, _), b in zip(wr, bounds)], ext_c)
            whi = flat_index([_clamp(_c(h, params), high=b[1]) for (_, h), b in zip(wr, bounds)], ext_c)
            copy_out = (wlo, _only_when_touched(nest, writes, _count(wlo, whi)))
            if not reads:
                if dense:
                    copy_in, why = None, "written in full, not read: no copy-in"
                else:
                    why = "copied in because the nest writes only part of the region (the rest must survive the copy-out)"
            elif dense and _written_before_read_exactly(nest, accs, flat):
                # the device never needs the host's values: every element read was written first, and every
                # element copied out is written by every run (matmul's C = 0, then += over k)
                copy_in, why = None, "written in full before it is read: no copy-in"
        # the device copy starts at element 0, or lower when a pointer is indexed below it
        low = ZERO if bounds[0][0] is not None else _clamp(lo, high=ZERO)
        plans.append(ArrayPlan(name, info.elem_type, ndims, ext_c, bool(reads), bool(writes),
                               _only_when_touched(nest, accs, _up_to(hi, low)), copy_in, copy_out,
                               why, low, dense, info.fields))
    return plans


def _table_plan(nest: Nest, info, accs: list[Access]) -> ArrayPlan:
    """The plan of a table of rows whose rows are objects of their own (`double ***u`, ArrayInfo.rows_source): on
    the device, the box of subscripts the nest touches as one dense array, indexed like a declared one (inner
    extents: the number of subscripts each dimension spans); the host gathers each row the nest touches, from the first to the last element
    it touches in that row, into a block laid out the same way, before the launches, and scatters it back after
    them (RowScan).  The touched cells must be known exactly (isl), so that every row and element the copies
    reach is one the C reaches: a row's elements between two it touches exist, as a row is one object."""
    name, ndims = info.name, len(info.dims)
    why = (f"array '{name}': its rows are copied only when c2gpu knows exactly which elements of which rows the "
           "nest touches (affine subscripts, every condition modelled)")
    touched = ph.touched_cells(nest, accs, ndims)
    ranges = ph.subscript_ranges(nest, accs, ndims) if touched is not None else None
    if touched is None or ranges is None:
        raise CodegenError(why)
    params = list(nest.params)
    # (for the sizes at which the nest touches the table: the degenerate pieces of the ranges go)
    runs = ph.run_params(nest, accs)
    los = [_c(lo.gist(runs) if runs is not None else lo, params) for lo, _ in ranges]
    his = [_c(hi.gist(runs) if runs is not None else hi, params) for _, hi in ranges]
    # an inner extent is the number of subscripts the dimension spans: row-major indexing with it maps the box
    # one to one (each dimension's subscripts are that many consecutive values), whatever the first one is
    extents = tuple(_count(lo, h) for lo, h in zip(los[1:], his[1:]))
    first, last = flat_index(los, extents), flat_index(his, extents)
    count = _only_when_touched(nest, accs, _count(first, last))
    writes = any(a.kind == "write" for a in accs)
    low = _clamp(first, high=ZERO)       # (as for other arrays: the device block holds element 0 or lower)
    return ArrayPlan(name, info.elem_type, ndims, extents, any(a.kind == "read" for a in accs), writes,
                     _only_when_touched(nest, accs, _up_to(last, low)),
                     (first, count), (first, count) if writes else None,
                     f"the rows it touches ({info.rows_source}) gathered into one block and back", low, False,
                     info.fields, _row_scan(name, touched, params))


@dataclass(frozen=True)
class RowScan:
    """How the host visits the rows of a table that a nest touches (ArrayPlan.packed): the loops isl builds to
    scan the touched rows, as `steps`, each a line of C or, where a row is visited, its indentation and the
    row's subscripts; in a row, subscripts `first` to `last` (over the parameters and the row's subscripts,
    named `rows`)."""
    steps: tuple[tuple[str, tuple[str, ...] | None], ...]
    rows: tuple[str, ...]
    first: CInt
    last: CInt

    def code(self, body: str) -> list[str]:
        """The scan with `body` (C that names the row's subscripts `rows`) run for each touched row."""
        out = []
        for text, values in self.steps:
            if values is None:
                out.append(text)
                continue
            named = ", ".join(f"{r} = {v}" for r, v in zip(self.rows, values))
            out.append(f"{text}{{ const long long {named}; {body} }}")
        return out


def _scan_steps(node, depth: int = 0) -> list[tuple[str, tuple[str, ...] | None]]:
    """RowScan.steps of isl's AST `node`: its loops and conditions as plain 64-bit C (the host code has no
    min, max or floord for mixed int and long long values), its calls as rows."""
    pad = "  " * depth
    kind = node.get_type()
    if kind == isl.ast_node_type.block:
        children = node.block_get_children()
        return [s for k in range(children.n_ast_node()) for s in _scan_steps(children.get_at(k), depth)]
    if kind == isl.ast_node_type.mark:
        return _scan_steps(node.mark_get_node(), depth)
    if kind == isl.ast_node_type.for_:
        v = node.for_get_iterator().get_id().get_name()
        init, cond, inc = (plain_c(ph.expr_tree(e), wide=True)
                           for e in (node.for_get_init(), node.for_get_cond(), node.for_get_inc()))
        return [(f"{pad}for (int {v} = {init}; {cond}; {v} += {inc}) {{", None),
                *_scan_steps(node.for_get_body(), depth + 1), (f"{pad}}}", None)]
    if kind == isl.ast_node_type.if_:
        out = [(f"{pad}if ({plain_c(ph.expr_tree(node.if_get_cond()), wide=True)}) {{", None),
               *_scan_steps(node.if_get_then_node(), depth + 1)]
        if node.if_has_else_node():
            out += [(f"{pad}}} else {{", None), *_scan_steps(node.if_get_else_node(), depth + 1)]
        return out + [(f"{pad}}}", None)]
    if kind == isl.ast_node_type.user:
        call = node.user_get_expr()
        return [(pad, tuple(plain_c(ph.expr_tree(call.get_op_arg(k)), wide=True)
                            for k in range(1, call.get_op_n_arg())))]
    raise CodegenError("isl scans the rows of a table with a construct c2gpu does not print")


def _row_scan(name: str, touched: isl.Set, params: list[str]) -> RowScan:
    """The RowScan of the cells `touched` (over [c0, ..., c<n-1>]) of table `name`."""
    n = touched.dim(isl.dim_type.set)
    ctx = touched.get_ctx()
    rows = tuple(f"c2gpu_{name}_r{k}" for k in range(n - 1))
    iterators = isl.IdList.alloc(ctx, n - 1)
    for k in range(n - 1):
        iterators = iterators.add(isl.Id(f"c2gpu_{name}_i{k}", context=ctx))
    row_set = touched.project_out(isl.dim_type.set, n - 1, 1).set_tuple_name("ROW")
    build = isl.AstBuild.from_context(row_set.params()).set_iterators(iterators)
    schedule = isl.UnionMap.from_map(isl.Map.identity(row_set.get_space().map_from_set()).intersect_domain(row_set))
    steps = _scan_steps(build.node_from_schedule_map(schedule))
    # the range of the last subscript in one row: the row's subscripts as parameters
    npar = touched.dim(isl.dim_type.param)
    in_row = touched.move_dims(isl.dim_type.param, npar, isl.dim_type.set, 0, n - 1)
    for k, r in enumerate(rows):
        in_row = in_row.set_dim_name(isl.dim_type.param, npar + k, r)
    context = in_row.params()
    first, last = (ph.to_cint(pw.gist(context), params + list(rows)).expr
                   for pw in (in_row.dim_min(0), in_row.dim_max(0)))
    return RowScan(tuple(steps), rows, CInt(f"({plain_c(first, wide=True)})", first),
                   CInt(f"({plain_c(last, wide=True)})", last))


def _check_maybe_touched(nest: Nest, name: str, accs: list[Access], ndims: int, flat: bool, bounds) -> None:
    """Refuse an array whose region would reach elements the C may never touch, and that may not exist.

    A condition c2gpu cannot model (`if (x[i] > 0) a[i - 1] += 1;`) is left out of the regions, which is sound
    for dependences but makes the region of the accesses under it a hull of what they may touch: copied in and
    out, it may reach outside the object (a[-1]).  Declared arrays are clipped to their extents
    (_declared_bounds); elsewhere those accesses must stay inside the region of the array's other accesses,
    which every run of the nest touches (so those elements exist).  The same element in both branches of one
    such `if` (`if (x[i] > t) out[i] = 1; else out[i] = 0;`) is touched in every iteration."""
    by_access = {id(a): st for st in nest.statements() for a in st.accesses}

    def dropped(a: Access) -> list:
        st = by_access.get(id(a))
        guards = list(st.guards) + [g for lp in ph.loop_path(nest, st) for g in lp.guards] if st is not None else []
        # a loop run whole (Statement kind "loop") may run its body any number of times, none included (its
        # first test runs every time)
        whole = [st] if st is not None and st.kind == "loop" and (a.loc, a.text) not in _first_test(st) else []
        return [g for g in guards if g.constraints is None and g.alternatives is None] + whole

    def both_branches(a: Access, b: Access) -> bool:
        (g,), (h,) = dropped(a), dropped(b)
        return isinstance(g, Guard) and isinstance(h, Guard) and g.site and g.site == h.site \
            and g.negated != h.negated and a.subscripts == b.subscripts \
            and by_access[id(a)].loop_ids == by_access[id(b)].loop_ids

    single = [a for a in accs if len(dropped(a)) == 1]
    maybe = [a for a in accs if dropped(a) and not (a in single and any(both_branches(a, b) for b in single))]

    def unmodelled(a: Access) -> bool:
        return any(a is m for m in maybe)
    open_dims = [k for k, (low, high) in enumerate(bounds) if low is None or high is None]
    if not maybe or not open_dims:
        return
    sure = [a for a in accs if not unmodelled(a)]
    why = (f"'{name}': {maybe[0].text} (line {maybe[0].loc.line}) runs under a condition c2gpu cannot model "
           "(or in a loop it does not count), so "
           "it may touch elements the nest otherwise never touches, which may not exist (the extent of "
           f"'{name}' is unknown): the copies could reach outside it")
    maybe_runs, sure_runs = ph.run_params(nest, maybe), ph.run_params(nest, sure) if sure else None
    if sure_runs is None or maybe_runs is None or not maybe_runs.is_subset(sure_runs):
        raise CodegenError(why)
    got, have = ph.subscript_ranges(nest, maybe, ndims, flat), ph.subscript_ranges(nest, sure, ndims, flat)
    if got is None or have is None:
        raise CodegenError(why)
    for k in open_dims:
        low, high = bounds[k]
        if (low is None and not got[k][0].lt_set(have[k][0]).is_empty()) or \
                (high is None and not got[k][1].gt_set(have[k][1]).is_empty()):
            raise CodegenError(why)


def _first_test(st) -> set:
    """The accesses (location, text) a loop run whole makes every time it runs: those of a `for` loop's first
    clause and condition, of a `while` loop's condition."""
    node = st.syntax
    parts = [node.init, node.cond] if isinstance(node, For) else [node.cond] if isinstance(node, While) else []
    return {(n.at or st.loc, to_c(n)) for part in parts if part is not None for n in walk(part) if isinstance(n, Index)}


def _only_when_touched(nest: Nest, accesses: list[Access], count: CInt) -> CInt:
    """`count` elements where the sizes make the nest run one of `accesses`, else none: the range of a region
    is defined only for those sizes (a statement in a loop that runs at some sizes only: `for (j = 0; j < m;
    j++)` with m <= 0), and the wrapper runs for every size that runs any statement."""
    touched, runs = ph.run_params(nest, accesses), ph.run_params(nest)
    if touched is None or runs is None or runs.is_subset(touched):
        return count
    cond = ph.to_cint(touched.gist(runs), list(nest.params))
    return CInt(f"(({cond}) ? ({count}) : 0)", op("?:", cond.expr, count.expr, Poly.const(0)))


def _gathered(info, accs: list[Access], scattered: bool = False) -> ArrayPlan:
    """The plan of an array read through a subscript c2gpu cannot bound (a gather, `a[idx[i]]`), or updated
    only by scatter statements (`hist[data[i]]++`, `scattered`): the whole declared array is copied in (and out,
    for a scatter), and the kernel indexes it as written.  An array the nest also writes otherwise (CG's `p`,
    gathered by one kernel of a time loop and written by another: the dependence pass keeps such a read and
    write out of one parallel loop) is copied in and out whole: elements the device does not write go back
    unchanged.  Refused when its extents are not known (a pointer)."""
    bad = next(a for a in accs if not a.affine)
    written = any(a.kind == "write" for a in accs)
    if not info.dims or any(d is None for d in info.dims) or info.storage in ("param-pointer", "param-array") \
            and info.dims[0] is None:
        raise CodegenError(f"array '{info.name}' has a non-affine access ({bad.text}), and its extent is unknown, so "
                           "the whole of it cannot be copied to the device")
    if any(len(a.subscripts) != len(info.dims) for a in accs):
        raise CodegenError(f"array '{info.name}' has a non-affine access ({bad.text}) that does not index every "
                           "dimension")
    ext_c = tuple(CInt.of_poly(d) for d in info.dims[1:])
    size = info.dims[0]
    for d in info.dims[1:]:
        size = size * d
    total = CInt.of_poly(size)
    if written:
        how = f"updated through {bad.text} (atomics)" if scattered else f"read through {bad.text} and written"
        return ArrayPlan(info.name, info.elem_type, len(info.dims), ext_c, True, True, total, (ZERO, total),
                         (ZERO, total), f"{how}: the whole array is copied in and out", fields=info.fields)
    return ArrayPlan(info.name, info.elem_type, len(info.dims), ext_c, True, False, total, (ZERO, total), None,
                     f"read through {bad.text}: the whole array is copied in", fields=info.fields)
