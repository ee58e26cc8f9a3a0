"""Resios model: the thesis' worked numbers and hand-computed simulations."""

from dataclasses import replace

import pytest

from c2gpu.model import (GTX460, Branch, Compute, GlobalAccess, GlobalMem, InstClass, KernelProfile,
                         Loop, SharedMem, predict)
from c2gpu.model.resios import (ResiosModel, compute_delay, execution_eq44_cycles, flatten,
                                global_penalty, memory_delay, overhead_parts, round_delay,
                                shared_penalty, transfer_time_s)

CLK = 1.35e9
ONE_SM = replace(GTX460, sm_count=1)      # per-SM bandwidth = the chip's 64 B/cycle


def kernel(trace, warps=1, blocks=1, **kw):
    return KernelProfile(grid_blocks=blocks, block_threads=32 * warps, trace=tuple(trace), **kw)


def cycles(pred):
    return pred.time_s * CLK


# ------------------------------------------------------------------ 4.3.1

def test_madd_delay_is_22_over_tlp_then_throughput_bound():
    mad = GTX460.inst["int_mad"]
    assert (mad.latency, mad.throughput, mad.max_parallelism(32)) == (22, 16, 11)
    # 11 is Little's law: latency / (warp_size / throughput) = 22 / 2
    assert InstClass(22, 16).max_parallelism(32) == pytest.approx(11)
    for tlp in range(1, 12):
        assert compute_delay(22, 16, 11, 1, tlp) == pytest.approx(22 / tlp)
    for tlp in range(12, 49):
        assert compute_delay(22, 16, 11, 1, tlp) == pytest.approx(22 / (11 * tlp) + 2)
    # throughput = 1/delay: linear growth to the knee, then flat at ~1/2 warp-inst/cycle
    assert 1 / compute_delay(22, 16, 11, 1, 11) == pytest.approx(0.5)
    assert 1 / compute_delay(22, 16, 11, 1, 48) == pytest.approx(1 / (22 / 528 + 2))
    # ILP counts like TLP (eq 4.5 uses ILP*TLP)
    assert compute_delay(22, 16, 11, 2, 3) == pytest.approx(22 / 6)


def test_eq44_madd_validation_round_time():
    # eq 4.4 per warp: TLP warps * n delays; n = 100 madds
    assert execution_eq44_cycles([22 / 11] * 100, 11) == pytest.approx(2200)          # = n * latency
    assert execution_eq44_cycles([22 / (11 * 16) + 2] * 100, 16) == pytest.approx(3400)


# ------------------------------------------------------------------ 4.3.2

def test_global_memory_500_plus_16c():
    assert GTX460.bw_bytes_per_cycle == pytest.approx(64)          # 86.4 / 1.35
    for c in range(1, 33):
        pen = global_penalty(c, 128, 64)
        assert pen == pytest.approx(2 * c)
        assert round_delay(500, pen, 8) == pytest.approx(500 + 16 * c)
        # eq 4.6: up to max_p requests share the latency, beyond each adds the penalty
        assert 8 * memory_delay(500, pen, 1, 8, 8) == pytest.approx(500)
        assert 20 * memory_delay(500, pen, 1, 20, 8) == pytest.approx(500 + 20 * 2 * c)


def test_shared_memory_37_plus_c():
    for c in range(0, 32):
        pen = shared_penalty(c, 4, 32, 32, 32)       # 4/32 + 4c/32
        assert pen == pytest.approx(0.125 + c / 8)
        assert round_delay(36, pen, 8) == pytest.approx(37 + c)


# ------------------------------------------------------------------ 4.2 / 4.3

@pytest.mark.parametrize("size, expected", [
    (1024, 1024 / 792e6),               # 1 KiB: BW = 100*1 + 692 = 792 MB/s -> 1.293 us
    (16 * 1024, 16384 / 2292e6),        # 16 KiB: 1600 + 692 = 2292 MB/s     -> 7.148 us
    (32 * 1024, 32768 / 3892e6),        # 32 KiB: 3892 MB/s                  -> 8.419 us (plateau)
    (64 * 1024, 65536 / 5000e6),        # 64 KiB: 7092 > 5000 -> peak        -> 13.11 us
    (100 * 2**20, 100 * 2**20 / 5e9),   # 100 MiB at peak                    -> 20.97 ms
    (0, 0.0),
])
def test_transfer_curve(size, expected):
    assert transfer_time_s(size, GTX460) == pytest.approx(expected)


def test_transfer_saturates_at_43_kib():
    knee = (5000 - 692) / 100 * 1024          # 43.08 KiB
    assert transfer_time_s(knee, GTX460) == pytest.approx(knee / 5e9)
    assert transfer_time_s(knee * 0.9, GTX460) > knee * 0.9 / 5e9


