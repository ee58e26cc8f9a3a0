"""`c2gpu gpus` and `c2gpu analyze --gpu`: the performance report on the command line, text and JSON."""
from __future__ import annotations

import json
import re

import jsonschema
import pytest

from c2gpu.drivers.cli import main
from c2gpu.model.gpu import list_gpus

from conftest import ROOT, TESTDATA, write_c

SCHEMA = json.loads((ROOT / "c2gpu" / "schemas" / "analysis.schema.json").read_text())
UNITS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def seconds(text: str) -> float:
    v, unit = text.split()
    return float(v) * UNITS[unit]


def test_gpus_lists_the_whole_catalog(capsys):
    code, out, err = run(capsys, "gpus")
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].split()[:4] == ["key", "name", "SMs", "clock"]
    body = lines[2:]
    assert len(body) == len(list_gpus()) == 13
    for g, line in zip(list_gpus(), body):
        assert line.startswith(g.key) and str(g.sm_count) in line and "GB/s" in line and "GFLOP/s" in line \
            and f"PCIe {g.pcie_generation}" in line
    code, out, _ = run(capsys, "gpus", "--format", "json")
    assert [g["key"] for g in json.loads(out)] == [g.key for g in list_gpus()]


@pytest.fixture(scope="module")
def matmul_report():
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["analyze", "--details", "--no-run", "--no-break-even", "--gpu", "a100", "-D", "N=2048", str(TESTDATA / "matmul.c")])
    return code, buf.getvalue()


def test_analyze_matmul_on_a100_shows_both_models_and_the_report(matmul_report):
    code, out = matmul_report
    assert code == 0
    part = out.split("matmul@16", 1)[1].split("\nmain@", 1)[0]
    m = re.search(r"predicted kernel time: resios ([\d.]+ \w+) \| gpuperf ([\d.]+ \w+) \(default\)", part)
    assert m, part
    resios, gpuperf = seconds(m.group(1)), seconds(m.group(2))
    for t in (resios, gpuperf):          # naive 2048^3 matmul on an A100: tens of milliseconds
        assert 1e-3 < t < 100e-3
    rb = re.search(r"roofline bound: ([\d.]+ \w+) \(compute", part)
    assert rb and seconds(rb.group(1)) < min(resios, gpuperf)
    assert seconds(rb.group(1)) == pytest.approx(2 * 2048 ** 3 / 19.49e12, rel=0.01)
    occ = re.search(r"occupancy: (\d+) warps/SM \((\d+)%\)", part)
    assert occ and 0 < int(occ.group(1)) <= 64
    assert "registers" in part and ("ptxas" in part or "estimate" in part)
    assert "block sizes (predicted kernel time per launch; resios on the chosen block only):" in part
    rows = re.findall(r"^\s+(\d+)x(\d+)x1\s+(\d+)\s", part, re.M)
    assert len(rows) >= 10 and all(int(x) * int(y) == int(t) for x, y, t in rows)
    assert "best (search)" in part and "mapping default" in part and "seed 5.2.1 choice" in part
    assert re.search(r"GPUPerf benefits .*B_itilp .*B_serial .*B_fp .*B_memlp", part)
    hot = part.split("hotspots", 1)[1]
    assert re.search(r"(read|write) [ABC]\[[ijk]\]\[[ijk]\] \(line 20\): [\d.]+ \w+ per launch", hot)
    assert re.search(r"transfers \(eq\. 4\.2.*A in 16\.8 MB", part)
    assert "launch overhead: 1 launch x 3.8 µs + 1 synchronize x 7.2 µs = 11 µs" in part   # a100: launch + sync 11 µs
    tot = re.search(r"total \(kernels \+ launches \+ transfers.*\): resios ([\d.]+ \w+), gpuperf ([\d.]+ \w+)", part)
    assert tot and seconds(tot.group(2)) > gpuperf


def test_analyze_json_has_the_performance_and_validates(capsys, tmp_path):
    out_file = tmp_path / "r.json"
    code, _, err = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", "h100-sxm", "-D", "N=256", "--format", "json", "-o", str(out_file),
                       str(TESTDATA / "matmul.c"))
    assert code == 0, err
    doc = json.loads(out_file.read_text())
    jsonschema.validate(doc, SCHEMA)
    perf = doc["files"][0]["nests"][0]["performance"]
    assert perf["gpu"]["key"] == "h100-sxm" and perf["default_model"] == "gpuperf"
    k = perf["kernels"][0]
    assert set(k["predictions"]) == {"resios", "gpuperf"}
    for p in k["predictions"].values():
        assert p["time_s"] >= k["roofline"]["bound_s"]
    assert k["occupancy"]["active_warps_per_sm"] > 0
    assert {"B_itilp", "B_serial", "B_fp", "B_memlp"} <= set(k["gpuperf_benefits_s"])
    assert k["block_candidates"] and any("best (search)" in c["labels"] for c in k["block_candidates"])
    assert perf["total_time_s"]["gpuperf"] >= perf["kernel_time_s"]["gpuperf"] + perf["launch_overhead_s"]
    lc = perf["launch_cost"]     # the wrapper: one launch, one synchronize after it
    assert (lc["launches"], lc["synchronizes"]) == (1, 1)
    assert perf["launch_overhead_s"] == pytest.approx(lc["launch_s"] + lc["synchronize_s"])
    # same input, same bytes
    code, _, _ = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", "h100-sxm", "-D", "N=256", "--format", "json", "-o",
                     str(tmp_path / "r2.json"), str(TESTDATA / "matmul.c"))
    assert (tmp_path / "r2.json").read_text() == out_file.read_text()


