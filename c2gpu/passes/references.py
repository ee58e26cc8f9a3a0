"""The references of a nest and the dependence test of one pair of them (the method: c2gpu/passes/dependence.py).

The model the dependence pass shares for a nest (`_Site`, `_Ref`, `_Ctx`), the access map of a reference, the
exact (isl) test of one pair of references (`check_pair`, giving `Dependence`s), the collection of a nest's
references, and the cheaper tests that keep pairs away from isl (`_apart`, `_buckets`, `_same_iteration_only`).
"""
from __future__ import annotations

import re
from dataclasses import field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Iterable

import islpy as isl

from c2gpu.ir import Access, Guard, Loc, Loop, Nest, Statement, line_of
from c2gpu.analysis.isl_sets import Con, Domain, Encoder, Unencodable, con, parse_set, sub
from c2gpu.symbolic import Poly

from .scalars import guard_depth
from c2gpu.records import dataclass

if TYPE_CHECKING:    # for annotations only: c2gpu.passes.dependence imports this module
    from .dependence import DepReason


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Dependence:
    """A dependence between two references (array accesses, or scalar reads/writes)."""
    array: str                      # array or scalar name
    kind: str                       # "flow" (write -> read), "anti" (read -> write), "output" (write -> write)
    source: Access | None           # None for scalars
    sink: Access | None
    source_sid: int
    sink_sid: int
    source_loc: Loc
    sink_loc: Loc
    source_text: str                # "out[i]" or, for scalars, the statement/condition
    sink_text: str
    loop: int | None                # lid of the carrying loop; None = loop-independent
    distance: tuple[int, ...] | None  # sink - source over the common loops, outermost first, when constant
    directions: tuple[str, ...]     # per common loop, outermost first: "<", "=", ">", "<=", ">=", "!=", "*"
    scalar: bool = False
    exact: bool = True              # False: found only in an over-approximation (see `why`)
    why: str = ""
    deltas: Any = field(default=None, compare=False, repr=False, hash=False)   # isl Set: every sink - source
    #                                 over the common loops, in iterations (parameters projected out), for the
    #                                 reorderings that need more than a distance (c2gpu/transform/wavefront.py)

    @property
    def direction(self) -> str:
        """The directions as messages print them: "<" for one common loop, "(<, =)" for more."""
        return self.directions[0] if len(self.directions) == 1 else "(" + ", ".join(self.directions) + ")"



# --------------------------------------------------------------------------- internal model

_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(eq=False)
class _Site:
    """Where references happen: a statement, or the condition of an `if` (its scalar reads)."""
    order: float                    # textual order; statements: sid, conditions: just before their body
    stmt: Statement                 # the statement (for a condition: one statement it guards)
    chain: tuple[Loop, ...]         # enclosing loops, outermost first
    guards: tuple[Guard, ...]       # guards that hold at this site (besides those of the chain loops)
    text: str
    loc: Loc
    guard: Guard | None = None      # for condition sites: the guard whose condition is read


@dataclass(eq=False)
class _Ref:
    """A read or write of an array element or a scalar at a site, with the subscripts the dependence tests
    compare."""
    name: str
    kind: str                       # "read" or "write"
    site: _Site
    cell: tuple[Poly, ...] | None   # subscripts compared; () for scalars; None = cannot be analysed
    why: str                        # why cell is None
    access: Access | None
    text: str
    loc: Loc
    consts: tuple | None = None     # per subscript, its value when constant (_constants)
    home: str = ""                  # the nest's file: a line of another one is named with its file (line_of)

    def describe(self) -> str:
        if self.access is not None:
            return f"{self.access.text} ({line_of(self.loc, self.home)})"
        return f"'{self.text}' ({line_of(self.loc, self.home)})"


class _Unanalysable(Unencodable):
    pass


