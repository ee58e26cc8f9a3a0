"""Dependence analysis: which loops of a nest are parallel, and if not, why.

Every loop gets one verdict, keyed by `Loop.lid` (sibling loops may share a
variable name):

- "parallel":  proven: no dependence is carried by the loop.
- "reduction": the only carried dependences are candidate reductions over the
               loop (scalar `s += ...`, `s = fmaxf(s, ...)`, `count++`, or an
               array element `y[i] += ...`); the verdict names them.
- "carried":   a carried dependence was proven (exact domains, see below).
- "unknown":   not proven parallel: non-affine subscript, unknown call,
               possible aliasing, unsupported statement, non-affine bound, or a
               dependence that exists only in our over-approximation.
When several apply, the first of carried > unknown > reduction > parallel
wins (a proven dependence is the most useful thing to report; every blocker
is still listed in `reasons`).

Method (exact for affine subscripts and bounds, with isl).  For every pair of
references to the same array or scalar, at least one a write, we build the
relation between the iteration vectors of the two statements: both in their
domains (loop bounds, plus the affine `if` guards; a guard or bound we cannot
express is dropped, which only enlarges the domain, so the answer stays
sound), the same memory cell (equal subscripts in each dimension; a scalar is
a 0-dimensional array), and the source executing before the sink.  For the
loops the two statements share, the dependence is carried at level d when the
iteration vectors are equal above d and the source is earlier at d; it is
loop-independent when they are equal on all common loops and the source
statement comes first in the text (sid order).  Loop-independent dependences
do not affect parallelism; they are reported in `dependences` for
completeness.  Emptiness is decided by isl for all values of the symbolic
parameters (sizes like `n` are free; only the bounds constrain them), with
integer semantics.  Distances are in iterations of the loops as they are in
the IR (after normalization: of the normalized loops).  A dependence is
`exact` (proven) when both domains were modelled completely, the nest has no
control flow we do not model (break, goto, ...) and the name denotes one
variable; otherwise it is a "may" dependence and makes the loop unknown.

Pairs whose subscripts we cannot analyse, pairs of different arrays that may
alias, and calls or flagged constructs make the loops the two references (or
the construct) share unknown: a dependence between two statements can only be
carried by a loop enclosing both.

Scalars: one declared in the body of a loop is private to it; otherwise it is
a reduction over the loop (every write a candidate reduction with one
operator, no other read), or privatizable (every read preceded, in the same
iteration, by a write that certainly runs, in the loop's body or in an inner
loop that also holds the read; and its value is not used after the loop, or
only after the nest with a write directly in the loop's body: lastprivate),
or its dependences count.

Out of scope (we assume what a C compiler may assume): signed integer overflow
in subscripts and bounds, type punning between arrays of different types, and
side effects of math-library calls (errno).  Equal cells means equal subscripts
in every dimension only while every subscript stays inside its extent:
c2gpu/analysis/subscript_bounds.py reports a subscript that leaves its dimension
(`b[i][j-1]` at j = 0 reads row i-1, undefined behaviour) as a finding, and the
loops around it are not proven.  Conversions (casts, narrow and unsigned types)
are checked by lowering: a subscript, bound or guard whose conversion can change
its value is not affine.
"""
from __future__ import annotations

from dataclasses import replace

import islpy as isl

from c2gpu.syntax_tree import Assign, to_c
from c2gpu.ir import ArrayInfo, Loc, Loop, Nest, Reduction, Statement, line_of, loop_words
from c2gpu.frontend.libc import MATH_FUNCTIONS
from c2gpu.diagnostics import HOST_ONLY
from c2gpu.frontend.objects import SCALAR, distinct_objects, labels_apart
from c2gpu.pipeline import Pass, PassFailed
from c2gpu.analysis.aliasing import assumed_distinct, is_pointer, may_alias, may_share_memory
from c2gpu.analysis.isl_sets import Unencodable, con, parse_set, sub

from c2gpu.analysis import openmp, subscript_bounds
from .references import (Dependence, _apart, _buckets, _collect, _common, _Ctx, _in_iteration, _orders, _Ref,
                         _same_iteration_only, access_map, check_pair)
from .scalars import live_after, outlives_nest, privatizable, scalar_reduction
from c2gpu.records import dataclass

STATUSES = ("parallel", "reduction", "carried", "unknown")


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class DepReason:
    """Why a loop has its status, with the locations that block it.

    kind: "flow", "anti", "output" (a carried dependence), "reduction",
    "non-affine", "alias", "call", "bound", "budget" (too many reference
    pairs to compare, see MAX_PAIRS) or "flag" (then `code` is the Flag's
    code).  For dependences `exact` says whether the dependence is proven
    (False: it exists only because something was over-approximated, e.g. a
    non-affine guard was dropped).
    """
    kind: str
    message: str
    source: Loc | None = None
    sink: Loc | None = None
    array: str | None = None
    distance: tuple[int, ...] | None = None
    direction: str | None = None
    code: str | None = None
    exact: bool = True