def test_param_model_block_and_context_options(capsys):
    code, out, err = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", "v100", "--param", "n=512", "--model", "resios",
                         "--block", "64x4", "--include-context", "--registers", "estimate", "--assume-no-alias",
                         str(TESTDATA / "matmul_ptr.c"))
    assert code == 0, err
    assert "sizes n=512" in out and "block 64x4x1 (forced with --block)" in out
    assert re.search(r"predicted kernel time: resios [\d.]+ \w+ \(default\)\n", out)
    assert "gpuperf" not in out.split("predicted kernel time")[1].split("\n")[0]
    assert "+ context creation 150 ms" in out


def test_missing_param_is_explained_not_crashed(capsys, tmp_path):
    # matmul() is not static and the file has no main: no call in the file tells n
    src = write_c(tmp_path, (TESTDATA / "matmul_ptr.c").read_text().split("int main(void)")[0])
    code, out, err = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", "a100", "--registers",
                         "estimate", "--assume-no-alias", str(src))
    assert code == 0
    assert "--param n=VALUE" in out


def test_a_size_the_file_shows_needs_no_param(capsys):
    """matmul_ptr.c's main calls matmul(N, ...) with N = 256: the model sizes the nest without --param."""
    code, out, err = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", "a100", "--registers",
                         "estimate", str(TESTDATA / "matmul_ptr.c"))
    assert code == 0
    assert "--param n=VALUE" not in out
    assert "size from the file: n = 256 at the call of matmul()" in out
    assert "grid 8x16x1 = 128 blocks, 65536 threads" in out      # 256 x 256 iterations on 32x16 blocks


def test_unknown_gpu_suggests_without_traceback(capsys):
    code, out, err = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", "a10o", str(TESTDATA / "saxpy.c"))
    assert code == 2
    assert "did you mean" in err and "'a100'" in err and "Traceback" not in err
    code, out, err = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", "nosuch.toml", str(TESTDATA / "saxpy.c"))
    assert code == 1 and "not found" in err and "Traceback" not in err


def test_bad_param_and_gpu_only_options(capsys):
    code, _, err = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", "a100", "--param", "n", str(TESTDATA / "saxpy.c"))
    assert code == 2 and "--param" in err
    code, _, err = run(capsys, "analyze", "--param", "n=3", str(TESTDATA / "saxpy.c"))
    assert code == 2 and "need --gpu" in err


def test_user_gpu_file_and_time_loop(capsys, tmp_path):
    gpu = write_c(tmp_path, 'inherits = "a100"\n[spec]\ncore_clock_ghz = { value = 1.2, source = "test clock" }\n',
                  "slow.toml")
    code, out, err = run(capsys, "analyze", "--details", "--no-run", "--no-break-even", "--gpu", str(gpu), "-D", "N=256", "-D", "TSTEPS=5", "--registers",
                         "estimate", "--assume-no-alias", str(TESTDATA / "validation" / "jacobi-2d-imper.c"))
    assert code == 0, err
    assert "[slow]" in out and "5 launches" in out and "launch overhead: 10 launches x 3.8 µs + 1 synchronize x 7.2 µs = 45.2 µs" in out


def test_performance_passes_are_registered(capsys):
    code, out, _ = run(capsys, "passes")
    for name in ("coalescing", "ilp", "intensity", "registers", "occupancy", "traffic", "performance",
                 "kernel-analysis"):
        assert re.search(rf"^{name}  \(analysis, from c2gpu\[{name}\]\)", out, re.M), name


def test_analysis_passes_run_alone(capsys):
    from c2gpu.frontend import PreprocessOptions, load_program
    from c2gpu.frontend.preprocess import parse_define
    from c2gpu.pipeline import PassManager
    from c2gpu.registry import available_passes
    opts = {"gpu": "a100", "registers": "estimate", "assume_no_alias": True}
    mgr = PassManager(available_passes(), ["normalize", "coalescing", "ilp", "occupancy", "registers", "traffic",
                                           "intensity"], opts)
    prog = mgr.run(load_program(str(TESTDATA / "matmul.c"), PreprocessOptions(defines=(parse_define("N=64"),))))
    nest = prog.nests[0]
    name = "c2gpu_matmul_16_k0"
    co = {c.text: c for c in mgr.result("coalescing", nest)[name]}
    assert co["A[i][k]"].sectors == 1 and co["B[k][j]"].sectors == 4
    assert mgr.result("ilp", nest)[name]["ilp"] == pytest.approx(1.5)
    assert mgr.result("occupancy", nest)[name].active_warps_per_sm > 0
    assert mgr.result("registers", nest)[name].count > 0
    assert mgr.result("traffic", nest)[name].dram_lower_bound > 0
    assert mgr.result("intensity", nest)[name].flops == 2 * 64 ** 3
