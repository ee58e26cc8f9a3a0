"""Induction counters (c2gpu/frontend/inductions.py): `j++` once per iteration of the nest's outer loop is read as
j + the iteration number, so the loop is parallel; every condition that makes the rewrite exact has a case
where it fails and the counter is left alone (the loop then carries a dependence on it).  The ports are run
against the original on the CPU execution layer, counters' values after the nest included."""
from __future__ import annotations

import pytest

from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions
from c2gpu.drivers.port import PIPELINE
from c2gpu.drivers.verify import verify
from conftest import requires_tool, write_c
from test_dependence import run, table

P = "parallel"
HEAD = "double a[100], b[100], c[300]; int idx[100];\n"


def only(tmp_path, body: str, decls: str = "int i, j = 0;"):
    """(nest, dependence info) of `void f(int m) { decls body }`."""
    nests = run(write_c(tmp_path, HEAD + f"void f(int m) {{ {decls} {body} }}\n"))
    assert len(nests) == 1, list(nests)
    return next(iter(nests.values()))


def subscripts(nest, array: str) -> list[str]:
    return [a.subscripts[0].to_c() for s in nest.statements() for a in s.accesses if a.array == array]


@pytest.mark.parametrize("body, counter, step", [
    # DataRaceBench DRB112 (`linear(j)`)
    ("for (i = 0; i < 100; i++) { c[j] += a[i] * b[i]; j++; }", "j", 1),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; ++j; }", "j", 1),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j += 1; }", "j", 1),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j = j + 1; }", "j", 1),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j = 1 + j; }", "j", 1),
    ("for (i = 99; i >= 0; i--) { c[j + 200] = a[i]; j--; }", "j", -1),
    ("for (int k = m; k < m + 100; ++k) { c[j] = a[k - m]; j++; }", "j", 1),
    # a step inside an assignment (DataRaceBench DRB018's output[outLen++] = input[i]), a body without braces
    ("for (i = 0; i < 100; i++) c[j++] = a[i];", "j", 1),
    ("for (i = 0; i < 100; i++) { b[i] = c[++j]; a[i] = j; }", "j", 1),
    ("for (i = 99; i >= 0; i--) c[j-- + 200] += a[i];", "j", -1),
])
def test_a_counter_stepped_once_per_iteration_is_substituted(tmp_path, body, counter, step):
    nest, info = only(tmp_path, body)
    assert [(ind.name, ind.step) for ind in nest.inductions] == [(counter, step)]
    assert table(info)[0][1] == P, table(info)
    assert any(f"'{counter}' counts the iterations" in r for r in nest.rewrites)


def test_a_counter_stepped_in_an_inner_loop_counts_both_loops(tmp_path):
    # flattening a matrix: k = k0 + (i * 10 + j) in the inner body; after the nest k0 + 100 * 10
    nest, info = only(tmp_path, "for (i = 0; i < 100; i++) for (q = 0; q < 3; q++) c[k++] = a[i] * q;",
                      "int i, q, k = 0;")
    assert table(info) == [("i", P), ("q", P)]
    assert [(ind.name, ind.loops, ind.inner_trips) for ind in nest.inductions] == [("k", ("i", "q"), ("3 - 0",))]
    assert subscripts(nest, "c") == ["3*i + k + q"]


@pytest.mark.parametrize("body, why", [
    ("for (i = 0; i < 100; i++) for (q = 0; q < i; q++) c[k++] = a[i];", "triangular: the trip count changes"),
    ("for (i = 0; i < 100; i++) { b[i] = k; for (q = 0; q < 3; q++) c[k++] = a[i]; }",
     "read outside the inner loop's body"),
    ("for (i = 0; i < 100; i++) if (a[i] > 0) for (q = 0; q < 3; q++) c[k++] = a[i];", "the inner loop under an if"),
    ("for (i = 0; i < 100; i++) for (q = 0; q < m; q++) { c[k++] = a[i]; m = 2; }", "the body changes the bound"),
    ("for (i = 0; i < 100; i++) for (q = 0; q != 3; q++) c[k++] = a[i];", "a condition that is no bound"),
])
def test_an_inner_counter_is_left_alone_unless_the_count_is_exact(tmp_path, body, why):
    nests = run(write_c(tmp_path, HEAD + f"void f(int m) {{ int i, q, k = 0; {body} }}\n"))
    nest, info = next(iter(nests.values()))
    assert nest.inductions == (), why


