"""isl's scheduler (c2gpu/transform/schedule.py, c2gpu/passes/reorder.py): a nest that maps only with loops running in one
thread between launches runs in the order isl finds, when that order maps them all: lu and cholesky become
right-looking (a host loop over the pivot, a kernel scaling its column, a 2-D kernel updating the rest), the
structure a CUDA programmer writes; the port computes what the original C does, bit for bit."""
from __future__ import annotations

import pytest

from c2gpu.drivers.cli import main

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


# isl's scheduler ran for over 30 minutes on this nest of tests/random_nests.py (seed 22, nest 27): the
# search is bounded (c2gpu.transform.schedule.SCHEDULE_SECONDS), and then the nest keeps the order as written
STUCK = """
#define N 13
#define OFF (2 * N + 4)
#define M (4 * N + 10)
static float A[M][M], B[M][M], C[M][M];
void nest27(void)
{
    int i, j, k;
    for (i = 0; i < N - 2; i++)
        for (j = 1; j < N - i; j++)
            for (k = 2; k < N; k += 2) {
                B[OFF + j][OFF + i + 1] += C[OFF + k][OFF + j - 2] + 0.5f * (float)i;
                A[OFF + i + k][OFF + 2*k + 2] = B[OFF + k][OFF + j + 2] + B[OFF + 2*k][OFF + j] + 0.25f;
            }
}
"""


def test_a_schedule_isl_does_not_find_in_time_keeps_the_order_as_written(tmp_path, monkeypatch):
    import c2gpu.transform.schedule as schedule
    monkeypatch.setattr(schedule, "SCHEDULE_SECONDS", 1.0)
    plan, errors, notes = plan_of(tmp_path, STUCK)
    assert not any(n.startswith("rescheduled") for n in notes), notes
    assert plan is not None or errors        # the nest was still planned (as written) or refused with a reason


def test_the_schedule_comes_back_from_the_bounded_search_unchanged(tmp_path, monkeypatch):
    """lu's schedule read back from the child's text is the one isl computes in this process."""
    import islpy as isl
    import c2gpu.transform.schedule as schedule
    computed = []
    real = schedule._bounded_schedule

    def both(sc):
        got = real(sc)
        computed.append((got, sc.compute_schedule()))
        return got
    monkeypatch.setattr(schedule, "_bounded_schedule", both)
    plan, errors, notes = plan_of(tmp_path, LU)
    assert notes[0].startswith("rescheduled with isl's scheduler")
    (got, direct), = computed
    assert got.get_map().is_equal(direct.get_map())
    assert isinstance(got, isl.Schedule)
