"""Random stencils on tables of rows against the original program: `double ***` grids whose rows are each new memory
(frontend/objects.py rows_distinct), a scratch row per iteration (c2gpu/passes/dependence.py array_private), the same
grid passed under two names or two rows of one table of grids (`lev[m]`, `lev[m - 1]`), and bounds and offsets
drawn at random.  Each program's nests are verified (CPU execution layer, three thread orders, poisoned device
memory) against the original, which reads every row back; a nest c2gpu does not port must say why.  8 programs by
default, 100 with `pytest -m slow`."""
import random

import pytest

from conftest import requires_tool, sweep, verify_program


def _term(r: random.Random, table: str) -> str:
    return f"{table}[i3 + {r.randint(-1, 1)}][i2 + {r.randint(-1, 1)}][i1]"


def program(seed: int) -> str:
    r = random.Random(seed)
    scratch = " + ".join(_term(r, "in") for _ in range(r.randint(1, 3)))
    reads = [f"s1[i1 {r.choice(['-', '+'])} 1]", "s1[i1]", f"in[i3][i2][i1 {r.choice(['-', '+'])} 1]"]
    update = " + ".join(r.sample(reads, r.randint(1, 3)))
    if r.random() < 0.3:           # a stencil that reads what it writes when both names are one grid
        update += f" + 0.25 * {_term(r, 'in')}"
    calls = [f"step(lev[{m}], lev[{m - 1}], N, N, M);" if r.random() < 0.5 else
             f"p = {m} - 1; step(lev[{m}], lev[p], N, N - {r.randint(0, 1)}, M);" for m in range(1, 3)]
    calls.append(r.choice(["step(lev[0], lev[0], N, N, M);", "step(lev[2], lev[1], N - 1, N, M - 1);"]))
    r.shuffle(calls)
    return f"""
#include <stdio.h>
#include <stdlib.h>
#define N 9
#define M 11
static void step(double ***out, double ***in, int n3, int n2, int n1) {{
  int i3, i2, i1;
  double s1[M];
  for (i3 = 1; i3 < n3 - 1; i3++)
    for (i2 = 1; i2 < n2 - 1; i2++) {{
      for (i1 = 0; i1 < n1; i1++)
        s1[i1] = {scratch};
      for (i1 = 1; i1 < n1 - 1; i1++)
        out[i3][i2][i1] = 0.5 * out[i3][i2][i1] + 0.125 * ({update});
    }}
}}
int main(void) {{
  double ****lev = (double ****)malloc(3 * sizeof(double ***));
  int p;
  for (int l = 0; l < 3; l++) {{
    lev[l] = (double ***)malloc(N * sizeof(double **));
    for (int k = 0; k < N; k++) {{
      lev[l][k] = (double **)malloc(N * sizeof(double *));
      for (int j = 0; j < N; j++) lev[l][k][j] = (double *)malloc(M * sizeof(double));
    }}
  }}
  for (int l = 0; l < 3; l++) for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < M; i++)
    lev[l][k][j][i] = (l * 5 + k * 3 + j * 7 + i) % 13;
  {" ".join(calls)}
  double s = 0;
  for (int l = 0; l < 3; l++) for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < M; i++)
    s += lev[l][k][j][i] * (i + 2 * j + 3 * k + l + 1);
  printf("%.9f\\n", s);
  return 0;
}}
"""


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("seed", sweep(range(100), default=range(8)))
def test_random_stencils_on_tables_port_as_the_original_runs(tmp_path, seed):
    res = verify_program(tmp_path, program(seed))
    assert res.ok, res.message
    step = next(o for o in res.outcomes if o.nest.function == "step")
    assert step.ported or step.reason, step