@dataclass(frozen=True)
class LoopVerdict:
    """Whether one loop of a nest can run its iterations in parallel (one of STATUSES), and why."""
    lid: int
    var: str                        # the loop variable as written in C
    status: str                     # one of STATUSES
    reasons: tuple[DepReason, ...] = ()
    ir_var: str = ""                # the variable in the IR (normalized loops: "i_n")
    private: tuple[str, ...] = ()   # scalars declared outside the loop, privatized: written before read, dead after
    reductions: tuple[str, ...] = ()  # reduction targets over this loop ("sum", "y[i]")
    outer_writes: tuple[str, ...] = ()  # scalars declared outside the loop that it writes (reduction targets
    #                                     excluded): a port needs one copy per iteration, and the value after a
    #                                     parallel loop is that of the one iteration that wrote it (unless private)
    private_arrays: tuple[str, ...] = ()  # arrays privatized for this loop (array_private): each iteration
    #                                     writes every element it reads first, and nothing reads them after


@dataclass(frozen=True)
class DependenceInfo:
    """The dependence pass's result for a nest: a verdict per loop (by lid) and the dependences found."""
    verdicts: dict[int, LoopVerdict]
    dependences: tuple[Dependence, ...]
    notes: tuple[str, ...] = ()

    def loop(self, key: int | str) -> LoopVerdict:
        """A verdict by lid, or by variable name (as written in C, or the IR name): the first in lid order."""
        if isinstance(key, int):
            return self.verdicts[key]
        for lid in sorted(self.verdicts):
            v = self.verdicts[lid]
            if key in (v.var, v.ir_var):
                return v
        raise KeyError(key)

    def statuses(self) -> dict[int, str]:
        return {lid: v.status for lid, v in sorted(self.verdicts.items())}

    def carried_by(self, lid: int) -> tuple[Dependence, ...]:
        return tuple(d for d in self.dependences if d.loop == lid)


class DependenceAnalysis(Pass):
    name = "dependence"
    description = "exact (isl) dependence analysis: which loops are parallel, reductions, carried or unknown"
    requires = ()
    provides = ("dependence",)

    def run(self, nest: Nest, ctx) -> DependenceInfo:
        options = getattr(ctx, "options", None) or {}
        depth, too_deep = _depth(nest.root)
        if too_deep is not None:
            raise PassFailed(f"the nest is {depth} loops deep: exact dependence analysis is limited to "
                             f"{MAX_DEPTH} nested loops (its cost grows with the depth)",
                             code="nest-too-deep", loc=too_deep.loc)
        return analyze(nest, assume_no_alias=bool(options.get("assume_no_alias")),
                       program=getattr(ctx, "program", None))


def proves_parallel(nest: Nest, lids, ctx) -> bool:
    """Whether the dependence analysis proves the loops `lids` of `nest` parallel, with the run's options: for a
    nest the manager does not hold (a kernel's view rewritten by a transform, c2gpu/transform/coarsen.py)."""
    verdicts = analyze(nest, assume_no_alias=bool(ctx.options.get("assume_no_alias")), program=ctx.program).verdicts
    return all(lid in verdicts and verdicts[lid].status == "parallel" for lid in lids)


# Bounds that keep the analysis of pathological input (generated or fuzzed code) finite and deterministic:
# a nest deeper than MAX_DEPTH is refused; after MAX_PAIRS reference pairs of one nest, the loops around the
# remaining pairs are reported as not proven parallel (sound: nothing is ported on a guess).
MAX_DEPTH = 48
MAX_PAIRS = 20000


def _depth(lp: Loop) -> tuple[int, Loop | None]:
    """How deep the nest is, and its first loop (in source order) nested deeper than MAX_DEPTH: the line a
    refusal points at."""
    best, first_too_deep, stack = 0, None, [(lp, 1)]
    while stack:
        node, d = stack.pop()
        best = max(best, d)
        if d > MAX_DEPTH and first_too_deep is None:
            first_too_deep = node
        stack.extend(reversed([(c, d + 1) for c in node.body if isinstance(c, Loop)]))
    return best, first_too_deep


# --------------------------------------------------------------------------- internal model

# Flags that stop us from proving anything about the loops around them.  Codes
# handled elsewhere: non-affine-subscript (per access, below), inside-while
# (the nest itself runs an unknown number of times: no effect on its loops), runs-in-thread (a loop kept as one
# statement, whose accesses are its statement's: no effect on the loops around it), and the codes that keep a nest
# on the CPU whatever its loops are (HOST_ONLY: the mapping pass refuses the nest).
# Any other code, including ones added later, makes the enclosing loops unknown.
_IGNORED_FLAGS = {"non-affine-subscript", "inside-while", "runs-in-thread"} | HOST_ONLY
# Flags that do not change which iterations execute: a dependence found next to
# them is still proven.  Other flags (break, goto, modified loop variables, ...)
# make every dependence in the nest a "may" dependence.
_DATA_FLAGS = {"unknown-call", "array-escapes", "address-taken", "unsupported-access", "local-array",
               "unknown-array", "unknown-identifier", "non-affine-subscript", "inside-while", "runs-in-thread"}


