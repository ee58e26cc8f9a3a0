"""Per-iteration copies of arrays (c2gpu/passes/dependence.py array_private) and tables of rows that are objects of
their own (frontend/objects.py rows_distinct).

An automatic array that every iteration of a loop writes before it reads it, and that nothing reads after the
nest, gets one copy per thread (MG's `r1`, `u1`); a table of row pointers whose every row is new memory
(`double ***u` filled by malloc) is indexed like an array.  Each port is run on the CPU execution layer against
the original (three thread orders, poisoned device memory); each refusal is checked with its reason.
"""
from __future__ import annotations

import shutil
import subprocess
import sys

from conftest import loop_verdicts as loops, verified_ports

SMOOTH = r"""
#include <stdio.h>
#define N 40
#define M 50
static double r[N][N][M], u[N][N][M];
static void smooth(void) {
  int i3, i2, i1;
  double r1[M], r2[M];
  for (i3 = 1; i3 < N - 1; i3++)
    for (i2 = 1; i2 < N - 1; i2++) {
      for (i1 = 0; i1 < M; i1++) {
        r1[i1] = r[i3][i2 - 1][i1] + r[i3][i2 + 1][i1];
        r2[i1] = r[i3 - 1][i2][i1] + r[i3 + 1][i2][i1];
      }
      for (i1 = 1; i1 < M - 1; i1++)
        u[i3][i2][i1] += r1[i1 - 1] + r1[i1 + 1] + 0.5 * r2[i1];
    }
}
int main(void) {
  for (int a = 0; a < N; a++) for (int b = 0; b < N; b++) for (int c = 0; c < M; c++) {
    r[a][b][c] = (a * 7 + b * 3 + c) % 11; u[a][b][c] = c;
  }
  smooth();
  double s = 0;
  for (int a = 0; a < N; a++) for (int b = 0; b < N; b++) for (int c = 0; c < M; c++) s += u[a][b][c] * (c + 1);
  printf("%.6f\n", s);
  return 0;
}
"""


def test_a_scratch_row_written_before_it_is_read_is_private_to_each_thread(tmp_path):
    found = loops(tmp_path, SMOOTH)
    assert found[9][:2] == ("i3", "parallel") and found[10][:2] == ("i2", "parallel")
    assert "smooth@9" in verified_ports(tmp_path, SMOOTH)


def test_the_private_copy_is_declared_in_the_kernel_and_never_copied(tmp_path):
    path = tmp_path / "a.c"
    path.write_text(SMOOTH)
    cu = tmp_path / "a.cu"
    subprocess.run([sys.executable, "-m", "c2gpu", "port", str(path), "-o", str(cu)], check=True, capture_output=True)
    text = cu.read_text()
    start = text.index("__global__ void c2gpu_smooth")
    kernel = text[start:text.index("__global__", start + 1)]
    assert "double r1[50];" in kernel and "double r2[50];" in kernel
    assert "d_r1" not in text and "d_r2" not in text


def _variant(old: str, new: str) -> str:
    assert old in SMOOTH
    return SMOOTH.replace(old, new)


def test_an_array_read_after_the_nest_is_not_private(tmp_path):
    found = loops(tmp_path, _variant("        u[i3][i2][i1] += r1[i1 - 1] + r1[i1 + 1] + 0.5 * r2[i1];\n    }\n",
                                     "        u[i3][i2][i1] += r1[i1 - 1] + r1[i1 + 1] + 0.5 * r2[i1];\n    }\n"
                                     "  u[0][0][0] = r1[3];\n"))
    assert found[9][:2] == ("i3", "carried") and "r1" in found[9][2]


def test_an_element_read_before_this_iteration_writes_it_is_not_private(tmp_path):
    # r1[M - 1] is written by the previous iteration only: the read sees another iteration's value
    found = loops(tmp_path, _variant("for (i1 = 0; i1 < M; i1++) {", "for (i1 = 0; i1 < M - 1; i1++) {"))
    assert found[9][:2] == ("i3", "carried") and "r1" in found[9][2]


