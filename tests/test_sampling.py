"""The vectorised counts of the coalescing and L1 analyses (c2gpu/perf/sampling.py, coalescing._window_distinct)
against plain Python sets, on random addresses with random inactive lanes (negative values, empty rows and
empty blocks included); sampled blocks counted as another (KernelAnalysis._block_weights) against sorting every
block, on real kernels and every shape the block search tries."""
import numpy as np
import pytest

import c2gpu.perf.profile as profile
from c2gpu.perf.predict import search_shapes
from c2gpu.perf.coalescing import _window_distinct
from c2gpu.perf.sampling import distinct_in_rows, sorted_rows

from conftest import TESTDATA
from test_perf import analysis


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
    got = _window_distinct([(sorted_rows(v, a), None) for v, a in items], live)
    assert got == (win, first, one)
    # weights: block b standing for weights[b] blocks counts as that many copies of it
    weights = np.arange(1, nb + 1)
    copies = np.repeat(np.arange(nb), weights)
    assert _window_distinct([(sorted_rows(v, a), None) for v, a in items], live, weights) == \
        _window_distinct([(sorted_rows(v[copies], a[copies]), None) for v, a in items], live)
    s = sorted_rows(*items[0])
    assert distinct_in_rows(s, 4, weights) == distinct_in_rows(s[copies], 4)


@pytest.mark.parametrize("name, defines", [("matmul.c", ()), ("jacobi2d.c", ()), ("syrk.c", ()), ("transpose.c", ()),
                                           ("convolution.c", ()), ("gemv.c", ()),
                                           ("matmul.c", ("N=100",)), ("matmul.c", ("N=37",))])   # rows not aligned
def test_blocks_counted_as_another_give_the_counts_of_sorting_every_block(name, defines, monkeypatch):
    ka, k = analysis(TESTDATA / name, defines=defines)
    shapes = search_shapes(ka, tuple(k.block))
    fast = {}
    merged = 0
    for b in shapes:
        fast[b] = ka._sector_stats(b)
        merged += 0 in ka._block_weights(*_weights_inputs(ka, b))
    monkeypatch.setattr(profile.KernelAnalysis, "_block_weights", lambda self, envs, *_: np.ones(
        next(iter(envs.values()))[1].shape[0], dtype=np.int64))
    ka2, _ = analysis(TESTDATA / name, defines=defines)     # outside a pass manager's work: nothing shared with ka
    for b in shapes:
        assert ka2._sector_stats(b) == fast[b], b
    if name in ("matmul.c", "jacobi2d.c", "transpose.c") and not defines:   # interior blocks are translations
        assert merged >= len(shapes) // 2



def _weights_inputs(ka, block):
    """_block_weights's arguments for `block`, as _sector_stats builds them."""
    captured = {}
    real = ka._block_weights

    def spy(envs, addresses, unit):
        captured["args"] = (envs, addresses, unit)
        return real(envs, addresses, unit)
    ka._block_weights = spy
    ka._block_cache.pop(("sectors", tuple(block)), None)
    ka._sector_stats(block)
    del ka._block_weights
    return captured["args"]
