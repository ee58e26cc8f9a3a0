"""The kernel structure is a decision (c2gpu/passes/mapping.py structures(), the performance pass): which parallel loops
form the grid, which stay on the host with a launch per iteration, which run in each thread; one-trip loops folded;
--map accepts any legal structure and --block can be given per kernel."""
from __future__ import annotations

import subprocess
import sys

import pytest

import c2gpu
from c2gpu.drivers.options import OptionsError, block_for, parse_block, parse_map

from conftest import requires_tool

# PolyBench/GPU's doitgen as its CPU reference writes it (NR = NQ = NP = 128, float); its hand-written CUDA keeps r
# on the host and launches two 2-D kernels over (q, p) per r: 5.1 ms measured on an H100 SXM (the issue)
DOITGEN = """
#ifndef NR
#define NR 128
#endif
#ifndef NQ
#define NQ 128
#endif
#ifndef NP
#define NP 128
#endif
float A[NR][NQ][NP], sum[NR][NQ][NP], C4[NP][NP];

void doitgen(void)
{
    int r, q, p, s;
    for (r = 0; r < NR; r++)
        for (q = 0; q < NQ; q++) {
            for (p = 0; p < NP; p++) {
                sum[r][q][p] = 0.0f;
                for (s = 0; s < NP; s++)
                    sum[r][q][p] += A[r][q][s] * C4[s][p];
            }
            for (p = 0; p < NP; p++)
                A[r][q][p] = sum[r][q][p];
        }
}

int main(void)
{
    int i, j, k;
    double check = 0.0;
    for (i = 0; i < NR; i++) for (j = 0; j < NQ; j++) for (k = 0; k < NP; k++)
        A[i][j][k] = (float)((i + j * 3 + k) % 7) / 7.0f;
    for (i = 0; i < NP; i++) for (j = 0; j < NP; j++) C4[i][j] = (float)((i * j) % 5) / 5.0f;
    doitgen();
    return 0;
}
"""
DOITGEN_MEASURED_S = 5.1e-3

# a time loop run once (TSTEPS = 1): proven parallel (one iteration), but a grid of one thread would run it all
ONE_TRIP = """
#define TSTEPS 1
#define N 256
double A[N][N], B[N][N];
void kernel(void)
{
    int t, i, j;
    for (t = 0; t < TSTEPS; t++)
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                B[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}
"""


# PolyBench/GPU's adi (TSTEPS = 1): row sweeps over i1, then column sweeps whose i1 carries the dependence, so the
# CUDA program launches a kernel over i2 per i1: 3 + (N - 1) + 1 + (N - 2) launches
ADI = """
#define N 64
#define TSTEPS 1
float A[N][N], B[N][N], X[N][N];
void adi(void)
{
    int t, i1, i2;
    for (t = 0; t < TSTEPS; t++) {
        for (i1 = 0; i1 < N; i1++)
            for (i2 = 1; i2 < N; i2++) {
                X[i1][i2] = X[i1][i2] - X[i1][i2 - 1] * A[i1][i2] / B[i1][i2 - 1];
                B[i1][i2] = B[i1][i2] - A[i1][i2] * A[i1][i2] / B[i1][i2 - 1];
            }
        for (i1 = 0; i1 < N; i1++)
            X[i1][N - 1] = X[i1][N - 1] / B[i1][N - 1];
        for (i1 = 0; i1 < N; i1++)
            for (i2 = 0; i2 < N - 2; i2++)
                X[i1][N - i2 - 2] = (X[i1][N - 2 - i2] - X[i1][N - 2 - i2 - 1] * A[i1][N - i2 - 3]) / B[i1][N - 3 - i2];
        for (i1 = 1; i1 < N; i1++)
            for (i2 = 0; i2 < N; i2++) {
                X[i1][i2] = X[i1][i2] - X[i1 - 1][i2] * A[i1][i2] / B[i1 - 1][i2];
                B[i1][i2] = B[i1][i2] - A[i1][i2] * A[i1][i2] / B[i1 - 1][i2];
            }
        for (i2 = 0; i2 < N; i2++)
            X[N - 1][i2] = X[N - 1][i2] / B[N - 1][i2];
        for (i1 = 0; i1 < N - 2; i1++)
            for (i2 = 0; i2 < N; i2++)
                X[N - 2 - i1][i2] = (X[N - 2 - i1][i2] - X[N - i1 - 3][i2] * A[N - 3 - i1][i2]) / B[N - 2 - i1][i2];
    }
}
"""


