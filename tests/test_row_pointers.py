"""Row pointers (c2gpu/frontend/row_pointers.py): a pointer the nest's body declares into an array and then only
indexes is read as that array's elements, so the loop is proven (a local pointer of every iteration is an
object c2gpu does not follow).  Every condition that makes the rewrite exact has a case where it fails and the
pointer is left alone.  The ports run against the original on the CPU execution layer."""
from __future__ import annotations

import pytest

from c2gpu.drivers.driver import make_manager
from c2gpu.drivers.port import PIPELINE
from c2gpu.drivers.verify import verify
from c2gpu.frontend import PreprocessOptions
from conftest import requires_tool, write_c
from test_dependence import run, table

PROGRAM = r"""
#include <stdio.h>
#define N 64
#define M 48
static float A[N * M], B[N][M], x[M], y[N], z[N], w[N * M];
static void gemv(int n, int m, const float *restrict a, const float *restrict v, float *restrict out)
{
  for (int i = 0; i < n; i++) {
    const float *row = a + (long)i * m;
    float s = 0;
    for (int j = 0; j < m; j++)
      s += row[j] * v[j];
    out[i] = s;
  }
}
static void rows_of_b(int n, int m)
{
  for (int i = 0; i < n; i++) {
    float *r = B[i];
    float first = *r;
    for (int j = 0; j < m; j++)
      r[j] = 2 * r[j] + first;
  }
}
static void walked(int n, int m, const float *restrict a, float *restrict out)
{
  const float *row = a + m;              /* declared before the nest, moved by a row length in it */
  for (int i = 0; i < n - 1; i++) {
    float s = 0;
    for (int j = 0; j < m; j++)
      s += row[j];
    out[i] = s;
    row += m;
  }
}
static void shifted(int n, int m)
{
  for (int i = 1; i < n; i++) {
    float *dst = w + i * m, *src = A + (i - 1) * m;
    for (int j = 0; j < m; j++)
      dst[j] = src[j] - 1;
  }
}
int main(void)
{
  for (int i = 0; i < N * M; i++) A[i] = (i % 17) * 0.5f;
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) B[i][j] = i - j;
  for (int j = 0; j < M; j++) x[j] = j * 0.25f;
  gemv(N, M, A, x, y);
  rows_of_b(N, M);
  shifted(N, M);
  walked(N, M, A, z);
  double s = 0;
  for (int i = 0; i < N; i++) s += y[i] + z[i];
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) s += B[i][j] + w[i * M + j];
  printf("%.6f\n", s);
  return 0;
}
"""


def test_row_pointers_are_read_as_elements(tmp_path):
    nests = run(write_c(tmp_path, PROGRAM))
    for name in ("gemv@8", "rows_of_b@18", "shifted@38", "walked@28"):
        nest, info = nests[name]
        assert table(info)[0][1] == "parallel", (name, table(info))
    gemv, _ = nests["gemv@8"]
    assert any("'row' (line 9) is always a + (((long) i) * m)" in note for note in gemv.rewrites)
    walked, _ = nests["walked@28"]
    assert any("'row' is a + m where the nest starts (line 27; the function assigns it nowhere else)" in note
               for note in walked.rewrites)
    shifted, _ = nests["shifted@38"]
    assert sum("is always" in note for note in shifted.rewrites) == 2       # two pointers of one declaration


@requires_tool("cc")
@requires_tool("g++")
def test_ports_with_row_pointers_match_the_original(tmp_path):
    res = verify(str(write_c(tmp_path, PROGRAM)), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    assert {"gemv@8", "rows_of_b@18", "shifted@38", "walked@28"} <= {o.nest.name for o in res.outcomes if o.ported}


@pytest.mark.parametrize("body", [
    # the pointer is moved after its declaration
    "float *r = a + i * m; r++; for (int j = 0; j < m; j++) out[i] += r[j];",
    # used as a value, not only indexed
    "float *r = a + i * m; keep(r); for (int j = 0; j < m; j++) out[i] += r[j];",
    # the offset reads a variable the body writes
    "float *r = a + k * m; k = k * 2; for (int j = 0; j < m; j++) out[i] += r[j];",
    # a cast: another element type
    "const char *r = (const char *)a; for (int j = 0; j < m; j++) out[i] += r[j];",
    # the offset reads a global a call could change
    "float *r = a + g; for (int j = 0; j < m; j++) out[i] += r[j];",
])
def test_a_row_pointer_is_left_alone_unless_the_rewrite_is_exact(tmp_path, body):
    source = ("int g; void keep(float *p);\n"
              f"void f(int n, int m, int k, float *restrict a, float *restrict out) {{ "
              f"for (int i = 0; i < n; i++) {{ {body} }} }}\n")
    (nest, info), = run(write_c(tmp_path, source)).values()
    assert not any("is always" in note for note in nest.rewrites), nest.rewrites


@pytest.mark.parametrize("before, after", [
    # assigned again elsewhere in the function
    ("const float *row = a; if (m > 4) row = a + 4;", ""),
    # the array it points into is a parameter the function reassigns
    ("const float *row = a;", "a = 0;"),
    # the offset reads a variable the function assigns
    ("int k = 2; const float *row = a + k;", "k = 3;"),
    # its address is taken
    ("const float *row = a; const float **pp = &row;", ""),
])
def test_a_pointer_declared_before_the_nest_is_left_alone_unless_it_is_fixed(tmp_path, before, after):
    source = (f"void f(int n, int m, const float *a, float *restrict out) {{ {before} "
              f"for (int i = 0; i < n; i++) {{ float s = 0; for (int j = 0; j < m; j++) s += row[j]; out[i] = s; "
              f"row += m; }} {after} }}\n")
    (nest, info), = run(write_c(tmp_path, source)).values()
    assert not any("where the nest starts" in note for note in nest.rewrites), nest.rewrites
