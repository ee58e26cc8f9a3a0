"""Ports that used to be wrong (the claim was right, the CUDA was not): each is now correct or refused with
its reason.  Where a nest is ported, the port is compiled with nvcc and run on the CPU execution layer against
the original program; where it is refused, the reason is checked, since a refusal is the fix.
"""
import subprocess
import sys

import c2gpu
from c2gpu.emulate.build import compile_for_cpu

import pytest

from conftest import requires_tool, verified_ports, write_c
from test_port_semantics import assert_nvcc_compiles, port, ported, run_both


def nests(tmp_path, source: str, **options) -> dict:
    """{nest name: NestReport} of c2gpu.analyze on the source (no GPU: loop verdicts and the port's refusals)."""
    return {n.name: n for n in c2gpu.analyze(source, name=str(tmp_path / "a.c"), **options).nests}


# 1. Two names for one object: each element written through one name only (well-defined C, restrict or not)

ONE_OBJECT = r"""
#include <stdio.h>
float flat[1000]; float *restrict xx;
double buf[1001]; double *p = buf + 1;
int main(void) { xx = flat;
  for (int i = 0; i < 500; i++) { xx[2*i] = 1.0f + i; flat[2*i+1] = 2.0f + i; }
  double s = 0; for (int i = 0; i < 500; i++) s += xx[2*i]*3 + flat[2*i+1];
  for (int i = 0; i < 1001; i++) buf[i] = -1;
  for (int i = 0; i < 500; i++) { p[2*i] = i; buf[2*i + 2] += 0.5; }
  double t = 0; for (int i = 0; i < 1001; i++) t += buf[i] * (i % 7);
  printf("%a %a\n", s, t); }
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_a_pointer_that_is_an_array_is_that_array_copied_once(tmp_path):
    cu, log = port(tmp_path, ONE_OBJECT)
    assert ported(log) == {"main@6", "main@7", "main@8", "main@9", "main@10"}, log
    assert "assumed pointer parameter" not in log             # xx is a global: no parameter was assumed anything
    assert "'xx' is always the array 'flat' (xx = flat at line 5" in log
    assert "cudaMalloc((void **)&d_xx" not in cu.read_text()  # one object, one device copy
    assert_nvcc_compiles(cu)
    original, port_out = run_both(tmp_path, cu)
    assert original == port_out


SAME_OBJECT_PARAMETERS = r"""
#include <stdio.h>
float buf[1000];
static void f(float *restrict a, float *restrict b, int n) {
  for (int i = 0; i < n; i++) { a[2*i] = 1.0f + i; b[2*i+1] = 2.0f + i; }
}
int main(void) {
  f(buf, buf, 500);
  double s = 0; for (int i = 0; i < 1000; i++) s += buf[i] * (i % 7);
  printf("%a\n", s); }
"""


def test_two_written_names_of_one_object_with_gaps_are_not_copied_back_separately(tmp_path):
    f = nests(tmp_path, SAME_OBJECT_PARAMETERS)["f@5"]
    assert not f.ported and f.refusal.startswith("'a' and 'b' point into one object (a: the array 'buf'"), f.refusal
    assert f.loops[0].status == "parallel"


# 2. long double: nvcc makes it double (8 bytes) while the host copies 16-byte elements

LONG_DOUBLE = r"""
#include <stdio.h>
long double a[100], b[100]; double c[100];
int main(void) {
  for (int i = 0; i < 100; i++) b[i] = i * 0.5L;
  for (int i = 0; i < 100; i++) a[i] = b[i] * 2 + 1;
  for (int i = 0; i < 100; i++) c[i] = i * 1.5L;
  for (int i = 0; i < 100; i++) c[i] = c[i] * 2;
  long double s = 0; for (int i = 0; i < 100; i++) s += a[i] + c[i];
  printf("%Lf\n", s); }
"""


def test_nests_touching_long_double_stay_on_the_cpu_with_the_reason(tmp_path):
    found = nests(tmp_path, LONG_DOUBLE)
    refused = {name: n.refusal for name, n in found.items() if "is long double" in n.refusal}
    assert set(refused) == {"main@5", "main@6", "main@7", "main@9"}, refused
    assert refused["main@7"].startswith("the constant 1.5L (line 7) is long double, which CUDA's device code does not "
                                        "have"), refused
    assert found["main@8"].ported                                          # double only
    assert found["main@5"].loops[0].status == "parallel"                   # the loop is parallel; the port is not


# 3. A user function named like a CUDA math function (no <math.h>), 4. C that C++ rejects

NAMED_LIKE_CUDA = r"""
#include <stdio.h>
static double cospi(double x) { return x * 2.0 + 1.0; }
static float sinpif(float x) { return x * 3.0f; }
double a[100]; float b[100];
int main(void) {
  for (int i = 0; i < 100; i++) { a[i] = cospi(i); b[i] = sinpif((float)i); }
  double s = 0; for (int i = 0; i < 100; i++) s += a[i] + b[i];
  printf("%f\n", s); }
