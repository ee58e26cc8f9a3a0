"""Scalar dataflow: privatization at every loop level, and index temporaries (forward substitution).

A scalar declared outside a loop is private to it when every read of it in an iteration sees a value
written earlier in that same iteration, by a write that certainly runs (c2gpu/passes/scalars.py
`privatizable`), at whatever depth the write and the read sit.  A scalar assigned a polynomial of loop
variables and parameters once, unconditionally, in a loop body (`c = i*nx + j;`) stands for that
polynomial in the rest of the body (c2gpu/frontend/context.py `NestContext.record_temporary`), so `a[c]`
is `a[i][j]`.  Each proof has its counterpart where a read can see another iteration's value.
"""
from __future__ import annotations

import pytest

from c2gpu.drivers.driver import make_manager
from c2gpu.drivers.cli import main
from c2gpu.frontend import PreprocessOptions
from c2gpu.drivers.port import PIPELINE
from c2gpu.drivers.verify import verify
from conftest import requires_tool, verified_ports, write_c
from test_dependence import only_nest, run, table

P, R, C, U = "parallel", "reduction", "carried", "unknown"

HEAD = "float a[100][100], b[100][100], v[100]; "


def nest_of(tmp_path, source):
    """(nest, DependenceInfo) of the single nest of `source`."""
    nests = run(write_c(tmp_path, source))
    assert len(nests) == 1, list(nests)
    return next(iter(nests.values()))


def subscripts(nest, array):
    """The (2-D form when recovered, else as written) subscripts of every access to `array`, as C text."""
    return [tuple(p.to_c() if p is not None else None for p in (a.linearized or a.subscripts))
            for s in nest.statements() for a in s.accesses if a.array == array]


# --------------------------------------------------------------------------- privatization at every level

def test_a_scalar_written_in_the_innermost_loop_is_private_to_every_loop_around_it(tmp_path):
    # DataRaceBench DRB170: `tmp1 = 6.0/m` in k, read in k; declared before the nest and dead after it
    info = only_nest(tmp_path, "double a[12][12][12]; void f(int m) { int i, j, k; double t; "
                               "for (i = 0; i < 12; i++) for (j = 0; j < 12; j++) for (k = 0; k < 12; k++) "
                               "{ t = 6.0 / m; a[i][j][k] = t + 4; } }")
    assert table(info) == [("i", P), ("j", P), ("k", P)]
    assert all(info.loop(v).private == ("t",) for v in "ijk")


def test_reads_in_conditions_count(tmp_path):
    written_first = only_nest(tmp_path, HEAD + "void f(void) { int i, j; float t; for (i = 0; i < 100; i++) "
                                               "for (j = 0; j < 100; j++) { t = a[i][j]; if (t > 0) b[i][j] = 1; } }")
    assert table(written_first) == [("i", P), ("j", P)]
    # the condition reads the value of the previous iteration of j (of i, for j = 0)
    read_first = only_nest(tmp_path, HEAD + "void f(void) { int i, j; float t = 0; for (i = 0; i < 100; i++) "
                                            "for (j = 0; j < 100; j++) { if (t > 0) b[i][j] = 1; t = a[i][j]; } }")
    assert table(read_first) == [("i", C), ("j", C)]
    assert {r.array for r in read_first.loop("i").reasons} == {"t"}


def test_a_write_under_an_if_does_not_cover_a_read(tmp_path):
    info = only_nest(tmp_path, HEAD + "void f(void) { int i, j; float t = 0; for (i = 0; i < 100; i++) "
                                      "for (j = 0; j < 100; j++) { if (j > 2) t = a[i][j]; b[i][j] = t; } }")
    # for j <= 2, b[i][j] reads the t of row i - 1
    assert table(info) == [("i", C), ("j", C)] and info.loop("i").private == ()


