"""IR facts for every testdata program, worked out by hand from the C sources.

Each test reads like the C code it checks: loop variables and bounds, trip
counts, statements in source order, accesses with their subscripts, op counts,
reductions, scalar roles, array infos, flags (with lines) and nest selection.
The expected values come from reading the C file, not from the current
output; where the IR is wrong the test asserts the correct value and is marked
`xfail(strict=True)` with the reason.

Most tests look at the IR as lowered (loops as written); a few look at the
normalized IR (`make_manager(["normalize"])`).  Sizes are overridden with -D
where that makes distinct extents distinguishable (NI != NJ != NK, ...).

The programs over 2-D and 3-D arrays (dense kernels, PolyBench, the validation kernels) are checked in
tests/test_ir_testdata_dense.py, with the helpers defined here.
"""
from __future__ import annotations

import functools
import pickle
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

from c2gpu.drivers.driver import make_manager
from c2gpu.analysis.counting import enclosing_loops, evaluate_instances, instances
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.ir import Access, Nest, Program, Statement
from c2gpu.symbolic import Poly
from conftest import project_programs

ROOT = Path(__file__).resolve().parents[1]
TESTDATA = ROOT / "testdata"


# --------------------------------------------------------------------------- helpers

@functools.lru_cache(maxsize=None)
def load(rel: str, defines: tuple[tuple[str, str], ...] = (), normalize: bool = False) -> Program:
    """Load testdata/<rel> (cached), optionally normalized."""
    opts = PreprocessOptions(defines=defines, include_dirs=(str(TESTDATA / "polybench"),))
    prog = load_program(str(TESTDATA / rel), opts)
    if normalize:
        manager = make_manager(["normalize"])
        prog = manager.run(prog)
        assert manager.errors == {}
    return prog


def D(**sizes) -> tuple[tuple[str, str], ...]:
    """-D NAME=VALUE pairs, in a stable order (hashable for the cache)."""
    return tuple((k, str(v)) for k, v in sorted(sizes.items()))


def nest(prog: Program, key: str) -> Nest:
    """A nest by full name ("matmul@16") or by function name when that function has one nest."""
    if "@" in key:
        return prog.nest(key)
    found = [n for n in prog.nests if n.function == key]
    assert len(found) == 1, f"{key}: {[n.name for n in found]}"
    return found[0]


def kernel(rel: str, key: str, **sizes) -> Nest:
    return nest(load(rel, D(**sizes)), key)


def names(prog: Program) -> list[str]:
    return [n.name for n in prog.nests]


def acc(s: Statement, text: str, kind: str = "read") -> Access:
    found = [a for a in s.accesses if a.text == text and a.kind == kind]
    assert len(found) == 1, f"{kind} {text!r} in {[(a.kind, a.text) for a in s.accesses]}"
    return found[0]


def subs(a: Access) -> list[str | None]:
    return [None if p is None else p.to_c() for p in a.subscripts]


def lin(a: Access) -> list[str] | None:
    return None if a.linearized is None else [p.to_c() for p in a.linearized]


def accesses(s: Statement) -> list[tuple[str, str, list[str | None]]]:
    """(kind, array, subscripts) in the order the IR lists them."""
    return [(a.kind, a.array, subs(a)) for a in s.accesses]


def ops(s: Statement) -> dict[str, int]:
    return dict(s.ops)


def loops(n: Nest) -> list[tuple]:
    """(var, lower, upper, step, trip) for every loop, pre-order."""
    return [(lp.var, lp.lower.to_c(), lp.upper.to_c(), lp.step, lp.trip_count.to_c()) for lp in n.loops()]


def lines(n: Nest) -> list[int]:
    return [s.loc.line for s in n.statements()]


def flags(n: Nest) -> list[tuple[str, int]]:
    return sorted((f.code, f.loc.line) for f in n.all_flags())


def reductions(n: Nest) -> list[tuple[str, str, tuple[str, ...], int]]:
    return [(r.target, r.op, r.loops, r.loc.line) for r in n.reductions()]


def scalars(n: Nest) -> dict[str, tuple[str, str]]:
    return {s.name: (s.ctype, s.role) for s in n.scalars}


def arrays(n: Nest) -> dict[str, tuple]:
    """name -> (elem type, elem size, dims as strings, storage, restrict)."""
    return {a.name: (a.elem_type, a.elem_size, tuple(None if d is None else d.to_c() for d in a.dims),
                     a.storage, a.restrict) for a in n.arrays}


def count(n: Nest, s: Statement, env: dict[str, int] | None = None) -> int:
    """Instances of `s` (guards ignored), evaluated."""
    return evaluate_instances(enclosing_loops(n, s), env or {})