"""

NOT_CXX = r"""
#include <stdio.h>
struct S { void *p; int n; };
int a[100];
int main(void) {
  struct S s; s.p = a; s.n = 100;
  int *ip = s.p;
  for (int i = 0; i < 100; i++) ip[i] = i;
  for (int i = 0; i < 100; i++) a[i] = a[i] * 2;
  printf("%d\n", later(a[5]));
  return 0; }
int later(int x) { return x + 1; }
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_a_function_named_like_cudas_splits_the_port(tmp_path):
    cu, log = port(tmp_path, NAMED_LIKE_CUDA)
    assert ported(log) == {"main@7", "main@8"}, log
    assert "cospi() (line 3) has the name of a CUDA function" in log
    assert (tmp_path / "t.host.c").exists()
    assert_nvcc_compiles(cu)
    original, port_out = run_both(tmp_path, cu)
    assert original == port_out


@requires_tool("nvcc")
@requires_tool("g++")
def test_c_that_cxx_rejects_splits_the_port_and_the_build_line_builds_it(tmp_path):
    cu, log = port(tmp_path, NOT_CXX)
    assert ported(log) == {"main@8", "main@9"}, log
    assert "split because g++ rejects it as C++ (" in log and "t.c:7: invalid conversion from 'void*'" in log, log
    # the printed build line names its objects with -o, beside their sources, and an architecture
    line = log.split("build with: ")[1].splitlines()[0]
    assert line.startswith(f"nvcc -arch=sm_80 -c {cu} -o {tmp_path / 't.o'} && cc -c {tmp_path / 't.host.c'} -o "
                           f"{tmp_path / 't.host.o'} && nvcc -arch=sm_80 -o prog"), line
    assert_nvcc_compiles(cu)
    original, port_out = run_both(tmp_path, cu)
    assert original == port_out


# 6. errno: device math never sets it

ERRNO = r"""
#include <stdio.h>
#include <math.h>
#include <errno.h>
double a[100], x[100];
int main(void) {
  for (int i = 0; i < 100; i++) x[i] = i - 50;
  errno = 0;
  for (int i = 0; i < 100; i++) a[i] = sqrt(x[i]);
  for (int i = 0; i < 100; i++) a[i] = fabs(x[i]);
  printf("%d %f\n", errno, a[3]); }
"""


def test_math_calls_whose_errno_the_file_reads_stay_on_the_cpu(tmp_path):
    found = nests(tmp_path, ERRNO)
    assert not found["main@9"].ported
    assert found["main@9"].refusal == ("sqrt() (line 9) sets errno on the CPU and never on the GPU, and the file reads "
                                       "errno (line 11)")
    assert found["main@10"].ported and found["main@7"].ported             # fabs never sets errno


# 7. --assume-no-alias never overrides what the file shows

ASSUMED = r"""
#include <stdio.h>
int nglob = 10;
float a[100];
void f(float *a, int *p) { for (int i = 0; i < nglob; i++) { a[i] = 1; if (i == 2) p[0] = 5; } }
int main(void) { f(a, &nglob); float s = 0; for (int i = 0; i < 100; i++) s += a[i]; printf("%f %d\n", s, nglob); }
"""


def test_assume_no_alias_does_not_override_a_pointer_the_file_shows(tmp_path):
    loop = nests(tmp_path, ASSUMED, assume_no_alias=True)["f@5"].loops[0]
    assert loop.status == "not-proven", loop
    assert loop.reason.startswith("p[0] (line 5) writes 'nglob', used in bounds or subscripts: pointer 'p' points to "
                                  "'nglob' (the address of 'nglob' (line 3) at the call of f())"), loop


# 5. max/min over floating point keep the value C keeps among equal ones (-0.0, 0.0) and C's NaN rules