def test_a_write_in_each_branch_of_an_if_covers_a_read_after_it(tmp_path):
    # FT's fftz2: `if (is >= 1) { u1r = u[i]; ... } else { u1r = u[i]; ... }`, read by the loops after it
    for branches in ("if (m > 0) t = a[i][j]; else t = -a[i][j];",
                     "if (m > 0) t = a[i][j]; else if (a[i][0] > 1) t = 1; else { b[i][j] = 1; t = 2; }",
                     "if (a[i][j] > 0) { if (m > 2) t = 1; else t = 3; } else t = -a[i][j];"):
        info = only_nest(tmp_path, HEAD + "void f(int m) { int i, j; float t = 0; for (i = 0; i < 100; i++) "
                                          f"for (j = 0; j < 100; j++) {{ {branches} b[i][j] = t; }} }}")
        assert info.loop("j").status == P and info.loop("j").private == ("t",), branches
    # a branch that writes nothing, two `if`s with opposite conditions (each may be skipped, as written), or a
    # read in a branch before its write: the value of an earlier iteration may be read
    for branches in ("if (m > 0) t = a[i][j]; else if (m < -3) t = 1;",
                     "if (m > 0) t = a[i][j]; if (m <= 0) t = 1;",
                     "if (m > 0) t = a[i][j]; else { b[i][j] = t; t = 1; }"):
        info = only_nest(tmp_path, HEAD + "void f(int m) { int i, j; float t = 0; for (i = 0; i < 100; i++) "
                                          f"for (j = 0; j < 100; j++) {{ {branches} v[i] += t; }} }}")
        assert info.loop("j").status == C and info.loop("j").private == (), branches


TWO_COPIES = r"""
#include <stdio.h>
#define N 256
double a[N], b[N], out[N];
static void pick(int c, double x, double y, double *p, double *q) {
  if (c > 0)
    *p = x;
  else
    *q = y;
}
int main(void) {
  double t = -1.0, e1, e2, d = 0.0;
  for (int i = 0; i < N; i++) { a[i] = i * 0.5; b[i] = i * 0.25; }
  for (int i = 0; i < N; i++) {
    int k = i % 2;
    e1 = 0.0; e2 = 0.0;
    pick(k, a[i], b[i], &t, &e1);
    k = 1 - k;
    pick(k, a[i], b[i], &e2, &t);
    out[i] = t;
    d += e1 + e2;
  }
  double s = 0;
  for (int i = 0; i < N; i++) s += out[i] * (i + 1);
  printf("%.6f %.6f\n", s, d);
  return 0;
}
"""


def test_two_copies_of_one_if_are_two_ifs(tmp_path):
    """pick() inlined twice: `t` is written in the then-branch of the first copy and in the else-branch of the
    second, two evaluations of `c > 0` with different `c` (for even i neither writes it, and out[i] is the t of
    iteration i - 1).  The copies share their source position and text; taken for one `if`'s two branches, t
    was privatized and the port wrote garbage into out[0] (on main before: verify FAIL, "element 0 is 4.74e-322,
    expected -1.0")."""
    _nest, info = run(write_c(tmp_path, TWO_COPIES))["main@14"]
    assert info.loop("i").status not in (P, R) and "t" not in info.loop("i").private
    assert "main@14" not in verified_ports(tmp_path, TWO_COPIES)


def test_a_loop_run_whole_that_runs_once_and_assigns_first_covers_its_reads(tmp_path):
    # NPB EP's seed search: `for (i = 1; i <= 100; i++) { ik = kk / 2; ... if (ik == 0) break; ... kk = ik; }`
    # runs whole in each k (its break), runs at least once, and assigns ik before anything reads it
    loop = "for (m = 1; m <= 100; m++) {{ {body} }}"
    src = ("void f(void) {{ int i, m, ik, kk; for (i = 0; i < 100; i++) {{ kk = i + 3; " + loop +
           " v[i] = kk; }} }}")
    info = only_nest(tmp_path, HEAD + src.format(body="ik = kk / 2; if (ik == 0) break; kk = ik;"))
    assert info.loop("i").status == P and set(info.loop("i").private) >= {"ik", "kk"}
    # a loop that may not run, a header that reads it, a break before the assignment, a read before it
    for other in (src.format(body="ik = kk / 2; if (ik == 0) break; kk = ik;").replace("m <= 100", "m <= i - 5"),
                  src.format(body="ik = kk / 2; if (ik == 0) break; kk = ik;").replace("m <= 100", "m <= 100 + ik"),
                  src.format(body="if (kk == 1) break; ik = kk / 2; if (ik == 0) break; kk = ik;"),
                  src.format(body="kk = ik + kk; ik = kk / 2; if (ik == 0) break;")):
        info = only_nest(tmp_path, HEAD + other)
        assert info.loop("i").status != P and "ik" not in info.loop("i").private, other


