"""Code between kernels: a sequential loop stays on the host around the kernels of its parallel inner loops,
and the statements and sequential loops between them run as written in one-thread kernels on the device
data (c2gpu/passes/mapping.py `serial_kernel`); scalars they write live on the device between the launches."""
from __future__ import annotations

import re

import pytest

from c2gpu.drivers.cli import main
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.pipeline import PORT

from conftest import requires_tool

# durbin's shape (PolyBench): scalars computed between parallel loops, read by the next kernels
DURBIN = """
#define N 40
double r[N], y[N], z[N];
int main(void) {
    double alpha, beta, sum;
    int i, k;
    for (i = 0; i < N; i++)
        r[i] = (N + 1 - i) / (2.0 * N);
    y[0] = -r[0];
    beta = 1.0;
    alpha = -r[0];
    for (k = 1; k < N; k++) {
        beta = (1 - alpha * alpha) * beta;
        sum = 0.0;
        for (i = 0; i < k; i++)
            sum += r[k - i - 1] * y[i];
        alpha = -(r[k] + sum) / beta;
        for (i = 0; i < k; i++)
            z[i] = y[i] + alpha * y[k - i - 1];
        for (i = 0; i < k; i++)
            y[i] = z[i];
        y[k] = alpha;
    }
    return (int) (1000 * (y[3] + alpha + beta + sum)) & 127;
}
"""

# lu's shape: a sequential inner loop (in one thread) before a parallel one, in a sequential outer loop
LU = """
#define N 24
double A[N][N];
int main(void) {
    int i, j, k;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (i == j) ? N + 1.0 : 1.0 / (1 + i + 2 * j);
    for (i = 0; i < N; i++) {
        for (j = 0; j < i; j++) {
            for (k = 0; k < j; k++)
                A[i][j] -= A[i][k] * A[k][j];
            A[i][j] /= A[j][j];
        }
        for (j = i; j < N; j++)
            for (k = 0; k < i; k++)
                A[i][j] -= A[i][k] * A[k][j];
    }
    return (int) (A[5][7] * 1000) & 127;
}
"""


# trisolv's shape: a sum into one element per row, x[i] -= L[i][j] * x[j] over j, between two statements
TRISOLV = """
#define N 40
double L[N][N], x[N], b[N];
int main(void) {
    int i, j;
    for (i = 0; i < N; i++) {
        b[i] = i * 0.5;
        for (j = 0; j < N; j++)
            L[i][j] = (i + N - j + 1) * 2.0 / N;
    }
    for (i = 0; i < N; i++) {
        x[i] = b[i];
        for (j = 0; j < i; j++)
            x[i] -= L[i][j] * x[j];
        x[i] = x[i] / L[i][i];
    }
    return (int) (100 * x[7]) & 127;
}
"""


# ludcmp's shape: a scalar w private to the parallel j loop, written by the one-thread kernel before it too,
# and read after the nest (its last value must be the one C leaves)
LUDCMP = """
#define N 24
double A[N][N];
int main(void) {
    int i, j, k;
    double w = 0.0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (i == j) ? N + 1.0 : 1.0 / (1 + i + 2 * j);
    for (i = 0; i < N; i++) {
        for (j = 0; j < i; j++) {
            w = A[i][j];
            for (k = 0; k < j; k++)
                w -= A[i][k] * A[k][j];
            A[i][j] = w / A[j][j];
        }
        for (j = i; j < N; j++) {
            w = A[i][j];
            for (k = 0; k < i; k++)
                w -= A[i][k] * A[k][j];
            A[i][j] = w;
        }
    }
    return (int) (w * 1000) & 127;
}
"""


def plan_of(tmp_path, source: str, passes=PORT.passes, **options):
    """The plan (or the errors) of the file's last nest, the computation."""
    path = tmp_path / "t.c"
    path.write_text(source)
    manager = make_manager(list(passes), options)
    program = manager.run(load_program(str(path), PreprocessOptions()))
    nest = program.nests[-1]
    return nest, manager.result("plan", nest), manager.errors_of(nest)