class _Ctx:
    """What the functions below share for one nest."""

    def __init__(self, nest: Nest):
        self.nest = nest
        self.home = nest.loc.file           # lines of other files (inlined code) are named with theirs
        self.loops = {lp.lid: lp for lp in nest.loops()}
        self.enc = Encoder(nest)
        self.parent: dict[int, int | None] = {}     # lid -> lid of the enclosing loop
        for lp in nest.loops():
            for node in lp.body:
                if isinstance(node, Loop):
                    self.parent[node.lid] = lp.lid
        self.parent.setdefault(nest.root.lid, None)
        self.unknown: dict[int, list[DepReason]] = {lid: [] for lid in self.loops}
        self._unknown_seen: dict[int, set[DepReason]] = {lid: set() for lid in self.loops}  # fast `in` for block()
        # scalars declared inside the nest -> the lids of the loops around their declaration
        self.declared_in = {sc.name: set(sc.declared_in) for sc in nest.scalars if sc.declared_in is not None}
        self.control_inexact = ""                   # set when a control-flow flag makes every dependence a "may"
        self.conflated: dict[str, str] = {}         # names standing for several variables -> why
        self.scattered: dict[int, dict[str, DepReason]] = {lid: {} for lid in self.loops}   # lid -> scatter
        #                                             target -> why: atomic updates in any order (Statement.scatter)
        self._domains: dict[tuple[int, str], tuple[_Site, Domain]] = {}   # (id(site), prefix) -> (site, its domain)

    def name(self, lp: Loop) -> str:
        return lp.source_var

    def domain(self, site: "_Site", prefix: str):
        """The iteration domain of `site` with dimensions named `prefix`0, 1, ...: built once per site and
        prefix, as every pair of references of the nest reads two (PolyBench: 3,522 built for 1,761 pairs)."""
        key = (id(site), prefix)
        hit = self._domains.get(key)
        if hit is None:
            dom = self.enc.domain(site.chain, site.guards, prefix, self.name)
            if site.stmt.kind == "loop" and dom.exact:
                # a loop run whole may run zero times: what it touches is touched in some runs, not in all
                dom.exact, dom.why = False, f"the {site.stmt.text} may run any number of times"
            hit = self._domains[key] = (site, dom)
        return hit[1]

    def ancestors(self, lid: int) -> list[int]:
        out = [lid]
        while self.parent.get(out[-1]) is not None:
            out.append(self.parent[out[-1]])
        return out

    def block(self, lids: Iterable[int], reason: DepReason) -> None:
        for lid in lids:
            seen = self._unknown_seen.setdefault(lid, set())
            if reason not in seen:  # a set: csmith-sized nests block loops tens of thousands of times
                seen.add(reason)
                self.unknown.setdefault(lid, []).append(reason)


# --------------------------------------------------------------------------- 2. the access map

def access_map(ref: _Ref, dom: Domain, ctx: _Ctx) -> list[dict[str, Fraction]]:
    """The cell `ref` touches, one affine form per dimension over the domain's dimensions."""
    if ref.cell is None:
        raise _Unanalysable(ref.why)
    out = []
    for p in ref.cell:
        f = ctx.enc.lin(p, dom.names)
        if f is None:
            raise _Unanalysable(f"subscript '{p.to_c()}' of {ref.text} cannot be analysed")
        out.append(f)
    return out


# --------------------------------------------------------------------------- 3. one pair

def _common(a: _Site, b: _Site) -> int:
    n = 0
    while n < len(a.chain) and n < len(b.chain) and a.chain[n].lid == b.chain[n].lid:
        n += 1
    return n


def _deltas(rel: isl.Map) -> isl.Set:
    """sink - source over the common loops, for some value of the parameters."""
    deltas = rel.deltas()
    return deltas.project_out(isl.dim_type.param, 0, deltas.dim(isl.dim_type.param))


