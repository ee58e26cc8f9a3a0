"""Loop bounds that are the min or max of affine values, as CLooG, PLUTO and PPCG write every loop.

`for (j = (a > b ? a : b); j <= (c < d ? c : d); j++)`: the frontend keeps each value as a piece of the
bound (`Loop.lower_pieces`, `Loop.upper_pieces`), the dependence analysis gives isl one constraint per
piece, so the iteration domain is exact: a dependence the min rules out is not reported, one it lets in is.
A `?:` that is not a min or max, or a comparison made in an unsigned type where a negative value may appear,
is not such a bound.  Hand-tiled code writes the min as a conjunction (`ii < i + T && ii < n`): the same pieces.
"""
from __future__ import annotations

import itertools

import islpy as isl
import pytest

from c2gpu.analysis import isl_sets
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions
from c2gpu.drivers.port import PIPELINE, analyse_for_port
from c2gpu.report import ir_json
from c2gpu.report.text import nest_ir
from c2gpu.symbolic import Poly
from c2gpu.drivers.verify import verify
from conftest import requires_tool, write_c
from test_dependence import run, table

P, C, U = "parallel", "carried", "unknown"


def only(tmp_path, source: str):
    """(the nest, its dependence info) of a file with one nest."""
    (nest, info), = run(write_c(tmp_path, source)).values()
    return nest, info


def reasons(info, var: str) -> str:
    return " | ".join(r.message for r in info.loop(var).reasons)


# --------------------------------------------------------------------------- proven where it is parallel

GENERATED = """\
void init(int ni, int nj, double A[100][100]) {
  int c1, c2;
  for (c1 = 0; c1 <= ((ni + -1 < nj + -1 ? ni + -1 : nj + -1)); c1++)
    for (c2 = (c1 > 2 ? c1 : 2); c2 <= (((nj + -1 < 99 ? nj + -1 : 99)) < ni + 5 ? ((nj + -1 < 99 ? nj + -1 : 99)) : ni + 5); c2++)
      A[c1][c2] = c1 * c2;
}
"""


def test_generated_bounds_are_pieces_and_the_nest_is_parallel(tmp_path):
    nest, info = only(tmp_path, GENERATED)
    assert table(info) == [("c1", P), ("c2", P)]
    outer, inner = nest.loops()
    assert outer.lower == Poly.const(0) and outer.upper is None and outer.trip_count is None
    assert outer.upper_pieces == (Poly.var("ni"), Poly.var("nj"))          # c1 <= min(ni - 1, nj - 1)
    assert inner.lower is None and inner.lower_pieces == (Poly.var("c1"), Poly.const(2))
    assert inner.upper_pieces == (Poly.var("nj"), Poly.const(100), Poly.var("ni") + 6)   # nested, flattened
    text = nest_ir(nest)
    assert "[c1 in [0, min(ni, nj)) step 1]" in text
    assert "[c2 in [max(c1, 2), min(nj, 100, ni + 6)) step 1]" in text
    as_json = ir_json.loop(inner, "c1", 1)
    assert (as_json["lower"], as_json["upper"], as_json["affine"]) == ("max(c1, 2)", "min(nj, 100, ni + 6)", True)


def test_the_min_decides_whether_a_dependence_exists(tmp_path):
    # a[j + 10] = a[j] writes 10 elements past what it reads: parallel while j < 10, not once j reaches 10
    src = """\
double a[100];
void f(int n) {
  int j;
  for (j = 0; j < (n < %d ? n : %d); j++)
    a[j + 10] = a[j];
}
"""
    _, info = only(tmp_path, src % (10, 10))
    assert table(info) == [("j", P)]
    _, info = only(tmp_path, src % (11, 11))
    assert table(info) == [("j", C)]
    assert "a[j] (line 5) reads the element of a written by a[j + 10] (line 5)" in reasons(info, "j")