def test_the_iteration_number_takes_the_counters_type(tmp_path):
    # with an unsigned loop variable, j + (u - 0) would be unsigned: p[j + ...] would not be p[-5] for j = -5
    nest, info = only(tmp_path, "int *p = idx + 50; for (u = 0; u < 50; u++) { p[j] = (int)u; j++; }",
                      "unsigned u; int j = -5;")
    assert table(info) == [("u", P)]
    assert subscripts(nest, "idx") == ["j + u + 50"]      # p is idx + 50 (frontend/objects.py alias)


def test_uses_before_and_after_the_step_see_this_iterations_values(tmp_path):
    nest, info = only(tmp_path, "for (i = 0; i < 100; i++) { c[j] = a[i]; j++; c[j + 100] = b[i]; }",
                      "int i; long j = 5;")
    assert table(info) == [("i", P)]
    assert subscripts(nest, "c") == ["i + j", "i + j + 101"]


def test_the_reports_say_what_was_rewritten(tmp_path):
    import json
    import subprocess
    import sys
    path = write_c(tmp_path, HEAD + "void f(void) { int i, j = 3; for (i = 0; i < 100; i++) { c[j] = a[i]; j++; } "
                                    "c[0] = j; }\n")
    text = subprocess.run([sys.executable, "-m", "c2gpu", "analyze", str(path), "--gpu", "none"], capture_output=True,
                          text=True, check=True).stdout
    assert "  rewritten     'j' counts the iterations of loop 'i' (line 2)" in text, text
    doc = json.loads(subprocess.run([sys.executable, "-m", "c2gpu", "analyze", str(path), "--gpu", "none", "--format",
                                     "json"], capture_output=True, text=True, check=True).stdout)
    nest = doc["files"][0]["nests"][0]
    assert nest["inductions"] == [{"name": "j", "type": "int", "step": 1, "line": 2}]
    assert nest["loop_verdicts"][0]["status"] == P


def test_a_counter_read_only_after_the_nest_is_live_after_it(tmp_path):
    nest, info = only(tmp_path, "for (i = 0; i < 100; i++) { a[i] = 0; j++; } c[0] = j;")
    assert nest.inductions and "j" in nest.live_after and table(info) == [("i", P)]


@pytest.mark.parametrize("body, decls, why", [
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; if (a[i] > 0) j++; }", "int i, j = 0;", "stepped under a condition"),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j++; j++; }", "int i, j = 0;", "stepped twice"),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j += 2; }", "int i, j = 0;", "a step of two"),
    ("for (i = 0; i < 100; i++) { if (a[i] < 0) break; c[j] = a[i]; j++; }", "int i, j = 0;", "a break"),
    ("for (i = 0; i < 100; i++) { if (a[i] < 0) continue; c[j] = a[i]; j++; }", "int i, j = 0;",
     "a continue skips the step"),
    ("int *p = &j; for (i = 0; i < 100; i++) { c[j] = a[i] + *p; j++; }", "int i, j = 0;", "address taken"),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j++; }", "int i; volatile int j = 0;", "volatile"),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j++; }", "int i; short j = 0;", "narrower than int: wraps"),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j++; }", "int i; unsigned char j = 0;", "narrower than int"),
    ("for (i = 0; i < 100 && j < 90; i++) { c[j] = a[i]; j++; }", "int i, j = 0;", "read in the header"),
    ("for (i = 0; i < 100; i += 2) { c[j] = a[i]; j++; }", "int i, j = 0;", "the loop steps by two"),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j++; i++; }", "int i, j = 0;", "the body writes the loop variable"),
    ("for (i = m; i < 100; i++) { c[j] = a[i]; j++; m = 0; }", "int i, j = 0;", "the body writes the start"),
    ("for (i = idx[0]; i < 100; i++) { c[j] = a[i]; j++; idx[0] = 1; }", "int i, j = 0;",
     "the start reads memory the nest writes"),
    ("for (i = 0; i < 100; i++) { int j = i; c[j] = a[i]; j++; }", "int i;", "declared in the body"),
    ("for (i = 0; i < 100; i++) { { int i = 5; c[j + i] = a[i]; } j++; }", "int i, j = 0;",
     "the loop variable hidden where the counter is read"),
    ("for (i = m; i < 100; i++) { { int m = 1; c[j + m] = a[i]; } j++; }", "int i, j = 0;",
     "the start's variable hidden where the counter is read"),
    ("for (i = 0; i < 100; i++) { c[g] = a[i]; g++; }", "int i;", "a global"),
    ("for (i = 0; i < 100; i++) { c[j] = a[i]; j++; c[j] = (j = 3); }", "int i, j = 0;", "written elsewhere"),
    ("for (i = 0; i < 100; i++) c[j++] = a[i] + j;", "int i, j = 0;", "read in the statement that steps it"),
    ("for (i = 0; i < 100; i++) b[i] = a[i] > 0 ? c[j++] : 0;", "int i, j = 0;", "stepped under ?:"),
    ("for (i = 0; i < 100; i++) b[i] = a[i] > 0 && c[j++] > 0;", "int i, j = 0;", "stepped under &&"),
    ("for (i = 0; i < 100; i++) if (a[i] > 0) c[j++] = a[i];", "int i, j = 0;", "stream compaction"),
    ("for (i = 0; i < 100; i++) { c[j++] = a[i]; j++; }", "int i, j = 0;", "stepped twice"),
])
def test_a_counter_is_left_alone_unless_the_rewrite_is_exact(tmp_path, body, decls, why):
    nests = run(write_c(tmp_path, HEAD + f"int g;\nvoid f(int m) {{ {decls} {body} }}\n"))
    nest, info = next(iter(nests.values()))
    assert nest.inductions == (), why
    assert table(info)[0][1] != P, why


