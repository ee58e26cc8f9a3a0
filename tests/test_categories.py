"""Seed 002's time categories (c2gpu/perf/categories.py): they sum to the predicted time, and each one shows up
where the kernel has what feeds it."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import jsonschema
import pytest

from c2gpu import units
from c2gpu.codegen import build_nest_code
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.frontend.preprocess import parse_define
from c2gpu.model.gpu import load_gpu
from c2gpu.model.inputs import KernelProfile, MachineParams
from c2gpu.perf.categories import CATEGORIES, busy_share, nest_categories
from c2gpu.perf.predict import predict_nest
from c2gpu.perf.profile import PerfError
from c2gpu.perf.report import performance_json, performance_text
from c2gpu.report.html import CATEGORY_COLOURS, _categories_view

from conftest import TESTDATA, sweep, write_c

H100 = load_gpu("h100-sxm")
PLAN = ["normalize", "dependence", "mapping", "shared-memory", "plan"]
SMALL = ("N=48", "M=40", "NI=48", "NJ=40", "NK=36", "NL=44", "NX=48", "NY=40", "TMAX=3", "TSTEPS=3", "H=24",
         "W=20", "ROWS=30", "COLS=20", "NBODIES=64", "BINS=16", "FILTER_SIZE=5", "MINI_DATASET")


def plans(path, defines=(), **opts):
    """(nest, NestPlan) of every planned nest of a file (shared memory as the options say, default off)."""
    m = make_manager(PLAN, {"assume_no_alias": True, "shared_memory": "off", **opts})
    prog = m.run(load_program(str(path), PreprocessOptions(defines=tuple(parse_define(d) for d in defines),
                                                           include_dirs=(str(TESTDATA / "polybench"),))))
    return [(n, m.result("plan", n)) for n in prog.nests if m.result("plan", n) is not None]


def predict(path, defines=(), env=None, **opts):
    """The first nest's prediction on the H100 (its mapping's blocks), the transfers of its CUDA included."""
    (nest, plan), *_ = plans(path, defines, **opts)
    return predict_nest(nest, plan, H100, env or {}, code=build_nest_code(nest, plan), search=False,
                        registers="estimate")


def _check_sums(perf):
    for k in perf.kernels:
        assert set(k.categories) == set(perf.models)
        for m, tc in k.categories.items():
            parts = tc.per_launch_s
            assert list(parts) == list(CATEGORIES) and all(v >= 0 for v in parts.values())
            assert math.fsum(parts.values()) == k.predictions[m].time_s          # to the last bit
            assert math.fsum(tc.all_launches_s.values()) == k.predictions[m].time_s * k.launches
    for m in perf.models:
        nc = nest_categories(perf, m)
        assert nc.communicate_s == perf.transfer_s and nc.launches_s == perf.launch_overhead_s
        assert nc.total_s == pytest.approx(perf.total_s(m), rel=1e-12)


TESTDATA_FILES = sorted(TESTDATA.glob("*.c")) + sorted((TESTDATA / "polybench").glob("*.c")) + \
    sorted((TESTDATA / "validation").glob("*.c"))
# by default a reduction tree, a host time loop, halos and a triangular nest; -m slow runs every file
DEFAULT_FILES = ("reductions.c", "jacobi-2d-imper.c", "convolution.c", "syrk.c")


@pytest.mark.parametrize("path", sweep(TESTDATA_FILES, [p for p in TESTDATA_FILES if p.name in DEFAULT_FILES]),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_categories_sum_to_the_predicted_time_of_every_testdata_kernel(path):
    checked = 0
    for nest, plan in plans(path, SMALL):
        try:
            perf = predict_nest(nest, plan, H100, {p: 37 for p in nest.params}, search=False, registers="estimate")
        except PerfError:
            continue
        _check_sums(perf)
        checked += len(perf.kernels)
    assert checked > 0


def test_a_kernel_in_a_host_loop_counts_every_launch():
    perf = predict(TESTDATA / "validation" / "jacobi-2d-imper.c", ("N=200", "TSTEPS=7"))
    assert [k.launches for k in perf.kernels] == [7, 7]
    nc = nest_categories(perf)
    assert nc.launches == 14
    for c in CATEGORIES:
        assert nc.kernels_s[c] == pytest.approx(sum(k.categories[perf.default_model].per_launch_s[c] * 7
                                                    for k in perf.kernels), rel=1e-12)
    _check_sums(perf)


def test_a_memory_bound_kernel_is_limited_by_global_memory():
    perf = predict(TESTDATA / "vecadd.c", env={"n": 1 << 24})
    (k,) = perf.kernels
    assert k.roofline.limiter == "memory"
    for m, tc in k.categories.items():
        assert tc.limiter in ("global_read", "global_write"), (m, tc.per_launch_s)
        # c = a + b: two loads per store
        assert tc.per_launch_s["global_read"] > tc.per_launch_s["global_write"] > 0, m
    assert k.categories["gpuperf"].limiter_text.startswith("global reads: ")


DIVERGENT = """
#define N 1048576
float a[N], b[N];
void f(void) {
    for (int i = 0; i < N; i++) {
        if (i % 2 == 0)
            a[i] = b[i] * b[i] + 1.0f;
    }
}
"""


def test_a_divergent_guard_shows_wasted_computation(tmp_path):
    div = predict(write_c(tmp_path, DIVERGENT, "div.c"))
    plain = predict(write_c(tmp_path, DIVERGENT.replace("if (i % 2 == 0)", ""), "plain.c"))
    for m in div.models:
        assert div.kernels[0].categories[m].per_launch_s["divergence"] > 0, m
        assert plain.kernels[0].categories[m].per_launch_s["divergence"] == 0, m


def test_gpuperf_pays_a_diverged_warps_instructions_once(tmp_path):
    """GPUPerf's #insts is a warp's count (seed 000, Table 2; both paths of a diverged branch, Sec. 4.1.1), so
    O_CFdiv is a part of it (eq 2, 3, 6), worked out by hand for DIVERGENT on the H100 SXM: 2^20 threads in
    blocks of 256 = 32768 warps over 132 SMs.  Each warp issues 9 instructions: the index and bounds check
    (int_mad, compare), and the guarded statement's 7: 2 loads of b[i] and the store of a[i], their 3 address
    adds and the fma.  Every warp has 16 lanes with an even i, so it issues the statement (f_w = 1) for half its
    lanes (f_t = 1/2): 3.5 of its 9 instructions are issued only because it diverged.  Every class has latency
    4; ITILP = min(ILP 1.25 x N 64, ITILP_max 4 / (32 / 128 SIMD lanes)) = 16 (eq 4, 5); eq 3's cost of an
    instruction of every warp of an SM is 32768 / 132 x 4 / 16 = 62.06 cycles.  T_comp = 9 x 62.06 = 558.5
    cycles, of which O_CFdiv 3.5 x 62.06 = 217.2 and W_parallel 5.5 x 62.06 = 341.3 (before: W_parallel over
    all 9 plus O_CFdiv over 0.5 fma = 589.6 cycles, the fma's wasted half paid twice and the rest not named)."""
    div = predict(write_c(tmp_path, DIVERGENT, "div.c"))
    plain = predict(write_c(tmp_path, DIVERGENT.replace("if (i % 2 == 0)", ""), "plain.c"))
    (k,), (kp,) = div.kernels, plain.kernels
    g, gp = k.predictions["gpuperf"].extras, kp.predictions["gpuperf"].extras
    assert k.block == (256, 1, 1) and g["insts"] == 9 and g["avg_inst_lat_cycles"] == 4 and g["ITILP"] == 16
    assert g["warps_per_sm"] == pytest.approx(32768 / 132)
    per_inst = 32768 / 132 * 4 / 16 / H100.core_clock_ghz * 1e-9          # seconds, eq 3 per instruction
    assert g["T_comp"] == pytest.approx(9 * per_inst, rel=1e-9)
    assert g["O_CFdiv"] == pytest.approx(3.5 * per_inst, rel=1e-9)
    assert g["W_parallel"] == pytest.approx(5.5 * per_inst, rel=1e-9)
    # the warps issue the same 9 instructions with or without the guard: divergence splits T_comp, adds nothing
    assert gp["insts"] == 9 and gp["O_CFdiv"] == 0 and g["T_comp"] == pytest.approx(gp["T_comp"], rel=1e-12)
    # seed 002's split keeps eq 2's proportions: divergence / compute = O_CFdiv / W_parallel = 3.5 / 5.5
    tc = k.categories["gpuperf"].per_launch_s
    assert tc["divergence"] / tc["compute"] == pytest.approx(3.5 / 5.5, rel=1e-9)
    _check_sums(div)


def test_a_tiled_kernel_shows_explicit_synchronization():
    tiled = predict(TESTDATA / "matmul.c", ("N=512",), shared_memory="auto")
    plain = predict(TESTDATA / "matmul.c", ("N=512",))
    (k,) = tiled.kernels
    assert k.tiles, "matmul's k loop is tiled in shared memory"
    assert k.categories["gpuperf"].per_launch_s["explicit_sync"] > 0
    assert k.categories["resios"].per_launch_s["explicit_sync"] == 0      # Resios does not model barriers
    assert plain.kernels[0].categories["gpuperf"].per_launch_s["explicit_sync"] == 0


def test_fewer_threads_than_the_gpu_holds_are_idle():
    small = predict(TESTDATA / "vecadd.c", env={"n": 4096})
    big = predict(TESTDATA / "vecadd.c", env={"n": 1 << 24})
    for m in small.models:
        s, b = small.kernels[0].categories[m], big.kernels[0].categories[m]
        # 4096 threads fill 16 of the H100's 132 SMs (256-thread blocks): most of its warp slots have no thread;
        # the limiter is still the work the kernel does (idle slots are a share of the slots, not a cost)
        assert s.share("idle") > 0.9 and s.limiter != "idle", m
        assert s.limiter == max((c for c in s.per_launch_s if c != "idle"), key=s.per_launch_s.get), m
        assert s.share("idle") == pytest.approx(1 - s.busy_share, rel=1e-9)
        # 16M threads: 65,536 blocks over 132 SMs, only the last wave's imbalance is idle
        assert b.share("idle") < 0.01, m


def test_busy_share_counts_empty_sms_empty_slots_and_lanes():
    m = MachineParams("toy", sm_count=4, clock_ghz=1.0, max_warps_per_sm=8, max_blocks_per_sm=8)
    # one block of one warp: 1 of 4 SMs, 1 of the 8 blocks an SM holds
    assert busy_share(KernelProfile(grid_blocks=1, block_threads=32), m) == pytest.approx(1 / 4 * 1 / 8)
    # 12 blocks of 2 warps (4 resident per SM): the busiest SM runs 3, the 4 SMs could run 12 of 16 slots' worth
    assert busy_share(KernelProfile(grid_blocks=12, block_threads=64), m) == pytest.approx(12 / 12 * 3 / 4)
    # 9 blocks over 4 SMs: the busiest runs 3 (imbalance 9 / 12); 48 of the 64 lanes do work
    p = KernelProfile(grid_blocks=9, block_threads=64, n_threads=9 * 48)
    assert busy_share(p, m) == pytest.approx(9 / 12 * 3 / 4 * 48 / 64)
    # a full GPU: 16 blocks of 2 warps, 4 per SM
    assert busy_share(KernelProfile(grid_blocks=16, block_threads=64), m) == 1.0


# --------------------------------------------------------------------------- the reports

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "c2gpu" / "schemas" / "analysis.schema.json").read_text())