def test_a_write_under_an_if_covers_a_read_after_it_in_the_same_branch(tmp_path):
    # NPB EP: `if (t1 <= 1.0) { ...; l = max(fabs(t3), fabs(t4)); qq[l] += 1.0; ... }`: one evaluation of the
    # condition decides both
    src = HEAD + ("void f(void) {{ int i, j; float t = 0; for (i = 0; i < 100; i++) for (j = 0; j < 100; j++) "
                  "{{ {body} }} }}")
    info = only_nest(tmp_path, src.format(body="if (a[i][j] > 0) { t = a[i][j] * 2; b[i][j] = t; }"))
    assert info.loop("i").status == P and info.loop("i").private == ("t",)
    # read in the other branch, after the if, or under another if with the same condition: not covered
    for body in ("if (a[i][j] > 0) t = a[i][j]; else b[i][j] = t;",
                 "if (a[i][j] > 0) t = a[i][j]; b[i][j] = t;",
                 "if (a[i][j] > 0) t = a[i][j]; if (a[i][j] > 0) b[i][j] = t;"):
        info = only_nest(tmp_path, src.format(body=body))
        assert info.loop("i").status != P and info.loop("i").private == (), body


def test_a_write_under_an_if_covers_reads_in_loops_inside_the_same_branch(tmp_path):
    # NPB LU's setiv: `if (jglob != 0 && jglob != ny0-1) { eta = ...; for (i ...) { ... eta ... } }`
    src = HEAD + ("void f(int n) {{ int i, j, k; float t = 0; for (i = 0; i < 100; i++) "
                  "{{ if (i != 0 && i != n - 1) {{ t = i * 0.5f; {inner} }} }} }}")
    info = only_nest(tmp_path, src.format(inner="for (j = 0; j < 100; j++) for (k = 0; k < 3; k++) b[i][j] += t;"))
    assert info.loop("i").status == P and info.loop("i").private == ("t",)
    # a loop inside the if, but the write after it; a read in a loop after the if: not covered
    for body in ("if (i != 0 && i != n - 1) { for (j = 0; j < 100; j++) b[i][j] = t; t = i * 0.5f; }",
                 "if (i != 0 && i != n - 1) t = i * 0.5f; for (j = 0; j < 100; j++) b[i][j] = t;"):
        info = only_nest(tmp_path, HEAD + "void f(int n) { int i, j; float t = 0; for (i = 0; i < 100; i++) { "
                         + body + " } }")
        assert info.loop("i").status != P and info.loop("i").private == (), body