def brute_count(n: Nest, s: Statement, env: dict[str, int]) -> int:
    """Instances of `s` by walking the (already normal) loops with Python."""
    path = enclosing_loops(n, s)

    def rec(i: int, bound: dict[str, int]) -> int:
        if i == len(path):
            return 1
        lp = path[i]
        lo = int(lp.lower.evaluate({**env, **bound}))
        hi = int(lp.upper.evaluate({**env, **bound}))
        return sum(rec(i + 1, {**bound, lp.var: v}) for v in range(lo, hi, lp.step))
    return rec(0, {})


def kernel_nests(prog: Program) -> list[Nest]:
    return [n for n in prog.nests if n.function != "main"]


F32 = ("float", 4)


def assert_all(access_list, elem=F32, affine=True):
    for a in access_list:
        assert (a.elem_type, a.elem_size) == elem, a.text
        assert a.affine is affine, a.text


ALL_FILES = sorted(str(p.relative_to(TESTDATA)) for p in project_programs())


# --------------------------------------------------------------------------- every file

EXPECTED_NESTS = {
    "saxpy.c": ["saxpy@14", "main@27", "main@34"],
    "vecadd.c": ["vecadd@15", "main@29", "main@36"],
    "dot.c": ["dot@15", "main@29"],
    "matmul.c": ["matmul@16", "main@29", "main@37"],
    "matmul_ptr.c": ["matmul@15", "main@35", "main@43"],
    "transpose.c": ["transpose@21", "main@31", "main@38"],
    "convolution.c": ["convolve@28", "main@45", "main@49", "main@54", "main@60"],
    "jacobi2d.c": ["jacobi2d@19", "main@35", "main@43"],
    "gemv.c": ["gemv@21", "main@33", "main@36", "main@41"],
    "histogram.c": ["histogram@20", "histogram@22", "main@31", "main@36"],
    "prefix_sum.c": ["prefix_sum@15", "main@28", "main@33"],
    "syrk.c": ["syrk@21", "main@34", "main@37", "main@43"],
    "nbody.c": ["accelerations@20", "main@51", "main@59"],
    "external_call.c": ["sample_all@20", "main@29", "main@34"],
    # fill() and halvings() have no for loop at all: no nest
    "while_loop.c": ["relax@32", "relax@34", "main@64"],
    "gauss_seidel.c": ["gauss_seidel@20", "main@32", "main@38"],
    "may_alias.c": ["shift_add@17", "main@30", "main@38"],
    "dist2.c": ["recur2@24", "row_recurrence@31", "main@41", "main@45", "main@54", "main@56"],
    "reductions.c": ["max_if@24", "max_fmaxf@34", "min_if@43", "product@53", "count_above@62",
                     "gesummv_like@71", "main@87", "main@89", "main@103"],
    "decrementing.c": ["shapes_1d@19", "shapes_1d@21", "shapes_1d@23", "shapes_1d@25",
                       "upper_triangle@32", "guarded@40", "main@60", "main@62"],
    "selected.c": ["scale_rows@21"],
    "polybench/gemm.c": ["kernel_gemm@92"],
    "polybench/atax.c": ["kernel_atax@79", "kernel_atax@81"],
    "validation/2mm.c": ["mm2@31", "mm2@38", "main@58", "main@61", "main@64", "main@67", "main@73", "main@75"],
    "validation/adi.c": ["adi@24", "main@60", "main@69"],
    "validation/atax.c": ["atax@23", "atax@28", "main@46", "main@49", "main@54"],
    "validation/convolution-3d.c": ["conv3d@29", "main@51", "main@60"],
    "validation/doitgen.c": ["doitgen@26", "main@50", "main@54", "main@60"],
    "validation/mvt.c": ["mvt@21", "mvt@24", "main@41", "main@52"],
    "validation/convolution-2d.c": ["convolution2d@24", "main@43", "main@50"],
    "validation/fdtd-2d.c": ["fdtd2d@26", "main@55", "main@57", "main@66"],
    "validation/gemm.c": ["gemm@24", "main@42", "main@45", "main@48", "main@54"],
    "validation/gesummv.c": ["gesummv@19", "main@40", "main@52"],
    "validation/jacobi-2d-imper.c": ["jacobi2d@20", "main@41", "main@49"],
    "validation/syrk.c": ["syrk@20", "main@37", "main@40", "main@46"],
}


def test_every_testdata_file_is_covered():
    assert sorted(EXPECTED_NESTS) == ALL_FILES


@pytest.mark.parametrize("rel", ALL_FILES)
def test_nest_names_and_locations(rel):
    prog = load(rel)
    assert names(prog) == EXPECTED_NESTS[rel]
    for n in prog.nests:
        function, line = n.name.split("@")
        assert n.function == function
        assert n.loc.line == int(line) == n.root.loc.line
        assert Path(n.loc.file).name == Path(rel).name
        # lids are the pre-order positions
        assert [lp.lid for lp in n.loops()] == list(range(len(n.loops())))
        # statements are numbered in source order, each knows its loops
        assert [s.sid for s in n.statements()] == list(range(1, len(n.statements()) + 1))
        for s in n.statements():
            path = enclosing_loops(n, s)
            assert s.loops == tuple(lp.var for lp in path)
            assert s.loop_ids == tuple(lp.lid for lp in path)