def test_a_tiled_loop_carries_what_its_tile_carries(tmp_path):
    # the tile's end min(32*t + 31, n - 1) keeps j inside the tile: the dependence crosses tiles (t) and j
    src = """\
double a[1000], b[1000];
void f(int n) {
  int t, j;
  for (t = 0; t < 30; t++)
    for (j = 32 * t; j <= (32 * t + 31 < n - 1 ? 32 * t + 31 : n - 1); j++)
      %s;
}
"""
    _, info = only(tmp_path, src % "a[j + 1] = a[j]")
    assert table(info) == [("t", C), ("j", C)]
    _, info = only(tmp_path, src % "b[j] = a[j] + a[j + 1]")
    assert table(info) == [("t", P), ("j", P)]


def test_a_loop_counting_down_from_a_min_to_a_max(tmp_path):
    src = """\
double a[101];
void f(int n, int m) {
  int i;
  for (i = (n - 1 < 99 ? n - 1 : 99); i >= (m > 0 ? m : 0); i--)
    %s;
}
"""
    nest, info = only(tmp_path, src % "a[i] = a[i] + 1")
    assert table(info) == [("i", P)]
    assert "[i in (max(m - 1, -1), min(n - 1, 99)] step -1]" in nest_ir(nest)
    _, info = only(tmp_path, src % "a[i] = a[i + 1]")
    assert table(info) == [("i", C)]


# --------------------------------------------------------------------------- what is not a min or max

@pytest.mark.parametrize("bound,why", [
    ("(n < m ? m + 1 : n)", "is not a min or max: its branches are not the two sides of its comparison"),
    ("(n < m ? m : n)", "is a max where this bound of the loop needs a min"),
    ("(n > m ? n : m)", "is a max where this bound of the loop needs a min"),
    ("(n == m ? n : m)", "is not a min or max: its condition is not a comparison"),
    ("(n < (m < 7 ? 7 : m) ? n : (m < 7 ? 7 : m))", "'(m < 7) ? (7) : (m)' (line 4) is a max where this bound"),
])
def test_a_conditional_that_is_not_a_min_is_refused(tmp_path, bound, why):
    _, info = only(tmp_path, f"""\
double a[100];
void f(int n, int m) {{
  int i;
  for (i = 0; i < {bound}; i++)
    a[i] = 0;
}}
""")
    assert table(info) == [("i", U)]
    assert why in reasons(info, "i")


def test_a_strided_loop_needs_a_single_start(tmp_path):
    src = """\
double a[200];
void f(int n, int m) {
  int j;
  for (j = %s; j < (n < 100 ? n : 100); j += 2)
    a[j + 1] = a[j];
}
"""
    nest, info = only(tmp_path, src % "0")              # even j read, odd j + 1 written: no dependence
    assert table(info) == [("j", P)]
    dom, _ = isl_sets.statement_domain(nest, nest.statements()[0])
    assert dom.fix_val(isl.dim_type.param, 0, 9).count_val().to_python() == 5      # j = 0, 2, 4, 6, 8
    _, info = only(tmp_path, src % "(n > m ? n : m)")
    assert table(info) == [("j", U)]
    assert "its start is a max of several values and its step is 2" in reasons(info, "j")


# --------------------------------------------------------------------------- conversions

def test_a_min_compared_in_unsigned_is_refused_where_a_value_may_be_negative(tmp_path):
    # n < u converts n to unsigned: with n = -1 the ternary picks u, not min(n, u)
    _, info = only(tmp_path, """\
double a[100];
void f(int n, unsigned u) {
  int i;
  for (i = 0; i < (n < u ? n : u); i++)
    a[i] = 0;
}
""")
    assert table(info) == [("i", U)]
    assert "compares in unsigned int, where a negative value would become a large one" in reasons(info, "i")
    # the same comparison where the signed side is a loop variable from 0 to 9: no value changes
    _, info = only(tmp_path, """\
double a[10][100];
void f(unsigned u) {
  int k, i;
  for (k = 0; k < 10; k++)
    for (i = 0; i < (k < u ? k : u); i++)
      a[k][i] = 0;
}
""")
    assert table(info) == [("k", P), ("i", P)]


