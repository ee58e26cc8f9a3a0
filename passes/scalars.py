"""Scalars in a loop: which are reductions over it, which can be privatized, and whose value outlives it.

Each variable has its own IR name (lowering renames a second variable of the
same C name), so the references to one name here are the references to one
variable.  A scalar declared in a loop's body is private to that loop (the
caller checks `ScalarInfo.declared_in`); one declared outside is a reduction
over the loop (every write a candidate reduction with one operator, nothing
else reads it), or privatizable (written unconditionally, directly in the loop
body, before every read of the iteration, and its value not used after the
loop), or its dependences count.  The references are the dependence pass's
`_Ref`s: name, kind ("read"/"write") and site (statement, enclosing loops,
guard for a condition).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from c2gpu.ir import Loop, Nest, ScalarInfo, Statement

if TYPE_CHECKING:
    from .dependence import _Ref


def guard_depth(g, chain) -> int:
    """How many loops of `chain` enclose the `if` of `g` (unknown: all of them, which is sound)."""
    return len(chain) if g.depth is None else min(g.depth, len(chain))


def scalar_reduction(s: str, lp: Loop, refs: list[_Ref]) -> list[tuple[Statement, str]] | None:
    """Every write of `s` in `lp` is a candidate reduction over `lp` with one operator, and nothing else reads `s`."""
    writers: dict[int, Statement] = {r.site.stmt.sid: r.site.stmt for r in refs if r.kind == "write"}
    found, ops, guards = [], set(), []
    for w in writers.values():
        red = next((r for r in w.reductions if r.target == s and lp.var in r.loops and r.array_access is None), None)
        op = red.op if red is not None else None
        if op is None or w.decl == s:
            return None
        ops.add(op)
        found.append((w, op))
        if red.guard is not None:
            guards.append(red.guard)
    if len(ops) != 1:
        return None
    for r in refs:
        if r.kind != "read":
            continue
        if r.site.guard is None and r.site.stmt.sid in writers:
            continue                          # the reduction statement itself
        if r.site.guard is not None and r.site.guard in guards:
            continue                          # the condition of `if (e > s) s = e;`
        if r.site.guard is None and any(g.stmt_sid == r.site.stmt.sid for g in guards):
            continue                          # the same condition, kept as a statement because it reads an array
        return None
    return found


def privatizable(s: str, lp: Loop, refs: list[_Ref]) -> Statement | None:
    """A statement that writes `s` in every iteration of `lp` before any read of `s` in that iteration.

    It must sit directly in the body of `lp` (an inner loop may run zero
    times), under no `if` inside `lp`, and not read `s` itself; every read of
    `s` inside `lp` (conditions included) must come after it in the text.
    """
    reads = [r for r in refs if r.kind == "read"]
    for r in refs:
        w = r.site.stmt
        if r.kind != "write" or r.site.guard is not None or not w.loop_ids or w.loop_ids[-1] != lp.lid:
            continue
        if s in w.scalar_reads:
            continue
        # guards of `if`s outside the loop are fixed for all its iterations; one inside it makes the write conditional
        if any(guard_depth(g, r.site.chain) == len(r.site.chain) for g in w.guards):
            continue
        if all(x.site.order > w.sid for x in reads):
            return w
    return None


def live_after(s: str, lp: Loop, refs: list[_Ref]) -> str:
    """Why the value `s` has after `lp` is needed inside the nest ("" when it is not), which privatizing
    would lose: a read outside the loop (in the enclosing loops) sees the last iteration's value."""
    for r in refs:
        if r.kind == "read" and lp.lid not in (l.lid for l in r.site.chain):
            return f"{r.describe()} reads it outside the loop"
    return ""


def outlives_nest(s: str, info: ScalarInfo | None, nest: Nest) -> bool:
    """Whether the code after the nest may read `s`: then a private copy's last value must be kept
    (lastprivate: the port stores the last iteration's value; a loop variable's exit value it computes
    from the bounds)."""
    if info is not None and info.declared_in is not None:
        return False
    if any((l.origin.var if l.origin is not None else l.var) == s and not l.declared_in_header for l in nest.loops()):
        return False
    return info is None or info.exposed or s in nest.live_after
