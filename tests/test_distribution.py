"""Loop distribution and interchange (c2gpu/passes/mapping.py `distributed`, c2gpu/transform/reorder.py): a loop's body split
into kernels that each map what they can, with a parallel loop moved outside a sequential one where every
dependence allows it, the structure a CUDA programmer would pick for gemm and atax; never where a
dependence forbids it."""
from __future__ import annotations

import pytest

from c2gpu.drivers.cli import main
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.pipeline import PORT

from conftest import requires_tool

GEMM = """
#define NI 20
#define NJ 25
#define NK 30
double C[NI][NJ], A[NI][NK], B[NK][NJ];
int main(void) {
    int i, j, k;
    double alpha = 1.5, beta = 1.2;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NK; j++)
            A[i][j] = (double) ((i * j + 1) % NK) / NK;
    for (i = 0; i < NK; i++)
        for (j = 0; j < NJ; j++) {
            B[i][j] = (double) ((i * j + 2) % NJ) / NJ;
            if (i < NI)
                C[i][j] = (double) ((i * j + 3) % NI) / NI;
        }
    for (i = 0; i < NI; i++) {
        for (j = 0; j < NJ; j++)
            C[i][j] *= beta;
        for (k = 0; k < NK; k++)
            for (j = 0; j < NJ; j++)
                C[i][j] += alpha * A[i][k] * B[k][j];
    }
    return (int) C[3][4] & 127;
}
"""

ATAX = """
#define M 38
#define N 42
double A[M][N], x[N], y[N], tmp[M];
int main(void) {
    int i, j;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (double) ((i + j) % N) / (5 * M);
    for (j = 0; j < N; j++) {
        x[j] = 1 + j / (double) N;
        y[j] = 0;
    }
    for (i = 0; i < M; i++) {
        tmp[i] = 0.0;
        for (j = 0; j < N; j++)
            tmp[i] = tmp[i] + A[i][j] * x[j];
        for (j = 0; j < N; j++)
            y[j] = y[j] + A[i][j] * tmp[i];
    }
    return (int) y[3] & 127;
}
"""


def kernels_of(tmp_path, source: str, passes=PORT.passes):
    """(mapped C variables with their dims, why) of each kernel of the file's last nest, or its refusal."""
    path = tmp_path / "t.c"
    path.write_text(source)
    manager = make_manager(list(passes), {})
    program = manager.run(load_program(str(path), PreprocessOptions()))
    nest = program.nests[-1]
    plan = manager.result("plan", nest)
    if plan is None:
        return manager.errors_of(nest)[-1].message
    return [(tuple(f"{m.c_var}->{m.dim}" for m in k.loops), k.why) for k in plan.kernels()]


def test_gemm_is_two_2d_kernels_with_k_in_each_thread(tmp_path):
    (scale, why1), (update, why2) = kernels_of(tmp_path, GEMM)
    assert scale == update == ("i->y", "j->x")            # x on the unit-stride subscript j
    assert "distributed from loop 'i'" in why1 and "loop 'k' run in each thread, interchanged" in why2


def test_atax_maps_i_then_j_with_i_in_each_thread(tmp_path):
    (first, why1), (second, why2) = kernels_of(tmp_path, ATAX)
    assert first == ("i->x",) and "runs lines 15-16" in why1          # tmp[i] = 0 and its sum, one launch
    assert second == ("j->x",) and "loop 'i' run in each thread" in why2


BICG = """
#define M 38
#define N 42
double A[N][M], s[M], q[N], p[M], r[N];
int main(void) {
    int i, j;
    for (i = 0; i < N; i++) {
        r[i] = (double) (i % N) / N;
        for (j = 0; j < M; j++)
            A[i][j] = (double) (i * (j + 1) % N) / N;
    }
    for (i = 0; i < M; i++)
        p[i] = (double) (i % M) / M;
    for (i = 0; i < M; i++)
        s[i] = 0;
    for (i = 0; i < N; i++) {
        q[i] = 0.0;
        for (j = 0; j < M; j++) {
            s[j] = s[j] + r[i] * A[i][j];
            q[i] = q[i] + A[i][j] * p[j];
        }
    }
    return (int) (s[3] + q[4]) & 127;
}
"""


