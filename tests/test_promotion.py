"""Scalar replacement (c2gpu/planning/promotion.py) and copy-ins skipped for arrays written in full before they are read.

An array element whose subscripts do not move with an in-thread loop lives in a register across it: loaded
once before the loop, stored once after, only when no other access in the loop may touch it, no condition
inside the loop guards it, and only when the loop runs.  An array the nest writes in full before reading it
is not copied to the device.  The cases that must not be promoted or must keep their copy-in are verified
on the CPU execution layer, whose device memory is poisoned: a missing copy-in or a wrong store shows there.
"""
import re

import pytest

from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.model.gpu import load_gpu
from c2gpu.perf.predict import kernel_items
from c2gpu.perf.profile import KernelAnalysis
from c2gpu.pipeline import PORT
from c2gpu.planning.promotion import promotions
from c2gpu.drivers.verify import verify

from conftest import TESTDATA, requires_tool, write_c

PIPELINE = ["normalize", "dependence", "mapping", "shared-memory", "plan"]


def planned(path, defines=(), **opts):
    m = make_manager(PIPELINE, opts)
    prog = m.run(load_program(str(path), PreprocessOptions(defines=tuple(defines))))
    return prog, m


def kernel_promotions(prog, m, nest_name):
    nest = prog.nest(nest_name)
    plan = m.result("plan", nest)
    assert plan is not None, m.errors.get(nest.name)
    return [p for k in plan.kernels() for p in promotions(k.view or nest, k)]


def emitted(path, shared="auto", defines=()):
    from c2gpu.codegen import build_nest_code
    prog, m = planned(path, defines, shared_memory=shared)
    return {n.name: build_nest_code(n, m.result("plan", n)) for n in prog.nests}


@pytest.mark.parametrize("shared", ["off", "auto"])
def test_matmul_accumulates_in_a_register_and_skips_the_copy_in(shared):
    code = emitted(TESTDATA / "matmul.c", shared)["matmul@16"]
    (k,) = code.kernels
    assert ("c2gpu_sh_" in k.text) == (shared == "auto")          # the plain and the tiled kernel
    (p,) = k.promotions
    assert (p.array, p.text, p.load, p.store, p.runs) == ("C", "C[i][j]", True, True, None)
    reg = p.register
    assert f"float {reg};" in k.text
    assert re.search(rf"\b{reg} \+= ", k.text)                    # the loop updates the register
    assert not re.search(r"C\[[^\]]*\] \+=", k.text)               # and never the global element
    stores = re.findall(rf"C\[256\*i \+ j\] = {reg};", k.text)
    assert len(stores) == 1                                        # stored once, after the loop
    assert k.text.index(stores[0]) > k.text.rindex(f"{reg} += ")
    c = next(a for a in code.arrays if a.name == "C")
    assert c.copy_in is None and c.copy_out is not None and "before it is read" in c.why
    assert not re.search(r"cudaMemcpy\(d_C\b[^;]*HostToDevice", code.wrapper)
    assert re.search(r"cudaMemcpy\(C \+ 0, d_C \+ 0[^;]*DeviceToHost", code.wrapper)


def test_the_model_counts_one_load_and_one_store_per_thread():
    prog, m = planned(TESTDATA / "matmul.c", (("N", "64"),), shared_memory="off")
    nest = prog.nest("matmul@16")
    kernel, host = kernel_items(m.result("plan", nest).mapping)[0]
    ka = KernelAnalysis(nest, kernel, load_gpu("a100"), {}, host_lids=host, registers="estimate")
    mem = ka.memory(kernel.block)
    c = [a for a in mem.accesses if a.array == "C"]
    # C[i][j] = 0 (one store), the register's load before k and its store after k: not 64 of each
    assert sorted((a.kind, a.requests) for a in c) == [("read", 1.0), ("write", 1.0), ("write", 1.0)]
    a = next(a for a in mem.accesses if a.array == "A")
    assert a.requests == 64.0
    assert ka.instructions(kernel.block).memory == pytest.approx(64 + 64 + 3)
    # as C writes it (NestPlan.scalar_replacement=False: the naive CUDA of testdata/validation/naive_cuda_measured.tsv): a load and a
    # store of C per iteration of k
    naive = KernelAnalysis(nest, kernel, load_gpu("a100"), {}, host_lids=host, registers="estimate", promote=False)
    c = [a for a in naive.memory(kernel.block).accesses if a.array == "C"]
    assert sorted((a.kind, a.requests) for a in c) == [("read", 64.0), ("write", 1.0), ("write", 64.0)]