def roles(nest) -> dict[str, str]:
    return {lp.var: lp.role for lp in nest.loops}


def test_doitgen_the_model_keeps_r_on_the_host_and_predicts_within_2x_of_the_measured_cuda():
    report = c2gpu.analyze(DOITGEN, gpu="h100-sxm", run_cpu=False, name="doitgen.c")
    nest = report.nests[0]
    trials = nest.data["performance"]["structure_decision"]
    assert [t["structure"] for t in trials] == ["grid r, q", "host r; grid q, p", "host r, q; grid p"]
    assert trials[2]["launches"] == 2 * 128 * 128 and trials[2]["bound"]      # its launches alone cost more
    chosen = [t for t in trials if t["chosen"]]
    assert [t["structure"] for t in chosen] == ["host r; grid q, p"]
    assert chosen[0]["launches"] == 256 and chosen[0]["kernels"] == 2
    assert chosen[0]["total_s"] < trials[0]["total_s"]
    assert roles(nest)["r"] == "host loop" and "on the host: r" in nest.mapping
    # the measured time has no copies: kernels and launches.  c2gpu's own port is not the measured program (it
    # keeps accumulators in registers and synchronizes once), so it may well be faster; what must not happen is
    # the issue's over-prediction (the rules' structure: 2.2 s against 5.1 ms).  The two-sided check against the
    # measured program, run as it runs, belongs to the validation harness (tests/validation_data.py).
    ratio = (nest.gpu_s["kernels"] + nest.gpu_s["launches"]) / DOITGEN_MEASURED_S
    assert 0.1 < ratio < 2.0, ratio


def test_without_a_gpu_the_rules_structure_stays():
    nest = c2gpu.analyze(DOITGEN, name="doitgen.c").nests[0]
    assert "on the host" not in nest.mapping and roles(nest)["r"] == "grid y"


def test_a_one_trip_loop_is_folded_never_the_grid():
    for gpu in (None, "h100-sxm"):
        nest = c2gpu.analyze(ONE_TRIP, gpu=gpu, run_cpu=False, name="onetrip.c").nests[0]
        r = roles(nest)
        assert r["t"] == "host loop" and r["i"].startswith("grid") and r["j"] == "grid x", (gpu, r)


def test_adi_runs_as_the_cuda_program_does_one_trip_time_loop_folded():
    nest = c2gpu.analyze(ADI, gpu="h100-sxm", run_cpu=False, name="adi.c").nests[0]
    assert nest.ported, nest.refusal
    assert nest.host_loops[0].startswith("t: loop 't' runs once: folded away")
    launches = sum(k["launches"] for k in nest.data["performance"]["kernels"])
    assert launches == 3 + 63 + 1 + 62


# SP's z_solve (NPB): a loop over two components around two 3-D solves, with scalars set between them
FEW = """
#include <stdio.h>
#define N 24
double lhs[10][N][N][N], rhs[5][N][N][N];
static void solve(void) {
  int i, j, k, n, k1, m;
  for (m = 3; m < 5; m++) {
    n = (m - 3) * 5;
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        for (k = 0; k < N - 2; k++) {
          k1 = k + 1;
          rhs[m][i][j][k1] = rhs[m][i][j][k1] - lhs[n + 1][i][j][k1] * rhs[m][i][j][k];
        }
    k1 = N - 1;
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        rhs[m][i][j][k1] = rhs[m][i][j][k1] / lhs[n + 2][i][j][k1];
  }
}
int main(void) {
  for (int a = 0; a < 10; a++) for (int b = 0; b < N; b++) for (int c = 0; c < N; c++) for (int d = 0; d < N; d++)
    lhs[a][b][c][d] = 1.0 + (a + b * 3 + c * 5 + d) % 7;
  for (int a = 0; a < 5; a++) for (int b = 0; b < N; b++) for (int c = 0; c < N; c++) for (int d = 0; d < N; d++)
    rhs[a][b][c][d] = (a * 7 + b + c * 2 + d * 3) % 11 * 0.1;
  solve();
  printf("%.9f\\n", rhs[4][5][6][N - 1] + rhs[3][7][8][9]);
  return 0;
}
"""