def test_nests_are_data_the_frontend_describes_rewrites_in_their_place():
    """A nest holds no callback into the frontend (issue "Plans as data"): it pickles and comes back equal.  The
    transforms ask the program's frontend to describe a rewrite of a nest's for-statement in its place."""
    for rel in ALL_FILES:
        prog = load(rel)
        for n in prog.nests:
            assert pickle.loads(pickle.dumps(n)) == n, (rel, n.name)
            assert prog.frontend.describes(n)
    prog = load("jacobi2d.c")
    nest = prog.nests[0]
    again = prog.frontend.describe_again(nest, nest.root.syntax)
    assert again.loc == nest.loc and names(replace(prog, nests=(again,))) == [nest.name]
    assert [lp.var for lp in again.loops()] == [lp.var for lp in nest.loops()]
    assert not prog.frontend.describes(replace(nest, loc=replace(nest.loc, line=nest.loc.line + 1000)))


def test_a_tree_written_node_by_node_describes_the_same_nest():
    """The transforms hand the frontend trees they wrote (issue "Plans as data": no C text, no parser node): a nest's
    tree rebuilt node by node (no node of it one the frontend converted) is described as the very same nest.  A
    declaration of the source rebuilt without saying its type (`spec`, `like`) is refused, not guessed."""
    from c2gpu.syntax_tree import Decl, rebuilt
    same = refused = 0
    for rel in ALL_FILES:
        prog = load(rel)
        for nest in prog.nests:
            fresh = rebuilt(nest.root.syntax, lambda n: replace(n))
            try:
                again = prog.frontend.describe_again(nest, fresh)
            except ValueError as e:
                assert "no parser node for Decl" in str(e), (rel, nest.name, e)
                refused += 1
                continue
            assert again == nest, (rel, nest.name)
            same += 1
    assert same >= 70 and refused <= 4, (same, refused)
    # a declaration c2gpu writes says its type as words, or takes another's, assignable (declared apart from a value)
    prog = load("jacobi2d.c")
    decl = Decl("c2gpu_t", "const long c2gpu_t", None, spec=("const", "long"))
    node = prog.frontend.sources.parser_node(decl)
    assert (node.name, node.quals, node.type.type.names) == ("c2gpu_t", ["const"], ["long"])
    copy = prog.frontend.sources.parser_node(Decl("c2gpu_u", "", None, like=decl))
    assert (copy.name, copy.type.declname, copy.quals, copy.type.quals, copy.type.type.names) == \
        ("c2gpu_u", "c2gpu_u", [], [], ["long"])


@pytest.mark.parametrize("rel", ALL_FILES)
def test_region_and_diagnostics_outside_pragmas(rel):
    prog = load(rel)
    if rel.startswith("polybench/"):
        assert {n.region for n in prog.nests} == {"scop"}
    elif rel == "selected.c":
        assert {n.region for n in prog.nests} == {"pragma"}
    else:
        assert {n.region for n in prog.nests} == {"auto"}
        assert prog.diagnostics == ()


@pytest.mark.parametrize("rel", ALL_FILES)
def test_clean_kernels_have_no_flags(rel):
    """Only histogram, external_call and while_loop have something c2gpu cannot describe."""
    flagged = {"histogram.c": {"histogram@22"}, "external_call.c": {"sample_all@20"},
               "while_loop.c": {"relax@32", "relax@34"}}.get(rel, set())
    for n in load(rel).nests:
        if n.name not in flagged:
            assert n.all_flags() == [], n.name


@pytest.mark.parametrize("rel", ALL_FILES)
def test_loops_in_testdata_are_affine_with_known_trip_counts(rel):
    for n in load(rel).nests:
        for lp in n.loops():
            assert lp.affine and lp.trip_count is not None, (n.name, lp.header)


@pytest.mark.parametrize("rel", ["dot.c", "transpose.c", "gauss_seidel.c", "nbody.c"])
def test_no_negative_op_counts(rel):
    for n in load(rel).nests:
        for s in n.statements():
            assert all(v > 0 for _, v in s.ops), (n.name, s.text, s.ops)


# --------------------------------------------------------------------------- 1-D kernels