CASES = r"""
#include <stdio.h>
#define N 24
float A[N][N], B[N][N], C[N][N], D[N][N], E[N][N], F[N][N], G[N][N], H[N][N], K[N][N], L[N][N], M[N][N], s[N], y[N],
      P[N], Q[N], R[N], Z[N];

void accumulate(void) {            /* promoted; C written in full before it is read: no copy-in */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      C[i][j] = 0;
      for (int k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
}

void other_rows(void) {            /* D[i][j] and D[k][j] in one loop: the same element when k == i */
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++)
      for (int k = 0; k < N; k++)
        D[i][j] += D[k][j] * 0.01f;
}

void guarded(void) {               /* a conditional update inside the loop */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        if (A[i][k] > B[k][j])
          E[i][j] += A[i][k];
}

void partial(void) {               /* half of each row written: the copy-out needs the rest copied in */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N / 2; j++) {
      F[i][j] = 0;
      for (int k = 0; k < N; k++)
        F[i][j] += A[i][k] * B[k][j];
    }
}

void read_first(void) {            /* G read before the nest writes it (gemm's C *= beta) */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      G[i][j] *= 0.5f;
      for (int k = 0; k < N; k++)
        G[i][j] += A[i][k] * B[k][j];
    }
}

void triangular(void) {            /* no iteration of k for i == 0: y[0] is neither loaded nor stored */
  for (int i = 0; i < N; i++)
    for (int k = 0; k < i; k++)
      y[i] += A[i][k] * s[k];
}

void invariant_read(void) {        /* s[i] only read across k: loaded once, never stored */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        H[i][j] += A[j][k] * s[i];
}

void conditional_write(void) {     /* P[i] written inside an expression: only where the condition holds */
  for (int i = 0; i < N; i++)
    Q[i] = A[i][0] > 0.3f ? (P[i] = A[i][1]) : 0;
}

void conditional_first(void) {     /* R[i] first written inside an expression: it must still be loaded */
  float t;
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++) {
      t = A[i][k] > 0.5f ? (R[i] = A[i][k]) : 0.0f;
      Z[i] += R[i] + t;
    }
}

void invariant_guard(void) {       /* the condition reads i only: it holds in every iteration of k or in none */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        if (i < N - 3)
          K[i][j] += A[i][k] * B[k][j];
}

void mixed_guard(void) {           /* L[i][j] updated under the condition and without it */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++) {
        L[i][j] += A[i][k];
        if (i > 2)
          L[i][j] *= 0.5f;
      }
}

void varying_guard(void) {         /* the condition reads k: C stores only in some iterations */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        if (k < i)
          M[i][j] += A[i][k] * B[k][j];
}

int main(void) {
  for (int i = 0; i < N; i++) {
    P[i] = -1;
    R[i] = 7;
    s[i] = (i % 5) * 0.25f;
    y[i] = i * 0.5f;
    for (int j = 0; j < N; j++) {
      A[i][j] = ((i * 3 + j) % 7) * 0.125f;
      B[i][j] = ((i + 2 * j) % 5) * 0.25f;
      D[i][j] = E[i][j] = F[i][j] = G[i][j] = H[i][j] = K[i][j] = L[i][j] = M[i][j] = (i - j) * 0.5f;
    }
  }
  accumulate(); other_rows(); guarded(); partial(); read_first(); triangular(); invariant_read();
  conditional_write(); conditional_first(); invariant_guard(); mixed_guard(); varying_guard();
  printf("%f %f %f %f %f %f %f %f %f\n", C[3][4], D[5][6], E[7][8], F[9][10], G[11][12], y[13], H[1][2], P[5],
         Z[6]);
  printf("%f %f %f %f\n", K[4][5], K[22][3], L[7][8], M[9][9]);
  return 0;
}
"""


