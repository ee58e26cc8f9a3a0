"""The plan pass: the one place where a nest's plan is finalized (c2gpu/planning/plan.py).

Without a GPU the plan is the mapping with its default block shapes and the tiles the shared-memory pass
chose under the default budget.  With a GPU (--gpu) the performance pass has compared block shapes (seed
004, section 5.2.1) and shared-memory budgets by predicted time; the plan takes its choice: the kernels get
the block shapes that won, and the tiles the winning prediction was made with (tiles are sized by the block,
under the budget that won), or none when the plain kernels are predicted faster.  Everything after this pass (code generation,
the port, the reports) reads the plan and decides nothing again.
"""
from __future__ import annotations

from c2gpu.ir import Nest
from c2gpu.analysis import isl_sets
from c2gpu.codegen import CodegenError, build_nest_code
from c2gpu.pipeline import Pass, PassFailed
from c2gpu.planning.plan import BudgetTrial, NestPlan, SharedDecision, SharedMemoryPlan, with_blocks
from c2gpu.analysis.aliasing import may_share_memory

PLAIN_FASTER = "the plain kernel is predicted faster than the tiled one (see the budget trials)"


class FinalizePlan(Pass):
    name = "plan"
    description = "finalize each nest's plan: block shapes and shared-memory budget (by predicted time with --gpu)"
    requires = ("mapping",)
    # when the pipeline computes them; a refusal there (a size the model cannot evaluate) costs the model's
    # choice, not the port
    uses = ("shared-memory", "performance")
    provides = ("plan",)

    def run(self, nest: Nest, ctx) -> NestPlan:
        mapping = ctx.get("mapping", nest)
        if all(isl_sets.statement_domain(nest, s)[0].is_empty() for s in nest.statements()):
            raise PassFailed("the nest never executes a statement (empty iteration domain)", code="empty-nest")
        tiles = ctx.get_optional("shared-memory", nest)
        perf = ctx.get_optional("performance", nest) if ctx.options.get("gpu") is not None else None
        plan = finalize(nest, mapping, tiles, perf, ctx.options)
        # a plan is a promise that the port emits this nest: what code generation refuses (an array it cannot
        # bound, a gather, a loop variable whose exit value it cannot state) is refused here, so that the
        # verdict, the API and `check` never call a nest portable that `port` leaves alone
        try:
            code = build_nest_code(nest, plan)
        except (CodegenError, ValueError) as e:
            raise PassFailed(str(e), code="not-generated") from None
        _separate_copies(nest, code.arrays, ctx.options.get("assume_no_alias", False))
        return plan


def _separate_copies(nest: Nest, arrays, assume_no_alias: bool) -> None:
    """Refuse a port whose copy-outs could overwrite each other's results.  Each name gets a device copy of its
    own, copied back over the whole region it writes; where a name does not write all of that region, the copy
    puts back the host's old values in the gaps.  Two written names that may be one object (`restrict`
    pointers called with one array, `f(buf, buf)`; only `restrict` or nothing rules that out) would then undo
    each other's writes."""
    written = [a for a in arrays if a.copy_out is not None]
    for i, a in enumerate(written):
        for b in written[i + 1:]:
            if a.written_in_full and b.written_in_full:
                continue
            ia, ib = nest.array(a.name), nest.array(b.name)
            if may_share_memory(ia, ib, assume_no_alias):
                gap = a if not a.written_in_full else b
                shown = ia.target and ib.target and set(ia.target) & set(ib.target)
                one = (f"point into one object ({a.name}: {ia.target_source}; {b.name}: {ib.target_source})" if shown
                       else "may be one object (only restrict says otherwise)")
                raise PassFailed(f"'{a.name}' and '{b.name}' {one}, and the nest does not write every element of the "
                                 f"region of '{gap.name}' it copies back: the two copy-outs could overwrite each other's "
                                 "results", code="overlapping-copies")


def finalize(nest: Nest, mapping, tiles: SharedMemoryPlan | None, perf, options: dict) -> NestPlan:
    """The plan of `nest`: `mapping` and the default `tiles` (None: the shared-memory pass did not run), with
    the block shapes and budget `perf` chose."""
    ran_shared = tiles is not None
    found = tiles = tiles if tiles is not None else SharedMemoryPlan()
    if perf is None:
        return NestPlan(nest.name, mapping, tiles, _decisions(found, False))
    if perf.mapping is not None:
        mapping = perf.mapping                       # the structure the model chose (the rules' without a choice)
    mapping = with_blocks(mapping, {k.name: k.block for k in perf.kernels})
    trials = tuple(BudgetTrial(b, why, total, kern) for b, why, total, kern in perf.shared_trials or ())
    budget = perf.shared_budget if trials else None
    plain_won = bool(trials) and budget is None
    if plain_won:
        tiles = SharedMemoryPlan()
    elif ran_shared:
        # the tiles the prediction was made with, on each kernel's chosen block (not planned again)
        tiles = found = SharedMemoryPlan({k.name: k.shared for k in perf.kernels if k.shared is not None})
    return NestPlan(nest.name, mapping, tiles, _decisions(found, plain_won), trials=trials, budget=budget,
                    structures=tuple(perf.structure_trials))


def _decisions(tiles: SharedMemoryPlan, plain_won: bool):
    out = []
    for kname, kp in tiles.kernels.items():
        for d in kp.decisions:
            if plain_won and d.taken:
                d = SharedDecision(d.opportunity, False, PLAIN_FASTER)
            out.append((kname, d))
    return tuple(out)
