"""Choosing shared-memory opportunities: Algorithm 6.2 of the seed (section 6.1).

The seed treats the choice as a 0/1 knapsack (capacity = shared memory per
block, weight = opportunity size, value = execution frequency) and solves it
with a greedy heuristic: benefit = freq_i / size_i, sort decreasing, "choose
first n entries from opportunities which fit in mem_sh".

That last line is ambiguous: a prefix (stop at the first opportunity that does
not fit) or a scan that skips misfits and keeps going.  `greedy_select` does the
literal prefix by default (``skip_misfits=False``) and the scan on request; the
gap statistics report both.  An exact solver (DP over quantized sizes, else
branch and bound) measures how far greedy is from optimal.
"""

from __future__ import annotations

import math
import random
from functools import reduce
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ..records import dataclass


@dataclass(frozen=True)
class Opportunity:
    """A load that could be staged in shared memory.

    size_bytes: footprint per block (None = still parametric after evaluating
    with the block size; Algorithm 6.2 line 2 drops those).
    frequency: execution count, i.e. global loads saved if chosen.
    """
    name: str
    size_bytes: Optional[int]
    frequency: float


@dataclass(frozen=True)
class Decision:
    """What the knapsack did with one opportunity: taken or not, its benefit, and why."""
    name: str
    taken: bool
    value: float               # frequency / size (benefit of Alg. 6.2); nan if parametric
    size_bytes: Optional[int]
    remaining_before: int      # budget left when this opportunity was considered
    reason: str


@dataclass(frozen=True)
class Selection:
    """A knapsack solution: the opportunities chosen, a decision per opportunity, the total frequency and the
    bytes used."""
    chosen: Tuple[str, ...]        # names, in the order greedy took them
    decisions: Tuple[Decision, ...]  # one per opportunity, in benefit order
    total_frequency: float
    used_bytes: int


def _benefit(o: Opportunity) -> float:
    # Alg. 6.2: benefits <- map (s_i -> freq_i / s_i); a zero-size opportunity is free.
    return math.inf if o.size_bytes == 0 else o.frequency / o.size_bytes


def greedy_select(opportunities: Sequence[Opportunity], budget_bytes: int, *,
                  skip_misfits: bool = False) -> Selection:
    """Algorithm 6.2 (greedy).  Ties in benefit keep input order (stable sort)."""
    decisions: List[Decision] = []
    usable = []
    for o in opportunities:
        if o.size_bytes is None:
            # Alg. 6.2 line 2: "remove opportunities which have parametric size"
            decisions.append(Decision(o.name, False, math.nan, None, budget_bytes,
                                      "size is parametric: removed before sorting"))
        elif o.size_bytes < 0:
            raise ValueError(f"negative size for {o.name}")
        else:
            usable.append(o)
    usable.sort(key=_benefit, reverse=True)       # Alg. 6.2: sort decreasing by benefit
    remaining = budget_bytes
    chosen, total, stopped = [], 0.0, False
    for o in usable:
        v = _benefit(o)
        if stopped:
            why = "not considered: prefix rule stopped at an earlier misfit"
            decisions.append(Decision(o.name, False, v, o.size_bytes, remaining, why))
        elif o.size_bytes <= remaining:
            why = f"benefit {v:.4g}/B; size {o.size_bytes} B fits in remaining {remaining} B"
            decisions.append(Decision(o.name, True, v, o.size_bytes, remaining, why))
            remaining -= o.size_bytes
            chosen.append(o.name)
            total += o.frequency
        else:
            why = f"benefit {v:.4g}/B; size {o.size_bytes} B exceeds remaining {remaining} B"
            decisions.append(Decision(o.name, False, v, o.size_bytes, remaining, why))
            stopped = not skip_misfits
    return Selection(tuple(chosen), tuple(decisions), total, budget_bytes - remaining)


def exact_select(opportunities: Sequence[Opportunity], budget_bytes: int, *,
                 dp_cell_limit: int = 5_000_000, bnb_item_limit: int = 30) -> Selection:
    """Exact 0/1 knapsack maximizing total frequency within budget_bytes.

    DP over capacity when (items x budget/g) <= dp_cell_limit, where g is the gcd
    of all sizes (shared-memory sizes are usually multiples of 4, 128, ...);
    otherwise depth-first branch and bound with the fractional (LP) bound,
    allowed up to bnb_item_limit items.  Parametric sizes are dropped as in
    Alg. 6.2.  Decisions carry reason "optimal".
    """
    items = [o for o in opportunities if o.size_bytes is not None]
    n = len(items)
    if any(o.size_bytes < 0 for o in items):
        raise ValueError("negative size")
    sizes = [o.size_bytes for o in items]
    g = reduce(math.gcd, sizes + [0]) or 1
    cap = budget_bytes // g
    if sum(sizes) <= budget_bytes:
        take = [o.frequency > 0 for o in items]      # everything fits: the optimum takes every item that helps
    elif n * (cap + 1) <= dp_cell_limit:
        take = _dp(sizes, [o.frequency for o in items], g, cap)
    elif n <= bnb_item_limit:
        take = _branch_and_bound(items, budget_bytes)
    else:
        raise ValueError(f"{n} items with budget {budget_bytes}: too large for exact solving")
    chosen = [o for o, t in zip(items, take) if t]
    decisions = tuple(Decision(o.name, t, _benefit(o), o.size_bytes, budget_bytes,
                               "optimal" if t else "not in optimal set")
                      for o, t in zip(items, take))
    return Selection(tuple(o.name for o in chosen), decisions,
                     sum(o.frequency for o in chosen), sum(o.size_bytes for o in chosen))