DISJUNCTIONS = r"""
#include <stdio.h>
double u[24][24][24][5], b[24][24];
void setiv(int nx, int ny, int nz) {
  double ue[5], eta, xi;
  int jglob;
  for (int j = 0; j < ny; j++) {
    jglob = j;
    for (int k = 1; k < nz - 1; k++) {
      if (jglob != 0 && jglob != ny - 1) {
        eta = jglob / (ny - 1.0);
        for (int i = 0; i < nx; i++) {
          if (i != 0 && i != nx - 1) {
            xi = i / (nx - 1.0);
            for (int m = 0; m < 5; m++) ue[m] = xi + eta * m + k;
            for (int m = 0; m < 5; m++) u[i][j][k][m] = ue[m] * 2.0 + ue[4 - m] * eta;
          }
        }
      }
    }
  }
}
void edges(int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i == 0 || j == 0 || i == n - 1 || j == n - 1) b[i][j] = 1.0; else b[i][j] = b[i][j] * 0.5 + b[i][j - 1];
}
int main(void) {
  for (int i = 0; i < 24; i++) for (int j = 0; j < 24; j++) b[i][j] = i - j;
  setiv(24, 24, 24);
  edges(24);
  double s = 0;
  for (int i = 0; i < 24; i++) for (int j = 0; j < 24; j++) for (int k = 0; k < 24; k++) s += u[i][j][k][2];
  for (int i = 0; i < 24; i++) for (int j = 0; j < 24; j++) s += b[i][j] * (i + 1);
  printf("%.6f\n", s);
  return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_nests_under_disjunctive_conditions_port_and_verify(tmp_path):
    # LU's setiv (`jglob != 0 && jglob != ny-1`: its scratch arrays and scalars private under the condition) and
    # an edge mask (`i == 0 || ...`, whose else branch reads b[i][j-1]: carried by j only)
    found = {name: (nest, info) for name, (nest, info) in run(write_c(tmp_path, DISJUNCTIONS)).items()}
    assert table(found["setiv@7"][1])[:3] == [("j", P), ("k", P), ("i", P)]
    assert table(found["edges@24"][1]) == [("i", P), ("j", C)]
    assert {"setiv@7", "edges@24"} <= verified_ports(tmp_path, DISJUNCTIONS)


def test_a_write_in_an_inner_loop_does_not_cover_a_read_after_it(tmp_path):
    # the loop over j may run zero times (m <= 0): v[i] then reads the value of an earlier iteration of i
    info = only_nest(tmp_path, HEAD + "void f(int m) { int i, j; float t = 0; for (i = 0; i < 100; i++) "
                                      "{ for (j = 0; j < m; j++) t = a[i][j]; v[i] = t; } }")
    assert table(info) == [("i", C), ("j", C)]
    assert any(r.array == "t" and r.kind == "flow" for r in info.loop("i").reasons)


def test_a_value_read_after_the_nest_needs_a_write_in_every_iteration(tmp_path):
    # `return t` reads the last write: the one of the last i only if the loop over j runs in it, which it does
    # in every iteration of i or in none when j runs m times (then t keeps the value it had: all_or_none) ...
    nested = only_nest(tmp_path, HEAD + "float f(int m) { int i, j; float t = 0; for (i = 0; i < 100; i++) "
                                        "for (j = 0; j < m; j++) { t = a[i][j]; b[i][j] = t; } return t; }")
    assert table(nested) == [("i", P), ("j", P)] and nested.loop("i").private == ("t",)
    # ... but not when j runs i times: i = 0 writes nothing, the others do
    nested = only_nest(tmp_path, HEAD + "float f(int m) { int i, j; float t = 0; for (i = 0; i < 100; i++) "
                                        "for (j = 0; j < i; j++) { t = a[i][j]; b[i][j] = t; } return t; }")
    assert table(nested) == [("i", C), ("j", P)]
    assert nested.loop("i").private == () and nested.loop("j").private == ("t",)
    assert any("not privatized" in n and "sits in an inner loop" in n for n in nested.notes)
    # written directly in the body of i: every iteration writes it, the last one leaves the value (lastprivate)
    direct = only_nest(tmp_path, HEAD + "float f(int m) { int i, j; float t = 0; for (i = 0; i < 100; i++) "
                                        "{ t = v[i]; for (j = 0; j < m; j++) b[i][j] = t; } return t; }")
    assert table(direct) == [("i", P), ("j", P)] and direct.loop("i").private == ("t",)


# SP's z_solve: `k1 = k + 1` in the innermost loop, then, after the loops over i and j but still in the body of m,
# `k1 = n - 1;` before the reads of the last rows
STEP_AFTER = """float w[4][50][100], x[4][50];
void f(int n) {
  int m, i, k, k1;
  for (m = 0; m < 4; m++) {
    for (i = 0; i < 50; i++)
      for (k = 0; k < n - 2; k++) {
        k1 = k + 1;
        w[m][i][k1] = w[m][i][k1] + w[m][i][k] * 0.5f;
      }
    k1 = n - 1;
    for (i = 0; i < 50; i++)
      x[m][i] = w[m][i][k1];
  }
}
"""


def test_a_write_after_the_loop_in_the_body_around_it_covers_the_reads_there(tmp_path):
    """The read of k1 after the loop over i sees `k1 = n - 1`, written after that loop in the same iteration of
    m: the value the loop leaves is never read, so k1 is private to i."""
    info = only_nest(tmp_path, STEP_AFTER)
    assert table(info) == [("m", P), ("i", P), ("k", C), ("i", P)]
    assert info.loop("i").private == ("k1",)


@requires_tool("cc")
@requires_tool("g++")
def test_a_write_after_the_loop_in_the_body_around_it_ports_and_verifies(tmp_path):
    program = STEP_AFTER.replace("float w[4][50][100]", "#include <stdio.h>\nfloat w[4][50][100]") + """
