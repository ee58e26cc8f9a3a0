"""A candidate plan's layout (codegen.nest_layout) is what printing it would give, without the printing: the
performance search ranks every candidate by its layout, and only the chosen plan is printed (issue "Plans as data,
one search").  So the layout must refuse exactly what printing refuses, with the same reason, and copy, launch and
keep on the device exactly what the printed code does; otherwise the search would choose a plan `port` cannot emit,
or cost transfers the port does not make.

Checked on every candidate the search compares (the rules' structure and its alternatives, each without tiles and
with the tiles of every shared-memory budget) of every testdata program, and of programs code generation refuses
for each kind of reason.  (The same comparison on PolyBench and NPB class S: 2,193 candidate plans, 51 refused,
none different; see the closing note of stop 49.)
"""
from __future__ import annotations

import pytest

from c2gpu.codegen import build_nest_code, nest_layout
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import load_program
from c2gpu.model.gpu import load_gpu
from c2gpu.pipeline import PORT, with_performance
from c2gpu.planning.plan import NestPlan, SharedMemoryPlan
from c2gpu.planning.shared_tiles import candidate_budgets, plan_shared_memory

from conftest import TESTDATA, project_programs

GPU = load_gpu("h100-sxm")

REFUSED = {
    # a local of the outer loop's body read by two kernels under a host loop: the body cannot be split
    "split_local.c": ("""
void f(int n, int m, float A[n][m], float B[n][m]) {
  for (int i = 0; i < n; i++) {
    float s = i * 2.0f;
    for (int j = 0; j < m; j++) A[i][j] = s * j;
    for (int j = 0; j < m; j++) B[i][j] = s + j;
  }
}
""", "cannot be split"),
    # a histogram of shorts: the printer's atomic for the scatter has no CUDA form
    "short_scatter.c": ("""
void f(int n, short h[restrict 256], const unsigned char key[restrict n]) {
  for (int i = 0; i < n; i++) h[key[i]] += 1;
}
""", "has no CUDA atomic"),
    # an array of the outer loop's body shared by the threads of the inner loops' kernels
    "inner_array.c": ("""
void f(int n, float out[n][4]) {
  for (int i = 0; i < n; i++) {
    float t[4];
    for (int k = 0; k < 4; k++) t[k] = i + k;
    for (int k = 0; k < 4; k++) out[i][k] = t[3 - k];
  }
}
""", "is declared inside the nest"),
    # more iterations than a 32-bit thread index counts
    "long_loop.c": ("""
void f(float *restrict a) {
  for (long i = 0; i < 3000000000L; i++) a[i] = 1.0f;
}
""", "more than a 32-bit thread index counts"),
}


def _outcome(build, nest, plan):
    """What a plan's code says about itself: its refusal, or its copies, device scalars and kernels' launches."""
    try:
        code = build(nest, plan)
    except Exception as e:      # (as the search reads it: CodegenError, or a ValueError of code generation)
        return "refused", type(e).__name__, str(e)
    return ("emitted",
            [(a.name, a.copy_in and tuple(map(str, a.copy_in)), a.copy_out and tuple(map(str, a.copy_out)),
              a.written_in_full) for a in code.arrays],
            code.reductions, code.call, code.params,
            [(k.name, k.params, k.args, tuple(map(str, k.grid)), k.shared_bytes, k.device_writes, k.last_values)
             for k in code.kernels])


def _compare(path: str) -> list[tuple]:
    manager = make_manager(with_performance(PORT.passes), {"gpu": GPU, "registers": "estimate",
                                                            "assume_no_alias": True})
    program = manager.run(load_program(path))
    outcomes = []
    with manager.active():
        for nest in program.nests:
            mapping = manager.result("mapping", nest)
            for cand in (mapping, *mapping.alternatives) if mapping is not None else ():
                budgets = [plan_shared_memory(nest, cand, {}, b) for b, _ in candidate_budgets(GPU)]
                for splan in [SharedMemoryPlan(), *budgets]:
                    plan = NestPlan(nest.name, cand, splan)
                    laid_out, printed = _outcome(nest_layout, nest, plan), _outcome(build_nest_code, nest, plan)
                    assert laid_out == printed, (nest.name, cand.structure)
                    outcomes.append(laid_out)
    return outcomes


@pytest.mark.parametrize("program", project_programs(), ids=lambda p: p.name)
def test_every_candidate_is_laid_out_as_it_is_printed(program):
    assert _compare(str(program))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_candidate_printing_refuses_is_refused_by_its_layout_for_the_same_reason(name, tmp_path):
    source, reason = REFUSED[name]
    (tmp_path / name).write_text(source)
    refusals = [o[2] for o in _compare(str(tmp_path / name)) if o[0] == "refused"]
    assert any(reason in r for r in refusals), refusals