MIN_MAX = r"""
#include <stdio.h>
#include <math.h>
#define N 700
double x[N], y[40][50];
float f[N];
int main(void) {
  for (int i = 0; i < N; i++) x[i] = (i % 5 == 1) ? -0.0 : (i % 5 == 2 ? 0.0 : (i % 5 == 3 ? NAN : 3.0 + i % 7));
  for (int i = 0; i < N; i++) f[i] = (i % 4 == 0) ? 0.0f : (i % 4 == 1 ? -0.0f : 2.0f);
  for (int i = 0; i < 40; i++) for (int j = 0; j < 50; j++) y[i][j] = (i * 50 + j) % 3 == 0 ? -0.0 : (i + j) % 3 == 1 ? 0.0 : 1.0;
  double a = 1.0; for (int i = 0; i < N; i++) if (x[i] < a) a = x[i];
  double b = 1.0; for (int i = 0; i < N; i++) if (x[i] <= b) b = x[i];
  double c = 1.0; for (int i = 0; i < N; i++) c = fmin(c, x[i]);
  double d = 1.0; for (int i = 0; i < N; i++) d = fmin(x[i], d);
  double e = -1.0; for (int i = 0; i < N; i++) e = x[i] > e ? x[i] : e;
  double g = -1.0; for (int i = N - 1; i >= 0; i--) g = (g <= x[i]) ? x[i] : g;
  double h = NAN; for (int i = 0; i < N; i++) h = fmax(h, x[i]);
  double k = NAN; for (int i = 0; i < N; i++) if (x[i] > k) k = x[i];
  float m = 1.0f; for (int i = 0; i < N; i++) m = fminf(m, f[i]);
  float q = -1.0f; for (int i = 0; i < N; i++) if (f[i] >= q) q = f[i];
  double r = 1.0; for (int i = 0; i < 40; i++) for (int j = 0; j < 50; j++) if (y[i][j] < r) r = y[i][j];
  double s = 1.0; for (int i = 0; i < 40; i++) for (int j = 49; j >= 0; j--) if (y[i][j] <= s) s = y[i][j];
  double t = -5; for (int z = 0; z < 3; z++) for (int i = 0; i < N; i++) if (-x[i] >= t) t = -x[i];
  double u = -1.0; for (int i = 0; i < N; i++) u = u > x[i] ? u : x[i];   /* takes a NaN: not a reduction */
  printf("%g %g %g %g %g %g %g %g %g %g %g %g %g %g\n", a, b, c, d, e, g, h, k, m, q, r, s, t, u);
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_floating_point_max_and_min_keep_the_value_c_keeps(tmp_path):
    cu, log = port(tmp_path, MIN_MAX)
    reduced = {f"main@{line}" for line in range(11, 24)}
    assert reduced <= ported(log), reduced - ported(log)
    assert "main@24" not in ported(log)     # the NaN-taking form is not a reduction (the loop carries u)
    assert log.count("by block tree over (value, iteration) pairs, as C keeps equal values") == 13, log
    assert_nvcc_compiles(cu)
    original, port_out = run_both(tmp_path, cu)
    assert original == port_out and "-0" in original


# 8. The region of an array that statements running at different sizes touch: the union of their regions, at
# every size (isl's min/max of two ranges kept only the sizes where both statements run: with m <= 0 the inner
# statement never runs, and the copy-out of `a` stopped at a[n + m - 1], leaving a[5..9] behind for m = -5)

REGION_UNION = r"""
#include <stdio.h>
float a[64];
void f(int n, int m) {
  for (int i = 0; i < n; i++) {
    a[i] = 1.0f + i;
    for (int j = 0; j < m; j++)
      a[n + j] += 2.0f;
  }
}
int main(void) {
  int m = -5;
  f(10, m);
  double s = 0; for (int i = 0; i < 64; i++) s += a[i] * (i + 1);
  printf("%f\n", s);
  return 0; }
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_the_region_of_statements_that_run_at_different_sizes_is_their_union(tmp_path):
    cu, log = port(tmp_path, REGION_UNION)
    assert "f@5" in ported(log), log
    assert "m <= 0 ? n - 1 : m + n - 1" in cu.read_text()       # the end of a's region for either sign of m
    assert_nvcc_compiles(cu)
    original, port_out = run_both(tmp_path, cu)
    assert original == port_out


