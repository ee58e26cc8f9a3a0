"""Per-nest performance prediction: every model, the roofline bound, overheads, block-size selection.

    perf = predict_nest(nest, plan, gpu, env)           # one NestPerformance of a NestPlan
    perf.total_s("gpuperf")                             # kernels + launches + transfers (+ context)

For every kernel of the mapping (kernels inside host time loops launch once
per host iteration) it runs every registered model (c2gpu.model.MODELS) on the
kernel's KernelProfile (c2gpu.perf.profile), checks each prediction against the
physical roofline bound (DRAM lower bound at the catalog's peak bandwidth,
flops at peak; a prediction below it is clamped up to it and says so), and adds
the host side: the launch cost (launches x the back-to-back launch cost + synchronizations x what a
synchronize adds, overhead.launch_back_to_back_us and launch_sync_us; `LaunchCost`),
host<->device copies from codegen's ArrayPlans over the host link (eq. 4.2,
each copy costed separately), and optionally CUDA context creation.

Block size (seed 004, 5.2.1): the three strategies (even division over the SMs,
utilization limit from registers and shared memory, warps to hide latency)
give n_w; `blocks(n_w)` gives the seed's shape.  A search over
candidate_block_shapes (x a power-of-two multiple of the warp size) plus the
strategies' shapes and the mapping's default predicts each with every model
and picks the lowest time of the default model.  A block forced with --block
is used as given (and reported as forced).
"""
from __future__ import annotations

import math
import time
from dataclasses import field, replace
from typing import Optional

from .. import units
from ..algorithms import blocksize as bs
from ..cpu.static import load_cpu
from ..model.gpu import GPU
from ..model import MODELS
from ..model.prediction import Prediction
from ..model.roofline import Roofline, roofline
from ..model.occupancy import Occupancy
from .categories import TimeCategories, kernel_categories
from ..drivers.options import block_for
from ..intexpr import EvaluationError
from ..planning.plan import Kernel, KernelSharedPlan, NestPlan, power_of_two_needed, require_plan
from ..planning.shared_tiles import tiles_for_kernel
from .machine import machine_params
from .geometry import Geometry
from .memory import MemoryAnalysis
from .profile import Intensity, KernelAnalysis, PerfError
from .registers import Registers
from .trace import InstructionCounts
from ..records import dataclass

# The default model (--model default): the one that validates better on testdata/validation/naive_cuda_measured.tsv
# (tests/bench_validation.py), by median predicted/measured ratio (closer to 1) and spread (geometric-mean
# error); evidence in DEFAULT_MODEL_EVIDENCE.  GPUPerf wins on both, on the calibration and on the held-out
# cases.  Caveat: its synchronization term (eq. 7-8) is uncalibrated and dominates kernels with barriers.
DEFAULT_MODEL = "gpuperf"
DEFAULT_MODEL_EVIDENCE = ("testdata/validation/naive_cuda_measured.tsv, 21 cases (A10, H100 PCIe, H100 SXM): median predicted/measured "
                          "GPUPerf 0.96, Resios 1.12; geometric-mean error x1.22 vs x1.25; held-out cases (syrk, "
                          "fdtd-2d, gesummv) GPUPerf 1.05, Resios 1.20; see tests/bench_validation.py")

SEARCH_TIE = 0.01          # a candidate must be more than 1% faster than the mapping's block to replace it
SYNC_NOTE_SHARE = 0.5      # flag GPUPerf's synchronization term when it is more than this share of T_exec


@dataclass
class ModelResult:
    model: str
    time_s: float                    # kernel time per launch (after the roofline check)
    raw_time_s: float                # what the model said
    clamped: bool
    breakdown: dict
    notes: tuple[str, ...]
    extras: dict
    hotspots: dict


@dataclass
class Hotspot:
    key: str
    text: str
    line: int
    idle_s: float                    # per launch: compute units idle while only this access was in flight
    share: float                     # of the kernel time


@dataclass
class BlockCandidate:
    block: tuple[int, int, int]
    occupancy: Optional[Occupancy]
    times: dict[str, float]          # model -> seconds per launch
    labels: list[str]
    error: str = ""
    results: dict = field(default_factory=dict, repr=False)   # model -> ModelResult
    bound: Optional[Roofline] = field(default=None, repr=False)


