"""IR facts for the testdata programs over 2-D and 3-D arrays, worked out by hand from the C sources (the
other testdata programs: tests/test_ir_testdata.py, whose helpers these tests use).

The dense 2-D and 3-D kernels (declared arrays, and a pointer indexed as one), the PolyBench programs with their
scop regions, and the validation kernels over flat pointers, whose subscripts are delinearized.  The expected
values come from reading the C file, not from the current output.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from c2gpu.analysis.counting import enclosing_loops, instances
from test_ir_testdata import (D, accesses, arrays, assert_all, brute_count, count, kernel, kernel_nests, lin, lines,
                              load, loops, names, nest, ops, reductions, scalars, subs)



# --------------------------------------------------------------------------- dense 2-D / 3-D kernels

def test_matmul():
    n = kernel("matmul.c", "matmul")
    assert n.params == ()
    assert loops(n) == [("i", "0", "256", 1, "256"), ("j", "0", "256", 1, "256"), ("k", "0", "256", 1, "256")]
    init, upd = n.statements()
    assert (init.loc.line, init.text, init.loops) == (18, "C[i][j] = 0", ("i", "j"))
    assert accesses(init) == [("write", "C", ["i", "j"])] and ops(init) == {}
    assert (upd.loc.line, upd.text, upd.loops) == (20, "C[i][j] += A[i][k] * B[k][j]", ("i", "j", "k"))
    assert accesses(upd) == [("read", "A", ["i", "k"]), ("read", "B", ["k", "j"]),
                             ("read", "C", ["i", "j"]), ("write", "C", ["i", "j"])]
    assert_all(upd.accesses)
    assert ops(upd) == {"fp32_fma": 1}
    assert reductions(n) == [("C[i][j]", "+", ("k",), 20)]
    assert subs(n.reductions()[0].array_access) == ["i", "j"]
    assert arrays(n) == {x: ("float", 4, ("256", "256"), "global", False) for x in "ABC"}
    assert scalars(n) == {}
    assert count(n, init) == 256 ** 2 and count(n, upd) == 256 ** 3


@pytest.mark.parametrize("size", [64, 5])
def test_matmul_define_overrides_size(size):
    prog = load("matmul.c", D(N=size))
    assert prog.defines == (("N", str(size)),)
    n = nest(prog, "matmul")
    assert [lp.trip_count.to_c() for lp in n.loops()] == [str(size)] * 3
    assert arrays(n)["A"][2] == (str(size), str(size))
    init, upd = n.statements()
    assert instances(enclosing_loops(n, init)).to_c() == str(size ** 2)
    assert instances(enclosing_loops(n, upd)).to_c() == str(size ** 3)
    assert count(n, upd) == brute_count(n, upd, {}) == size ** 3


def test_matmul_ptr_linearized():
    n = kernel("matmul_ptr.c", "matmul")
    assert n.params == ("n",)
    assert loops(n) == [("i", "0", "n", 1, "n"), ("j", "0", "n", 1, "n"), ("k", "0", "n", 1, "n")]
    decl, upd, store = n.statements()
    assert (decl.loc.line, decl.text, decl.decl, decl.loops) == (17, "float sum = 0.0f", "sum", ("i", "j"))
    assert decl.accesses == () and decl.scalar_writes == ("sum",)
    assert (upd.loc.line, upd.text) == (19, "sum += a[(i * n) + k] * b[(k * n) + j]")
    a, b = upd.accesses
    # i*n + k has degree 2 (n is a parameter) but is recovered as a[i][k]: affine once delinearized
    assert (a.kind, subs(a), lin(a), a.affine) == ("read", ["i*n + k"], ["i", "k"], True)
    assert (b.kind, subs(b), lin(b), b.affine) == ("read", ["k*n + j"], ["k", "j"], True)
    assert ops(upd) == {"fp32_fma": 1}
    (c,) = store.accesses
    assert (store.loc.line, c.kind, subs(c), lin(c), c.affine) == (20, "write", ["i*n + j"], ["i", "j"], True)
    assert reductions(n) == [("sum", "+", ("k",), 19)]
    assert scalars(n) == {"n": ("int", "invariant"), "sum": ("float", "local")}
    assert arrays(n) == {x: ("float", 4, (None,), "param-pointer", False) for x in "abc"}
    assert n.all_flags() == []  # the non-affine-subscript note is withdrawn once delinearized
    assert instances(enclosing_loops(n, upd)).to_c() == "n*n*n"


def test_transpose_non_square():
    n = kernel("transpose.c", "transpose", ROWS=7, COLS=5)
    assert loops(n) == [("i", "0", "7", 1, "7"), ("j", "0", "5", 1, "5")]
    (s,) = n.statements()
    assert (s.loc.line, s.text) == (23, "out[j][i] = in[i][j]")
    assert accesses(s) == [("read", "in", ["i", "j"]), ("write", "out", ["j", "i"])]
    assert ops(s) == {}
    assert arrays(n) == {"in": ("float", 4, ("7", "5"), "global", False),
                         "out": ("float", 4, ("5", "7"), "global", False)}
    assert count(n, s) == 35


def test_gemv():
    n = kernel("gemv.c", "gemv", N=6, M=9)
    assert loops(n) == [("i", "0", "6", 1, "6"), ("j", "0", "9", 1, "9")]
    init, upd = n.statements()
    assert (init.loc.line, init.text, init.loops) == (22, "y[i] = 0", ("i",))
    assert accesses(init) == [("write", "y", ["i"])]
    assert (upd.loc.line, upd.text, upd.loops) == (24, "y[i] += A[i][j] * x[j]", ("i", "j"))
    assert accesses(upd) == [("read", "A", ["i", "j"]), ("read", "x", ["j"]),
                             ("read", "y", ["i"]), ("write", "y", ["i"])]
    assert ops(upd) == {"fp32_fma": 1}
    assert reductions(n) == [("y[i]", "+", ("j",), 24)]
    assert arrays(n) == {"A": ("float", 4, ("6", "9"), "global", False),
                         "x": ("float", 4, ("9",), "global", False),
                         "y": ("float", 4, ("6",), "global", False)}
    assert [count(n, s) for s in (init, upd)] == [6, 54]


def test_syrk_triangular():
    n = kernel("syrk.c", "syrk")
    assert loops(n) == [("i", "0", "256", 1, "256"), ("j", "0", "i + 1", 1, "i + 1"), ("k", "0", "200", 1, "200")]
    assert n.loop("j").header == "for (j = 0; j <= i; j++)"
    scale, upd = n.statements()
    assert (scale.loc.line, scale.text, scale.loops) == (23, "C[i][j] *= beta", ("i", "j"))
    assert accesses(scale) == [("read", "C", ["i", "j"]), ("write", "C", ["i", "j"])]
    assert ops(scale) == {"fp32_mul": 1}
    assert (upd.loc.line, upd.loops) == (25, ("i", "j", "k"))
    # A is read through two rows: A[i][k] and A[j][k]
    assert accesses(upd) == [("read", "A", ["i", "k"]), ("read", "A", ["j", "k"]),
                             ("read", "C", ["i", "j"]), ("write", "C", ["i", "j"])]
    # alpha * A[i][k] * A[j][k] accumulated: one multiply and one fused multiply-add
    assert ops(upd) == {"fp32_fma": 1, "fp32_mul": 1}
    # C[i][j] *= beta is not a reduction (i, j index it); the k update is
    assert reductions(n) == [("C[i][j]", "+", ("k",), 25)]
    assert scalars(n) == {"alpha": ("float", "invariant"), "beta": ("float", "invariant")}
    assert arrays(n) == {"A": ("float", 4, ("256", "200"), "global", False),
                         "C": ("float", 4, ("256", "256"), "global", False)}


@pytest.mark.parametrize("N,M", [(256, 200), (64, 200), (10, 7), (1, 3)])
def test_syrk_triangular_instance_counts(N, M):
    n = kernel("syrk.c", "syrk", N=N, M=M)
    scale, upd = n.statements()
    assert instances(enclosing_loops(n, scale)).evaluate({}) == N * (N + 1) // 2
    assert instances(enclosing_loops(n, upd)).evaluate({}) == N * (N + 1) // 2 * M
    if N <= 64:
        assert brute_count(n, upd, {}) == N * (N + 1) // 2 * M


def test_convolution():
    n = kernel("convolution.c", "convolve")
    # R = FILTER_SIZE / 2 = 2 (integer division folded): interior rows/cols 2 .. 509
    assert loops(n) == [("y", "2", "510", 1, "508"), ("x", "2", "510", 1, "508"), ("c", "0", "3", 1, "3"),
                        ("fy", "0", "5", 1, "5"), ("fx", "0", "5", 1, "5")]
    decl, upd, store = n.statements()
    assert (decl.loc.line, decl.text, decl.decl, decl.loops) == (31, "float acc = 0.0f", "acc", ("y", "x", "c"))
    assert upd.loc.line == 34 and upd.loops == ("y", "x", "c", "fy", "fx")
    assert accesses(upd) == [("read", "filter", ["fy", "fx"]),
                             ("read", "img", ["fy + y - 2", "fx + x - 2", "c"])]
    assert_all(upd.accesses)
    assert ops(upd) == {"fp32_fma": 1}
    assert (store.loc.line, accesses(store)) == (35, [("write", "out", ["y", "x", "c"])])
    # acc is declared inside the c loop: it accumulates over fy and fx only
    assert reductions(n) == [("acc", "+", ("fy", "fx"), 34)]
    assert scalars(n) == {"acc": ("float", "local")}
    assert arrays(n) == {"filter": ("float", 4, ("5", "5"), "global", False),
                         "img": ("float", 4, ("512", "512", "3"), "global", False),
                         "out": ("float", 4, ("512", "512", "3"), "global", False)}
    assert [count(n, s) for s in (decl, upd, store)] == [508 * 508 * 3, 508 * 508 * 3 * 25, 508 * 508 * 3]


def test_convolution_defines_and_normalized():
    prog = load("convolution.c", D(H=16, W=20, FILTER_SIZE=3), normalize=True)
    n = nest(prog, "convolve")
    # R = 1: y in [1, 15), x in [1, 19), normalized to y_n in [0, 14), x_n in [0, 18)
    assert loops(n) == [("y_n", "0", "14", 1, "14"), ("x_n", "0", "18", 1, "18"), ("c", "0", "3", 1, "3"),
                        ("fy", "0", "3", 1, "3"), ("fx", "0", "3", 1, "3")]
    assert [(lp.origin.var, lp.origin.lower.to_c()) for lp in n.loops()[:2]] == [("y", "1"), ("x", "1")]
    upd = n.statements()[1]
    # img[y + fy - R][x + fx - R][c] with y = y_n + 1: the offsets cancel
    assert accesses(upd) == [("read", "filter", ["fy", "fx"]), ("read", "img", ["fy + y_n", "fx + x_n", "c"])]
    assert accesses(n.statements()[2]) == [("write", "out", ["y_n + 1", "x_n + 1", "c"])]
    assert reductions(n) == [("acc", "+", ("fy", "fx"), 34)]
    assert count(n, upd) == 14 * 18 * 3 * 9


def test_jacobi2d_time_loop_around_two_nests():
    n = kernel("jacobi2d.c", "jacobi2d", N=10, TSTEPS=3)
    assert loops(n) == [("t", "0", "3", 1, "3"),
                        ("i", "1", "9", 1, "8"), ("j", "1", "9", 1, "8"),
                        ("i", "1", "9", 1, "8"), ("j", "1", "9", 1, "8")]
    stencil, copy = n.statements()
    assert (stencil.loc.line, stencil.loops, stencil.loop_ids) == (22, ("t", "i", "j"), (0, 1, 2))
    assert accesses(stencil) == [("read", "A", ["i", "j"]), ("read", "A", ["i", "j - 1"]),
                                 ("read", "A", ["i", "j + 1"]), ("read", "A", ["i + 1", "j"]),
                                 ("read", "A", ["i - 1", "j"]), ("write", "B", ["i", "j"])]
    # the statement spans lines 22-23: each access keeps its own line
    assert [a.loc.line for a in stencil.accesses] == [22, 22, 22, 23, 23, 22]
    assert ops(stencil) == {"fp32_add": 4, "fp32_mul": 1}
    assert (copy.loc.line, copy.text, copy.loop_ids) == (26, "A[i][j] = B[i][j]", (0, 3, 4))
    assert accesses(copy) == [("read", "B", ["i", "j"]), ("write", "A", ["i", "j"])]
    assert reductions(n) == [] and scalars(n) == {}
    assert [count(n, s) for s in (stencil, copy)] == [3 * 8 * 8, 3 * 8 * 8]


def test_jacobi2d_normalized_sibling_loops_get_distinct_names():
    n = nest(load("jacobi2d.c", normalize=True), "jacobi2d")
    assert [lp.var for lp in n.loops()] == ["t", "i_n", "j_n", "i_n2", "j_n2"]
    assert [lp.origin.var for lp in n.loops()[1:]] == ["i", "j", "i", "j"]
    stencil, copy = n.statements()
    assert stencil.loops == ("t", "i_n", "j_n") and copy.loops == ("t", "i_n2", "j_n2")
    assert accesses(stencil)[1] == ("read", "A", ["i_n + 1", "j_n"])
    assert accesses(copy) == [("read", "B", ["i_n2 + 1", "j_n2 + 1"]), ("write", "A", ["i_n2 + 1", "j_n2 + 1"])]
    assert instances(enclosing_loops(n, copy)).to_c() == str(20 * 510 * 510)


def test_gauss_seidel():
    n = kernel("gauss_seidel.c", "gauss_seidel", N=6, TSTEPS=2)
    assert loops(n) == [("t", "0", "2", 1, "2"), ("i", "1", "5", 1, "4"), ("j", "1", "5", 1, "4")]
    (s,) = n.statements()
    assert s.loc.line == 23
    assert accesses(s) == [("read", "A", ["i - 1", "j"]), ("read", "A", ["i", "j - 1"]), ("read", "A", ["i", "j"]),
                           ("read", "A", ["i", "j + 1"]), ("read", "A", ["i + 1", "j"]), ("write", "A", ["i", "j"])]
    assert ops(s) == {"fp32_add": 4, "fp32_mul": 1}
    assert reductions(n) == []  # the right-hand side reads A itself


def test_nbody():
    n = kernel("nbody.c", "accelerations")
    assert n.params == ("n",)
    assert loops(n) == [("i", "0", "n", 1, "n"), ("j", "0", "n", 1, "n")]
    stmts = n.statements()
    assert lines(n) == [21, 21, 21, 23, 24, 25, 26, 27, 28, 29, 30, 32, 33, 34]
    assert [s.decl for s in stmts] == ["axi", "ayi", "azi", "dx", "dy", "dz", "inv", "inv3",
                                       None, None, None, None, None, None]
    assert [s.loops for s in stmts] == [("i",)] * 3 + [("i", "j")] * 8 + [("i",)] * 3
    for s, arr in zip(stmts[3:6], "xyz"):
        assert accesses(s) == [("read", arr, ["j"]), ("read", arr, ["i"])]
        assert ops(s) == {"fp32_add": 1}
    inv = stmts[6]
    assert inv.calls == ("sqrtf",) and inv.accesses == ()
    # 1 / sqrtf(dx*dx + dy*dy + dz*dz + EPS): 3 mul + 3 add = 2 fma + 1 mul + 1 add, a sqrt and a divide
    assert ops(inv) == {"fp32_fma": 2, "fp32_mul": 1, "fp32_add": 1, "fp32_sqrt": 1, "fp32_div": 1}
    assert ops(stmts[7]) == {"fp32_mul": 2}
    assert [ops(s) for s in stmts[8:11]] == [{"fp32_fma": 1}] * 3
    assert [accesses(s) for s in stmts[11:]] == [[("write", "ax", ["i"])], [("write", "ay", ["i"])],
                                                 [("write", "az", ["i"])]]
    assert reductions(n) == [("axi", "+", ("j",), 28), ("ayi", "+", ("j",), 29), ("azi", "+", ("j",), 30)]
    # locals private to an iteration; n (used only in the bounds) is an invariant scalar too
    assert scalars(n) == {**{v: ("float", "local") for v in ("axi", "ayi", "azi", "dx", "dy", "dz", "inv", "inv3")},
                          "n": ("int", "invariant")}
    assert arrays(n) == {a: ("float", 4, (None,), "param-pointer", True) for a in ("x", "y", "z", "ax", "ay", "az")}
    assert [n.array(a).const for a in ("x", "y", "z", "ax", "ay", "az")] == [True] * 3 + [False] * 3


# --------------------------------------------------------------------------- polybench (scop regions)

def test_polybench_gemm():
    prog = load("polybench/gemm.c")
    (n,) = prog.nests
    assert (n.name, n.region, n.params) == ("kernel_gemm@92", "scop", ("ni", "nj", "nk"))
    # i, then two siblings: j (scale) and k (with j innermost)
    assert loops(n) == [("i", "0", "ni", 1, "ni"), ("j", "0", "nj", 1, "nj"),
                        ("k", "0", "nk", 1, "nk"), ("j", "0", "nj", 1, "nj")]
    scale, upd = n.statements()
    assert (scale.loc.line, scale.text, scale.loop_ids) == (94, "C[i][j] *= beta", (0, 1))
    assert accesses(scale) == [("read", "C", ["i", "j"]), ("write", "C", ["i", "j"])]
    assert ops(scale) == {"fp32_mul": 1}
    assert (upd.loc.line, upd.loops, upd.loop_ids) == (97, ("i", "k", "j"), (0, 2, 3))
    assert accesses(upd) == [("read", "A", ["i", "k"]), ("read", "B", ["k", "j"]),
                             ("read", "C", ["i", "j"]), ("write", "C", ["i", "j"])]
    assert ops(upd) == {"fp32_fma": 1, "fp32_mul": 1}
    # the k reduction into C[i][j] sits outside the parallel j loop
    assert reductions(n) == [("C[i][j]", "+", ("k",), 97)]
    assert scalars(n) == {"alpha": ("float", "invariant"), "beta": ("float", "invariant"),
                          "ni": ("int", "invariant"), "nj": ("int", "invariant"), "nk": ("int", "invariant")}
    # VLA parameters: the extents are the function parameters
    assert arrays(n) == {"A": ("float", 4, ("ni", "nk"), "param-array", False),
                         "B": ("float", 4, ("nk", "nj"), "param-array", False),
                         "C": ("float", 4, ("ni", "nj"), "param-array", False)}
    assert instances(enclosing_loops(n, upd)).evaluate({"ni": 3, "nj": 4, "nk": 5}) == 60
    assert instances(enclosing_loops(n, scale)).to_c() == "ni*nj"


def test_polybench_gemm_skipped_nests():
    prog = load("polybench/gemm.c")
    diags = [(Path(d.loc.file).name, d.loc.line, d.code) for d in prog.diagnostics]
    # init_array's three nests and the checksum loop of the header's static inline function;
    # print_array's nest is compiled out (no POLYBENCH_DUMP_ARRAYS)
    assert sorted(diags) == [("gemm.c", 54, "skipped"), ("gemm.c", 57, "skipped"), ("gemm.c", 60, "skipped"),
                             ("polybench_mini.h", 95, "skipped")]
    assert all("scop" in d.message for d in prog.diagnostics)


def test_polybench_gemm_dump_arrays_adds_a_skipped_nest():
    prog = load("polybench/gemm.c", D(POLYBENCH_DUMP_ARRAYS=1))
    assert names(prog) == ["kernel_gemm@92"]
    assert ("gemm.c", 72) in [(Path(d.loc.file).name, d.loc.line) for d in prog.diagnostics]


def test_polybench_atax():
    prog = load("polybench/atax.c")
    assert names(prog) == ["kernel_atax@79", "kernel_atax@81"]
    init, main_nest = prog.nests
    assert (init.region, init.params, loops(init)) == ("scop", ("n",), [("i", "0", "n", 1, "n")])
    assert accesses(init.statements()[0]) == [("write", "y", ["i"])]
    assert arrays(init) == {"y": ("float", 4, ("n",), "param-array", False)}

    n = main_nest
    assert (n.region, n.params) == ("scop", ("m", "n"))
    assert loops(n) == [("i", "0", "m", 1, "m"), ("j", "0", "n", 1, "n"), ("j", "0", "n", 1, "n")]
    s1, s2, s3 = n.statements()
    assert (s1.loc.line, s1.text, accesses(s1)) == (82, "tmp[i] = 0.0f", [("write", "tmp", ["i"])])
    assert (s2.loc.line, s2.loop_ids) == (84, (0, 1))
    assert accesses(s2) == [("read", "tmp", ["i"]), ("read", "A", ["i", "j"]), ("read", "x", ["j"]),
                            ("write", "tmp", ["i"])]
    assert (s3.loc.line, s3.loop_ids) == (86, (0, 2))
    assert accesses(s3) == [("read", "y", ["j"]), ("read", "A", ["i", "j"]), ("read", "tmp", ["i"]),
                            ("write", "y", ["j"])]
    assert ops(s2) == ops(s3) == {"fp32_fma": 1}
    # tmp[i] reduces over j; y[j] is accumulated over i (i carries a reduction on y[])
    assert reductions(n) == [("tmp[i]", "+", ("j",), 84), ("y[j]", "+", ("i",), 86)]
    assert arrays(n) == {"A": ("float", 4, ("m", "n"), "param-array", False),
                         "tmp": ("float", 4, ("m",), "param-array", False),
                         "x": ("float", 4, ("n",), "param-array", False),
                         "y": ("float", 4, ("n",), "param-array", False)}
    assert scalars(n) == {"m": ("int", "invariant"), "n": ("int", "invariant")}
    diags = sorted((Path(d.loc.file).name, d.loc.line, d.code) for d in prog.diagnostics)
    assert diags == [("atax.c", 44, "skipped"), ("atax.c", 46, "skipped"), ("polybench_mini.h", 95, "skipped")]


# --------------------------------------------------------------------------- validation kernels (flat pointers)

def test_validation_gemm_linearized():
    n = kernel("validation/gemm.c", "gemm", NI=16, NJ=24, NK=32)
    assert loops(n) == [("i", "0", "16", 1, "16"), ("j", "0", "24", 1, "24"), ("k", "0", "32", 1, "32")]
    scale, upd = n.statements()
    assert (scale.loc.line, ops(scale)) == (26, {"fp32_mul": 1})
    assert [(a.kind, subs(a), lin(a)) for a in scale.accesses] == [("read", ["24*i + j"], ["i", "j"]),
                                                                   ("write", ["24*i + j"], ["i", "j"])]
    assert upd.loc.line == 28
    assert [(a.kind, a.array, subs(a), lin(a)) for a in upd.accesses] == [
        ("read", "A", ["32*i + k"], ["i", "k"]),      # row width NK
        ("read", "B", ["j + 24*k"], ["k", "j"]),      # row width NJ
        ("read", "C", ["24*i + j"], ["i", "j"]),
        ("write", "C", ["24*i + j"], ["i", "j"])]
    assert_all(upd.accesses)
    assert ops(upd) == {"fp32_fma": 1, "fp32_mul": 1}
    assert reductions(n) == [("C[(i * 24) + j]", "+", ("k",), 28)]
    assert lin(n.reductions()[0].array_access) == ["i", "j"]
    assert arrays(n) == {x: ("float", 4, (None,), "param-pointer", False) for x in "ABC"}
    assert [n.array(x).const for x in "ABC"] == [True, True, False]
    assert scalars(n) == {"alpha": ("float", "invariant"), "beta": ("float", "invariant")}


def test_validation_gemm_default_size():
    n = kernel("validation/gemm.c", "gemm")
    assert [lp.trip_count.to_c() for lp in n.loops()] == ["512"] * 3
    assert count(n, n.statements()[1]) == 512 ** 3


def test_validation_2mm():
    prog = load("validation/2mm.c", D(NI=4, NJ=5, NK=6, NL=7))
    k1, k2 = nest(prog, "mm2@31"), nest(prog, "mm2@38")
    assert loops(k1) == [("i", "0", "4", 1, "4"), ("j", "0", "5", 1, "5"), ("k", "0", "6", 1, "6")]
    assert loops(k2) == [("i", "0", "4", 1, "4"), ("j", "0", "7", 1, "7"), ("k", "0", "5", 1, "5")]
    init, upd = k1.statements()
    assert [(a.kind, subs(a), lin(a)) for a in init.accesses] == [("write", ["5*i + j"], ["i", "j"])]
    assert [(a.kind, a.array, lin(a)) for a in upd.accesses] == [
        ("read", "A", ["i", "k"]), ("read", "B", ["k", "j"]), ("read", "tmp", ["i", "j"]), ("write", "tmp", ["i", "j"])]
    assert [subs(a) for a in upd.accesses[:2]] == [["6*i + k"], ["j + 5*k"]]
    assert ops(upd) == {"fp32_fma": 1, "fp32_mul": 1}
    assert [(r.op, r.loops) for r in k1.reductions()] == [("+", ("k",))]
    scale, upd2 = k2.statements()
    assert (ops(scale), [lin(a) for a in scale.accesses]) == ({"fp32_mul": 1}, [["i", "j"], ["i", "j"]])
    assert [(a.kind, a.array, subs(a), lin(a)) for a in upd2.accesses] == [
        ("read", "tmp", ["5*i + k"], ["i", "k"]), ("read", "C", ["j + 7*k"], ["k", "j"]),
        ("read", "D", ["7*i + j"], ["i", "j"]), ("write", "D", ["7*i + j"], ["i", "j"])]
    assert ops(upd2) == {"fp32_fma": 1}
    assert [(r.op, r.loops) for r in k2.reductions()] == [("+", ("k",))]
    assert scalars(k1) == {"alpha": ("float", "invariant")} and scalars(k2) == {"beta": ("float", "invariant")}
    assert sorted(arrays(k1)) == ["A", "B", "tmp"] and sorted(arrays(k2)) == ["C", "D", "tmp"]


def test_validation_syrk_full_square():
    n = kernel("validation/syrk.c", "syrk", NI=8, NJ=6)
    assert loops(n) == [("i", "0", "8", 1, "8"), ("j", "0", "8", 1, "8"), ("k", "0", "6", 1, "6")]
    scale, upd = n.statements()
    assert [lin(a) for a in scale.accesses] == [["i", "j"], ["i", "j"]]
    assert [(a.kind, a.array, subs(a), lin(a)) for a in upd.accesses] == [
        ("read", "A", ["6*i + k"], ["i", "k"]), ("read", "A", ["6*j + k"], ["j", "k"]),
        ("read", "C", ["8*i + j"], ["i", "j"]), ("write", "C", ["8*i + j"], ["i", "j"])]
    assert ops(upd) == {"fp32_fma": 1, "fp32_mul": 1}
    assert [(r.op, r.loops, r.loc.line) for r in n.reductions()] == [("+", ("k",), 24)]
    assert count(n, upd) == 8 * 8 * 6


def test_validation_gesummv():
    n = kernel("validation/gesummv.c", "gesummv", N=8)
    assert loops(n) == [("i", "0", "8", 1, "8"), ("j", "0", "8", 1, "8")]
    s1, s2, s3 = n.statements()
    assert lines(n) == [21, 22, 24]
    assert [(a.kind, a.array, subs(a), lin(a)) for a in s1.accesses] == [
        ("read", "A", ["8*i + j"], ["i", "j"]), ("read", "x", ["j"], None),
        ("read", "tmp", ["i"], None), ("write", "tmp", ["i"], None)]
    assert [(a.kind, a.array, lin(a)) for a in s2.accesses][0] == ("read", "B", ["i", "j"])
    assert [ops(s) for s in (s1, s2, s3)] == [{"fp32_fma": 1}, {"fp32_fma": 1}, {"fp32_fma": 1, "fp32_mul": 1}]
    assert s3.loops == ("i",)
    assert reductions(n) == [("tmp[i]", "+", ("j",), 21), ("y[i]", "+", ("j",), 22)]
    assert [n.array(x).const for x in ("A", "B", "x", "y", "tmp")] == [True, True, True, False, False]


CONV2D_READS = [  # (flat subscript for NI=10, NJ=12, the 2-D form), in source order
    ("12*i + j - 13", ["i - 1", "j - 1"]), ("12*i + j - 1", ["i", "j - 1"]), ("12*i + j + 11", ["i + 1", "j - 1"]),
    ("12*i + j - 12", ["i - 1", "j"]), ("12*i + j", ["i", "j"]), ("12*i + j + 12", ["i + 1", "j"]),
    ("12*i + j - 11", ["i - 1", "j + 1"]), ("12*i + j + 1", ["i", "j + 1"]), ("12*i + j + 13", ["i + 1", "j + 1"]),
]


def test_validation_convolution_2d():
    n = kernel("validation/convolution-2d.c", "convolution2d", NI=10, NJ=12)
    assert loops(n) == [("i", "1", "9", 1, "8"), ("j", "1", "11", 1, "10")]
    (s,) = n.statements()
    assert s.loc.line == 26
    reads = [a for a in s.accesses if a.kind == "read"]
    assert [(a.array, subs(a)) for a in reads] == [("A", [flat]) for flat, _ in CONV2D_READS]
    assert [a.loc.line for a in reads] == [27, 27, 28, 28, 29, 29, 30, 30, 31]
    assert_all(s.accesses)
    (w,) = [a for a in s.accesses if a.kind == "write"]
    assert (w.array, subs(w), lin(w)) == ("B", ["12*i + j"], ["i", "j"])
    # the reads with no column offset are recovered as 2-D
    assert [lin(a) for a in reads[3:6]] == [two_d for _, two_d in CONV2D_READS[3:6]]
    # nine products summed: 8 fused multiply-adds and one multiply
    assert ops(s) == {"fp32_fma": 8, "fp32_mul": 1}
    assert scalars(n) == {f"c{r}{c}": ("float", "invariant") for r in "123" for c in "123"}
    assert reductions(n) == []


def test_validation_convolution_2d_all_reads_delinearized():
    n = kernel("validation/convolution-2d.c", "convolution2d", NI=10, NJ=12)
    reads = [a for a in n.statements()[0].accesses if a.kind == "read"]
    assert [lin(a) for a in reads] == [two_d for _, two_d in CONV2D_READS]


def test_validation_jacobi_2d():
    n = kernel("validation/jacobi-2d-imper.c", "jacobi2d", N=8, TSTEPS=3)
    assert loops(n) == [("t", "0", "3", 1, "3"), ("i", "1", "7", 1, "6"), ("j", "1", "7", 1, "6"),
                        ("i", "1", "7", 1, "6"), ("j", "1", "7", 1, "6")]
    stencil, copy = n.statements()
    assert [(a.kind, a.array, subs(a)) for a in stencil.accesses] == [
        ("read", "A", ["8*i + j"]), ("read", "A", ["8*i + j - 1"]), ("read", "A", ["8*i + j + 1"]),
        ("read", "A", ["8*i + j + 8"]), ("read", "A", ["8*i + j - 8"]), ("write", "B", ["8*i + j"])]
    assert [lin(a) for a in stencil.accesses[::3]] == [["i", "j"], ["i + 1", "j"]]
    assert lin(stencil.accesses[4]) == ["i - 1", "j"]
    assert ops(stencil) == {"fp32_add": 4, "fp32_mul": 1}
    assert [(a.kind, a.array, lin(a)) for a in copy.accesses] == [("read", "B", ["i", "j"]), ("write", "A", ["i", "j"])]
    assert copy.loop_ids == (0, 3, 4)


def test_validation_jacobi_2d_column_neighbours_delinearized():
    n = kernel("validation/jacobi-2d-imper.c", "jacobi2d", N=8, TSTEPS=3)
    stencil = n.statements()[0]
    assert [lin(a) for a in stencil.accesses[1:3]] == [["i", "j - 1"], ["i", "j + 1"]]


def test_validation_fdtd_2d():
    n = kernel("validation/fdtd-2d.c", "fdtd2d", NX=16, NY=24, TMAX=5)
    assert loops(n) == [("t", "0", "5", 1, "5"),
                        ("i", "0", "16", 1, "16"), ("j", "0", "24", 1, "24"),
                        ("i", "0", "16", 1, "16"), ("j", "1", "24", 1, "23"),
                        ("i", "0", "15", 1, "15"), ("j", "0", "23", 1, "23")]
    s1, s2, s3, s4 = n.statements()
    assert lines(n) == [30, 32, 36, 39]
    assert [s.loop_ids for s in (s1, s2, s3, s4)] == [(0, 1, 2), (0, 1, 2), (0, 3, 4), (0, 5, 6)]
    # if (i == 0) ... else ...: an equality, and its negation (a disjunction: text only)
    (g,) = s1.guards
    assert (g.text, g.negated, [str(c) for c in g.constraints], g.loc.line) == ("i == 0", False, ["i == 0"], 29)
    (g,) = s2.guards
    assert (g.text, g.negated, g.constraints) == ("!(i == 0)", True, None)
    assert [(a.kind, a.array, subs(a), lin(a)) for a in s1.accesses] == [
        ("read", "fict", ["t"], None), ("write", "ey", ["24*i + j"], ["i", "j"])]
    assert [(a.kind, a.array, subs(a), lin(a)) for a in s2.accesses] == [
        ("read", "hz", ["24*i + j"], ["i", "j"]), ("read", "hz", ["24*i + j - 24"], ["i - 1", "j"]),
        ("read", "ey", ["24*i + j"], ["i", "j"]), ("write", "ey", ["24*i + j"], ["i", "j"])]
    assert [(a.kind, a.array, subs(a)) for a in s3.accesses] == [
        ("read", "hz", ["24*i + j"]), ("read", "hz", ["24*i + j - 1"]), ("read", "ex", ["24*i + j"]),
        ("write", "ex", ["24*i + j"])]
    assert [(a.kind, a.array, subs(a)) for a in s4.accesses] == [
        ("read", "ex", ["24*i + j + 1"]), ("read", "ex", ["24*i + j"]), ("read", "ey", ["24*i + j + 24"]),
        ("read", "ey", ["24*i + j"]), ("read", "hz", ["24*i + j"]), ("write", "hz", ["24*i + j"])]
    assert lin(s4.accesses[2]) == ["i + 1", "j"]
    assert [ops(s) for s in (s1, s2, s3, s4)] == [{}, {"fp32_add": 1, "fp32_fma": 1}, {"fp32_add": 1, "fp32_fma": 1},
                                                  {"fp32_add": 3, "fp32_fma": 1}]
    # syntactic candidates (x -= e with x not indexed by t); none accumulates over i or j
    assert [(r.target.split("[")[0], r.op, r.loops, r.loc.line) for r in n.reductions()] == [
        ("ey", "+", ("t",), 32), ("ex", "+", ("t",), 36), ("hz", "+", ("t",), 39)]
    # guards are not counted: S1 and S2 each report every (t, i, j)
    assert [count(n, s) for s in (s1, s2, s3, s4)] == [5 * 16 * 24, 5 * 16 * 24, 5 * 16 * 23, 5 * 15 * 23]
    assert n.array("fict").const and arrays(n)["fict"] == ("float", 4, (None,), "param-pointer", False)


def test_validation_fdtd_2d_column_neighbours_delinearized():
    n = kernel("validation/fdtd-2d.c", "fdtd2d", NX=16, NY=24, TMAX=5)
    _, _, s3, s4 = n.statements()
    assert lin(s3.accesses[1]) == ["i", "j - 1"]
    assert lin(s4.accesses[0]) == ["i", "j + 1"]


MACRO_SIZED_KERNELS = ["matmul.c", "transpose.c", "convolution.c", "jacobi2d.c", "gemv.c", "histogram.c", "syrk.c",
                       "gauss_seidel.c", "dist2.c", "decrementing.c", "selected.c"] + \
                      [f"validation/{f}" for f in ("2mm.c", "convolution-2d.c", "fdtd-2d.c", "gemm.c", "gesummv.c",
                                                   "jacobi-2d-imper.c", "syrk.c")]


@pytest.mark.parametrize("rel", MACRO_SIZED_KERNELS)
def test_macro_sized_kernels_have_no_symbolic_parameters(rel):
    for n in kernel_nests(load(rel)):
        assert n.params == (), n.name
        for lp in n.loops():
            assert lp.trip_count.variables <= {lp2.var for lp2 in n.loops()}, (n.name, lp.header)


def test_validation_default_sizes_are_the_measured_ones():
    expect = {"validation/2mm.c": ("mm2@31", ["1024"] * 3), "validation/convolution-2d.c": ("convolution2d@24", ["4094"] * 2),
              "validation/fdtd-2d.c": ("fdtd2d@26", ["500", "2048", "2048", "2048", "2047", "2047", "2047"]),
              "validation/gemm.c": ("gemm@24", ["512"] * 3), "validation/gesummv.c": ("gesummv@19", ["4096"] * 2),
              "validation/jacobi-2d-imper.c": ("jacobi2d@20", ["20"] + ["998"] * 4),
              "validation/syrk.c": ("syrk@20", ["1024"] * 3)}
    for rel, (name, trips) in expect.items():
        n = nest(load(rel), name)
        assert [lp.trip_count.to_c() for lp in n.loops()] == trips, rel