# --------------------------------------------------------------------------- things that block a proof

def _flag_loops(ctx: _Ctx, f) -> list[int]:
    """The loops a flag's construct sits in: every loop when lowering did not say (sound)."""
    return sorted(f.loop_ids) if f.loop_ids else list(ctx.loops)


def _flags(ctx: _Ctx) -> None:
    for lp in ctx.loops.values():
        for f in lp.flags:                           # non-affine bounds: the loop and every loop around it
            ctx.block(ctx.ancestors(lp.lid), DepReason(
                "bound", f"{f.message} ({line_of(f.loc, ctx.home)})", source=f.loc, code=f.code))
    for f in ctx.nest.flags:
        if f.code in _IGNORED_FLAGS:
            continue
        lids = _flag_loops(ctx, f)
        if f.code == "non-affine-bound":
            lids = sorted({a for lid in lids for a in ctx.ancestors(lid)})
        kind = "call" if f.code == "unknown-call" else "flag"
        ctx.block(lids, DepReason(kind, f"{f.message} ({line_of(f.loc, ctx.home)})", source=f.loc, code=f.code))
        if f.code not in _DATA_FLAGS and not ctx.control_inexact:
            ctx.control_inexact = f"{f.message} ({line_of(f.loc, ctx.home)})"
    for s in ctx.nest.statements():                  # calls the IR lists but that carry no flag
        for name in s.calls:
            flagged = any(r.code == "unknown-call" and f"'{name}'" in r.message for r in ctx.unknown[s.loop_ids[-1]])
            if name not in MATH_FUNCTIONS and name not in {f.name for f in ctx.nest.functions} and not flagged:
                ctx.block(s.loop_ids, DepReason(
                    "call", f"call to '{name}' ({line_of(s.loc, ctx.home)}): c2gpu cannot see what it reads or writes",
                    source=s.loc, code="unknown-call"))


def _bounds(ctx: _Ctx) -> None:
    """A loop whose bounds or step we cannot model is unknown, and so is every loop around it.

    (The frontend flags the usual cases as non-affine-bound; this catches the
    rest, e.g. a hand-built IR, so that a level is never skipped silently.)
    """
    for lp in ctx.loops.values():
        if any(r.kind == "bound" for r in ctx.unknown[lp.lid]):
            continue
        if not lp.polyhedral:
            ctx.block(ctx.ancestors(lp.lid), DepReason(
                "bound", f"{loop_words(ctx.name(lp))} (line {lp.loc.line}): bounds or step cannot be modelled "
                         f"('{lp.header}')", source=lp.loc, code="non-affine-bound"))


def _scalar_targets(info: ArrayInfo) -> set[str]:
    """The scalar variables the file shows this pointer holds the address of (`f(&n)`), by name."""
    return {label[len(SCALAR):].split("@")[0] for label in info.target or () if label.startswith(SCALAR)}


