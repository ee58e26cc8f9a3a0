"""Statements between mapped loops run in each thread (issue 29: NPB's norms and initialisations, `xi = (double)i
* dnxm1;` between `for i` and `for j`): a kernel maps the loops below them too, and each thread computes the
scalar itself before the body.  Only where that gives every thread the value C gives it there: the scalar is
private to the outer loop's iterations, nothing inside the inner loop writes it, and it is computed from loop
variables, values the nest never writes and math functions.  Ports are verified on the CPU execution layer
against the original (three thread orders, poisoned memory)."""
from __future__ import annotations

import pytest

from c2gpu.drivers.cli import main

from conftest import write_c

NEST = """
#include <stdio.h>
#define N 40
static double u[N][N][N], v[N][N][N];
int main(void) {
  int i, j, k;
  double xi, eta, zeta, dx = 0.5;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++)
        u[i][j][k] = (i * 3 + j * 5 + k) % 7;
  for (i = 0; i < N; i++) {
    xi = (double)i * dx;
    for (j = 0; j < N; j++) {
      eta = sqrt((double)j) * dx + xi;
      for (k = 0; k < N; k++) {
        zeta = (double)k * dx;
        v[i][j][k] = u[i][j][k] * xi + eta * zeta;
      }
    }
  }
  printf("%g %g\\n", v[3][4][5], v[N-1][N-1][N-1]);
  return 0;
}
""".replace("#include <stdio.h>", "#include <stdio.h>\n#include <math.h>")


def _port_log(tmp_path, capsys, text: str, *extra: str) -> str:
    src = write_c(tmp_path, text)
    assert main(["port", str(src), "-o", str(tmp_path / "t.cu"), *extra]) == 0
    err = capsys.readouterr().err
    assert main(["verify", str(src), *extra]) == 0, capsys.readouterr().out
    assert "verify: PASS" in capsys.readouterr().out
    return next(line for line in err.splitlines() if "c2gpu_main_13_k0:" in line)


@pytest.mark.parametrize("gpu", ["none", "h100-sxm"])
def test_statements_between_the_loops_run_in_each_thread(tmp_path, capsys, gpu):
    line = _port_log(tmp_path, capsys, NEST, "--gpu", gpu)
    assert "maps i->z, j->y, k->x" in line and "lines 14, 16 (between the mapped loops) run in each thread first" in \
        line, line
    text = (tmp_path / "t.cu").read_text()
    body = text[text.index("c2gpu_main_13_k0("):]
    assert body.index("xi = ((double) i) * dx;") < body.index("eta = ") < body.index("v[1600*i"), body


@pytest.mark.parametrize("change,why", [
    # the value after the nest: the thread of the last (i, j, k) holds it only when the loops inside run
    ('printf("%g %g\\n", v[3][4][5], v[N-1][N-1][N-1]);', "outlives"),
    # read from what the nest writes: another thread may have written it already
    ("xi = (double)i * dx;", "reads the nest's writes"),
    # written inside the inner loop: C's value there is the inner loop's
    ("v[i][j][k] = u[i][j][k] * xi + eta * zeta;", "written inside"),
    # a call of the file's own
    ("eta = sqrt((double)j) * dx + xi;", "call"),
])
def test_statements_that_would_change_meaning_stay_outside(tmp_path, capsys, change, why):
    new = {"outlives": 'printf("%g %g %g\\n", v[3][4][5], v[N-1][N-1][N-1], xi);',
           "reads the nest's writes": "xi = v[i][0][0] * dx;",
           "written inside": "v[i][j][k] = u[i][j][k] * xi + eta * zeta; xi = 1.0;",
           "call": "eta = scale((double)j) * dx + xi;"}[why]
    text = NEST.replace(change, new)
    if why == "call":
        text = text.replace("int main(void) {", "static int calls;\nstatic double scale(double x) { calls++; return x; }\n"
                            "int main(void) {")
    src = write_c(tmp_path, text)
    assert main(["port", str(src), "-o", str(tmp_path / "t.cu"), "--gpu", "none"]) in (0, 1)
    err = capsys.readouterr().err
    assert "between the mapped loops" not in err, (why, err)
    if "ported nest main@1" in err:
        assert main(["verify", str(src), "--gpu", "none"]) == 0, (why, capsys.readouterr().out)