def test_saxpy():
    n = kernel("saxpy.c", "saxpy")
    assert n.params == ("n",)
    assert loops(n) == [("i", "0", "n", 1, "n")]
    (s,) = n.statements()
    assert (s.loc.line, s.text, s.loops, s.guards) == (15, "y[i] = (a * x[i]) + y[i]", ("i",), ())
    assert accesses(s) == [("read", "x", ["i"]), ("read", "y", ["i"]), ("write", "y", ["i"])]
    assert_all(s.accesses)
    assert ops(s) == {"fp32_fma": 1}
    assert s.scalar_reads == ("a",) and s.scalar_writes == ()
    assert scalars(n) == {"a": ("float", "invariant"), "n": ("int", "invariant")}
    assert arrays(n) == {"x": ("float", 4, (None,), "param-pointer", True),
                         "y": ("float", 4, (None,), "param-pointer", True)}
    assert n.array("x").const and not n.array("y").const
    # y[i] = a*x[i] + y[i] updates y[i] in the iteration that indexes it: no reduction
    assert reductions(n) == []


def test_vecadd():
    n = kernel("vecadd.c", "vecadd")
    assert n.params == ("n",)
    assert loops(n) == [("i", "0", "n", 1, "n")]
    (s,) = n.statements()
    assert (s.loc.line, s.text) == (16, "c[i] = a[i] + b[i]")
    assert accesses(s) == [("read", "a", ["i"]), ("read", "b", ["i"]), ("write", "c", ["i"])]
    assert_all(s.accesses)
    assert ops(s) == {"fp32_add": 1}
    # plain pointers: no restrict, so c may alias a or b
    assert arrays(n) == {name: ("float", 4, (None,), "param-pointer", False) for name in "abc"}
    assert [n.array(x).const for x in "abc"] == [True, True, False]
    assert scalars(n) == {"n": ("int", "invariant")} and reductions(n) == []


def test_dot_reduction():
    n = kernel("dot.c", "dot")
    assert loops(n) == [("i", "0", "n", 1, "n")]
    (s,) = n.statements()
    assert (s.loc.line, s.text) == (16, "sum += a[i] * b[i]")
    assert accesses(s) == [("read", "a", ["i"]), ("read", "b", ["i"])]
    assert s.scalar_reads == ("sum",) and s.scalar_writes == ("sum",)
    assert reductions(n) == [("sum", "+", ("i",), 16)]
    assert scalars(n) == {"n": ("int", "invariant"), "sum": ("double", "reduction")}
    assert arrays(n) == {"a": ("float", 4, (None,), "param-pointer", False),
                         "b": ("float", 4, (None,), "param-pointer", False)}


def test_dot_ops_float_product_then_double_add():
    s = kernel("dot.c", "dot").statements()[0]
    # a[i]*b[i] is a float multiply (rounded to float), then promoted and added in double:
    # it cannot be one fused operation, and no count can be negative.
    assert ops(s) == {"fp32_mul": 1, "fp64_add": 1}


def test_prefix_sum():
    n = kernel("prefix_sum.c", "prefix_sum")
    assert n.params == ("n",)
    # out[0] = in[0] (line 14) is outside the loop
    assert loops(n) == [("i", "1", "n", 1, "n - 1")]
    assert n.root.trip_count.evaluate({"n": 10}) == 9
    (s,) = n.statements()
    assert (s.loc.line, s.text) == (16, "out[i] = out[i - 1] + in[i]")
    assert accesses(s) == [("read", "out", ["i - 1"]), ("read", "in", ["i"]), ("write", "out", ["i"])]
    assert ops(s) == {"fp32_add": 1}
    assert reductions(n) == []  # out[i] is indexed by i: a recurrence, not a reduction
    assert n.array("in").const and not n.array("out").const


def test_prefix_sum_normalized():
    n = nest(load("prefix_sum.c", normalize=True), "prefix_sum")
    lp = n.root
    assert (lp.var, lp.lower.to_c(), lp.upper.to_c(), lp.step, lp.trip_count.to_c()) == ("i_n", "0", "n - 1", 1, "n - 1")
    assert (lp.origin.var, lp.origin.lower.to_c(), lp.origin.step) == ("i", "1", 1)
    assert accesses(n.statements()[0]) == [("read", "out", ["i_n"]), ("read", "in", ["i_n + 1"]),
                                           ("write", "out", ["i_n + 1"])]


def test_may_alias():
    n = kernel("may_alias.c", "shift_add")
    assert loops(n) == [("i", "0", "n", 1, "n")]
    (s,) = n.statements()
    assert (s.loc.line, s.text) == (18, "dst[i] = src[i] + 1.0f")
    assert accesses(s) == [("read", "src", ["i"]), ("write", "dst", ["i"])]
    assert ops(s) == {"fp32_add": 1}
    assert arrays(n) == {"dst": ("float", 4, (None,), "param-pointer", False),
                         "src": ("float", 4, (None,), "param-pointer", False)}
    assert n.array("src").const and not n.array("dst").const