def assert_same_under_address_sanitizer(tmp_path, cu):
    """The port (t.cu, on the CPU execution layer, built with AddressSanitizer) prints what the original (t.c)
    prints, and touches no memory outside its objects."""
    subprocess.run(["cc", "-O1", "-w", str(tmp_path / "t.c"), "-o", str(tmp_path / "orig"), "-lm"], check=True)
    built = compile_for_cpu(cu, tmp_path / "port", extra_flags=["-w", "-lm", "-fsanitize=address"])
    assert built.ok, built.stderr[-3000:]
    original = subprocess.run([str(tmp_path / "orig")], capture_output=True, text=True, check=True).stdout
    run = subprocess.run([str(tmp_path / "port")], capture_output=True, text=True)
    assert "AddressSanitizer" not in run.stderr, run.stderr[-3000:]
    assert run.returncode == 0 and run.stdout == original


# 9. An else branch of an affine condition that is not a conjunction (!(i == 0)) reads exactly what it reads.
# The condition was dropped from the regions, and the copy-in of hz began a row before the array (hz[(i - 1)*N + j]
# at i = 0, which the else branch never reads): a read outside the object, which crashed c2gpu's port of the
# validation kernel fdtd-2d on a GPU (tests/gpu_check.py).  AddressSanitizer judges the port.

ELSE_BRANCH = r"""
#include <stdio.h>
#include <stdlib.h>
#define N 64
int main(void) {
  float *ey = malloc(N * N * sizeof(float)), *hz = malloc(N * N * sizeof(float));
  for (int i = 0; i < N * N; i++) { ey[i] = i % 7; hz[i] = i % 5; }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      if (i == 0) ey[i * N + j] = 1.0f;
      else ey[i * N + j] -= 0.5f * (hz[i * N + j] - hz[(i - 1) * N + j]);
  double s = 0; for (int i = 0; i < N * N; i++) s += ey[i] * (i % 3);
  printf("%f\n", s); free(ey); free(hz); return 0; }
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_an_else_branch_copies_only_what_it_reads(tmp_path):
    cu, log = port(tmp_path, ELSE_BRANCH)
    assert "main@8" in ported(log), log
    assert_nvcc_compiles(cu)
    assert_same_under_address_sanitizer(tmp_path, cu)


# 10. An access under a condition c2gpu cannot model (data-dependent) may touch only some of the elements its loops
# range over: its region is the hull of what it may touch.  Through a pointer of unknown extent that hull was
# copied in and out (`cudaMemcpy(a + -1, ...)`: outside the object).  Such an access must now stay inside what
# the nest surely touches (the condition's own read of a[i] covers a clamp); a declared array is clipped to its
# extent.  AddressSanitizer judges the port that remains.

MAYBE_TOUCHED = r"""
#include <stdio.h>
#include <stdlib.h>
#define N 4096
int main(void) {
  float *a = malloc(N * sizeof(float)), *x = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) { a[i] = i % 5 - 2; x[i] = (i % 3) - (i == 0); }
  for (int i = 0; i < N; i++)
    if (x[i] > 0) a[i - 1] += 1.0f;
  for (int i = 0; i < N; i++)
    if (a[i] < 0) a[i] = 0;
  double s = 0; for (int i = 0; i < N; i++) s += a[i] * (i % 7);
  printf("%f\n", s); free(a); free(x); return 0; }
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_an_access_under_a_data_dependent_condition_stays_inside_what_the_nest_touches(tmp_path):
    cu, log = port(tmp_path, MAYBE_TOUCHED)
    assert "main@10" in ported(log) and "main@8" not in ported(log), log
    assert "a[i - 1] (line 9) runs under a condition c2gpu cannot model" in log, log
    assert_same_under_address_sanitizer(tmp_path, cu)


# ... while the same element written in both branches of one such `if` is written in every iteration: ported

THRESHOLD = r"""
#include <stdio.h>
#include <stdlib.h>
#define N 4096
void threshold(const float *in, float *out, int n, float t) {
  for (int i = 0; i < n; i++)
    if (in[i] > t) out[i] = 1.0f;
    else out[i] = 0.0f;
}
int main(void) {
  float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) a[i] = (i * 37) % 101;
  threshold(a, b, N, 50.0f);
  double s = 0; for (int i = 0; i < N; i++) s += b[i] * (i % 7);
  printf("%f\n", s); free(a); free(b); return 0; }
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_an_element_written_in_both_branches_of_a_data_dependent_if_is_surely_touched(tmp_path):
    cu, log = port(tmp_path, THRESHOLD)
    assert "threshold@6" in ported(log), log
    assert_same_under_address_sanitizer(tmp_path, cu)


# 7. A parameter with the name of a set dimension: isl takes `[..., t] : t = n` for the parameter t, so the grid
# of `for (i = 0; i < n; i++) a[i + t] = i;` was computed from t (3 threads for 500 iterations)

@pytest.mark.parametrize("name", ["t", "e", "e0", "e1", "w"])
def test_a_parameter_named_like_an_isl_set_dimension_is_not_taken_for_it(tmp_path, name):
    source = f"""
