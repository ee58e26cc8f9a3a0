"""Loops c2gpu does not count, run whole inside a thread (frontend/nests.py runs_whole): a `for` whose bounds read
memory (CSR rows), a `while` or `do`, a `for` with a `break` of its own.  The loops around them are judged by what
the loop may touch in any number of its iterations; every port here is run on the CPU execution layer against the
original (three thread orders, poisoned device memory), and what must stay sequential is checked with its reason.
"""
from __future__ import annotations

import c2gpu

from conftest import loop_verdicts as loops, verified_ports



CSR = r"""
#include <stdio.h>
#define N 1000
#define NZ 9000
static double a[NZ], p[N], q[N];
static int colidx[NZ], rowstr[N + 1];
static void spmv(int n, const int rows[], const int cols[], const double val[], const double x[], double y[]) {
  int j, k;
  double sum;
  for (j = 0; j < n; j++) {
    sum = 0.0;
    for (k = rows[j]; k < rows[j + 1]; k++)
      sum = sum + val[k] * x[cols[k]];
    y[j] = sum;
  }
}
int main(void) {
  int j, k;
  for (j = 0; j <= N; j++) rowstr[j] = 9 * j - (j % 3 == 1);
  rowstr[N] = NZ;
  for (k = 0; k < NZ; k++) { a[k] = (k % 7) * 0.5; colidx[k] = (k * 13) % N; }
  for (j = 0; j < N; j++) p[j] = j * 0.001;
  for (int it = 0; it < 3; it++) {
    spmv(N, rowstr, colidx, a, p, q);
    for (j = 0; j < N; j++) p[j] = q[j] * 0.01;
  }
  double t = 0;
  for (j = 0; j < N; j++) t += q[j];
  printf("%.10f %d\n", t, k);
  return 0;
}
"""


def test_a_sparse_matrix_vector_product_maps_its_rows(tmp_path):
    found = loops(tmp_path, CSR)
    assert found[10][:2] == ("j", "parallel")
    # the parameters are the arrays every call passes: their extents come from there, so the gathered x (and
    # val, cols, indexed by the row's counter) are copied whole
    assert "spmv@10" in verified_ports(tmp_path, CSR)


def test_writes_through_the_counter_keep_the_loops_around_sequential(tmp_path):
    found = loops(tmp_path, r"""
double z[100]; int x[100];
void f(void) { int i, k;
  for (i = 0; i < 100; i++)
    for (k = x[i]; k < x[i] + 3 && k < 100; k++) z[k] += 1.0;
}""")
    var, status, reason = found[4]
    assert (var, status) == ("i", "not-proven") and "z[k]" in reason


def test_a_sum_the_inner_loop_carries_across_rows_is_not_private(tmp_path):
    # `total` is never reset in a row: each row adds to the previous rows' total, so rows may not run at once (a
    # dependence the inner loop may make: it may run zero times)
    found = loops(tmp_path, r"""
double a[100], out[10]; int rows[11];
void f(void) { int j, k; double total = 0;
  for (j = 0; j < 10; j++) {
    for (k = rows[j]; k < rows[j + 1]; k++) total += a[k];
    out[j] = total;
  }
}""")
    assert found[4][:2] == ("j", "not-proven") and "total" in found[4][2]


WHOLE = r"""
#include <stdio.h>
#define N 500
static int x[N], cnt[N], first[N];
static double y[N];
int main(void) {
  int i, k, s = 0;
  for (i = 0; i < N; i++) x[i] = (i * 7919) % 1000;
  for (i = 0; i < N; i++) {
    int v = x[i] + 1;
    s = 0;
    while (v != 1) { v = (v % 2) ? 3 * v + 1 : v / 2; s++; }
    cnt[i] = s;
  }
  for (i = 0; i < N; i++) {
    first[i] = -1;
    for (k = 0; k < N; k++)
      if (x[k] == (i * 3) % 1000) { first[i] = k; break; }
  }
  for (i = 0; i < N; i++) {
    double acc = 0.0;
    int m = 0;
    do { double h = x[(i + m) % N] * 0.5; acc += h; m++; } while (m < 3 + i % 4);
    y[i] = acc;
  }
  long t = 0; double u = 0;
  for (i = 0; i < N; i++) { t += cnt[i] + first[i]; u += y[i]; }
  printf("%ld %f %d %d\n", t, u, k, s);
  return 0;
}
"""


def test_while_do_and_a_searching_break_run_inside_each_thread(tmp_path):
    found = loops(tmp_path, WHOLE)
    assert [found[line][:2] for line in (9, 15, 20)] == [("i", "parallel")] * 3
    # s and k are written before they are read in every iteration, and their last values are kept for printf
    assert {"main@9", "main@15", "main@20"} <= verified_ports(tmp_path, WHOLE)


def test_control_that_leaves_the_inner_loop_blocks_the_loops_around(tmp_path):
    found = loops(tmp_path, r"""
int x[100], y[100];
int f(void) { int i, k;
  for (i = 0; i < 100; i++)
    for (k = 0; k < x[i]; k++) { if (k > 50) return k; y[i] += k; }
  return 0;
}
void g(void) { int i, k;
  for (i = 0; i < 100; i++) {
    k = 0;
    while (k < x[i]) { if (k > 50) goto out; k++; }
    y[i] = k;
  }
  out: ;
}""")
    assert found[4][:2] == ("i", "not-proven")           # (the loop is k's, as before: its bound blocks i)
    assert found[9] == ("i", "not-proven", "while loop inside the nest: its control flow cannot be analysed (line 11)")


def test_an_access_only_the_inner_loop_makes_must_stay_inside_what_the_nest_touches(tmp_path):
    # out[i - 1] is written only when cnt[i] > 0: with cnt[0] == 0 the C never touches out[-1], which need not
    # exist, so a copy of out[-1 .. n-2] could reach outside the object: refused with the reason
    path = tmp_path / "a.c"
    path.write_text(r"""
void f(int n, const int *restrict cnt, double *restrict out, const double *restrict in) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < cnt[i]; k++) out[i - 1] += in[i];
}""")
    (nest,) = c2gpu.analyze(str(path), run_cpu=False).nests
    assert nest.loops[0].status == "parallel"
    assert "in a loop it does not count" in nest.refusal


def test_the_extent_of_a_parameter_comes_from_the_arrays_its_calls_pass_only_when_they_agree(tmp_path):
    source = r"""
#include <stdio.h>
static double a[64], b[64], c[32]; static int idx[64];
static void gather(int n, const int ix[], const double src[], double dst[]) {
  for (int i = 0; i < n; i++) dst[i] = src[ix[i]];
}
int main(void) {
  for (int i = 0; i < 64; i++) { idx[i] = (i * 5) %% 32; a[i] = i; }
  gather(64, idx, a, b);
  %s
  printf("%%f %%f\n", b[7], c[3]);
  return 0;
}
"""
    assert "gather@5" in verified_ports(tmp_path, source % "")
    # a second call passes c, of 32 elements: the extent of src is no longer one number
    path = tmp_path / "b.c"
    path.write_text(source % "gather(32, idx, c, b);")
    report = c2gpu.analyze(str(path), run_cpu=False)
    nest = next(n for n in report.nests if n.name == "gather@5")
    assert "its extent is unknown" in nest.refusal