@dataclass
class KernelPerformance:
    name: str
    launches: float
    block: tuple[int, int, int]
    block_choice: str                # "forced", "search", "mapping"
    geometry: Geometry
    registers: Registers
    occupancy: Optional[Occupancy]
    ilp: float
    mlp: float
    hot_region: str
    intensity: Intensity
    instructions: InstructionCounts
    memory: MemoryAnalysis
    roofline: Roofline
    predictions: dict[str, ModelResult]
    benefits: dict[str, float]
    hotspots: list[Hotspot]
    candidates: list[BlockCandidate]
    strategies: dict[str, tuple[tuple[int, int, int], str]]
    tiles: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # model -> seed 002's time categories of its prediction (c2gpu.perf.categories), computed once here
    categories: dict[str, TimeCategories] = field(default_factory=dict)
    # the shared-memory plan of the kernel on the chosen block (tiles are sized by the block): the plan pass
    # takes it as it is (None: nothing staged)
    shared: Optional[KernelSharedPlan] = None


@dataclass
class Transfer:
    array: str
    direction: str                   # "in" / "out"
    bytes: float
    seconds: float
    offset: float | None = 0.0       # where the copied region starts, in bytes from the array's element 0
    #                                  (None: not known); the whole-program view compares regions with it


# How the host code waits for the GPU: with the number of launches (from the plan's host loops), it says how
# many synchronizations the launch cost counts.
SYNC_AT_END = "end"                 # the wrapper c2gpu emits (c2gpu/templates/wrapper.cu.j2): every launch of the nest
#                                     issued back to back on the stream, one cudaDeviceSynchronize after the last
SYNC_EACH_LAUNCH = "each-launch"    # a cudaDeviceSynchronize after every launch (how PolyBench/GPU times its
#                                     kernels: the programs of tests/validation_data.py)
SYNC_POLICIES = (SYNC_AT_END, SYNC_EACH_LAUNCH)


@dataclass(frozen=True)
class LaunchCost:
    """The host side of running a nest's kernels: launches x launch_s + synchronizes x synchronize_s."""
    launches: float
    synchronizes: float
    launch_s: float                  # one launch issued back to back (overhead.launch_back_to_back_us)
    synchronize_s: float             # what a synchronize adds to a launch (launch_sync_us - launch_back_to_back_us)

    @property
    def seconds(self) -> float:
        return self.launches * self.launch_s + self.synchronizes * self.synchronize_s


def launch_cost(launches: float, gpu: GPU, synchronize: str = SYNC_AT_END) -> LaunchCost:
    """The launch cost of `launches` launches on `gpu` when the host code synchronizes as `synchronize` says."""
    if synchronize not in SYNC_POLICIES:
        raise ValueError(f"synchronize must be one of {', '.join(SYNC_POLICIES)}, got {synchronize!r}")
    syncs = launches if synchronize == SYNC_EACH_LAUNCH else float(launches > 0)
    return LaunchCost(launches, syncs, gpu.launch_s, gpu.synchronize_s)


@dataclass
class NestPerformance:
    nest: str
    gpu: GPU
    default_model: str
    models: list[str]
    env: dict[str, int]
    kernels: list[KernelPerformance]
    transfers: list[Transfer]
    launch: LaunchCost
    context_s: float
    include_context: bool
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0             # analysis time
    shared_memory: bool = False      # the kernels were analysed with shared-memory tiles
    # the shared-memory decision (performance pass): (budget or None for none, why, total s, kernel s) per trial
    shared_trials: list = field(default_factory=list)
    shared_budget: Optional[int] = None
    without_shared_s: Optional[float] = None
    # the kernel structure (performance pass): the Mapping predicted, and the structures compared (StructureTrial)
    mapping: object = None
    structure_trials: list = field(default_factory=list)
    # code generation's refusal of the plan predicted ("" when it has code): such a plan is never the port
    not_generated: str = ""

    def kernel_s(self, model: str) -> float:
        return sum(k.predictions[model].time_s * k.launches for k in self.kernels)

    @property
    def launch_overhead_s(self) -> float:
        return self.launch.seconds

    @property
    def transfer_s(self) -> float:
        return sum(t.seconds for t in self.transfers)

    def total_s(self, model: str | None = None) -> float:
        model = model or self.default_model
        return self.kernel_s(model) + self.launch_overhead_s + self.transfer_s + \
            (self.context_s if self.include_context else 0.0)


