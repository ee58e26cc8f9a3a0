"""Subscripts that leave their array dimension.

1. Out-of-bounds subscripts.  The dependence analysis equates two cells when
   their subscripts are equal in every dimension.  That is only true while each
   subscript stays inside its declared extent: `b[i][j-1]` at `j = 0` reads
   `b[i-1][m-1]`, a cell of another row (DataRaceBench DRB014, DRB037).  Leaving
   a dimension is undefined behaviour in C, so it is reported to the user as a
   finding (code `out-of-bounds-subscript`) and never modelled as in bounds:
   when the array is written in the nest, the loops enclosing the access cannot
   be proven parallel.

   Which subscripts are checked: every affine subscript of a full element
   access (one subscript per declared dimension) whose extent is declared,
   against [0, extent) (a non-affine extent: against 0 only).  Not checked:
   dimensions without an extent (pointers, the rows of an array of pointers:
   they may point into the middle of an array, `p = buf + 1; p[i - 1]` is
   fine), the outermost dimension of array parameters (the caller may pass an
   interior pointer), arrays declared inside the nest, partial accesses (`b[i]`
   used as a row).

   When a subscript "can" leave its dimension, over the statement's iteration
   domain (loop bounds and affine guards, with isl):
   - for every value of the symbolic parameters with which the statement runs
     (`b[i][j-1]` with `0 <= j < m`, `a[i+1]` with `i < n` and `int a[n]`), the
     nest has undefined behaviour whenever it runs: reported, and blocking;
   - for only some parameter values (PolyBench's `C[i][j]` with `j < nj` and
     `double C[1000][1100]` leaves the array only when nj > 1100), the program is
     defined exactly when the parameters keep it inside, which is what a C
     compiler assumes too, and the analysis is exact for those executions: not
     reported.  (Reporting these would refuse every PolyBench kernel.)
   A guard c2gpu cannot model is dropped from the domain; a finding that may be
   due to that says so in its message (and still blocks: the proof needs it).

(OpenMP directives are checked against the verdicts in c2gpu/analysis/openmp.py.)
"""
from __future__ import annotations

import re
from fractions import Fraction

import islpy as isl

from ..ir import Access, ArrayInfo, Flag, Loop, Nest, Statement
from .isl_sets import AnyOf, Domain, Encoder, con, sub, to_c
from ..symbolic import Poly
from ..records import dataclass

CODE = "out-of-bounds-subscript"


@dataclass(frozen=True)
class OutOfBounds:
    """A subscript that leaves its dimension whenever its statement runs."""
    access: Access
    dim: int                        # 0-based dimension
    loops: tuple[int, ...]          # lids of the loops enclosing the access
    written: bool                   # the array is written in the nest: the enclosing loops cannot be proven
    flag: Flag


def out_of_bounds(nest: Nest) -> list[OutOfBounds]:
    """Every checked subscript of the nest that leaves its dimension (see the module docstring)."""
    arrays = {a.name: a for a in nest.arrays}
    written = {a.array for a in nest.accesses() if a.kind == "write"}
    loops = {lp.lid: lp for lp in nest.loops()}
    enc = Encoder(nest)
    found: list[OutOfBounds] = []
    seen: set = set()
    # the verdict on a subscript depends on the statement's domain (its loops and guards), not on the statement:
    # generated and inlined code repeats a subscript in thousands of statements of one domain
    verdicts: dict[tuple, str] = {}
    for stmt in nest.statements():
        domain = None
        for acc in stmt.accesses:
            info = arrays.get(acc.array)
            checks = _checked_dims(acc, info)
            key = (stmt.sid, acc.array, acc.subscripts, acc.when)
            if not checks or key in seen:
                continue
            seen.add(key)
            if domain is None:
                domain = _Domain.build(enc, stmt, [loops[lid] for lid in stmt.loop_ids])
                if domain is None:
                    break               # bounds c2gpu cannot express: those loops are unknown anyway
            for k in checks:
                vkey = (stmt.loop_ids, stmt.guards, acc.subscripts[k], info.dims[k], acc.when)
                message = verdicts.get(vkey)
                if message is None:
                    message = verdicts[vkey] = domain.leaves(acc.subscripts[k], info.dims[k], acc.when)
                if message:
                    text = f"{acc.text} (line {acc.loc.line}): subscript {k + 1} {message}"
                    found.append(OutOfBounds(acc, k, stmt.loop_ids, acc.array in written, Flag(CODE, text, acc.loc)))
    return found


def blocking(nest: Nest) -> list[tuple[tuple[int, ...], Flag]]:
    """(loops that cannot be proven, the finding) for each out-of-bounds subscript of an array the nest writes."""
    return [(o.loops, o.flag) for o in out_of_bounds(nest) if o.written]


def findings(nest: Nest) -> list[Flag]:
    """The out-of-bounds subscripts of a nest as flags for the reports (undefined behaviour the user should fix)."""
    return [o.flag for o in out_of_bounds(nest)]


def _checked_dims(acc: Access, info: ArrayInfo | None) -> list[int]:
    if info is None or len(acc.subscripts) != len(info.dims):
        return []
    # a pointer (a parameter, a variable without a first extent, the rows of an array of pointers) may point
    # into the middle of an array: only dimensions with a declared extent are checked
    first = 1 if info.storage in ("param-array", "param-pointer") else 0
    return [k for k in range(first, len(info.dims)) if info.dims[k] is not None
            and acc.subscripts[k] is not None and acc.subscripts[k].is_affine()]


