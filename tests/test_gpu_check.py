"""The GPU check (tests/gpu_check.py) as far as it goes without a GPU: each PolyBench/C and validation program is
analysed for the default GPU, ported with verify's probes and built with nvcc, and so are the kernel timer and
the micro-benchmarks; then it says that it found no GPU.  On a machine with a GPU, run the script itself.

The default run builds 10 of the 42 programs, the PolyBench kernels with one of each kind of kernel the ports
hold (tiles and rows per thread: gemm; split reductions: atax; private arrays: doitgen; isl's schedule: lu; fused
loop nests in a time loop: fdtd-2d; wavefronts: seidel-2d) and the validation kernels of the same names: all 42
took 130 s of the 10-minute budget, 15 took 47-59 s; `-m slow` builds them all (2mm, jacobi-2d, correlation's
triangular products and nussinov's wavefront among them)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import requires_tool

SCRIPT = Path(__file__).resolve().parent / "gpu_check.py"
KINDS = "gemm,atax,doitgen,lu,fdtd-2d,seidel-2d"


@requires_tool("nvcc")
@requires_tool("cc")
@pytest.mark.parametrize("only,count", [(KINDS, 10), pytest.param(None, 42, marks=pytest.mark.slow)])
def test_the_gpu_check_builds_every_program_and_says_it_found_no_gpu(only, count):
    r = subprocess.run([sys.executable, str(SCRIPT), "--no-gpu", "--size", "MINI", "--jobs", "2"] +
                       (["--only", only] if only else []), capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "no GPU found" in r.stdout
    built = re.search(r"built (\d+) of (\d+) programs", r.stdout)
    assert built and built.group(1) == built.group(2) == str(count), r.stdout[-3000:]
    # every program has at least one ported nest to time (the line says how many)
    assert len(re.findall(r": built \(\d+ ported nests?\)", r.stdout)) == count, r.stdout
