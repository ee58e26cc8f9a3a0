"""Algorithm 6.2 greedy vs exact 0/1 knapsack."""
import itertools
import random

import pytest

from c2gpu.algorithms.knapsack import (Opportunity, exact_select, greedy_gap_statistics,
                                       greedy_select, optimality_gap, random_instance)

O = Opportunity


def test_greedy_hand_instance_optimal():
    # benefits: A 1000/100=10, C 3000/500=6, B 2000/400=5, D 600/300=2.
    # budget 1000: take A (900 left), C (400 left), B (0 left); D 300 > 0 rejected.
    ops = [O("A", 100, 1000), O("B", 400, 2000), O("C", 500, 3000), O("D", 300, 600)]
    sel = greedy_select(ops, 1000)
    assert sel.chosen == ("A", "C", "B")
    assert sel.total_frequency == 6000 and sel.used_bytes == 1000
    d = {x.name: x for x in sel.decisions}
    assert [x.name for x in sel.decisions] == ["A", "C", "B", "D"]     # benefit order
    assert d["A"].value == 10 and d["A"].remaining_before == 1000
    assert d["B"].remaining_before == 400 and d["B"].taken
    assert not d["D"].taken and d["D"].remaining_before == 0 and "exceeds" in d["D"].reason
    assert exact_select(ops, 1000).total_frequency == 6000
    assert optimality_gap(ops, 1000) == 0.0


def test_prefix_vs_skip_and_gap():
    # benefits X 3, Y 2, Z 1.8, W 1.5; budget 10.
    # prefix: X (9 left), Y=10 does not fit -> stop: 3.
    # skip:   X, Z (4 left), W (0 left): 3 + 9 + 6 = 18.
    # exact:  Y alone = 20.  gaps 17/20 and 2/20.
    ops = [O("X", 1, 3), O("Y", 10, 20), O("Z", 5, 9), O("W", 4, 6)]
    pre = greedy_select(ops, 10)
    assert pre.chosen == ("X",) and pre.total_frequency == 3
    assert "prefix rule" in {x.name: x for x in pre.decisions}["Z"].reason
    skip = greedy_select(ops, 10, skip_misfits=True)
    assert skip.chosen == ("X", "Z", "W") and skip.total_frequency == 18
    ex = exact_select(ops, 10)
    assert ex.chosen == ("Y",) and ex.total_frequency == 20
    assert optimality_gap(ops, 10) == pytest.approx(0.85)
    assert optimality_gap(ops, 10, skip_misfits=True) == pytest.approx(0.10)


def test_parametric_sizes_removed():
    ops = [O("P", None, 10**9), O("A", 8, 8)]
    sel = greedy_select(ops, 100)
    assert sel.chosen == ("A",)
    p = [x for x in sel.decisions if x.name == "P"][0]
    assert not p.taken and "parametric" in p.reason
    assert exact_select(ops, 100).chosen == ("A",)


def _brute(ops, budget):
    best = 0
    for r in range(len(ops) + 1):
        for c in itertools.combinations(ops, r):
            if sum(o.size_bytes for o in c) <= budget:
                best = max(best, sum(o.frequency for o in c))
    return best


def test_exact_matches_brute_force_both_solvers():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 9)
        ops = [O(str(i), rng.randint(1, 60), rng.randint(1, 100)) for i in range(n)]
        budget = rng.randint(0, 200)
        want = _brute(ops, budget)
        dp = exact_select(ops, budget)
        bnb = exact_select(ops, budget, dp_cell_limit=0)       # force branch and bound
        assert dp.total_frequency == want and bnb.total_frequency == want
        assert dp.used_bytes <= budget and bnb.used_bytes <= budget


def test_exact_too_large_raises():
    ops = [O(str(i), 10**6 + i, 1) for i in range(40)]
    with pytest.raises(ValueError):
        exact_select(ops, 2 * 10**7)


def test_exact_takes_everything_that_fits_at_any_size():
    ops = [O(str(i), 10**6 + i, 1) for i in range(40)] + [O("useless", 8, 0)]
    sel = exact_select(ops, 10**8)      # too large for the table, but all 40 fit: that is the optimum
    assert set(sel.chosen) == {str(i) for i in range(40)} and sel.total_frequency == 40


def test_greedy_gap_statistics_1000_instances():
    stats = greedy_gap_statistics(1000, seed=0)
    # Recompute independently of the module's aggregation.
    rng = random.Random(0)
    gaps, gaps_skip = [], []
    for _ in range(1000):
        ops, budget = random_instance(rng)
        ex = _brute(ops, budget) if len(ops) <= 8 else exact_select(ops, budget).total_frequency
        g = greedy_select(ops, budget).total_frequency
        gs = greedy_select(ops, budget, skip_misfits=True).total_frequency
        assert 0 <= g <= gs <= ex          # prefix picks are a prefix of skip's picks
        # exact 0 (budget below every size): nothing to lose, gap 0 by definition.
        gaps.append((ex - g) / ex if ex else 0.0)
        gaps_skip.append((ex - gs) / ex if ex else 0.0)
    worst, mean = max(gaps), sum(gaps) / len(gaps)
    worst_s, mean_s = max(gaps_skip), sum(gaps_skip) / len(gaps_skip)
    print(f"\n[knapsack] 1000 instances seed 0: literal Alg. 6.2 (prefix) worst gap {worst:.4f} "
          f"mean {mean:.4f} optimal {stats.optimal_fraction:.1%}; skip-misfits worst {worst_s:.4f} "
          f"mean {mean_s:.4f} optimal {stats.optimal_fraction_skip:.1%}")
    assert stats.worst_gap == pytest.approx(worst) and stats.mean_gap == pytest.approx(mean)
    assert stats.worst_gap_skip == pytest.approx(worst_s) and stats.mean_gap_skip == pytest.approx(mean_s)
    # Regression pins for seed 0 (the values the report quotes).
    assert stats.worst_gap == pytest.approx(1.0)
    assert stats.mean_gap == pytest.approx(0.0570357, abs=1e-6)
    assert stats.worst_gap_skip == pytest.approx(0.6483769, abs=1e-6)
    assert stats.mean_gap_skip == pytest.approx(0.0187145, abs=1e-6)
    assert stats.optimal_fraction == pytest.approx(0.561)
    assert stats.optimal_fraction_skip == pytest.approx(0.74)
