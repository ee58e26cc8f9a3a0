"""Symbolic instance counts: how many times a statement or loop body executes.

Works on normalized loops (lower bound 0, unit step), summing inner trip counts
over outer loop variables with Faulhaber's formulas, so a triangular nest
gets N*(N+1)/2 rather than N*N.  Guards are not counted (an upper bound),
and a floor division in a trip count makes the count numeric-only.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping

from .ir import Loop, Nest, Statement
from .symbolic import Poly, sum_over


def enclosing_loops(nest: Nest, stmt: Statement) -> list[Loop]:
    """Loops around `stmt`, outermost first (matching by tree position, not by name)."""
    def walk(loop: Loop, path: list[Loop]):
        path = path + [loop]
        for node in loop.body:
            if isinstance(node, Loop):
                if node.header_stmt is not None and node.header_stmt.sid == stmt.sid:
                    return path
                found = walk(node, path)
                if found is not None:
                    return found
            elif node.sid == stmt.sid:
                return path
        return None
    return walk(nest.root, []) or []


def instances(loops: list[Loop]) -> Poly | None:
    """Number of iterations of the innermost of `loops` (outermost first), symbolically."""
    count = Poly.const(1)
    for loop in reversed(loops):
        if loop.trip_count is None or not loop.normalized:
            return None
        trip = loop.trip_count.as_poly()
        if trip is None:
            return None
        total = sum_over(count, loop.var, trip)
        if total is None:
            return None
        count = total
    return count


def evaluate_instances(loops: list[Loop], env: Mapping[str, int]) -> int | None:
    """Numeric instance count with parameters bound; empty loops (trip <= 0) count 0.

    Enumerates the outer loops whose variables inner trip counts depend on, which
    is exact, while that stays under a budget; beyond it, the closed form is used
    (exact unless some inner loop is empty for part of the range).
    """
    if any(lp.trip_count is None for lp in loops):
        return None
    budget = [100_000]

    class TooMany(Exception):
        pass

    def rec(i: int, bound: dict[str, int]) -> int:
        if i == len(loops):
            return 1
        lp = loops[i]
        trip = max(0, lp.trip_count.evaluate({**env, **bound}))
        if not any(lp.var in inner.trip_count.variables for inner in loops[i + 1:]):
            return trip * rec(i + 1, bound) if trip else 0
        budget[0] -= trip
        if budget[0] < 0:
            raise TooMany
        return sum(rec(i + 1, {**bound, lp.var: v}) for v in range(trip))

    try:
        try:
            return rec(0, {})
        except TooMany:
            p = instances(loops)
            return None if p is None else max(0, int(p.evaluate(env)))
    except KeyError:
        return None