# --------------------------------------------------------------------------- helpers

def kernel_items(mapping) -> list[tuple[object, tuple[int, ...]]]:
    """(Kernel, lids of the host loops around it) for every kernel of a Mapping, in launch order."""
    out = []

    def walk(items, host):
        for it in items:
            if isinstance(it, Kernel):
                out.append((it, host))
            else:
                walk(it.body, host + (it.lid,))
    walk(mapping.items, ())
    return out


def _block3(b) -> tuple[int, int, int]:
    b = tuple(int(x) for x in b)
    return (b + (1, 1, 1))[:3]


def model_predictions(prof, machine, phys_machine, models) -> tuple[dict[str, ModelResult], Roofline]:
    bound = roofline(prof, phys_machine)
    out = {}
    for name in models:
        # (no memo: a key for the inputs, the profile's repr, cost more than the GPUPerf model, and Resios's
        # simulation is seldom asked twice for the same inputs)
        pred: Prediction = MODELS[name].predict(prof, machine)
        t = pred.time_s
        notes = tuple(pred.notes)
        clamped = t < bound.bound_s * (1 - 1e-9)
        if clamped:
            notes += (f"{name} predicted {t:.3e} s, below the {bound.limiter} roofline bound {bound.bound_s:.3e} s: "
                      "clamped to the bound",)
            t = bound.bound_s
        out[name] = ModelResult(name, t, pred.time_s, clamped, dict(pred.breakdown), notes, dict(pred.extras),
                                dict(pred.hotspots))
    return out, bound


def transfers_of(nest, code, gpu: GPU, env: dict[str, int]) -> tuple[list[Transfer], list[str]]:
    """Host<->device copies from codegen's ArrayPlans (their first elements and counts evaluated for the sizes `env`)."""
    out, notes = [], []
    if code is None:
        return out, notes
    cpu = None
    for plan in code.arrays:
        es = nest.array(plan.name).elem_size
        for direction, copy in (("in", plan.copy_in), ("out", plan.copy_out)):
            if copy is None:
                continue
            try:
                n = max(0, copy[1].evaluate(env))
            except EvaluationError as e:
                notes.append(f"copy-{direction} size of '{plan.name}' ({copy[1]}) not evaluated: {e}")
                continue
            try:
                offset = float(copy[0].evaluate(env) * es)
            except EvaluationError:
                offset = None
            nbytes = float(n * es)
            seconds = gpu.transfer_time_s(nbytes)
            if plan.packed is not None:
                # a table of rows: the host gathers them into the staging block before the copy in (and scatters
                # them after the copy out), every element read and written once by one core
                cpu = cpu or load_cpu()
                host_s = 2 * nbytes / (cpu.bandwidth_gbs["dram"] * 1e9)
                seconds += host_s
                notes.append(f"'{plan.name}': its rows are {'gathered' if direction == 'in' else 'scattered'} on the "
                             f"host, {units.seconds(host_s)} at {cpu.bandwidth_gbs['dram']:g} GB/s (dram_gbs of the CPU description "
                             f"{cpu.key}), "
                             f"counted in its copy-{direction}")
            out.append(Transfer(plan.name, direction, nbytes, seconds, offset))
    for r in getattr(code, "reductions", []):
        size = 8 if r["type"] in ("double", "long", "long long", "unsigned long", "unsigned long long") else 4
        out.append(Transfer(r["target"], "in", float(size), gpu.transfer_time_s(size)))
        out.append(Transfer(r["target"], "out", float(size), gpu.transfer_time_s(size)))
    return out, notes


def _replan_shared(nest, kernel, block, options, plan):
    """The shared-memory plan for `kernel` on another block shape (tiles are sized by the block)."""
    if plan is None:
        return None
    try:
        return tiles_for_kernel(nest, replace(kernel, block=block), options)
    except Exception:
        return plan


