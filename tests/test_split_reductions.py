"""Split reductions (issue 31 item 1): a reduction loop inside the grid's loops split across the threads of a
block dimension, as a CUDA programmer writes a matrix-vector product (`y[i] += A[i][j] * x[j]`: 32 threads
per i take turns over j, so that a warp reads 32 neighbours of a row of A, a tree along that dimension adds
their results, and one atomic per element folds the total in).  With a GPU the structure search compares it
with c2gpu's rules (one row per thread, reading A down its columns) and keeps the faster; the ports verify on
the CPU execution layer in three thread orders with poisoned memory, and compile with nvcc."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from c2gpu.drivers.cli import main
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import load_program
from c2gpu.model.gpu import load_gpu
from c2gpu.perf.predict import kernel_items
from c2gpu.perf.profile import KernelAnalysis
from c2gpu.pipeline import PORT, with_performance

from conftest import TESTDATA, requires_tool, write_c

POLYBENCH = TESTDATA / "corpora" / "polybench-c-4.2.1"
MATVEC = {"atax": "linear-algebra/kernels/atax/atax.c", "bicg": "linear-algebra/kernels/bicg/bicg.c",
          "mvt": "linear-algebra/kernels/mvt/mvt.c", "gesummv": "linear-algebra/blas/gesummv/gesummv.c"}
# analyze --no-run -D LARGE_DATASET on h100-sxm before the split (c2gpu 2026-11-27): the kernels of the nest that
# reads the matrices, in µs
BEFORE_US = {"atax": 221, "bicg": 225, "mvt": 222, "gesummv": 67.1}


def _args(name: str) -> list[str]:
    src = POLYBENCH / MATVEC[name]
    return [str(src), "-I", str(POLYBENCH / "utilities"), "-I", str(src.parent)]


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """analyze's JSON for each matrix-vector kernel at LARGE on the default GPU, without running it."""
    out = {}
    for name in MATVEC:
        r = subprocess.run([sys.executable, "-m", "c2gpu", "analyze", *_args(name), "-DLARGE_DATASET", "--no-run",
                            "--gpu", "h100-sxm", "--format", "json"], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        out[name] = json.loads(r.stdout)["files"][0]
    return out


@pytest.mark.parametrize("name", sorted(MATVEC))
def test_matrix_rows_are_split_across_a_warp_that_reads_them_coalesced_and_fills_the_gpu(large, name):
    gpu = load_gpu("h100-sxm")
    matrices = {"atax": {"A"}, "bicg": {"A"}, "mvt": {"A"}, "gesummv": {"A", "B"}}[name]
    reading = []
    for nest in large[name]["nests"]:
        perf = nest.get("performance") or {}
        for k in perf.get("kernels", []):
            reads = [a for a in k["memory"]["accesses"] if a["array"] in matrices]
            if not reads:
                continue
            reading.append(k)
            # the grid fills the GPU: most SMs get a block, and every SM a few warps' worth to hide DRAM's latency
            # (the block search weighs one block of 16 warps per SM against two of 8 on all of them: for a kernel
            # bound by DRAM, the model finds them within a few percent either way)
            blocks = k["grid"][0] * k["grid"][1] * k["grid"][2]
            warps = blocks * -(-k["block"][0] * k["block"][1] * k["block"][2] // gpu.warp_size)
            assert blocks >= 0.75 * gpu.sm_count and warps >= 8 * gpu.sm_count, (k["name"], k["grid"], k["block"])
            # coalesced: a warp's 32 doubles of a row (or 4 rows of 8) are 8 sectors of 32 bytes
            assert all(a["sectors_per_request"] <= 8 for a in reads), [(a["id"], a["sectors_per_request"]) for a in reads]
            assert 32 in k["block"], k["block"]          # the split dimension: a warp's worth of threads
        if any(k in reading for k in perf.get("kernels", [])):
            assert "(split)" in next(s["structure"] for s in perf["structure_decision"] if s["chosen"])
            kernels_us = perf["kernel_time_s"]["gpuperf"] * 1e6
            # each kernel reads its matrices once: close to the time DRAM takes to deliver them, and at least
            # 3.5x under the one-row-per-thread structure's prediction
            matrix_bytes = sum(t["bytes"] for t in perf["transfers"] if t["array"] in matrices and t["direction"] == "in")
            reads = sum(1 for k in perf["kernels"] if any(a["array"] in matrices for a in k["memory"]["accesses"]))
            assert kernels_us * 3.5 < BEFORE_US[name], (name, kernels_us)
            assert kernels_us < 2.5 * reads * matrix_bytes / (gpu.dram_bandwidth_gbs * 1e3), (name, kernels_us)
    assert reading, name


@pytest.mark.parametrize("name", sorted(MATVEC))
def test_split_ports_match_the_original(capsys, name):
    status = main(["verify", *_args(name), "-DSMALL_DATASET", "--gpu", "h100-sxm",
                   "--extra-source", str(POLYBENCH / "utilities" / "polybench.c")])
    captured = capsys.readouterr()
    assert status == 0 and "verify: PASS" in captured.out, captured.out[-2000:] + captured.err[-2000:]
    assert "split over 32 threads along" in captured.err, captured.err[-2000:]


@requires_tool("nvcc")
def test_split_kernels_compile_for_the_gpu(tmp_path, capsys):
    for name in MATVEC:
        cu = tmp_path / f"{name}.cu"
        assert main(["port", *_args(name), "-DLARGE_DATASET", "--gpu", "h100-sxm", "-o", str(cu)]) == 0
        text = cu.read_text()
        # the row's threads take turns over j, a tree along their dimension, one atomic per element by the first
        assert re.search(r"for \(int j = threadIdx\.[xy]; j < \w+; j \+= blockDim\.[xy]\)", text), text
        assert re.search(r"if \(threadIdx\.[xy] == 0 && ", text), text
        r = subprocess.run(["nvcc", "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / f"{name}.o")],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
    capsys.readouterr()


SUMS = """
#include <stdio.h>
#define N 300
#define M 500
static %(T)s A[N][M], x[M], y[N];
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      A[i][j] = (%(T)s)((i * 7 + j * 3) %% 11) - 5;
  for (int j = 0; j < M; j++)
    x[j] = (%(T)s)(j %% 5) + 1;
  for (int i = 0; i < N; i++) {
    y[i] = 0;
    for (int j = 0; j < M; j++)
      y[i] += A[i][j] * x[j];
  }
  for (int i = 0; i < N; i += 37)
    printf("%%.17g\\n", (double)y[i]);
  return 0;
}
"""


def _verify(tmp_path, capsys, text: str, *extra: str) -> tuple[str, str]:
    src = write_c(tmp_path, text)
    status = main(["verify", str(src), "--gpu", "h100-sxm", *extra])
    captured = capsys.readouterr()
    assert status == 0 and "verify: PASS" in captured.out, captured.out[-2000:] + captured.err[-2000:]
    return captured.out, captured.err


def test_an_integer_sum_split_across_threads_is_exact(tmp_path, capsys):
    out, err = _verify(tmp_path, capsys, SUMS % {"T": "long"})
    assert "split over 32 threads along" in err, err
    assert "largest difference 0 " in out, out


def test_exact_fp_keeps_a_floating_point_row_in_one_thread(tmp_path, capsys):
    """--exact-fp: C's order of the additions; a split row would add its elements in another one."""
    _, err = _verify(tmp_path, capsys, SUMS % {"T": "double"}, "--exact-fp")
    assert "split over" not in err, err


def test_a_row_loop_that_carries_more_than_its_sums_is_not_split(tmp_path, capsys):
    """b[i][j] reads b[i][j-1]: the j loop carries a dependence that is not the sum's, so its iterations may not be
    shared among threads; each thread runs a whole row."""
    text = (SUMS % {"T": "double"}).replace("static double A[N][M], x[M], y[N];",
                                            "static double A[N][M], x[M], y[N], b[N][M];") \
        .replace("      y[i] += A[i][j] * x[j];", "    { y[i] += A[i][j] * x[j]; if (j > 0) b[i][j] = b[i][j-1] + x[j]; }")
    _, err = _verify(tmp_path, capsys, text)
    assert "split over" not in err and "ported nest main@" in err, err


FEW_ROWS = SUMS.replace("#define N 300", "#define N 16").replace("#define M 500", "#define M 100000") \
    .replace("i += 37", "i += 1") % {"T": "double"}


def _split_kernels(tmp_path, text: str):
    """(KernelAnalysis, kernel) of every kernel of the program's split structures (a loop taken in turns)."""
    manager = make_manager(with_performance(PORT.passes), {"gpu": "h100-sxm", "registers": "estimate"})
    prog = manager.run(load_program(str(write_c(tmp_path, text))))
    gpu = load_gpu("h100-sxm")
    out = []
    for nest in prog.nests:
        mapping = manager.result("mapping", nest)
        for cand in (mapping,) + mapping.alternatives if mapping is not None else ():
            out += [(KernelAnalysis(nest, k, gpu, {}, host_lids=host, registers="estimate"), k)
                    for k, host in kernel_items(cand) if k.fixed_threads]
    return out


def test_the_threads_of_a_row_loop_over_their_turns_in_the_model(tmp_path):
    """Each of the 32 threads of a row runs 100000 / 32 iterations of j: the trace the models read runs the body
    that many times per thread (before, once: 16 warps were predicted to read 12.8 MB at DRAM's full speed)."""
    found = _split_kernels(tmp_path, FEW_ROWS)
    assert found
    for ka, kernel in found:
        turns = 100000 / kernel.block[0]
        assert ka.turns_per_thread == pytest.approx(turns)
        counts = ka.instructions(kernel.block)
        assert counts.memory >= 2 * turns                    # A[i][j] and x[j] in every turn
        assert counts.per_class.get("fp64_fma", 0) == pytest.approx(turns)
        prof, mach = ka.profile(kernel.block)
        # 16 rows x 32 threads: a warp per row on 16 SMs, each waiting on its loads turn after turn
        assert prof.global_accesses[0].count >= turns


# the same sums down the columns of A[M][N]: the warp's lanes along i (x) read a row's neighbours, j along y
FEW_COLUMNS = FEW_ROWS.replace("A[N][M]", "A[M][N]").replace("A[i][j] = ", "A[j][i] = ") \
    .replace("A[i][j] * x[j]", "A[j][i] * x[j]")


@pytest.mark.parametrize("text, dim", [(FEW_ROWS, "x"), (FEW_COLUMNS, "y")], ids=["rows", "columns"])
def test_few_long_rows_take_a_block_each(tmp_path, capsys, text, dim):
    """16 rows of 100,000: a warp per row would leave 16 warps to read 12.8 MB; the search compares a block of 256
    threads per row (a structure the mapping generator proposes as data, MappedLoop.turns: nothing else changed to
    model or print it), chooses it, and the port matches the original on the CPU execution layer."""
    out, err = _verify(tmp_path, capsys, text)
    assert f"split over 256 threads along {dim}" in err, err
    src = tmp_path / "t.c"
    assert main(["analyze", str(src), "--no-run", "--gpu", "h100-sxm", "--format", "json"]) == 0
    nests = json.loads(capsys.readouterr().out)["files"][0]["nests"]
    trials = {t["structure"]: t for n in nests for t in (n.get("performance") or {}).get("structure_decision") or []}
    block_row, warp_row = trials["grid i, j (split, 256 threads)"], trials["grid i, j (split)"]
    assert block_row["chosen"] and block_row["total_s"] < warp_row["total_s"], trials


@requires_tool("nvcc")
def test_a_block_per_row_compiles(tmp_path, capsys):
    cu = tmp_path / "rows.cu"
    assert main(["port", str(write_c(tmp_path, FEW_ROWS)), "--gpu", "h100-sxm", "-o", str(cu)]) == 0
    text = cu.read_text()
    assert re.search(r"for \(int j = threadIdx\.x; j < 100000; j \+= blockDim\.x\)", text), text
    # one block along x: its 256 threads take turns over a row
    assert re.search(r"dim3 c2gpu_grid\(1, \d+, 1\), c2gpu_block\(256, \d+, 1\);", text), text
    r = subprocess.run(["nvcc", "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "rows.o")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    capsys.readouterr()
