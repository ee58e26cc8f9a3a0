"""The Resios warp simulation (Alg. 5.1), rewritten for speed over local lists, gives the same results to the bit as
the plain reading it replaced (kept here as the reference) on random traces."""
import random
from collections import deque
from typing import Dict, List, Sequence

import pytest

from c2gpu.model.resios import Event, SimResult, simulate


def reference_simulate(events: Sequence[Event], *, warps_per_block: int, blocks: int, resident_blocks: int,
             compute_units: int = 1, memory_units: int = 1) -> SimResult:
    """Algorithm 5.1 on one SM: every warp runs the same flattened trace.

    queue_b = blocks not yet resident; a block is admitted while fewer than
    `resident_blocks` are live (R res_w, whole blocks as the hardware does).
    Each step: distribute queued warps to free units, set TLP per unit type,
    fix the delays of newly current items with it, advance the clock by the
    smallest remaining delay in service, record compute-idle time against the
    memory items in service (hotspots), and requeue warps whose item finished."""
    n = warps_per_block * blocks
    idle: Dict[str, float] = {}
    if n == 0 or not events:
        return SimResult(0.0, n, idle, 0.0, 0)
    pos = [0] * n
    rem = [0.0] * n
    left = [warps_per_block] * blocks            # unfinished warps per block
    queues = {"c": deque(), "m": deque()}        # queue_r, split by the unit the warp needs
    serving = {"c": [], "m": []}                 # unit_c, unit_m
    cap = {"c": compute_units, "m": memory_units}
    pending: List[int] = []                      # warps whose current item has no delay yet
    next_block = live = steps = 0
    time = busy = 0.0
    first_unit = events[0].unit
    last = len(events)
    while True:
        while next_block < blocks and live < resident_blocks:     # queue_b -> queue_r
            for w in range(next_block * warps_per_block, (next_block + 1) * warps_per_block):
                queues[first_unit].append(w)
                pending.append(w)
            next_block += 1
            live += 1
        for u in ("c", "m"):                                       # distribute warps
            while len(serving[u]) < cap[u] and queues[u]:
                serving[u].append(queues[u].popleft())
        if not serving["c"] and not serving["m"]:
            break
        tlp = {u: len(queues[u]) + len(serving[u]) for u in ("c", "m")}
        for w in pending:                                          # adjust delay using TLP
            e = events[pos[w]]
            rem[w] = e.delay(tlp[e.unit])
        pending.clear()
        dt = min(rem[w] for u in ("c", "m") for w in serving[u])
        if serving["c"]:
            busy += dt
        else:                                                      # compute idle: blame memory
            share = dt / len(serving["m"])
            for w in serving["m"]:
                k = events[pos[w]].id
                idle[k] = idle.get(k, 0.0) + share
        time += dt
        steps += 1
        for u in ("c", "m"):
            keep = []
            for w in serving[u]:
                rem[w] -= dt
                if rem[w] > 1e-9:
                    keep.append(w)
                    continue
                pos[w] += 1
                if pos[w] == last:                                 # warp done
                    b = w // warps_per_block
                    left[b] -= 1
                    if left[b] == 0:
                        live -= 1
                else:
                    queues[events[pos[w]].unit].append(w)
                    pending.append(w)
            serving[u] = keep
    return SimResult(time, n, idle, busy, steps)



def _events(rng: random.Random) -> list[Event]:
    out = []
    for k in range(rng.randint(1, 12)):
        unit = rng.choice("cm")
        out.append(Event(unit, rng.choice([1.0, 0.5, 2.5, rng.random() * 4]), rng.choice([4.0, 20.0, 500.0]),
                         rng.choice([1.0, 1.5, 3.0]), rng.choice([1.0, 4.0, 8.0, 32.0]), rng.choice([1.0, 2.0]),
                         rng.choice([0.0, 1.0, 16.0, rng.random() * 50]), f"{unit}{k % 4}"))
    return out


@pytest.mark.parametrize("seed", range(200))
def test_simulate_matches_the_reference(seed):
    rng = random.Random(seed)
    ev = _events(rng)
    kw = dict(warps_per_block=rng.randint(1, 8), blocks=rng.randint(0, 6), resident_blocks=rng.randint(1, 4),
              compute_units=rng.randint(1, 2), memory_units=rng.randint(1, 2))
    assert simulate(ev, **kw) == reference_simulate(ev, **kw)