def test_histogram():
    prog = load("histogram.c", D(N=100, BINS=16))
    init, count_loop = nest(prog, "histogram@20"), nest(prog, "histogram@22")
    assert loops(init) == [("i", "0", "16", 1, "16")]
    assert accesses(init.statements()[0]) == [("write", "hist", ["i"])]
    assert init.all_flags() == []

    assert loops(count_loop) == [("i", "0", "100", 1, "100")]
    (s,) = count_loop.statements()
    assert (s.loc.line, s.text) == (23, "hist[data[i]]++")
    data = acc(s, "data[i]")
    assert (subs(data), data.affine, data.elem_type, data.elem_size) == (["i"], True, "unsigned char", 1)
    for kind in ("read", "write"):
        h = acc(s, "hist[data[i]]", kind)
        assert h.subscripts == (None,) and h.affine is False and h.linearized is None
        assert "data[i]" in h.reason
        assert (h.elem_type, h.elem_size) == ("int", 4)
    assert ops(s) == {"int": 1}
    assert [(f.code, f.loc.line, f.loc.col) for f in count_loop.all_flags()] == [("non-affine-subscript", 23, 9)]
    assert arrays(count_loop) == {"data": ("unsigned char", 1, ("100",), "global", False),
                                  "hist": ("int", 4, ("16",), "global", False)}


def test_external_call():
    n = kernel("external_call.c", "sample_all")
    assert loops(n) == [("i", "0", "n", 1, "n")]
    (s,) = n.statements()
    assert (s.loc.line, s.text) == (21, "out[i] = sensor_read(i) * scale[i]")
    assert accesses(s) == [("read", "scale", ["i"]), ("write", "out", ["i"])]
    assert_all(s.accesses, elem=("double", 8))
    assert s.calls == ("sensor_read",)
    # sensor_read is declared extern double: a double multiply plus the opaque call
    assert ops(s) == {"fp64_mul": 1, "unknown_call": 1}
    assert [(f.code, f.loc.line, f.loc.col) for f in n.all_flags()] == [("unknown-call", 21, 18)]
    assert "sensor_read" in n.all_flags()[0].message
    assert arrays(n) == {"out": ("double", 8, ("100000",), "global", False),
                         "scale": ("double", 8, ("100000",), "global", False)}


def test_dist2_recurrences():
    prog = load("dist2.c", D(N=10, ROWS=4, M=6))
    r = nest(prog, "recur2")
    assert loops(r) == [("i", "2", "10", 1, "8")]
    (s,) = r.statements()
    assert (s.loc.line, s.text) == (25, "a[i] = a[i - 2] + b[i]")
    assert accesses(s) == [("read", "a", ["i - 2"]), ("read", "b", ["i"]), ("write", "a", ["i"])]
    assert ops(s) == {"fp32_add": 1} and reductions(r) == []

    rr = nest(prog, "row_recurrence")
    assert loops(rr) == [("i", "0", "4", 1, "4"), ("j", "1", "6", 1, "5")]
    (s,) = rr.statements()
    assert (s.loc.line, s.text) == (33, "A[i][j] = (A[i][j - 1] * 0.5f) + B[i][j]")
    assert accesses(s) == [("read", "A", ["i", "j - 1"]), ("read", "B", ["i", "j"]), ("write", "A", ["i", "j"])]
    assert ops(s) == {"fp32_fma": 1} and reductions(rr) == []
    assert arrays(rr) == {"A": ("float", 4, ("4", "6"), "global", False), "B": ("float", 4, ("4", "6"), "global", False)}
    assert count(rr, s) == 4 * 5


# --------------------------------------------------------------------------- reductions.c

def test_max_if():
    n = kernel("reductions.c", "max_if")
    assert loops(n) == [("i", "1", "n", 1, "n - 1")]
    cond, upd = n.statements()
    # the condition reads v[i]: it is kept as a statement of its own, before the guarded one
    assert (cond.loc.line, cond.text, cond.guards) == (25, "if (v[i] > m)", ())
    assert accesses(cond) == [("read", "v", ["i"])] and ops(cond) == {"compare": 1}
    assert cond.scalar_reads == ("m",)
    assert (upd.loc.line, upd.text) == (26, "m = v[i]")
    (g,) = upd.guards
    assert (g.text, g.constraints, g.negated, g.loc.line) == ("v[i] > m", None, False, 25)
    assert accesses(upd) == [("read", "v", ["i"])] and ops(upd) == {}
    assert reductions(n) == [("m", "max", ("i",), 26)]
    assert scalars(n) == {"m": ("float", "reduction"), "n": ("int", "invariant")}


def test_max_fmaxf():
    n = kernel("reductions.c", "max_fmaxf")
    (s,) = n.statements()
    assert (s.loc.line, s.text, s.calls) == (35, "m = fmaxf(m, v[i])", ("fmaxf",))
    assert ops(s) == {"compare": 1, "select": 1}
    assert reductions(n) == [("m", "max", ("i",), 35)]
    assert scalars(n) == {"m": ("float", "reduction"), "n": ("int", "invariant")}