# --------------------------------------------------------------------------- block size

def strategies(ka: KernelAnalysis, block) -> dict[str, tuple[tuple[int, int, int], str]]:
    """Seed 004 section 5.2.1: n_w^1, n_w^2, n_w^3 and their minimum, as block shapes (blocks(n_w))."""
    gpu = ka.gpu
    geo = ka.geometry(block)
    ndims = max(1, len(ka.kernel.loops))
    threads = max(1, geo.threads)
    regs = ka.registers.count
    smem_thread = ka.shared_bytes(block) / max(1, block[0] * block[1] * block[2])
    s1 = bs.even_division(threads, gpu.sm_count, gpu.warp_size)
    s2 = bs.utilization_limit(gpu.max_warps_per_sm, gpu.registers_per_sm, regs, gpu.shared_mem_per_sm,
                              smem_thread, gpu.warp_size)
    m = ka.machine
    lats = []
    for cls, n in ka.instructions(block).per_class.items():
        if n > 0:
            lats.append((m.inst_class(cls).latency, False))
    if ka.memory(block).accesses:
        lats.append((gpu.dram_latency_cycles, True))
    ai = ka.intensity(block).alg63
    s3 = bs.latency_hiding(lats, ai if math.isfinite(ai) else 1e9, 4.0, gpu.warp_size)
    best = bs.choose_block_size(threads, gpu.sm_count, max_threads_per_block=gpu.max_threads_per_block,
                                max_warps_per_sm=gpu.max_warps_per_sm, regs_per_sm=gpu.registers_per_sm,
                                regs_per_thread=regs, smem_per_sm=gpu.shared_mem_per_sm,
                                smem_per_thread=smem_thread, latencies=lats,
                                arithmetic_intensity=ai if math.isfinite(ai) else 1e9, c=4.0,
                                warp_size=gpu.warp_size)
    cap = max(1, gpu.max_threads_per_block // gpu.warp_size)

    def shape(choice) -> tuple[int, int, int]:
        w = max(1, min(choice.warps, cap))
        b = bs.block_from_warps(w, min(ndims, 2), gpu.warp_size)
        return _block3(b)

    return {"even division (n_w^1)": (shape(s1), s1.explanation),
            "utilization (n_w^2)": (shape(s2), s2.explanation),
            "latency hiding (n_w^3)": (shape(s3), s3.explanation),
            "seed 5.2.1 choice min(n_w)": (shape(best), best.explanation)}


def search_shapes(ka: KernelAnalysis, block) -> list[tuple[int, int, int]]:
    gpu = ka.gpu
    fixed = {"xyz".index(d): n for d, n in ka.kernel.fixed_threads.items()}
    if fixed:
        # a loop taken in turns fixes the threads along its dimension (MappedLoop.turns): the others take powers
        # of two
        others = [d for d in range(max(1, len(ka.kernel.loops))) if d not in fixed]
        room = gpu.max_threads_per_block // math.prod(fixed.values())
        shapes = [[1, 1, 1]]
        for d in others:
            shapes = [s[:d] + [1 << e] + s[d + 1:] for s in shapes for e in range(room.bit_length())]
        out = []
        for s in shapes:
            for k, n in fixed.items():
                s[k] = n
            if s[0] * s[1] * s[2] <= gpu.max_threads_per_block:
                out.append(tuple(s))
        return out
    geo = ka.geometry(block)
    ndims = max(1, len(ka.kernel.loops))
    ext = list(geo.extents[:ndims])
    shapes = bs.candidate_block_shapes(ndims, ext, max_threads=gpu.max_threads_per_block, warp_size=gpu.warp_size)
    keep = []
    for s in shapes:
        x = s[0]
        if x >= gpu.warp_size and (x & (x - 1)) and x != -(-ext[0] // gpu.warp_size) * gpu.warp_size:
            continue      # x: powers of two (and the extent rounded up to a warp); other multiples add little
        keep.append(_block3(s))
    return keep


# --------------------------------------------------------------------------- nest prediction

def predict_nest(nest, plan: NestPlan, gpu: GPU, env: dict[str, int] | None = None, *, code=None,
                 options: dict | None = None, models: list[str] | None = None, search: bool = True,
                 include_context: bool = False, registers: str = "auto",
                 synchronize: str = SYNC_AT_END) -> NestPerformance:
    """Predict every kernel of a plan (a finalized one, or a candidate the performance pass compares) on
    `gpu` (see the module doc).  `code` is the plan's NestCode or its layout (codegen.nest_layout: ArrayPlans
    for transfers; a printed kernel's text for ptxas).  `synchronize` (SYNC_POLICIES) is how the host code that
    runs the kernels synchronizes: the emitted wrapper's way unless another program is modelled."""
    plan = require_plan(plan, "the performance model")
    mapping, shared = plan.mapping, plan.tiles
    t0 = time.perf_counter()
    options = options or {}
    env = {k: int(v) for k, v in (env or {}).items()}
    models = list(models or MODELS)
    default = DEFAULT_MODEL if DEFAULT_MODEL in models else models[0]
    phys = machine_params(gpu)
    # the kernels ptxas can count (a candidate's layout, codegen.nest_layout, prints none: estimated)
    codes = {k.name: k for k in (code.kernels if code is not None else []) if k.text}
    perf = NestPerformance(nest.name, gpu, default, models, env, [], [], launch_cost(0, gpu, synchronize),
                           gpu.context_creation_ms * 1e-3,
                           include_context)
    for kernel, host in kernel_items(mapping):
        splan = shared.kernels.get(kernel.name) if shared is not None else None
        forced = block_for(options.get("block"), kernel.name)     # --block, for every kernel or this one
        if forced and kernel.fixed_threads:
            forced = None           # the threads its loops taken in turns fix (MappedLoop.turns) stay
        kc = codes.get(kernel.name)
        ka = KernelAnalysis(nest, kernel, gpu, env, host_lids=host, code=kc, shared=splan, registers=registers,
                            promote=plan.scalar_replacement)
        block = _block3(kernel.block)
        regs = ka.registers
        analyses: dict[tuple, KernelAnalysis] = {block: ka}

        def analysis_for(b):
            if b in analyses:
                return analyses[b]
            if splan is None:
                analyses[b] = ka
                return ka
            k2 = replace(kernel, block=b)
            a2 = KernelAnalysis(nest, k2, gpu, env, host_lids=host, code=kc,
                                shared=_replan_shared(nest, kernel, b, {**options, "params": env}, splan),
                                registers=registers, promote=plan.scalar_replacement)
            a2.__dict__["registers"] = regs       # same kernel: reuse ptxas's count
            analyses[b] = a2
            return a2

        def evaluate_block(b, which=(default,)) -> BlockCandidate:
            """`b` predicted by the models in `which`: the search compares candidates by the default model
            alone; the others are evaluated on the chosen block (a Resios simulation per candidate was half
            the search's time and decided nothing)."""
            a = analysis_for(b)
            threads = b[0] * b[1] * b[2]
            if threads > gpu.max_threads_per_block:
                return BlockCandidate(b, None, {}, [], "too many threads")
            if not kernel.takes_block(b):
                return BlockCandidate(b, None, {}, [], "the reduction tree needs a power-of-two block"
                                      if kernel.reductions and power_of_two_needed(b) else
                                      "needs " + ", ".join(f"{n} threads along {d}" for d, n in
                                                           kernel.fixed_threads.items()) + " (a loop taken in turns)")
            try:
                prof, mach = a.profile(b)
            except PerfError as e:
                return BlockCandidate(b, None, {}, [], str(e))
            res, bound = model_predictions(prof, mach, phys, which)
            return BlockCandidate(b, a.occupancy(b), {m: r.time_s for m, r in res.items()}, [], "", res, bound)

        candidates: dict[tuple, BlockCandidate] = {}
        strat = {}
        notes = []
        try:
            if search and not kernel.serial:      # a one-thread kernel runs in one thread whatever its block
                strat = strategies(ka, block)
                shapes = search_shapes(ka, block) + [s for s, _ in strat.values()] + [block]
                for s in shapes:
                    if s not in candidates:
                        candidates[s] = evaluate_block(s)
                for label, (s, _why) in strat.items():
                    candidates[s].labels.append(label)
            if block not in candidates:
                candidates[block] = evaluate_block(block, models if not search else (default,))
            candidates[block].labels.append("forced (--block)" if forced else "mapping default")
            chosen, how = block, ("forced" if forced else "mapping")
            if search and not forced and not kernel.serial:
                valid = [c for c in candidates.values() if c.times]
                if valid:
                    best = min(valid, key=lambda c: (c.times[default], c.block[0] * c.block[1] * c.block[2]))
                    base = candidates[block]
                    if base.times and base.times[default] <= best.times[default] * (1 + SEARCH_TIE):
                        best = base     # within the tie margin of the best: keep the mapping's block
                    best.labels.append("best (search)")
                    chosen, how = best.block, "search"
            a = analysis_for(chosen)
            prof, mach = a.profile(chosen)
        except PerfError as e:
            perf.notes.append(f"{kernel.name}: {e}")
            continue
        preds, bound = model_predictions(prof, mach, phys, models)      # every model on the chosen block
        if candidates.get(chosen) is not None and candidates[chosen].times:
            candidates[chosen].times = {m: r.time_s for m, r in preds.items()}
            candidates[chosen].results = preds
        mem = a.memory(chosen)
        hot = []
        if "resios" in preds:
            r = preds["resios"]
            by_key = {c.key: c for c in mem.accesses}
            for key, idle in list(r.hotspots.items())[:5]:
                c = by_key.get(key)
                tag = f" [{c.where}]" if c is not None and c.where != "global" else ""
                hot.append(Hotspot(key, f"{c.kind} {c.text}{tag}" if c else key, c.line if c else 0, idle,
                                   idle / r.raw_time_s if r.raw_time_s > 0 else 0.0))
        benefits = {}
        if "gpuperf" in preds:
            ex = preds["gpuperf"].extras
            o_sync, t_exec = float(ex.get("O_sync", 0.0)), float(ex.get("T_exec", 0.0))
            if t_exec > 0 and o_sync > SYNC_NOTE_SHARE * t_exec:
                notes.append(f"GPUPerf's synchronization overhead (eq. 7-8) is {o_sync / t_exec:.0%} of its time: "
                             f"{prof.syncs:.3g} __syncthreads per warp with Gamma = {gpu.gpuperf_sync_gamma:g} "
                             "(not calibrated: the validation kernels have no barriers; see the GPU file's source); "
                             "Resios does not model barriers: the truth is likely in between")
            benefits = {k: float(ex[k]) for k in ("B_itilp", "B_serial", "B_fp", "B_memlp", "T_fp", "T_mem_min",
                                                  "T_comp", "T_mem", "T_overlap") if k in ex}
            benefits["case"] = ex.get("case")
        tiles = []
        if a.shared is not None:
            for o in a.shared.chosen:
                tiles.append(f"{o.array} [{']['.join(str(e) for e in o.shape)}] ({o.kind}, {o.size_bytes} B, "
                             f"{o.conflicts}-way bank conflicts)")
        ordered = sorted(candidates.values(), key=lambda c: (c.block[2], c.block[1], c.block[0]))
        perf.kernels.append(KernelPerformance(
            kernel.name, a.launches, chosen, how, a.geometry(chosen), a.registers, a.occupancy(chosen), a.ilp,
            a.mlp, a.hot_region[1], a.intensity(chosen), a.instructions(chosen), mem, bound, preds, benefits, hot,
            ordered, strat, tiles, notes + mem.flags,
            {m: kernel_categories(r, prof, mach, bound, a.launches) for m, r in preds.items()}, a.shared))
    perf.shared_memory = any(k.tiles for k in perf.kernels)    # the performance pass says more (tiles considered)
    perf.launch = launch_cost(sum(k.launches for k in perf.kernels), gpu, synchronize)
    perf.transfers, tnotes = transfers_of(nest, code, gpu, env)
    perf.notes.extend(tnotes)
    perf.seconds = time.perf_counter() - t0
    return perf
