"""Roofline lower bound, its check, and the model registry's use of it."""

from dataclasses import replace

import pytest

from c2gpu.model import (GTX460, MODELS, GlobalAccess, InstClass, KernelProfile, MachineParams,
                         Prediction, predict, register, roofline, roofline_check)

# 2 SMs at 1 GHz, fp32 FMA 32 ops/cycle/SM -> peak 2 * 32 * 2 * 1e9 = 128 GFLOP/s; 16 GB/s DRAM
M = MachineParams(name="toy", sm_count=2, clock_ghz=1.0, inst={"fp32_fma": InstClass(22, 32)},
                  dram_bw_gbs=16.0)


def vec_profile(fma=6, **kw):
    # 16 x 256 = 4096 threads, each: 2 loads + 1 store of 4 B = 12 B, fma*2 flops
    return KernelProfile(grid_blocks=16, block_threads=256, inst_counts={"fp32_fma": fma},
                         global_accesses=(GlobalAccess("a", 2), GlobalAccess("c", 1, is_store=True)), **kw)


def test_peaks():
    assert M.peak_flops == pytest.approx(128e9)
    assert GTX460.peak_flops == pytest.approx(2 * 32 * 7 * 1.35e9)   # 604.8 GFLOP/s (no dual issue)
    assert GTX460.peak_flops_fp64 == GTX460.peak_flops              # no fp64 row: fp32 peak kept


def test_memory_limited_bound():
    b = roofline(vec_profile(), M)
    assert b.memory_s == pytest.approx(4096 * 12 / 16e9)        # 49152 B -> 3.072 us
    assert b.compute_s == pytest.approx(4096 * 12 / 128e9)      # 49152 flop -> 0.384 us
    assert b.bound_s == pytest.approx(3.072e-6)
    assert b.limiter == "memory" and b.intensity == pytest.approx(1.0)


def test_compute_limited_bound():
    b = roofline(vec_profile(fma=600), M)
    assert b.compute_s == pytest.approx(4096 * 1200 / 128e9)    # 38.4 us
    assert b.bound_s == b.compute_s and b.limiter == "compute"
    assert b.intensity == pytest.approx(100.0)


def test_explicit_totals_and_fp64():
    p = KernelProfile(grid_blocks=1, block_threads=32, dram_bytes=8e9, flops=0.0, flops_fp64=1e9)
    assert roofline(p, M).memory_s == pytest.approx(0.5)
    assert roofline(p, M).compute_s == pytest.approx(1e9 / 128e9)       # fp32 peak stands in
    m64 = replace(M, peak_gflops_fp64=4.0)
    b = roofline(p, m64)
    assert b.compute_s == pytest.approx(0.25) and b.bound_s == pytest.approx(0.5)
    b2 = roofline(replace(p, dram_bytes=0.0), m64)
    assert b2.bound_s == pytest.approx(0.25) and b2.limiter == "compute" and b2.intensity == float("inf")


def test_check_flags_predictions_below_the_bound():
    p = vec_profile()
    ok = roofline_check(Prediction("x", 6.144e-6), p, M)
    assert ok.ok and ok.ratio == pytest.approx(2.0)
    bad = roofline_check(Prediction("x", 1e-6), p, M)
    assert not bad.ok and bad.ratio == pytest.approx(1 / 3.072)
    assert "below" in bad.message


def test_gpuperf_memory_bound_example_sits_at_twice_the_bound():
    # tests/test_model_gpuperf.py memory-bound example: T_exec 6144 cycles, T_mem_min 3072 = bound
    p = KernelProfile(
        grid_blocks=16, block_threads=256, active_warps_per_sm=16, ilp=2,
        inst_counts={"fp32_fma": 6, "int_add": 1},
        global_accesses=(GlobalAccess("a", 2), GlobalAccess("c", 1, transactions=4, is_store=True)))
    m = replace(M, inst={"fp32_fma": InstClass(22, 32), "int_add": InstClass(15, 32)},
                departure_delay_cycles=10, dram_latency_cycles=400, cache_hit_latency_cycles=100)
    pred = predict("gpuperf", p, m)
    c = roofline_check(pred, p, m)
    assert c.ok and c.ratio == pytest.approx(2.0)
    assert pred.extras["T_mem_min"] == pytest.approx(c.bound.memory_s)


def test_registry_plugs_models_and_notes_roofline_violations():
    class TooFast:
        name = "too_fast"

        def predict(self, profile, machine):
            return Prediction(self.name, 1e-12, {"all": 1e-12})

    register(TooFast())
    try:
        pred = predict("too_fast", vec_profile(), M)
        assert pred.time_s == 1e-12
        assert any("below the bound" in n for n in pred.notes)
    finally:
        MODELS.pop("too_fast")
    with pytest.raises(KeyError):
        predict("too_fast", vec_profile(), M)
    assert set(MODELS) >= {"resios", "gpuperf"}


def test_both_models_respect_the_bound_on_a_streaming_kernel():
    # 16M-element vector add on the GTX 460: 201 MB over 86.4 GB/s = 2.33 ms
    n = 1 << 24
    p = KernelProfile(grid_blocks=n // 256, block_threads=256, inst_counts={"fp32_add": 1, "int_add": 4},
                      global_accesses=(GlobalAccess("a"), GlobalAccess("b"), GlobalAccess("c", is_store=True)))
    assert roofline(p, GTX460).bound_s == pytest.approx(n * 12 / 86.4e9)
    for name in ("resios", "gpuperf"):
        pred = predict(name, p, GTX460)
        c = roofline_check(pred, p, GTX460)
        assert c.ok and 1.0 <= c.ratio < 3.0, (name, c.message)
