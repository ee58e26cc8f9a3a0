"""Resios (MSc thesis, Utrecht / Vector Fabrics, 2011): delay formulas + coarse warp simulation.

    TIME      = OVERHEAD + EXECUTION                                   (4.1)
    OVERHEAD  = sum TRANSFER(size) + CUDA context + kernel LAUNCH      (4.2, 4.3)
    EXECUTION = sum over the instruction stream of TLP-adjusted delays (4.4)
                compute delay (4.5), memory delay (4.6) with the
                serialization penalty of global (4.7, 4.8) / shared (4.9) memory;
                TLP comes from the coarse warp simulation, Algorithm 5.1.

Where the 4.3.1 worked example's numbers come from (madd on GTX 460, Table 3.1):
22 = latency (cycles), 16 = throughput (thread-ops/cycle/SM) so one warp
instruction needs warp_size/throughput = 32/16 = 2 cycles at peak, and
11 = max_i = warps needed for peak = latency / (2 cycles) by Little's law.
Up to 11 warps each instruction costs 22/TLP (latency shared by the warps);
beyond, the pipe is full and each extra warp pays 2 cycles:
22/(11*TLP) + 2.  Totals: TLP*delay = 22 cycles per round for TLP <= 11,
then ~2*TLP: throughput bound.

Interpretation choices (the thesis is loose at these points):
* eq 4.4 multiplies by n_threads but delays are per *warp* instruction and the
  madd validation (TLP*sum delay) counts warps: we read EXECUTION as
  warps-per-SM * sum(delay) cycles / clk, and the simulation realizes it.
* TLP (Alg. 5.1: "|queue_r| + |unit_c|, the number of executing warps") is taken
  per unit type: the warps waiting for or occupying the compute unit for a
  compute op, the memory unit for a memory op.  A warp stalled on a 500-cycle
  load cannot hide ALU latency, and memory parallelism in eq 4.6 is the number
  of requests in flight.  For pure kernels this is exactly Alg. 5.1's count and
  reproduces eq 4.5 / 4.6.
* Each unit is a single server (R 4.3.1: "we model a pipeline with a limit of
  1 and adjust the latencies"); parallelism enters only through the division
  by TLP.  Unit counts are parameters as R's simulation list says, but >1 unit
  together with the TLP division double-counts overlap: keep 1 unless calibrated.
* A trace item's delay is fixed the first time its warp is seen with that item
  current (R: "we also adjust the delays of instructions from the ready queue
  and mark them as processed").
* eq 4.6 and eq 4.8's example disagree in form: 4.6 is a per-request delay,
  the 4.8 example "500 + 8 * 128c/64 = 500 + 16c" is latency + max_p * penalty,
  i.e. the time of a full round of max_p concurrent requests (Fig 4.4 plots its
  inverse).  Both are provided: memory_delay (4.6) and round_delay (the examples);
  n * memory_delay(n) = latency + n * penalty for n > max_p, so they agree.
* Bandwidth in the simulation is the chip's share per active SM, BW / #SMs,
  as R chapter 7 does (86.4/7 GB/s); the 4.8 example uses the chip's 64 B/cycle.
* Eq 4.9's BW: the text calls it the bandwidth of one bank, chapter 7 says
  4 B/cycle, the worked example uses 32 B/cycle (to get 37 + c).  It is the field
  MachineParams.shared_bank_bw_bytes_per_cycle; the GTX460 preset keeps 32 so the
  thesis' example holds.  c = conflict_degree - 1 (degree 1 = conflict free).
* Eq 4.2's regression BW_inc = 100*size + 692 MB/s only makes physical sense
  with size in KiB (in bytes it saturates at 43 B, in MB the small-copy plateau
  would be 10 ms): the plateau of ~10 us and saturation at ~43 KiB match a PCIe 2.0
  bus.  The unit is MachineParams.pcie_size_unit_bytes (1024).
* Memory ops use KernelProfile.mlp as their "ILP" (independent requests per
  thread); compute ops use KernelProfile.ilp.  Per-node / per-loop overrides win.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import replace
from typing import Dict, List, Optional, Sequence, Tuple

from .inputs import (Branch, Compute, GlobalMem, KernelProfile, Loop, MachineParams,
                     SharedMem, TraceNode, geometry)
from .prediction import Prediction
from ..records import dataclass


# ---------------------------------------------------------------- overhead

def transfer_time_s(size_bytes: float, m: MachineParams) -> float:
    """Eq 4.2: TRANSFER(size) = size / min(BW_peak, BW_inc(size)), BW_inc = 100*size + 692 MB/s."""
    if size_bytes <= 0:
        return 0.0
    units = size_bytes / m.pcie_size_unit_bytes
    bw_mbps = min(m.pcie_peak_mbps, m.pcie_slope_mbps * units + m.pcie_intercept_mbps)
    return size_bytes / (bw_mbps * 1e6)


def overhead_parts(transfers: Sequence[float], m: MachineParams) -> Dict[str, float]:
    """Eq 4.3: OVERHEAD = TRANSFER(size) + CUDA + LAUNCH (65 ms + 4 us on GTX 460).
    Each copy is costed separately: eq 4.2 is not linear in size."""
    return {"transfer": sum((transfer_time_s(s, m) for s in transfers), 0.0),
            "context": m.context_init_s,
            "launch": m.launch_overhead_s}


# ---------------------------------------------------------------- delays

def compute_delay(latency: float, throughput: float, max_i: float, ilp: float, tlp: float,
                  warp_size: int = 32) -> float:
    """Eq 4.5, cycles per warp instruction when ILP*TLP instructions are in flight."""
    par = ilp * tlp
    if par <= max_i:
        return latency / par                                   # latency shared, pipe not full
    return latency / (par * max_i) + warp_size / throughput    # full pipe: pay 1/throughput


def memory_delay(latency: float, penalty: float, ilp: float, tlp: float, max_p: float) -> float:
    """Eq 4.6, cycles per warp request."""
    par = ilp * tlp
    if par <= max_p:
        return latency / par
    return latency / par + penalty


def global_penalty(transactions: float, transaction_bytes: float, bw_bytes_per_cycle: float) -> float:
    """Eq 4.7/4.8: penalty = transfer/BW = size * c / BW (c = transactions per warp request)."""
    return transaction_bytes * transactions / bw_bytes_per_cycle


def shared_penalty(conflicts: float, size: float, banks: int, bank_bw: float, warp_size: int = 32) -> float:
    """Eq 4.9: warp*size/(n_banks*BW) (served by all banks) + c*size/BW (serialized)."""
    return warp_size * size / (banks * bank_bw) + conflicts * size / bank_bw


def round_delay(latency: float, penalty: float, max_p: float) -> float:
    """Time of one full round of max_p concurrent requests: latency + max_p * penalty.
    The form of the thesis' examples: 500 + 8*128c/64 = 500 + 16c (4.8), 36 + 8*(4/32 + 4c/32) = 37 + c (4.9)."""
    return latency + max_p * penalty