def test_min_if():
    n = kernel("reductions.c", "min_if")
    assert loops(n) == [("i", "1", "n", 1, "n - 1")]
    cond, upd = n.statements()
    assert cond.text == "if (v[i] < m)" and ops(cond) == {"compare": 1}
    assert [g.text for g in upd.guards] == ["v[i] < m"]
    assert reductions(n) == [("m", "min", ("i",), 45)]
    assert scalars(n) == {"m": ("float", "reduction"), "n": ("int", "invariant")}


def test_product():
    n = kernel("reductions.c", "product")
    (s,) = n.statements()
    assert (s.loc.line, s.text) == (54, "p *= v[i]")
    assert ops(s) == {"fp32_mul": 1}
    assert reductions(n) == [("p", "*", ("i",), 54)]
    assert scalars(n) == {"n": ("int", "invariant"), "p": ("float", "reduction")}


def test_count_above_statements():
    n = kernel("reductions.c", "count_above")
    cond, inc = n.statements()
    assert (cond.loc.line, cond.text) == (63, "if (v[i] > threshold)")
    assert accesses(cond) == [("read", "v", ["i"])] and ops(cond) == {"compare": 1}
    assert (inc.loc.line, inc.text) == (64, "count++")
    assert [(g.text, g.constraints) for g in inc.guards] == [("v[i] > threshold", None)]
    assert ops(inc) == {"int": 1}
    assert inc.scalar_reads == ("count",) and inc.scalar_writes == ("count",)
    assert scalars(n)["threshold"] == ("float", "invariant")


def test_count_above_is_a_sum_reduction():
    n = kernel("reductions.c", "count_above")
    assert reductions(n) == [("count", "+", ("i",), 64)]
    assert scalars(n)["count"] == ("int", "reduction")


def test_gesummv_like():
    n = kernel("reductions.c", "gesummv_like", ROWS=8)
    assert loops(n) == [("i", "0", "8", 1, "8"), ("j", "0", "8", 1, "8")]
    assert lines(n) == [72, 73, 75, 76, 78]
    s1, s2, s3, s4, s5 = n.statements()
    assert accesses(s1) == [("write", "tmp", ["i"])] and accesses(s2) == [("write", "y", ["i"])]
    assert accesses(s3) == [("read", "A", ["i", "j"]), ("read", "x", ["j"]),
                            ("read", "tmp", ["i"]), ("write", "tmp", ["i"])]
    assert accesses(s4) == [("read", "B", ["i", "j"]), ("read", "x", ["j"]),
                            ("read", "y", ["i"]), ("write", "y", ["i"])]
    assert accesses(s5) == [("read", "tmp", ["i"]), ("read", "y", ["i"]), ("write", "y", ["i"])]
    assert [ops(s) for s in (s1, s2, s3, s4, s5)] == [{}, {}, {"fp32_fma": 1}, {"fp32_fma": 1},
                                                      {"fp32_fma": 1, "fp32_mul": 1}]
    assert [s.loops for s in (s1, s3, s5)] == [("i",), ("i", "j"), ("i",)]
    # two array-element reductions in one j loop; the final y[i] = alpha*tmp[i] + beta*y[i] is not one
    assert reductions(n) == [("tmp[i]", "+", ("j",), 75), ("y[i]", "+", ("j",), 76)]
    assert [subs(r.array_access) for r in n.reductions()] == [["i"], ["i"]]
    assert scalars(n) == {"alpha": ("float", "invariant"), "beta": ("float", "invariant")}


# --------------------------------------------------------------------------- while_loop.c

def test_while_loop_inner_for_loops_are_nests_inside_while():
    prog = load("while_loop.c")
    stencil, update = nest(prog, "relax@32"), nest(prog, "relax@34")
    for n in (stencil, update):
        assert n.params == ("n",)
        assert loops(n) == [("i", "1", "n - 1", 1, "n - 2")]
        assert [(f.code, f.loc.line, f.loc.col) for f in n.all_flags()] == [("inside-while", n.loc.line, 9)]
    (s,) = stencil.statements()
    assert (s.loc.line, s.text) == (33, "b[i] = 0.5 * (a[i - 1] + a[i + 1])")
    assert accesses(s) == [("read", "a", ["i - 1"]), ("read", "a", ["i + 1"]), ("write", "b", ["i"])]
    assert_all(s.accesses, elem=("double", 8))
    assert ops(s) == {"fp64_add": 1, "fp64_mul": 1}

    d, cond, upd, copy = update.statements()
    assert (d.loc.line, d.decl, d.calls) == (35, "d", ("fabs",))
    # the data-dependent condition is work of the iteration: its own statement, reading d and err
    assert (cond.loc.line, cond.text, cond.scalar_reads, ops(cond)) == (36, "if (d > err)", ("d", "err"), {"compare": 1})
    assert accesses(d) == [("read", "b", ["i"]), ("read", "a", ["i"])]
    assert ops(d) == {"fp64_add": 2}   # the subtraction, and fabs (a cheap op counted as an add)
    assert (upd.loc.line, upd.text) == (37, "err = d")
    (g,) = upd.guards
    assert (g.text, g.constraints, g.loc.line) == ("d > err", None, 36)  # double compare: not affine
    assert (copy.loc.line, accesses(copy)) == (38, [("read", "b", ["i"]), ("write", "a", ["i"])])
    assert reductions(update) == [("err", "max", ("i",), 37)]
    assert scalars(update) == {"d": ("double", "local"), "err": ("double", "reduction"), "n": ("int", "invariant")}
    assert scalars(stencil) == {"n": ("int", "invariant")}


