"""Where a kernel's time goes: seed 002's time categories, predicted statically from c2gpu's own model terms.

Seed 002 (a CUDA profiler built on performance predicates) splits every warp's time into orthogonal
categories and averages the warps' profiles into a kernel profile (its section 3, "warp profile" and "kernel
profile"): communicate (host-device transfers), compute, read (global loads), write (global stores), explicit
synchronization (__syncthreads), implicit synchronization and wasted computation (divergence: the lanes of a
diverged warp wait at the reconvergence point and execute the other path predicated off), and idle (warp
slots with no thread to run: not enough threads, load imbalance).  The seed measures them with clock counters;
c2gpu predicts them from the terms its models already compute, no run needed:

    kernel_categories(result, prof, machine, roofline, launches) -> TimeCategories   (per kernel and model)
    nest_categories(perf, model)                                  -> NestCategories   (communicate, launches)

The categories of a kernel sum to its predicted time per launch (`ModelResult.time_s`, after the roofline
check) and, times its launches, to its time in the nest; the nest's categories add the host-device transfers
(communicate) and the launch overhead, and sum to `NestPerformance.total_s`.

How each category is fed (per launch), in three steps:

1. idle (seed 002: "idle: not enough threads to keep the GPU busy", "load imbalance").  Both models predict
   the busiest SM (GPUPerf: #warps per SM = #total warps / #active SMs; Resios 5.2.1: kernel time = time of
   the busiest SM, blocks_per_sm = ceil(blocks / SMs)).  Averaged over the GPU's warp slots as the seed
   averages its warps, the share of the time with work is the product of
     - the SMs' share: blocks / (SMs x blocks of the busiest SM): SMs with no block (a grid smaller than
       the GPU) and SMs with fewer blocks than the busiest (load imbalance, the tail);
     - the slots' share: resident blocks / the blocks one SM could hold of this kernel (occupancy: registers,
       shared memory, warps): below 1 only when the grid gives an SM fewer blocks than it holds (not enough
       threads; an occupancy limited by registers is a property of the kernel, not idleness);
     - the lanes' share: useful threads / launched lanes (threads past the loop bounds, partial warps).
   idle = model time x (1 - that product); the model's own decomposition below splits the rest.
2. the busy rest, from the default model's terms (or each model's, for its prediction):
   GPUPerf (seed 000, eq. 1-17): T_exec = T_comp + T_mem - T_overlap.  The overlap (eq. 16) hides part of
   the computation under memory or of memory under computation; which instructions, the model does not say,
   and seed 002 measures each warp's time in each kind of instruction: in an overlapped kernel every warp
   spends time in both.  So the overlap is shared in proportion: each term below is scaled by
   T_exec / (T_comp + T_mem): each side keeps its share of T_comp + T_mem.  T_comp splits as eq. 2 and 6
   do:
     W_parallel (eq. 3: the issue of every useful instruction, memory instructions' issue included), O_SFU
     (eq. 9) and O_bank (shared-memory replays; shared memory is on-chip work, seed 002 has no category for it)
                                                                          -> compute
     O_sync (eq. 7-8, __syncthreads of tiles and reduction trees)         -> explicit synchronization
     O_CFdiv (the issue of the instructions a warp runs only because it diverged: the lanes of the other
     path wait; a part of the warp's instruction count, which W_parallel does not pay again; module doc of
     c2gpu/model/gpuperf.py)                                              -> divergence
   T_mem (eq. 11: #mem insts x AMAT / ITMLP) splits between loads and stores in proportion to
   their warp requests x transactions per request (eq. 13: a request's cost grows with its transactions)
                                                                          -> global reads / global writes
   Resios (seed 004, Alg. 5.1): the simulation's time is the cycles with a compute op in service
   (compute_busy) plus the cycles with only memory in service, charged to the accesses in service (the
   memory hotspots, R 5.3).  compute_busy -> compute, except the divergent instructions' share of the
   warp's instructions (Branch nodes run both paths, R 5.2.1; the share GPUPerf's O_CFdiv takes) -> divergence; each access's idle cycles ->
   global reads or global writes (its trace node's is_store); shared-memory nodes -> compute (on-chip).
   Resios does not model __syncthreads (its notes say so): explicit synchronization is 0 in its split.
   Any other model: its time splits as the roofline's memory and compute bounds.
3. a prediction clamped up to the roofline bound: the clamp (bound - model time) goes to the bound's limiter:
   memory -> global reads and writes as T_mem splits, compute -> compute.

Communicate (host-device transfers, eq. 4.2) and the launch overhead belong to the nest, not to a kernel:
`nest_categories` puts them next to the kernels' categories (each kernel's per-launch categories times its
launches: a kernel inside a host loop launches once per iteration of the loops around it).  The launch
overhead is NestPerformance.launch_overhead_s as predict_nest costs it (all launches of all kernels).
"""
from __future__ import annotations