def test_a_root_of_fewer_iterations_than_a_warp_stays_on_the_host_when_loops_inside_can_be_the_grid():
    """Mapped, m would be a grid of 2 threads each running both 3-D solves; on the host, the loops over (i, j)
    are the grids, and the scalars set between them run in one-thread kernels on the device data."""
    nest = c2gpu.analyze(FEW, run_cpu=False, name="few.c").nests[0]
    r = roles(nest)
    assert r["m"] == "host loop" and r["i"] == "grid y" and r["j"] == "grid x" and r["k"] == "in each thread"
    assert "2 iterations would be a grid of fewer threads than a warp" in nest.host_loops[0]
    # 32 components or more: m is the grid, as before
    wide = c2gpu.analyze(FEW.replace("m = 3; m < 5", "m = 0; m < 40").replace("[10]", "[210]").replace(
        "[5][N]", "[40][N]"), run_cpu=False, name="wide.c").nests[0]
    assert roles(wide)["m"].startswith("grid")


# SP's x_solve: a sweep over i (each row from the one before), whose variable is set again after it for the last
# rows (`i = N - 2;`)
FEW_SAME_NAME = FEW.replace(
    "        for (k = 0; k < N - 2; k++) {\n          k1 = k + 1;\n          rhs[m][i][j][k1] = rhs[m][i][j][k1] - "
    "lhs[n + 1][i][j][k1] * rhs[m][i][j][k];\n        }",
    "        for (k = 0; k < N - 2; k++)\n          rhs[m][i][j][k] = rhs[m][i][j][k] - lhs[n + 1][i][j][k] * "
    "rhs[m][i - 1][j][k];").replace(
    "    for (i = 1; i < N - 1; i++)\n      for (j = 1; j < N - 1; j++)\n        rhs[m][i][j][k1]",
    "    i = N - 2;\n    for (j = 1; j < N - 1; j++)\n        rhs[m][i][j][k1]")


def test_a_host_loop_whose_variable_the_device_code_also_uses_is_not_planned():
    """With m on the host, the sweep over i would be a host loop too, but `i = N - 2;` runs on the device after
    it: the host's i and the device's copy would be two variables.  m stays the grid."""
    assert FEW_SAME_NAME.count("i = N - 2;") == 1 and "rhs[m][i - 1][j][k]" in FEW_SAME_NAME
    nest = c2gpu.analyze(FEW_SAME_NAME, run_cpu=False, name="few.c").nests[0]
    assert nest.ported and roles(nest)["m"].startswith("grid")


@requires_tool("cc")
@pytest.mark.parametrize("source", [FEW, FEW_SAME_NAME], ids=["few", "same-name"])
def test_a_root_of_fewer_iterations_than_a_warp_on_the_host_verifies(tmp_path, source):
    (tmp_path / "few.c").write_text(source)
    out = c2("verify", "few.c", "--exact-fp", cwd=tmp_path)
    assert out.returncode == 0 and "PASS" in out.stdout, out.stdout + out.stderr