def test_text_json_and_html_carry_the_categories_computed_once():
    perf = predict(TESTDATA / "vecadd.c", env={"n": 1 << 24})
    (k,) = perf.kernels
    tc = k.categories["gpuperf"]
    # --details: one line per kernel with every category and the limiter, one for the nest
    text = performance_text(perf)
    line = next(ln for ln in text.splitlines() if "where the time goes" in ln)
    assert f"global reads {units.seconds(tc.per_launch_s['global_read'])}" in line
    assert line.endswith(f"limiter: {tc.limiter_text}")
    nest_line = next(ln for ln in text.splitlines() if "where the GPU time goes" in ln)
    assert f"communicate (host-device transfers) {units.seconds(perf.transfer_s)}" in nest_line
    assert nest_line.endswith(f"= {units.seconds(perf.total_s())}")
    # JSON: valid, the same numbers
    doc = performance_json(perf)
    jsonschema.validate(doc, {"$defs": SCHEMA["$defs"], "$ref": "#/$defs/performance"})
    kj = doc["kernels"][0]["time_categories"]
    assert set(kj) == set(perf.models)
    assert kj["gpuperf"]["per_launch_s"] == tc.per_launch_s and kj["gpuperf"]["limiter"] == "global_read"
    assert doc["time_categories"]["gpuperf"]["total_s"] == pytest.approx(doc["total_time_s"]["gpuperf"], rel=1e-12)
    # HTML: the nest's bar (communicate, launches, the kernels' categories) and the kernel's, each to 100%
    view = _categories_view(doc, "gpuperf")
    bars = re.findall(r'<rect x="([\d.]+)" y="(\d+)" width="([\d.]+)" height="24" fill="(#\w+)"', view["chart"])
    rows = {}
    for x, y, w, colour in bars:
        rows.setdefault(int(y), []).append((float(w), colour))
    nest_row, kernel_row = (rows[y] for y in sorted(rows))
    assert sum(w for w, _ in kernel_row) == pytest.approx(960 - 200 - 140, abs=1.0)
    widths = {colour: w for w, colour in kernel_row}
    reads, writes = CATEGORY_COLOURS["global_read"], CATEGORY_COLOURS["global_write"]
    assert widths[reads] / widths[writes] == pytest.approx(tc.per_launch_s["global_read"] /
                                                           tc.per_launch_s["global_write"], rel=0.01)
    assert perf.transfer_s > 0 and CATEGORY_COLOURS["communicate"] in {c for _, c in nest_row}
    assert [words for _, words, *_ in view["legend"]] == ["communicate", "launches", *CATEGORIES.values()]
    assert view["kernels"] == [{"name": k.name, "per_launch": units.seconds(tc.time_s), "launches": 1.0,
                                "limiter": tc.limiter_text}]



def test_the_default_verdict_table_shows_each_kernels_time_split():
    """The brief table (no --details) has a `kernel time` row per kernel: its time per launch and its categories,
    largest first, the shares adding up to the whole."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "c2gpu", "analyze", str(TESTDATA / "matmul.c"), "--gpu", "h100-sxm",
                          "-D", "N=512", "--no-run"], capture_output=True, text=True, check=True).stdout
    row = re.search(r"^  kernel time   c2gpu_matmul_16_k0 [\d.]+ \S+ per launch: (.+)$", out, re.M)
    assert row, out
    shares = [(name.strip(), int(pct)) for name, pct in re.findall(r"([a-z ]+?) (\d+)%", row.group(1))]
    assert shares == sorted(shares, key=lambda x: -x[1]) and 95 <= sum(p for _, p in shares) <= 105
    assert {name for name, _ in shares} <= set(CATEGORIES.values()) and len(shares) >= 2