import math
from dataclasses import field

from ..model.inputs import KernelProfile, MachineParams, geometry
from ..model.roofline import Roofline
from ..records import dataclass

#: The kernel categories, in the order the reports show them, with the words the reports use.
CATEGORIES: dict[str, str] = {
    "compute": "compute",
    "global_read": "global reads",
    "global_write": "global writes",
    "explicit_sync": "explicit synchronization",
    "divergence": "divergence",
    "idle": "idle warp slots",
}
#: What each category means (the HTML legend).
MEANING: dict[str, str] = {
    "communicate": "host-device transfers (the nest's, not a kernel's)",
    "launches": "kernel launch overhead (the nest's, not a kernel's)",
    "compute": "issuing and executing instructions (arithmetic, address arithmetic, shared memory)",
    "global_read": "waiting on global-memory loads",
    "global_write": "waiting on global-memory stores",
    "explicit_sync": "__syncthreads barriers (shared-memory tiles, reduction trees)",
    "divergence": "implicit synchronization and wasted computation: a diverged warp runs both paths",
    "idle": "the GPU's warp slots with no thread to run (not enough threads, load imbalance between SMs), as a "
            "share of the kernel's time: a share of the slots, not a cost that more threads of the same kind remove "
            "(a kernel whose time is each thread's own chain of work takes as long with fewer empty slots)",
}
#: The limiter in plain words: what would have to change.
LIMITER_WORDS: dict[str, str] = {
    "compute": "compute",
    "global_read": "global reads",
    "global_write": "global writes",
    "explicit_sync": "explicit synchronization (__syncthreads)",
    "divergence": "divergence (implicit synchronization and wasted computation)",
    "idle": "idle GPU (not enough threads, load imbalance)",
}


@dataclass(frozen=True)
class TimeCategories:
    """One kernel's predicted time per launch (one model), split into seed 002's categories."""
    model: str
    per_launch_s: dict[str, float]      # category (CATEGORIES) -> seconds per launch; sums to the kernel time
    launches: float
    busy_share: float                   # of the warp slots with work (1 - idle share), step 1 of the module doc

    @property
    def time_s(self) -> float:
        """The kernel's time per launch: the sum of its categories."""
        return math.fsum(self.per_launch_s.values())

    @property
    def all_launches_s(self) -> dict[str, float]:
        """Category -> seconds over all launches; sums (math.fsum) to the time per launch x launches."""
        return _exact({c: s * self.launches for c, s in self.per_launch_s.items()}, self.time_s * self.launches)

    @property
    def limiter(self) -> str:
        """The largest category of the work the kernel does (the first of CATEGORIES on a tie).  Never idle warp
        slots while there is work: their share is of the slots, and removing them need not shorten the kernel
        (the same time with 52% or 61% of the slots idle, as two block shapes of matmul have)."""
        busy = [c for c in CATEGORIES if c != "idle"]
        if not any(self.per_launch_s[c] > 0 for c in busy):
            return "idle"
        return max(busy, key=lambda c: (self.per_launch_s[c], -busy.index(c)))

    def share(self, category: str) -> float:
        t = self.time_s
        return self.per_launch_s[category] / t if t > 0 else 0.0

    @property
    def limiter_text(self) -> str:
        """"global reads: 61% of the kernel's time"; when most warp slots are idle, the limiter's share of the work
        the threads do, and the idle share said apart ("global writes: 80% of the threads' work; 99% of the warp
        slots idle: too few threads")."""
        lim, idle = self.limiter, self.share("idle")
        if lim == "idle" or idle < 0.5:
            return f"{LIMITER_WORDS[lim]}: {self.share(lim):.0%} of the kernel's time"
        work = self.time_s - self.per_launch_s["idle"]
        of_work = self.per_launch_s[lim] / work if work > 0 else 0.0
        return (f"{LIMITER_WORDS[lim]}: {of_work:.0%} of the threads' work; {idle:.0%} of the warp slots idle "
                "(not enough threads, load imbalance)")