def c2(*args, cwd):
    return subprocess.run([sys.executable, "-m", "c2gpu", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_map_that_leaves_out_a_parallel_loop_keeps_it_on_the_host(tmp_path):
    (tmp_path / "d.c").write_text(DOITGEN)
    out = c2("emit", "d.c", "--map", "host:r,grid:q,p", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "not proven parallel" not in out.stdout + out.stderr
    # two 2-D kernels over (q, p) launched inside the host loop over r
    assert out.stdout.count("__global__") == 2 and "for (r = 0; r < 128; r++)" in out.stdout.replace("int r", "r")
    out = c2("analyze", "d.c", "--gpu", "none", "--map", "q,p", cwd=tmp_path)
    assert "r  line 16   parallel -> host loop" in out.stdout
    assert "main@" in out.stdout and "--map leaves it out" in out.stdout     # main's loops: refused, truthfully


@requires_tool("cc")
def test_map_host_loop_port_verifies(tmp_path):
    (tmp_path / "d.c").write_text(DOITGEN)
    out = c2("verify", "d.c", "--map", "q,p", "-D", "NR=6", "-D", "NQ=10", "-D", "NP=12", cwd=tmp_path)
    assert out.returncode == 0 and "PASS" in out.stdout, out.stdout + out.stderr


def test_block_per_kernel_reaches_the_right_kernels(tmp_path):
    (tmp_path / "d.c").write_text(DOITGEN)
    out = c2("analyze", "d.c", "--gpu", "h100-sxm", "--no-run", "--block", "k0=32x4,c2gpu_doitgen_16_k1=64",
             cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("  port ") and "doitgen" in x)
    assert "c2gpu_doitgen_16_k0: q -> y, p -> x (block 32x4x1)" in line
    assert "c2gpu_doitgen_16_k1: q -> y, p -> x (block 64x1x1)" in line
    # the brief row names the structure the model chose
    assert line.endswith("on the host: r; structure host r; grid q, p, the fastest of 3 compared")


def test_option_syntax():
    assert parse_map("q,p") == (("q", "p"), ())
    assert parse_map("host:r,grid:q,p") == (("q", "p"), ("r",))
    assert parse_map("host:r") == ((), ("r",))
    with pytest.raises(OptionsError):
        parse_map("host:r,grid:r")
    with pytest.raises(OptionsError):
        parse_map("device:r")
    assert block_for(parse_block("32x8"), "c2gpu_f_3_k1") == (32, 8)
    per = parse_block("k0=32x8,c2gpu_f_3_k1=256")
    assert block_for(per, "c2gpu_f_3_k0") == (32, 8) and block_for(per, "c2gpu_f_3_k1") == (256,)
    assert block_for(per, "c2gpu_f_3_k2") is None and block_for(per, "c2gpu_f_3_k10") is None
    with pytest.raises(OptionsError):
        parse_block("k0=")


def test_a_block_key_that_names_no_kernel_is_said(tmp_path):
    (tmp_path / "d.c").write_text(DOITGEN)
    for cmd in (["analyze", "d.c", "--no-run", "--gpu", "h100-sxm"], ["port", "d.c", "-o", "d.cu"]):
        out = c2(*cmd, "--block", "k0=32x8,k9=64", "-D", "NR=8", "-D", "NQ=8", "-D", "NP=16", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert "--block k9=...: no kernel of this file is named 'k9'" in out.stderr, (cmd, out.stderr)
        assert "'k0'" not in out.stderr          # k0 names each nest's first kernel


UNMAPPED_DIM = """
#define N 1000
float a[N], s;
int main(void) {
  for (int i = 0; i < N; i++)
    a[i] = a[i] + 1.0f;
  s = 0;
  for (int i = 0; i < N; i++)
    s += a[i];
  return (int)s;
}
"""


@requires_tool("cc")
def test_a_block_dimension_no_loop_is_mapped_to_runs_each_iteration_once(tmp_path):
    """`--block 32x8` on 1-D nests: the 8 threads of a column used to run the same read-modify-write (a[i] came
    out 8.0, not 1.0) and add their element to the sum 8 times; only the first thread of the dimension is active."""
    (tmp_path / "u.c").write_text(UNMAPPED_DIM)
    out = c2("verify", "u.c", "--block", "32x8", cwd=tmp_path)
    assert out.returncode == 0 and "PASS: 2 nests checked" in out.stdout, out.stdout + out.stderr
    out = c2("emit", "u.c", "--block", "32x8x2", cwd=tmp_path)
    assert "if (!(i < 1000 && threadIdx.y == 0 && threadIdx.z == 0))" in out.stdout, out.stdout


# a local declared in the outer loop's body and read by both inner loops: as one kernel per inner loop under a host
# loop, the body cannot be split (code generation refuses it), and without its code, its copies were not costed
SPLIT_LOCAL = """
void f(int n, int m, float A[n][m], float B[n][m]) {
  for (int i = 0; i < n; i++) {
    float s = i * 2.0f;
    for (int j = 0; j < m; j++) A[i][j] = s * j;
    for (int j = 0; j < m; j++) B[i][j] = s + j;
  }
}
"""


def test_a_structure_code_generation_cannot_emit_is_never_chosen():
    """Before, the model chose the split structure (no transfers costed) and the nest was refused as not
    generated: a missed port of a loop proven parallel."""
    nest = c2gpu.analyze(SPLIT_LOCAL, gpu="h100-sxm", run_cpu=False, name="local.c", assume_no_alias=True,
                         params={"n": 64, "m": 100000}).nests[0]
    assert nest.verdict_class != "not-portable", nest.refusal
    trials = {t["structure"]: t for t in nest.data["performance"]["structure_decision"]}
    assert trials["grid i"]["chosen"] and not trials["grid i"]["not_generated"]
    split = trials["host i; grid j"]
    assert not split["chosen"] and "cannot be split" in split["not_generated"]
    assert roles(nest)["i"].startswith("grid")


# NPB BT's initialize at class S: four parallel loops, three of 12 iterations and the components' 5
SMALL_CUBE = """
double u[13][13][13][5];

void init(void)
{
    int i, j, k, m;
    for (i = 0; i < 12; i++)
        for (j = 0; j < 12; j++)
            for (k = 0; k < 12; k++)
                for (m = 0; m < 5; m++)
                    u[i][j][k][m] = 1.0 + i - 2 * j + 0.5 * k + m;
}

int main(void)
{
    init();
    return 0;
}
"""

# the short innermost loop the rules keep in each thread: an image's colour channels
CHANNELS = """
#define H 480
#define W 640
float in[H][W][3], out[H][W][3];

void scale(void)
{
    int y, x, c;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
            for (c = 0; c < 3; c++)
                out[y][x][c] = 0.5f * in[y][x][c];
}
"""


def test_short_loops_stay_mapped_when_the_grid_would_be_a_few_warps_otherwise():
    """Before, each of the three 12-iteration loops was 'short' and left in the thread, one after the other:
    the kernel was a grid of 12 threads each storing 720 elements (1.01 ms predicted on an H100 against 1.7 us
    for the 1,728 threads of the three loops mapped).  Short loops stay in the thread only when the loops
    around them still make a grid of FEW_THREADS or more."""
    for gpu in (None, "h100-sxm"):
        nest = c2gpu.analyze(SMALL_CUBE, gpu=gpu, run_cpu=False, name="cube.c").nests[0]
        r = roles(nest)
        assert [r[v].split()[0] for v in "ijk"] == ["grid", "grid", "grid"] and r["m"] == "in each thread", (gpu, r)
    # an image's channels stay in each thread (the rules), and the search compares the grid with them mapped
    nest = c2gpu.analyze(CHANNELS, run_cpu=False, name="channels.c").nests[0]
    assert roles(nest)["c"] == "in each thread"
    nest = c2gpu.analyze(CHANNELS, gpu="h100-sxm", run_cpu=False, name="channels.c").nests[0]
    trials = [t["structure"] for t in nest.data["performance"]["structure_decision"]]
    assert "grid y, x" in trials and "grid y, x, c" in trials, trials


@requires_tool("cc")
def test_a_small_cube_mapped_whole_verifies(tmp_path):
    (tmp_path / "cube.c").write_text(SMALL_CUBE)
    out = c2("verify", "cube.c", cwd=tmp_path)
    assert out.returncode == 0 and "PASS" in out.stdout, out.stdout + out.stderr
