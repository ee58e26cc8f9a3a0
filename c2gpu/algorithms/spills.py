"""Spill/reload analysis: Algorithm 6.4 of the seed (section 6.4), Belady's MIN
as formulated for SSA basic blocks by Braun & Hack (the seed's reference [3]).

W = variables in registers (initially empty), S = variables of W that already
have a memory copy.  For each instruction I : defs(I) <- op(uses(I)):

    R <- uses(I) - W;  W <- W | R;  S <- S | R      (reload R before I)
    LIMIT(W, S, I, k)                 # room for the operands
    LIMIT(W, S, next(I), k - |defs|)  # room for the results; distances from next(I)
    W <- W | defs(I)

    LIMIT(W, S, I, m): sort W by next-use distance from I, keep the first m;
        for each evicted w: spill w before I if w not in S and nextUse(I, w) != inf;
        S <- S - {w}

SSA means a value is stored at most once: after its first spill it is in
memory, so a reloaded value (put in S) is evicted again without a store.

Counting choices (explicit here because the seed leaves them implicit):
* W starts empty, so the first use of a value not defined in the block (a
  live-in) is a load; we count those as `live_in_loads`, separately from
  `reloads` of values that were evicted earlier, since no policy can avoid them.
* live_out values have a use after the block (distance finite), so evicting
  one that has no memory copy costs a spill.
* The seed starts with k = 64, Fermi's registers-per-thread limit; here k is an
  argument with no default because it is architecture-specific (255 since Kepler).
"""

from __future__ import annotations

import bisect
import math
from typing import Dict, Iterable, List, Sequence, Tuple, Union
from ..records import dataclass

Names = Union[str, Iterable[str]]
# One instruction: (defs, uses); each a single name, an iterable of names, or None/().
Step = Tuple[Names, Names]


def _names(x) -> Tuple[str, ...]:
    if x is None:
        return ()
    if isinstance(x, str):
        return (x,)
    return tuple(x)


def normalize(seq: Iterable[Step]) -> List[Tuple[Tuple[str, ...], Tuple[str, ...]]]:
    return [(_names(d), _names(u)) for d, u in seq]


def from_three_address(instrs: Iterable[Tuple]) -> List[Tuple[Tuple[str, ...], Tuple[str, ...]]]:
    """(dest, op, srcs) triples (the ilp.build_dfg format) -> (defs, uses) steps."""
    return [(_names(dest), _names(srcs)) for dest, _op, srcs in instrs]


def uses_only(names: Iterable[str]) -> List[Tuple[Tuple[str, ...], Tuple[str, ...]]]:
    """A pure reference string (each step reads one value, defines nothing):
    the textbook paging setting, where loads = page faults."""
    return [((), (v,)) for v in names]


@dataclass(frozen=True)
class SpillResult:
    """What Belady's MIN (Alg. 6.4) costs on straight-line code: spills, reloads, live-in loads and the
    register pressure."""
    spills: int           # stores inserted (at most one per value, SSA)
    reloads: int          # loads of values evicted earlier in the block
    live_in_loads: int    # first loads of values defined outside the block
    max_live: int         # register pressure, see max_live()
    events: Tuple[Tuple[int, str, str], ...]  # (instruction index, "spill"|"reload"|"load", var)


class _NextUse:
    def __init__(self, seq, live_out):
        self.pos: Dict[str, List[int]] = {}
        for i, (_, uses) in enumerate(seq):
            for v in set(uses):
                self.pos.setdefault(v, []).append(i)
        for v in live_out:                       # a use just past the block
            self.pos.setdefault(v, []).append(len(seq))

    def __call__(self, i: int, v: str) -> float:
        # Distance from instruction i to the next use of v at or after i (0 if I uses v).
        p = self.pos.get(v, [])
        j = bisect.bisect_left(p, i)
        return p[j] - i if j < len(p) else math.inf


def belady_min(seq: Sequence[Step], k: int, live_out: Iterable[str] = ()) -> SpillResult:
    """Algorithm 6.4 (MIN) with k registers on straight-line code."""
    seq = normalize(seq)
    live_out = set(live_out)
    nxt = _NextUse(seq, live_out)
    W, S, seen = set(), set(), set()
    spills = reloads = loads = 0
    events = []

    def limit(at: int, m: int, where: int) -> None:
        nonlocal spills
        order = sorted(W, key=lambda w: (nxt(at, w), w))   # sort(W, I)
        for w in order[m:]:
            if w not in S and nxt(at, w) != math.inf:
                spills += 1
                events.append((where, "spill", w))
            S.discard(w)
            W.discard(w)

    for i, (defs, uses) in enumerate(seq):
        if len(set(uses)) > k or len(set(defs)) > k:
            raise ValueError(f"instruction {i} needs more than k={k} registers")
        R = sorted(set(uses) - W)
        W.update(R)
        S.update(R)
        limit(i, k, i)                      # LIMIT(W, S, I, k)
        limit(i + 1, k - len(set(defs)), i)  # LIMIT(W, S, next(I), k - |defs(I)|)
        W.update(defs)
        seen.update(defs)
        for r in R:                         # "reload variables from R" (before I)
            if r in seen:
                reloads += 1
                events.append((i, "reload", r))
            else:
                loads += 1
                events.append((i, "load", r))
                seen.add(r)
    return SpillResult(spills, reloads, loads, max_live(seq, live_out), tuple(events))


def max_live(seq: Sequence[Step], live_out: Iterable[str] = ()) -> int:
    """Register pressure of straight-line code: max over instructions of
    max(|values live just before I|, |values live just after I, defs(I) included|).

    A value occupies a register from its definition (or, for a live-in, from
    its first use, matching MIN's empty initial W) to its last use (to the end
    of the block if live_out).  A result may reuse an operand's register when
    the operand dies at I, hence the max of before/after rather than their
    union.  With these definitions MIN needs no reload iff k >= max_live
    (live_out empty)."""
    seq = normalize(seq)
    live_out = set(live_out)
    n = len(seq)
    start: Dict[str, int] = {}
    end: Dict[str, int] = {}
    for i, (defs, uses) in enumerate(seq):
        for v in uses:
            start.setdefault(v, i)
            end[v] = i
        for v in defs:
            start.setdefault(v, i)
            end.setdefault(v, i)
    for v in live_out:
        if v in start:
            end[v] = n
    best = 0
    for i, (defs, _uses) in enumerate(seq):
        d = set(defs)
        before = sum(1 for v in start if start[v] <= i <= end[v] and v not in d)
        after = sum(1 for v in start if start[v] <= i < end[v] and v not in d) + len(d)
        best = max(best, before, after)
    return best
