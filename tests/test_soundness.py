"""Sound on real C: loops whose parallelism depends on C semantics the IR used to drop.

Each program here was claimed parallel (or a reduction) by c2gpu before the IR kept C's meaning
(conversions, side effects, scopes, idioms, pointers): the loop is not parallel as written, and
c2gpu must not say it is.  Where the answer is "not proven", the reason must name what blocks it.
"""
import subprocess
import sys

import pytest

from conftest import requires_tool, write_c
from test_dependence import only_nest

PARALLEL = ("parallel", "reduction")


def verdict(tmp_path, source, loop=0, assume_no_alias=False):
    return only_nest(tmp_path, source, assume_no_alias=assume_no_alias).loop(loop)


# ----------------------------------------------------------------------------------------- conversions

@pytest.mark.parametrize("source,why", [
    # (unsigned char)i wraps at 256: iterations i and i + 256 write the same element
    ("int c[256]; void f(void) { int i; for (i = 0; i < 512; i++) c[(unsigned char)i] = i; }",
     "(unsigned char) i"),
    # a narrow local: k = i + 1 is 0 again at i = 255
    ("int d[300]; void f(void) { int i; for (i = 0; i < 300; i++) { unsigned char k = i + 1; d[k] = i; } }",
     "unsigned char"),
    # (short)i == 3 holds at i = 3 and at i = 65539: two iterations write x[0]
    ("int x[1]; void f(void) { int i; for (i = 0; i < 70000; i++) if ((short)i == 3) x[0] = i; }",
     "(short) i"),
    # compared as unsigned, every negative i is > 8u too: eleven iterations write x[0], not one
    ("int x[1]; void f(void) { int i; for (i = -10; i < 10; i++) if (i > 8u) x[0] = i; }",
     "i > 8u"),
    # unsigned arithmetic wraps: u - 1 at u = 0 is 4294967295, 65535 as an unsigned short, like u = 65536
    ("int c[65536]; void f(void) { unsigned u; for (u = 0; u < 65537; u++) c[(unsigned short)(u - 1)] = u; }",
     "u - 1"),
])
def test_conversions_are_not_ignored(tmp_path, source, why):
    v = verdict(tmp_path, source)
    assert v.status not in PARALLEL
    assert any(why in r.message for r in v.reasons), [r.message for r in v.reasons]


def test_constant_conversions_are_folded(tmp_path):
    # (unsigned char)(13 * 20) is 4 and (_Bool)2 is 1, as C computes them: the bound and subscript are exact
    v = verdict(tmp_path, "int x[300]; void f(void) { int i; for (i = 0; i < (unsigned char)(13 * 20); i++) "
                          "x[i + 2 * (_Bool)2] = x[i]; }")
    assert v.status == "carried" and any(r.distance == (2,) for r in v.reasons)
    assert only_nest(tmp_path, "int x[300]; void f(void) { int i; for (i = 0; i < (unsigned char)(13 * 20); i++) "
                               "x[i] = 0; }").loop(0).status == "parallel"


def test_value_preserving_conversions_stay_affine(tmp_path):
    # i < 200 always fits in an unsigned char; (long) and (unsigned) of a non-negative int change nothing
    src = ("int c[256], d[256], e[256]; void f(void) { int i; for (i = 0; i < 200; i++) "
           "{ c[(unsigned char)i] = i; d[(long)i] = i; e[(unsigned)i] = i; } }")
    assert verdict(tmp_path, src).status == "parallel"


@pytest.mark.parametrize("header", [
    "for (unsigned char c = 0; c < 300; c++) x[c % 300] = c;",      # c never reaches 300: it never stops
    "for (unsigned c = 10; c >= 0; c--) x[c % 300] = c;",           # an unsigned is always >= 0
    "for (int c = -1; c < m; c++) x[c + 1] = c;",                    # -1 < m (unsigned) is false: no iteration
])
def test_loops_that_wrap_are_not_modelled_as_affine(tmp_path, header):
    v = verdict(tmp_path, f"int x[300]; void f(unsigned m) {{ {header} }}", )
    assert v.status not in PARALLEL and any(r.code == "non-affine-bound" for r in v.reasons)