def test_while_loop_guard_compare_is_counted():
    n = nest(load("while_loop.c"), "relax@34")
    assert sum(s.op_count("compare") for s in n.statements()) == 1


def test_while_loop_guard_reads_err():
    n = nest(load("while_loop.c"), "relax@34")
    assert any("err" in s.scalar_reads for s in n.statements())


# --------------------------------------------------------------------------- decrementing.c (as lowered)

def test_decrementing_loops_as_written():
    prog = load("decrementing.c", D(N=10))
    n19, n21, n23, n25 = (nest(prog, f"shapes_1d@{line}") for line in (19, 21, 23, 25))
    # for (i = N - 1; i >= 0; i--): start 9, exclusive end -1 below it
    assert loops(n19) == [("i", "9", "-1", -1, "10")]
    assert accesses(n19.statements()[0]) == [("write", "a", ["i"])]
    assert ops(n19.statements()[0]) == {"convert": 1, "fp32_fma": 1}
    # for (i = 0; i <= N - 1; i++): exclusive upper N
    assert loops(n21) == [("i", "0", "10", 1, "10")]
    assert ops(n21.statements()[0]) == {"fp32_mul": 1}
    # for (i = 3; i < N; i += 4): 3, 7 -> 2 iterations
    lp = n23.root
    assert (lp.lower.to_c(), lp.upper.to_c(), lp.step, lp.trip_count.evaluate({})) == ("3", "10", 4, 2)
    assert accesses(n23.statements()[0]) == [("read", "b", ["i"]), ("read", "a", ["i"]), ("write", "c", ["i"])]
    # for (i = N - 1; i > 0; i -= 2): 9, 7, 5, 3, 1 -> 5 iterations
    lp = n25.root
    assert (lp.lower.to_c(), lp.upper.to_c(), lp.step, lp.trip_count.evaluate({})) == ("9", "0", -2, 5)
    assert ops(n25.statements()[0]) == {"fp32_add": 1}


def test_decrementing_upper_triangle():
    n = kernel("decrementing.c", "upper_triangle")
    assert loops(n) == [("i", "0", "1000", 1, "1000"), ("j", "i + 1", "1000", 1, "-i + 999")]
    (s,) = n.statements()
    assert accesses(s) == [("read", "a", ["i"]), ("read", "b", ["j"]), ("write", "U", ["i", "j"])]
    assert ops(s) == {"fp32_mul": 1}
    assert count(n, s) == 1000 * 999 // 2


def test_decrementing_guards():
    n = kernel("decrementing.c", "guarded")
    assert loops(n) == [("i", "0", "1000", 1, "1000"), ("j", "0", "1000", 1, "1000")]
    even, above, below = n.statements()
    assert (even.loc.line, even.loops) == (42, ("i",))
    (g,) = even.guards
    # i % 2 == 0 is not a conjunction of affine comparisons: text only
    assert (g.text, g.constraints, g.negated, g.loc.line) == ("(i % 2) == 0", None, False, 41)
    assert accesses(even) == [("read", "a", ["i"]), ("write", "e", ["i"])]
    (g,) = above.guards
    assert (above.loc.line, g.text, g.negated, g.loc.line) == (45, "j > i", False, 44)
    assert [str(c) for c in g.constraints] == ["-i + j - 1 >= 0"]           # j - i - 1 >= 0
    assert accesses(above) == [("write", "G", ["i", "j"])]
    assert ops(above) == {"int": 1, "convert": 1}                          # (float)(i - j)
    (g,) = below.guards
    assert (below.loc.line, g.text, g.negated, g.loc.line) == (47, "!(j > i)", True, 44)
    assert [str(c) for c in g.constraints] == ["i - j >= 0"]                # j <= i
    assert accesses(below) == [("read", "b", ["j"]), ("write", "G", ["i", "j"])]
    # the guards split the j range exactly: check on every point of a small square
    for i in range(6):
        for j in range(6):
            holds = [all(c.expr.evaluate({"i": i, "j": j}) >= 0 for c in s.guards[0].constraints)
                     for s in (above, below)]
            assert holds == [j > i, j <= i]


# --------------------------------------------------------------------------- selected.c (pragmas)

