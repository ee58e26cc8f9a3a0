"""Wavefronts (c2gpu/transform/wavefront.py, c2gpu/passes/wavefront.py): two nested loops that both carry dependences run as
a host loop over fronts, a launch per front with a thread per outer iteration, when no loop maps otherwise;
never when a dependence would go to the same or an earlier front."""
from __future__ import annotations

from dataclasses import replace

import islpy as isl
import pytest

from c2gpu.drivers.cli import main
from c2gpu.cpu.static import static_estimate
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.pipeline import PORT
from c2gpu.planning.plan import HostLoop, Kernel
from c2gpu.transform.wavefront import _later

from conftest import TESTDATA, requires_tool

SEIDEL = """
#define N 24
#define T 3
double A[N][N];
int main(void) {
    int t, i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = ((double) i * (j + 2) + 2) / N;
    for (t = 0; t <= T - 1; t++)
        for (i = 1; i <= N - 2; i++)
            for (j = 1; j <= N - 2; j++)
                A[i][j] = (A[i-1][j-1] + A[i-1][j] + A[i-1][j+1]
                           + A[i][j-1] + A[i][j] + A[i][j+1]
                           + A[i+1][j-1] + A[i+1][j] + A[i+1][j+1]) / 9.0;
    return (int) (A[5][7] * 100) & 127;
}
"""

FLOYD = """
#define N 20
int path[N][N];
int main(void) {
    int i, j, k;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            path[i][j] = i * j % 7 + 1;
            if ((i + j) % 13 == 0 || (i + j) % 7 == 0 || (i + j) % 11 == 0)
                path[i][j] = 999;
        }
    for (k = 0; k < N; k++)
        for (i = 0; i < N; i++)
            for (j = 0; j < N; j++)
                path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
    return path[3][4] & 127;
}
"""

NUSSINOV = """
#define N 30
#define max_score(s1, s2) ((s1 >= s2) ? s1 : s2)
#define match(b1, b2) (((b1)+(b2)) == 3 ? 1 : 0)
char seq[N];
int table[N][N];
int main(void) {
    int i, j, k;
    for (i = 0; i < N; i++)
        seq[i] = (char) ((i + 1) % 4);
    for (i = N - 1; i >= 0; i--) {
        for (j = i + 1; j < N; j++) {
            if (j - 1 >= 0)
                table[i][j] = max_score(table[i][j], table[i][j-1]);
            if (i + 1 < N)
                table[i][j] = max_score(table[i][j], table[i+1][j]);
            if (j - 1 >= 0 && i + 1 < N) {
                if (i < j - 1)
                    table[i][j] = max_score(table[i][j], table[i+1][j-1] + match(seq[i], seq[j]));
                else
                    table[i][j] = max_score(table[i][j], table[i+1][j-1]);
            }
            for (k = i + 1; k < j; k++)
                table[i][j] = max_score(table[i][j], table[i][k] + table[k+1][j]);
        }
    }
    return table[0][N - 1] & 127;
}
"""


def plan_of(tmp_path, source: str):
    """(the last nest's plan or None, the nest's refusal messages, the mapping notes)."""
    path = tmp_path / "t.c"
    path.write_text(source)
    manager = make_manager(list(PORT.passes), {})
    program = manager.run(load_program(str(path), PreprocessOptions()))
    nest = program.nests[-1]
    plan = manager.result("plan", nest)
    return plan, [f.message for f in manager.errors_of(nest)], (plan.mapping.notes if plan is not None else ())


def structure(items) -> list:
    """The plan as nested lists: host loop variables, and each kernel's mapped loops."""
    out = []
    for it in items:
        if isinstance(it, HostLoop):
            out.append((it.var, structure(it.body)))
        else:
            assert isinstance(it, Kernel)
            out.append(tuple(f"{m.c_var}->{m.dim}" for m in it.loops))
    return out


def test_seidel_runs_fronts_2i_plus_j_inside_the_time_loop(tmp_path):
    plan, errors, notes = plan_of(tmp_path, SEIDEL)
    assert plan is not None, errors
    assert structure(plan.mapping.items) == [("t", [("c2gpu_wave", [("i->x",)])])]
    assert "front = 2 x (iteration of 'i') + (iteration of 'j')" in notes[0]


def test_floyd_warshall_wavefronts_i_and_j_not_k(tmp_path):
    """k carries dependences of every sign in i (row k is read by all rows): no front order fits (k, i), so
    the pair is (i, j), with k on the host around it."""
    plan, errors, notes = plan_of(tmp_path, FLOYD)
    assert plan is not None, errors
    assert structure(plan.mapping.items) == [("k", [("c2gpu_wave", [("i->x",)])])]
    assert "front = (iteration of 'i') + (iteration of 'j')" in notes[0]


