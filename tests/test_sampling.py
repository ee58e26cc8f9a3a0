"""The vectorised counts of the coalescing and L1 analyses (c2gpu/perf/sampling.py, profile._window_distinct)
against plain Python sets, on random addresses with random inactive lanes (negative values, empty rows and
empty blocks included)."""
import numpy as np
import pytest

from c2gpu.perf.profile import _window_distinct
from c2gpu.perf.sampling import distinct_in_rows, sorted_rows


def _random(seed, shape=(3, 4, 6, 32)):
    rng = np.random.default_rng(seed)
    values = rng.integers(-40, 40, size=shape, dtype=np.int64)
    active = rng.random(shape) < rng.choice([0.0, 0.3, 0.9, 1.0])
    active[0, 0] = False                     # a warp with no active lane in any iteration
    return values, active


@pytest.mark.parametrize("seed", range(6))
def test_distinct_in_rows_counts_distinct_active_values_per_row(seed):
    values, active = _random(seed)
    s = sorted_rows(values, active)
    rows = [set(v[a].tolist()) for v, a in zip(values.reshape(-1, 32), active.reshape(-1, 32))]
    assert distinct_in_rows(s) == sum(len(r) for r in rows)
    assert distinct_in_rows(s, 4) == sum(len({x // 4 for x in r}) for r in rows)


@pytest.mark.parametrize("seed", range(6))
def test_window_distinct_counts_sectors_per_block(seed):
    items = []
    for k in range(2):                       # two accesses of one group
        values, active = _random(100 * seed + k)
        if k == 1 and seed % 2:
            active[1] = False                # a block where only one access is active
        items.append((values, active))
    nb, live = items[0][0].shape[0], 3
    win = one = first = 0
    for b in range(nb):
        pairs = {(int(v), it) for values, active in items
                 for (w, it, lane) in zip(*np.nonzero(active[b])) for v in [values[b, w, it, lane]]}
        win += len({v for v, _ in pairs})
        first += len({v for v, it in pairs if it < live})
        one += len(pairs)
    got = _window_distinct([(sorted_rows(v, a), a, None) for v, a in items], nb, live)
    assert got == (win, first, one)