int main(void) {
  for (int m = 0; m < 4; m++) for (int i = 0; i < 50; i++) for (int k = 0; k < 100; k++) w[m][i][k] = (m + i * k) % 7;
  f(90);
  double s = 0;
  for (int m = 0; m < 4; m++) for (int i = 0; i < 50; i++) s += x[m][i] * (i + 1);
  printf("%.6f\\n", s);
  return 0;
}
"""
    assert "f@5" in verified_ports(tmp_path, program)


def test_a_write_before_the_loop_in_the_body_around_it_covers_nothing_after_it(tmp_path):
    """Moved before the loop over i, `k1 = n - 1` no longer stands between the loop and the read: the read sees the
    value of the loop's last iteration, and k1 is not private to i."""
    src = STEP_AFTER.replace("    k1 = n - 1;\n", "").replace("  for (m = 0; m < 4; m++) {\n",
                                                                 "  for (m = 0; m < 4; m++) {\n    k1 = n - 1;\n")
    assert src != STEP_AFTER
    info = only_nest(tmp_path, src)
    assert table(info)[1] == ("i", C) and info.loop("i").private == ()
    assert any(r.array == "k1" for r in info.loop("i").reasons)


def test_a_write_in_a_part_of_an_expression_that_may_be_skipped_is_not_certain(tmp_path):
    for expr in ("a[i][0] > 0 && (t = a[i][1])", "a[i][0] > 0 ? (t = a[i][1]) : 0", "a[i][0] > 0 || (t = 1)"):
        info = only_nest(tmp_path, HEAD + f"void f(void) {{ int i; float t = 0; for (i = 0; i < 100; i++) "
                                          f"{{ b[i][0] = {expr}; v[i] = t; }} }}")
        assert table(info) == [("i", C)], expr
    # a comma expression and a condition always evaluate their assignment
    info = only_nest(tmp_path, HEAD + "void f(void) { int i; float t = 0; for (i = 0; i < 100; i++) "
                                      "{ if ((t = a[i][1]) > 0) b[i][0] = 1; v[i] = t; } }")
    assert table(info) == [("i", P)] and info.loop("i").private == ("t",)


# --------------------------------------------------------------------------- index temporaries

FLAT = "void f(int n, int nx, float *restrict a, const float *restrict b) {{ int i, j; {decl} " \
       "for (i = 0; i < n; i++) for (j = 0; j < nx; j++) {{ {body} }} }}"


def test_an_index_temporary_declared_outside_the_nest_is_substituted(tmp_path):
    nest, info = nest_of(tmp_path, FLAT.format(decl="int c;", body="c = i * nx + j; a[c] = 2 * b[c];"))
    assert subscripts(nest, "a") == [("i", "j")] and subscripts(nest, "b") == [("i", "j")]
    assert table(info) == [("i", P), ("j", P)] and info.loop("i").private == ("c",)


def test_a_parameter_used_as_an_index_temporary_is_substituted(tmp_path):
    nest, info = nest_of(tmp_path, "void f(int n, int nx, int c, float *restrict a) { int i, j; "
                                   "for (i = 0; i < n; i++) for (j = 0; j < nx; j++) { c = i * nx + j; a[c] = 1; } }")
    assert subscripts(nest, "a") == [("i", "j")] and table(info) == [("i", P), ("j", P)]