def test_which_elements_are_promoted(tmp_path):
    prog, m = planned(write_c(tmp_path, CASES))
    nests = {n.name.split("@")[0]: n.name for n in prog.nests}
    got = {name: sorted((p.text, p.load, p.store) for p in kernel_promotions(prog, m, nests[name]))
           for name in ("accumulate", "other_rows", "guarded", "partial", "read_first", "triangular",
                        "invariant_read", "conditional_first", "invariant_guard", "mixed_guard", "varying_guard")}
    assert got == {
        "accumulate": [("C[i][j]", True, True)],
        "other_rows": [],                       # D[k][j] may be D[i][j]: isl finds k == i
        "guarded": [],                          # E[i][j] += under `if` inside k: C would store only then
        "partial": [("F[i][j]", True, True)],
        "read_first": [("G[i][j]", True, True)],
        "triangular": [("y[i]", True, True)],
        "invariant_read": [("H[i][j]", True, True), ("s[i]", True, False)],
        "conditional_first": [("R[i]", True, True), ("Z[i]", True, True)],   # R[i] = ... may not run: loaded
        "invariant_guard": [("K[i][j]", True, True)],          # loaded and stored under the condition
        "mixed_guard": [],                                      # two accesses under different conditions
        "varying_guard": [],                                    # the condition changes with k
    }
    (tri,) = kernel_promotions(prog, m, nests["triangular"])
    assert tri.runs is not None and tri.runs.to_c() == "i - 1"    # k runs only for i >= 1
    assert tri.guards == ()
    (inv,) = kernel_promotions(prog, m, nests["invariant_guard"])
    assert inv.runs is None and [str(c) for c in inv.guards] == ["-i + 20 >= 0"]


