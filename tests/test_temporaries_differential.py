"""Random index temporaries against the original program: a scalar `c` assigned constants and polynomials several
times, under conditions c2gpu cannot model, in loops that reassign it, and used as a subscript in between
(c2gpu/frontend/context.py `record_temporary`: each use sees its own assignment, none inside a loop that writes it).
Each program's nest is verified (CPU execution layer, three thread orders, poisoned memory) against the original;
the value of `c` after the nest is compared too.  12 programs by default, 200 with `pytest -m slow`."""
import random

import pytest

from conftest import requires_tool, sweep, verify_program


def _value(r: random.Random, loops: list[str]) -> str:
    v = r.choice(loops)
    return r.choice([v, f"{v} + 1", f"{v} + 2", f"2 * {v}", "3", "5", f"{v} + c0"])


def _body(r: random.Random, depth: int, loops: list[str]) -> list[str]:
    out = []
    for _ in range(r.randint(2, 5)):
        k = r.random()
        if k < 0.35:
            out.append(f"c = {_value(r, loops)};")
        elif k < 0.6:
            out.append(f"a[c][{r.choice(loops)}] = a[c][{r.choice(loops)}] + {r.randint(1, 3)};")
        elif k < 0.7:
            out.append(f"if (b[{loops[-1]}] > {r.randint(0, 3)}) c = {_value(r, loops)};")
        elif k < 0.8:
            out.append(f"d[{loops[0]}] = c;")
        elif depth < 2:
            v = "jk"[depth]
            inner = " ".join(_body(r, depth + 1, loops + [v]))
            out.append(f"for ({v} = 0; {v} < {r.choice(['8', 'm'])}; {v}++) {{ {inner} }}")
    return out


def program(seed: int) -> str:
    body = " ".join(_body(random.Random(seed), 0, ["i"]))
    return f"""
#include <stdio.h>
int a[64][64], b[64], d[64];
void f(int n, int m, int c0) {{
  int i, j, k, c;
  c = 1;
  for (i = 0; i < n; i++) {{ c = i; {body} }}
  d[63] = c;
}}
int main(void) {{
  for (int i = 0; i < 64; i++) {{ b[i] = i % 5; d[i] = 0; for (int j = 0; j < 64; j++) a[i][j] = (i * 7 + j) % 11; }}
  f(20, 6, 3);
  long s = 0;
  for (int i = 0; i < 64; i++) {{ s += d[i] * (i + 1); for (int j = 0; j < 64; j++) s += a[i][j] * (i + 3 * j); }}
  printf("%ld\\n", s);
  return 0;
}}
"""


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("seed", sweep(range(200), default=range(12)))
def test_random_temporaries_port_as_the_original_runs(tmp_path, seed):
    res = verify_program(tmp_path, program(seed))
    assert res.ok, res.message
    # f's nest runs with these inputs: either its port was among those compared, or c2gpu refused it with a reason
    f = next(o for o in res.outcomes if o.nest.function == "f")
    assert f.ported or f.reason, f
