"""Predicted vs measured on testdata/validation/naive_cuda_measured.tsv (naive PolyBench/GPU kernels on A10, H100 PCIe, H100 SXM).

Bands.  The seed's own validation (seed 004, Table 7.1) reports precisions
(predicted / measured) from 0.93 to 2.12 for its five experiments on the GPU
it was calibrated on.  We ask of every handed-over case (kernel x GPU with a
row in the TSV), per model, to be within a factor of two either way, and of
the median over the cases, for all cases and for the held-out ones separately
(they were not used to choose any GPU parameter), the same.  Measured at the
time of writing (tests/bench_validation.py): median GPUPerf 0.96 (held-out
1.05), Resios 1.12 (held-out 1.20); worst case x1.72 (convolution-2d on the
H100 SXM, GPUPerf 0.58).  The register count comes from the Alg. 6.4 estimate
here (ptxas gives the same occupancy on these kernels and the same ratios; the
bench uses it).

The cases the TSV does not have (held back) are predicted and never compared;
doitgen and convolution-3d keep a parallel loop on the host with a launch per
iteration and adi its column sweeps, as their CUDA programs do (the mapper's
host structures, `--map host:...`), and a test checks each runs with the CUDA
program's launches.
"""
from __future__ import annotations

import math

import pytest

from c2gpu.model.gpu import load_gpu
from c2gpu.model import MODELS
from c2gpu.perf.predict import SYNC_EACH_LAUNCH
import validation_data as validation



@pytest.fixture(scope="module")
def cases():
    return validation.run(registers="estimate")


def test_every_handed_over_case_is_predicted_by_every_model(cases):
    rows = validation.measurements()
    assert len(rows) == 21
    measured = [c for c in cases if c.measured_s is not None]
    assert {(c.kernel, c.gpu) for c in measured} == {(r["kernel"], r["gpu"]) for r in rows}
    for c in measured:
        assert c.compared, f"{c.kernel} on {c.gpu}: {c.not_expressed}"
        assert set(c.predicted) == set(MODELS)
        for m, t in c.predicted.items():
            assert math.isfinite(t) and t > 0, (c.kernel, c.gpu, m)
    # every kernel of CASES on every GPU is in the run, measured or not
    assert {(c.kernel, c.gpu) for c in cases} == {(k, g) for k in validation.CASES for g in validation.GPU_KEYS}


def test_no_prediction_is_below_the_roofline(cases):
    for c in validation.compared(cases):
        for perf in c.perfs:
            for k in perf.kernels:
                for m, r in k.predictions.items():
                    assert r.raw_time_s >= k.roofline.bound_s, (c.kernel, c.gpu, k.name, m)
                    assert not r.clamped


def test_every_handed_over_case_is_within_a_factor_of_two_on_every_gpu(cases):
    print("\n" + validation.table(cases))
    for gpu in validation.GPU_KEYS:
        sel = validation.compared(cases, gpu=gpu)
        assert len(sel) == 7, gpu
        for m in MODELS:
            for c in sel:
                assert 0.5 <= c.ratio(m) <= 2.0, f"{m} {c.kernel} on {c.gpu}: ratio {c.ratio(m):.2f}"
    for m in MODELS:
        for held_out in (None, True):
            med = validation.median_ratio(cases, m, held_out)
            assert 0.5 <= med <= 2.0, f"{m}: median predicted/measured {med:.2f} ({'held-out' if held_out else 'all'})"


def test_launch_cost_follows_the_measured_host_code(cases):
    """The measured programs synchronize after every launch (jacobi-2d-imper: 40 launches, 40 synchronizes), mvt
    once after its two back-to-back launches: the prediction counts what each program does."""
    by = {(c.kernel, c.gpu): c for c in cases}
    jac = by[("jacobi-2d-imper", "H100-SXM")]
    sxm = load_gpu("h100-sxm")
    assert (jac.launches, jac.synchronizes) == (40, 40)
    assert jac.parts["gpuperf"]["launch"] == pytest.approx(40 * sxm.launch_sync_us * 1e-6)
    mvt = by[("mvt", "H100-SXM")]
    assert (mvt.launches, mvt.synchronizes) == (2, 1)
    assert mvt.parts["gpuperf"]["launch"] == pytest.approx(2 * sxm.launch_s + sxm.synchronize_s)
    for c in cases:
        if c.predicted:
            assert c.launches == validation.CASES[c.kernel].launches      # the plan launches what CUDA launches
            want = c.launches if validation.CASES[c.kernel].synchronize == SYNC_EACH_LAUNCH else 1
            assert c.synchronizes == want, c.kernel


def test_gpu_files_carry_the_launch_sync_bound_and_the_fit_stays_above_it(cases):
    """launch + synchronize is the bound whole measured runs allow (the GPU file's source says so); fitting it on
    the calibration cases alone gives more, because the fit absorbs the small kernels' under-prediction."""
    for gpu_name, key in validation.GPU_KEYS.items():
        gpu = load_gpu(key)
        fit = validation.fit_launch_sync_us(validation.compared(cases, held_out=False, gpu=gpu_name), gpu)
        assert gpu.launch_back_to_back_us <= gpu.launch_sync_us <= fit, (key, fit)
        assert "at most" in gpu.sources["launch_sync_us"] and "CALIBRATION cases" in gpu.sources["launch_sync_us"]


def test_summary_per_gpu_gives_median_p90_and_worst(cases):
    sel = validation.compared(cases, held_out=False, gpu="H100-SXM")
    s = validation.summary(sel, "gpuperf")
    ratios = sorted(c.ratio("gpuperf") for c in sel)
    assert s["n"] == 4 and s["median"] == pytest.approx((ratios[1] + ratios[2]) / 2)
    errs = sorted(max(r, 1 / r) for r in ratios)
    assert s["p90"] == errs[-1]                     # nearest rank: the 4th of 4
    assert validation.error_factor(s["worst"]) == errs[-1]
    table = validation.table(cases)
    assert "H100-SXM   held-out" in table and "p90 x" in table and "no measurement (held back" in table


@pytest.mark.parametrize("kernel", ["doitgen", "convolution-3d", "adi"])
def test_held_back_cases_are_expressed_as_the_cuda_programs_run_them(cases, kernel):
    for c in cases:
        if c.kernel == kernel:
            assert c.not_expressed == "" and c.launches == validation.CASES[kernel].launches


def test_held_out_cases_are_marked_and_disjoint_from_calibration():
    assert set(validation.HELD_OUT).isdisjoint(validation.CALIBRATION)
    assert set(validation.HELD_OUT) | set(validation.CALIBRATION) == set(validation.CASES)


def test_back_to_back_launches_on_h100_sxm_fit_the_measured_convolution_3d_run(cases):
    # 254 launches of PolyBench/GPU convolution-3d (256^3), one synchronize at the end, took 0.842 ms in all on an
    # H100 SXM, kernels included (figure quoted in the issue "Never wrong, never misleading"): the launch cost
    # alone may not exceed what is left of that after the kernels (3.8 us a launch, the old estimate, did: 0.965 ms)
    (case,) = [c for c in cases if c.kernel == "convolution-3d" and c.gpu == "H100-SXM"]
    assert case.launches == 254
    assert case.parts["gpuperf"]["launch"] + case.parts["gpuperf"]["kernels"] <= 0.842e-3