@requires_tool("g++")
def test_promotions_and_copy_ins_verify(tmp_path):
    res = verify(str(write_c(tmp_path, CASES)), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    code = {o.nest.name.split("@")[0]: o.code for o in res.outcomes if o.ported}
    assert {"accumulate", "other_rows", "guarded", "partial", "read_first", "triangular",
            "invariant_read", "conditional_write", "conditional_first", "invariant_guard"} <= set(code)
    copy_in = {name: {a.name: a.copy_in is not None for a in c.arrays} for name, c in code.items()}
    assert copy_in["accumulate"]["C"] is False
    assert copy_in["partial"]["F"] is True          # written only in part
    assert copy_in["read_first"]["G"] is True       # read before it is written
    assert copy_in["other_rows"]["D"] is True and copy_in["guarded"]["E"] is True
    # not read, but not certainly written either: the elements the condition skips must keep their values
    assert copy_in["conditional_write"]["P"] is True and copy_in["conditional_write"]["Q"] is False
    text = {name: "\n".join(k.text for k in c.kernels) for name, c in code.items()}
    assert "c2gpu_reg_" not in text["other_rows"] and "c2gpu_reg_" not in text["guarded"]
    assert re.search(r"if \(\(i - 1\) >= 0\) c2gpu_reg_y_0 = y\[i\];", text["triangular"])
    assert re.search(r"if \(\(i - 1\) >= 0\) y\[i\] = c2gpu_reg_y_0;", text["triangular"])
    assert not re.search(r"s\[i\] = c2gpu_reg", text["invariant_read"])     # read only: never stored
    # the rows the condition skips are neither loaded nor stored (poisoned memory would show a stray store)
    assert re.search(r"if \(\(-i \+ 20\) >= 0\) c2gpu_reg_K_0 = K\[", text["invariant_guard"])
    assert re.search(r"if \(\(-i \+ 20\) >= 0\) K\[[^\]]*\] = c2gpu_reg_K_0;", text["invariant_guard"])


def test_port_says_which_elements_live_in_registers_and_which_copies_are_skipped(tmp_path):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(TESTDATA / "matmul.c"), "-o", str(tmp_path / "m.cu")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "    register: C[i][j] across loop 'k' in c2gpu_matmul_16_k0 (loaded before it and stored after it)" in out
    assert "    C: written in full before it is read: no copy-in" in out


# isl's scheduler (c2gpu/transform/schedule.py) rewrites this nest with its first statement in two branches: the copies
# have the same source positions, and V[OFF + i] is promoted in each branch across a loop of its own.  Each
# access must print as the register of its own loop (found with the random nests, seed 6: the second
# branch's register was printed in the first).
SCHEDULED = r"""
#include <stdio.h>
#define N 13
#define OFF (2 * N + 4)
#define M (4 * N + 10)
static float C[M][M], U[M], V[M];

void nest7(void)
{
    int i, j;
    for (i = 0; i < N - 2; i++) {
        for (j = 0; j < N - i; j++) {
            C[OFF + -i][OFF + j - 1] = C[OFF + 2*i][OFF + j - i] + V[OFF + i] + 0.5f * (float)j;
            U[OFF + 2*j] = C[OFF + -j - 1][OFF + i + 1] + C[OFF + j][OFF + 2*j - 2];
        }
    }
}

int main(void) {
  for (int i = 0; i < M; i++) {
    U[i] = i * 0.25f;
    V[i] = (i % 7) * 0.5f;
    for (int j = 0; j < M; j++) C[i][j] = ((i * 5 + j) % 17) / 17.0f;
  }
  nest7();
  printf("%f %f\n", C[OFF][OFF], U[OFF + 2]);
  return 0;
}
"""


@requires_tool("g++")
def test_statements_repeated_by_the_scheduler_print_their_own_register(tmp_path):
    res = verify(str(write_c(tmp_path, SCHEDULED)), PreprocessOptions(), make_manager(PORT.passes, {}))
    assert res.ok, res.message
    (o,) = [o for o in res.outcomes if o.ported and o.nest.function == "nest7"]
    assert "c2gpu_c0" in o.nest.loops()[0].var        # isl's scheduler wrote the nest again
    (k,) = o.code.kernels
    proms = [p for p in k.promotions if p.array == "V"]
    assert len(proms) == 2 and len({id(n) for p in proms for n in p.nodes}) == 2   # one node each
    for p in proms:
        # each register is loaded in its own branch, just before the loop it lives across
        assert re.search(rf"{p.register} = V\[[^\]]*\];\n\s*for \(", k.text)


POLYBENCH = TESTDATA / "corpora" / "polybench-c-4.2.1"


@pytest.mark.parametrize("kernel", ["linear-algebra/blas/symm/symm.c", "datamining/correlation/correlation.c"])
def test_every_shared_tile_is_read_by_the_kernel(tmp_path, kernel):
    """A tile staged for accesses that registers replace serves nothing: it was loaded, synchronized and
    credited with the loads it "saved" (symm's B[i][j], correlation's mean[j]).  Each tile the emitted kernels
    declare is read outside the loop that fills it."""
    path, defines = POLYBENCH / kernel, [("MINI_DATASET", "1")]
    m = make_manager(PIPELINE, {})
    prog = m.run(load_program(str(path), PreprocessOptions(
        defines=tuple(defines), include_dirs=(str(POLYBENCH / "utilities"), str(path.parent)))))
    from c2gpu.codegen import build_nest_code
    texts = [k.text for n in prog.nests if m.result("plan", n) is not None
             for k in build_nest_code(n, m.result("plan", n)).kernels]
    assert texts
    for text in texts:
        for tile in re.findall(r"__shared__ \w+ (c2gpu_sh_\w+)\[", text):
            reads = [ln for ln in text.splitlines()
                     if tile + "[" in ln and "__shared__" not in ln
                     and not re.match(rf"\s*{tile}\[[^=]*\]\s*=[^=]", ln)]
            assert reads, f"{tile} is filled and never read:\n{text}"