def test_a_write_under_a_condition_covers_nothing(tmp_path):
    found = loops(tmp_path, _variant("        r1[i1] = r[i3][i2 - 1][i1] + r[i3][i2 + 1][i1];",
                                     "        if (r[i3][i2][i1] > 3) r1[i1] = r[i3][i2 - 1][i1] + r[i3][i2 + 1][i1];"))
    assert found[9][:2] == ("i3", "not-proven") and "r1" in found[9][2]


def test_a_static_array_keeps_its_values_for_the_next_call(tmp_path):
    found = loops(tmp_path, _variant("double r1[M], r2[M];", "static double r1[M]; double r2[M];"))
    assert found[9][:2] == ("i3", "carried") and "r1" in found[9][2]


TABLES = r"""
#include <stdio.h>
#include <stdlib.h>
#define N 30
static void scale(double ***out, double ***in, int n) {
  int k, j, i;
  for (k = 0; k < n; k++)
    for (j = 0; j < n; j++)
      for (i = 1; i < n; i++)
        out[k][j][i] = 0.5 * (in[k][j][i] + in[k][j][i - 1]);
}
static double ***grid(int n) {
  double ***g = (double ***)malloc(n * sizeof(double **));
  for (int k = 0; k < n; k++) {
    g[k] = (double **)malloc(n * sizeof(double *));
    for (int j = 0; j < n; j++) g[k][j] = (double *)malloc(n * sizeof(double));
  }
  return g;
}
int main(void) {
  double ***a = grid(N), ***b = grid(N);
  for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) {
    a[k][j][i] = (k * 5 + j * 3 + i) % 7; b[k][j][i] = 0;
  }
  scale(b, a, N);
  double s = 0;
  for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) s += b[k][j][i] * (i + 1);
  printf("%.6f\n", s);
  return 0;
}
"""


def test_rows_that_are_each_new_memory_are_indexed_like_an_array(tmp_path):
    found = loops(tmp_path, TABLES)
    assert [found[line][:2] for line in (7, 8, 9)] == [("k", "parallel"), ("j", "parallel"), ("i", "parallel")]


def test_a_row_stored_twice_may_be_one_object(tmp_path):
    # b[0][1] = b[0][0]: two rows of b are one object, so out[k][j][i] and in[k][j][i - 1] may be one element
    source = TABLES.replace("  scale(b, a, N);", "  b[0][1] = b[0][0];\n  scale(b, a, N);")
    found = loops(tmp_path, source)
    assert found[7][:2] == ("k", "not-proven") and "rows of 'out' are pointers" in found[7][2]


def test_a_table_handed_to_an_unknown_function_may_hold_any_rows(tmp_path):
    source = TABLES.replace("#define N 30", "#define N 30\nvoid fill(double **rows);").replace(
        "  scale(b, a, N);", "  fill(b[0]);\n  scale(b, a, N);")
    found = loops(tmp_path, source)
    assert found[8][:2] == ("k", "not-proven") and "rows of 'out' are pointers" in found[8][2]


def test_two_rows_of_one_table_may_be_the_same_row(tmp_path):
    # scale(a[0], a[1]) is fine, but scale(a, a) writes what it reads: the same table passed twice
    source = TABLES.replace("  scale(b, a, N);", "  scale(a, a, N);")
    found = loops(tmp_path, source)
    assert found[9][:2] != ("i", "parallel")


def test_a_table_of_rows_ports_by_gathering_the_rows_it_touches(tmp_path):
    # the device holds the box of subscripts as one array; the host gathers and scatters the rows (RowScan)
    assert "scale@7" in verified_ports(tmp_path, TABLES)