def test_truncating_accumulator_is_not_a_reduction(tmp_path):
    # int s; s += x[i] with float x truncates at every step: (int)(s + x[i]) is no sum of the x[i]
    v = verdict(tmp_path, "float x[100]; int g; void f(void) { int i, s = 0; for (i = 0; i < 100; i++) "
                          "s += x[i]; g = s; }")
    assert v.status == "carried" and v.reductions == ()
    ok = verdict(tmp_path, "float x[100]; float g; void f(void) { int i; float s = 0; for (i = 0; i < 100; i++) "
                           "s += x[i]; g = s; }")
    assert ok.status == "reduction" and ok.reductions == ("s",)


def test_narrow_accumulator_is_not_a_reduction(tmp_path):
    v = verdict(tmp_path, "int x[100]; short g; void f(void) { int i; short s = 0; for (i = 0; i < 100; i++) "
                          "s += x[i]; g = s; }")
    assert v.status not in PARALLEL


# ----------------------------------------------------------------------------------------- side effects

def test_for_header_write_flows_to_the_next_iteration(tmp_path):
    # x[i] = j reads the exit value of the previous iteration's inner loop
    v = verdict(tmp_path, "int x[100], y[100][3]; void f(void) { int i, j = 0; for (i = 0; i < 100; i++) "
                          "{ x[i] = j; for (j = 0; j < 3; j++) y[i][j] = 0; } }")
    assert v.status == "carried" and any(r.array == "j" and r.kind == "flow" for r in v.reasons)


def test_exit_value_read_after_an_enclosing_loop_that_may_not_run(tmp_path):
    # x[i] = j reads the j of the previous iteration of i whenever the k loop does not run (m <= 0)
    v = verdict(tmp_path, "int x[100], y[100][3]; void f(int m) { int i, j = 0, k; for (i = 0; i < 100; i++) "
                          "{ for (k = 0; k < m; k++) for (j = 0; j < 3; j++) y[i][j] = k; x[i] = j; } }")
    assert v.status == "carried" and any(r.array == "j" for r in v.reasons)


def test_exit_value_read_in_the_same_iteration_is_private(tmp_path):
    v = verdict(tmp_path, "int x[100], y[100][3]; void f(int m) { int i, j; for (i = 0; i < 100; i++) "
                          "{ for (j = 0; j < m; j++) y[i][j] = 0; x[i] = j; } }")
    assert v.status == "parallel" and v.private == ("j",)


def test_pointer_to_the_loop_variable(tmp_path):
    # *p = 20 changes i: iteration 5 ends the loop's ordinary progression
    v = verdict(tmp_path, "int a[100]; void f(void) { int i; int *p = &i; for (i = 0; i < 100; i++) "
                          "{ a[i] = i; if (i == 5) *p = 20; } }", assume_no_alias=True)
    assert v.status not in PARALLEL and any(r.code == "address-taken" for r in v.reasons)


def test_global_loop_variable_written_through_a_pointer(tmp_path):
    v = verdict(tmp_path, "int g; void f(int *q) { for (g = 0; g < 100; g++) q[g] = 0; }", )
    assert v.status not in PARALLEL and any(r.code == "exposed-loop-variable" for r in v.reasons)


# ----------------------------------------------------------------------------------------- idioms

@pytest.mark.parametrize("body", [
    "if (a[i] > m) { m = a[i]; flag[i] = 1; }",                  # the guard also controls a flag array
    "if (a[i] > m) { m = a[i]; count++; }",                      # ... or a counter
    "if (a[i] > m) m = a[i]; else if (a[i] < lo) lo = a[i];",    # an else-if chain reads m
])
def test_guarded_max_controlling_more_is_not_a_reduction(tmp_path, body):
    v = verdict(tmp_path, "float a[100]; int flag[100]; float g, h; int k; void f(void) { int i, count = 0; "
                          f"float m = 0, lo = 0; for (i = 0; i < 100; i++) {body} g = m; h = lo; k = count; }}")
    assert v.status not in PARALLEL