def shape(items) -> list:
    """The plan as nested lists: "serial" or the mapped loop variables for a kernel, [header, ...] for a host loop."""
    from c2gpu.planning.plan import Kernel
    return [("serial" if it.serial else ",".join(m.c_var for m in it.loops)) if isinstance(it, Kernel)
            else [it.var, *shape(it.body)] for it in items]


def test_scalars_between_kernels_run_in_one_thread(tmp_path):
    nest, plan, errors = plan_of(tmp_path, DURBIN)
    assert plan is not None, errors
    assert shape(plan.mapping.items) == [["k", "serial", "i", "serial", "i", "i", "serial"]]
    kernels = plan.kernels()
    assert [k.block for k in kernels if k.serial] == [(1, 1, 1)] * 3
    assert kernels[1].reductions and kernels[1].reductions[0].target == "sum"


def test_a_sequential_loop_between_kernels_runs_in_one_thread(tmp_path):
    """lu as written: the row's triangular solve runs in one thread between the launches.  (The port
    pipeline's reorder pass then finds a better order, right-looking LU: tests/test_schedule.py.)"""
    nest, plan, errors = plan_of(tmp_path, LU, passes=tuple(p for p in PORT.passes if p != "reorder"))
    assert plan is not None, errors
    assert shape(plan.mapping.items) == [["i", "serial", "j"]]


@pytest.mark.parametrize("doubt, reason", [
    ("    double *p = &A[0][0];\n", "may alias"),          # a pointer into A, written between the kernels
])
def test_code_between_kernels_needs_the_same_proof(tmp_path, doubt, reason):
    src = LU.replace("    int i, j, k;\n", "    int i, j, k;\n" + doubt).replace(
        "            A[i][j] /= A[j][j];", "            A[i][j] /= A[j][j];\n            p[j] += 1.0;")
    nest, plan, errors = plan_of(tmp_path, src)
    assert plan is None
    assert any(reason in e.message for e in errors), [e.message for e in errors]


def test_a_sum_into_one_element_is_a_reduction_across_threads(tmp_path):
    """x[j] (j < i) is never x[i]: the dependence analysis proves it, so j is a reduction into x[i], mapped with
    a block tree and one atomic per block into the element."""
    nest, plan, errors = plan_of(tmp_path, TRISOLV)
    assert plan is not None, errors
    assert shape(plan.mapping.items) == [["i", "serial", "j", "serial"]]
    (red,) = plan.kernels()[1].reductions
    assert red.target == "x[i]" and red.array_access is not None


def test_an_element_chosen_inside_the_loop_is_no_reduction_across_threads(tmp_path):
    """y[k] += a[j][k] over j: each k has its own element, so j's threads cannot fold into one; k is mapped
    instead, with j in each thread."""
    src = """
#define N 50
double a[N][N], y[N];
int main(void) {
    for (int j = 0; j < N; j++)
        for (int k = 0; k < N; k++)
            a[j][k] = j - k;
    for (int j = 0; j < N; j++)
        for (int k = 0; k < N; k++)
            y[k] += a[j][k];
    return (int) y[3];
}
"""
    _, plan, errors = plan_of(tmp_path, src)
    assert plan is not None, errors
    assert [[m.c_var for m in k.loops] for k in plan.kernels()] == [["k"]]
    assert not plan.kernels()[0].reductions


def test_a_scalar_private_to_a_kernel_and_written_between_kernels(tmp_path):
    """w is written before it is read in every iteration of the second j loop, and the read in the first j
    loop (next i) is covered by its own write: w is private there, and lives on the device for the
    one-thread kernel; the port leaves the value C leaves (verify compares it)."""
    _, plan, errors = plan_of(tmp_path, LUDCMP)
    assert plan is not None, errors
    assert shape(plan.mapping.items) == [["i", "serial", "j"]]