def test_only_the_rows_a_triangle_touches_are_copied(tmp_path):
    # rows j > k are never touched (and here never allocated): the copies must not reach them
    source = TABLES.replace("    for (j = 0; j < n; j++)\n      for (i = 1; i < n; i++)",
                            "    for (j = 0; j <= k; j++)\n      for (i = 1; i < n; i++)").replace(
        "    for (int j = 0; j < n; j++) g[k][j] = (double *)malloc(n * sizeof(double));",
        "    for (int j = 0; j < n; j++) g[k][j] = j <= k ? (double *)malloc(n * sizeof(double)) : NULL;").replace(
        "for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) {", "for (int j = 0; j <= k; j++) for (int i = 0; i < N; i++) {").replace(
        "for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) s +=", "for (int j = 0; j <= k; j++) for (int i = 0; i < N; i++) s +=")
    assert source.count("j <= k") == 4
    assert "scale@7" in verified_ports(tmp_path, source)


def test_a_table_seen_as_an_untyped_pointer_may_get_any_rows(tmp_path):
    # through `void *` the table can be filled with anything (memcpy of other rows): its rows are not distinct
    source = TABLES.replace("#include <stdlib.h>", "#include <stdlib.h>\n#include <string.h>").replace(
        "  scale(b, a, N);", "  void *slots = b[1];\n  memcpy(slots, b[0], N * sizeof(double *));\n  scale(b, a, N);")
    found = loops(tmp_path, source)
    assert found[8][:2] == ("k", "not-proven") and "rows of 'out' are pointers" in found[8][2]


LEVELS = r"""
#include <stdio.h>
#include <stdlib.h>
#define L 4
#define N 12
static void scale(double ***out, double ***in, int n) {
  int k, j, i;
  for (k = 0; k < n; k++)
    for (j = 0; j < n; j++)
      for (i = 0; i < n; i++)
        out[k][j][i] = 0.5 * in[k][j][i] + 1.0;
}
int main(void) {
  double ****lev = (double ****)malloc(L * sizeof(double ***));
  for (int l = 0; l < L; l++) {
    lev[l] = (double ***)malloc(N * sizeof(double **));
    for (int k = 0; k < N; k++) {
      lev[l][k] = (double **)malloc(N * sizeof(double *));
      for (int j = 0; j < N; j++) lev[l][k][j] = (double *)malloc(N * sizeof(double));
    }
  }
  for (int l = 0; l < L; l++) for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < N; i++)
    lev[l][k][j][i] = (l + k * 3 + j * 5 + i) % 9;
  int m, p;
  for (m = 1; m < L; m++) {
    p = m - 1;
    scale(lev[m], lev[p], N);
  }
  scale(lev[0], lev[0], N);
  double s = 0;
  for (int l = 0; l < L; l++) for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < N; i++)
    s += lev[l][k][j][i] * (i + 1);
  printf("%.6f\n", s);
  return 0;
}
"""


def test_rows_of_one_table_at_subscripts_a_constant_apart_are_distinct_and_one_table_twice_is_one(tmp_path):
    # scale(lev[m], lev[p]) with p = m - 1 just before: two different rows of lev; scale(lev[0], lev[0]): one
    # table under two names, which the loop reads and writes element by element in each iteration
    found = loops(tmp_path, LEVELS)
    assert [found[line][:2] for line in (8, 9, 10)] == [("k", "parallel"), ("j", "parallel"), ("i", "parallel")]
    assert "scale@8" in verified_ports(tmp_path, LEVELS)


def test_one_table_under_two_names_keeps_what_crosses_iterations(tmp_path):
    source = LEVELS.replace("out[k][j][i] = 0.5 * in[k][j][i] + 1.0;", "out[k][j][i] = 0.5 * in[k][j][(i + 1) % n];")
    found = loops(tmp_path, source)
    assert found[10][:2] != ("i", "parallel")
    shifted = LEVELS.replace("out[k][j][i] = 0.5 * in[k][j][i] + 1.0;", "out[k][j][i] = 0.5 * in[k][(j + 1) % n][i];")
    assert loops(tmp_path, shifted)[9][:2] != ("j", "parallel")
    # a row written through one name and read through the other in a later j: the i loop inside has no dependence
    # of its own, but its two device copies would miss the row, so nothing of the nest may run on the device
    previous = LEVELS.replace("out[k][j][i] = 0.5 * in[k][j][i] + 1.0;",
                              "out[k][j][i] = 0.5 * in[k][j > 0 ? j - 1 : 0][i];")
    found = loops(tmp_path, previous)
    assert found[10][:2] == ("i", "not-proven") and "may be one table" in found[10][2]
    apart = LEVELS.replace("    p = m - 1;\n", "    p = m - 1;\n    p = p * 0 + m;\n")    # p = m: one row after all
    assert loops(tmp_path, apart.replace("0.5 * in[k][j][i] + 1.0", "in[k][j][0]"))[10][:2] != ("i", "parallel")


