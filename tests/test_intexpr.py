"""Integer expressions as data (c2gpu/intexpr.py): C semantics, isl's piecewise functions, the conditions of
`if`s, and one truth between what the performance model evaluates and what the port prints.

The copy regions and allocations of the array plans are evaluated by the model (transfer sizes) and printed by
the port; both come from one CInt.  The oracle for their agreement is gcc: the printed C, compiled and run for
many sizes, must give the values `evaluate` gives."""
from __future__ import annotations

import itertools
import subprocess

import islpy as isl
import numpy as np
import pytest

from c2gpu.analysis import isl_sets as ph
from c2gpu.codegen import build_nest_code
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.intexpr import CInt, EvaluationError, Op, evaluate, op, plain_c, vector
from c2gpu.pipeline import PassManager
from c2gpu.planning.plan import NestPlan, SharedMemoryPlan
from c2gpu.registry import available_passes
from c2gpu.symbolic import Poly

from conftest import requires_tool, write_c

n, m = Poly.var("n"), Poly.var("m")


def test_c_semantics():
    assert evaluate(op("?:", op(">=", n, Poly.const(100)), Poly.const(99), n - 1), {"n": 50}) == 49
    assert evaluate(op("/", n + 31, Poly.const(32)), {"n": 100}) == 4
    assert evaluate(op("/", Poly.const(-7), Poly.const(2)), {}) == -3         # C truncates toward zero
    assert evaluate(op("%", Poly.const(-7), Poly.const(2)), {}) == -1         # the remainder keeps the sign
    assert evaluate(op("floord", n, Poly.const(3)), {"n": -7}) == -3          # isl's floor division
    assert evaluate(op("min", n, m), {"n": 3, "m": -2}) == -2
    assert evaluate(op("&&", op("<", n, m), op("!", op("==", n, Poly.const(0)))), {"n": 1, "m": 2}) == 1
    assert list(vector(op("%", n, Poly.const(3)), {"n": np.array([-4, 4])})) == [-1, 1]
    # sums, differences and products of polynomials are one polynomial (the simplest spelling)
    assert op("+", op("*", n, m), Poly.const(1)) == n * m + 1
    assert isinstance(op("/", n, Poly.const(2)), Op)
    with pytest.raises(EvaluationError):
        evaluate(op("/", n, m), {"n": 1, "m": 0})
    with pytest.raises(EvaluationError):
        evaluate(n + m, {"n": 1})


def test_isl_piecewise_functions_keep_their_value():
    """The IntExpr of isl's printing of a piecewise quasi-affine function is that function, at every point."""
    pw = isl.PwAff("[n, m] -> { [(floor((n - 1)/3) + 1)] : n >= 1; [min(n, m)] : n <= 0 }")
    c = ph.to_cint(pw, ["n", "m"])
    for nv, mv in itertools.product(range(-5, 9), range(-3, 3)):
        point = isl.Point.zero(pw.get_domain_space())
        point = point.set_coordinate_val(isl.dim_type.param, 0, nv).set_coordinate_val(isl.dim_type.param, 1, mv)
        assert c.evaluate({"n": nv, "m": mv}) == pw.eval(point).to_python()
    cond = ph.to_cint(isl.Set("[n] -> { : n >= 3 or n = 0 }"), ["n"])
    assert [cond.evaluate({"n": v}) for v in range(-1, 5)] == [0, 1, 0, 0, 1, 1]


KERNELS = """
void shifted(int n, float *a, float *b) {
  for (int i = 1; i < n - 1; i++)
    b[i - 1] = a[i - 1] + a[i + 1];
}
void strided(int n, int m, float *a, float *b) {
  for (int i = 0; i < n; i += 3)
    for (int j = 0; j < m; j++)
      b[i * m + j] = 2 * a[i * m + j];
}
void triangle(int n, float A[n][n], float *x) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      A[i][j] = x[i] * x[j];
}
void window(int n, int m, float *a, float *b) {
  for (int i = 0; i < n; i++)
    if (i >= m)
      b[i] = a[i - m];
}
"""