def test_overhead_sum():
    parts = overhead_parts([1024, 65536], GTX460)
    assert parts["transfer"] == pytest.approx(1024 / 792e6 + 65536 / 5e9)
    assert parts["context"] == 0.065 and parts["launch"] == 4e-6
    p = kernel([Compute("int_mad")], transfers=(1024, 65536))
    pred = predict("resios", p, ONE_SM)
    assert pred.overhead_s == pytest.approx(1024 / 792e6 + 65536 / 5e9 + 0.065 + 4e-6)
    assert pred.total_s == pytest.approx(pred.overhead_s + 22 / CLK)   # eq 4.1


# ------------------------------------------------------------------ Algorithm 5.1

def test_pure_compute_enough_warps_is_throughput_bound():
    # 16 warps x 100 madds on one SM: every delay fixed at TLP = 16 > 11:
    # 22/(11*16) + 2 = 2.125 cycles, total 16 * 100 * 2.125 = 3400 cycles,
    # i.e. 0.47 warp instructions per cycle, just under the 0.5 peak (16 ops/cycle).
    p = kernel([Loop((Compute("int_mad"),), 100)], warps=16)
    pred = predict("resios", p, ONE_SM)
    assert cycles(pred) == pytest.approx(3400)
    assert pred.hotspots == {}
    # 11 warps: the knee, 22/11 = 2 cycles each -> 11 * 100 * 2 = 2200 = 100 * latency
    assert cycles(predict("resios", kernel([Loop((Compute("int_mad"),), 100)], warps=11), ONE_SM)) \
        == pytest.approx(2200)


def test_one_warp_memory_bound_latency_chain():
    # one warp, 10 x (load; fadd): nothing hides anything: 10 * (500 + 16) = 5160 cycles,
    # compute idle during each load: 5000 cycles blamed on the load.
    p = kernel([Loop((GlobalMem("x"), Compute("fp32_add")), 10)])
    pred = predict("resios", p, ONE_SM)
    assert cycles(pred) == pytest.approx(5160)
    assert pred.hotspots["x"] * CLK == pytest.approx(5000)
    assert pred.breakdown["exposed_memory"] * CLK == pytest.approx(5000)
    assert pred.breakdown["compute_busy"] * CLK == pytest.approx(160)


def test_two_warps_overlap_memory_with_compute():
    # trace (load a; madd), 2 warps.  t=0: both queue for memory, TLP_m = 2 ->
    # each load 500/2 = 250.  t=250: w0 computes (TLP_c = 1 -> 22) while w1's load
    # has 228 left; t=272: w0 done, compute idle until 500; t=500..522 w1 computes.
    # total 522 (vs 1044 serial); idle blamed on 'a' = 250 + 228 = 478.
    pred = predict("resios", kernel([GlobalMem("a"), Compute("int_mad")], warps=2), ONE_SM)
    assert cycles(pred) == pytest.approx(522)
    assert pred.hotspots["a"] * CLK == pytest.approx(478)
    assert pred.breakdown["compute_busy"] * CLK == pytest.approx(44)


def test_hotspots_blame_the_access_that_stalls():
    # one warp: shared s (36), global g (500), fma (18): compute idle 36 + 500
    pred = predict("resios", kernel([SharedMem("s", conflict_degree=4), GlobalMem("g"),
                                     Compute("fp32_fma")]), ONE_SM)
    assert cycles(pred) == pytest.approx(554)
    assert list(pred.hotspots) == ["g", "s"]                   # sorted, worst first
    assert pred.hotspots["g"] * CLK == pytest.approx(500)
    assert pred.hotspots["s"] * CLK == pytest.approx(36)


def test_bandwidth_penalty_beyond_max_p():
    # 16 warps each one load of 4 transactions: TLP_m = 16 > max_p = 8 ->
    # 500/16 + 128*4/64 = 39.25 per request, 16 requests: 628 = 500 + 16 * 8
    pred = predict("resios", kernel([GlobalMem("g", transactions=4)], warps=16), ONE_SM)
    assert cycles(pred) == pytest.approx(628)
    # coalesced: 500 + 16 * 2 = 532
    pred1 = predict("resios", kernel([GlobalMem("g", transactions=1)], warps=16), ONE_SM)
    assert cycles(pred1) == pytest.approx(532)


def test_bandwidth_is_shared_by_active_sms():
    # 7 blocks of 16 warps on the 7-SM GTX 460: each SM gets 64/7 B/cycle,
    # penalty 128/(64/7) = 14 -> 500 + 16 * 14 = 724 cycles
    pred = predict("resios", kernel([GlobalMem("g")], warps=16, blocks=7), GTX460)
    assert cycles(pred) == pytest.approx(724)