def test_a_row_pointer_handed_over_by_address_may_be_overwritten(tmp_path):
    source = TABLES.replace("#include <stdlib.h>", "#include <stdlib.h>\n#include <string.h>").replace(
        "  scale(b, a, N);", "  memcpy(&b[0][1], &b[0][0], sizeof(double *));\n  scale(b, a, N);")
    found = loops(tmp_path, source)
    assert found[8][:2] == ("k", "not-proven") and "rows of 'out' are pointers" in found[8][2]


def test_a_break_that_may_skip_the_write_keeps_the_array_shared(tmp_path):
    found = loops(tmp_path, _variant("        r2[i1] = r[i3 - 1][i2][i1] + r[i3 + 1][i2][i1];\n",
                                     "        r2[i1] = r[i3 - 1][i2][i1] + r[i3 + 1][i2][i1];\n"
                                     "        if (r2[i1] > 100.0) break;\n"))
    assert found[9][1] != "parallel"


SUMS = r"""
#include <stdio.h>
#include <stdlib.h>
#define R 20
#define P 16
static void rows(double a[R][P], const double c[P][P], double sum[P]) {
  int r, p, s;
  for (r = 0; r < R; r++) {
    for (p = 0; p < P; p++) {
      sum[p] = 0.0;
      for (s = 0; s < P; s++)
        sum[p] += a[r][s] * c[s][p];
    }
    for (p = 0; p < P; p++)
      a[r][p] = sum[p];
  }
}
int main(void) {
  double (*a)[P] = malloc(sizeof(double[R][P])), (*c)[P] = malloc(sizeof(double[P][P]));
  double *sum = malloc(P * sizeof(double));
  for (int i = 0; i < R; i++) for (int j = 0; j < P; j++) a[i][j] = (i * 3 + j) % 5;
  for (int i = 0; i < P; i++) for (int j = 0; j < P; j++) c[i][j] = (i + 2 * j) % 3;
  rows(a, c, sum);
  double t = 0;
  for (int i = 0; i < R; i++) for (int j = 0; j < P; j++) t += a[i][j] * (j + 1);
  printf("%.3f\n", t);
  free(a); free(c); free(sum);
  return 0;
}
"""


def test_a_scratch_parameter_no_caller_reads_afterwards_is_private_to_each_thread(tmp_path):
    # PolyBench doitgen's shape: `sum` is the caller's, but it only frees it after the call
    found = loops(tmp_path, SUMS)
    assert found[8][:2] == ("r", "parallel")
    assert "rows@8" in verified_ports(tmp_path, SUMS)


def test_a_scratch_parameter_the_caller_reads_afterwards_keeps_its_dependences(tmp_path):
    found = loops(tmp_path, SUMS.replace("  printf(\"%.3f\\n\", t);", "  printf(\"%.3f %.3f\\n\", t, sum[3]);"))
    assert found[8][:2] == ("r", "carried") and "sum" in found[8][2]
    twice = loops(tmp_path, SUMS.replace("  rows(a, c, sum);", "  rows(a, c, sum);\n  rows(a, c, sum);"))
    assert twice[8][:2] == ("r", "carried")
    kept = loops(tmp_path, SUMS.replace("static void rows(", "static double *last;\nstatic void rows(").replace(
        "  int r, p, s;", "  int r, p, s;\n  last = sum;"))
    assert kept[10][:2] == ("r", "carried")


