"""The GPU check (tests/gpu_check.py) as far as it goes without a GPU: every PolyBench/C and validation program is
analysed for the default GPU, ported with verify's probes and built with nvcc, and so are the kernel timer and
the micro-benchmarks; then it says that it found no GPU.  On a machine with a GPU, run the script itself."""
import re
import subprocess
import sys
from pathlib import Path

from conftest import requires_tool

SCRIPT = Path(__file__).resolve().parent / "gpu_check.py"


@requires_tool("nvcc")
@requires_tool("cc")
def test_the_gpu_check_builds_every_program_and_says_it_found_no_gpu():
    r = subprocess.run([sys.executable, str(SCRIPT), "--no-gpu", "--size", "MINI", "--jobs", "2"],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "no GPU found" in r.stdout
    built = re.search(r"built (\d+) of (\d+) programs", r.stdout)
    assert built and built.group(1) == built.group(2) == "42", r.stdout[-3000:]
    # every program has at least one ported nest to time (the line says how many)
    assert len(re.findall(r": built \(\d+ ported nests?\)", r.stdout)) == 42, r.stdout
