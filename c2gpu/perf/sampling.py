"""Vectorised evaluation of the IR's expressions over sampled warps (numpy).

The static analyses need, for a block shape, the values the loop variables
take in the 32 lanes of real warps: which threads form a warp (x fastest, then
y, then z: CUDA's linear thread id), which lanes are inside the iteration
space, the byte addresses of an access, whether a guard holds.  Rather than
reasoning about every shape symbolically, a few representative blocks are
instantiated and every expression is evaluated on all their lanes at once.

Arrays have shape (blocks, warps, window, lanes): `window` indexes consecutive
iterations of one in-thread loop (the reuse window of the L1 analysis).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..ir import Loop
from ..symbolic import Poly, Sym

Arr = np.ndarray


def poly_np(p: Poly, env: Mapping[str, object]):
    """Evaluate a Poly with numpy arrays (or ints) as variable values; integer arithmetic when the
    coefficients are integers.  Raises KeyError for a variable without a value."""
    total = 0
    for mono, c in p.terms:
        coef = int(c) if c.denominator == 1 else float(c)
        t = coef
        for v, k in mono:
            x = env[v]
            t = t * (x if k == 1 else x ** k)
        total = total + t
    return total


def sym_np(s: Sym, env: Mapping[str, object]):
    """floor(num / den) of a trip count, elementwise."""
    num = poly_np(s.num, env)
    if s.den == 1:
        if isinstance(num, np.ndarray) and num.dtype.kind == "f":
            return np.floor(num).astype(np.int64)
        return num if not isinstance(num, float) else int(np.floor(num))
    return np.floor_divide(num, s.den) if not isinstance(num, float) else int(num // s.den)


def loop_span_np(lp: Loop, env: Mapping[str, object]):
    """(start, trip, step) of a loop at the values of `env`, elementwise: a normalized loop runs 0 .. trip-1; a
    loop left as written because a bound is a min or max of several values (`i < min(ii + 32, n)`) runs from
    the tightest start by its step, as many times as fit before the tightest end."""
    if lp.trip_count is not None:
        return 0, sym_np(lp.trip_count, env), 1
    up = lp.step > 0
    lows = [poly_np(p, env) for p in lp.lowers]
    ends = [poly_np(p, env) for p in lp.uppers]
    start = _fold(np.maximum if up else np.minimum, lows)
    end = _fold(np.minimum if up else np.maximum, ends)
    span = end - start if up else start - end
    return start, np.maximum(0, -(-span // abs(lp.step))), lp.step


def _fold(fn, values):
    out = values[0]
    for v in values[1:]:
        out = fn(out, v)
    return out


def warp_lanes(block: tuple[int, int, int], warp_size: int = 32) -> tuple[Arr, Arr, Arr, Arr]:
    """(tx, ty, tz, valid) of every lane of every warp of a block: arrays of shape (warps, lanes)."""
    bx, by, bz = block
    n = bx * by * bz
    warps = -(-n // warp_size)
    t = np.arange(warps * warp_size, dtype=np.int64).reshape(warps, warp_size)
    valid = t < n
    tx = t % bx
    ty = (t // bx) % by
    tz = t // (bx * by)
    return tx, ty, tz, valid


def sample_blocks(grid: tuple[int, int, int], limit: int = 4) -> list[tuple[int, int, int]]:
    """Representative blocks: interior positions (boundary guards and partial tiles are the exception,
    not the rule), a few per dimension, at most `limit`.  Deterministic."""
    picks = []
    for g in grid:
        if g <= 1:
            picks.append([0])
        elif g == 2:
            picks.append([0, 1])
        else:
            a, b = int(g * 0.37), int(g * 0.61)
            picks.append(sorted({min(max(a, 1), g - 2), min(max(b, 1), g - 2)}))
    out = [(x, y, z) for z in picks[2] for y in picks[1] for x in picks[0]]
    if len(out) > limit:
        step = len(out) / limit
        out = [out[int(k * step)] for k in range(limit)]
    return out


def origin_values(loops: list[Loop], env: dict) -> dict:
    """C variable values of normalized loops (var = lower + step * normalized var), added to env."""
    out = dict(env)
    for lp in loops:
        if lp.origin is not None and lp.origin.lower is not None:
            try:
                out[lp.origin.var] = poly_np(lp.origin.lower, out) + lp.origin.step * out[lp.var]
            except KeyError:
                pass
        elif lp.origin is None:
            out.setdefault(lp.var, out.get(lp.var))
    return out


INACTIVE = np.iinfo(np.int64).min      # an inactive lane's value in sorted rows: the smallest int64 sorts first


def sorted_rows(values: Arr, active: Arr) -> Arr:
    """`values` sorted along the last axis, inactive entries replaced by INACTIVE (so they come first)."""
    out = np.where(active, values, INACTIVE)
    out.sort(axis=-1, kind="stable")        # in place: np.sort would copy the array first
    return out


def run_starts(s: Arr) -> Arr:
    """Mask of the entries of sorted rows `s` (sorted_rows) that start a run of equal active values.  An
    inactive entry never does: its left neighbour is inactive too, or it is the first of its row."""
    out = np.empty(s.shape, dtype=bool)
    out[..., 0] = s[..., 0] != INACTIVE
    np.not_equal(s[..., 1:], s[..., :-1], out=out[..., 1:])
    return out


def floor_div(a: Arr, d: int) -> Arr:
    """a // d elementwise for a positive int d: a shift when d is a power of two (sector and line sizes are),
    which is exact for negative values too (an arithmetic shift rounds down) and costs far less than numpy's
    64-bit division (a seventh of the block search's instructions on matmul.c)."""
    return a >> (d.bit_length() - 1) if d & (d - 1) == 0 else a // d


def distinct_in_rows(s: Arr, coarse: int = 1, weights: Arr | None = None) -> int:
    """The number of distinct active values // coarse in each of the sorted rows `s` (sorted_rows), summed
    over the rows (floor division keeps the order, so runs of equal quotients are still runs); with `weights`,
    each block's rows (the first axis) count weights[block] times."""
    if weights is not None:
        return sum(int(w) * distinct_in_rows(s[b], coarse) for b, w in enumerate(weights))
    c = s if coarse == 1 else floor_div(s, coarse)
    return int(np.count_nonzero(s[..., 0] != INACTIVE)) + int(np.count_nonzero(c[..., 1:] != c[..., :-1]))