def test_a_loop_variable_compared_with_an_unsigned_min(tmp_path):
    src = """\
double a[300];
void f(unsigned u, unsigned v) {
  int i;
  for (i = %d; i < (u < v ? u : v); i++)
    a[i + 10] = 0;
}
"""
    _, info = only(tmp_path, src % 0)
    assert table(info) == [("i", P)]
    _, info = only(tmp_path, src % -5)      # -5 < min(u, v) is false: -5 becomes a large unsigned value
    assert table(info) == [("i", U)]
    assert "its condition compares in unsigned int" in reasons(info, "i")


def test_a_cast_around_the_min_must_keep_every_value(tmp_path):
    src = """\
double a[1000];
void f(int n) {
  int i;
  for (i = 0; i < (%s)(n < 300 ? n : 300); i++)
    a[i] = 0;
}
"""
    _, info = only(tmp_path, src % "long")
    assert table(info) == [("i", P)]
    _, info = only(tmp_path, src % "unsigned char")
    assert table(info) == [("i", U)]
    assert "the conversion '(unsigned char) ((n < 300) ? (n) : (300))' (line 4) can change the value" in reasons(info, "i")


# --------------------------------------------------------------------------- the exact domain

def test_the_domain_counts_every_instance_exactly(tmp_path):
    nest, info = only(tmp_path, GENERATED)
    stmt = nest.statements()[0]
    dom, _ = isl_sets.statement_domain(nest, stmt)
    assert isl_sets.Encoder(nest).domain(nest.loops(), stmt.guards, "s").exact    # what the dependence test uses
    params = dom.get_space().get_var_names(isl.dim_type.param)
    for ni, nj in itertools.product((0, 3, 8, 120), (1, 5, 101)):
        values = {"ni": ni, "nj": nj}
        fixed = dom
        for k, name in enumerate(params):
            fixed = fixed.fix_val(isl.dim_type.param, k, values[name])
        brute = sum(1 for c1 in range(0, min(ni - 1, nj - 1) + 1)
                    for _ in range(max(c1, 2), min(nj - 1, 99, ni + 5) + 1))
        assert fixed.count_val().to_python() == brute, values


# --------------------------------------------------------------------------- port

PROGRAM = """\
#include <stdio.h>
#define N 64
double A[N][N], s[N];
void band(int n, int m) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = (i - 3 > 0 ? i - 3 : 0); j <= (i + 3 < m - 1 ? i + 3 : m - 1); j++)
      s[i] += A[i][j];
}
void square(int n, int m) {
  int i, j;
  for (i = 0; i < (n < m ? n : m); i++)
    for (j = 0; j < N; j++)
      A[i][j] = A[i][j] + 1.0;
}
void relax(int T, int n) {
  int t, i;
  for (t = (T - 9 > 1 ? T - 9 : 1); t < (T < 5 ? T : 5); t++)
    for (i = 0; i < n; i++)
      s[i] = s[i] * 0.5 + A[i][0] * t;
}
int main(void) {
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (i * 7 + j * 3) % 11;
  square(50, 40);
  band(50, 40);
  relax(7, 60);
  for (i = 0; i < N; i++)
    printf("%g\\n", s[i]);
  return 0;
}
"""


