"""isl's scheduler (c2gpu/schedule.py, passes/reorder.py): a nest that maps only with loops running in one
thread between launches runs in the order isl finds, when that order maps them all: lu and cholesky become
right-looking (a host loop over the pivot, a kernel scaling its column, a 2-D kernel updating the rest), the
structure a CUDA programmer writes; the port computes what the original C does, bit for bit."""
from __future__ import annotations

import pytest

from c2gpu.cli import main

from conftest import requires_tool
from test_wavefront import plan_of, structure

LU = """
#define N 40
double A[N][N];
int main(void) {
    int i, j, k;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (i == j) ? N + 1.0 : (double) ((i * j + 1) % N) / N;
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
    return (int) (A[7][5] * 1000) & 127;
}
"""

CHOLESKY = """
#include <math.h>
#define N 40
double A[N][N];
int main(void) {
    int i, j, k;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (i == j) ? N + 1.0 : 1.0 / (1 + i + j);
    for (i = 0; i < N; i++) {
        for (j = 0; j < i; j++) {
            for (k = 0; k < j; k++)
                A[i][j] -= A[i][k] * A[j][k];
            A[i][j] /= A[j][j];
        }
        for (k = 0; k < i; k++)
            A[i][i] -= A[i][k] * A[i][k];
        A[i][i] = sqrt(A[i][i]);
    }
    return (int) (A[7][5] * 1000) & 127;
}
"""


def test_lu_is_right_looking(tmp_path):
    plan, errors, notes = plan_of(tmp_path, LU)
    assert plan is not None, errors
    assert structure(plan.mapping.items) == [
        ("c2gpu_c0", [("c2gpu_c1->x",), ("c2gpu_c1->y", "c2gpu_c2->x"), ("c2gpu_c1->y", "c2gpu_c2->x")])]
    assert notes[0].startswith("rescheduled with isl's scheduler")


def test_cholesky_keeps_only_the_square_root_in_one_thread(tmp_path):
    plan, errors, _ = plan_of(tmp_path, CHOLESKY)
    assert plan is not None, errors
    (host, (serial, column, update)), = structure(plan.mapping.items)
    assert host == "c2gpu_c0" and serial == () and column == ("c2gpu_c1->x",) and len(update) == 2


def test_a_scalar_passed_between_statements_keeps_the_original_order(tmp_path):
    """A scalar written by one statement and read by another is not an array element isl orders: such a
    nest is not rescheduled (here: lu with the division through a temporary)."""
    src = LU.replace("double A[N][N];", "double A[N][N], d;").replace(
        "A[i][j] /= A[j][j];", "d = A[j][j]; A[i][j] /= d;")
    plan, errors, notes = plan_of(tmp_path, src)
    assert not any(n.startswith("rescheduled") for n in notes), notes


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("source", [LU, CHOLESKY], ids=["lu", "cholesky"])
def test_rescheduled_ports_compute_what_c_does_bit_for_bit(tmp_path, capsys, source):
    """Every update of one element stays in its original order (isl keeps the output dependences too), so
    the port matches with --exact-fp and no tolerance at all."""
    path = tmp_path / "t.c"
    path.write_text(source)
    assert main(["verify", str(path), "--exact-fp", "--rtol", "0"]) == 0
    assert "verify: PASS" in capsys.readouterr().out


def test_a_statement_reading_a_finished_loops_variable_keeps_the_original_order(tmp_path):
    """`A[i][j] /= k` after the k loop reads the value k was left with; the new order computes each
    statement's own loop variables only, so such a nest is not rescheduled."""
    src = LU.replace("A[i][j] /= A[j][j];", "A[i][j] /= A[j][j] + k;")
    plan, errors, notes = plan_of(tmp_path, src)
    assert not any(n.startswith("rescheduled") for n in notes), notes
