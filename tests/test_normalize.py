"""The normalization pass: every affine loop becomes `for (v_n = 0; v_n < trip; v_n++)`.

The tests that can really fail are the brute-force ones: for several parameter
values we run each C loop nest with a Python loop that does what the C `for`
does, and we run the normalized nest through its trip counts and
`Loop.origin` (original variable = origin.lower + origin.step * new variable);
the sequences of (statement, original induction-variable values) must be
IDENTICAL, and so must the subscript values and the guard outcomes.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

from c2gpu.drivers.driver import make_manager
from c2gpu.analysis.counting import enclosing_loops, evaluate_instances, instances
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.ir import Loop, Nest, Program
from conftest import project_programs

ROOT = Path(__file__).resolve().parents[1]
TESTDATA = ROOT / "testdata"


# --------------------------------------------------------------------------- helpers

def normalize(prog: Program) -> Program:
    manager = make_manager(["normalize"])
    out = manager.run(prog)
    assert manager.errors == {}
    return out


@functools.lru_cache(maxsize=None)
def load_testdata(rel: str, defines: tuple[tuple[str, str], ...] = ()) -> tuple[Program, Program]:
    """(as lowered, normalized) for a testdata file."""
    raw = load_program(str(TESTDATA / rel),
                       PreprocessOptions(defines=defines, include_dirs=(str(TESTDATA / "polybench"),)))
    return raw, normalize(raw)


def snippet(tmp_path: Path, source: str) -> tuple[Program, Program]:
    path = tmp_path / "snippet.c"
    path.write_text(source)
    raw = load_program(str(path))
    return raw, normalize(raw)


def by_function(prog: Program, function: str) -> Nest:
    (n,) = [n for n in prog.nests if n.function == function]
    return n


def c_for(start: int, cond, step: int):
    """What `for (v = start; cond(v); v += step)` runs through."""
    v = start
    while cond(v):
        yield v
        v += step


def normalized_trace(nest: Nest, params: dict[str, int]):
    """Execute the normalized nest, in execution order.

    Returns ([(sid, ((orig var, value), ...), subscript values, guard outcomes), ...],
    whether some loop had a negative trip count).  Only the normalized loops are
    used: 0 <= v_n < trip_count (clamped at 0), and the original value is
    origin.lower + origin.step * v_n (or v_n itself for a loop that was already
    normal); subscripts and guards are evaluated in the normalized variables.
    """
    out = []
    negative_trip = []

    def walk(lp: Loop, env: dict[str, int], orig: tuple):
        assert lp.normalized and lp.lower.to_c() == "0" and lp.step == 1
        trip = lp.trip_count.evaluate({**params, **env})
        if trip < 0:
            negative_trip.append(lp.var)
        trip = max(0, trip)
        if lp.upper is not None:
            assert max(0, int(lp.upper.evaluate({**params, **env}))) == trip
        for g in lp.guards:
            assert g.constraints is not None, g.text
            if not guard_holds(g, {**params, **env}):
                return
        for v in range(trip):
            inner = {**env, lp.var: v}
            if lp.origin is None:
                value = v
                name = lp.var
            else:
                value = lp.origin.lower.evaluate({**params, **env}) + lp.origin.step * v
                name = lp.origin.var
            here = orig + ((name, int(value)),)
            for node in lp.body:
                if isinstance(node, Loop):
                    walk(node, inner, here)
                else:
                    e = {**params, **inner}
                    out.append((node.sid, here,
                                tuple(None if p is None else int(p.evaluate(e)) for a in node.accesses for p in a.subscripts),
                                tuple(guard_holds(g, e) for g in node.guards)))
    walk(nest.root, {}, ())
    return out, bool(negative_trip)


def guard_holds(g, env) -> bool | None:
    if g.constraints is None:
        return None
    return all((c.expr.evaluate(env) >= 0) if c.kind == "ge" else (c.expr.evaluate(env) == 0) for c in g.constraints)


def iterations(trace):
    return [(sid, orig) for sid, orig, _, _ in trace]


def raw_subscripts_and_guards(raw: Nest, params: dict[str, int], trace):
    """The same instances evaluated on the IR as lowered (original variables)."""
    stmts = {s.sid: s for s in raw.statements()}
    out = []
    for sid, orig, _, _ in trace:
        e = {**params, **dict(orig)}
        s = stmts[sid]
        out.append((tuple(None if p is None else int(p.evaluate(e)) for a in s.accesses for p in a.subscripts),
                    tuple(guard_holds(g, e) for g in s.guards)))
    return out


def check_against_c(raw: Nest, norm: Nest, params: dict[str, int], expected):
    """expected: [(sid, ((var, value), ...)), ...] from a Python emulation of the C loops."""
    trace, negative_trip = normalized_trace(norm, params)
    assert iterations(trace) == expected, params
    # subscripts and guards rewritten in the new variables take the same values
    assert [(subs, guards) for _, _, subs, guards in trace] == raw_subscripts_and_guards(raw, params, trace)
    # the instance counts of the normalized nest agree with the emulation (guards not counted);
    # skipped when some loop is empty with a negative trip count (see test_instance_counts_clamp_empty_loops)
    for s in ([] if negative_trip else norm.statements()):
        expect = sum(1 for sid, _ in expected if sid == s.sid)
        if not any(lp.guards for lp in enclosing_loops(norm, s)):
            assert evaluate_instances(enclosing_loops(norm, s), params) == expect, (s.text, params)
    return trace


def loop_summary(lp: Loop):
    o = lp.origin
    return (lp.var, lp.trip_count.to_c(),
            None if o is None else (o.var, o.lower.to_c(), o.upper.to_c(), o.step))


# --------------------------------------------------------------------------- decrementing.c

SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 10, 13]


def test_decrementing_normalized_default_size():
    _, norm = load_testdata("decrementing.c")
    n19, n21, n23, n25 = (norm.nest(f"shapes_1d@{line}") for line in (19, 21, 23, 25))
    # for (i = N - 1; i >= 0; i--): i = 999 - i_n, i_n in [0, 1000)
    assert loop_summary(n19.root) == ("i_n", "1000", ("i", "999", "-1", -1))
    assert n19.root.upper.to_c() == "1000"
    assert [p.to_c() for p in n19.statements()[0].accesses[0].subscripts] == ["-i_n + 999"]
    assert n19.root.origin.text == "for (i = 1000 - 1; i >= 0; i--)"
    # for (i = 0; i <= N - 1; i++) is already normal: it keeps its name
    assert loop_summary(n21.root) == ("i", "1000", None)
    assert n21.root.upper.to_c() == "1000"
    # for (i = 3; i < N; i += 4): i = 4*i_n + 3, 250 iterations
    assert loop_summary(n23.root) == ("i_n", "250", ("i", "3", "1000", 4))
    assert [[p.to_c() for p in a.subscripts] for a in n23.statements()[0].accesses] == [["4*i_n + 3"]] * 3
    # for (i = N - 1; i > 0; i -= 2): i = 999 - 2*i_n, 500 iterations
    assert loop_summary(n25.root) == ("i_n", "500", ("i", "999", "0", -2))
    assert [[p.to_c() for p in a.subscripts] for a in n25.statements()[0].accesses] == [["-2*i_n + 999"]] * 2
    # upper triangle: the inner loop starts at i + 1
    tri = norm.nest("upper_triangle@32")
    assert [loop_summary(lp) for lp in tri.loops()] == [("i", "1000", None),
                                                        ("j_n", "-i + 999", ("j", "i + 1", "1000", 1))]
    assert [[p.to_c() for p in a.subscripts] for a in tri.statements()[0].accesses] == [
        ["i"], ["i + j_n + 1"], ["i", "i + j_n + 1"]]
    assert instances(enclosing_loops(tri, tri.statements()[0])).to_c() == "499500"
    # guarded: both loops already normal, guards untouched
    g = norm.nest("guarded@40")
    assert [loop_summary(lp) for lp in g.loops()] == [("i", "1000", None), ("j", "1000", None)]
    assert [[str(c) for c in s.guards[0].constraints or ()] for s in g.statements()] == [
        [], ["-i + j - 1 >= 0"], ["i - j >= 0"]]


@pytest.mark.parametrize("N", SIZES)
def test_decrementing_brute_force(N):
    raw, norm = load_testdata("decrementing.c", (("N", str(N)),))
    emulate = {
        "shapes_1d@19": [(1, (("i", i),)) for i in c_for(N - 1, lambda i: i >= 0, -1)],
        "shapes_1d@21": [(1, (("i", i),)) for i in c_for(0, lambda i: i <= N - 1, 1)],
        "shapes_1d@23": [(1, (("i", i),)) for i in c_for(3, lambda i: i < N, 4)],
        "shapes_1d@25": [(1, (("i", i),)) for i in c_for(N - 1, lambda i: i > 0, -2)],
        "upper_triangle@32": [(1, (("i", i), ("j", j))) for i in c_for(0, lambda i: i < N, 1)
                              for j in c_for(i + 1, lambda j: j < N, 1)],
    }
    for name, expected in emulate.items():
        check_against_c(raw.nest(name), norm.nest(name), {}, expected)
    # the emulation really is what the C loops do (sanity on the hand-derived counts)
    assert len(emulate["shapes_1d@23"]) == max(0, -(-(N - 3) // 4))
    assert len(emulate["shapes_1d@25"]) == N // 2
    # guarded: statement order inside an i iteration, and the guard outcomes
    trace = check_against_c(raw.nest("guarded@40"), norm.nest("guarded@40"), {}, [
        x for i in range(N) for x in [(1, (("i", i),))] + [(sid, (("i", i), ("j", j))) for j in range(N) for sid in (2, 3)]])
    for sid, orig, _, guards in trace:
        v = dict(orig)
        if sid == 1:
            assert guards == (None,)              # i % 2 == 0: text only
        else:
            assert guards == ((v["j"] > v["i"]) if sid == 2 else (v["j"] <= v["i"]),)


# --------------------------------------------------------------------------- snippets

SHAPES = """\
void dec(int n, float *a)
{
    int i;
    for (i = n - 1; i >= 0; i--)
        a[i] = 0.0f;
}
void incl(int n, float *a)
{
    int i;
    for (i = 1; i <= n; i++)
        a[i] = 1.0f;
}
void step4(int n, float *a)
{
    int i;
    for (i = 3; i < n; i += 4)
        a[i] = 2.0f;
}
void minus2(int n, float *a)
{
    int i;
    for (i = n; i > 0; i -= 2)
        a[i] = 3.0f;
}
void minus3ge(int n, float *a)
{
    int i;
    for (i = 2 * n; i >= n; i = i - 3)
        a[i - n] = 4.0f;
}
void ne(int n, float *a)
{
    int i;
    for (i = 5; n != i; ++i)
        a[i] = 5.0f;
}
void normal(int n, float *a)
{
    int i;
    for (i = 0; i < n; i++)
        a[i] = 6.0f;
}
"""

# function -> Python emulation of its loop, as the list of original i values
SHAPE_LOOPS = {
    "dec": lambda n: c_for(n - 1, lambda i: i >= 0, -1),
    "incl": lambda n: c_for(1, lambda i: i <= n, 1),
    "step4": lambda n: c_for(3, lambda i: i < n, 4),
    "minus2": lambda n: c_for(n, lambda i: i > 0, -2),
    "minus3ge": lambda n: c_for(2 * n, lambda i: i >= n, -3),
    "ne": lambda n: c_for(5, lambda i: i != n, 1) if n >= 5 else iter(()),   # i != n only terminates from below
    "normal": lambda n: c_for(0, lambda i: i < n, 1),
}


@pytest.fixture
def shapes(tmp_path):
    return snippet(tmp_path, SHAPES)


def test_shapes_normalized_form(shapes):
    raw, norm = shapes
    summary = {n.function: loop_summary(n.root) for n in norm.nests}
    assert summary["dec"] == ("i_n", "n", ("i", "n - 1", "-1", -1))
    assert summary["incl"] == ("i_n", "n", ("i", "1", "n + 1", 1))
    assert summary["step4"] == ("i_n", "(n)/4", ("i", "3", "n", 4))                  # ceil((n - 3)/4)
    assert summary["minus2"] == ("i_n", "(n + 1)/2", ("i", "n", "0", -2))            # ceil(n/2)
    assert summary["minus3ge"] == ("i_n", "(n + 3)/3", ("i", "2*n", "n - 1", -3))    # ceil((n + 1)/3)
    assert summary["ne"] == ("i_n", "n - 5", ("i", "5", "n", 1))
    assert summary["normal"] == ("i", "n", None)
    subscripts = {n.function: [p.to_c() for p in n.statements()[0].accesses[0].subscripts] for n in norm.nests}
    assert subscripts == {"dec": ["-i_n + n - 1"], "incl": ["i_n + 1"], "step4": ["4*i_n + 3"],
                          "minus2": ["-2*i_n + n"], "minus3ge": ["-3*i_n + n"], "ne": ["i_n + 5"],
                          "normal": ["i"]}
    # an already-normal loop is left exactly as it was
    assert by_function(norm, "normal").root == by_function(raw, "normal").root
    for n in norm.nests:
        assert n.root.normalized and n.root.header == by_function(raw, n.function).root.header
        assert n.statements()[0].loops == (n.root.var,)


@pytest.mark.parametrize("n", list(range(-3, 26)))
def test_shapes_brute_force(shapes, n):
    raw, norm = shapes
    for function, emulate in SHAPE_LOOPS.items():
        expected = [(1, (("i", i),)) for i in emulate(n)]
        check_against_c(by_function(raw, function), by_function(norm, function), {"n": n}, expected)


@pytest.mark.parametrize("n", list(range(-3, 26)))
def test_non_unit_step_trip_counts(shapes, n):
    """ceil((N - 3)/4) for i = 3; i < N; i += 4 (floor division in Sym), exact or not."""
    _, norm = shapes
    trip = lambda f: max(0, by_function(norm, f).root.trip_count.evaluate({"n": n}))
    assert trip("step4") == max(0, -(-(n - 3) // 4))
    assert trip("minus2") == max(0, -(-n // 2))
    assert trip("minus3ge") == max(0, -(-(n + 1) // 3))
    # and against the C loop itself
    assert trip("step4") == len(list(c_for(3, lambda i: i < n, 4)))


def test_non_unit_step_loop_stays_affine_after_normalization(shapes):
    raw, norm = shapes
    for f in ("step4", "minus2", "minus3ge"):
        assert by_function(raw, f).root.affine
        lp = by_function(norm, f).root
        assert lp.affine and lp.upper is None and lp.trip_count.den > 1, f   # the floor trip is the bound


def test_decrementing_step4_constant_trip_keeps_upper_bound():
    _, norm = load_testdata("decrementing.c", (("N", "10"),))
    lp = norm.nest("shapes_1d@23").root
    assert lp.upper is not None and lp.upper.to_c() == "2" and lp.affine


NESTED = """\
void tri(int n, float *a, float *b)
{
    int i, j;
    for (i = 2; i < n; i++)
        for (j = i - 1; j <= 2 * i; j += 3)
            a[j] = b[i];
}
void tri_dec(int n, float *a)
{
    int i, j;
    for (i = n - 1; i >= 0; i--)
        for (j = i; j < n; j++)
            a[j] += 1.0f;
}
void outer_step(int n, float *a)
{
    int i, j, k;
    for (i = 1; i < n; i += 2)
        for (j = 0; j < i; j++)
            for (k = n; k > j; k -= 2)
                a[i + j + k] = 0.0f;
}
void guards(int n, float *a, float *b)
{
    int i, j;
    for (i = 1; i < n; i++) {
        if (i >= 3)
            for (j = n; j > i; j--)
                if (j - i < 4 && j <= n - 1)
                    a[j] = b[i];
                else
                    b[j] = a[i];
    }
}
void lin(int n, float *a, float *b)
{
    int i, j;
    for (i = 1; i < n; i++)
        for (j = 0; j < n; j++)
            a[i * n + j] = b[j];
}
void red(int n, float *a, float *s)
{
    int i;
    float t = 0.0f;
    for (i = 2; i < n; i++)
        t += a[i];
    s[0] = t;
}
void unknown(int n, float *a, int *idx)
{
    int i, j;
    for (i = 1; i < idx[i]; i++)
        for (j = 2; j < n; j++)
            a[j] = 0.0f;
}
void clash(int i_n, float *a)
{
    int i;
    for (i = 1; i < i_n; i++)
        a[i] = 0.0f;
}
"""


@pytest.fixture
def nested(tmp_path):
    return snippet(tmp_path, NESTED)


def test_inner_bounds_depend_on_normalized_outer(nested):
    _, norm = nested
    tri = by_function(norm, "tri")
    assert [loop_summary(lp) for lp in tri.loops()] == [
        ("i_n", "n - 2", ("i", "2", "n", 1)),
        # j from i - 1 to 2*i inclusive by 3, with i = i_n + 2: ceil((i + 2)/3) = floor((i_n + 6)/3)
        ("j_n", "(i_n + 6)/3", ("j", "i_n + 1", "2*i_n + 5", 3))]
    assert [[p.to_c() for p in a.subscripts] for a in tri.statements()[0].accesses] == [["i_n + 2"], ["i_n + 3*j_n + 1"]]
    dec = by_function(norm, "tri_dec")
    assert [loop_summary(lp) for lp in dec.loops()] == [
        ("i_n", "n", ("i", "n - 1", "-1", -1)),
        ("j_n", "i_n + 1", ("j", "-i_n + n - 1", "n", 1))]
    # a[j] += 1 accumulates over i: the reduction loop is renamed with it
    assert [(r.target, r.op, r.loops) for r in dec.reductions()] == [("a[j]", "+", ("i_n",))]
    assert [p.to_c() for p in dec.reductions()[0].array_access.subscripts] == ["-i_n + j_n + n - 1"]
    # an already-normal inner loop keeps its name but its bound is rewritten
    st = by_function(norm, "outer_step")
    assert [loop_summary(lp) for lp in st.loops()] == [
        ("i_n", "(n)/2", ("i", "1", "n", 2)),
        ("j", "2*i_n + 1", None),
        ("k_n", "(-j + n + 1)/2", ("k", "n", "j", -2))]
    assert st.loop("j").upper.to_c() == "2*i_n + 1"
    assert st.statements()[0].loops == ("i_n", "j", "k_n")
    assert [p.to_c() for p in st.statements()[0].accesses[0].subscripts] == ["2*i_n + j - 2*k_n + n + 1"]


@pytest.mark.parametrize("n", [-1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 12])
def test_nested_brute_force(nested, n):
    raw, norm = nested
    lt = lambda hi: (lambda v: v < hi)
    cases = {
        "tri": [(1, (("i", i), ("j", j))) for i in c_for(2, lt(n), 1)
                for j in c_for(i - 1, lambda j, i=i: j <= 2 * i, 3)],
        "tri_dec": [(1, (("i", i), ("j", j))) for i in c_for(n - 1, lambda i: i >= 0, -1) for j in c_for(i, lt(n), 1)],
        "outer_step": [(1, (("i", i), ("j", j), ("k", k))) for i in c_for(1, lt(n), 2) for j in c_for(0, lt(i), 1)
                       for k in c_for(n, lambda k, j=j: k > j, -2)],
        "lin": [(1, (("i", i), ("j", j))) for i in c_for(1, lt(n), 1) for j in c_for(0, lt(n), 1)],
        "red": [(1, (("i", i),)) for i in c_for(2, lt(n), 1)],
    }
    for function, expected in cases.items():
        check_against_c(by_function(raw, function), by_function(norm, function), {"n": n}, expected)
    # the parameter of clash() is called i_n
    check_against_c(by_function(raw, "clash"), by_function(norm, "clash"), {"i_n": n},
                    [(1, (("i", i),)) for i in c_for(1, lt(n), 1)])


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 6, 8, 11])
def test_guards_rewritten_in_new_variables(nested, n):
    raw, norm = nested
    g = by_function(norm, "guards")
    i_loop, j_loop = g.loops()
    assert (loop_summary(i_loop), loop_summary(j_loop)) == (
        ("i_n", "n - 1", ("i", "1", "n", 1)), ("j_n", "-i_n + n - 1", ("j", "n", "i_n + 1", -1)))
    # the guard on the j loop (i >= 3) and on the statements now speak about i_n, j_n
    (lg,) = j_loop.guards
    assert (lg.text, [str(c) for c in lg.constraints]) == ("i >= 3", ["i_n - 2 >= 0"])
    then, other = g.statements()
    assert [str(c) for c in then.guards[-1].constraints] == ["i_n + j_n - n + 4 >= 0", "j_n - 1 >= 0"]
    assert other.guards[-1].negated and other.guards[-1].constraints is None   # not (a and b): a disjunction
    for s in g.statements():
        for guard in s.guards:
            for c in guard.constraints or ():
                assert c.expr.variables <= {"i_n", "j_n", "n"}
    # brute force: the C loops with their ifs, against the normalized nest
    expected, taken = [], []
    for i in c_for(1, lambda i: i < n, 1):
        if i >= 3:
            for j in c_for(n, lambda j: j > i, -1):
                expected += [(1, (("i", i), ("j", j))), (2, (("i", i), ("j", j)))]
                taken.append(j - i < 4 and j <= n - 1)
    trace = check_against_c(by_function(raw, "guards"), g, {"n": n}, expected)
    # the then-branch guard, evaluated in i_n, j_n, is exactly the C condition
    assert [guards[-1] for sid, _, _, guards in trace if sid == 1] == taken
    assert all(guards[-1] is None for sid, _, _, guards in trace if sid == 2)


def test_statement_records_guards_of_enclosing_loops(nested):
    raw, _ = nested
    then = by_function(raw, "guards").statements()[0]
    assert "i >= 3" in [g.text for g in then.guards]


def test_linearized_subscripts_rewritten(nested):
    raw, norm = nested
    a_raw = by_function(raw, "lin").statements()[0].accesses[-1]
    assert [p.to_c() for p in a_raw.linearized] == ["i", "j"]
    a = by_function(norm, "lin").statements()[0].accesses[-1]
    assert (a.array, a.kind) == ("a", "write")
    assert [p.to_c() for p in a.subscripts] == ["i_n*n + j + n"]           # (i_n + 1)*n + j
    assert [p.to_c() for p in a.linearized] == ["i_n + 1", "j"]
    for n in range(1, 6):
        for i_n in range(n - 1):
            for j in range(n):
                env = {"n": n, "i_n": i_n, "j": j}
                row, col = (int(p.evaluate(env)) for p in a.linearized)
                assert a.subscripts[0].evaluate(env) == row * n + col


def test_scalar_reduction_loops_renamed(nested):
    _, norm = nested
    red = by_function(norm, "red")
    assert [(r.target, r.op, r.loops) for r in red.reductions()] == [("t", "+", ("i_n",))]
    assert red.statements()[0].loops == ("i_n",)
    assert [p.to_c() for p in red.statements()[0].accesses[0].subscripts] == ["i_n + 2"]


def test_loop_with_unknown_trip_count_is_left_alone(nested):
    raw, norm = nested
    n = by_function(norm, "unknown")
    outer, inner = n.loops()
    assert outer.origin is None and outer.header == by_function(raw, "unknown").root.header
    assert (outer.var, outer.lower.to_c(), outer.upper, outer.step, outer.trip_count) == ("i", "1", None, 1, None)
    assert [f.code for f in n.all_flags()] == ["non-affine-bound"]
    # the inner loop is still normalized
    assert loop_summary(inner) == ("j_n", "n - 2", ("j", "2", "n", 1))
    assert n.statements()[0].loops == ("i", "j_n")


def test_fresh_name_avoids_parameters(nested):
    _, norm = nested
    n = by_function(norm, "clash")
    assert n.params == ("i_n",)
    assert loop_summary(n.root) == ("i_n2", "i_n - 1", ("i", "1", "i_n", 1))
    assert [p.to_c() for p in n.statements()[0].accesses[0].subscripts] == ["i_n2 + 1"]


# --------------------------------------------------------------------------- every testdata nest

SMALL = {
    "convolution.c": {"H": 7, "W": 8, "FILTER_SIZE": 3},
    "decrementing.c": {"N": 7},
    "dist2.c": {"N": 9, "ROWS": 3, "M": 5},
    "gauss_seidel.c": {"N": 6, "TSTEPS": 2},
    "gemv.c": {"N": 4, "M": 5},
    "histogram.c": {"N": 10, "BINS": 4},
    "jacobi2d.c": {"N": 6, "TSTEPS": 2},
    "matmul.c": {"N": 4},
    "matmul_ptr.c": {"N": 4},
    "reductions.c": {"N": 9, "ROWS": 4},
    "selected.c": {"N": 4},
    "syrk.c": {"N": 5, "M": 3},
    "transpose.c": {"ROWS": 5, "COLS": 3},
    "validation/2mm.c": {"NI": 3, "NJ": 4, "NK": 5, "NL": 2},
    "validation/adi.c": {"N": 6, "TSTEPS": 2},
    "validation/atax.c": {"NX": 5, "NY": 4},
    "validation/convolution-3d.c": {"NI": 5, "NJ": 6, "NK": 4},
    "validation/doitgen.c": {"NR": 3, "NQ": 4, "NP": 5},
    "validation/mvt.c": {"N": 5},
    "validation/convolution-2d.c": {"NI": 6, "NJ": 7},
    "validation/fdtd-2d.c": {"NX": 4, "NY": 5, "TMAX": 2},
    "validation/gemm.c": {"NI": 3, "NJ": 4, "NK": 5},
    "validation/gesummv.c": {"N": 5},
    "validation/jacobi-2d-imper.c": {"N": 6, "TSTEPS": 2},
    "validation/syrk.c": {"NI": 4, "NJ": 3},
    "external_call.c": {"N": 8}, "nbody.c": {"NBODIES": 8}, "saxpy.c": {"N": 8}, "vecadd.c": {"N": 8},
    "dot.c": {"N": 8}, "prefix_sum.c": {"N": 8}, "may_alias.c": {"N": 8}, "while_loop.c": {"N": 8},
    "polybench/gemm.c": {"NI": 3, "NJ": 4, "NK": 5}, "polybench/atax.c": {"M": 3, "N": 4},
}
PARAM_VALUES = [0, 1, 2, 5]


def c_trace_of_lowered(nest: Nest, params: dict[str, int]):
    """Run the nest as lowered with C `for` semantics (v = lower; v < upper or v > upper; v += step)."""
    out = []

    def walk(lp: Loop, env: dict[str, int]):
        e = {**params, **env}
        lower, upper = int(lp.lower.evaluate(e)), int(lp.upper.evaluate(e))
        for v in c_for(lower, (lambda v: v < upper) if lp.step > 0 else (lambda v: v > upper), lp.step):
            inner = {**env, lp.var: v}
            for node in lp.body:
                if isinstance(node, Loop):
                    walk(node, inner)
                else:
                    out.append((node.sid, tuple((l.var, inner[l.var]) for l in enclosing_loops(nest, node))))
    walk(nest.root, {})
    return out


def test_small_sizes_cover_every_file():
    assert sorted(SMALL) == sorted(str(p.relative_to(TESTDATA)) for p in project_programs())


@pytest.mark.parametrize("rel", sorted(SMALL))
def test_every_testdata_nest_normalizes_to_the_same_iterations(rel):
    raw, norm = load_testdata(rel, tuple((k, str(v)) for k, v in sorted(SMALL[rel].items())))
    assert [n.name for n in norm.nests] == [n.name for n in raw.nests]
    for r, m in zip(raw.nests, norm.nests):
        assert all(lp.normalized for lp in m.loops()), m.name
        assert [lp.origin is None for lp in m.loops()] == [lp.normalized for lp in r.loops()], m.name
        # statements keep their order, text, accesses (count, arrays, kinds) and op counts
        assert [(s.sid, s.text, s.ops, [(a.array, a.kind) for a in s.accesses]) for s in m.statements()] == \
               [(s.sid, s.text, s.ops, [(a.array, a.kind) for a in s.accesses]) for s in r.statements()]
        for values in ([{}] if not m.params else [dict.fromkeys(m.params, v) for v in PARAM_VALUES]):
            check_against_c(r, m, values, c_trace_of_lowered(r, values))


# --------------------------------------------------------------------------- instance counts of empty loops

def test_instance_counts_clamp_empty_loops(nested):
    _, norm = nested
    prefix = load_testdata("prefix_sum.c")[1].nest("prefix_sum@15")
    s = prefix.statements()[0]
    assert evaluate_instances(enclosing_loops(prefix, s), {"n": 0}) == 0      # for (i = 1; i < 0; i++)
    lin = by_function(norm, "lin")
    s = lin.statements()[0]
    assert evaluate_instances(enclosing_loops(lin, s), {"n": -1}) == 0        # for (i = 1; i < -1; i++) ...
