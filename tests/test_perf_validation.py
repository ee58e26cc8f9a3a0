"""Predicted vs measured on shared/validation (naive PolyBench/GPU kernels on A10, H100 PCIe, H100 SXM).

Bands.  The seed's own validation (seed 004, Table 7.1) reports precisions
(predicted / measured) from 0.93 to 2.12 for its five experiments on the GPU
it was calibrated on.  We ask the same of the median over the 21 cases, per
model: within 0.5 .. 2 (a factor of two either way), for all cases and for the
held-out cases separately (they were not used to choose any GPU parameter),
and keep every single case within 0.4 .. 2.5 so a regression on one kernel
shows.  Measured at the time of writing (tests/bench_validation.py):
median GPUPerf 1.00 (held-out 1.06), Resios 1.16 (held-out 1.21); worst case
x1.67.  The register count comes from the Alg. 6.4 estimate here (ptxas gives
the same occupancy on these kernels and the same ratios; the bench uses it).
"""
from __future__ import annotations

import math

import pytest

from c2gpu.model import MODELS
import validation_data as validation

pytestmark = pytest.mark.skipif(validation.validation_dir() is None,
                                reason="shared/validation not found (set C2GPU_VALIDATION_DIR)")


@pytest.fixture(scope="module")
def cases():
    return validation.run(registers="estimate")


def test_every_case_is_predicted_by_every_model(cases):
    rows = validation.measurements()
    assert len(rows) == 21 and len(cases) == 21
    assert {(c.kernel, c.gpu) for c in cases} == {(r["kernel"], r["gpu"]) for r in rows}
    for c in cases:
        assert set(c.predicted) == set(MODELS)
        for m, t in c.predicted.items():
            assert math.isfinite(t) and t > 0, (c.kernel, c.gpu, m)


def test_no_prediction_is_below_the_roofline(cases):
    # the cases cover every kernel x GPU (asserted above), so this checks every predicted kernel
    assert {(c.kernel, validation.GPU_KEYS[c.gpu]) for c in cases} == {
        (kernel, gpu) for kernel in validation.CASES for gpu in validation.GPU_KEYS.values()}
    for c in cases:
        for perf in c.perfs:
            for k in perf.kernels:
                for m, r in k.predictions.items():
                    assert r.raw_time_s >= k.roofline.bound_s, (c.kernel, c.gpu, k.name, m)
                    assert not r.clamped


def test_median_ratio_per_model_is_within_a_factor_of_two(cases):
    print("\n" + validation.table(cases))
    for m in MODELS:
        for held_out in (None, True):
            med = validation.median_ratio(cases, m, held_out)
            assert 0.5 <= med <= 2.0, f"{m}: median predicted/measured {med:.2f} ({'held-out' if held_out else 'all'})"
        for c in cases:
            assert 0.4 <= c.ratio(m) <= 2.5, f"{m} {c.kernel} on {c.gpu}: ratio {c.ratio(m):.2f}"


def test_held_out_cases_are_marked_and_disjoint_from_calibration():
    assert set(validation.HELD_OUT).isdisjoint(validation.CALIBRATION)
    assert set(validation.HELD_OUT) | set(validation.CALIBRATION) == set(validation.CASES)
