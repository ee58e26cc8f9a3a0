"""Delinearization: a flat subscript (`a[i*W + j]` on a pointer, or the first subscript of an array of rows)
recovered as one subscript per dimension, when the inner part provably stays in [0, W).

Separate because it works on the polynomials of the subscripts and the ranges of the nest's loops, not on C
syntax; statement lowering calls it.
"""
from __future__ import annotations

from fractions import Fraction
from math import gcd

from ..symbolic import Poly
from .ctypes import CType
from .context import NestContext


def delinearize(polys: list[Poly | None], t: CType, ctx: NestContext) -> tuple[Poly, ...] | None:
    """a[i*W + j] on a pointer -> (i, j) when j provably stays in [0, W); the first subscript of an array of
    rows likewise, y[i*W + k][j] -> (i, k, j) (FT's fftz2: y[i*lj + lk + k][j] with k < lk and lj = 2*lk),
    each pair (i, k) one element as the flat subscript is.

    W may be a parameter (then the subscript has degree 2 and is not affine as written) or a constant.  We
    accept the common, provable shape: the inner part is one loop variable, whose loop runs within [0, W),
    plus a constant, or plus parameters when its loop's range moved by them provably stays in [0, W) (with the
    values the nest's parameters have at its entry: NestContext.entry_values).
    """
    if not polys or polys[0] is None:
        return None
    if len(polys) != 1 or t.dims or t.pointers != 1:
        # an array of rows: only a first subscript that is not affine, the others affine
        if polys[0].is_affine() or any(p is None or not p.is_affine() for p in polys[1:]):
            return None
    p = polys[0]
    loops = set(ctx.loop_vars)
    env = ctx.entry_values
    # where the access runs, every loop around it runs: lo <= var < hi, so hi - lo - 1 >= 0 (k < lk: lk >= 1);
    # only the loops around it (a sibling loop lowered before may not run where this access does)
    around = [ctx.loop_ranges.get(v) for v in ctx.loop_vars]
    runs = [(r[1] - r[0] - 1).substitute(env) for r in around if r is not None and None not in r]

    def within(col: Poly, lo: Poly, hi: Poly, width: Poly) -> bool:
        """col = var + c stays in [0, width) for var in [lo, hi)."""
        shift = col - Poly.var(var)
        return _nonneg((lo + shift).substitute(env), runs) and \
            _nonneg((width - hi - shift).substitute(env), runs)
    for var in ctx.loop_vars[::-1]:
        if p.coeff(var) != 1:
            continue
        rng = ctx.loop_ranges.get(var)
        if rng is None or rng[0] is None or rng[1] is None:
            continue
        lo, hi = rng
        rest = p - Poly.var(var)
        offset = rest.const_value()
        width = _common_factor(rest - offset, loops)
        if width is not None:
            if width.is_const():
                # a constant offset may fold a row step: 4096*i + 4095 + j is row i+1, column j-1
                w = int(width.const_value())
                c = int(offset) % w
                c = c - w if c > w // 2 else c
            else:
                c = int(offset)
            if lo.is_const() and within(Poly.var(var) + c, lo, hi, width):
                q = _divide(rest - c, width)
                if q is not None and q.is_affine():
                    return (q, Poly.var(var) + c, *polys[1:])
        # a column moved by parameters: the terms of `rest` without a loop variable
        moved = Poly._make({m: c for m, c in rest.terms if m and not {v for v, _ in m} & loops})
        width = _common_factor(rest - moved - offset, loops)
        if not moved.terms or width is None or width.is_const():
            continue
        col = Poly.var(var) + moved + offset
        if within(col, lo, hi, width):
            q = _divide(rest - moved - offset, width)
            if q is not None and q.is_affine():
                return (q, col, *polys[1:])
    return None


def _nonneg(e: Poly, facts: list[Poly]) -> bool:
    """Whether e >= 0: a constant that is, or a constant that is plus a nonnegative multiple of one of `facts`
    (polynomials known to be >= 0)."""
    if e.is_const():
        return e.const_value() >= 0
    for f in facts:
        for m, c in f.terms:
            if m:
                k = e.as_dict().get(m, Fraction(0)) / c
                rest = e - f.scale(k)
                if k >= 0 and rest.is_const() and rest.const_value() >= 0:
                    return True
                break
    return False


def unsplit_column(p: Poly | None, ctx: NestContext) -> str:
    """Why the flat subscript `p`, shaped as a row times a width plus a loop variable (`y*w + x`), was not
    split (delinearize): its column is not shown to stay in [0, width) ("" when `p` has no such shape)."""
    if p is None:
        return ""
    loops = set(ctx.loop_vars)
    for var in ctx.loop_vars[::-1]:
        if p.coeff(var) != 1:
            continue
        rest = p - Poly.var(var)
        width = _common_factor(rest - rest.const_value(), loops)
        if width is not None and not width.is_const():
            return f"read as rows of width {width.to_c()}, its column '{var}' is not shown to stay in [0, " \
                   f"{width.to_c()})"
    return ""


def _common_factor(p: Poly, loop_vars: set[str]) -> Poly | None:
    """The row width W with p = q*W: a single parameter all terms share, or the gcd of constant coefficients."""
    if not p.terms:
        return None
    shared: set[str] | None = None
    for m, _ in p.terms:
        names = {v for v, _ in m}
        shared = names if shared is None else shared & names
    params = sorted(v for v in (shared or set()) if v not in loop_vars)
    if len(params) == 1:
        return Poly.var(params[0])
    g = 0
    for _, c in p.terms:
        if c.denominator != 1:
            return None
        g = gcd(g, int(c))
    return Poly.const(g) if g > 1 else None


def _divide(p: Poly, w: Poly) -> Poly | None:
    if w.is_const():
        q = p.scale(Fraction(1) / w.const_value())
        return q if q.is_integral() else None
    (name,) = w.variables
    q, r = p.split_by(name)
    return q if not r.terms else None


def _leq(a: Poly, b: Poly) -> bool:
    d = b - a
    return d.is_const() and d.const_value() >= 0