#include <stdio.h>
static double a[64][1000];
static void f(int n, int {name}) {{
  for (int j = 0; j < 64; j++) for (int i = 0; i < n; i++) a[j][i + {name}] = i + j;
}}
int main(void) {{ f(500, 3); double s = 0;
  for (int j = 0; j < 64; j++) for (int i = 0; i < 1000; i++) s += a[j][i] * (i + j);
  printf("%f\\n", s); return 0; }}
"""
    assert "f@5" in verified_ports(tmp_path, source)


SHADOWED = r"""
#include <stdio.h>
int main(void) {
  int var[8];
  for (int i = 0; i < 8; i++) var[i] = 0;
  for (int i = 0; i < 20; i++) {
    for (int i = 0; i < 8; i++) {
      var[i]++;
    }
  }
  for (int i = 0; i < 8; i++) printf("%d\n", var[i]);
  return 0;
}
"""


def test_a_loop_variable_hidden_by_the_inner_loops_own_is_not_the_outer_one(tmp_path):
    """DataRaceBench DRB162: `for (int i ...) { for (int i ...) var[i]++; }` was ported with the outer i as the
    grid and var[i] read as indexed by it (every thread adding to its own element, 8 where C gives 20): the
    analyses tell loops apart by their variables' names.  Now both loops are not proven, with the reason."""
    n = nests(tmp_path, SHADOWED)["main@6"]
    assert not n.ported and "hides the loop variable of that name around it" in n.refusal, n.refusal
    assert "main@6" not in verified_ports(tmp_path, SHADOWED)


# An array reduction that another access meets inside its loop (differential test, disjunctions seed 72): with
# j mapped, V[e] += ... gathered in a partial per thread and added after the loop over k, while V[f] = ... wrote
# the element in between (f == e when i == 0): the port's V differed.  The reduction over j is no reduction now.

SPOILED = r"""
#include <stdio.h>
#define N 13
#define OFF 30
float A[62][62], B[62][62], V[62];
void nest7(void)
{
    int i, j, k;
    for (i = 0; i < N - 1; i++)
        for (j = 0; j < i + 1; j++)
            for (k = j; k < N; k++) {
                if (i != 1) V[OFF - i] += A[OFF + i][OFF + k - j];
                if (j < 1) V[OFF + {far}2*i] = B[OFF + i - j - 2][OFF + 2*k - 1];
            }
}
int main(void) {
  for (int x = 0; x < 62; x++) { V[x] = x; for (int y = 0; y < 62; y++) { A[x][y] = x + 0.5f * y; B[x][y] = x - y; } }
  nest7();
  double s = 0; for (int x = 0; x < 62; x++) s += V[x] * (x + 1);
  printf("%f\n", s);
  return 0;
}
"""