def test_user_function_named_min_is_a_call(tmp_path):
    # the file's own min counts its calls: not the min idiom (inlined where its value is assigned, m carries
    # from one iteration to the next)
    v = verdict(tmp_path, "int calls; int min(int a, int b) { calls++; return a < b ? a : b; } int a[100], g; "
                          "void f(void) { int i, m = 1000; for (i = 0; i < 100; i++) m = min(m, a[i]); g = m; }")
    assert v.status not in PARALLEL and any(r.array == "m" for r in v.reasons)


# ----------------------------------------------------------------------------------------- pointers

@pytest.mark.parametrize("decl,use", [
    ("int *rows[4]", "rows[i][0] = rows[i][0] + 1;"),           # an array of pointers: rows may be one buffer
    ("float **rows", "rows[i][0] = rows[i][0] + 1;"),           # the same through a pointer to pointers
])
def test_rows_of_pointers_may_alias(tmp_path, decl, use):
    src = f"void f({decl}) {{ int i; for (i = 0; i < 4; i++) {use} }}" if "**" in decl else \
          f"{decl}; void f(void) {{ int i; for (i = 0; i < 4; i++) {use} }}"
    v = verdict(tmp_path, src, assume_no_alias=True)
    assert v.status not in PARALLEL and any("rows of 'rows'" in r.message for r in v.reasons)


def test_assume_no_alias_does_not_cover_a_local_pointer(tmp_path):
    # p is buf + 1: p[i] = buf[i] carries a flow dependence whatever the option says (p, set once, is read as
    # buf[1 + i]: frontend/row_pointers.py; and p = buf + 1 reassigned later stays a pointer the option does
    # not cover)
    v = verdict(tmp_path, "void f(float *buf) { int i; float *p = buf + 1; for (i = 0; i < 99; i++) "
                          "p[i] = buf[i]; }", assume_no_alias=True)
    assert v.status not in PARALLEL and any(r.kind == "flow" and r.exact for r in v.reasons)
    v = verdict(tmp_path, "void f(float *buf, int k) { int i; float *p = buf + 1; if (k) p = buf + 2; "
                          "for (i = 0; i < 99; i++) p[i] = buf[i]; }", assume_no_alias=True)
    assert v.status not in PARALLEL and any(r.kind == "alias" for r in v.reasons)


def test_assume_no_alias_does_not_cover_a_reassigned_parameter(tmp_path):
    # u1 = u2 inside the time loop makes them the same array: a fact the option cannot override
    src = ("void f(float *u1, float *u2) { int t, i; for (t = 0; t < 10; t++) { "
           "for (i = 1; i < 99; i++) u2[i] = u1[i - 1] + u1[i + 1]; u1 = u2; } }")
    v = verdict(tmp_path, src, loop=1, assume_no_alias=True)
    assert v.status not in PARALLEL
    ok = verdict(tmp_path, src.replace("u1 = u2;", ""), loop=1, assume_no_alias=True)
    assert ok.status == "parallel"


# ----------------------------------------------------------------------------------------- live-out values, end to end

@requires_tool("g++")
def test_values_left_behind_are_those_of_the_original(tmp_path):
    # t (last iteration), j (an inner loop's exit value) and i (the loop variable) are read after the nest:
    # the port must leave the same values, and verify compares them
    path = write_c(tmp_path, """#include <stdio.h>
float a[64], b[64][4];
int main(void) {
    int i, j;
    float t = 5;
    for (i = 0; i < 64; i++) a[i] = i * 0.5f;
    for (i = 0; i < 64; i++) {
        t = a[i] * 3;
        for (j = 0; j < 4; j++)
            b[i][j] = t + j;
    }
    printf("%f %d %d %f\\n", t, i, j, b[63][3]);
    return 0;
}
""")
    out = subprocess.run([sys.executable, "-m", "c2gpu", "verify", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS" in out.stdout and "2 nests checked" in out.stdout, out.stdout