PROGRAM = r"""
#include <stdio.h>
double a[64], c[300], d[300], e[300], m[40][40];
int steps(int n, int z)                /* called with n = 0 too: z keeps its value */
{
  int i;
  for (i = 0; i < n; i++) {
    c[i] = z;
    z++;
  }
  return z;
}
int main(void)
{
  int i, n = 64, j = 7, k = 0, z, only = 3, fronts = 0, only2 = 0, down = 80, pre = 0;
  unsigned u = 2;                      /* counts down through zero: wraps */
  long w = 100;
  for (i = 0; i < 64; i++)
    a[i] = i * 0.5 + 1;
  for (i = 0; i < n; i++) {            /* before and after the step */
    c[j] += a[i];
    j++;
    d[j + 100] = a[i] * 2;
  }
  for (i = n - 1; i >= 0; i--) {       /* counting down, a long counter */
    w--;
    c[w + 100] += a[i];
  }
  for (i = 0; i < n; i++) {            /* an unsigned counter wrapping below zero */
    c[i] += (double)(u % 1000u);
    u--;
  }
  z = steps(0, 11) + steps(5, 20);
  for (i = 0; i < n; i++)              /* stepped inside the statement, no braces */
    e[only2++] = a[i] + 1;
  for (i = n - 1; i >= 0; i--)
    e[down-- + 100] += a[i];
  for (i = 0; i < n; i++) {
    e[++pre + 200] = a[i];
    d[pre] += 1;
  }
  for (i = 0; i < n; i++) {            /* a counter the nest never reads */
    c[i + 200] = a[i];
    only++;
  }
  for (i = 0; i < 40; i++)
    for (k = 0; k < 40; k++)
      m[i][k] = (i * 7 + k) % 5;
  for (i = 1; i < 40; i++) {           /* a wavefront: the fronts, not i, are the rewritten outer loop */
    for (k = 1; k < 40; k++)
      m[i][k] = m[i - 1][k] + m[i][k - 1] * 0.5;
    fronts++;
  }
  k = 0;
  for (i = 0; i < 10; i++)
    k += j + (int)w + (int)(u % 7u) + z + only + fronts + only2 + down + pre;
  printf("%d %ld %u %d %d %d %d %d %d %.3f %.3f %.3f %.3f %.3f %.3f\n", j, w, u, z, only, fronts, down, pre, k,
         c[8], c[150], d[108], d[30], e[150], m[39][39]);
  return 0;
}
"""