BIG_SCRATCH = """#define N 64
#define M {m}
double out[N];
void f(void) {{
  double x[M];
  for (int k = 0; k < N; k++) {{
    for (int i = 0; i < M; i++) x[i] = k * i;
    double s = 0;
    for (int i = 0; i < M; i++) s += x[i] * x[M - 1 - i];
    out[k] = s;
  }}
}}
int main(void) {{ f(); return (int)out[3] & 1; }}
"""


def test_a_copy_per_thread_larger_than_a_threads_local_memory_lives_in_device_memory(tmp_path):
    # 70,000 doubles (560,000 bytes) per thread: more than the 512 KiB of local memory CUDA gives a thread (ptxas
    # compiles such a stack frame, the launch fails), so the copies are in device memory, element e of thread t
    # at e * threads + t (NPB EP's 1 MiB x); the port compiles with nvcc and verifies
    import c2gpu
    path = tmp_path / "big.c"
    path.write_text(BIG_SCRATCH.format(m=70000))
    (nest,) = c2gpu.analyze(str(path), run_cpu=False).nests
    assert nest.ported and nest.loops[0].role == "grid x", nest.refusal
    cu = tmp_path / "big.cu"
    r = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(path), "-o", str(cu)], capture_output=True,
                       text=True, timeout=300)
    assert "(560,000 bytes) per thread in device memory" in r.stderr, r.stderr
    text = cu.read_text()
    assert "c2gpu_scratch_" in text and "[70000];" not in text
    if shutil.which("nvcc"):
        assert subprocess.run(["nvcc", "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "big.o")]).returncode == 0
    assert "f@6" in verified_ports(tmp_path, BIG_SCRATCH.format(m=70000))
    path.write_text(BIG_SCRATCH.format(m=6000))
    (nest,) = c2gpu.analyze(str(path), run_cpu=False).nests
    assert nest.ported and nest.loops[0].role == "grid x", nest.refusal
    subprocess.run([sys.executable, "-m", "c2gpu", "port", str(path), "-o", str(cu)], capture_output=True, timeout=300)
    assert "c2gpu_scratch_" not in cu.read_text() and "double x[6000];" in cu.read_text()


# --------------------------------------------------------------------------- arrays declared inside the nest

INNER = """#define N 40
#define M 30
double out[N][N][M], in[N][N][M];
void f(void) {
  for (int k = 0; k < N; k++) {
    for (int j = 0; j < N; j++) {
      DECL
      for (int i = 0; i < M; i++) { t[0][i] = in[k][j][i] * 2; t[1][i] = in[k][j][i] - k; }
      for (int i = 1; i < M - 1; i++) out[k][j][i] = t[0][i - 1] + t[1][i + 1];
    }
  }
}
int main(void) {
  for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < M; i++) in[k][j][i] = k - i + j;
  f();
  double s = 0;
  for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < M; i++) s += out[k][j][i] * (k + 1);
  printf("%.6f\\n", s);
  return 0;
}
"""


def inner(decl: str) -> str:
    return "#include <stdio.h>\n" + INNER.replace("DECL", decl)


def test_an_array_declared_in_the_loop_body_is_a_new_array_per_iteration(tmp_path):
    # t is declared inside j: each (k, j) iteration has its own, so k and j are parallel and the kernel gives each
    # thread its copy (declared once at the top of the thread, flat; the declaration in the body is not repeated)
    found = loops(tmp_path, inner("double t[2][M];"))
    assert [found[line][:2] for line in (6, 7)] == [("k", "parallel"), ("j", "parallel")], found
    assert "f@6" in verified_ports(tmp_path, inner("double t[2][M];"))
    r = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(tmp_path / "a.c"), "-o", str(tmp_path / "a.cu")],
                       capture_output=True, text=True, timeout=300)
    assert "note: t is declared inside the loop at line 7: a new array in every iteration, in each iteration of " \
           "loop 'k'" in r.stderr, r.stderr
    code = (tmp_path / "a.cu").read_text()
    kernel = code[code.index("__global__ void c2gpu_f_6_k0"):]
    kernel = kernel[:kernel.index("\n}\n")]
    assert kernel.count("double t[") == 1 and "double t[60];" in kernel
    assert "t[i + 30]" in kernel or "t[30 + i]" in kernel


