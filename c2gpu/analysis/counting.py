"""Symbolic instance counts: how many times a statement or loop body executes.

Works on normalized loops (lower bound 0, unit step), summing inner trip counts
over outer loop variables with Faulhaber's formulas, so a triangular nest
gets N*(N+1)/2 rather than N*N.  Guards are not counted (an upper bound),
and a floor division in a trip count makes the count numeric-only.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping

from ..ir import Loop, Nest, Statement
from ..pipeline import memo
from ..symbolic import Poly, sum_over


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


def _trip_function(trip, ints: bool):
    """`trip.evaluate` (a Sym: floor(num / den)) as a function of the bindings.  With integer coefficients and
    integer values only (`ints`: the sizes are ints; enumerated values always are), a compiled int expression
    gives the same exact value as the Fraction evaluation, ~20x faster: the enumeration below evaluates trip
    counts up to 100k times per count (PolyBench's covariance, correlation, syrk, ...)."""
    terms = trip.num.terms
    if not ints or any(c.denominator != 1 for _m, c in terms) or \
            not all(var.isidentifier() for m, _c in terms for var, _p in m):
        return trip.evaluate
    parts = ["*".join([f"({int(c)})"] + [f"e[{var!r}]**{int(p)}" if p != 1 else f"e[{var!r}]" for var, p in m])
             for m, c in terms]
    return eval(f"lambda e: ({' + '.join(parts) or '0'}) // {int(trip.den)}")   # noqa: S307 - built from ints and names


def _pieces_countable(lp: Loop) -> bool:
    """A loop left as written whose start and end are known pieces (a min or max of several values)."""
    return bool(lp.step) and bool(lp.lowers) and bool(lp.uppers) and (len(lp.lowers) == 1 or abs(lp.step) == 1)


def _bound_variables(lp: Loop) -> set[str]:
    if lp.trip_count is not None:
        return lp.trip_count.variables
    return {v for p in lp.lowers + lp.uppers for v in p.variables}


def _pieces_start_end(lp: Loop, env) -> tuple[int, int]:
    """Start and exclusive end of a loop with min/max bounds: counting up, the largest start and the smallest
    end; counting down, the smallest start and the largest end."""
    lows = [p.evaluate(env) for p in lp.lowers]
    ups = [p.evaluate(env) for p in lp.uppers]
    return (max(lows), min(ups)) if lp.step > 0 else (min(lows), max(ups))


def _pieces_trip(lp: Loop):
    step = lp.step

    def trip(env) -> int:
        start, end = _pieces_start_end(lp, env)
        span = end - start if step > 0 else start - end
        return max(0, -(-span // abs(step)))
    return trip


def _pieces_values(lp: Loop):
    def run(env, trip: int):
        start, _end = _pieces_start_end(lp, env)
        return range(start, start + trip * lp.step, lp.step)
    return run


def evaluate_instances(loops: list[Loop], env: Mapping[str, int]) -> int | None:
    """Numeric instance count with parameters bound; empty loops (trip <= 0) count 0.

    Kept per loops (their identity: Loops are frozen; the innermost one's table, pipeline.memo) and sizes: the
    CPU estimate and the kernel analyses of every candidate block and shared-memory trial ask for the same counts
    again (PolyBench: 700 requests, 177 distinct)."""
    if not loops:
        return _evaluate_instances(loops, env)
    outer = tuple(loops[:-1])
    try:
        key = (tuple(id(lp) for lp in outer), tuple(sorted(env.items())))
        table = memo(loops[-1], "instance counts")
        hit = table.get(key)
    except TypeError:          # an unhashable size value: no memo
        return _evaluate_instances(loops, env)
    if hit is None or not all(a is b for a, b in zip(hit[0], outer)):
        hit = table[key] = (outer, _evaluate_instances(loops, env))     # the outer loops, so their ids stay
    return hit[1]


def _evaluate_instances(loops: list[Loop], env: Mapping[str, int]) -> int | None:
    """Numeric instance count with parameters bound; empty loops (trip <= 0) count 0.

    Enumerates the outer loops whose variables inner trip counts depend on, which
    is exact, while that stays under a budget; beyond it, the closed form is used
    (exact unless some inner loop is empty for part of the range).
    """
    if any(lp.trip_count is None and not _pieces_countable(lp) for lp in loops):
        return None
    budget = [100_000]
    ints = all(type(v) is int for v in env.values())
    trips = [_trip_function(lp.trip_count, ints) if lp.trip_count is not None else _pieces_trip(lp) for lp in loops]
    # how loop i's variable runs from its count k = 0, 1, ...: normalized loops are their count, a loop left as
    # written because a bound is a min or max of several values (generated code: `c2 <= min(nj-1, nk-1)`) runs
    # from its start by its step
    values = [None if lp.trip_count is not None else _pieces_values(lp) for lp in loops]
    # whether an inner trip count reads loop i's variable (then loop i is enumerated)
    enumerate_ = [any(lp.var in _bound_variables(inner) for inner in loops[i + 1:]) for i, lp in enumerate(loops)]
    cur = dict(env)      # env with the enumerated loops' current values (restored on the way out)

    class TooMany(Exception):
        pass

    def rec(i: int) -> int:
        if i == len(loops):
            return 1
        trip = max(0, trips[i](cur))
        if not enumerate_[i]:
            return trip * rec(i + 1) if trip else 0
        budget[0] -= trip
        if budget[0] < 0:
            raise TooMany
        var = loops[i].var
        had, old = var in cur, cur.get(var)
        total = 0
        try:
            run = range(trip) if values[i] is None else values[i](cur, trip)
            if any(enumerate_[i + 1:]):
                for v in run:
                    cur[var] = v
                    total += rec(i + 1)
            else:
                # the deeper loops are not enumerated: rec(i + 1) is the product of their trips (0 from the
                # first empty one on, whose deeper trips are not evaluated), inlined
                inner = trips[i + 1:]
                for v in run:
                    cur[var] = v
                    prod = 1
                    for t in inner:
                        t = max(0, t(cur))
                        if not t:
                            prod = 0
                            break
                        prod *= t
                    total += prod
        finally:
            if had:
                cur[var] = old
            else:
                cur.pop(var, None)
        return total

    try:
        try:
            return rec(0)
        except TooMany:
            p = instances(loops)
            return None if p is None else max(0, int(p.evaluate(env)))
    except KeyError:
        return None
