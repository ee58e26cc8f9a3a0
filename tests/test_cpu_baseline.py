"""CPU baseline: the timing harness (c2gpu.cpu.harness), its cache, and the static fallback."""
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from c2gpu.cpu import CpuTiming, cpu_baseline, host_cpu, load_cpu, measure_file, measure_nest, static_estimate
from c2gpu.diagnostics import C2GPUError
from c2gpu.frontend import PreprocessOptions, load_program

from conftest import TESTDATA, requires_tool, project_programs, write_c

needs_cc = requires_tool("cc")

# Small sizes so every testdata program runs in a fraction of a second (the build dominates).
SIZES = {
    "convolution.c": {"H": 128, "W": 128},
    "decrementing.c": {"N": 300},
    "dist2.c": {"N": 10000, "M": 128, "ROWS": 128},
    "dot.c": {"N": 100000},
    "gauss_seidel.c": {"N": 128, "TSTEPS": 4},
    "gemv.c": {"M": 512, "N": 512},
    "histogram.c": {"N": 100000},
    "jacobi2d.c": {"N": 128, "TSTEPS": 5},
    "matmul.c": {"N": 64},
    "matmul_ptr.c": {"N": 64},
    "nbody.c": {"NBODIES": 256},
    "prefix_sum.c": {"N": 100000},
    "reductions.c": {"N": 10000, "ROWS": 128},
    "saxpy.c": {"N": 100000},
    "selected.c": {"N": 128},
    "syrk.c": {"N": 64, "M": 64},
    "vecadd.c": {"N": 100000},
    "while_loop.c": {"N": 200},
    "polybench/atax.c": {"MINI_DATASET": 1},
    "polybench/gemm.c": {"MINI_DATASET": 1},
    "validation/2mm.c": {"NI": 64, "NJ": 64, "NK": 64, "NL": 64},
    "validation/adi.c": {"N": 128, "TSTEPS": 2},
    "validation/atax.c": {"NX": 256, "NY": 256},
    "validation/convolution-3d.c": {"NI": 32, "NJ": 32, "NK": 32},
    "validation/doitgen.c": {"NR": 16, "NQ": 16, "NP": 16},
    "validation/mvt.c": {"N": 256},
    "validation/convolution-2d.c": {"NI": 256, "NJ": 256},
    "validation/fdtd-2d.c": {"NX": 64, "NY": 64, "TMAX": 10},
    "validation/gemm.c": {"NI": 64, "NJ": 64, "NK": 64},
    "validation/gesummv.c": {"N": 256},
    "validation/jacobi-2d-imper.c": {"N": 128, "TSTEPS": 5},
    "validation/syrk.c": {"NI": 64, "NJ": 64},
}
FILES = sorted(str(p.relative_to(TESTDATA)) for p in project_programs())


def opts(rel: str, **extra) -> PreprocessOptions:
    d = {**SIZES.get(rel, {}), **extra}
    return PreprocessOptions(defines=tuple((k, str(v)) for k, v in d.items()),
                             include_dirs=(str(TESTDATA / "polybench"),))