def test_an_index_temporary_declared_in_the_body_is_substituted(tmp_path):
    nest, info = nest_of(tmp_path, FLAT.format(decl="", body="int c = i * nx + j; a[c] = 2 * b[c];"))
    assert subscripts(nest, "a") == [("i", "j")] and table(info) == [("i", P), ("j", P)]


def test_a_row_offset_is_substituted_in_the_inner_loop(tmp_path):
    nest, info = nest_of(tmp_path, "void f(int n, int nx, float *restrict a, const float *restrict b) "
                                   "{ int i, j, row; for (i = 0; i < n; i++) { row = i * nx; "
                                   "for (j = 0; j < nx; j++) a[row + j] = b[row + j]; } }")
    assert subscripts(nest, "a") == [("i", "j")] and table(info) == [("i", P), ("j", P)]


def test_a_temporary_reassigned_in_a_branch_is_not_substituted(tmp_path):
    nest, info = nest_of(tmp_path, FLAT.format(decl="int c;", body="c = i * nx + j; if (j > 2) c = 0; a[c] = b[c];"))
    assert subscripts(nest, "a") == [(None,)] and info.loop("i").status != P


def test_a_temporary_assigned_under_an_if_is_not_substituted(tmp_path):
    nest, info = nest_of(tmp_path, FLAT.format(decl="int c = 0;", body="if (j > 2) c = i * nx + j; a[c] = b[c];"))
    assert subscripts(nest, "a") == [(None,)] and info.loop("i").status != P


def test_a_use_before_the_assignment_sees_the_previous_iteration(tmp_path):
    nest, info = nest_of(tmp_path, FLAT.format(decl="int c = 0;", body="a[c] = b[c]; c = i * nx + j;"))
    assert subscripts(nest, "a") == [(None,)] and info.loop("i").status != P


def test_a_temporary_rewritten_later_in_an_inner_loop_is_not_substituted(tmp_path):
    # the second iteration of j reads the value the first one wrote
    nest, info = nest_of(tmp_path, "void f(int n, int nx, float *restrict a) { int i, j, c; "
                                   "for (i = 0; i < n; i++) { c = i * nx; for (j = 0; j < nx; j++) "
                                   "{ a[c + j] = 0; c = 7; } } }")
    assert subscripts(nest, "a") == [(None,)] and info.loop("i").status != P


def test_each_use_of_a_temporary_assigned_several_times_sees_its_own_assignment(tmp_path):
    # NPB BT's and SP's exact_rhs: `i = 1; forcing[i][j][k][m] = ...; i = 2; forcing[i][j][k][m] = ...;` in a loop
    # over m, inside loops where i is also a loop variable
    nest, info = nest_of(tmp_path, "double f[9][9][5], u[9][5]; void g(int n) { int i, j, m; "
                                   "for (j = 0; j < n; j++) { for (m = 0; m < 5; m++) { i = 1; f[i][j][m] = u[i + 1][m]; "
                                   "i = 2; f[i][j][m] += u[i - 1][m]; } for (i = 0; i < n; i++) f[i][j][0] = 0; } }")
    assert subscripts(nest, "f") == [("1", "j", "m"), ("2", "j", "m"), ("2", "j", "m"), ("i", "j", "0")]
    assert table(info) == [("j", P), ("m", P), ("i", P)]


def test_a_temporary_assigned_twice_is_two_values(tmp_path):
    # iteration j writes a[j] and a[j + 1]; iteration j + 1 writes a[j + 1] again: j is not parallel
    nest, info = nest_of(tmp_path, "float a[101]; void f(void) { int j, c; "
                                   "for (j = 0; j < 100; j++) { c = j; a[c] = 1; c = j + 1; a[c] = 2; } }")
    assert subscripts(nest, "a") == [("j",), ("j + 1",)] and info.loop("j").status == C


