"""Static analyses of mapped kernels and the performance prediction, as pipeline passes.

Each pass works on the mapping of a nest and returns, per kernel name, one
analysis of c2gpu.perf.profile.KernelAnalysis on the kernel's block shape:

  kernel-analysis  the KernelAnalysis objects themselves (shared by the passes below)
  coalescing       sectors / lines per warp request of every global access (seed 004, 6.1)
  ilp              eq. 6.1 ILP and the memory-level parallelism of the hot region
  intensity        Alg. 6.3 and flops per DRAM byte
  registers        ptxas's count (nvcc on PATH) or the Belady estimate (Alg. 6.4), saying which
  occupancy        resident blocks and warps per SM (c2gpu.model.occupancy)
  traffic          L1 / L2 / DRAM traffic, the DRAM lower bound and the models' estimate
  performance      c2gpu.perf.predict.predict_nest: both models, roofline, overheads, block table

Options read from the pipeline options: gpu (key, file or GPU), params
({name: value} for symbolic sizes), block (forced shape), models, registers
("auto", "ptxas", "estimate"), include_context, block_search (default True).
"""
from __future__ import annotations

from c2gpu.codegen import build_nest_code, nest_layout
from c2gpu.model.gpu import GPU, load_gpu
from c2gpu.perf.predict import kernel_items, predict_nest
from c2gpu.perf.profile import KernelAnalysis, PerfError, kernel_source
from c2gpu.perf.registers import arch_for, collecting, request
from c2gpu.pipeline import Pass, PassFailed, memo
from c2gpu.planning.plan import NestPlan, SharedMemoryPlan, StructureTrial
from c2gpu.planning.shared_tiles import candidate_budgets, plan_shared_memory


def _gpu(ctx):
    g = ctx.options.get("gpu")
    if g is None:
        raise PassFailed("performance analyses need a GPU: give --gpu NAME (see `c2gpu gpus`)", code="needs-gpu")
    return g if isinstance(g, GPU) else load_gpu(str(g))


def _shared_plan(nest, ctx):
    if ctx.options.get("shared_memory", "auto") == "off":
        return None
    return ctx.get_optional("shared-memory", nest)


def _nest_code(nest, plan: NestPlan, printed: bool = True):
    """The CUDA of a (candidate) plan, for the arrays it copies and ptxas's registers, or (not `printed`) its
    layout, which has the arrays and no text; the reason when code generation refuses it."""
    try:
        return (build_nest_code(nest, plan) if printed else nest_layout(nest, plan)), None
    except Exception as e:   # CodegenError and friends: no kernel text, no ArrayPlans
        return None, str(e)


def _reads_kernel_text(gpu, opts) -> bool:
    """Whether the prediction reads the kernels' text: to look up or compile ptxas's register counts (nvcc on
    PATH, --registers auto or ptxas).  Otherwise the search ranks candidates by their layout, none printed."""
    return opts.get("registers", "auto") != "estimate" and arch_for(gpu) is not None


def _plain_code(nest, mapping, printed: bool = True):
    """_nest_code of a structure without shared memory, once per nest and structure (pipeline.memo): the check of
    the registers cache and the structure's prediction both need it (PolyBench, warm: a tenth of the run built it
    twice)."""
    table = memo(nest, "plain code")
    hit = table.get((id(mapping), printed))
    if hit is None or hit[0] is not mapping:
        hit = table[id(mapping), printed] = (mapping, _nest_code(nest, NestPlan(nest.name, mapping, SharedMemoryPlan()),
                                                                 printed))
    return hit[1]


def _launches_at_least(nest, mapping, env: dict) -> float:
    """A lower bound on the launches of a mapping: each kernel once per iteration of the host loops around it
    whose trip count the sizes fix (0 for one that depends on an outer loop: no bound from it)."""
    total = 0.0
    for _kernel, host in kernel_items(mapping):
        n = 1.0
        for lid in host:
            trip = nest.loop(lid).trip_count
            n *= trip.evaluate(env) if trip is not None and trip.variables <= env.keys() else 0.0
        total += n
    return total