def test_nussinov_counting_down_with_a_triangle_and_an_inner_reduction(tmp_path):
    plan, errors, notes = plan_of(tmp_path, NUSSINOV)
    assert plan is not None, errors
    assert structure(plan.mapping.items) == [("c2gpu_wave", [("i->x",)])]
    assert "wavefront: loops 'i' and 'j'" in notes[0]


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("source", [SEIDEL, FLOYD, NUSSINOV], ids=["seidel", "floyd", "nussinov"])
def test_wavefront_ports_verify(tmp_path, capsys, source):
    path = tmp_path / "t.c"
    path.write_text(source)
    assert main(["verify", str(path)]) == 0
    assert "verify: PASS" in capsys.readouterr().out


def test_no_front_order_fits_a_reversed_row(tmp_path):
    """A[i][j] reads A[i-1][N-1-j]: from row i-1 every column, behind and ahead, so k*d_i + d_j >= 1 would
    need k >= N.  Nothing is ported, and the refusal is still the dependence."""
    src = """
#define N 24
double A[N][N];
int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            A[i][j] = i + j;
    for (int i = 1; i < N; i++)
        for (int j = 1; j < N; j++)
            A[i][j] = A[i][j - 1] + A[i - 1][N - 1 - j];
    return (int) A[3][4];
}
"""
    plan, errors, _ = plan_of(tmp_path, src)
    assert plan is None and "carries" in errors[-1], errors


def test_an_unknown_dependence_allows_no_wavefront(tmp_path):
    """A subscript read through an index array says nothing about the distances: no wavefront."""
    src = """
#define N 24
double A[N][N];
int idx[N];
int main(void) {
    for (int i = 0; i < N; i++) {
        idx[i] = (i * 7) % N;
        for (int j = 0; j < N; j++)
            A[i][j] = i + j;
    }
    for (int i = 1; i < N; i++)
        for (int j = 1; j < N; j++)
            A[i][j] = A[i][j - 1] + A[i - 1][idx[j]];
    return (int) A[3][4];
}
"""
    plan, errors, _ = plan_of(tmp_path, src)
    assert plan is None, plan


@requires_tool("cc")
@requires_tool("g++")
def test_a_loop_variable_read_after_the_nest_is_not_computed_from_the_front(tmp_path, capsys):
    """The rewrite computes the inner variable from the front in each thread, which would lose C's value of j
    after the nest: with j read afterwards, the pair is (t, i) instead (fronts 2t + i, a thread per time step,
    j's loop in each thread), and the port still verifies."""
    src = SEIDEL.replace("return (int) (A[5][7] * 100) & 127;", "return ((int) (A[5][7] * 100) + j) & 127;")
    plan, errors, notes = plan_of(tmp_path, src)
    assert plan is not None, errors
    assert structure(plan.mapping.items) == [("c2gpu_wave", [("t->x",)])]
    assert "front = 2 x (iteration of 't') + (iteration of 'i')" in notes[0]
    path = tmp_path / "t.c"
    path.write_text(src)
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out


def test_a_front_is_later_only_when_every_distance_says_so():
    """_later: k*d_i + d_j >= 1 for every distance, with the pair at any depth."""
    stencil = isl.Set("{ [0, 1, -1]; [0, 1, 0]; [0, 1, 1]; [0, 0, 1] }")
    assert not _later(stencil, 1, 1) and _later(stencil, 1, 2)
    anywhere = isl.Set("{ [1, d] : -5 <= d <= 5 }")          # row i-1 read at every column
    assert not any(_later(anywhere, 0, k) for k in range(1, 5)) and _later(anywhere, 0, 6)
    same_front = isl.Set("{ [1, -1] }")                      # d_i + d_j = 0: the same front for k = 1
    assert not _later(same_front, 0, 1) and _later(same_front, 0, 2)


def test_the_cpu_estimate_is_of_the_c_as_written_not_of_the_fronts(tmp_path):
    """The port runs the fronts; the CPU runs the C as written.  The static CPU estimate (analyze --no-run) of a
    rewritten nest is that of the nest before the rewrite (Nest.as_written): the fronts' loops, with their
    min/max bounds, priced as CPU code gave testdata/gauss_seidel.c 7.8 ms where its own loops give 2.8 ms."""
    manager = make_manager(list(PORT.passes), {})
    program = manager.run(load_program(str(TESTDATA / "gauss_seidel.c"), PreprocessOptions()))
    nest = program.nest("gauss_seidel@20")
    assert nest.rewrites and nest.as_written is not None and nest.as_written.rewrites == ()
    assert static_estimate(nest).median_s == static_estimate(nest.as_written).median_s
    assert static_estimate(replace(nest, as_written=None)).median_s > 2 * static_estimate(nest).median_s
