"""Fusion (c2gpu/transform/fusion.py, c2gpu/passes/reorder.py): adjacent loop nests in a host loop's body run as
one nest, one kernel per launch where there were several, when isl shows that the new order keeps every
dependence and that no dependence joins two iterations of the fused loops; the port computes what the C does."""
from __future__ import annotations

import pytest

from c2gpu.drivers.cli import main

from conftest import requires_tool
from test_wavefront import plan_of, structure

# fdtd-2d's time steps (PolyBench), with its sizes as parameters of the function
FDTD = """
double ex[100][120], ey[100][120], hz[100][120], fict[50];

void step(int tmax, int nx, int ny)
{
    int t, i, j;
    for (t = 0; t < tmax; t++) {
        for (j = 0; j < ny; j++)
            ey[0][j] = fict[t];
        for (i = 1; i < nx; i++)
            for (j = 0; j < ny; j++)
                ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i-1][j]);
        for (i = 0; i < nx; i++)
            for (j = 1; j < ny; j++)
                ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j-1]);
        for (i = 0; i < nx - 1; i++)
            for (j = 0; j < ny - 1; j++)
                hz[i][j] = hz[i][j] - 0.7 * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]);
    }
}
"""

# two updates per step over a fixed square; the first row runs apart from the rest, all of one size
ROWS = """
#define N 64
#define T 20
double a[N][N], b[N][N];
int main(void) {
    int t, i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            a[i][j] = (i * 7 + j * 3) % 11;
            b[i][j] = (i + 2 * j) % 5;
        }
    for (t = 0; t < T; t++) {
        for (j = 0; j < N; j++)
            a[0][j] = a[0][j] * 0.5 + t;
        for (i = 1; i < N; i++)
            for (j = 0; j < N; j++)
                a[i][j] = 0.5 * (a[i][j] + b[i][j]);
        for (i = 0; i < N; i++)
            for (j = 1; j < N; j++)
                b[i][j] = 0.75 * b[i][j] + 0.125 * a[i][j];
    }
    return (int) (a[0][5] * 10 + a[7][3] + b[9][2] * 100) & 127;
}
"""


def test_fdtd_updates_of_ey_and_ex_are_one_kernel(tmp_path):
    """ey from row 1 and ex from column 1 read only hz: one thread per (i, j) runs both.  The first row of ey
    runs even when nx is 0 (the others then do not), so its loop would have to end at a max: it stays apart.
    hz reads ex[i][j+1] and ey[i+1][j], which other threads would write: apart too."""
    plan, errors, notes = plan_of(tmp_path, FDTD)
    assert plan is not None, errors
    assert structure(plan.mapping.items) == [("t", [("j->x",), ("i->y", "j->x"), ("i->y", "j->x")])]
    assert any(n.startswith("fused: the loop nests at lines 10 and 13 run as one") for n in notes), notes


def test_a_nest_reading_what_the_next_iteration_writes_is_not_fused(tmp_path):
    """a[i+1] is read before the fused loop's next iteration would write it: the order as written stays."""
    src = FDTD.replace("ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j-1]);",
                       "ex[i][j] = ex[i][j] - 0.5 * (ey[i+1][j] - hz[i][j-1]);")
    plan, errors, notes = plan_of(tmp_path, src)
    assert plan is not None, errors
    assert structure(plan.mapping.items) == [("t", [("j->x",), ("i->y", "j->x"), ("i->y", "j->x"),
                                                    ("i->y", "j->x")])]
    assert not any(n.startswith("fused") for n in notes), notes


def test_a_nest_reading_what_an_earlier_iteration_wrote_is_not_fused(tmp_path):
    """ey[i-1][j] is written by an earlier iteration of the fused loop: the order is kept (isl agrees) but
    the fused loop would carry a dependence, so it would not map; nothing is fused."""
    src = FDTD.replace("ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j-1]);",
                       "ex[i][j] = ex[i][j] - 0.5 * (ey[i-1][j] - hz[i][j-1]);").replace(
        "for (i = 0; i < nx; i++)\n            for (j = 1; j < ny; j++)",
        "for (i = 1; i < nx; i++)\n            for (j = 1; j < ny; j++)")
    plan, errors, notes = plan_of(tmp_path, src)
    assert plan is not None, errors
    assert len(structure(plan.mapping.items)[0][1]) == 4
    assert not any(n.startswith("fused") for n in notes), notes


def test_a_shallower_nest_of_fixed_size_fuses_at_row_zero(tmp_path):
    """With the sizes fixed, the row loop runs exactly when the square does: it is the square's row 0."""
    plan, errors, notes = plan_of(tmp_path, ROWS)
    assert plan is not None, errors
    assert structure(plan.mapping.items) == [("t", [("i->y", "j->x")])]
    assert any(n.startswith("fused: the loop nests at lines 13, 15 and 18 run as one") for n in notes), notes


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("steps", [20, 1])
def test_fused_ports_compute_what_c_does_bit_for_bit(tmp_path, capsys, steps):
    """Each element is updated by the same statements in the same order: the port matches with --exact-fp
    and no tolerance (three thread orders, poisoned device memory: c2gpu verify).  A time loop that runs once
    has no loop of its own once fused (the fused loop is the nest's root): the port still replaces the whole
    time loop, not its first nest (found by tests/test_differential.py's sibling nests: the other nests ran
    twice)."""
    path = tmp_path / "t.c"
    path.write_text(ROWS.replace("#define T 20", f"#define T {steps}"))
    assert main(["verify", str(path), "--exact-fp", "--rtol", "0"]) == 0
    assert "verify: PASS" in capsys.readouterr().out


OPENMP = """
#define N 64
double a[N][N], b[N][N];
void f(int T) {
  int t, i, j;
  for (t = 0; t < T; t++) {
#pragma omp parallel for
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        a[i][j] = a[i][j] * 0.5 + b[i][j];
#pragma omp parallel for
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        b[i][j] = b[i][j] + a[i][j];
  }
}
"""


def test_the_openmp_directives_of_fused_nests_are_checked_as_written(tmp_path):
    """The fused loops are new; the directives sit on the loops as written, and `analyze` checks them there
    (each misses private(j)), with the dependences of the nest as written."""
    import c2gpu
    path = tmp_path / "o.c"
    path.write_text(OPENMP)
    nest = c2gpu.analyze(str(path), run_cpu=False).nests[0]
    assert any(r.startswith("fused: the loop nests at lines 8 and 12") for r in nest.data["rewrites"]), nest.data
    missing = [f for f in nest.data["flags"] if f["code"] == "omp-missing-clause"]
    assert [f["location"]["line"] for f in missing] == [7, 11]
    assert all("no private(j) clause" in f["message"] for f in missing)
