"""Algorithm 6.4 (Belady's MIN) and register pressure."""
import random

import pytest

from c2gpu.algorithms.spills import (belady_min, from_three_address, max_live, normalize,
                                     uses_only)

# Silberschatz' reference string; OPT with 3 frames = 9 faults, with 4 frames = 8.
REF = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1]


def test_textbook_reference_string_three_frames():
    # Hand trace (furthest next use evicted):
    #  7 0 1 load | 2: evict 7 (next 17) | 0 hit | 3: evict 1 (next 13) | 0 hit
    #  4: evict 0 (next 10) | 2 3 hit | 0: reload, evict 4 (never) | 3 2 hit
    #  1: reload, evict 3 (never) | 2 0 1 hit | 7: reload, evict 2 | 0 1 hit
    r = belady_min(uses_only(map(str, REF)), 3)
    assert r.live_in_loads + r.reloads == 9
    assert (r.live_in_loads, r.reloads, r.spills) == (6, 3, 0)   # live-ins have a memory copy
    assert [(i, v) for i, kind, v in r.events if kind == "reload"] == [(10, "0"), (13, "1"), (17, "7")]


def test_textbook_reference_string_four_frames():
    r = belady_min(uses_only(map(str, REF)), 4)
    assert (r.live_in_loads, r.reloads) == (6, 2)          # 8 faults


HAND = [("a", ()), ("b", ()), ("c", ("a", "b")), ("d", ("c", "a")), ("e", ("d", "b"))]


def test_defs_and_uses_hand_example():
    # k = 2.  I2 (c = a+b) needs a room for c: next uses from I3: a -> 0, b -> 1,
    # evict b, never stored before -> spill b.  I4 (e = d+b): b not in W -> reload.
    r = belady_min(HAND, 2)
    assert (r.spills, r.reloads, r.live_in_loads) == (1, 1, 0)
    assert [e for e in r.events] == [(2, "spill", "b"), (4, "reload", "b")]
    # pressure: after c = a+b, {a, b, c} are live -> 3; with 3 registers nothing spills.
    assert r.max_live == 3
    r3 = belady_min(HAND, 3)
    assert (r3.spills, r3.reloads, r3.live_in_loads) == (0, 0, 0)


def test_live_out_forces_spill():
    seq = [("a", ()), ("b", ()), ("c", ("b",)), ("d", ("c",))]
    # k = 1: defining b evicts a; a is dead in the block -> no store ...
    assert belady_min(seq, 1).spills == 0 and max_live(seq) == 1
    # ... but live after the block -> it must be stored once.
    r = belady_min(seq, 1, live_out={"a"})
    assert (r.spills, r.reloads) == (1, 0) and r.max_live == 2


def test_spilled_value_stored_once():
    # x is evicted twice (reloaded in between); SSA -> one store only.
    seq = [("x", ()), ("y", ()), ("z", ("y",)), ("p", ("x",)), ("q", ()), ("r", ("q",)), ("s", ("x",))]
    r = belady_min(seq, 1)
    assert r.spills == 1 and r.reloads == 2


def test_k_too_small_raises_and_three_address_input():
    with pytest.raises(ValueError):
        belady_min([("c", ("a", "b"))], 1)
    steps = from_three_address([("e", "add", ["a", "b"]), ("f", "add", ["c", "d"]),
                                ("g", "mul", ["e", "f"])])
    assert steps == normalize([("e", ("a", "b")), ("f", ("c", "d")), ("g", ("e", "f"))])
    # before f: a, b dead; e live, c and d being read -> {e, c, d} = 3
    assert max_live(steps) == 3
    r = belady_min(steps, 2)
    assert (r.live_in_loads, r.spills, r.reloads) == (4, 1, 1)


def _optimal_loads(seq, k):
    # Exhaustive search over every eviction policy: state = registers at the
    # start of an instruction; X = values kept across I: X | uses must fit in k
    # registers while I executes, and X must leave room for defs afterwards.
    from itertools import combinations
    seq = normalize(seq)
    states = {frozenset(): 0}
    for defs, uses in seq:
        nxt = {}
        for W, cost in states.items():
            c = cost + len(set(uses) - W)
            pool = sorted(W | set(uses))
            room = k - len(set(defs))
            for r in range(0, min(room, len(pool)) + 1):
                for X in combinations(pool, r):
                    if len(set(X) | set(uses)) > k:
                        continue
                    key = frozenset(X) | frozenset(defs)
                    if c < nxt.get(key, 1 << 30):
                        nxt[key] = c
        states = nxt
    return min(states.values())


def test_min_is_optimal_and_pressure_threshold_on_random_blocks():
    rng = random.Random(3)
    checked = 0
    for _ in range(150):
        names = [f"v{i}" for i in range(rng.randint(3, 6))]
        seq, defined = [], []
        for j in range(rng.randint(3, 8)):
            pool = names + defined
            uses = tuple(rng.sample(pool, rng.randint(0, 2)))
            d = f"t{j}"
            defined.append(d)
            seq.append((d, uses))
        for k in (2, 3, 4):
            r = belady_min(seq, k)
            # Belady: no policy needs fewer loads (reloads + first loads).
            assert r.reloads + r.live_in_loads == _optimal_loads(seq, k)
            # pressure threshold: reloads needed exactly when k < max_live.
            assert (r.reloads == 0) == (k >= r.max_live)
            checked += 1
    assert checked == 450