def _requested_registers(nest, mapping, gpu, shared, opts) -> bool:
    """In the collecting run of c2gpu.perf.registers.run_with_one_nvcc_call: ask for ptxas's counts of the
    kernels of a structure that the pass predicts (plain, and with the tiles of each shared-memory budget) and
    say whether one was missing.  Then nothing is predicted: the run is redone once they are compiled, so
    predicting with estimates here would be thrown away.  The pass asks for the rules' structure and those that
    launch no more (split reductions, coarsened threads: always predicted).  The others are not asked for: the
    pass predicts one only when its launches alone cost less than the rules' structure in all, which takes
    their counts (on the 51 files of testdata and PolyBench, 3 needed a kernel of another structure; asking
    for every structure's compiled 312 kernels where 220 were used).  What it then predicts is
    collected where the prediction asks for it and compiled in the next round, as is anything missing when the
    first candidate's kernels are cached (the file was analysed before: the others are not built here)."""
    if not collecting() or opts.get("registers", "auto") == "estimate":
        return False
    arch = arch_for(gpu)
    if arch is None:
        return False
    budgets = [int(opts["shared_budget"])] if opts.get("shared_budget") else [b for b, _ in candidate_budgets(gpu)]
    plans = [SharedMemoryPlan()] + ([] if shared is None else
                                    [shared] + [plan_shared_memory(nest, mapping, opts, b) for b in budgets])
    missing, seen = False, set()
    for n, splan in enumerate(plans):
        key = _tiles_key(splan)
        if key in seen:
            continue
        seen.add(key)
        if n == 0:             # without tiles: the code the prediction reads, built once
            code = _plain_code(nest, mapping)[0]
            if code is None:   # no code: the prediction estimates the registers
                continue
            kernels = code.kernels
        else:
            try:
                kernels = build_nest_code(nest, NestPlan(nest.name, mapping, splan), kernels_only=True)
            except Exception:  # no code for this candidate: nothing to compile (as _nest_code)
                continue
        for k in kernels:
            missing |= request(arch, k.name, kernel_source(k))
        if n == 0 and not missing:
            return False
    return missing


def _tiles_key(splan: SharedMemoryPlan) -> tuple:
    """What tells two shared-memory plans apart: the tiles each kernel stages."""
    return tuple(sorted((k, tuple(o.tile_name for o in p.chosen)) for k, p in splan.kernels.items()))


class KernelAnalyses(Pass):
    name = "kernel-analysis"
    description = "build the static analyses of every mapped kernel for the GPU (--gpu) and sizes (--param)"
    requires = ("plan",)
    provides = ("kernel-analysis",)

    def run(self, nest, ctx):
        plan = ctx.get("plan", nest)
        gpu = _gpu(ctx)
        code, _err = _nest_code(nest, plan)
        codes = {k.name: k for k in (code.kernels if code is not None else [])}
        out = {}
        for kernel, host in kernel_items(plan.mapping):
            splan = plan.tiles_of(kernel.name)
            try:
                out[kernel.name] = KernelAnalysis(nest, kernel, gpu, nest.param_env(ctx.options.get("params")),
                                                  host_lids=host, code=codes.get(kernel.name), shared=splan,
                                                  registers=ctx.options.get("registers", "auto"))
            except PerfError as e:
                raise PassFailed(str(e), code="not-predicted") from None
        return out


class _PerKernel(Pass):
    requires = ("kernel-analysis",)

    def run(self, nest, ctx):
        out = {}
        for name, ka in ctx.get("kernel-analysis", nest).items():
            try:
                out[name] = self.compute(ka, tuple(ka.kernel.block))
            except PerfError as e:
                raise PassFailed(str(e), code="not-predicted") from None
        return out

    def compute(self, ka, block):  # pragma: no cover - interface
        raise NotImplementedError


class Coalescing(_PerKernel):
    name = "coalescing"
    description = "32-byte sectors and 128-byte lines per warp request of every global access (seed 004, 6.1)"
    provides = ("coalescing",)

    def compute(self, ka, block):
        return ka.memory(block).accesses


class ILP(_PerKernel):
    name = "ilp"
    description = "instruction-level parallelism of the hot loop body (seed 004, eq. 6.1) and memory parallelism"
    provides = ("ilp",)

    def compute(self, ka, block):
        return {"ilp": ka.ilp, "mlp": ka.mlp, "region": ka.hot_region[1]}