def test_port_keeps_minmax_loops_in_the_thread_or_on_the_host_and_never_maps_one(tmp_path):
    _, outcomes = analyse_for_port(str(write_c(tmp_path, PROGRAM)), PreprocessOptions(), make_manager(PIPELINE, {}))
    by_name = {o.nest.name: o for o in outcomes}
    band, square = by_name["band@6"], by_name["square@12"]
    assert band.ported, band.reason
    kernel, = band.code.kernels
    # i is the grid; j runs in each thread with its header as written
    assert "for (j = ((i - 3) > 0) ? (i - 3) : (0); j <= (((i + 3) < (m - 1)) ? (i + 3) : (m - 1)); j++)" \
        in kernel.text
    # a loop whose end is a min is proven parallel but has no single trip count for a grid: it stays on the
    # host, as written, around the kernel over j
    assert [v.status for _, v in sorted(square.dependence.verdicts.items())] == [P, P]
    assert square.ported, square.reason
    assert "for (i = 0; i < ((n < m) ? (n) : (m)); i++) {" in square.code.wrapper
    assert [m.c_var for m in square.plan.mapping.items[0].body[0].loops] == ["j"]
    # a sequential loop from a max to a min stays on the host, as written, around the kernel over i
    relax = by_name["relax@18"]
    assert relax.ported, relax.reason
    assert "for (t = ((T - 9) > 1) ? (T - 9) : (1); t < ((T < 5) ? (T) : (5)); t++) {" in relax.code.wrapper


@requires_tool("cc")
@requires_tool("g++")
def test_verify_a_port_with_a_minmax_loop(tmp_path):
    res = verify(str(write_c(tmp_path, PROGRAM)), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    assert [o.nest.name for o in res.outcomes if o.ported] == ["band@6", "square@12", "relax@18", "main@24"]


# --------------------------------------------------------------------------- conjunctions of bounds

TILED = """\
#include <stdio.h>
#define N 300
#define T 32
float A[N][N], B[N][N];
int main(void) {
  int i, j, ii, jj;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) A[i][j] = (float)((i * 7 + j) % 13);
  for (i = 0; i < N; i += T)
    for (j = 0; j < N; j += T)
      for (ii = i; ii < i + T && ii < N; ii++)
        for (jj = j; N > jj && jj < j + T; jj++)
          B[jj][ii] = A[ii][jj];
  for (i = 0; i < N; i++)
    for (jj = 0; jj <= i && jj < 100 && jj < (N < 200 ? N : 200); jj++)
      A[i][jj] = B[i][jj] * 2;
  double s = 0;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) s += A[i][j] + B[i][j];
  printf("%f\\n", s);
  return 0;
}
"""


def test_a_conjunction_of_bounds_is_their_min(tmp_path):
    nests = run(write_c(tmp_path, TILED))
    tiled, = [(n, i) for n, i in nests.values() if len(n.loops()) == 4]
    nest, info = tiled
    assert table(info) == [("i", P), ("j", P), ("ii", P), ("jj", P)]
    _, _, ii, jj = nest.loops()
    assert ii.upper_pieces == (Poly.var("i_n") * 32 + 32, Poly.const(300))    # (i normalized: i = 32*i_n)
    assert jj.upper_pieces == (Poly.const(300), Poly.var("j_n") * 32 + 32)    # either side of the comparison
    (nest, info), = [(n, i) for n, i in nests.values() if n.loops()[-1].upper_pieces and len(n.loops()) == 2]
    assert nest.loops()[1].upper_pieces == (Poly.var("i") + 1, Poly.const(100), Poly.const(300), Poly.const(200))


@pytest.mark.parametrize("cond, why", [
    ("jj < n && a[jj] > 0", "'a[jj] > 0' does not compare 'jj' with a bound"),   # reads memory: not countable
    ("jj < n && jj > 2", "does not bound a loop stepping by 1"),             # a start, not an end
    ("jj < n && n > 2", "does not compare 'jj' with a bound"),
    ("jj < n || jj < 5", "is not a comparison of 'jj' with a bound"),
])
def test_a_conjunction_that_is_not_a_min_is_refused(tmp_path, cond, why):
    _, info = only(tmp_path, f"""\
double a[100], b[100];
void f(int n) {{
  int jj;
  for (jj = 0; {cond}; jj++)
    b[jj] = a[jj];
}}
""")
    assert table(info) == [("jj", U)] and why in reasons(info, "jj"), reasons(info, "jj")


@requires_tool("cc")
@requires_tool("g++")
def test_verify_a_port_of_hand_tiled_loops(tmp_path):
    res = verify(str(write_c(tmp_path, TILED)), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    assert len([o for o in res.outcomes if o.ported]) == 4
