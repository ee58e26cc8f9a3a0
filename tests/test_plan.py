"""The plan (c2gpu/planning/plan.py): finalized once by the plan pass, the only thing code generation and the model take."""
from __future__ import annotations

from pathlib import Path

import pytest

from c2gpu.codegen import build_nest_code
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.model.gpu import load_gpu
from c2gpu.perf.predict import predict_nest
from c2gpu.pipeline import PORT, with_performance
from c2gpu.planning.plan import NestPlan, PlanError

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"


def _run(name: str, passes, options: dict, **defines):
    prog = load_program(str(TESTDATA / name), PreprocessOptions(defines=tuple(defines.items())))
    manager = make_manager(passes, options)
    return manager.run(prog), manager


def test_code_generation_and_the_model_refuse_anything_but_a_plan():
    prog, m = _run("matmul.c", PORT.passes, {})
    nest = prog.nest("matmul@16")
    mapping = m.result("mapping", nest)
    with pytest.raises(PlanError, match="code generation needs a finalized NestPlan .* not a Mapping"):
        build_nest_code(nest, mapping)
    with pytest.raises(PlanError, match="the performance model needs a finalized NestPlan"):
        predict_nest(nest, mapping, load_gpu("a100"), {})


def test_without_a_gpu_the_plan_is_the_mapping_and_the_default_tiles():
    prog, m = _run("matmul.c", PORT.passes, {})
    nest = prog.nest("matmul@16")
    plan = m.result("plan", nest)
    assert isinstance(plan, NestPlan) and plan.mapping == m.result("mapping", nest)
    assert plan.tiles == m.result("shared-memory", nest) and plan.trials == () and plan.budget is None
    taken = sorted(d.opportunity.array for _, d in plan.decisions if d.taken)
    assert taken == ["A", "B"]                               # matmul's two reuse tiles, as the shared-memory pass chose


def test_with_a_gpu_the_plan_takes_the_models_blocks_and_budget():
    gpu = load_gpu("a100")
    opts = {"gpu": gpu, "registers": "estimate", "params": {}}
    prog, m = _run("matmul.c", with_performance(PORT.passes), opts, N="256")
    nest = prog.nest("matmul@16")
    plan, perf = m.result("plan", nest), m.result("performance", nest)
    assert {k.name: k.block for k in plan.kernels()} == {k.name: tuple(k.block) for k in perf.kernels}
    assert [(t.budget, t.total_s) for t in plan.trials] == [(b, total) for b, _, total, _ in perf.shared_trials]
    assert plan.budget == perf.shared_budget
    # the code is the plan's: its launch uses the block the model chose
    (k,) = plan.kernels()
    assert f"c2gpu_block({k.block[0]}, {k.block[1]}, {k.block[2]})" in build_nest_code(nest, plan).wrapper
    if plan.budget is None:                                   # the plain kernel won: no tile is kept
        assert plan.tiles.kernels == {} and not any(d.taken for _, d in plan.decisions)
    else:
        assert all(kp.budget == plan.budget for kp in plan.tiles.kernels.values())


# a gather through a pointer parameter: the whole of `a` would have to be copied, and its extent is unknown
GATHER = """
#define N 4096
float a[N], b[N], c[N / 2];
int idx[N];
static void gather(int n, const float *src, float *dst, const int *at)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[at[i]];
}
int main(void)
{
    int i;
    for (i = 0; i < N; i++) { idx[i] = (i * 7) % (N / 2); a[i] = i; }
    gather(N, a, b, idx);
    gather(N / 2, c, b, idx);     /* src has no one extent: N, then N / 2 elements */
    return (int)b[5];
}
"""


def test_a_nest_port_refuses_is_never_called_portable(tmp_path, capsys):
    """The gather loop is proven parallel, but code generation cannot copy src[at[i]]: the plan pass refuses it, so
    the verdict, the API, `check` and `port` agree that it is not ported, for the same reason."""
    import c2gpu
    from c2gpu.drivers.cli import main
    src = tmp_path / "gather.c"
    src.write_text(GATHER)
    report = c2gpu.analyze(str(src), gpu="a100", run_cpu=False, break_even=False)
    gather, init = report.nests
    assert init.ported and init.verdict_class in ("port", "port-if-resident", "keep-on-cpu")
    assert not gather.ported and gather.verdict_class == "not-portable" and gather.cuda is None
    assert gather.loops[0].status == "parallel"              # the dependence verdict is not what blocks it
    assert gather.refusal == ("array 'src' has a non-affine access (src[at[i]]), and its extent is unknown, so the "
                              "whole of it cannot be copied to the device")
    capsys.readouterr()
    assert main(["check", str(src), "--gpu", "a100", "--no-run"]) == 3
    where = f"{src}:{gather.location.line}:{gather.location.col}"
    assert f"{where}: error: nest {gather.name}: cannot be ported: {gather.refusal} [c2gpu/not-portable]" in \
        capsys.readouterr().out
    assert main(["port", str(src), "-o", str(tmp_path / "gather.cu")]) == 0
    assert f"{where}: note: not portable: {gather.refusal} [{gather.name}]" in capsys.readouterr().err
