"""Reductions into array elements that a loop inside the thread chooses (issue 29 item 3; NPB's norms:
`rms[m] = rms[m] + add*add` over the grid, m from 0 to 4): each thread keeps one partial result per value of
that loop, and each block folds each of them into its element (a tree in shared memory, then one atomic).
The CPU execution layer cannot tell an atomic from a plain update, so the kernels are also checked for the
partials and the atomics."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions
from c2gpu.pipeline import PORT
from c2gpu.drivers.port import port_file

from conftest import requires_tool, verified_ports

NORMS = """
#include <stdio.h>
#include <math.h>
#define N 18
static double u[N][N][N][5];

static void rhs_norm(double rms[5]) {
  int i, j, k, m;
  double add;
  for (m = 0; m < 5; m++)
    rms[m] = 0.0;
  for (i = 1; i < N - 1; i++)
    for (j = 1; j < N - 1; j++)
      for (k = 1; k < N - 1; k++)
        for (m = 0; m < 5; m++) {
          add = u[i][j][k][m];
          rms[m] = rms[m] + add * add;
        }
  for (m = 0; m < 5; m++)
    rms[m] = sqrt(rms[m]);
}

int main(void) {
  double rms[5];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        for (int m = 0; m < 5; m++)
          u[i][j][k][m] = (double)((i * 7 + j * 3 + k + m) % 11) / 3.0;
  rhs_norm(rms);
  for (int m = 0; m < 5; m++)
    printf("%.10e\\n", rms[m]);
  return 0;
}
"""


def _port(tmp_path, source: str):
    path = tmp_path / "t.c"
    path.write_text(source)
    manager = make_manager(list(PORT.passes), {})
    return port_file(str(path), PreprocessOptions(), manager, str(tmp_path / "t.cu")), manager


def _kernel(tmp_path, source: str):
    """The mapped kernel of rhs_norm's grid loops and its CUDA text."""
    res, manager = _port(tmp_path, source)
    (outcome,) = [o for o in res.ported if o.nest.name == "rhs_norm@12"]
    (kernel,) = manager.result("mapping", outcome.nest).kernels()
    (code,) = outcome.code.kernels
    return kernel, code.text


def test_a_norm_per_component_is_reduced_across_the_grid_with_a_partial_per_component(tmp_path):
    assert "rhs_norm@12" in verified_ports(tmp_path, NORMS)
    kernel, text = _kernel(tmp_path, NORMS)
    assert [m.c_var for m in kernel.loops] == ["i", "j", "k"]       # m runs in each thread
    (er,) = kernel.element_ranges
    assert er.target == "rms[m]" and er.count == 5 and kernel.partials(kernel.reductions[0]) == 5
    # the thread's partials, indexed by m; no plain update of rms in the thread; one atomic per element
    assert re.search(r"double c2gpu_\w+_part\[5\] = \{0, 0, 0, 0, 0\};", text), text
    assert re.search(r"c2gpu_\w+_part\[m\] = c2gpu_\w+_part\[m\] \+", text), text
    assert sorted(re.findall(r"atomicAdd\(&rms\[(\d)\]", text)) == ["0", "1", "2", "3", "4"], text
    assert not re.search(r"(?<!&)rms\[", text[text.index("{"):]), text


def test_a_loop_that_starts_elsewhere_indexes_the_partials_from_its_first_value(tmp_path):
    src = NORMS.replace("for (m = 0; m < 5; m++) {", "for (m = 1; m <= 5; m++) {") \
        .replace("add = u[i][j][k][m];", "add = u[i][j][k][m - 1];") \
        .replace("rms[m] = rms[m] + add * add;", "rms[m - 1] = rms[m - 1] + add * add;")
    assert "rhs_norm@12" in verified_ports(tmp_path, src)
    _, text = _kernel(tmp_path, src)
    assert re.search(r"c2gpu_\w+_part\[\(m - 1\)\] = c2gpu_\w+_part\[\(m - 1\)\] \+", text), text
    assert sorted(re.findall(r"atomicAdd\(&rms\[(\d)\]", text)) == ["0", "1", "2", "3", "4"], text