def test_an_array_declared_outside_the_inner_loop_is_privatized_there_by_coverage(tmp_path):
    # declared in k, so a new array per k; every j iteration writes t[0][*] and t[1][*] before reading them, so the
    # j iterations get copies too (the coverage proof of array_private): both loops are the grid
    src = inner("").replace("  for (int k = 0; k < N; k++) {\n", "  for (int k = 0; k < N; k++) {\n    double t[2][M];\n")
    found = loops(tmp_path, src)
    assert found[6][:2] == ("k", "parallel") and found[8][:2] == ("j", "parallel"), found
    assert "f@6" in verified_ports(tmp_path, src)
    # an element read before this j iteration writes it (t[1][0] of the previous j) passes between j iterations
    src = src.replace("t[1][i + 1];", "t[1][i + 1] + t[1][0];").replace("t[1][i] = in[k][j][i] - k;",
                                                                        "if (i > 0) t[1][i] = in[k][j][i] - k;")
    found = loops(tmp_path, src)
    assert found[6][:2] == ("k", "parallel") and found[8][1] != "parallel", found


def test_arrays_declared_inside_the_nest_that_stay_refused(tmp_path):
    # (an initializer of at most MAX_ELEMENTS elements reads as assignments: `double t[2][M] = {{0}};` is ported)
    for decl, why in (("double t[3][M] = {{0}};", "its initializer is not analysed"),
                      ("static double t[2][M];", "static"),
                      ("double t[2][M]; double *p = &t[0][0]; p[0] = 1;", "")):
        found = loops(tmp_path, inner(decl))
        assert found[6][1] != "parallel" and why in found[6][2], (decl, found[6])
    # an array the nest's kernels would share (declared in a loop that stays on the host around them): refused
    src = """#define N 40
#define M 30
double out[M], in[M];
void f(void) {
  for (int k = 0; k < N; k++) {
    double t[M];
    for (int i = 0; i < M; i++) t[i] = in[i] * k;
    for (int i = 1; i < M - 1; i++) out[i] = 0.5 * out[i] + t[i - 1] + t[i + 1];
  }
}
"""
    import c2gpu
    (nest,) = c2gpu.analyze(src, run_cpu=False).nests
    assert not nest.ported and "array 't' is declared inside the nest (line 6), but no kernel gives each thread its " \
        "own copy of it" in nest.refusal, nest.refusal


MAIN_SCRATCH = r"""
#include <stdio.h>
#define N 40
#define M 50
static double r[N][M], s[N];
static double x[M];               /* NPB EP's x: a static array only main names */
int main(void) {
  int k, i;
  for (k = 0; k < N; k++) for (i = 0; i < M; i++) r[k][i] = (k * 7 + i) % 11;
  for (k = 0; k < N; k++) {
    for (i = 0; i < M; i++) x[i] = r[k][i] * 2;
    s[k] = 0;
    for (i = 0; i < M; i++) s[k] += x[i] * x[M - 1 - i];
  }
  printf("%.6f %.6f\n", s[3], s[N - 1]);
  return 0;
}
"""


def test_a_static_array_only_main_names_is_private_to_each_thread(tmp_path):
    """main runs once: what it leaves in a static array that no other function names is never read again."""
    assert loops(tmp_path, MAIN_SCRATCH)[10][:2] == ("k", "parallel")
    assert "main@10" in verified_ports(tmp_path, MAIN_SCRATCH)
    # another function names it, the file calls main, or main reads it after the nest: its values may be read
    for old, new in (("int main(void) {", "double peek(void) { return x[0]; }\nint main(void) {"),
                     ("  printf(", "  if (s[0] < -1) main();\n  printf("),
                     ("  printf(\"%.6f %.6f\\n\", s[3], s[N - 1]);", "  printf(\"%.6f %.6f\\n\", s[3], x[2]);")):
        assert old in MAIN_SCRATCH
        found = loops(tmp_path, MAIN_SCRATCH.replace(old, new))
        line = 10 + new.count("\n")
        assert found[line][:2] != ("k", "parallel"), (new, found[line])