def _one_table_or_apart(infos: dict[str, ArrayInfo], by_name: dict[str, list]) -> list[tuple[str, str]]:
    """Pairs (a, b), a < b, of tables of rows (ArrayInfo.rows_source) of one shape that the file shows are, in
    every context, either one table (the same label: the same object from its start, a table's labels never being
    offsets into one) or distinct ones, and one table in some context."""
    tables = sorted(n for n in by_name if n in infos and infos[n].rows_source and infos[n].target is not None)
    out = []
    for i, a in enumerate(tables):
        for b in tables[i + 1:]:
            x, y = infos[a], infos[b]
            if len(x.dims) != len(y.dims) or x.elem_type != y.elem_type:
                continue
            n = max(len(x.target), len(y.target))
            if {len(x.target), len(y.target)} - {1, n}:
                continue
            pairs = list(zip(x.target * (n // len(x.target)), y.target * (n // len(y.target))))
            same = [p == q and "[?]" not in p for p, q in pairs]
            if any(same) and all(s or labels_apart(p, q) for s, (p, q) in zip(same, pairs)):
                out.append((a, b))
    return out


def _kind_of(info: ArrayInfo) -> str:
    return {"param-pointer": "pointer parameter", "param-array": "array parameter"}.get(
        info.storage, "local pointer" if info.storage == "local" and is_pointer(info)
        else "global pointer" if is_pointer(info) else f"{info.storage} array")


# --------------------------------------------------------------------------- 4. per loop

def _when(d: int | None) -> str:
    if d == 1:
        return "in the previous iteration"
    if d:
        return f"{d} iterations earlier"
    return "in an earlier iteration"


def _dep_reason(dep: Dependence, src: _Ref, snk: _Ref, level: int) -> DepReason:
    d = dep.distance[level] if dep.distance is not None else None
    what = dep.array if dep.scalar else f"the element of {dep.array}"
    verb = {"flow": f"reads {what} written by", "anti": f"overwrites {what} read by",
            "output": f"overwrites {what} written by"}[dep.kind]
    art = "an" if dep.kind in ("anti", "output") else "a"
    vec = dep.distance if dep.distance is not None else None
    size = (f"distance {vec[0]}" if len(vec) == 1 else f"distance ({', '.join(map(str, vec))})") if vec \
        else f"direction {dep.direction}"
    head = "carries" if dep.exact else "may carry"
    msg = (f"{head} {art} {dep.kind} dependence on {'scalar ' if dep.scalar else ''}{dep.array}: "
           f"{snk.describe()} {verb} {src.describe()} {_when(d)}, {size}")
    if not dep.exact:
        msg += f" (not proven: {dep.why or 'part of the nest is not modelled'})"
    return DepReason(dep.kind, msg, source=dep.source_loc, sink=dep.sink_loc, array=dep.array,
                     distance=dep.distance, direction=dep.direction, exact=dep.exact)


def combine(ctx: _Ctx, found: list[tuple[Dependence, _Ref, _Ref]], refs: list[_Ref], notes: list[str]) -> dict[int, LoopVerdict]:
    """One verdict per loop, from its carried dependences and blockers: carried > unknown > reduction > parallel.

    Array dependences count unless they are the self-dependence of an array
    reduction over the loop.  Scalars carry nothing for a loop whose body
    declares them; otherwise they are a reduction over the loop, or
    privatizable (every read preceded by a write in the same iteration, at any
    loop level: see scalars.privatizable; value not needed after the loop, or
    needed after the nest and written directly in the loop's body, so that the
    last iteration leaves it), or their dependences count.
    """
    stmts = {s.sid: s for s in ctx.nest.statements()}
    infos = {sc.name: sc for sc in ctx.nest.scalars}
    verdicts = {}
    privatized: dict[str, set[int]] = {}        # array -> the loops it has a copy per iteration of
    for lid, lp in sorted(ctx.loops.items()):
        carried, maybe, reductions, red_names, private = [], [], [], [], []
        scalar_deps: dict[str, list[tuple[Dependence, _Ref, _Ref]]] = {}
        level = len(ctx.ancestors(lid)) - 1
        arrays_carried = sorted({dep.array for dep, _, _ in found if dep.loop == lid and not dep.scalar})
        private_arrays = [a for a in arrays_carried if array_private(a, lp, refs, ctx)]
        for a in private_arrays:
            if not privatized.setdefault(a, set()) & set(ctx.ancestors(lid)):    # said once, for the outermost
                info = ctx.nest.array(a)
                notes.append(f"{a} is {info.dead_after}, in each iteration of {loop_words(ctx.name(lp))}"
                             if info.declared_in is not None else
                             f"{a} is written before it is read in every iteration of {loop_words(ctx.name(lp))} "
                             f"and {info.dead_after}: each iteration has its own copy")
            privatized[a].add(lid)
        spoiled = _spoiled_reductions(found, lp, ctx, stmts)
        for dep, src, snk in found:
            if dep.loop != lid or dep.array in private_arrays:
                continue
            if dep.scalar:
                scalar_deps.setdefault(dep.array, []).append((dep, src, snk))
                continue
            red = _array_reduction(dep, lp, stmts)
            if red is not None and dep.source_sid in spoiled:
                reason = _dep_reason(dep, src, snk, level)
                (carried if dep.exact else maybe).append(replace(reason, message=(
                    f"{reason.message}; no reduction, as {spoiled[dep.source_sid].describe()} touches the element "
                    "inside the loop")))
                continue
            if red is not None:
                if red.target not in red_names:
                    red_names.append(red.target)
                    reductions.append(DepReason(
                        "reduction",
                        f"reduction {red.target} {red.op}= over '{ctx.name(lp)}' ({line_of(red.loc, ctx.home)})",
                        source=red.loc, sink=red.loc, array=dep.array))
                continue
            (carried if dep.exact else maybe).append(_dep_reason(dep, src, snk, level))
        outer_writes = []
        for s in sorted({r.name for r in refs if r.access is None and r.kind == "write"
                         and lid in (l.lid for l in r.site.chain)}):
            info = infos.get(s)
            if info is not None and lid in (info.declared_in or ()):
                continue                          # declared in the body of this loop: private to each iteration
            mine = [r for r in refs if r.name == s and r.access is None]
            inside = [r for r in mine if lid in (l.lid for l in r.site.chain)]
            deps = scalar_deps.get(s, [])
            red = scalar_reduction(s, lp, inside) if deps else None
            if red is not None:
                red_names.append(s)
                w, op = red[0]
                reductions.append(DepReason(
                    "reduction", f"reduction {s} {op}= over '{ctx.name(lp)}' ({line_of(w.loc, ctx.home)})",
                    source=w.loc, sink=w.loc, array=s))
                continue
            outer_writes.append(s)
            if not deps:
                continue
            priv = privatizable(s, info.source_name if info is not None else s, lp, inside)
            if priv is not None:
                w, outlives = priv.write, outlives_nest(s, info, ctx.nest)
                live = live_after(s, info.source_name if info is not None else s, lp, mine, set(ctx.ancestors(lid)))
                if not live and outlives and not priv.every_iteration and not priv.all_or_none:
                    live = (f"the code after the nest may read it, and the write at line {w.loc.line} sits in an inner "
                            "loop, which may not run in the last iteration")
                if not live:
                    private.append(s)
                    kept = " (the last iteration's value is kept after the nest)" if outlives else ""
                    notes.append(f"{s} is written before it is read in every iteration of {loop_words(ctx.name(lp))} "
                                 f"({line_of(w.loc, ctx.home)}): privatized{kept}")
                    continue
                notes.append(f"{s} is written before it is read in every iteration of {loop_words(ctx.name(lp))} "
                             f"({line_of(w.loc, ctx.home)}) but not privatized: its value after the loop may be used "
                             f"({live})")
            kinds_seen = set()
            for dep, src, snk in deps:
                if dep.kind not in kinds_seen:
                    kinds_seen.add(dep.kind)
                    (carried if dep.exact else maybe).append(_dep_reason(dep, src, snk, level))
        for target, why in ctx.scattered.get(lid, {}).items():
            red_names.append(target)
            reductions.append(why)
        blockers = ctx.unknown[lid]
        if carried:
            status = "carried"
        elif blockers or maybe:
            status = "unknown"
        elif reductions:
            status = "reduction"
        else:
            status = "parallel"
        reasons = _dedupe(carried + list(blockers) + maybe + reductions)
        verdicts[lid] = LoopVerdict(lid, ctx.name(lp), status, reasons, lp.var, tuple(private), tuple(red_names),
                                    tuple(outer_writes), tuple(private_arrays))
    return verdicts


# --------------------------------------------------------------------------- per-iteration copies of arrays

def array_private(name: str, lp: Loop, refs: list[_Ref], ctx: _Ctx) -> bool:
    """Whether array `name` can have a copy of its own in each iteration of `lp`, its dependences carried by
    `lp` then gone (MG's `r1[i1]`, written for every i1 and then read, in each iteration of i3 and i2).
    An array declared inside `lp` is one by C's own rules (a value read before the iteration writes it is
    indeterminate in the C as written, so any copy's value is as right).

    The array has constant extents and nothing reads its values after the nest (ArrayInfo.dead_after: an
    automatic array of the function that no pointer reaches, or a parameter no caller reads after the call, like
    PolyBench doitgen's `sum`); every reference to it sits in `lp`, is analysable, and
    updates no element by a scatter; and every element a read touches was written earlier in the same
    iteration of `lp` (`_read_covered`): then each iteration reads only its own values, which its copy holds,
    and no value leaves it."""
    info = ctx.nest.array(name) if name in {a.name for a in ctx.nest.arrays} else None
    if info is not None and info.declared_in is not None and lp.lid in info.declared_in:
        return True          # declared inside lp: C gives each iteration a new array, which nothing else can reach
    if info is None or not info.dead_after or not info.dims or any(d is None or not d.is_const() for d in info.dims):
        return False
    if name in ctx.conflated or ctx.control_inexact or any(s.scatter == name for s in ctx.nest.statements()):
        return False                              # (a break or goto may skip a write the domains say runs)
    mine = [r for r in refs if r.name == name and r.access is not None]
    if any(lp.lid not in (l.lid for l in r.site.chain) or r.cell is None for r in mine):
        return False
    writes = [w for w in mine if w.kind == "write" and _certain_write(w)]
    try:
        return all(_read_covered(r, writes, lp, ctx) for r in mine if r.kind == "read")
    except (Unencodable, isl.Error):
        return False


def _certain_write(w: _Ref) -> bool:
    """Whether `w` writes its element whenever its statement runs: the target of the statement's assignment,
    in a statement whose whole domain is modelled (no condition left out, not a loop run whole)."""
    st = w.site.stmt
    return st.kind == "assign" and isinstance(st.expr, Assign) and not w.access.when \
        and w.access.text == to_c(st.expr.target) and w.site.guard is None


def _read_covered(r: _Ref, writes: list[_Ref], lp: Loop, ctx: _Ctx) -> bool:
    """Whether, in every instance of the read `r`, the element it reads was written before in the same iteration
    of `lp` by one of `writes` (exact domains only): the union over the writes and the levels at which a write
    instance can precede the read (the same iterations of `lp` and the loops around it, then earlier at a
    deeper common loop, or in all common loops and earlier in the text) covers the read's domain."""
    k = next(n for n, l in enumerate(r.site.chain) if l.lid == lp.lid)
    td = ctx.domain(r.site, "t")
    t_cell = access_map(r, td, ctx)
    covered = []
    for w in writes:
        sd = ctx.domain(w.site, "s")
        common = _common(w.site, r.site)
        if not sd.exact or common <= k:
            continue
        s_cell = access_map(w, sd, ctx)
        if len(s_cell) != len(t_cell):
            return False
        base = sd.cons + td.cons + [con(sub(a, b), "=") for a, b in zip(s_cell, t_cell)]
        hidden = ", ".join(sd.dims + sd.exists + td.exists)
        # (the same iteration of `lp` and the loops around it: the orders from the loop inside it on)
        for _, order in _orders(w.site, r.site, sd, td, common, first=k + 1):
            body = " and ".join(map(str, base + order))
            covered.append(parse_set(f"{ctx.enc.space()}{{ [{', '.join(td.dims)}] : exists ({hidden} : {body}) }}"))
    if not covered:
        return False
    reads = ctx.enc.points(td, [])
    union = covered[0]
    for c in covered[1:]:
        union = union.union(c)
    return reads.is_subset(union)


def _scatters(ref: _Ref, name: str) -> bool:
    """Whether `ref` is the target of a scatter statement on array `name` (Statement.scatter)."""
    return ref.access is not None and ref.site.stmt.scatter == name and ref.site.guard is None


def _spoiled_reductions(found, lp: Loop, ctx: _Ctx, stmts: dict[int, Statement]) -> dict[int, _Ref]:
    """The statements whose array reduction over `lp` another access meets inside `lp`, each with that access: a
    dependence with it, in one iteration of `lp` or across iterations of `lp` or of a loop inside it, other than
    its own update of its target.  Its updates then cannot gather in a partial result per thread, added to the
    element after the loop: the other access would see, or overwrite, the element in between (`V[e] += a[k];
    V[f] = b[k];` in a loop over k inside the reduction's loop, where f may be e)."""
    inside = {q.lid for q in lp.loops()}
    out: dict[int, _Ref] = {}
    for dep, src, snk in found:
        if dep.scalar or not (dep.loop is None or dep.loop in inside) or _array_reduction(dep, lp, stmts) is not None:
            continue
        if lp.lid not in stmts[dep.source_sid].loop_ids or lp.lid not in stmts[dep.sink_sid].loop_ids:
            continue                # one of them runs before or after the whole loop: the total is there
        for sid in dict.fromkeys((dep.source_sid, dep.sink_sid)):
            target = next((r.array_access for r in stmts[sid].reductions if r.array_access is not None
                           and r.array_access.array == dep.array and lp.var in r.loops), None)
            if target is not None:          # the other access: another statement's, or another of this one
                out.setdefault(sid, next(x for x in (src, snk) if not (
                    x.site.stmt.sid == sid and x.access is not None and x.access.subscripts == target.subscripts)))
    return out


def _array_reduction(dep: Dependence, lp: Loop, stmts: dict[int, Statement]) -> Reduction | None:
    """The reduction when `dep` is the self-dependence of `y[i] += ...` on its own target, over `lp`."""
    if dep.source_sid != dep.sink_sid or dep.source is None or dep.sink is None:
        return None
    for r in stmts[dep.source_sid].reductions:
        acc = r.array_access
        if acc is None or acc.array != dep.array or lp.var not in r.loops:
            continue
        if all(a.array == acc.array and a.subscripts == acc.subscripts for a in (dep.source, dep.sink)):
            return r
    return None


def _dedupe(reasons: list[DepReason]) -> tuple[DepReason, ...]:
    out, seen = [], set()
    for r in reasons:
        if r.message not in seen:
            seen.add(r.message)
            out.append(r)
    return tuple(out)


# --------------------------------------------------------------------------- driver

def analyze(nest: Nest, assume_no_alias: bool = False, program=None) -> DependenceInfo:
    ctx = _Ctx(nest)
    notes: list[str] = []
    _flags(ctx)
    _bounds(ctx)
    for lids, flag in subscript_bounds.blocking(nest):   # undefined behaviour: equal subscripts may not be equal cells
        ctx.block(lids, DepReason("flag", flag.message, source=flag.loc, code=flag.code))

    written = {s for st in nest.statements() for s in st.scalar_writes}
    # scalars a pointer may reach: globals, statics and address-taken variables declared outside the nest
    exposed = {sc.name for sc in nest.scalars if sc.exposed and sc.declared_in is None}
    refs, lin_notes = _collect(ctx, written | exposed)
    notes.extend(lin_notes)

    by_name: dict[str, list[_Ref]] = {}
    for r in refs:
        by_name.setdefault(r.name, []).append(r)
    infos = {a.name: a for a in nest.arrays}
    for name, group in by_name.items():
        if name not in infos and any(r.access is not None for r in group):
            # The IR lists only arrays declared outside the nest: one declared inside it (flagged local-array)
            # is missing.  Describe it as a pointer of unknown origin, which may alias anything.
            a = next(r.access for r in group if r.access is not None)
            infos[name] = ArrayInfo(name, a.elem_type, a.elem_size, (None,), "local", False, False, a.loc)

    # An array declared inside the nest is a new object in every iteration: dependences on it are over-approximations.
    for a in infos:
        if a not in {x.name for x in nest.arrays}:
            ctx.conflated[a] = f"'{a}' is declared inside the nest, so each iteration may have its own"

    def common_lids(x: _Ref, y: _Ref) -> list[int]:
        return [lp.lid for lp in x.site.chain[:_common(x.site, y.site)]]

    # dependences on one array or scalar
    found: list[tuple[Dependence, _Ref, _Ref]] = []
    checked = 0
    for name, named in by_name.items():
        if not any(r.kind == "write" for r in named):
            continue
        for group in _buckets(named):
            for i, x in enumerate(group):
                for y in group[i:]:
                    if x.kind == "read" and y.kind == "read":
                        continue
                    if _scatters(x, name) and _scatters(y, name) and not ctx.control_inexact:
                        # two additive updates of elements chosen by data: in any order they leave the same sums,
                        # each done atomically (Statement.scatter); the loops around both are reductions of them
                        for lid in common_lids(x, y):
                            ctx.scattered[lid].setdefault(x.access.text, DepReason(
                                "reduction", f"scatter {x.access.text} += over '{ctx.name(ctx.loops[lid])}' (line "
                                             f"{x.loc.line}): the updates commute and run as atomics",
                                source=x.loc, sink=y.loc, array=name))
                        continue
                    if _apart(x, y):
                        continue
                    pairs = [(x, y)] if x is y else [(x, y), (y, x)]
                    if _same_iteration_only(x, y, ctx):
                        found.extend((dep, src, snk) for src, snk in pairs for dep in _in_iteration(src, snk, ctx))
                        continue
                    checked += 1
                    if checked > MAX_PAIRS:
                        ctx.block(common_lids(x, y), DepReason(
                            "budget", f"the nest has more than {MAX_PAIRS} pairs of references to compare: "
                                      f"{name} was not analysed", source=x.loc, sink=y.loc, array=name))
                        continue
                    for src, snk in pairs:
                        try:
                            for dep in check_pair(src, snk, ctx):
                                found.append((dep, src, snk))
                        except (Unencodable, isl.Error) as e:
                            bad = src if src.cell is None else snk if snk.cell is None else src
                            why = str(e) if not isinstance(e, isl.Error) else f"isl failed: {e}"
                            ctx.block(common_lids(src, snk), DepReason(
                                "non-affine", f"{bad.describe()} cannot be analysed ({why}) and {name} is written "
                                              "in the nest", source=bad.loc, sink=(snk if bad is src else src).loc,
                                array=name))
                            break

    # two tables that are, at each call, one table or two distinct ones (MG's resid(u[k], r[k], r[k], ...)): their
    # references are compared as one array's; the port gives each its own device copy, which holds only while
    # no element passes from one name to the other (only reads of one before the other writes that element)
    one_or_apart = _one_table_or_apart(infos, by_name)
    for a, b in one_or_apart:
        cross = []
        for x in by_name[a]:
            for y in by_name[b]:
                if x.kind == "read" and y.kind == "read":
                    continue
                for src, snk in ((x, y), (y, x)):
                    try:
                        cross.extend((dep, src, snk) for dep in check_pair(src, snk, ctx))
                    except (Unencodable, isl.Error) as e:
                        ctx.block(common_lids(src, snk), DepReason(
                            "non-affine", f"{src.describe()} cannot be compared with {snk.describe()} ({e}), and "
                                          f"'{a}' and '{b}' may be one table", source=src.loc, sink=snk.loc, array=a))
        found.extend(cross)
        # a value written through one name and read through the other (in any iteration, host loops included)
        # would not reach the other copy: then no part of the nest may run on the device, every loop is blocked
        why = f"tables '{a}' and '{b}' may be one table ({infos[a].target_source}; {infos[b].target_source})"
        if any(r.kind == "write" for r in by_name[a]) and any(r.kind == "write" for r in by_name[b]):
            x, y = (next(r for r in by_name[n] if r.kind == "write") for n in (a, b))
            ctx.block(list(ctx.loops), DepReason("alias", f"{why}, and the nest writes both", source=x.loc,
                                                 sink=y.loc, array=a))
        flow = next(((src, snk) for dep, src, snk in cross if dep.kind == "flow"), None)
        if flow is not None:
            src, snk = flow
            ctx.block(list(ctx.loops), DepReason(
                "alias", f"{why}: {snk.describe()} may read what {src.describe()} wrote, through the other name",
                source=src.loc, sink=snk.loc, array=a))

    # aliasing between different arrays, and between pointers and scalars a pointer could reach
    pointers = sorted(n for n in by_name if n in infos and is_pointer(infos[n]))
    names = sorted(n for n in by_name if n in infos)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if (a, b) in one_or_apart or not may_alias(infos[a], infos[b], assume_no_alias):
                continue
            ka, kb = _kind_of(infos[a]), _kind_of(infos[b])
            who = f"{ka}s '{a}' and '{b}'" if ka == kb else f"{ka} '{a}' and {kb} '{b}'"
            if infos[a].target is not None and infos[b].target is not None:     # a fact: no flag changes it
                why = (f"{who} may alias: the whole file shows they may point into one object ({a}: "
                       f"{infos[a].target_source}; {b}: {infos[b].target_source})")
            else:
                why = f"{who} may alias; declare them restrict or pass --assume-no-alias"
            for x in by_name[a]:
                for y in by_name[b]:
                    if x.kind == "write" or y.kind == "write":
                        ctx.block(common_lids(x, y), DepReason("alias", why, source=x.loc, sink=y.loc, array=a))
    # a pointer the file shows points into an array or new memory cannot point to a scalar variable; one the file
    # shows holds `&s` points to s whatever restrict or --assume-no-alias say
    loose = [p for p in pointers if not infos[p].restrict and not assumed_distinct(infos[p], assume_no_alias)
             and infos[p].target is None]
    aiming = {p: _scalar_targets(infos[p]) for p in pointers if _scalar_targets(infos[p])}
    if loose or aiming:
        stands = dict(nest.stands_for)      # a variable standing for a field or an element: named as written

        def who(p: str, s: str) -> tuple[str, str]:
            if s in aiming.get(p, ()):     # a fact of the file: no declaration or flag changes it
                return f"pointer '{p}' points to '{s}' ({infos[p].target_source})", ""
            what = f"'{stands[s]}'" if s in stands else f"'{s}' (a global or address-taken variable)"
            return f"pointer '{stands.get(p, p)}' may point to {what}", "; declare it restrict or pass --assume-no-alias"

        for s in sorted(exposed & set(by_name)):
            for p in loose + [q for q in sorted(aiming) if s in aiming[q] and q not in loose]:
                what, fix = who(p, s)
                for x in by_name[s]:
                    for y in by_name[p]:
                        if x.kind == "write" or y.kind == "write":
                            ctx.block(common_lids(x, y), DepReason("alias", what + fix, source=y.loc, sink=x.loc,
                                                                   array=p))
        for s in sorted(exposed & set(nest.params)):
            for p in loose + [q for q in sorted(aiming) if s in aiming[q] and q not in loose]:
                what, fix = who(p, s)
                for y in by_name[p]:
                    if y.kind == "write":
                        via = "may overwrite" if fix else "writes"
                        ctx.block(list(y.site.stmt.loop_ids), DepReason(
                            "alias", f"{y.describe()} {via} '{stands.get(s, s)}', used in bounds or subscripts: "
                                     f"{what}{fix}", source=y.loc, array=p))
    if nest.stands_for:
        notes.append("struct fields as variables of their own: " + ", ".join(
            f"{name} is {expr}" for name, expr in nest.stands_for))
    shown = [p for p in pointers if any(distinct_objects(infos[p], infos[q]) for q in names if q != p)]
    if shown:
        notes.append("distinct objects, as the whole file shows: " + "; ".join(
            f"{p} is {infos[p].target_source}" for p in shown))
    if pointers:
        assumed = [p for p in pointers if assumed_distinct(infos[p], assume_no_alias)]
        if assumed:
            notes.append(f"--assume-no-alias given: {', '.join(assumed)} assumed not to overlap any other array "
                         "or variable")
        shown_by_file = [p for p in pointers if p not in assumed and infos[p].target is not None]
        if assume_no_alias and shown_by_file:
            notes.append(f"--assume-no-alias not used for {', '.join(shown_by_file)}: the whole file shows what "
                         f"{'they point' if len(shown_by_file) > 1 else 'it points'} to")
        others = [p for p in pointers if p not in assumed and p not in shown_by_file]
        if assume_no_alias and others:
            notes.append(f"--assume-no-alias does not cover {', '.join(others)}: local, global and reassigned "
                         "pointers point where the code says")
        elif all(infos[p].restrict for p in pointers):
            kinds: dict[str, list[str]] = {}
            for p in pointers:
                kinds.setdefault(_kind_of(infos[p]), []).append(p)
            named = " and ".join(f"{k}s {', '.join(ps)}" if len(ps) > 1 else f"{k} {ps[0]}" for k, ps in kinds.items())
            notes.append(f"assumed {named} {'do' if len(pointers) > 1 else 'does'} not alias (declared restrict)")

    verdicts = combine(ctx, found, refs, notes)
    notes.extend(openmp.pragma_notes(nest, DependenceInfo(verdicts, ())))
    deps = tuple(dict.fromkeys(d for d, _, _ in found))
    return DependenceInfo(verdicts, deps, tuple(dict.fromkeys(notes)))