def _direction(deltas: isl.Set, steps: list[int | None]) -> tuple[tuple[int, ...] | None, tuple[str, ...]]:
    """Distance vector (when the deltas set is one constant vector) and directions, in iterations."""
    n = deltas.dim(isl.dim_type.set)
    symbols = []
    for k in range(n):
        one = deltas.project_out(isl.dim_type.set, k + 1, n - k - 1).project_out(isl.dim_type.set, 0, k)
        signs = set()
        for sign, text in ((1, "{ [x] : x > 0 }"), (0, "{ [x] : x = 0 }"), (-1, "{ [x] : x < 0 }")):
            if not one.intersect(parse_set(text)).is_empty():
                signs.add(sign * (1 if (steps[k] or 0) >= 0 else -1))
        if steps[k] is None:
            signs = {1, 0, -1}
        symbols.append({frozenset({1}): "<", frozenset({0}): "=", frozenset({-1}): ">",
                        frozenset({1, 0}): "<=", frozenset({-1, 0}): ">=", frozenset({1, -1}): "!="}.get(
                            frozenset(signs), "*"))
    distance = None
    if deltas.is_singleton() and all(s is not None for s in steps):
        point = deltas.sample_point()
        values = [point.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(n)]
        if all(v % s == 0 for v, s in zip(values, steps)):
            distance = tuple(int(v // s) for v, s in zip(values, steps))
    return distance, tuple(symbols)


def _kind(src: _Ref, snk: _Ref) -> str:
    if src.kind == "write":
        return "flow" if snk.kind == "read" else "output"
    return "anti"


def _orders(src: _Site, snk: _Site, sd: Domain, td: Domain, common: int, first: int = 0) -> list[tuple[int | None, list[Con]]]:
    """The ways an instance of `src` (domain `sd`) runs before one of `snk` (`td`) in the `common` loops they share:
    for each of them from `first` on whose step is known (else no order is known there: that loop is unknown
    anyway), the same iterations above it and a later one in it (its lid); and, when `src` comes first in the
    text, the same iterations in all of them (None)."""
    equal = [con(sub({sd.dims[k]: Fraction(1)}, {td.dims[k]: Fraction(1)}), "=") for k in range(common)]
    out: list[tuple[int | None, list[Con]]] = []
    for d in range(first, common):
        if sd.steps[d] is None:
            continue
        sign = 1 if sd.steps[d] > 0 else -1
        later = con({td.dims[d]: Fraction(sign), sd.dims[d]: Fraction(-sign), "": Fraction(-1)}, ">=")
        out.append((src.chain[d].lid, equal[:d] + [later]))
    if src.order < snk.order:
        out.append((None, equal))
    return out


def check_pair(src: _Ref, snk: _Ref, ctx: _Ctx) -> list[Dependence]:
    """Dependences from `src` to `snk`: one per carrying level (and one loop-independent), each proven non-empty."""
    common = _common(src.site, snk.site)
    sd, td = ctx.domain(src.site, "s"), ctx.domain(snk.site, "t")
    s_cell, t_cell = access_map(src, sd, ctx), access_map(snk, td, ctx)
    if len(s_cell) != len(t_cell):
        raise _Unanalysable(f"{src.text} and {snk.text} use different numbers of subscripts")
    base = sd.cons + td.cons + [con(sub(a, b), "=") for a, b in zip(s_cell, t_cell)]
    steps = sd.steps[:common]
    conflated = ctx.conflated.get(src.name, "")
    exact = sd.exact and td.exact and not ctx.control_inexact and not conflated
    why = sd.why or td.why or ctx.control_inexact or conflated
    out = []
    for lid, order in _orders(src.site, snk.site, sd, td, common):
        rel = ctx.enc.relation(sd, td, common, base + order)
        if rel.is_empty():
            continue
        deltas = _deltas(rel)
        distance, directions = _direction(deltas, steps)
        out.append(Dependence(
            array=src.name, kind=_kind(src, snk), source=src.access, sink=snk.access,
            source_sid=src.site.stmt.sid, sink_sid=snk.site.stmt.sid, source_loc=src.loc, sink_loc=snk.loc,
            source_text=src.text, sink_text=snk.text, loop=lid, distance=distance, directions=directions,
            scalar=src.access is None, exact=exact, why="" if exact else why, deltas=deltas))
    return out


# --------------------------------------------------------------------------- collecting references

def _guard_names(g: Guard) -> set[str]:
    return set(g.reads) if g.reads else set(_IDENT.findall(g.text))


def _array_cells(nest: Nest) -> tuple[dict[str, str], list[str]]:
    """For each array: "lin" (compare the delinearized 2-D form) or "raw".

    The 2-D form of a[i*W + j] is only comparable with another access's 2-D
    form when both use the same row width W (the frontend proved 0 <= j < W),
    so we use it only when every access to the array has one, with one W.
    """
    modes, notes = {}, []
    by_array: dict[str, list[Access]] = {}
    for a in nest.accesses():
        by_array.setdefault(a.array, []).append(a)
    for name, accs in by_array.items():
        widths = set()
        for a in accs:
            w = _row_width(a)
            widths.add(w)
        if None not in widths and len(widths) == 1:
            modes[name] = "lin"
            w = next(iter(widths))
            if not all(p is not None and p.is_affine() for a in accs for p in a.subscripts):
                form = "2-D form" if len(accs[0].linearized) == 2 else "form with the row split out"
                notes.append(f"{name}: subscripts compared in their {form} {accs[0].text} -> "
                             f"[{']['.join(p.to_c() for p in accs[0].linearized)}] (row width {w.to_c()})")
        else:
            modes[name] = "raw"
    return modes, notes


def _row_width(a: Access) -> Poly | None:
    """W with first subscript == q*W + r for the access's delinearized form (q, r, the other subscripts), or
    None."""
    if a.linearized is None or len(a.linearized) != len(a.subscripts) + 1 or a.subscripts[0] is None:
        return None
    q, r = a.linearized[:2]
    rest = a.subscripts[0] - r
    candidates = [Poly.var(v) for v in sorted(rest.variables)]
    for mono, c in q.terms:
        d = rest.as_dict().get(mono)
        if d is not None and c != 0:
            candidates.append(Poly.const(d / c))
    for w in candidates:
        if q * w == rest:
            return w
    return None


def _apart(x: _Ref, y: _Ref) -> bool:
    """Whether two references to one array never touch the same element, by a test cheaper than isl: in some
    dimension both subscripts are different constants (the fixed rows of a 5x5 block in NPB BT's inlined
    binvcrhs: lhs[i][j][k][BB][0][1], lhs[i][j][k][CC][2][3]).  Such pairs are not compared, nor counted
    against MAX_PAIRS."""
    if x.cell is None or y.cell is None or len(x.cell) != len(y.cell):
        return False
    return any(a != b for a, b in zip(_constants(x), _constants(y)) if a is not None and b is not None)


def _buckets(refs: list[_Ref]) -> list[list[_Ref]]:
    """The references to one variable in groups such that two references in different groups are _apart: by
    the values of the subscripts that are constants in every reference (one group when there are none, or a
    reference cannot be analysed).  The pairs to compare are then those within each group."""
    if any(r.cell is None for r in refs) or len({len(r.cell) for r in refs}) != 1 or not refs[0].cell:
        return [refs]
    fixed = [k for k in range(len(refs[0].cell)) if all(_constants(r)[k] is not None for r in refs)]
    if not fixed:
        return [refs]
    groups: dict[tuple, list[_Ref]] = {}
    for r in refs:
        groups.setdefault(tuple(_constants(r)[k] for k in fixed), []).append(r)
    return list(groups.values())


def _constants(r: _Ref) -> tuple:
    """Per subscript of the reference, its value when it is a constant (else None); kept on the reference."""
    if r.consts is None:
        r.consts = tuple(p.const_value() if p is not None and p.is_const() else None for p in r.cell)
    return r.consts


def _same_iteration_only(src: _Ref, snk: _Ref, ctx: "_Ctx") -> bool:
    """Whether two references can touch one element only in the same iteration of every loop around both: a
    scalar declared inside all of those loops (each iteration has its own), or the same subscripts with each
    loop's variable alone (times a nonzero constant, plus one) in one of them.  Then no loop carries a dependence
    between them, and isl need not be asked (inlined straight-line code touches the same cells of a block, and
    its own locals, over and over)."""
    common = src.site.chain[:_common(src.site, snk.site)]
    if src.access is None and snk.access is None:
        inside = ctx.declared_in.get(src.name)
        return inside is not None and all(lp.lid in inside for lp in common)
    if src.cell is None or src.cell != snk.cell:
        return False
    for lp in common:
        if not any(p is not None and p.is_affine() and p.variables == {lp.var} and p.coeff(lp.var) != 0
                   for p in src.cell):
            return False
    return True


_ZEROS: dict[int, isl.Set] = {}     # common loops -> the distance set of a loop-independent dependence (isl sets are
#                                     immutable: one object serves every dependence)


def _in_iteration(src: _Ref, snk: _Ref, ctx: "_Ctx") -> list[Dependence]:
    """The dependence from `src` to `snk` when _same_iteration_only holds: loop-independent, when `src` comes
    first, and recorded as possible (not checked with isl: a condition may keep the two apart)."""
    if not src.site.order < snk.site.order:
        return []
    common = _common(src.site, snk.site)
    deltas = _ZEROS.get(common)
    if deltas is None:
        deltas = _ZEROS[common] = isl.Set("{ [" + ", ".join(["0"] * common) + "] }")
    return [Dependence(
        array=src.name, kind=_kind(src, snk), source=src.access, sink=snk.access, source_sid=src.site.stmt.sid,
        sink_sid=snk.site.stmt.sid, source_loc=src.loc, sink_loc=snk.loc, source_text=src.text, sink_text=snk.text,
        loop=None, distance=(0,) * common, directions=("=",) * common,
        scalar=src.access is None, exact=False, why="the same element in the same iteration, not checked further",
        deltas=deltas)]


def _cell(a: Access, mode: str) -> tuple[tuple[Poly, ...] | None, str]:
    subs = a.linearized if mode == "lin" else a.subscripts
    if not a.affine and mode != "lin":
        return None, a.reason or "subscript is not affine"
    if subs is None or any(p is None or not p.is_affine() for p in subs):
        return None, a.reason or f"subscript of {a.text} is not affine"
    return tuple(subs), ""


def _collect(ctx: _Ctx, scalar_names: set[str]) -> tuple[list[_Ref], list[str]]:
    nest = ctx.nest
    modes, notes = _array_cells(nest)
    refs: list[_Ref] = []
    statements = nest.statements()
    kept = {st.sid for st in statements}          # conditions kept as statements have their own references
    cond_sites: dict[tuple, _Site] = {}

    for stmt in statements:
        chain = tuple(ctx.loops[lid] for lid in stmt.loop_ids)
        site = _Site(float(stmt.sid), stmt, chain, stmt.guards, stmt.text, stmt.loc)
        same_cell: set[tuple] = set()
        for a in stmt.accesses:
            cell, why = _cell(a, modes.get(a.array, "raw"))
            if cell is not None:
                # the statement touching the same cell again (a[i] + a[i] + ..., thousands of times in generated
                # code) adds no dependence: one reference per cell keeps the pairs linear in distinct cells
                if (a.array, a.kind, cell) in same_cell:
                    continue
                same_cell.add((a.array, a.kind, cell))
            refs.append(_Ref(a.array, a.kind, site, cell, why, a, a.text, a.loc, home=ctx.home))
        for kind, names in (("read", stmt.scalar_reads), ("write", stmt.scalar_writes)):
            for s in names:
                if s in scalar_names:
                    refs.append(_Ref(s, kind, site, (), "", None, stmt.text, stmt.loc, home=ctx.home))
        # Scalar reads in `if` conditions the IR does not keep as statements (it keeps those
        # that read an array, write or call, or read a scalar with a non-affine test; this covers
        # the rest, and IR built by other means).  A condition is read where its `if` is, under
        # the guards around that `if` (those before it in a guard list, outermost first).
        lists = [stmt.guards] + [lp.guards for lp in chain]
        for guards in lists:
            for k, g in enumerate(guards):
                if g.stmt_sid in kept:
                    continue
                names = sorted(_guard_names(g) & scalar_names)
                if not names:
                    continue
                where = chain[:guard_depth(g, chain)]
                key = (g.site, g.negated, tuple(lp.lid for lp in where))     # (each copy of an inlined `if`)
                if key not in cond_sites:
                    cond_sites[key] = _Site(stmt.sid - 0.5, stmt, where, guards[:k], f"if ({g.text})", g.loc, g)
                    for s in names:
                        refs.append(_Ref(s, "read", cond_sites[key], (), "", None, f"if ({g.text})", g.loc,
                                            home=ctx.home))
    return refs, notes