def _plans(path):
    mgr = PassManager(available_passes(), ["normalize", "dependence", "mapping"], {"assume_no_alias": True,
                                                                                   "shared_memory": "off"})
    prog = mgr.run(load_program(str(path), PreprocessOptions()))
    for nest in prog.nests:
        mapping = mgr.result("mapping", nest)
        assert mapping is not None, nest.name            # every kernel above is proven parallel
        code = build_nest_code(nest, NestPlan(nest.name, mapping, SharedMemoryPlan()))
        yield nest, code


@requires_tool("gcc")
def test_copy_regions_print_what_the_model_evaluates(tmp_path):
    """Every size an array plan holds (allocation, first element and count of each copy, lowest element) and
    every kernel's threads and blocks per dimension, printed as the port prints them (and in plain C) and
    compiled by gcc, have the values c2gpu computes, at sizes where the nests run and where they do not."""
    exprs, grids, names = [], [], set()
    for nest, code in _plans(write_c(tmp_path, KERNELS)):
        names |= set(nest.params)
        for a in code.arrays:
            exprs += [a.alloc, a.low, *(a.copy_in or ()), *(a.copy_out or ())]
        for k in code.kernels:
            exprs += k.extents
            grids += [(g, e) for g, e in zip(k.grid, k.extents)]     # blocks, where the threads needed are > 0
    assert any(isinstance(c.expr, Op) for c in exprs)       # conditions, minima and selections, not only polynomials
    assert any(isinstance(g.expr, Op) for g, _ in grids)
    # the plain spelling (RowScan's loops: min, max and floord written out, in 64 bits or not) of each, and of
    # the operations isl prints that the kernels above do not need
    made = [op("floord", op("neg", n) + 7, Poly.const(3)), op("max", op("min", n, m - 1), op("neg", m)),
            op("?:", op("&&", op(">=", n, Poly.const(2)), op("!", op("==", m, Poly.const(0)))), n * m, -n)]
    exprs += [CInt(plain_c(e, wide), e) for e in [c.expr for c in exprs] + made for wide in (False, True)]
    names = sorted(names)
    sizes = [dict(zip(names, vals)) for vals in itertools.product([-2, 0, 1, 2, 5, 7, 150], repeat=len(names))]
    program = ["#include <stdio.h>",
               "#define min(a, b) ((a) < (b) ? (a) : (b))", "#define max(a, b) ((a) > (b) ? (a) : (b))",
               "int main(void) {", f"  long long {', '.join(names)};"]
    expected = []
    for env in sizes:
        program.append("  " + " ".join(f"{k} = {v};" for k, v in env.items()))
        shown = exprs + [g for g, threads in grids if threads.evaluate(env) > 0]
        program += [f'  printf("%lld\\n", (long long)({c.c}));' for c in shown]
        expected += [c.evaluate(env) for c in shown]
    program += ["  return 0;", "}"]
    src = write_c(tmp_path, "\n".join(program), "values.c")
    exe = tmp_path / "values"
    subprocess.run(["gcc", "-O0", "-o", str(exe), str(src)], check=True)
    printed = [int(line) for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                    check=True).stdout.split()]
    assert printed == expected


def test_conditions_of_ifs_are_integer_expressions(tmp_path):
    """A condition over loop variables and sizes is evaluated by the model per thread (perf/geometry.py); one
    that reads memory or floating-point values has no integer value."""
    path = write_c(tmp_path, """
void f(int n, float *a, float *b) {
  for (int i = 0; i < n; i++) {
    if (i % 3 == 0) b[i] = 1;
    if (!((unsigned)i * i < 0x40)) b[i] += 2;
    if (a[i] > 0.5f) b[i] += 3;
  }
}""")
    prog = load_program(str(path), PreprocessOptions())
    guards = [s.guards[0] for s in prog.nests[0].statements() if s.guards]
    values = [g.value for g in guards]
    assert values[2] is None
    i = np.arange(12)
    assert list(vector(values[0], {"i": i}) != 0) == [v % 3 == 0 for v in range(12)]
    assert list(vector(values[1], {"i": i}) != 0) == [not v * v < 64 for v in range(12)]