def test_a_temporary_written_in_an_inner_loop_is_not_substituted_there(tmp_path):
    # the first iteration of m reads c = i, the others c = i + 1 (written after the read, in m's body)
    nest, info = nest_of(tmp_path, "float a[101][8]; void f(void) { int i, m, c; for (i = 0; i < 100; i++) "
                                   "{ c = i; for (m = 0; m < 8; m++) { a[c][m] = m; c = i + 1; } } }")
    assert subscripts(nest, "a") == [(None, "m")] and info.loop("i").status != P


def test_a_narrowing_temporary_is_substituted_only_when_every_value_fits(tmp_path):
    narrow = "void f(int n, float *restrict a) {{ int i; {t} c; for (i = 0; i < n; i++) {{ c = i + 1; a[c] = 0; }} }}"
    nest, _ = nest_of(tmp_path, narrow.format(t="short"))
    assert subscripts(nest, "a") == [(None,)]          # i + 1 may not fit in a short
    fits = "void f(float *restrict a) { int i; unsigned char c; for (i = 0; i < 200; i++) { c = i + 1; a[c] = 0; } }"
    nest, info = nest_of(tmp_path, fits)
    assert subscripts(nest, "a") == [("i + 1",)] and table(info) == [("i", P)]


# --------------------------------------------------------------------------- the ports run

PROGRAM = r"""
#include <stdio.h>
#define N 12
double a[N][N][N];
float x[N * 20], y[N * 20], z[N * 20], w[N * 20];

void nested_private(int m) {
  int i, j, k;
  double t;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++) {
        t = 6.0 / m + i;
        a[i][j][k] = t + j * k;
      }
}

void index_temporary(int n, int nx, float *restrict dst, const float *restrict src) {
  int i, j, c;
  for (i = 0; i < n; i++)
    for (j = 0; j < nx; j++) {
      c = i * nx + j;
      dst[c] = 2 * src[c] + j;
    }
}

void local_temporary(int n, int nx, float *restrict dst, const float *restrict src) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < nx; j++) {
      int c = i * nx + j;
      dst[c] = src[c] * src[c];
    }
}

void row_offset(int n, int nx, float *restrict dst, const float *restrict src) {
  int i, j, row;
  for (i = 0; i < n; i++) {
    row = i * nx;
    for (j = 0; j < nx; j++)
      dst[row + j] = src[row + j] - i;
  }
}

double last_u;
void branch_private(int n, int s) {     /* written in each branch, read after: private, C's last value kept */
  int i;
  double u;
  for (i = 0; i < n; i++) {
    if (x[i] > 3) u = x[i] * s;
    else if (x[i] > 1) { w[i] = 0; u = -x[i]; }
    else u = 5;
    w[i] += u;
  }
  last_u = u;
}

int main(void) {
  int q;
  for (q = 0; q < N * 20; q++) { x[q] = q % 7; y[q] = 0; z[q] = 0; w[q] = 0; }
  nested_private(3);
  branch_private(N * 20 - 3, 2);
  index_temporary(12, 20, y, x);
  local_temporary(12, 20, w, x);
  row_offset(12, 20, z, x);
  printf("%f %f %f %f %f %f\n", a[3][4][5], y[100], z[101], w[7], w[20], last_u);
  return 0;
}
"""


def test_the_kernels_declare_the_private_copies(tmp_path):
    path = write_c(tmp_path, PROGRAM)
    out = tmp_path / "port.cu"
    assert main(["port", str(path), "-o", str(out)]) == 0
    text = out.read_text()
    for function, decl, write in (("nested_private", "double t;", "t = (6.0 / m) + i;"),
                                  ("index_temporary", "int c;", "c = (i * nx) + j;"),
                                  ("row_offset", "int row;", "row = i * nx;")):
        kernel = text[text.index(f"__global__ void c2gpu_{function}"):]
        kernel = kernel[:kernel.index("\n}\n")]
        assert decl in kernel and write in kernel, function     # one copy per thread, set by the thread