def test_bicg_splits_its_inner_loop_too(tmp_path):
    """Two-level distribution: `s[j] +=` over i becomes a kernel over j with i in each thread, `q[i] +=` over
    j a kernel over i with j in each thread."""
    (zero, _), (s_part, why_s), (q_part, why_q) = kernels_of(tmp_path, BICG)
    assert zero == ("i->x",) and s_part == ("j->x",) and q_part == ("i->x",)
    assert "runs line 19; loop 'i' run in each thread, interchanged" in why_s
    assert "runs line 20; 'j' runs in each thread; x is 'i', but a warp's accesses to A[i][j]" in why_q   # by bytes


def test_parts_with_a_backward_dependence_stay_together(tmp_path):
    """x[i][j] reads y[i][j - 1], which the second statement wrote in the previous j iteration: splitting the
    j loop would run every read before any write, so the nest keeps j whole (i mapped, j in each thread)."""
    src = """
#define N 30
double x[N][N], y[N][N];
int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            y[i][j] = i - j;
    for (int i = 0; i < N; i++) {
        x[i][0] = 0.0;
        for (int j = 1; j < N; j++) {
            x[i][j] = y[i][j - 1] * 0.5;
            y[i][j] = x[i][j] + 1.0;
        }
    }
    return (int) y[3][4];
}
"""
    kernels = kernels_of(tmp_path, src)
    assert [m for m, _ in kernels] == [("i->x",)] and "distributed" not in kernels[0][1], kernels


def test_a_backward_dependence_keeps_the_body_together(tmp_path):
    """C[i][j] written in the first loop is read as C[i-1][j] by it in the next iteration, after the second
    loop updated it: distributing would run every read before any update.  The body stays together: i
    carries the dependence, and the k loop in it is an array reduction, so the nest as written maps nothing.
    isl's scheduler (the reorder pass) then finds what distribution cannot: every column j is independent,
    so j is mapped with i and k in each thread."""
    src = GEMM.replace("""    for (i = 0; i < NI; i++) {
        for (j = 0; j < NJ; j++)
            C[i][j] *= beta;""", """    for (i = 1; i < NI; i++) {
        for (j = 0; j < NJ; j++)
            C[i][j] = C[i - 1][j] * beta;""")
    refusal = kernels_of(tmp_path, src, passes=tuple(p for p in PORT.passes if p != "reorder"))
    assert isinstance(refusal, str) and "reduction c2gpu does not run across threads" in refusal, refusal
    ((mapped, _),) = kernels_of(tmp_path, src)
    assert mapped == ("c2gpu_c0->x",)           # j, the only loop that carries nothing


def test_a_dependence_across_the_inner_loop_forbids_the_interchange(tmp_path):
    """k carries B[k][j] <- B[k-1][j+1]: with j outside k, thread j would read B[k-1][j+1] before thread
    j+1 wrote it.  j is not mapped with k inside it."""
    src = """
#define N 30
double B[N][N][N];
int main(void) {
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++)
            for (int j = 0; j < N; j++)
                B[i][k][j] = i + k + j;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            B[i][0][j] = 1.0;
        for (int k = 1; k < N; k++)
            for (int j = 0; j < N - 1; j++)
                B[i][k][j] = B[i][k - 1][j + 1] + 1.0;
    }
    return (int) B[2][3][4];
}
"""
    kernels = kernels_of(tmp_path, src)
    assert not any("interchanged" in why for _, why in kernels), kernels


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("source", [GEMM, ATAX, BICG], ids=["gemm", "atax", "bicg"])
def test_distributed_ports_verify(tmp_path, capsys, source):
    path = tmp_path / "t.c"
    path.write_text(source)
    assert main(["verify", str(path)]) == 0
    assert "verify: PASS" in capsys.readouterr().out
