"""Calls to the file's own pure functions (c2gpu/frontend/functions.py) do not block a loop, and the port
carries them as __device__ copies; any function that touches memory or the outside world still blocks."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from c2gpu.drivers.cli import main
from c2gpu.frontend import PreprocessOptions, load_program, parse_c, preprocess
from c2gpu.frontend.functions import pure_functions
from c2gpu.pipeline import PassManager
from c2gpu.registry import available_passes

from conftest import requires_tool

HELPERS = """
#include <math.h>
#include <stdio.h>
static inline double sq(double x) { return x * x; }
static double dist(double a, double b) {
    double d = sq(a) + sq(b);
    for (int k = 0; k < 2; k++)
        if (d > 1.0)
            d = sqrt(d);
    return d;
}
int counter;
double scale = 2.0;
static double bump(double x) { counter++; return x; }
static double global_read(double x) { return x * scale; }
static double through(double *p) { return *p; }
static double loops(double x) { return x < 1.0 ? x : loops(x / 2); }
static double prints(double x) { printf("%f", x); return x; }
static int fact(int n) { int r = 1; while (n > 1) r *= n--; return r; }
"""

PROGRAM = HELPERS + """
#define N 1000
double x[N], y[N], r[N], s[N];
int main(void) {
    for (int i = 0; i < N; i++) { x[i] = i * 0.01; y[i] = 1.0 - i * 0.002; }
    for (int i = 0; i < N; i++)
        r[i] = dist(x[i], y[i]) + sq(x[i]) + fact(i % 6);
    for (int i = 0; i < N; i++)
        s[i] = CALLEE(x[i]);
    return (int) r[7];
}
"""


def test_which_functions_are_pure(tmp_path):
    path = tmp_path / "t.c"
    path.write_text(HELPERS.replace("printf", "puts_double") + "void puts_double(const char *, double);\n")
    ast = parse_c(preprocess(str(path), PreprocessOptions()), str(path))
    pure = pure_functions(ast, {}, lambda node: None)
    assert sorted(pure) == ["dist", "fact", "sq"]
    assert pure["dist"].calls == ("sq",)


def verdicts(tmp_path, callee: str) -> list[str]:
    path = tmp_path / "t.c"
    path.write_text(PROGRAM.replace("CALLEE", callee))
    manager = PassManager(available_passes(), ["normalize", "dependence"], {})
    program = manager.run(load_program(str(path), PreprocessOptions()))
    return [manager.result("dependence", n).verdicts[0].status for n in program.nests if n.function == "main"]


def test_pure_calls_keep_a_loop_parallel(tmp_path):
    assert verdicts(tmp_path, "sq") == ["parallel", "parallel", "parallel"]


@pytest.mark.parametrize("callee", ["loops", "prints"])
def test_other_calls_still_block(tmp_path, callee):
    assert verdicts(tmp_path, callee)[:2] == ["parallel", "parallel"]
    assert verdicts(tmp_path, callee)[2] == "unknown"


@pytest.mark.parametrize("callee, status", [("bump", "reduction"), ("global_read", "parallel")])
def test_a_function_that_is_not_pure_is_inlined_where_its_value_is_assigned(tmp_path, callee, status):
    # `s[i] = bump(x[i])`: the body in place of the call, `counter++` a sum over i; `x * scale` reads a global
    assert verdicts(tmp_path, callee)[2] == status


def test_the_port_carries_device_copies(tmp_path):
    path, out = tmp_path / "t.c", tmp_path / "t.cu"
    path.write_text(PROGRAM.replace("CALLEE", "sq"))
    assert main(["port", str(path), "-o", str(out)]) == 0
    cu = out.read_text()
    assert "static __device__ double c2gpu_main_25_sq(double x)" in cu
    assert "static __device__ double c2gpu_main_25_dist(double a, double b)" in cu
    assert "r[i] = (c2gpu_main_25_dist(c2gpu_sh_x[(i) - c2gpu_x_b0], y[i]) + c2gpu_main_25_sq(" in cu   # x is tiled
    assert cu.index("c2gpu_main_25_sq(double x)") < cu.index("c2gpu_main_25_dist(double a")   # callees first
    if shutil.which("nvcc"):
        r = subprocess.run(["nvcc", "-arch=sm_80", "-c", str(out), "-o", str(tmp_path / "t.o")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]


@requires_tool("cc")
@requires_tool("g++")
def test_a_port_with_device_functions_verifies(tmp_path, capsys):
    path = tmp_path / "t.c"
    path.write_text(PROGRAM.replace("CALLEE", "sq"))
    assert main(["verify", str(path)]) == 0
    assert "verify: PASS: 3 nests checked" in capsys.readouterr().out