@pytest.fixture(autouse=True)
def private_cache_and_tmp(tmp_path, monkeypatch):
    """Cache and temporary files of each test in its own directory; the test checks it ends empty."""
    monkeypatch.setenv("C2GPU_CACHE_DIR", str(tmp_path / "cache"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield tmp
    assert list(tmp.iterdir()) == [], "the harness left files in the temporary directory"


def check_timing(t: CpuTiming) -> None:
    assert t.source == "measured"
    assert t.median_s is not None and t.median_s > 0, t.note
    # One execution shorter than a clock read (some 200 ns, taken off every execution) reads 0: the
    # least execution may be 0, never negative; the median of thousands of executions is not.
    assert 0 <= t.min_s <= t.median_s <= t.max_s and t.max_s > 0
    assert t.executions >= 1 and t.runs >= 1
    assert t.total_median_s >= t.min_s * t.executions * 0.999


@needs_cc
@pytest.mark.parametrize("rel", FILES)
def test_every_testdata_nest_is_timed(rel):
    path = str(TESTDATA / rel)
    res = measure_file(path, opts(rel), repeats=2)
    program = load_program(path, opts(rel))
    assert set(res) == {n.name for n in program.nests} and res
    for t in res.values():
        check_timing(t)
        assert t.runs == 2 and t.compiler[0] == shutil.which("cc") and "-O2" in t.flags
        assert t.compiler_version and not t.cached


def _program_output(path: Path, defines: dict, tmp: Path) -> str:
    exe = tmp / "ref"
    subprocess.run(["cc", "-O2", "-w", *[f"-D{k}={v}" for k, v in defines.items()], str(path), "-o", str(exe),
                    "-lm"], check=True, timeout=60)
    out = subprocess.run([str(exe)], capture_output=True, check=True, timeout=60).stdout.decode()
    exe.unlink()
    return out


@needs_cc
def test_executions_are_counted(tmp_path):
    # jacobi2d: the nest (time loop included) runs once per program run
    j = measure_file(str(TESTDATA / "jacobi2d.c"), opts("jacobi2d.c"), repeats=3)
    assert j["jacobi2d@19"].executions == 1 and j["jacobi2d@19"].runs == 3
    # while_loop: both relax nests run once per iteration of the convergence loop; the program prints how many
    w = measure_file(str(TESTDATA / "while_loop.c"), opts("while_loop.c"), repeats=2)
    iters = int(re.search(r"relax iterations = (\d+)", _program_output(TESTDATA / "while_loop.c",
                                                                       SIZES["while_loop.c"], tmp_path))[1])
    assert iters > 100
    for name in ("relax@32", "relax@34"):
        t = w[name]
        assert t.executions == iters and t.details["samples"] == 2 * iters
        assert t.total_median_s > t.median_s * iters * 0.5
        assert t.observed_params == {"n": (200, 200)}      # relax(N, ...) with N = 200
    # may_alias: shift_add is called twice, with n = N-1 and n = N
    m = measure_file(str(TESTDATA / "may_alias.c"), opts("may_alias.c"), repeats=1)
    assert m["shift_add@17"].executions == 2 and m["shift_add@17"].observed_params == {"n": (99999, 100000)}


@needs_cc
def test_cache_hit_runs_no_compiler(tmp_path):
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "bin" / "cc-wrapper"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{shutil.which("cc")}" "$@"\n')
    wrapper.chmod(0o755)
    path = str(TESTDATA / "matmul.c")
    first = measure_file(path, opts("matmul.c"), cc=str(wrapper), repeats=2)
    calls = log.read_text()
    assert "nest_timing.c" in calls and "--version" in calls
    second = measure_file(path, opts("matmul.c"), cc=str(wrapper), repeats=2)
    assert log.read_text() == calls, "the cached result rebuilt the program"
    for name, t in first.items():
        assert second[name].cached and not t.cached
        assert second[name].median_s == t.median_s and second[name].compiler == t.compiler
        assert second[name].compiler_version == t.compiler_version
    assert (tmp_path / "cache" / "cpu-baseline.json").is_file()
    # other -D values, flags or repeats are other measurements
    measure_file(path, opts("matmul.c", N=32), cc=str(wrapper), repeats=2)
    assert log.read_text().count("nest_timing.c") == 2


@needs_cc
def test_unusable_cache_dir_is_not_an_error(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    res = measure_file(str(TESTDATA / "matmul.c"), opts("matmul.c"), repeats=1, cache_dir=blocker / "cache")
    check_timing(res["matmul@16"])
    res = measure_file(str(TESTDATA / "matmul.c"), opts("matmul.c"), repeats=1, cache_dir=blocker / "cache")
    assert not res["matmul@16"].cached
    assert blocker.read_text() == ""


@needs_cc
def test_matmul_static_estimate_within_10x_of_measured():
    path, o = str(TESTDATA / "matmul.c"), PreprocessOptions(defines=(("N", "256"),))
    measured = measure_nest(path, "matmul@16", o, repeats=3)
    nest = load_program(path, o).nest("matmul@16")
    est = static_estimate(nest)
    ratio = est.median_s / measured.median_s
    print(f"\nmatmul N=256: measured {measured.median_s * 1e3:.2f} ms, static {est.median_s * 1e3:.2f} ms "
          f"(static/measured {ratio:.2f}); {est.note}")
    assert 0.1 < ratio < 10


def test_static_fallback_without_compiler(tmp_path, monkeypatch):
    path, o = str(TESTDATA / "matmul.c"), PreprocessOptions(defines=(("N", "256"),))
    program = load_program(path, o)          # needs cpp: before PATH loses it
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    res = cpu_baseline(path, program, o)
    assert set(res) == {n.name for n in program.nests}
    for t in res.values():
        assert t.source == "static estimate" and t.median_s > 0
        assert "no C compiler found on PATH" in t.note and t.details["reason"].startswith("no C compiler")
    mm = res["matmul@16"]
    # 256^3 multiply-adds at most a few per cycle on one ~3 GHz core: milliseconds, not micro- or whole seconds
    assert 1e-3 < mm.median_s < 0.1
    assert mm.details["footprint_bytes"] == 3 * 256 * 256 * 4 and mm.details["memory_level"] == "l2"
    assert mm.details["ops"]["fp32_fma"] == 256 ** 3
    no_run = cpu_baseline(path, program, o, run=False)
    assert all(t.source == "static estimate" and "--no-run given" in t.note for t in no_run.values())
    assert no_run["matmul@16"].median_s == mm.median_s


def test_static_estimate_parameters_and_shapes():
    dot = load_program(str(TESTDATA / "dot.c")).nest("dot@15")
    t = static_estimate(dot)
    assert t.median_s is None and "needs a value for n" in t.note
    small, big = static_estimate(dot, {"n": 1000}), static_estimate(dot, {"n": 1000000})
    assert 0 < small.median_s < big.median_s
    assert big.details["footprint_bytes"] == 2 * 4 * 1000000     # a[] and b[]: 4 MB of floats each
    # triangular nest: the footprint is the exact index range, the counts the triangle
    syrk = load_program(str(TESTDATA / "syrk.c")).nest("syrk@21")
    s = static_estimate(syrk)
    assert s.details["ops"]["fp32_mul"] == 256 * 257 // 2 + 256 * 257 // 2 * 200
    # a non-affine subscript falls back to access counts, capped by the array size
    hist = load_program(str(TESTDATA / "histogram.c")).nest("histogram@22")
    h = static_estimate(hist)
    assert h.details["footprint_per_array"] == {"data": 1000000, "hist": 256 * 4}
    assert "access counts" in h.details["footprint_method"]


def test_cpu_description_has_sources():
    cpu = load_cpu()
    assert cpu.name == "generic x86-64 server core, 1 thread" and cpu.clock_ghz > 0
    for key in ("ghz", "fp32_add", "fp64_div", "int", "load", "issue_width", "l2_bytes", "dram_gbs"):
        assert cpu.source_of(key), key
    host = host_cpu()
    assert host.clock_ghz > 0 and host.key == "host"
    with pytest.raises(C2GPUError, match="unknown CPU"):
        load_cpu("no-such-cpu")


@needs_cc
def test_awkward_file_name(tmp_path):
    d = tmp_path / "dir with space"
    d.mkdir()
    p = d / "my \"quoted\" $HOME 'file'.c"
    shutil.copy(TESTDATA / "matmul.c", p)
    res = measure_file(str(p), PreprocessOptions(defines=(("N", "32"),)), repeats=1)
    assert set(res) == {"matmul@16", "main@29", "main@37"}
    for t in res.values():
        check_timing(t)


@needs_cc
def test_nest_in_infinite_loop_hits_the_time_limit(tmp_path):
    p = write_c(tmp_path, """
static float a[1000];
int main(void)
{
    int i;
    while (1) {
        for (i = 0; i < 1000; i++)
            a[i] += 1.0f;
    }
    return 0;
}
""")
    t0 = time.monotonic()
    with pytest.raises(C2GPUError, match=r"did not finish within 2 s.*timing run 1 of 3|timing run 1 of 3.*did not finish within 2 s"):
        measure_file(str(p), repeats=3, timeout=2)
    assert time.monotonic() - t0 < 30


@needs_cc
def test_build_and_run_errors_are_clear(tmp_path):
    bad = write_c(tmp_path, """
#ifndef __C2GPU__
#error the real compiler sees this
#endif
float a[10];
int main(void) { int i; for (i = 0; i < 10; i++) a[i] = 1; return 0; }
""", "bad.c")
    with pytest.raises(C2GPUError, match=r"(?s)does not compile.*bad\.c:3.*the real compiler sees this"):
        measure_file(str(bad), repeats=1)
    failing = write_c(tmp_path, """
float a[10];
int main(void) { int i; for (i = 0; i < 10; i++) a[i] = 1; return 3; }
""", "fails.c")
    with pytest.raises(C2GPUError, match="exited with status 3 in timing run 1"):
        measure_file(str(failing), repeats=1)


@needs_cc
def test_nest_that_never_runs_falls_back_per_nest(tmp_path):
    p = write_c(tmp_path, """
float a[1000], b[1000];
void unused(void) { int i; for (i = 0; i < 1000; i++) b[i] = 2.0f * a[i]; }
int main(void) { int i; for (i = 0; i < 1000; i++) a[i] = (float)i; return 0; }
""")
    program = load_program(str(p))
    res = cpu_baseline(str(p), program, repeats=1)
    assert res["main@4"].source == "measured"
    assert res["unused@3"].source == "static estimate" and "never ran" in res["unused@3"].note
    with pytest.raises(C2GPUError, match="never ran"):
        measure_nest(str(p), "unused@3", repeats=1)


@needs_cc
def test_params_bind_macros_not_variables():
    # N is a macro: passed as -D; n is dot()'s argument: the program's own value is used and reported
    res = measure_file(str(TESTDATA / "dot.c"), repeats=1, params={"N": 1000, "n": 5})
    t = res["dot@15"]
    check_timing(t)
    assert t.observed_params == {"n": (1000, 1000)}
    assert "-DN=1000" in t.flags and not any(f.startswith("-Dn=") for f in t.flags)
    assert "n is a variable of the program" in t.note
