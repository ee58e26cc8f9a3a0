"""Loop normalization: every affine loop runs from 0 to its trip count with step 1.

Resios (seed 004, section 5.2.1) maps normalized loops to threads: thread index
= iteration number.  A loop `for (i = L; i < U; i += s)` becomes a loop over
`i_n` in [0, T) with T = ceil((U - L)/s), and `i = L + s*i_n`; a decrementing
loop `for (i = U; i >= L; i--)` becomes `i = U - i_n`.  Subscripts, bounds of
inner loops and guards are rewritten in terms of the new variable, and
`Loop.origin` keeps the original form so code generation can recompute `i`.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir import Access, Constraint, Guard, Loop, Nest, Origin, Statement
from ..symbolic import Poly


def normalize_nest(nest: Nest) -> Nest:
    """`nest` with every affine loop running from 0 to its trip count by 1 (`Loop.origin` keeps the C form)."""
    used = {lp.var for lp in nest.loops()} | set(nest.params) | {s.name for s in nest.scalars}
    return replace(nest, root=_normalize(nest.root, {}, {}, used))


def _fresh(var: str, used: set[str]) -> str:
    name, k = f"{var}_n", 2
    while name in used:
        name, k = f"{var}_n{k}", k + 1
    used.add(name)
    return name


def _sub(p: Poly | None, env: dict[str, Poly]) -> Poly | None:
    return None if p is None else p.substitute(env)


def _normalize(loop: Loop, env: dict[str, Poly], names: dict[str, str], used: set[str]) -> Loop:
    """env: original loop variable -> its expression in normalized variables; names: original -> new name."""
    lower, upper = _sub(loop.lower, env), _sub(loop.upper, env)
    header_stmt = None if loop.header_stmt is None else _stmt(loop.header_stmt, env, names)   # runs in the parent
    trip = None if loop.trip_count is None else loop.trip_count.substitute(env)
    env, names = dict(env), dict(names)
    var, step, origin = loop.var, loop.step, loop.origin
    if lower is not None and upper is not None and step and trip is not None and not (lower == Poly.const(0) and step == 1):
        var = _fresh(loop.var, used)
        origin = Origin(loop.var, lower, upper, step, loop.header)
        env[loop.var] = lower + Poly.var(var) * step
        names[loop.var] = var
        lower, upper, step = Poly.const(0), trip.as_poly(), 1
    body = tuple(_normalize(n, env, names, used) if isinstance(n, Loop) else _stmt(n, env, names) for n in loop.body)
    return replace(loop, var=var, lower=lower, upper=upper, step=step, trip_count=trip, body=body,
                   guards=tuple(_guard(g, env) for g in loop.guards), origin=origin, header_stmt=header_stmt,
                   lower_pieces=tuple(_sub(p, env) for p in loop.lower_pieces),     # (a min or max stays as written)
                   upper_pieces=tuple(_sub(p, env) for p in loop.upper_pieces))


def _guard(g: Guard, env: dict[str, Poly]) -> Guard:
    def sub(cons):
        return tuple(Constraint(c.expr.substitute(env), c.kind) for c in cons)
    if g.constraints is not None:
        return replace(g, constraints=sub(g.constraints))
    if g.alternatives is not None:
        return replace(g, alternatives=tuple(sub(alt) for alt in g.alternatives))
    return g


def _access(a: Access, env: dict[str, Poly]) -> Access:
    lin = None if a.linearized is None else tuple(p.substitute(env) for p in a.linearized)
    return replace(a, subscripts=tuple(_sub(p, env) for p in a.subscripts), linearized=lin)


def _stmt(s: Statement, env: dict[str, Poly], names: dict[str, str]) -> Statement:
    reds = tuple(replace(r, loops=tuple(names.get(v, v) for v in r.loops),
                         guard=None if r.guard is None else _guard(r.guard, env),
                         array_access=None if r.array_access is None else _access(r.array_access, env))
                 for r in s.reductions)
    return replace(s, loops=tuple(names.get(v, v) for v in s.loops), guards=tuple(_guard(g, env) for g in s.guards),
                   accesses=tuple(_access(a, env) for a in s.accesses), reductions=reds)