@pytest.mark.slow
@requires_tool("cc")
@requires_tool("g++")
def test_the_ports_verify(tmp_path):
    path = write_c(tmp_path, PROGRAM)
    res = verify(str(path), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    ported = {o.nest.function for o in res.outcomes if o.ported}
    assert {"nested_private", "index_temporary", "local_temporary", "row_offset", "branch_private"} <= ported


SEVERAL_ASSIGNMENTS = r"""
#include <stdio.h>
double f[12][12][5], u[12][5];
void g(int n) {
  int i, j, m;
  for (j = 0; j < n; j++) {
    for (m = 0; m < 5; m++) {
      i = 1;
      f[i][j][m] = f[i][j][m] - 0.25 * (5.0 * u[i][m] - 4.0 * u[i + 1][m]);
      i = 2;
      f[i][j][m] = f[i][j][m] - 0.25 * (-4.0 * u[i - 1][m] + 6.0 * u[i][m]);
    }
    for (i = 3; i < n; i++)
      for (m = 0; m < 5; m++)
        f[i][j][m] += u[i][m] * j;
  }
}
int main(void) {
  for (int i = 0; i < 12; i++)
    for (int m = 0; m < 5; m++) {
      u[i][m] = i * 0.5 + m;
      for (int j = 0; j < 12; j++) f[i][j][m] = i - j + m;
    }
  g(12);
  double s = 0;
  for (int i = 0; i < 12; i++) for (int j = 0; j < 12; j++) for (int m = 0; m < 5; m++) s += f[i][j][m] * (i + 2 * j + m);
  printf("%.17g\n", s);
  return 0;
}
"""


@requires_tool("cc")
@requires_tool("g++")
def test_a_temporary_assigned_several_times_ports_and_verifies(tmp_path):
    assert "g@6" in verified_ports(tmp_path, SEVERAL_ASSIGNMENTS)


# A global written only in a loop inside the thread (BT's `tmp1 = 1.0 / u[i][j][k][0]` in k, the code after the nest
# may read tmp1): the last iteration leaves C's value when the loops around the write run the same number of times in
# every iteration (or none: then C leaves the value at the nest's entry, where the last thread's copy starts)

INNER_WRITE = r"""
#include <stdio.h>
#define N 8
double u[N][N][N], f[N][N][N];
double tmp1, tmp2;
void g(int n, int m) {
  int i, j, k;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      for (k = 1; k < m; k++) {
        tmp1 = 1.0 / u[i][j][k];
        tmp2 = tmp1 * tmp1;
        f[i][j][k] = f[i][j][k - 1] + tmp1 + tmp2;
      }
}
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++) {
    u[i][j][k] = 1 + i + 2 * j + 3 * k; f[i][j][k] = k; }
  tmp1 = -1; tmp2 = -2;
  g(N, N);
  printf("%.17g %.17g %.17g\n", tmp1, tmp2, f[3][4][5]);
  tmp1 = -1; tmp2 = -2;
  g(N, 1);                                   /* k runs no iteration: tmp1 and tmp2 keep -1 and -2 */
  printf("%.17g %.17g\n", tmp1, tmp2);
  return 0;
}
"""


@requires_tool("cc")
@requires_tool("g++")
def test_a_global_written_in_an_inner_loop_is_private_and_keeps_c_s_last_value(tmp_path):
    assert "g@8" in verified_ports(tmp_path, INNER_WRITE)
    info = run(tmp_path / "t.c")["g@8"][1]
    assert info.loop("i").status == P and set(info.loop("i").private) >= {"tmp1", "tmp2"}


def test_a_global_written_in_a_triangular_inner_loop_is_not_private(tmp_path):
    # k runs i times: the last iteration of i writes tmp1, an earlier one (i = 0) does not; with n = 1 only i = 0
    # runs, and C leaves tmp1 as it was, which no thread can tell from the iteration that ran
    info = only_nest(tmp_path, "double u[8][8], f[8][8]; double tmp1; void g(int n) { int i, k; "
                               "for (i = 0; i < n; i++) for (k = 0; k < i; k++) { tmp1 = u[i][k]; f[i][k] = tmp1; } }")
    assert info.loop("i").status != P
    assert any("may not run in the last iteration" in n for n in info.notes), info.notes