# arrays a loop's body declares with an initializer (frontend/initializers.py): a filter's weights, a small table
INITIALIZED = r"""
#include <stdio.h>
#define N 1000
float in[N], out[N];
int t2[N][3];

int main(void)
{
  for (int i = 0; i < N; i++)
    in[i] = (float)(i % 17) / 17.0f;
  for (int i = 1; i < N - 1; i++) {
    const float w[3] = {0.25f, 0.5f, 0.25f};
    out[i] = w[0] * in[i - 1] + w[1] * in[i] + w[2] * in[i + 1];
  }
  for (int i = 0; i < N; i++) {
    int t[2][3] = {{i, 1}, {2 * i}};
    int u[] = {i, i + 1, i + 2, i + 3};
    for (int k = 0; k < 3; k++)
      t2[i][k] = t[0][k] + t[1][k] * u[k] + u[k + 1];
  }
  double s = 0;
  for (int i = 0; i < N; i++)
    s += out[i] + t2[i][0] + t2[i][1] + t2[i][2];
  printf("%f\n", s);
  return 0;
}
"""


def test_an_array_initialized_where_the_loop_declares_it_is_private_and_ported(tmp_path):
    """Before, 'its initializer is not analysed' kept both loops on the CPU.  The initializer runs in each
    iteration: read as the assignment of every element (those the list leaves out set to 0), the array is private
    to each thread; the ports compute what the C does (verify, three thread orders)."""
    found = loops(tmp_path, INITIALIZED)
    assert found[11][:2] == ("i", "parallel") and found[15][:2] == ("i", "parallel"), found
    assert {"main@11", "main@15"} <= verified_ports(tmp_path, INITIALIZED)


def test_the_assignments_an_initializer_reads_as():
    from pycparser import c_generator
    from c2gpu.frontend.initializers import expanded
    from c2gpu.frontend.parse import parse_c

    def stores(decl: str) -> list[str] | None:
        ast = parse_c(f"void f(int i) {{ for (;;) {{ {decl} }} }}", "t.c")
        found = expanded(ast.ext[0].body)
        return [c_generator.CGenerator().visit(s) for s in found[0][3]] if found else None
    assert stores("int t[2][3] = {{i, 1}, {2 * i}};") == ["t[0][0] = i", "t[0][1] = 1", "t[0][2] = 0",
                                                          "t[1][0] = 2 * i", "t[1][1] = 0", "t[1][2] = 0"]
    assert stores("int t[2][2] = {1, 2, 3};") == ["t[0][0] = 1", "t[0][1] = 2", "t[1][0] = 3", "t[1][1] = 0"]
    assert stores("float u[] = {i, i + 1};") == ["u[0] = i", "u[1] = i + 1"]
    # left as they are (the nest keeps its refusal): a static table, a call, a string, a designator, a pointer
    # table, a size c2gpu cannot read, more than MAX_ELEMENTS elements, braces inside a row
    for decl in ("static int s[2] = {1, 2};", "int c[2] = {g(), 1};", "char s[4] = \"abc\";",
                 "int d[4] = {[2] = 1};", "int *p[2] = {0, 0};", "int v[i] = {1};", "int big[65] = {1};",
                 "int b[2][2][2] = {{1, {2}}};", "int j[2] = {i++, 1};"):
        assert stores(decl) is None, decl


def test_an_initializer_that_calls_keeps_the_loop_on_the_cpu(tmp_path):
    source = INITIALIZED.replace("{0.25f, 0.5f, 0.25f}", "{0.25f, 0.5f, (float)rand()}").replace(
        "#include <stdio.h>", "#include <stdio.h>\n#include <stdlib.h>")
    found = loops(tmp_path, source)
    assert found[12][1] != "parallel" and "initializer" in found[12][2], found[12]