@requires_tool("cc")
@requires_tool("g++")
def test_ports_with_counters_match_the_original(tmp_path):
    path = write_c(tmp_path, PROGRAM)
    res = verify(str(path), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    counted = {o.nest.name: [ind.name for ind in o.nest.inductions] for o in res.outcomes if o.ported}
    assert sorted(name for names in counted.values() for name in names) == ["down", "fronts", "j", "only", "only2", "pre", "u", "w", "z"], \
        counted
    assert any("wavefront" in note for o in res.outcomes if "fronts" in [i.name for i in o.nest.inductions]
               for note in o.nest.rewrites)


# Counters where a slip would show: one that bounds an inner loop, one a parameter read after the nest (and a
# call where the loop runs zero times), one in a nest that runs three times inside a while loop, two in one
# loop (one counting down, read in a guard), a long one stepped down inside an assignment under a size_t loop.
TRICKY = r"""
#include <stdio.h>
#include <stddef.h>
double a[200], b[200], c[400];
long steps(long j, int n)
{
  int i;
  for (i = 0; i < n; i++)              /* a parameter counter, read after the nest */
    c[j++] += a[i];
  return j * 3;
}
int main(void)
{
  int i, q, r = 0, j = 4, k = 10, h = 100, g = 0;
  long d = 150;
  for (i = 0; i < 200; i++) { a[i] = i * 0.25; b[i] = 0; }
  for (i = 0; i < 50; i++) {           /* the counter bounds an inner loop */
    for (q = 0; q < j; q++)
      b[i] += 1;
    j++;
  }
  while (r < 3) {                      /* the nest runs three times: the counter goes on */
    for (i = 0; i < 20; i++) {
      c[k] = a[i] + r;
      k++;
    }
    r++;
  }
  for (i = 0; i < 60; i++) {           /* two counters, one down, one read in a guard */
    if (h % 3 == 0)
      c[h + 100] = a[i];
    b[i + 100] += (double)g;
    h--;
    g += 1;
  }
  for (size_t s = 0; s < 40; s++)      /* a size_t loop variable, a long counter stepped down inside */
    c[--d] += a[s];
  printf("%ld %ld %d %d %d %d %ld %.3f %.3f %.3f %.3f\n", steps(7, 30), steps(2, 0), j, k, h, g, d,
         b[10], c[40], c[160], b[150]);
  return 0;
}
"""


@requires_tool("cc")
@requires_tool("g++")
def test_tricky_counters_match_the_original(tmp_path):
    res = verify(str(write_c(tmp_path, TRICKY)), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    counted = sorted(i.name for o in res.outcomes if o.ported for i in o.nest.inductions)
    assert counted == ["d", "g", "h", "j", "j", "k"], counted


# Counters stepped in inner loops: a flattening copy (constant sizes: parallel), one stepped inside an
# assignment of a <= loop starting at 2 with another statement around, a triangular one (left alone), and a
# function with symbolic sizes called once with an empty outer loop (the product of the trip counts, none below 0).
FLATTENING = r"""
#include <stdio.h>
#define N 30
double in[N][N], out[N * N + 10], out2[2000];
void pack(int n, int m)
{
  int i, j, k = 0;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      out2[k++] = in[i][j] * 2;
  printf("pack %d\n", k);
}
int main(void)
{
  int i, j, k = 5, z = 0;
  long w = 3;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      in[i][j] = i * 0.5 + j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      out[k] = in[i][j];
      k++;
    }
  for (i = 0; i < 10; i++) {
    out2[i] = i;
    for (j = 2; j <= 5; j++)
      out2[100 + w++] = in[i][j];
  }
  for (i = 0; i < 10; i++)            /* triangular: not substituted */
    for (j = 0; j < i; j++)
      out2[500 + z++] = in[i][j];
  pack(20, 25);
  pack(0, 25);
  printf("%d %ld %d %.2f %.2f %.2f\n", k, w, z, out[400], out2[120], out2[520]);
  return 0;
}
"""


@requires_tool("cc")
@requires_tool("g++")
def test_counters_of_inner_loops_match_the_original(tmp_path):
    res = verify(str(write_c(tmp_path, FLATTENING)), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    ported = {o.nest.name: [(i.name, i.loops) for i in o.nest.inductions] for o in res.outcomes if o.ported}
    assert ported["main@20"] == [("k", ("i", "j"))] and ported["main@25"] == [("w", ("i", "j"))], ported


# Pointers walked through arrays, as C programs copy and scale buffers: `*dst++ = ... *src++`, a pointer moved by a
# row length after each row, one walked backwards; and the cases left alone (a pointer read after the loop, one
# moved by a stride the loop changes).
POINTERS = r"""
#include <stdio.h>
#define N 300
#define M 24
static float x[N], y[N], z[N];
static double grid[40 * M], rows[40][M];
static void scale(int n, float *restrict dst, const float *restrict src, float k)
{
  for (int i = 0; i < n; i++)
    *dst++ = k * *src++;
}
static void reverse(int n, float *restrict dst, const float *restrict src)
{
  const float *restrict s = src + n - 1;
  for (int i = 0; i < n; i++)
    dst[i] = *s--;
}
static void unpack(int n, int m, double (*restrict out)[M], const double *restrict in)
{
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < m; j++)
      out[i][j] = 2 * in[j];
    in += m;
  }
}
static float *tail(int n, float *restrict dst, const float *restrict src)
{
  for (int i = 0; i < n; i++)
    *dst++ = *src++ + 1;
  return dst;                      /* read after the loop: left alone */
}
int main(void)
{
  for (int i = 0; i < N; i++) { x[i] = (i % 13) * 0.5f; z[i] = 0; }
  for (int i = 0; i < 40 * M; i++) grid[i] = (i % 7) * 0.25;
  scale(N, y, x, 3.0f);
  reverse(N, z, y);
  unpack(40, M, rows, grid);
  float *end = tail(N / 2, z, x);
  double s = 0;
  for (int i = 0; i < N; i++) s += y[i] + 2 * z[i];
  for (int i = 0; i < 40; i++) for (int j = 0; j < M; j++) s += rows[i][j] * (j + 1);
  printf("%.6f %d\n", s, (int)(end - z));
  return 0;
}
"""


def test_walked_pointers_are_read_as_subscripts(tmp_path):
    nests = run(write_c(tmp_path, POINTERS))
    status = {name: table(info)[0][1] for name, (nest, info) in nests.items()}
    assert status["scale@9"] == P and status["reverse@15"] == P and status["unpack@20"] == P
    assert status["tail@28"] != P                       # dst is read after the loop: its steps stay
    scale, _ = nests["scale@9"]
    assert sorted(ind.name for ind in scale.inductions) == ["dst", "src"]
    unpack, _ = nests["unpack@20"]
    assert [(ind.name, ind.stride) for ind in unpack.inductions] == [("in", "m")]
    assert any("pointer 'in' moves m elements forward per iteration of loop 'i'" in note for note in unpack.rewrites)


@requires_tool("cc")
@requires_tool("g++")
def test_walked_pointers_ported_match_the_original(tmp_path):
    res = verify(str(write_c(tmp_path, POINTERS)), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    assert {"scale@9", "reverse@15", "unpack@20"} <= {o.nest.name for o in res.outcomes if o.ported}


@pytest.mark.parametrize("body, why", [
    # the stride is a global a call in the loop could change
    ("for (int i = 0; i < n; i++) { q[0] = p[0]; p += g; touch(); }", "pointer 'p' is assigned inside the nest"),
    # the stride is written in the loop
    ("for (int i = 0; i < n; i++) { q[0] = p[0]; p += k; k = k + 1; }", "pointer 'p' is assigned inside the nest"),
    # stepped twice per iteration
    ("for (int i = 0; i < n; i++) { q[i] = *p++; q[i] += *p++; }", "pointer 'p' is assigned inside the nest"),
    # stepped under a condition
    ("for (int i = 0; i < n; i++) { if (i % 2) p++; q[i] = p[0]; }", "pointer 'p' is assigned inside the nest"),
])
def test_a_walked_pointer_is_left_alone_unless_the_rewrite_is_exact(tmp_path, body, why):
    source = f"int g; void touch(void);\nvoid f(int n, int k, double *restrict q, const double *restrict p) {{ {body} }}\n"
    (nest, info), = run(write_c(tmp_path, source)).values()
    assert "p" not in [ind.name for ind in nest.inductions]
    assert info.verdicts[nest.root.lid].status != P and why in info.verdicts[nest.root.lid].reasons[0].message