@requires_tool("g++")
def test_an_array_reduction_another_access_meets_inside_its_loop_is_none(tmp_path):
    found = nests(tmp_path, SPOILED.replace("{far}", ""))["nest7@9"]
    j = next(lp for lp in found.loops if lp.var == "j")
    assert j.status == "carried" and "no reduction, as V[30 + (2 * i)] (line 13) touches the element inside the " \
                                       "loop" in j.reason, j.reason
    write_c(tmp_path, SPOILED.replace("{far}", ""), "spoiled.c")
    # asked to map j, as the mapping chose for the program the test generated: refused with the reason
    mapped = subprocess.run([sys.executable, "-m", "c2gpu", "verify", "--map", "j", "spoiled.c"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert "not portable: --map asks for loop 'j' (line 10), but carries an anti dependence on V" in mapped.stderr \
        + mapped.stdout, mapped.stdout + mapped.stderr
    # the other write far from the reduced element: a reduction over j again
    far = nests(tmp_path, SPOILED.replace("{far}", "1 + "))["nest7@9"]
    assert next(lp for lp in far.loops if lp.var == "j").status == "reduction"


# Partial results per element chosen by a loop inside the thread, and two sibling loops over one name (differential
# test, siblings seed 80): the partials of U[30 - i] (13 values of i) were sized by the second loop over i (11),
# so two elements were written past the array of partials and never added: the port's U differed.

SIBLING_NAMES = r"""
#include <stdio.h>
float A[62][62], C[62][62], U[62]; float s;
void nest9(void)
{
    int t, i, j;
    for (t = 0; t < 3; t++) {
        for (i = 0; i < 13; i++)
            U[30 - i] += C[29 + i][30 + 2*i];
        for (i = 0; i < 11; i++)
            for (j = 0; j < 11; j++)
                s += C[30 - j - i][30 + j] + A[32 + 2*i][30 + j];
    }
}
int main(void) {
  for (int x = 0; x < 62; x++) { U[x] = x * 0.25f; for (int y = 0; y < 62; y++) { A[x][y] = x - 0.5f * y;
                                                                                 C[x][y] = (x * y) % 7 * 0.125f; } }
  nest9();
  double z = s; for (int x = 0; x < 62; x++) z += U[x] * (x + 1);
  printf("%f\n", z);
  return 0;
}
"""


@requires_tool("g++")
def test_partials_per_element_follow_the_loop_around_their_statement(tmp_path):
    mapped = subprocess.run([sys.executable, "-m", "c2gpu", "verify", "--map", "t", write_c(tmp_path, SIBLING_NAMES)],
                            cwd=tmp_path, capture_output=True, text=True)
    out = mapped.stdout + mapped.stderr
    assert "ported nest nest9@7" in out and "a partial per value of i in each thread: 13" in out, out
    assert "verify: PASS" in out, out


# a loop variable the thread's body declares (`int i, j, k;` before `for (i = 0; ...)`), in a kernel that stages a
# small array in shared memory (found by the csmith differential test, seed 20251524)
BODY_DECLARES_LOOP_VARIABLE = """#include <stdio.h>
short out[23];
int tab[2][3][1] = {{{1}, {2}, {3}}, {{4}, {5}, {6}}};
int main(void)
{
    long g;
    for (g = 0; g > -23; g--) {
        short l[1];
        int i, j, k;
        for (i = 0; i < 1; i++)
            l[i] = 6;
        out[-g] = l[0] + (short)g + tab[0][0][0];
    }
    printf("%d %d\\n", out[5], out[22]);
    return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_a_loop_variable_the_body_declares_is_declared_once_in_a_kernel_with_tiles(tmp_path):
    """Before, the tiled kernel hoisted the body's `int i;` beside the `int i;` it declares for the loop inside the
    thread: the port compiled nowhere ("redeclaration of 'int i'")."""
    cu, log = port(tmp_path, BODY_DECLARES_LOOP_VARIABLE, "--gpu", "h100-sxm", "--no-run")
    assert ported(log) == {"main@7"} and "shared memory KEPT: tab" in log, log
    kernel = cu.read_text()
    kernel = kernel[kernel.index("__global__ void c2gpu_main_7_k0"):]
    assert kernel[:kernel.index("\n}\n")].count("int i;") == 1
    assert_nvcc_compiles(cu)
    original, port_out = run_both(tmp_path, cu)
    assert original == port_out


TWO_ELEMENTS_ONE_SPELLING = r"""
#include <stdio.h>
#define N 64
#define OFF (2 * N + 4)
float U[3 * N + 8], C[N][N];
int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            C[i][j] = (float)((i * 3 + j) % 7) * 0.5f;
    for (i = 0; i < 3 * N + 8; i++)
        U[i] = (float)(i % 5);
    for (i = 2; i < N - 2; i++)
        for (j = 1; j < N - 1; j++) {
            U[OFF + i - 1] += C[j][i];
            U[OFF + i + 1] += C[i][j];
        }
    for (i = 0; i < 3 * N + 8; i++)
        printf("%d %.9g\n", i, U[i]);
    return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_two_element_reductions_whose_texts_differ_only_in_operators_get_their_own_names(tmp_path):
    """`U[OFF + i - 1] +=` and `U[OFF + i + 1] +=` over j, rows split across threads: both partial results were
    named c2gpu_elem_U____2___N____4____i____1__part, and the port compiled nowhere ("redeclaration of ...";
    the differential test's seed 247 of the disjunctions family, on main before)."""
    cu, log = port(tmp_path, TWO_ELEMENTS_ONE_SPELLING, "--gpu", "h100-sxm", "--no-run")
    assert "main@14" in ported(log), log
    assert_nvcc_compiles(cu)
    original, port_out = run_both(tmp_path, cu)
    assert original == port_out