def test_selected_only_port_marked_nest():
    prog = load("selected.c")
    assert names(prog) == ["scale_rows@21"]
    n = prog.nests[0]
    assert n.region == "pragma"
    assert loops(n) == [("i", "0", "512", 1, "512"), ("j", "0", "512", 1, "512")]
    (s,) = n.statements()
    assert (s.loc.line, s.text) == (23, "B[i][j] = A[i][j] * ((float) (i + 1))")
    assert accesses(s) == [("read", "A", ["i", "j"]), ("write", "B", ["i", "j"])]
    assert ops(s) == {"int": 1, "convert": 1, "fp32_mul": 1}
    diags = [(d.code, d.loc.line) for d in prog.diagnostics]
    # add_bias is skipped explicitly; square and main's loops are not marked port
    assert diags == [("skipped", 30), ("skipped", 38), ("skipped", 48), ("skipped", 56)]
    assert "c2gpu skip" in prog.diagnostics[0].message
    assert all("not marked" in d.message for d in prog.diagnostics[1:])


# --------------------------------------------------------------------------- flags not produced by testdata

def _snippet(tmp_path, source: str) -> Program:
    path = tmp_path / "snippet.c"
    path.write_text(source)
    return load_program(str(path))


def test_flags_with_lines_on_snippets(tmp_path):
    prog = _snippet(tmp_path, """\
int g(int k);
void f(int n, float *a, int *idx)
{
    int i, j;
    for (i = 0; i < n; i++) {
        j = 0;
        while (j < i) {
            a[j] += 1.0f;
            j++;
        }
    }
    for (i = 0; i < n * n; i++)
        a[i] = 0.0f;
    for (i = 0; i < idx[0]; i++)
        a[i] = 1.0f;
    for (i = 1; i < n; i *= 2)
        a[i] = 2.0f;
    for (i = 0; i < n; i++) {
        if (a[i] < 0.0f)
            break;
        a[i] = g(i);
    }
}
""")
    w, sq, ind, mul, brk = prog.nests
    assert [n.name for n in prog.nests] == ["f@5", "f@12", "f@14", "f@16", "f@18"]
    assert flags(w) == [("non-affine-subscript", 8), ("runs-in-thread", 7)]
    # the while loop runs whole in each iteration of i: one statement with what it may touch
    assert [s.text for s in w.statements()] == ["j = 0", "while loop at line 7"]
    assert [(a.kind, a.affine) for a in w.statements()[1].accesses] == [("read", False), ("write", False)]
    assert scalars(w) == {"j": ("int", "written"), "n": ("int", "invariant")}
    # n*n is a polynomial bound: trip known, loop not affine
    assert flags(sq) == [("non-affine-bound", 12)]
    assert sq.root.trip_count.to_c() == "n*n" and not sq.root.affine
    # idx[0], never written by the nest, is a parameter read at its entry, as n is (the element stands for itself)
    assert flags(ind) == [] and ind.root.trip_count.to_c() == "idx__0" and ind.stands_for == (("idx__0", "idx[0]"),)
    assert flags(mul) == [("non-affine-bound", 16)] and mul.root.trip_count is None
    assert "i *= 2" in mul.all_flags()[0].message
    assert flags(brk) == [("unknown-call", 21), ("unsupported-statement", 20)]
    assert ops(brk.statements()[1]) == {"convert": 1, "unknown_call": 1}   # int g() stored to float


def test_unknown_pragma_is_a_diagnostic(tmp_path):
    prog = _snippet(tmp_path, """\
void f(int n, float *a)
{
    int i;
#pragma c2gpu frobnicate
    for (i = 0; i < n; i++)
        a[i] = 0.0f;
}
""")
    assert [n.name for n in prog.nests] == ["f@5"]
    assert [(d.code, d.loc.line) for d in prog.diagnostics] == [("unknown-pragma", 4)]


def test_symbolic_triangular_instances(tmp_path):
    prog = _snippet(tmp_path, """\
void syrk(int n, int m, float C[n][n], float A[n][m])
{
    int i, j, k;
    for (i = 0; i < n; i++)
        for (j = 0; j <= i; j++)
            for (k = 0; k < m; k++)
                C[i][j] += A[i][k] * A[j][k];
}
""")
    (n,) = prog.nests
    assert n.params == ("m", "n")
    (s,) = n.statements()
    inst = instances(enclosing_loops(n, s))
    assert inst == (Poly.var("n") * (Poly.var("n") + 1) * Poly.var("m")).scale(Fraction(1, 2))
    for nv, mv in [(0, 3), (1, 1), (5, 2), (9, 4)]:
        assert inst.evaluate({"n": nv, "m": mv}) == nv * (nv + 1) // 2 * mv == brute_count(n, s, {"n": nv, "m": mv})
    assert arrays(n) == {"A": ("float", 4, ("n", "m"), "param-array", False),
                         "C": ("float", 4, ("n", "n"), "param-array", False)}