@dataclass(frozen=True)
class NestCategories:
    """A nest's predicted GPU time (one model): the kernels' categories summed over their launches, plus what
    belongs to the nest (communicate, launches, context creation when included)."""
    model: str
    communicate_s: float
    launches_s: float
    launches: float
    context_s: float                    # 0 unless --include-context
    kernels_s: dict[str, float] = field(default_factory=dict)   # category -> seconds, all kernels and launches

    @property
    def total_s(self) -> float:
        return math.fsum([*self.kernels_s.values(), self.communicate_s, self.launches_s, self.context_s])


# --------------------------------------------------------------------------- step 1: idle

def busy_share(prof: KernelProfile, machine: MachineParams) -> float:
    """The share of the GPU's warp slots with work over the kernel's time (module doc, step 1)."""
    g = geometry(prof, machine)
    cap_warps = machine.max_warps_per_sm if prof.active_warps_per_sm is None else \
        min(prof.active_warps_per_sm, machine.max_warps_per_sm)
    cap_blocks = max(1, min(machine.max_blocks_per_sm, int(cap_warps // g.warps_per_block)))
    sms = prof.grid_blocks / (machine.sm_count * g.blocks_per_sm)
    slots = min(1.0, g.resident_blocks / cap_blocks)
    lanes = min(1.0, prof.threads / (prof.grid_blocks * g.warps_per_block * machine.warp_size))
    return sms * slots * lanes


# --------------------------------------------------------------------------- step 2: the busy rest

def _memory_split(prof: KernelProfile, seconds: float) -> dict[str, float]:
    """`seconds` of global-memory time between loads and stores, by warp requests x transactions."""
    rd = sum(a.count * a.transactions for a in prof.global_accesses if not a.is_store)
    wr = sum(a.count * a.transactions for a in prof.global_accesses if a.is_store)
    if rd + wr <= 0:
        return {"global_read": seconds}
    return {"global_read": seconds * rd / (rd + wr), "global_write": seconds * wr / (rd + wr)}


def _gpuperf_parts(extras: dict, prof: KernelProfile) -> dict[str, float]:
    t_comp, t_mem = float(extras["T_comp"]), float(extras["T_mem"])
    f = float(extras["T_exec"]) / (t_comp + t_mem) if t_comp + t_mem > 0 else 0.0     # the overlap, shared
    parts = {"compute": f * (float(extras["W_parallel"]) + float(extras["O_SFU"]) + float(extras["O_bank"])),
             "explicit_sync": f * float(extras["O_sync"]),
             "divergence": f * float(extras["O_CFdiv"])}
    for c, s in _memory_split(prof, f * t_mem).items():
        parts[c] = parts.get(c, 0.0) + s
    return parts


def _resios_parts(breakdown: dict, hotspots: dict, prof: KernelProfile) -> dict[str, float]:
    p = prof.with_trace_counts()
    # the warp's instructions of which divergent_insts are a part: compute and memory instructions
    insts = sum(p.inst_counts.values()) + sum(a.count for a in p.global_accesses + p.shared_accesses)
    div = min(1.0, p.divergent_insts / insts) if insts > 0 else 0.0
    busy = float(breakdown.get("compute_busy", 0.0))
    parts = {"compute": busy * (1 - div), "divergence": busy * div}
    store = {a.id: a.is_store for a in p.global_accesses}
    for key, s in hotspots.items():
        c = "compute" if key not in store else "global_write" if store[key] else "global_read"
        parts[c] = parts.get(c, 0.0) + float(s)
    return parts


def _roofline_parts(bound: Roofline, prof: KernelProfile, seconds: float = 1.0) -> dict[str, float]:
    total = bound.memory_s + bound.compute_s
    if total <= 0:
        return {"compute": seconds}
    parts = _memory_split(prof, seconds * bound.memory_s / total)
    parts["compute"] = seconds * bound.compute_s / total
    return parts


def model_parts(result, prof: KernelProfile, bound: Roofline) -> dict[str, float]:
    """The busy time of one model's prediction split by its own terms (module doc, step 2); seconds that sum
    to about the model's time (rescaled by the caller)."""
    if result.model == "gpuperf" and "T_comp" in result.extras:
        return _gpuperf_parts(result.extras, prof)
    if result.model == "resios" and "compute_busy" in result.breakdown:
        return _resios_parts(result.breakdown, result.hotspots, prof)
    return _roofline_parts(bound, prof, result.raw_time_s)


# --------------------------------------------------------------------------- the kernel's categories

def _exact(parts: dict[str, float], total: float) -> dict[str, float]:
    """`parts` with the rounding left over put in the largest, so that they sum (math.fsum) to `total` to the
    last bit: one correction, then single-ulp steps of the largest (its ulp is at most the total's)."""
    out = dict(parts)
    top = max(out, key=out.get)
    out[top] += total - math.fsum(out.values())
    for _ in range(64):
        s = math.fsum(out.values())
        if s == total:
            break
        out[top] = math.nextafter(out[top], math.inf if s < total else -math.inf)
    return out


def kernel_categories(result, prof: KernelProfile, machine: MachineParams, bound: Roofline,
                      launches: float) -> TimeCategories:
    """Seed 002's categories of one model's prediction (`result`, a predict.ModelResult) of a kernel whose
    profile is `prof` on `machine` (module doc)."""
    raw = result.raw_time_s
    share = busy_share(prof, machine)
    parts = {c: 0.0 for c in CATEGORIES}
    model = {c: s for c, s in model_parts(result, prof, bound).items() if s > 0}
    weight = math.fsum(model.values())
    busy = raw * share
    if weight > 0:
        for c, s in model.items():
            parts[c] += busy * s / weight
    else:
        parts["compute"] += busy
    parts["idle"] += raw - busy
    if result.time_s > raw:                # clamped up to the roofline bound (step 3)
        clamp = result.time_s - raw
        if bound.limiter == "memory":
            for c, s in _memory_split(prof, clamp).items():
                parts[c] += s
        else:
            parts["compute"] += clamp
    return TimeCategories(result.model, _exact(parts, result.time_s), launches, share)


# --------------------------------------------------------------------------- the nest

def nest_categories(perf, model: str | None = None) -> NestCategories:
    """The nest's time (NestPerformance `perf`, one model) as the kernels' categories over all their launches,
    the transfers (communicate) and the launch overhead; its total_s is perf.total_s(model)."""
    model = model or perf.default_model
    every = [k.categories[model].all_launches_s for k in perf.kernels]
    kernels = {c: math.fsum(a[c] for a in every) for c in CATEGORIES}
    return NestCategories(model, perf.transfer_s, perf.launch_overhead_s, sum(k.launches for k in perf.kernels),
                          perf.context_s if perf.include_context else 0.0, kernels)
