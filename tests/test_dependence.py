"""Dependence verdicts (c2gpu/passes/dependence.py), loop by loop.

Verdicts are compared as a list of (loop variable as written in C, status) in
lid order (pre-order), so sibling loops that share a name (jacobi's two `i`
loops) are told apart by position.

How to add a case:
- a testdata kernel: add a row to KERNELS: (file relative to testdata/, nest
  name as `c2gpu analyze` prints it, expected verdicts without options,
  expected verdicts with assume_no_alias).  test_every_kernel_nest_is_listed
  fails until every non-`main` nest of testdata has a row.
- a hand-written snippet: `info = only_nest(tmp_path, C_SOURCE)` runs
  normalize,dependence on it and returns the DependenceInfo of its single nest;
  assert on `table(info)`, on `info.loop("i").reasons` and on
  `info.dependences`.  Write the C so that the expected status is forced by
  the one feature under test, and add the variant that flips it when you can
  (e.g. a guard that makes the dependence impossible next to one that does not).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from c2gpu.frontend import load_program

from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.passes.dependence import DependenceAnalysis, DependenceInfo
from c2gpu.pipeline import PassManager
from c2gpu.registry import available_passes
from conftest import project_programs

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
P, R, C, U = "parallel", "reduction", "carried", "unknown"


def run(path: Path, assume_no_alias: bool = False, pipeline=("normalize", "dependence")):
    options = PreprocessOptions(include_dirs=(str(TESTDATA / "polybench"),))
    program = load_program(str(path), options)
    manager = PassManager(available_passes(), list(pipeline), {"assume_no_alias": True} if assume_no_alias else {})
    program = manager.run(program)
    assert not manager.errors, manager.errors
    return {n.name: (n, manager.result("dependence", n)) for n in program.nests}


def table(info: DependenceInfo) -> list[tuple[str, str]]:
    return [(v.var, v.status) for _, v in sorted(info.verdicts.items())]


def nest(file: str, name: str, assume_no_alias: bool = False) -> DependenceInfo:
    return run(TESTDATA / file, assume_no_alias)[name][1]


def only_nest(tmp_path: Path, source: str, assume_no_alias: bool = False,
              pipeline=("normalize", "dependence")) -> DependenceInfo:
    path = tmp_path / "t.c"
    path.write_text(source)
    nests = run(path, assume_no_alias, pipeline)
    assert len(nests) == 1, list(nests)
    return next(iter(nests.values()))[1]


def kinds(reasons) -> set[str]:
    return {r.kind for r in reasons}


# --------------------------------------------------------------------------- every testdata kernel

ALL_P = None   # marker: same verdicts with and without assume_no_alias

KERNELS = [
    ("convolution.c", "convolve@28", [("y", P), ("x", P), ("c", P), ("fy", R), ("fx", R)], ALL_P),
    ("decrementing.c", "shapes_1d@19", [("i", P)], ALL_P),
    ("decrementing.c", "shapes_1d@21", [("i", P)], ALL_P),
    ("decrementing.c", "shapes_1d@23", [("i", P)], ALL_P),
    ("decrementing.c", "shapes_1d@25", [("i", P)], ALL_P),
    ("decrementing.c", "upper_triangle@32", [("i", P), ("j", P)], ALL_P),
    ("decrementing.c", "guarded@40", [("i", P), ("j", P)], ALL_P),
    ("dist2.c", "recur2@24", [("i", C)], ALL_P),
    ("dist2.c", "row_recurrence@31", [("i", P), ("j", C)], ALL_P),
    ("dot.c", "dot@15", [("i", R)], ALL_P),
    ("external_call.c", "sample_all@20", [("i", U)], ALL_P),
    ("gauss_seidel.c", "gauss_seidel@20", [("t", C), ("i", C), ("j", C)], ALL_P),
    ("gemv.c", "gemv@21", [("i", P), ("j", R)], ALL_P),
    ("histogram.c", "histogram@20", [("i", P)], ALL_P),
    ("histogram.c", "histogram@22", [("i", R)], ALL_P),
    ("jacobi2d.c", "jacobi2d@19", [("t", C), ("i", P), ("j", P), ("i", P), ("j", P)], ALL_P),
    ("matmul.c", "matmul@16", [("i", P), ("j", P), ("k", R)], ALL_P),
    # main passes each of these kernels distinct allocations (the whole file shows it: frontend/objects.py)
    ("matmul_ptr.c", "matmul@15", [("i", P), ("j", P), ("k", R)], ALL_P),
    # main calls it with dst = buf + 1, src = buf: --assume-no-alias cannot override what the file shows
    ("may_alias.c", "shift_add@17", [("i", U)], [("i", U)]),
    ("nbody.c", "accelerations@20", [("i", P), ("j", R)], ALL_P),
    ("polybench/atax.c", "kernel_atax@79", [("i", P)], ALL_P),
    ("polybench/atax.c", "kernel_atax@81", [("i", R), ("j", R), ("j", P)], ALL_P),
    ("polybench/gemm.c", "kernel_gemm@92", [("i", P), ("j", P), ("k", R), ("j", P)], ALL_P),
    ("prefix_sum.c", "prefix_sum@15", [("i", C)], ALL_P),
    ("reductions.c", "max_if@24", [("i", R)], ALL_P),
    ("reductions.c", "max_fmaxf@34", [("i", R)], ALL_P),
    ("reductions.c", "min_if@43", [("i", R)], ALL_P),
    ("reductions.c", "product@53", [("i", R)], ALL_P),
    ("reductions.c", "count_above@62", [("i", R)], ALL_P),
    ("reductions.c", "gesummv_like@71", [("i", P), ("j", R)], ALL_P),
    ("saxpy.c", "saxpy@14", [("i", P)], ALL_P),
    ("selected.c", "scale_rows@21", [("i", P), ("j", P)], ALL_P),
    ("syrk.c", "syrk@21", [("i", P), ("j", P), ("k", R)], ALL_P),
    ("transpose.c", "transpose@21", [("i", P), ("j", P)], ALL_P),
    ("validation/adi.c", "adi@24", [("t", P), ("i1", P), ("i2", C), ("i1", P), ("i1", P), ("i2", C), ("i1", C),
                                    ("i2", P), ("i2", P), ("i1", C), ("i2", P)], ALL_P),   # t: one trip (TSTEPS 1)
    ("validation/atax.c", "atax@23", [("i", P), ("j", R)], ALL_P),
    ("validation/atax.c", "atax@28", [("j", P), ("i", R)], ALL_P),
    ("validation/convolution-3d.c", "conv3d@29", [("i", P), ("j", P), ("k", P)], ALL_P),
    ("validation/doitgen.c", "doitgen@26", [("r", P), ("q", P), ("p", P), ("s", R), ("q", P), ("p", P)], ALL_P),
    ("validation/mvt.c", "mvt@21", [("i", P), ("j", R)], ALL_P),
    ("validation/mvt.c", "mvt@24", [("i", P), ("j", R)], ALL_P),
    ("validation/2mm.c", "mm2@31", [("i", P), ("j", P), ("k", R)], ALL_P),
    ("validation/2mm.c", "mm2@38", [("i", P), ("j", P), ("k", R)], ALL_P),
    ("validation/convolution-2d.c", "convolution2d@24", [("i", P), ("j", P)], ALL_P),
    ("validation/fdtd-2d.c", "fdtd2d@26", [("t", C)] + [("i", P), ("j", P)] * 3, ALL_P),
    ("validation/gemm.c", "gemm@24", [("i", P), ("j", P), ("k", R)], ALL_P),
    ("validation/gesummv.c", "gesummv@19", [("i", P), ("j", R)], ALL_P),
    ("validation/jacobi-2d-imper.c", "jacobi2d@20", [("t", C)] + [("i", P), ("j", P)] * 2, ALL_P),
    ("validation/syrk.c", "syrk@20", [("i", P), ("j", P), ("k", R)], ALL_P),
    ("vecadd.c", "vecadd@15", [("i", P)], ALL_P),
    ("while_loop.c", "relax@32", [("i", P)], ALL_P),
    ("while_loop.c", "relax@34", [("i", R)], ALL_P),
]


@pytest.fixture(scope="module")
def results():
    cache = {}

    def get(file: str, assume_no_alias: bool):
        key = (file, assume_no_alias)
        if key not in cache:
            cache[key] = run(TESTDATA / file, assume_no_alias)
        return cache[key]
    return get


@pytest.mark.parametrize("file,name,expected,no_alias", KERNELS, ids=[f"{f}:{n}" for f, n, _, _ in KERNELS])
def test_kernel_verdicts(results, file, name, expected, no_alias):
    assert table(results(file, False)[name][1]) == expected
    assert table(results(file, True)[name][1]) == (expected if no_alias is ALL_P else no_alias)


def test_every_kernel_nest_is_listed(results):
    listed = {(f, n) for f, n, _, _ in KERNELS}
    files = sorted(p.relative_to(TESTDATA).as_posix() for p in project_programs())
    kernels = {(f, name) for f in files for name, (n, _) in results(f, False).items() if n.function != "main"}
    assert kernels == listed


# --------------------------------------------------------------------------- the traps, with their reasons

def test_prefix_sum_carries_flow_distance_1(results):
    info = results("prefix_sum.c", False)["prefix_sum@15"][1]
    v = info.loop("i")
    flow = [r for r in v.reasons if r.kind == "flow"]
    assert len(flow) == 1 and flow[0].distance == (1,) and flow[0].array == "out" and flow[0].exact
    assert flow[0].source.line == 16 and flow[0].sink.line == 16
    assert "out[i - 1] (line 16) reads the element of out written by out[i] (line 16) in the previous iteration" \
        in flow[0].message
    # main passes two separate mallocs, so the pointers do not alias: the dependence is the only reason
    assert kinds(v.reasons) == {"flow"}
    deps = [d for d in info.dependences if d.loop == v.lid and d.kind == "flow"]
    assert [(d.source.text, d.sink.text, d.distance) for d in deps] == [("out[i]", "out[i - 1]", (1,))]


def test_dist2_distances(results):
    r = results("dist2.c", False)
    v = r["recur2@24"][1].loop("i")
    assert v.ir_var == "i_n"            # normalized i = i_n + 2: the distance is in iterations
    assert [x.distance for x in v.reasons if x.kind == "flow"] == [(2,)]
    rows = r["row_recurrence@31"][1]
    assert [x.distance for x in rows.loop("j").reasons if x.kind == "flow"] == [(0, 1)]
    assert rows.loop("i").reasons == ()


def test_gauss_seidel_every_loop_carries(results):
    info = results("gauss_seidel.c", False)["gauss_seidel@20"][1]
    i, j = info.loop("i"), info.loop("j")
    assert {(x.kind, x.distance) for x in i.reasons} == {("flow", (0, 1, 0)), ("anti", (0, 1, 0))}
    assert {(x.kind, x.distance) for x in j.reasons} == {("flow", (0, 0, 1)), ("anti", (0, 0, 1))}
    assert "output" in kinds(info.loop("t").reasons)


def test_histogram_is_a_scatter_reduction(results):
    """hist[data[i]]++: the element is chosen by data, but every update commutes with the others (atomics)."""
    v = results("histogram.c", False)["histogram@22"][1].loop("i")
    assert [r.kind for r in v.reasons] == ["reduction"] and v.reductions == ("hist[data[i]]",)
    assert v.reasons[0].source.line == 23 and v.reasons[0].array == "hist"
    assert v.reasons[0].message == "scatter hist[data[i]] += over 'i' (line 23): the updates commute and run as atomics"


def test_reductions_are_named(results):
    assert results("matmul.c", False)["matmul@16"][1].loop("k").reductions == ("C[i][j]",)
    assert results("syrk.c", False)["syrk@21"][1].loop("k").reductions == ("C[i][j]",)
    assert results("gemv.c", False)["gemv@21"][1].loop("j").reductions == ("y[i]",)
    assert results("dot.c", False)["dot@15"][1].loop("i").reductions == ("sum",)
    assert results("nbody.c", False)["accelerations@20"][1].loop("j").reductions == ("axi", "ayi", "azi")
    conv = results("convolution.c", False)["convolve@28"][1]
    assert conv.loop("fy").reductions == ("acc",) and conv.loop("fx").reductions == ("acc",)
    red = results("reductions.c", False)
    ops = {name: [r.message.split()[2] for r in red[name][1].loop("i").reasons]
           for name in ("max_if@24", "max_fmaxf@34", "min_if@43", "product@53", "count_above@62")}
    assert ops == {"max_if@24": ["max="], "max_fmaxf@34": ["max="], "min_if@43": ["min="],
                   "product@53": ["*="], "count_above@62": ["+="]}
    assert red["gesummv_like@71"][1].loop("j").reductions == ("tmp[i]", "y[i]")
    assert results("polybench/atax.c", True)["kernel_atax@81"][1].loop("i").reductions == ("y[j]",)
    assert results("while_loop.c", False)["relax@34"][1].loop("i").reductions == ("err",)


def test_matmul_ptr_uses_the_2d_form_and_the_whole_files_aliasing_facts(results):
    info = results("matmul_ptr.c", False)["matmul@15"][1]
    assert any("c: subscripts compared in their 2-D form" in n for n in info.notes)
    assert not [r for r in info.loop("i").reasons if r.kind == "alias"]
    assert any(n.startswith("distinct objects, as the whole file shows: a is 'a' (line 27), assigned only new "
                            "memory (malloc) at the call of matmul()") for n in info.notes), info.notes
    assert info.loop("k").reductions == ("sum",)
    # the file shows each pointer's object, so the flag is not what proves them distinct
    assert "--assume-no-alias not used for a, b, c: the whole file shows what they point to" in \
        results("matmul_ptr.c", True)["matmul@15"][1].notes


def test_may_alias_message(results):
    v = results("may_alias.c", False)["shift_add@17"][1].loop("i")
    assert [(r.kind, r.message) for r in v.reasons] == [
        ("alias", "pointer parameters 'dst' and 'src' may alias: the whole file shows they may point into one object (dst: "
                  "'other' (line 24), assigned only new memory (malloc) / 'buf' (line 23), assigned only new memory "
                  "(malloc) at its 2 calls of shift_add(); src: 'buf' (line 23), assigned only new memory (malloc) at "
                  "its 2 calls of shift_add())")]
    assert v.reasons[0].source.line == 18


def test_restrict_note_and_external_call(results):
    assert "assumed pointer parameters x, y do not alias (declared restrict)" in results("saxpy.c", False)["saxpy@14"][1].notes
    v = results("external_call.c", True)["sample_all@20"][1].loop("i")
    assert [(r.kind, r.code, r.source.line) for r in v.reasons] == [("call", "unknown-call", 21)]
    assert "sensor_read" in v.reasons[0].message


def test_loop_independent_dependences_are_listed(results):
    info = results("jacobi2d.c", False)["jacobi2d@19"][1]
    li = {(d.array, d.kind, d.source_text, d.sink_text) for d in info.dependences if d.loop is None}
    assert ("B", "flow", "B[i][j]", "B[i][j]") in li        # B written by the first i nest, read by the second
    assert all(d.loop in (None, 0) for d in info.dependences)  # nothing carried by the i or j loops


def test_lookup_by_lid_and_name(results):
    info = results("jacobi2d.c", False)["jacobi2d@19"][1]
    assert [v.lid for v in info.verdicts.values()] == [0, 1, 2, 3, 4]
    assert info.loop("i") is info.verdicts[1] and info.loop(3).var == "i"
    assert info.statuses() == {0: C, 1: P, 2: P, 3: P, 4: P}


# --------------------------------------------------------------------------- hand-written snippets

def test_anti_dependence_only(tmp_path):
    info = only_nest(tmp_path, "float a[101]; void f(void) { int i; for (i = 0; i < 100; i++) a[i] = a[i + 1]; }")
    v = info.loop("i")
    assert v.status == C and [(r.kind, r.distance) for r in v.reasons] == [("anti", (1,))]


def test_output_dependence(tmp_path):
    info = only_nest(tmp_path, "float a[10]; void f(int n) { int i; for (i = 0; i < n; i++) a[0] = i; }")
    v = info.loop("i")
    assert v.status == C and [(r.kind, r.direction) for r in v.reasons] == [("output", "<")]


@pytest.mark.parametrize("bound,status", [(50, P), (51, C)])
def test_guard_makes_the_dependence_impossible(tmp_path, bound, status):
    # i < 50 writes a[0..49] and reads a[50..99]; with i < 51, a[50] is read at i = 0 and written at i = 50
    info = only_nest(tmp_path, f"float a[100]; void f(void) {{ int i; for (i = 0; i < 100; i++) "
                               f"if (i < {bound}) a[i] = a[i + 50]; }}")
    assert table(info) == [("i", status)]


@pytest.mark.parametrize("cond,status", [
    # a[i] = a[i - 5] for i in 50..59 runs where the condition holds: a dependence from i to i + 5 when both
    # run.  `!=` and `||` are unions of affine pieces (isl's), so the dependence is proven there or absent
    ("i < 55 || i > 100", P), ("i != 55 && i < 56", P), ("i < 55 || i == 70", P),
    ("i <= 55 || i == 59", C), ("i != 54 && i < 60", C), ("!(i > 54 && i != 70)", P),
])
def test_disjunctive_conditions_are_exact(tmp_path, cond, status):
    info = only_nest(tmp_path, f"float a[100]; void f(void) {{ int i; for (i = 50; i < 60; i++) "
                               f"if ({cond}) a[i] = a[i - 5]; }}")
    assert table(info) == [("i", status)]
    assert all(r.exact for r in info.loop("i").reasons), info.loop("i").reasons


def test_a_condition_of_too_many_cases_is_left_out(tmp_path):
    # 2^5 cases: the condition is dropped (a larger domain), and the dependence is only possible
    cond = " && ".join(f"i != {k}" for k in range(55, 60))
    info = only_nest(tmp_path, f"float a[100]; void f(void) {{ int i; for (i = 50; i < 60; i++) "
                               f"if ({cond}) a[i] = a[i - 5]; }}")
    assert table(info) == [("i", U)]
    assert "is not affine, so it was left out" in info.loop("i").reasons[0].message


@pytest.mark.parametrize("inner,expected", [("j < i", [("i", P), ("j", P)]), ("j <= i", [("i", P), ("j", P)]),
                                            ("j < n", [("i", C), ("j", P)])])
def test_triangular(tmp_path, inner, expected):
    # lower triangle written, upper triangle read: disjoint unless j runs over the whole row
    info = only_nest(tmp_path, f"void f(int n, float A[n][n]) {{ int i, j; for (i = 0; i < n; i++) "
                               f"for (j = 0; {inner}; j++) A[i][j] = A[j][i]; }}")
    assert table(info) == expected


@pytest.mark.parametrize("read,status", [("a[i + n]", P), ("a[i + n - 1]", C)])
def test_symbolic_parameter(tmp_path, read, status):
    info = only_nest(tmp_path, f"void f(int n, float *restrict a) {{ int i; for (i = 0; i < n; i++) a[i] = {read}; }}")
    assert table(info) == [("i", status)]


def test_scalar_written_before_read_is_privatized(tmp_path):
    info = only_nest(tmp_path, "float a[100], b[100]; void f(void) { int i; float t; "
                               "for (i = 0; i < 100; i++) { t = a[i]; b[i] = t * t; } }")
    v = info.loop("i")
    assert (v.status, v.private, v.outer_writes) == (P, ("t",), ("t",))


def test_scalar_used_after_the_loop_is_privatized_with_its_last_value(tmp_path):
    # written first in every iteration: each iteration may have its own copy; the function's `return t`
    # reads the last iteration's, which the port keeps (lastprivate)
    info = only_nest(tmp_path, "float a[100], b[100]; float f(void) { int i; float t; "
                               "for (i = 0; i < 100; i++) { t = a[i]; b[i] = t * t; } return t; }")
    v = info.loop("i")
    assert v.status == P and v.private == ("t",)
    assert any("last iteration's value is kept after the nest" in n for n in info.notes)


def test_scalar_read_before_write_is_carried(tmp_path):
    info = only_nest(tmp_path, "float a[100], b[100]; void f(void) { int i; float t = 0; "
                               "for (i = 0; i < 100; i++) { b[i] = t; t = a[i]; } }")
    v = info.loop("i")
    assert v.status == C and "flow" in kinds(v.reasons)
    assert any(r.array == "t" and "scalar t" in r.message for r in v.reasons)


def test_scalar_read_in_a_condition_counts(tmp_path):
    # the condition reads t before it is written: the IR keeps no statement for it, the pass must still see it
    info = only_nest(tmp_path, "float a[100], x[100]; void f(void) { int i; float t = 0; "
                               "for (i = 0; i < 100; i++) { if (t > 0) { if (i < 0) x[i] = 0; } t = a[i]; } }")
    assert table(info) == [("i", C)]


def test_inner_loop_distance_vectors(tmp_path):
    same_row = only_nest(tmp_path, "float A[100][100]; void f(void) { int i, j; for (i = 0; i < 100; i++) "
                                   "for (j = 1; j < 100; j++) A[i][j] = A[i][j - 1]; }")
    assert table(same_row) == [("i", P), ("j", C)]
    assert [d.distance for d in same_row.dependences if d.loop is not None] == [(0, 1)]
    diagonal = only_nest(tmp_path, "float A[100][100]; void f(void) { int i, j; for (i = 1; i < 100; i++) "
                                   "for (j = 0; j < 99; j++) A[i][j] = A[i - 1][j + 1]; }")
    assert table(diagonal) == [("i", C), ("j", P)]
    assert [(d.distance, d.direction) for d in diagonal.dependences if d.loop is not None] == [((1, -1), "(<, >)")]


@pytest.mark.parametrize("body,status", [
    ("if (s < 100) s += a[i];", U),                     # the condition reads the partial sum
    ("{ s += a[i]; b[i] = s; }", C),                    # the partial sum is used
    ("{ s += a[i]; s *= 2; }", C),                      # two operators
    ("s += a[i];", R),
    ("if (a[i] > s) s = a[i];", R),                     # max through the condition
    ("if (s < 100) s = fmaxf(s, a[i]);", U),            # not a max: the condition depends on s
])
def test_scalar_reduction_shapes(tmp_path, body, status):
    info = only_nest(tmp_path, "#include <math.h>\nfloat a[100], b[100]; float f(void) { int i; float s = 0; "
                               f"for (i = 0; i < 100; i++) {body} return s; }}")
    assert table(info) == [("i", status)]


def test_array_reduction_with_another_reader_is_carried(tmp_path):
    info = only_nest(tmp_path, "float A[10][10], y[10], z[10]; void f(void) { int i, j; for (i = 0; i < 10; i++) "
                               "for (j = 0; j < 10; j++) { y[i] += A[i][j]; z[j] = y[i]; } }")
    assert table(info) == [("i", C), ("j", C)]


def test_non_affine_guard_gives_a_may_dependence(tmp_path):
    info = only_nest(tmp_path, "float a[100]; void f(void) { int i; for (i = 0; i < 99; i++) "
                               "if (i % 2 == 0) a[i] = a[i + 1]; }")
    v = info.loop("i")
    assert v.status == U and [(r.kind, r.exact) for r in v.reasons] == [("anti", False)]
    assert v.reasons[0].message.startswith("may carry") and "i % 2" in v.reasons[0].message


@pytest.mark.parametrize("source,code", [
    ("float a[100]; void f(void) { int i; for (i = 1; i < 100; i++) { if (a[i] < 0) break; a[i] = 0; } }",
     "unsupported-statement"),
    # (a pointer stepped once per iteration and dead after the loop is a counter: frontend/inductions.py)
    ("float *f(int n, float *restrict p) { int i; for (i = 0; i < n; i++) { p[i] = p[i + 1]; p++; } return p; }",
     "pointer-modified"),
    # (a small table's initializer reads as assignments: frontend/initializers.py; one over 64 elements does not)
    ("float a[100]; void f(void) { int i; for (i = 0; i < 100; i++) { float t[65] = {0, 0}; t[0] = a[i]; a[i] = t[0]; } }",
     "local-array"),
    ("float a[100]; void f(void) { int i; float *p = a; for (i = 0; i < 100; i++) a[i] = *(&a[0] + i); }",
     "address-taken"),
])
def test_blocking_flags(tmp_path, source, code):
    v = only_nest(tmp_path, source).loop(0)
    assert v.status == U and code in {r.code for r in v.reasons}


def test_a_write_in_a_condition_is_a_write_of_the_iteration(tmp_path):
    # k is set in every iteration before anything reads it: private while dead after the loop ...
    dead = only_nest(tmp_path, "float b[100]; void f(void) { int i, k = 0; for (i = 0; i < 100; i++) "
                               "if ((k = i) > 5) b[i] = 1; }")
    assert dead.loop("i").status == P and dead.loop("i").private == ("k",)
    # ... and while the function reads its last value afterwards (which the port keeps)
    live = only_nest(tmp_path, "float b[100]; int f(void) { int i, k = 0; for (i = 0; i < 100; i++) "
                               "if ((k = i) > 5) b[i] = 1; return k; }")
    assert live.loop("i").private == ("k",) and any("k is written" in n and "kept after" in n for n in live.notes)
    # but not when the next iteration's condition sees the value: `k` is read before it is written
    seen = only_nest(tmp_path, "float b[100]; int f(void) { int i, k = 0; for (i = 0; i < 100; i++) "
                               "{ if (k > 5) b[i] = 1; k = i; } return k; }")
    assert seen.loop("i").status == C and seen.loop("i").reasons[0].array == "k"
    # and a condition that reads what it wrote in the previous iteration carries a flow dependence
    flow = only_nest(tmp_path, "float b[100]; void f(void) { int i, k = 0; for (i = 0; i < 100; i++) "
                               "if ((k = k + i) > 5) b[i] = 1; }")
    assert flow.loop("i").status == C


def test_non_affine_bound_blocks_the_loop_and_its_parents(tmp_path):
    info = only_nest(tmp_path, "float a[10000]; void f(void) { int i, j, k; for (i = 0; i < 10; i++) "
                               "for (j = 0; j < i * i; j++) for (k = 0; k < 10; k++) a[100 * j + k] = 0; }")
    assert table(info) == [("i", U), ("j", U), ("k", P)]
    assert [r.kind for r in info.loop("j").reasons] == ["bound"]


@pytest.mark.parametrize("qual,status", [("", U), ("restrict", P)])
def test_pointer_may_point_to_a_global_scalar(tmp_path, qual, status):
    info = only_nest(tmp_path, f"float g; void f(int n, float *{qual} p) {{ int i; for (i = 0; i < n; i++) p[i] = g; }}")
    assert table(info) == [("i", status)]


def test_pointer_versus_global_array(tmp_path):
    source = "float g[100]; void f(float *p) { int i; for (i = 0; i < 100; i++) p[i] = g[i]; }"
    assert table(only_nest(tmp_path, source)) == [("i", U)]
    assert table(only_nest(tmp_path, source, assume_no_alias=True)) == [("i", P)]


def test_shadowed_scalar_is_another_variable(tmp_path):
    # `t` inside the block is another variable than the `t` read by d[i] = t (the previous iteration's):
    # the outer t carries a flow dependence, the inner one is private to each iteration
    info = only_nest(tmp_path, "float a[100], b[100], c[100], d[100]; void f(void) { int i; float t = 0; "
                               "for (i = 0; i < 100; i++) { { float t; t = a[i]; b[i] = t; } d[i] = t; t = c[i]; } }")
    assert table(info) == [("i", C)]
    assert {r.array for r in info.loop("i").reasons} == {"t"} and "t#1" not in info.loop("i").outer_writes
    # two block-local variables of one name in sibling blocks are two variables, each private
    sib = only_nest(tmp_path, "float a[100], b[100]; void f(void) { int i; for (i = 0; i < 100; i++) "
                              "{ { float t = a[i]; b[i] = t; } { float t; t = b[i]; a[i] = t * 2; } } }")
    assert table(sib) == [("i", P)]
    (path := tmp_path / "sib.c").write_text("float a[100], b[100]; void f(void) { int i; for (i = 0; i < 100; i++) "
                                            "{ { float t = a[i]; b[i] = t; } { float t; t = b[i]; a[i] = t * 2; } } }")
    nest = load_program(str(path)).nests[0]
    assert sorted((s.name, s.source_name) for s in nest.scalars if s.role == "local") == [("t#1", "t"), ("t#2", "t")]


def test_scalar_declared_in_the_loop_is_private(tmp_path):
    info = only_nest(tmp_path, "float a[100], b[100]; void f(void) { int i; for (i = 0; i < 100; i++) "
                               "{ float t; t = a[i]; b[i] = t; } }")
    assert table(info) == [("i", P)] and info.loop("i").outer_writes == ()


@pytest.mark.parametrize("header,status", [
    ("for (i = 998; i >= 0; i--) a[i] = a[i + 1];", C),
    ("for (i = 998; i >= 0; i -= 2) a[i] = a[i + 1];", P),       # even indices written, odd read
    ("for (i = 3; i < n; i += 4) a[i] = a[i + 2];", P),
    ("for (i = 3; i < n; i += 4) a[i] = a[i + 4];", C),
])
@pytest.mark.parametrize("pipeline", [("normalize", "dependence"), ("dependence",)])
def test_steps_with_and_without_normalization(tmp_path, header, status, pipeline):
    info = only_nest(tmp_path, f"void f(int n, float *restrict a) {{ int i; {header} }}", pipeline=pipeline)
    assert table(info) == [("i", status)]
    if status == C:
        assert [d.distance for d in info.dependences if d.loop is not None] == [(1,)]


def test_pass_is_registered():
    p = next(p for p in available_passes() if p.name == "dependence")
    assert isinstance(p, DependenceAnalysis) and p.provides == ("dependence",) and p.requires == ()


def test_one_restrict_pointer_is_not_enough(tmp_path):
    # C would allow it (6.7.3.1); the pass asks for restrict on both pointers
    source = "void f(int n, float *restrict a, const float *b) { int i; for (i = 0; i < n; i++) a[i] = b[i]; }"
    assert table(only_nest(tmp_path, source)) == [("i", U)]


@pytest.mark.parametrize("body,status", [
    ("if (a[i] > s) s = a[i];", R),
    ("if (b[i] > s) s = fmaxf(s, a[i]);", U),           # a max, but the condition reads the running value
])
def test_max_through_a_condition(tmp_path, body, status):
    info = only_nest(tmp_path, "#include <math.h>\nfloat a[100], b[100]; float f(void) { int i; float s = 0; "
                               f"for (i = 0; i < 100; i++) {body} return s; }}")
    assert table(info) == [("i", status)]


def test_condition_missing_from_the_ir_is_still_read(tmp_path):
    # Other IR producers may not keep `if (t > 0)` as a statement: the pass reads the guard itself.
    from dataclasses import replace
    from c2gpu.passes.dependence import analyze
    path = tmp_path / "t.c"
    path.write_text("float a[100], x[100]; void f(void) { int i; float t = 0; "
                    "for (i = 0; i < 100; i++) { if (t > 0) x[i] = 0; t = a[i]; } }")
    program = load_program(str(path))
    nest = program.nests[0]
    assert [s.text for s in nest.statements()][0] == "if (t > 0)"
    stripped = replace(nest, root=replace(nest.root, body=nest.root.body[1:]))
    assert table(analyze(stripped, program=program)) == [("i", C)]
    assert table(analyze(nest, program=program)) == [("i", C)]


def test_privatization_refused_when_an_outer_statement_reads_the_value(tmp_path):
    info = only_nest(tmp_path, "float a[100], b[100]; void f(int m) { int i, j; float t = 0; "
                               "for (i = 0; i < 100; i++) { for (j = 0; j < m; j++) t = a[j]; b[i] = t; } }")
    assert table(info) == [("i", C), ("j", C)]
    assert any("'b[i] = t' (line 1) reads it outside the loop" in n for n in info.notes)
    inner = only_nest(tmp_path, "float a[100], c[100]; void f(int m) { int i, j; "
                                "for (i = 0; i < 100; i++) { float t; for (j = 0; j < m; j++) { t = a[j]; c[j] = t; } } }")
    assert table(inner) == [("i", C), ("j", P)] and inner.loop("j").private == ("t",)


def test_outer_writes_of_a_parallel_loop(tmp_path):
    # written in one iteration only: no dependence, but the value after the loop comes from that iteration
    info = only_nest(tmp_path, "float a[100]; float f(void) { int i; float s = 0; "
                               "for (i = 0; i < 100; i++) if (i == 99) s = a[i]; return s; }")
    v = info.loop("i")
    assert (v.status, v.outer_writes, v.private) == (P, ("s",), ())


def test_conditional_write_is_not_privatized(tmp_path):
    # the write is conditional (iterations 0..5 read the value t had before the loop): not privatized
    info = only_nest(tmp_path, "float a[100], b[100]; void f(void) { int i; float t = 0; "
                               "for (i = 0; i < 100; i++) { if (i > 5) t = a[i]; b[i] = t; } }")
    assert table(info) == [("i", C)] and info.loop("i").private == ()


def test_the_first_subscript_of_an_array_of_rows_splits_into_row_and_column(tmp_path):
    """FT's fftz2 (a Stockham FFT pass): y[i*lj + k][j] and y[i*lj + lk + k][j] with k < lk and lj = 2*lk set
    just before the loop are (i, k, j) and (i, lk + k, j): one row of lj per i, so i, k and j are parallel."""
    fft = ("void f(int lk, int li, int ny, double x[64][18], double y[64][18]) {{ int i, k, j, lj; {set} "
           "for (i = 0; i < li; i++) for (k = 0; k < lk; k++) for (j = 0; j < ny; j++) {{ "
           "y[i*lj + k][j] = x[i*lk + k][j]; y[i*lj + lk + k][j] = x[i*lk + k][j] * 2; }} }}")
    info = only_nest(tmp_path, fft.format(set="lj = 2 * lk;"), assume_no_alias=True)
    assert table(info) == [("i", P), ("k", P), ("j", P)]
    assert any("y: subscripts compared in their form with the row split out" in n for n in info.notes), info.notes
    # rows of lj = lk + 1 (the second write runs into the next row: y[(i+1)*lj] is y[i*lj + lk + 1] for k = 1),
    # a row width set before something changes lk, or none at all: the flat subscripts are not compared
    for other in ("lj = lk + 1;", "lj = 2 * lk; lk = lk + 1;", "lj = 2 * lk; lk++;", ""):
        info = only_nest(tmp_path, fft.format(set=other), assume_no_alias=True)
        assert info.loop("i").status != P, other
    # rows of lk for columns 0 and 1: only when lk >= 2, which a loop beside the access (m from 2 to lk) does not
    # show where the access runs (lk = 1 runs no m, and rows i and i + 1 then meet)
    beside = ("void f(int lk, int li, double y[64][18], double z[64][64]) { int i, k, m; for (i = 0; i < li; i++) { "
              "for (m = 2; m < lk; m++) z[i][m] = i; for (k = 0; k < 2; k++) y[i*lk + k][0] = i; } }")
    assert only_nest(tmp_path, beside, assume_no_alias=True).loop("i").status != P


def test_a_flat_subscript_not_split_says_which_column_is_not_shown_in_its_row(tmp_path):
    # blur's out->data[y * out->w + x] with x < in->w: rows of out->w only if x < out->w, which nothing shows
    src = ("struct image { int w, h; float *data; }; void f(const struct image *in, struct image *out) { int x, y; "
           "for (y = 0; y < in->h; y++) for (x = 0; x < {bound}; x++) out->data[y * out->w + x] = 1; }")
    info = only_nest(tmp_path, src.replace("{bound}", "in->w"), assume_no_alias=True)
    assert info.loop("y").status == U
    assert "read as rows of width out__w, its column 'x' is not shown to stay in [0, out__w)" in \
        info.loop("y").reasons[0].message, info.loop("y").reasons
    split = only_nest(tmp_path, src.replace("{bound}", "out->w"), assume_no_alias=True)
    assert table(split) == [("y", P), ("x", P)]


def test_2d_forms_with_different_row_widths_are_not_compared(tmp_path):
    # a[i*n + j] and a[i*m + j] can name the same cell for different i: the 2-D forms (i, j) must not be used
    source = ("void f(int n, int m, float *restrict a, float *restrict b) { int i, j; for (i = 0; i < n; i++) {"
              " for (j = 0; j < n; j++) a[i * n + j] = 1; for (j = 0; j < m; j++) b[i] += a[i * m + j]; } }")
    info = only_nest(tmp_path, source)
    assert info.loop("i").status == U and "non-affine" in kinds(info.loop("i").reasons)
    same = only_nest(tmp_path, source.replace("i * m + j", "i * n + j").replace("j < m", "j < n"))
    assert same.loop("i").status == P