def test_two_loops_choosing_the_element_keep_a_partial_per_pair(tmp_path):
    src = NORMS.replace("double rms[5]", "double rms[10]").replace("rms[5]", "rms[10]") \
        .replace("""        for (m = 0; m < 5; m++) {
          add = u[i][j][k][m];
          rms[m] = rms[m] + add * add;
        }""", """        for (m = 0; m < 5; m++)
          for (int s = 0; s < 2; s++) {
            add = u[i][j][k][m] * (s + 1);
            rms[2 * m + s] = rms[2 * m + s] + add * add;
          }""").replace("for (m = 0; m < 5; m++)\n    rms[m] = 0.0;", "for (m = 0; m < 10; m++)\n    rms[m] = 0.0;")
    assert "rhs_norm@12" in verified_ports(tmp_path, src)
    kernel, text = _kernel(tmp_path, src)
    (er,) = kernel.element_ranges
    assert er.count == 10 and [p["s"] + 2 * p["m"] for p in er.points()] == list(range(10))
    assert sorted(int(e) for e in re.findall(r"atomicAdd\(&rms\[(\d+)\]", text)) == list(range(10)), text


def test_an_element_chosen_by_a_loop_of_unknown_or_many_iterations_stays_unmapped(tmp_path):
    """A partial per element needs their number: a loop to a parameter, or more than 16 values, is refused
    (with the reason), as it was before."""
    for loop, size in (("for (m = 0; m < nm; m++) {", "5"), ("for (m = 0; m < 5 * 5; m++) {", "25")):
        src = NORMS.replace("static void rhs_norm(", "int nm = 5;\nstatic void rhs_norm(") \
            .replace("rms[5]", f"rms[{size}]").replace("for (m = 0; m < 5; m++) {", loop) \
            .replace("add = u[i][j][k][m];", "add = u[i][j][k][m % 5];")
        res, _ = _port(tmp_path, src)
        refused = {o.nest.name: o.reason for o in res.outcomes if not o.ported}
        assert "reduction c2gpu does not run across threads" in refused.get("rhs_norm@13", ""), (loop, refused)


MANY = """
#include <stdio.h>
#define N 200000
static double u[N][16];
int main(void) {
  double r[16];
  for (int i = 0; i < N; i++)
    for (int m = 0; m < 16; m++)
      u[i][m] = (i % 7) * 0.5 + m;
  for (int m = 0; m < 16; m++)
    r[m] = 0.0;
  for (int i = 0; i < N; i++)
    for (int m = 0; m < 16; m++)
      r[m] += u[i][m] * u[i][m];
  for (int m = 0; m < 16; m++)
    printf("%g\\n", r[m]);
  return 0;
}
"""


@requires_tool("nvcc")
def test_the_block_keeps_the_partials_trees_within_a_blocks_static_shared_memory(tmp_path):
    """16 partials of double are 128 bytes of trees per thread: a block of 1024 threads (128 KiB) would pass the
    GPU's opt-in limit, which needs dynamic shared memory, but not the 48 KiB a kernel may declare as
    __shared__ arrays (ptxas: 'uses too much shared data').  The search leaves such blocks out; nvcc compiles."""
    src = tmp_path / "t.c"
    src.write_text(MANY)
    cu = tmp_path / "t.cu"
    # with a GPU the model searches the block shapes (its fastest here, without the limit: 1024 threads)
    port = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(src), "--gpu", "h100-sxm", "-o", str(cu)],
                          capture_output=True, text=True,
                          env={**os.environ, "C2GPU_CACHE_DIR": str(tmp_path / "cache")})
    assert port.returncode == 0 and "ported nest main@12" in port.stderr, port.stderr
    text = cu.read_text()
    kernel = text[text.index("__global__ void c2gpu_main_12_k0"):]
    kernel = kernel[:kernel.index("\n}\n")]
    assert len(re.findall(r"atomicAdd\(&r\[", kernel)) == 16
    trees = re.findall(r"__shared__ double \w+\[(\d+)\];", kernel)
    assert len(trees) == 16 and 16 * int(trees[0]) * 8 <= 48 * 1024, trees
    built = subprocess.run(["nvcc", "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "t.o")], capture_output=True,
                           text=True)
    assert built.returncode == 0, built.stderr