def test_resident_limit_and_extrapolation():
    # 2 blocks of 1 warp on one SM but only 1 warp resident: the blocks run one
    # after the other, 22 + 22 = 44 cycles, whether simulated or extrapolated.
    p = kernel([Compute("int_mad")], blocks=2, active_warps_per_sm=1)
    assert cycles(ResiosModel().predict(p, ONE_SM)) == pytest.approx(44)          # 1 wave x 2
    assert cycles(ResiosModel(max_sim_blocks=2).predict(p, ONE_SM)) == pytest.approx(44)
    # busiest SM decides: 15 blocks on 7 SMs -> 3 blocks on one SM -> 66
    p15 = kernel([Compute("int_mad")], blocks=15, active_warps_per_sm=1)
    assert cycles(predict("resios", p15, GTX460)) == pytest.approx(66)


def test_loop_of_10_equals_unrolled_trace():
    body = (GlobalMem("g", transactions=2), Compute("int_mad"), SharedMem("s", conflict_degree=2))
    looped = predict("resios", kernel([Loop(body, 10)], warps=12), ONE_SM)
    unrolled = predict("resios", kernel(list(body) * 10, warps=12), ONE_SM)
    assert looped.time_s == pytest.approx(unrolled.time_s)
    assert dict(looped.hotspots) == pytest.approx(dict(unrolled.hotspots))
    assert looped.time_s > 0 and looped.hotspots["g"] > 0


def test_compressed_loop_keeps_single_warp_time():
    # budget of 4 items: the 2-item body is unrolled 2x with weight 5 each
    body = (GlobalMem("g"), Compute("int_mad"))
    ev = flatten((Loop(body, 10),), ONE_SM, max_events=4)
    assert len(ev) == 4 and all(e.weight == 5 for e in ev)
    small = ResiosModel(max_events=4).predict(kernel([Loop(body, 10)]), ONE_SM)
    assert cycles(small) == pytest.approx(10 * (500 + 22))
    # fractional trips: 2.5 iterations = 2.5 x (500 + 22)
    assert cycles(predict("resios", kernel([Loop(body, 2.5)]), ONE_SM)) == pytest.approx(2.5 * 522)


def test_branch_is_serialized():
    br = Branch(then=(Compute("fp32_add"),), orelse=(Compute("int_mad"), GlobalMem("g")))
    a = predict("resios", kernel([br], warps=3), ONE_SM)
    b = predict("resios", kernel([Compute("fp32_add"), Compute("int_mad"), GlobalMem("g")], warps=3), ONE_SM)
    assert a.time_s == pytest.approx(b.time_s)
    assert cycles(predict("resios", kernel([br]), ONE_SM)) == pytest.approx(16 + 22 + 500)


def test_ilp_from_loop_and_profile():
    # ILP 2 halves the latency of dependent-free compute: 100 * 22/2 = 1100 for one warp
    assert cycles(predict("resios", kernel([Loop((Compute("int_mad"),), 100, ilp=2)]), ONE_SM)) \
        == pytest.approx(1100)
    assert cycles(predict("resios", kernel([Loop((Compute("int_mad"),), 100)], ilp=2), ONE_SM)) \
        == pytest.approx(1100)


def test_trace_synthesized_from_counts():
    # no trace: loop of 10 (max access count) x (load; 2 fma): 10 * (500 + 2*18) = 5360
    p = KernelProfile(grid_blocks=1, block_threads=32, inst_counts={"fp32_fma": 20},
                      global_accesses=(GlobalAccess("a", count=10),))
    pred = predict("resios", p, ONE_SM)
    assert cycles(pred) == pytest.approx(5360)
    assert any("no trace" in n for n in pred.notes)


def test_unknown_class_falls_back_with_note():
    pred = predict("resios", kernel([Compute("warp_shuffle")]), ONE_SM)
    assert cycles(pred) == pytest.approx(18)                    # default class fp32_fma
    assert any("warp_shuffle" in n for n in pred.notes)


def test_simulation_is_fast_on_a_full_wave():
    import time
    p = KernelProfile(grid_blocks=10_000, block_threads=256, trace=(
        Loop((GlobalMem("a"), GlobalMem("b", transactions=8), Compute("fp32_fma", 4)), 1_000_000),))
    t0 = time.perf_counter()
    pred = predict("resios", p, GTX460)
    assert time.perf_counter() - t0 < 5
    assert pred.extras["events_per_warp"] <= 1000 and pred.extras["simulated_warps"] == 48
    assert pred.hotspots["b"] > pred.hotspots["a"] * 0.5