def _dp(sizes: List[int], freqs: List[float], g: int, cap: int) -> List[bool]:
    # Classic O(n * cap) table; keep[i][c] records whether item i improves capacity c.  Each row is one
    # vector step: every capacity reads the previous row (0/1: an item is taken at most once), and the strict
    # comparison breaks ties as the scalar loop did (an item that does not improve is left out).
    best = np.zeros(cap + 1)
    keep = []
    for s, f in zip(sizes, freqs):
        w = s // g
        row = np.zeros(cap + 1, dtype=bool)
        if w <= cap:
            cand = best[:cap + 1 - w] + f
            row[w:] = cand > best[w:]
            best = best.copy()
            best[w:][row[w:]] = cand[row[w:]]
        keep.append(row)
    take = [False] * len(sizes)
    c = cap
    for i in range(len(sizes) - 1, -1, -1):
        if keep[i][c]:
            take[i] = True
            c -= sizes[i] // g
    return take


def _branch_and_bound(items: List[Opportunity], budget: int) -> List[bool]:
    order = sorted(range(len(items)), key=lambda i: _benefit(items[i]), reverse=True)
    sz = [items[i].size_bytes for i in order]
    fr = [items[i].frequency for i in order]
    n = len(order)
    best_val, best_set = -1.0, []

    def bound(k: int, room: int, val: float) -> float:
        # LP relaxation: fill greedily by benefit, fraction of the first misfit.
        for j in range(k, n):
            if sz[j] <= room:
                room -= sz[j]
                val += fr[j]
            else:
                return val + (fr[j] * room / sz[j] if sz[j] else fr[j])
        return val

    def dfs(k: int, room: int, val: float, cur: List[int]) -> None:
        nonlocal best_val, best_set
        if val > best_val:
            best_val, best_set = val, list(cur)
        if k == n or bound(k, room, val) <= best_val:
            return
        if sz[k] <= room:
            cur.append(k)
            dfs(k + 1, room - sz[k], val + fr[k], cur)
            cur.pop()
        dfs(k + 1, room, val, cur)

    dfs(0, budget, 0.0, [])
    take = [False] * n
    for k in best_set:
        take[order[k]] = True
    return take


def optimality_gap(opportunities: Sequence[Opportunity], budget_bytes: int, *,
                   skip_misfits: bool = False) -> float:
    """(exact - greedy) / exact in total frequency; 0 when exact is 0."""
    ex = exact_select(opportunities, budget_bytes).total_frequency
    gr = greedy_select(opportunities, budget_bytes, skip_misfits=skip_misfits).total_frequency
    return 0.0 if ex == 0 else (ex - gr) / ex


def random_instance(rng: random.Random, *, max_items: int = 12, size_unit: int = 128,
                    max_units: int = 64) -> Tuple[List[Opportunity], int]:
    """One random instance: 2..max_items opportunities with sizes a multiple of
    size_unit bytes (up to max_units units; tiles are allocated in such
    multiples), frequencies 1..10000, and a budget of 20%..80% of the total
    size so that choices actually matter."""
    n = rng.randint(2, max_items)
    ops = [Opportunity(f"o{i}", size_unit * rng.randint(1, max_units), rng.randint(1, 10_000))
           for i in range(n)]
    total = sum(o.size_bytes for o in ops)
    budget = int(total * rng.uniform(0.2, 0.8))
    return ops, budget


@dataclass(frozen=True)
class GapStatistics:
    """How far greedy (both readings of Alg. 6.2) falls from the exact solution over random instances."""
    n_instances: int
    seed: int
    worst_gap: float             # literal Alg. 6.2 (prefix: stop at first misfit)
    mean_gap: float
    optimal_fraction: float      # share of instances where greedy is optimal
    worst_gap_skip: float        # variant that skips misfits and keeps scanning
    mean_gap_skip: float
    optimal_fraction_skip: float


def greedy_gap_statistics(n_instances: int = 1000, seed: int = 0) -> GapStatistics:
    """Greedy (both readings of Alg. 6.2) vs exact on n_instances random
    instances drawn from random.Random(seed) with random_instance()."""
    rng = random.Random(seed)
    gaps, gaps_skip = [], []
    for _ in range(n_instances):
        ops, budget = random_instance(rng)
        ex = exact_select(ops, budget).total_frequency
        for skip, out in ((False, gaps), (True, gaps_skip)):
            gr = greedy_select(ops, budget, skip_misfits=skip).total_frequency
            out.append(0.0 if ex == 0 else (ex - gr) / ex)
    eps = 1e-12
    return GapStatistics(
        n_instances, seed,
        max(gaps), sum(gaps) / len(gaps), sum(g <= eps for g in gaps) / len(gaps),
        max(gaps_skip), sum(gaps_skip) / len(gaps_skip),
        sum(g <= eps for g in gaps_skip) / len(gaps_skip))