# A variable declared at the top of the host loop's body and stepped after the parallel inner loops (the shape
# of csmith program 20252454): the one-thread kernel that declares it is not the one that steps it.  Split
# there, the stepping kernel got the variable from the host, where it is not in scope: the port did not compile,
# or, with another `c` around the loop, read that one (and named the inner one `c#2` in the kernels).
SPLIT_DECLARATION = """
#include <stdio.h>
int a[4][5], g;
int f(void)
{
  int t, p, q, s = 0;
  unsigned char c = 5;
  for (t = 9; t > -9; t--) {
    unsigned char c = 0x73;
    for (p = 0; p < 4; p++)
      for (q = 0; q < 5; q++)
        a[p][q] = t + p + q;
    c++;
    s = s + c + a[1][2];
    g = 1;
  }
  return s + c;
}
int main(void)
{
  printf("%d %d %d\\n", f(), a[3][4], g);
  return 0;
}
"""


def test_a_variable_is_never_split_from_its_declaration(tmp_path, capsys):
    path = tmp_path / "t.c"
    path.write_text(SPLIT_DECLARATION)
    assert main(["port", str(path), "-o", str(tmp_path / "t.cu")]) == 0
    err = capsys.readouterr().err
    assert re.search(r"not portable: 'c' is declared at line 9 in the part of the loop body that c2gpu_f_8_k\d runs, "
                     r"and used at line 13 in the part c2gpu_f_8_k\d runs", err), err
    assert "c#" not in (tmp_path / "t.cu").read_text()


def test_exact_fp_keeps_a_float_sum_in_one_thread(tmp_path):
    _, plan, _ = plan_of(tmp_path, DURBIN, exact_fp=True)
    assert shape(plan.mapping.items) == [["k", "serial", "i", "i", "serial"]]
    assert not any(k.reductions for k in plan.kernels())


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("source", [DURBIN, LU, TRISOLV, LUDCMP], ids=["durbin", "lu", "trisolv", "ludcmp"])
def test_ports_with_code_between_kernels_verify(tmp_path, capsys, source):
    path = tmp_path / "t.c"
    path.write_text(source)
    assert main(["verify", str(path)]) == 0
    assert "verify: PASS: 2 nests checked" in capsys.readouterr().out


RANK1 = """#include <stdio.h>
#define N 70
double A[N][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (i == j) ? N + 1.0 : 1.0 / (1 + i + 2 * j);
  for (k = 0; k < N; k++)
    for (i = k + 1; i < N; i++)
      for (j = k + 1; j < N; j++)
        A[i][j] -= A[i][k] * A[k][j] / A[k][k];
  printf("%.9f\\n", A[N - 1][N - 1] + A[N / 2][N / 3]);
  return 0;
}
"""


@requires_tool("cc")
@requires_tool("g++")
def test_the_grid_of_each_launch_covers_that_launch_only(tmp_path, capsys):
    # the rank-1 update over i, j > k: launched once per k, its grid shrinks with k (it was sized for k = 0 at every
    # launch, two thirds of the blocks idle on average); the model prices the middle launch (Geometry)
    path = tmp_path / "t.c"
    path.write_text(RANK1)
    assert main(["port", str(path), "-o", str(tmp_path / "t.cu")]) == 0
    code = (tmp_path / "t.cu").read_text()
    grids = re.findall(r"dim3 c2gpu_grid\((.*)\), c2gpu_block", code)
    moving = [g for g in grids if re.search(r"\bk\b", g)]
    assert moving and all("70" in g or "69" in g for g in moving), grids
    assert re.search(r"if \(\(\S.*\bk\b.*\) > 0\) \{", code), "an empty launch (k = N - 1) is skipped"
    assert main(["verify", str(path)]) == 0
    assert "verify: PASS" in capsys.readouterr().out