class Intensity(_PerKernel):
    name = "intensity"
    description = "arithmetic intensity (seed 004, Alg. 6.3) and flops per DRAM byte (roofline)"
    provides = ("intensity",)

    def compute(self, ka, block):
        return ka.intensity(block)


class RegisterCount(_PerKernel):
    name = "registers"
    description = "registers per thread: ptxas when nvcc is available, else Belady's MIN (seed 004, Alg. 6.4)"
    provides = ("registers",)

    def compute(self, ka, block):
        return ka.registers


class OccupancyPass(_PerKernel):
    name = "occupancy"
    description = "resident blocks and warps per SM from registers, shared memory and the GPU's limits"
    provides = ("occupancy",)

    def compute(self, ka, block):
        return ka.occupancy(block)


class Traffic(_PerKernel):
    name = "traffic"
    description = "L1/L2/DRAM traffic per access, DRAM lower bound (roofline) and the models' DRAM estimate"
    provides = ("traffic",)

    def compute(self, ka, block):
        return ka.memory(block)


class Performance(Pass):
    name = "performance"
    description = "predicted kernel, launch and transfer time with every model, roofline bound, block-size table"
    requires = ("mapping",)
    uses = ("shared-memory",)
    provides = ("performance",)

    def run(self, nest, ctx):
        mapping = ctx.get("mapping", nest)    # not mapped: refused with the mapping's reason, recorded once
        gpu = _gpu(ctx)
        opts = ctx.options
        shared = _shared_plan(nest, ctx)
        # the structures the search predicts whatever the counts say (no more launches than the rules'; the
        # others may be pruned by their launches alone): their kernels are compiled in the same nvcc call
        env = nest.param_env(opts.get("params"))
        certain = [mapping] + [alt for alt in mapping.alternatives
                               if _launches_at_least(nest, alt, env) <= _launches_at_least(nest, mapping, env)]
        missing = [c for c in certain if _requested_registers(nest, c, gpu, shared if c is mapping or shared is None
                                                              else plan_shared_memory(nest, c, opts), opts)]
        if missing:            # (every structure asked, not the first missing one: all go into the one call)
            raise PassFailed("ptxas's register counts are compiled first", code="registers-pending")
        rules = mapping
        predicted, pruned = self.structures(nest, mapping, gpu, opts)
        if not predicted:
            perf = self.with_tiles(nest, mapping, gpu, opts, None, shared)
            perf.mapping, perf.structure_trials = mapping, []
            return perf
        # one search over the structures and their shared-memory tiles: each structure with its best tiles (none,
        # or those of the budget that predicts fastest), the fastest of them kept; a structure code generation
        # cannot emit is not a port, however fast the model finds it (without its code, its transfers are not
        # even costed): the fastest of those it can emit, when there is one (ties: the earlier, the rules' first)
        finals = []
        for cand, plain in predicted:
            tiles = shared if cand is rules or shared is None else plan_shared_memory(nest, cand, opts)
            finals.append((cand, self.with_tiles(nest, cand, gpu, opts, plain, tiles)))
        best = min([t for t in finals if not t[1].not_generated] or finals, key=lambda t: round(t[1].total_s(), 12))
        trials = [StructureTrial(c.structure, len(c.kernels()), sum(k.launches for k in p.kernels), p.total_s(),
                                 c is best[0], not_generated=p.not_generated) for c, p in finals]
        perf = best[1]
        perf.mapping, perf.structure_trials = best[0], trials + pruned
        return perf

    def with_tiles(self, nest, mapping, gpu, opts, plain, shared):
        """The prediction of `mapping` with the shared-memory tiles that make it fastest: its plain kernels
        (`plain`, or predicted here), or the tiles of one of the candidate budgets (from the GPU's shared
        memory per SM and the occupancy to keep); `shared`: the tiles under the default budget (None: no
        shared memory).  The budgets compared are kept with it (shared_trials)."""
        if shared is None or not any(k.chosen for k in shared.kernels.values()):
            if plain is not None and (shared is None or not shared.kernels):
                perf = plain        # no kernel has anything to stage: the plain prediction is the prediction
                perf.shared_memory = perf.shared_memory or shared is not None
            else:
                perf = self.predict(nest, mapping, gpu, shared, opts)
            return perf
        plain = plain or self.predict(nest, mapping, gpu, None, opts)
        model = plain.default_model
        trials = [(None, "no shared memory", plain, None)]
        budgets = [(int(opts["shared_budget"]), "--shared-budget")] if opts.get("shared_budget") else candidate_budgets(gpu)
        seen = {}
        for budget, why in budgets:
            plan = plan_shared_memory(nest, mapping, opts, budget)
            key = _tiles_key(plan)
            if key not in seen:
                seen[key] = (self.predict(nest, mapping, gpu, plan, dict(opts, shared_budget=budget)), budget)
            if seen[key][0].not_generated:
                continue                 # tiles code generation cannot emit: not a port (the plain kernels are)
            # the same tiles on the mapping's blocks: the same prediction, whose block search planned the tiles of
            # every other block under the budget it was made with (the plan must use that one)
            trials.append((budget, why) + seen[key])
        # ties: no shared memory (simpler), then the smallest budget (more resident blocks)
        best = min(trials, key=lambda t: (round(t[2].total_s(model), 12), t[0] or 0))
        chosen = best[2]
        chosen.shared_trials = [(b, why, p.total_s(model), p.kernel_s(model)) for b, why, p, _ in trials]
        chosen.shared_budget = best[3]
        chosen.without_shared_s = plain.total_s(model)
        return chosen

    def structures(self, nest, mapping, gpu, opts):
        """The kernel structure is a decision too: every legal structure the mapping pass found (the rules' first,
        then mapping.alternatives) predicted with plain kernels (no shared memory, the block search on), for the
        search in `run` to add their tiles to.  A structure whose launches alone cost more than one already
        predicted is listed with that lower bound, not searched (tiles only lower the others' totals).
        ([(Mapping, its plain NestPerformance)], the StructureTrials of those left out); with no alternative:
        ([], [])."""
        if not mapping.alternatives:
            return [], []
        predicted, pruned = [], []
        # no launch costs less than one issued back to back with others (no synchronize): the lower bound
        per_launch, env = gpu.launch_s, nest.param_env(opts.get("params"))
        for cand in (mapping,) + mapping.alternatives:
            launches = _launches_at_least(nest, cand, env)
            if predicted and per_launch * launches > min(p.total_s() for _, p in predicted):
                pruned.append(StructureTrial(cand.structure, len(cand.kernels()), launches, per_launch * launches,
                                             False, "at least (its launches alone)"))
                continue
            try:
                p = self.predict(nest, cand, gpu, None, opts)
            except PassFailed:
                continue                          # a structure the model cannot predict is not chosen
            predicted.append((cand, p))
        return predicted, pruned

    @staticmethod
    def predict(nest, mapping, gpu, shared, opts):
        plan = NestPlan(nest.name, mapping, shared or SharedMemoryPlan())   # a candidate the pass compares
        printed = _reads_kernel_text(gpu, opts)
        code, err = _nest_code(nest, plan, printed) if shared is not None else _plain_code(nest, mapping, printed)
        try:
            perf = predict_nest(nest, plan, gpu, nest.param_env(opts.get("params")), code=code,
                                options=opts, models=opts.get("models"), search=opts.get("block_search", True),
                                include_context=bool(opts.get("include_context")),
                                registers=opts.get("registers", "auto"))
        except PerfError as e:
            raise PassFailed(str(e), code="not-predicted") from None
        if err:
            perf.notes.append(f"no CUDA code for this nest ({err}): registers estimated, transfers not costed")
            perf.not_generated = err
        if not perf.kernels:
            raise PassFailed("; ".join(perf.notes) or "no kernel could be analysed", code="not-predicted")
        # "with the shared-memory tiles port adds" (none, maybe) against "plain kernels, no tiles" (the plain
        # trial of the budget comparison, or no shared-memory pass)
        perf.shared_memory = perf.shared_memory or (shared is not None and opts.get("shared_memory", "auto") != "off")
        return perf