class _Domain:
    """A statement's iteration domain, in the terms of the nest's isl encoder (c2gpu.analysis.isl_sets.Encoder)."""

    def __init__(self, enc: Encoder, stmt: Statement, loops: list[Loop]):
        self.enc, self.stmt, self.loops, self._dom = enc, stmt, loops, None
        # constant ranges of the loop variables (lower, last value), where known: a quick answer before isl
        self.box: dict[str, tuple[Fraction, Fraction]] = {}
        for lp in loops:
            if lp.lower is not None and lp.upper is not None and lp.lower.is_const() and lp.upper.is_const():
                lo, up = lp.lower.const_value(), lp.upper.const_value()
                self.box[lp.var] = (lo, up - 1) if lp.step > 0 else (up + 1, lo)

    @staticmethod
    def build(enc: Encoder, stmt: Statement, loops: list[Loop]) -> "_Domain | None":
        """None when a loop's bounds are not affine (those loops are unknown anyway, and a larger domain
        would make findings up)."""
        if not all(lp.polyhedral for lp in loops):        # (a bound that is a min or max of pieces is)
            return None
        if len({lp.var for lp in loops}) != len(loops):
            return None                 # a variable reused by nested loops: the dependence pass refuses it
        return _Domain(enc, stmt, loops)

    @property
    def dom(self) -> Domain:
        """The exact domain, built only when the bounding box cannot answer."""
        if self._dom is None:
            self._dom = self.enc.domain(self.loops, self.stmt.guards, "x")
        return self._dom

    def inside_box(self, sub_: Poly, extent: Poly | None) -> bool:
        if not set(sub_.variables) <= set(self.box) or (extent is not None and not extent.is_const()):
            return False
        lo = hi = sub_.const_value() if sub_.is_const() else Fraction(0)
        if not sub_.is_const():
            lo = hi = Fraction(0)
            for mono, c in sub_.terms:
                if not mono:
                    lo, hi = lo + c, hi + c
                    continue
                ((v, _power),) = mono
                a, b = c * self.box[v][0], c * self.box[v][1]
                lo, hi = lo + min(a, b), hi + max(a, b)
        return lo >= 0 and (extent is None or hi < extent.const_value())

    def leaves(self, sub_: Poly, extent: Poly | None, when=()) -> str:
        """'can be -1, outside [0, 100)' when `sub_` leaves [0, extent) for every parameter value
        with which the statement runs (and the conditional expressions `when` let the access be evaluated:
        Access.when); '' otherwise."""
        if extent is not None and not extent.is_affine():
            extent = None
        if sub_.is_const() and 0 <= sub_.const_value() and (extent is None or (
                extent.is_const() and sub_.const_value() < extent.const_value())):
            return ""                   # a constant inside a constant extent (csmith: thousands of them)
        if self.inside_box(sub_, extent):
            return ""                   # inside over the loops' bounding box, so over the domain (guards only cut it)
        enc, dom = self.enc, self.dom
        f = enc.lin(sub_, dom.names)
        e = enc.lin(extent, dom.names) if extent is not None else None
        if f is None or (extent is not None and e is None):
            return ""
        low = con(sub({"": Fraction(-1)}, f), ">=")             # sub <= -1
        high = con(sub(f, e), ">=") if e is not None else None   # sub >= extent
        evaluated, left_out = self.conditions(when)
        try:
            bad = enc.points(dom, [f"(({low}) or ({high}))" if high else low] + evaluated)
            if bad.is_empty():
                return ""               # the common case: one isl set
            if not enc.points(dom, evaluated).params().is_subset(bad.params()):
                return ""               # in bounds for some parameter values: see the module docstring
            below = enc.points(dom, [low] + evaluated)
            side = below if not below.is_empty() else enc.points(dom, [high] + evaluated)
            value = isl.Map(f"{enc.space()}{{ [{', '.join(dom.dims)}] -> [v] : {con(sub({'v': Fraction(1)}, f), '=')} }}")
            values = side.apply(value)
            pw = values.dim_min(0) if side is below else values.dim_max(0)
            shown = to_c(pw, list(enc.params.values()))
        except isl.Error as err:        # never assume in bounds what could not be checked
            return f"could not be checked against [0, {extent.to_c() if extent is not None else '?'}) (isl: {err})"
        names = {v: k for k, v in enc.params.items()}
        shown = re.sub(r"\bp\d+\b", lambda m: names.get(m.group(0), m.group(0)), shown)
        out = f"can be {shown}, outside [0, {extent.to_c()})" if extent is not None else f"can be {shown}, below 0"
        if not dom.exact or left_out:
            out += f" (unless what c2gpu left out excludes it: {dom.why if not dom.exact else left_out})"
        return out

    def conditions(self, when) -> tuple[list[str], str]:
        """isl constraints for the conditions of Access.when (a condition that does not hold: the negation of a
        conjunction, one disjunction), and why one was left out ('' when none was)."""
        out, left_out = [], ""
        for g, holds in when:
            cons = self.enc.guard(g, self.dom.names)
            if cons is not None and not holds and any(isinstance(c, AnyOf) for c in cons):
                cons = None         # (the negation of a disjunction is not written here: left out, a larger domain)
            if cons is None:
                left_out = left_out or f"the condition '{g.text}' (line {g.loc.line}) is not affine, so it was left out"
            elif holds:
                out.extend(str(c) for c in cons)
            else:       # not (f >= 0) is -f - 1 >= 0; not (f = 0) is f >= 1 or -f >= 1
                pieces = []
                for c in cons:
                    form = {v: Fraction(n) for v, n in c.terms}
                    if c.op == "=":
                        pieces += [str(con(sub(form, {"": Fraction(1)}), ">=")),
                                   str(con(sub(sub({"": Fraction(-1)}, form), {}), ">="))]
                    else:
                        pieces.append(str(con(sub({"": Fraction(-1)}, form), ">=")))
                out.append("(" + " or ".join(f"({x})" for x in pieces) + ")")
        return out, left_out