def execution_eq44_cycles(delays_per_warp: Sequence[float], warps: float) -> float:
    """Eq 4.4 read per warp: warps * sum_i delay(i) (divide by clk for seconds)."""
    return warps * sum(delays_per_warp)


# ---------------------------------------------------------------- trace

@dataclass(frozen=True)
class Event:
    """One flattened trace item, `weight` back-to-back instances of one op."""
    unit: str          # "c" compute, "m" memory (R's two execution-unit types)
    weight: float
    latency: float
    ilp: float
    threshold: float   # max_i (4.5) or max_p (4.6)
    div2: float        # eq 4.5's extra 1/max_i in its second case; 1 for memory (4.6)
    penalty: float     # warp_size/throughput (4.5) or transfer/BW (4.7)
    id: str

    def delay(self, tlp: float) -> float:
        # weight * compute_delay (eq 4.5) or weight * memory_delay (eq 4.6), in one form
        par = self.ilp * tlp
        if par <= self.threshold:
            return self.weight * self.latency / par
        return self.weight * (self.latency / (par * self.div2) + self.penalty)


def flatten(trace: Sequence[TraceNode], m: MachineParams, *, ilp: float = 1.0, mlp: float = 1.0,
            bw_bytes_per_cycle: Optional[float] = None, max_events: int = 1000,
            missing: Optional[set] = None) -> List[Event]:
    """R 5.2.1 trace preparation: branches serialized, loops flattened.

    A loop of `trips` iterations is unrolled exactly while it fits in
    `max_events` items; otherwise it is unrolled k = max_events // len(body)
    times with every item weighted trips/k (k = 1 is the thesis' "multiply the
    delay of the body by the loop count").  Delays are linear in weight, so one
    warp's time is the same for any k; only the interleaving granularity of
    several warps coarsens.  The budget is per loop."""
    bw = m.bw_bytes_per_cycle if bw_bytes_per_cycle is None else bw_bytes_per_cycle
    missing = set() if missing is None else missing
    ws = m.warp_size

    def expand(nodes, ilp_c) -> List[Event]:
        out: List[Event] = []
        for n in nodes:
            if isinstance(n, Compute):
                if n.cls not in m.inst:
                    missing.add(n.cls)
                c = m.inst_class(n.cls)
                mx = c.max_parallelism(ws)
                out.append(Event("c", n.count, c.latency, n.ilp or ilp_c, mx, mx, ws / c.throughput, n.cls))
            elif isinstance(n, GlobalMem):
                out.append(Event("m", n.count, m.dram_latency_cycles, n.ilp or mlp, m.max_mem_parallelism,
                                 1.0, global_penalty(n.transactions, m.transaction_bytes, bw), n.id))
            elif isinstance(n, SharedMem):
                pen = shared_penalty(max(0.0, n.conflict_degree - 1), n.bytes, m.shared_banks,
                                     m.shared_bank_bw_bytes_per_cycle, ws)
                out.append(Event("m", n.count, m.shared_latency_cycles, n.ilp or mlp,
                                 m.shared_max_parallelism, 1.0, pen, n.id))
            elif isinstance(n, Branch):          # divergence: both paths, one after the other
                out += expand(n.then, ilp_c) + expand(n.orelse, ilp_c)
            elif isinstance(n, Loop):
                body = expand(n.body, n.ilp or ilp_c)
                if not body or n.trips <= 0:
                    continue
                if float(n.trips).is_integer() and len(body) * n.trips <= max_events:
                    k = int(n.trips)
                else:
                    k = max(1, min(math.ceil(n.trips), max_events // len(body)))
                f = n.trips / k
                scaled = body if f == 1 else [replace(e, weight=e.weight * f) for e in body]
                out += scaled * k
            else:
                raise TypeError(f"unknown trace node {n!r}")
        return [e for e in out if e.weight > 0]

    return expand(trace, ilp)


def trace_from_profile(p: KernelProfile, m: MachineParams) -> Tuple[TraceNode, ...]:
    """A trace when the analyses gave none: one loop of L = max access count
    iterations whose body does every access and every compute class count/L
    times (loads, compute, stores) -- the shape of a mapped loop nest's
    innermost loop, so memory and compute interleave instead of being lumped."""
    counts = [a.count for a in p.global_accesses] + [a.count for a in p.shared_accesses]
    L = max([1.0] + counts)
    g_ld = [GlobalMem(a.id, a.transactions, a.count / L) for a in p.global_accesses if not a.is_store]
    g_st = [GlobalMem(a.id, a.transactions, a.count / L, is_store=True) for a in p.global_accesses if a.is_store]
    s_ld = [SharedMem(a.id, a.conflict_degree, a.bytes, a.count / L) for a in p.shared_accesses if not a.is_store]
    s_st = [SharedMem(a.id, a.conflict_degree, a.bytes, a.count / L, is_store=True)
            for a in p.shared_accesses if a.is_store]
    comp = [Compute(c, n / L) for c, n in p.inst_counts.items() if n > 0]   # divergent_insts are among them
    return (Loop(tuple(g_ld + s_ld + comp + s_st + g_st), L),)


# ---------------------------------------------------------------- Algorithm 5.1

@dataclass(frozen=True)
class SimResult:
    """The outcome of simulating Algorithm 5.1 on one SM: the time taken, and the compute-idle cycles per
    memory event."""
    cycles: float                 # simulated time of the simulated warps
    simulated_warps: int
    idle: Dict[str, float]        # cycles with no compute in service, per memory event id
    compute_busy: float           # cycles with a compute op in service
    steps: int


def simulate(events: Sequence[Event], *, warps_per_block: int, blocks: int, resident_blocks: int,
             compute_units: int = 1, memory_units: int = 1) -> SimResult:
    """Algorithm 5.1 on one SM: every warp runs the same flattened trace.

    queue_b = blocks not yet resident; a block is admitted while fewer than
    `resident_blocks` are live (R res_w, whole blocks as the hardware does).
    Each step: distribute queued warps to free units, set TLP per unit type,
    fix the delays of newly current items with it, advance the clock by the
    smallest remaining delay in service, record compute-idle time against the
    memory items in service (hotspots), and requeue warps whose item finished."""
    n = warps_per_block * blocks
    idle: Dict[str, float] = {}
    if n == 0 or not events:
        return SimResult(0.0, n, idle, 0.0, 0)
    # The loop below runs once per event boundary (tens of thousands of steps in a block-size search), so it
    # works on local lists instead of dicts keyed by unit and inlines Event.delay; the arithmetic is the same,
    # in the same order, as the plain reading of Alg. 5.1 (same results to the bit).
    is_c = [e.unit == "c" for e in events]
    e_ilp = [e.ilp for e in events]
    e_thr = [e.threshold for e in events]
    e_wl = [e.weight * e.latency for e in events]     # Event.delay's first case computes this product first
    e_w = [e.weight for e in events]
    e_lat = [e.latency for e in events]
    e_div2 = [e.div2 for e in events]
    e_pen = [e.penalty for e in events]
    pos = [0] * n
    rem = [0.0] * n
    left = [warps_per_block] * blocks            # unfinished warps per block
    qc, qm = deque(), deque()                    # queue_r, split by the unit the warp needs
    sc: List[int] = []                           # unit_c
    sm: List[int] = []                           # unit_m
    cap_c, cap_m = compute_units, memory_units
    pending: List[int] = []                      # warps whose current item has no delay yet
    next_block = live = steps = 0
    time = busy = 0.0
    first_q = qc if is_c[0] else qm
    last = len(events)
    while True:
        while next_block < blocks and live < resident_blocks:     # queue_b -> queue_r
            for w in range(next_block * warps_per_block, (next_block + 1) * warps_per_block):
                first_q.append(w)
                pending.append(w)
            next_block += 1
            live += 1
        while len(sc) < cap_c and qc:                              # distribute warps
            sc.append(qc.popleft())
        while len(sm) < cap_m and qm:
            sm.append(qm.popleft())
        if not sc and not sm:
            break
        tlp_c, tlp_m = len(qc) + len(sc), len(qm) + len(sm)
        for w in pending:                                          # adjust delay using TLP (Event.delay)
            k = pos[w]
            par = e_ilp[k] * (tlp_c if is_c[k] else tlp_m)
            if par <= e_thr[k]:
                rem[w] = e_wl[k] / par
            else:
                rem[w] = e_w[k] * (e_lat[k] / (par * e_div2[k]) + e_pen[k])
        pending.clear()
        dt = min([rem[w] for w in sc] + [rem[w] for w in sm])
        if sc:
            busy += dt
        else:                                                      # compute idle: blame memory
            share = dt / len(sm)
            for w in sm:
                k = events[pos[w]].id
                idle[k] = idle.get(k, 0.0) + share
        time += dt
        steps += 1
        new_s = []
        for serving in (sc, sm):
            keep = []
            for w in serving:
                rem[w] -= dt
                if rem[w] > 1e-9:
                    keep.append(w)
                    continue
                pos[w] += 1
                if pos[w] == last:                                 # warp done
                    b = w // warps_per_block
                    left[b] -= 1
                    if left[b] == 0:
                        live -= 1
                else:
                    (qc if is_c[pos[w]] else qm).append(w)
                    pending.append(w)
            new_s.append(keep)
        sc, sm = new_s
    return SimResult(time, n, idle, busy, steps)


# ---------------------------------------------------------------- model

class ResiosModel:
    """R's model: overhead (4.1-4.3) + simulated execution (4.4-4.9, Alg. 5.1).

    Cost control: the simulation runs one SM (R: work is evenly spread, SMs run
    in parallel, so kernel time = time of the busiest SM) and, on it, at most
    `max_sim_blocks` blocks -- by default one resident wave, the smallest set
    that still has the real TLP -- and loops are compressed to `max_events`
    items.  The result is extrapolated linearly, R's total = t * n / W with n
    the warps of the busiest SM and W the simulated warps.  Cost is about
    W * events steps (~50k for 48 warps x 1000 items)."""

    name = "resios"

    def __init__(self, max_events: int = 1000, max_sim_blocks: Optional[int] = None,
                 compute_units: int = 1, memory_units: int = 1):
        self.max_events = max_events
        self.max_sim_blocks = max_sim_blocks
        self.compute_units = compute_units
        self.memory_units = memory_units

    def predict(self, p: KernelProfile, m: MachineParams) -> Prediction:
        g = geometry(p, m)
        notes: List[str] = []
        trace = p.trace
        if trace is None:
            trace = trace_from_profile(p, m)
            notes.append("no trace given: simulated a synthetic loop built from the per-thread counts")
        missing: set = set()
        bw_sm = m.bw_bytes_per_cycle / g.active_sms        # R ch. 7: per-SM share of BW
        events = flatten(trace, m, ilp=p.ilp, mlp=p.mlp, bw_bytes_per_cycle=bw_sm,
                         max_events=self.max_events, missing=missing)
        if missing:
            notes.append(f"instruction classes not in machine table, costed as {m.default_class}: "
                         + ", ".join(sorted(missing)))
        if p.syncs:
            notes.append("__syncthreads is not modelled by the Resios simulation")
        sim_blocks = min(g.blocks_per_sm, self.max_sim_blocks or g.resident_blocks)
        r = simulate(events, warps_per_block=g.warps_per_block, blocks=sim_blocks,
                     resident_blocks=g.resident_blocks, compute_units=self.compute_units,
                     memory_units=self.memory_units)
        scale = g.blocks_per_sm / sim_blocks                # n / W (R 5.2.1)
        clk = m.clock_hz
        t = r.cycles * scale / clk
        hot = {k: v * scale / clk for k, v in sorted(r.idle.items(), key=lambda kv: -kv[1])}
        exposed = sum(hot.values())
        over = overhead_parts(p.transfers, m)
        breakdown = {"execution": t, "compute_busy": r.compute_busy * scale / clk,
                     "exposed_memory": exposed, **over}
        extras = {"sim_cycles": r.cycles, "sm_cycles": r.cycles * scale, "scale": scale,
                  "simulated_warps": r.simulated_warps, "warps_per_sm": g.warps_per_sm,
                  "resident_warps": g.resident_warps, "events_per_warp": len(events),
                  "steps": r.steps}
        return Prediction(self.name, t, breakdown, sum(over.values()), tuple(notes), extras, hot)


def predict(p: KernelProfile, m: MachineParams) -> Prediction:
    return ResiosModel().predict(p, m)
