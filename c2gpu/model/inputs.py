"""Explicit inputs of the performance models (pure data, no analysis, no catalog).

Seeds: Resios MSc thesis (2011) = "R" below, chapters 3-5; GPUPerf (Sim et al.,
PPoPP 2012) = "G" below, Table 2; Hong & Kim ISCA 2009 = "HK".

Every model in c2gpu.model takes ``(KernelProfile, MachineParams)``.  The GPU
catalog fills MachineParams, the kernel analyses fill KernelProfile; neither is
imported here so the models stay pure math on explicit numbers.

Units: cycles are SM (shader) clock cycles at ``clock_ghz``; "per thread"
counts are dynamic counts executed by one thread, which for the warp-level
models equal counts per warp (all threads of a warp execute the same stream).
"""

from __future__ import annotations

import math
from dataclasses import field, replace
from typing import Mapping, Optional, Tuple, Union
from ..records import dataclass


# --------------------------------------------------------------------------
# Machine
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class InstClass:
    """Latency/throughput of one instruction class on one SM (R Table 3.1).

    latency:    cycles for one dependent instruction (R latency_i; G avg_inst_lat
                is averaged from these).
    throughput: thread-operations completed per cycle per SM at peak
                (R throughput_i); a warp instruction then occupies the class's
                pipeline for warp_size/throughput cycles.
    peak_warps: warps (x ILP) needed to reach peak throughput (R max_i, the
                "#warps needed for peak" column).  None -> Little's law
                latency / (warp_size/throughput), which reproduces the table's
                11 for madd (22 / (32/16)); several measured entries differ
                (div: 5 measured vs 17.6 by Little), hence the explicit field.
    """
    latency: float
    throughput: float
    peak_warps: Optional[float] = None

    def max_parallelism(self, warp_size: int) -> float:
        if self.peak_warps is not None:
            return self.peak_warps
        return self.latency * self.throughput / warp_size


@dataclass(frozen=True)
class MachineParams:
    """Hardware numbers the models need.  Field comment: unit; seed symbol."""
    name: str
    sm_count: int                  # SMs; R n_SM, G "#active SMs" upper bound
    clock_ghz: float               # SM clock, GHz; R clk (1.35 on GTX 460)
    warp_size: int = 32            # threads/warp; R warp_size, G warp_size
    max_warps_per_sm: int = 48     # resident warps/SM; R res_w = max_w
    max_blocks_per_sm: int = 8     # resident blocks/SM hardware limit
    # Per-class compute costs, keyed by class name used in KernelProfile.inst_counts
    # (e.g. "fp32_fma", "int_mad", "sfu").  R Table 3.1.
    inst: Mapping[str, InstClass] = field(default_factory=dict)
    # Class used when a kernel names a class missing from ``inst`` (noted in the
    # Prediction) and as G's FP_lat ("approximated by the latency of FP ops").
    default_class: str = "fp32_fma"
    simd_width: int = 32           # lanes issuing one warp instruction; G SIMD_width.
                                   # GF104 has 48 cores/SM but R measured a peak of
                                   # 32 ops/cycle (48 only with dual issue of
                                   # madd+mul), so presets use the sustained value.
    sfu_width: int = 4             # special function units per SM; G SFU_width
    avg_inst_lat_cycles: float = 0.0  # G avg_inst_lat override; 0 -> mix-weighted
                                      # mean of the kernel's class latencies
    # Global memory
    dram_latency_cycles: float = 500.0   # R global latency (Fig 3.2); G DRAM_lat
    dram_bw_gbs: float = 86.4            # chip DRAM bandwidth, 1e9 B/s; R BW (86.4 GB/s)
    transaction_bytes: int = 128         # bytes per memory transaction; R "size" in
                                         # eq 4.8 (128 B line on Fermi; 32 B sectors later)
    max_mem_parallelism: float = 8.0     # requests in flight for peak; R max_p (4.6)
    departure_delay_cycles: float = 2.0  # G Δ (eq 13), HK Departure_delay
    cache_hit_latency_cycles: float = 300.0  # G hit_lat (eq 12); R L2 latency (Fig 3.2)
    # Shared memory
    shared_latency_cycles: float = 36.0  # R shared latency (Fig 3.2, adjusted)
    shared_banks: int = 32               # R n_banks
    shared_bank_bw_bytes_per_cycle: float = 32.0  # R BW in eq 4.9 (see resios.py)
    shared_max_parallelism: float = 8.0  # R "for the peak value we use 8 warps" (4.9)
    # Serialization (G)
    sync_gamma: float = 64.0             # G Γ (eq 8), "we chose 64"
    # Overheads (R eq 4.2-4.3)
    launch_overhead_s: float = 4e-6      # R LAUNCH, empty kernel (3.1)
    context_init_s: float = 0.065        # R CUDA context creation (3.1)
    pcie_peak_mbps: float = 5000.0       # R BW_peak, MB/s (1e6 B/s)
    pcie_slope_mbps: float = 100.0       # R BW_inc slope, MB/s per size unit
    pcie_intercept_mbps: float = 692.0   # R BW_inc intercept, MB/s
    pcie_size_unit_bytes: int = 1024     # size unit of the eq 4.2 regression (KiB; see resios.py)
    # Roofline peaks; 0 -> derived from the fp32_fma / fp64_fma class throughput
    peak_gflops: float = 0.0             # fp32, 1e9 flop/s
    peak_gflops_fp64: float = 0.0

    def __post_init__(self):
        if self.sm_count <= 0 or self.clock_ghz <= 0 or self.warp_size <= 0:
            raise ValueError("sm_count, clock_ghz and warp_size must be positive")

    @property
    def clock_hz(self) -> float:
        return self.clock_ghz * 1e9

    @property
    def bw_bytes_per_cycle(self) -> float:
        """Chip DRAM bandwidth in bytes per SM-clock cycle: R's BW = 86.4/1.35 = 64."""
        return self.dram_bw_gbs / self.clock_ghz

    def inst_class(self, name: str) -> InstClass:
        if name in self.inst:
            return self.inst[name]
        if self.default_class in self.inst:
            return self.inst[self.default_class]
        raise KeyError(f"instruction class {name!r} (and default {self.default_class!r}) "
                       f"not in machine {self.name!r}")

    def _peak(self, explicit: float, cls: str) -> float:
        if explicit > 0:
            return explicit * 1e9
        if cls in self.inst:   # one FMA = 2 flops per thread-op
            return 2.0 * self.inst[cls].throughput * self.sm_count * self.clock_hz
        return 0.0

    @property
    def peak_flops(self) -> float:
        """fp32 flop/s (2 x fp32_fma throughput unless peak_gflops is given)."""
        return self._peak(self.peak_gflops, "fp32_fma")

    @property
    def peak_flops_fp64(self) -> float:
        """fp64 flop/s; falls back to the fp32 peak (keeps the roofline a *lower* bound)."""
        return self._peak(self.peak_gflops_fp64, "fp64_fma") or self.peak_flops


# R Table 3.1 (GTX 460, CUDA 3.2).  "madd"/"mul"/"add"/"div"/"and" are the integer
# rows, f* the float rows.  Values: latency cycles, throughput ops/cycle/SM,
# warps needed for peak.
RESIOS_TABLE_3_1 = {
    "int_add": InstClass(16, 32, 16),
    "int_mul": InstClass(20, 16, 16),
    "int_mad": InstClass(22, 16, 11),
    "int_div": InstClass(317, 1.8, 5),
    "logic": InstClass(16, 32, 16),
    "fp32_add": InstClass(16, 32, 16),
    "fp32_fma": InstClass(18, 32, 16),
    "fp32_mul": InstClass(16, 32, 16),
    "fp32_div": InstClass(711, 0.75, 4),
    "sqrt": InstClass(269, 1.6, 5),
}

# The seed's measured machine (R chapter 3).  Not a catalog entry: the reference
# the model tests are written against.  Values not measured in R are marked.
GTX460 = MachineParams(
    name="GTX 460 (GF104) as measured in Resios ch. 3",
    sm_count=7, clock_ghz=1.35, warp_size=32,
    max_warps_per_sm=48, max_blocks_per_sm=8,   # CUDA guide, compute capability 2.1
    inst=dict(RESIOS_TABLE_3_1),
    simd_width=32,                 # measured peak 32 ops/cycle (see simd_width)
    sfu_width=8,                   # CUDA guide for cc 2.1, not measured in R
    dram_latency_cycles=500, dram_bw_gbs=86.4, transaction_bytes=128,
    max_mem_parallelism=8,
    # Δ not measured in R: take the time the chip needs to accept one more
    # 128 B transaction at peak bandwidth, 128 B / 64 B/cycle = 2 cycles.
    departure_delay_cycles=2.0,
    cache_hit_latency_cycles=300,  # L2 latency, R Fig 3.2
    shared_latency_cycles=36, shared_banks=32, shared_bank_bw_bytes_per_cycle=32,
    shared_max_parallelism=8,
    sync_gamma=64, launch_overhead_s=4e-6, context_init_s=0.065,
    pcie_peak_mbps=5000, pcie_slope_mbps=100, pcie_intercept_mbps=692,
    pcie_size_unit_bytes=1024,
)


# --------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class GlobalAccess:
    """One static global-memory instruction of the kernel."""
    id: str                         # name reported in hotspots (e.g. "A[i][k]@l12")
    count: float = 1.0              # dynamic executions per thread
    bytes: int = 4                  # bytes per thread per execution
    transactions: float = 1.0       # transactions per warp request, 1..32; R c (4.8),
                                    # G avg_trans_warp (eq 13).  32 when unknown (R 6.1)
    is_store: bool = False


@dataclass(frozen=True)
class SharedAccess:
    """One static shared-memory instruction."""
    id: str
    count: float = 1.0              # dynamic executions per thread
    bytes: int = 4                  # bytes per thread per execution; R size (4.9)
    conflict_degree: float = 1.0    # bank-conflict degree as c2gpu.algorithms.banks:
                                    # 1 = conflict free, d = serialized d times;
                                    # R's c in eq 4.9 is d - 1 (extra serialized requests)
    is_store: bool = False


# ---- per-thread trace for R Algorithm 5.1 ----------------------------------

@dataclass(frozen=True)
class Compute:
    """`count` back-to-back instructions of class `cls` (R trace "compute" node)."""
    cls: str
    count: float = 1.0
    ilp: Optional[float] = None     # None -> enclosing Loop's ilp -> KernelProfile.ilp


@dataclass(frozen=True)
class GlobalMem:
    """A global-memory trace node (R trace "memory" node); id names the hotspot."""
    id: str
    transactions: float = 1.0       # R c, transactions per warp request
    count: float = 1.0
    ilp: Optional[float] = None     # None -> KernelProfile.mlp (Loop.ilp is for compute)
    is_store: bool = False
    bytes: int = 4                  # bytes per thread (only for counts_from_trace)


@dataclass(frozen=True)
class SharedMem:
    """A shared-memory trace node (R trace "memory" node); id names the hotspot."""
    id: str
    conflict_degree: float = 1.0    # 1 = conflict free (R c = degree - 1)
    bytes: int = 4
    count: float = 1.0
    ilp: Optional[float] = None
    is_store: bool = False


@dataclass(frozen=True)
class Loop:
    """body executed `trips` times (average trip count, may be fractional).
    R 5.2.1: loops are assumed synchronous (no divergence) and flattened."""
    body: Tuple["TraceNode", ...]
    trips: float
    ilp: Optional[float] = None     # ILP of the body's compute ops (R Fig 5.4: per region)


@dataclass(frozen=True)
class Branch:
    """if/else; R 5.2.1 serializes all alternatives (warp divergence)."""
    then: Tuple["TraceNode", ...]
    orelse: Tuple["TraceNode", ...] = ()


TraceNode = Union[Compute, GlobalMem, SharedMem, Loop, Branch]


def counts_from_trace(trace) -> Tuple[dict, Tuple[GlobalAccess, ...], Tuple[SharedAccess, ...]]:
    """Per-thread dynamic counts a trace implies (loops x trips, both branch
    paths, as the simulation executes them): (inst_counts, global, shared).
    Nodes with the same id are merged; the first one's attributes are kept."""
    inst: dict = {}
    g: dict = {}
    s: dict = {}

    def walk(nodes, w):
        for n in nodes:
            if isinstance(n, Compute):
                inst[n.cls] = inst.get(n.cls, 0.0) + w * n.count
            elif isinstance(n, GlobalMem):
                a = g.get(n.id) or GlobalAccess(n.id, 0.0, n.bytes, n.transactions, n.is_store)
                g[n.id] = GlobalAccess(a.id, a.count + w * n.count, a.bytes, a.transactions, a.is_store)
            elif isinstance(n, SharedMem):
                a = s.get(n.id) or SharedAccess(n.id, 0.0, n.bytes, n.conflict_degree, n.is_store)
                s[n.id] = SharedAccess(a.id, a.count + w * n.count, a.bytes, a.conflict_degree, a.is_store)
            elif isinstance(n, Branch):
                walk(n.then, w)
                walk(n.orelse, w)
            elif isinstance(n, Loop):
                walk(n.body, w * n.trips)
            else:
                raise TypeError(f"unknown trace node {n!r}")

    walk(trace, 1.0)
    return inst, tuple(g.values()), tuple(s.values())


@dataclass(frozen=True)
class KernelProfile:
    """What the static analyses report for one mapped kernel."""
    grid_blocks: int                # blocks in the grid (product of grid dims)
    block_threads: int              # threads per block (product of block dims)
    n_threads: Optional[int] = None # useful threads (loop iterations); None -> grid*block
    # per-thread dynamic counts of non-memory instructions by class name
    # (same names as MachineParams.inst; "sfu" for transcendental intrinsics,
    # "branch", "compare", ... as the analyses choose).  G #insts, #SFU insts, #FP insts.
    inst_counts: Mapping[str, float] = field(default_factory=dict)
    global_accesses: Tuple[GlobalAccess, ...] = ()   # G #mem insts = sum of counts
    shared_accesses: Tuple[SharedAccess, ...] = ()
    syncs: float = 0.0              # __syncthreads per thread; G #sync insts
    divergent_insts: float = 0.0    # of the instructions above (per warp, both paths of
                                    # a diverged branch counted), those its warp issues
                                    # only because it diverged; G O_CFdiv input
    ilp: float = 1.0                # instructions / longest DFG path (R 6.2; G ILP)
    mlp: float = 1.0                # independent memory requests per warp (G MLP)
    registers_per_thread: int = 0   # informational (occupancy is given below)
    shared_bytes_per_block: int = 0 # informational
    active_warps_per_sm: Optional[float] = None  # occupancy-derived resident warps
                                    # per SM (G N, R res_w); None -> machine max
    miss_ratio: float = 1.0         # fraction of global requests served by DRAM (G eq 12)
    dram_bytes: Optional[float] = None  # total DRAM traffic, bytes; None -> requested bytes
    flops: Optional[float] = None       # total fp32 flops; None -> from inst_counts
    flops_fp64: Optional[float] = None
    transfers: Tuple[float, ...] = ()   # bytes of each host<->device copy (R eq 4.2)
    trace: Optional[Tuple[TraceNode, ...]] = None  # per-thread trace (R Alg. 5.1)
    name: str = "kernel"

    def __post_init__(self):
        if self.grid_blocks <= 0 or self.block_threads <= 0:
            raise ValueError("grid_blocks and block_threads must be positive")
        if self.ilp <= 0 or self.mlp <= 0:
            raise ValueError("ilp and mlp must be positive")

    @classmethod
    def from_trace(cls, trace, grid_blocks: int, block_threads: int, **kw) -> "KernelProfile":
        """A profile whose counts (for GPUPerf and the roofline) come from the trace."""
        inst, g, s = counts_from_trace(trace)
        return cls(grid_blocks=grid_blocks, block_threads=block_threads, inst_counts=inst,
                   global_accesses=g, shared_accesses=s, trace=tuple(trace), **kw)

    def with_trace_counts(self) -> "KernelProfile":
        """Self, or -- when only a trace was given -- a copy whose counts come from it."""
        if self.trace is None or self.inst_counts or self.global_accesses or self.shared_accesses:
            return self
        inst, g, s = counts_from_trace(self.trace)
        return replace(self, inst_counts=inst, global_accesses=g, shared_accesses=s)

    @property
    def threads(self) -> int:
        return self.n_threads if self.n_threads is not None else self.grid_blocks * self.block_threads

    def total_dram_bytes(self) -> float:
        if self.dram_bytes is not None:
            return self.dram_bytes
        return self.threads * sum(a.count * a.bytes for a in self.global_accesses)

    def total_flops(self) -> Tuple[float, float]:
        """(fp32, fp64) flops; FMA counts 2, other fp*_ classes 1 (SFU not counted)."""
        if self.flops is not None and self.flops_fp64 is not None:
            return self.flops, self.flops_fp64
        f32 = f64 = 0.0
        for cls, n in self.inst_counts.items():
            per = 2.0 if cls.endswith("fma") else 1.0
            if cls.startswith("fp32_"):
                f32 += per * n
            elif cls.startswith("fp64_"):
                f64 += per * n
        f32 = self.flops if self.flops is not None else f32 * self.threads
        f64 = self.flops_fp64 if self.flops_fp64 is not None else f64 * self.threads
        return f32, f64


@dataclass(frozen=True)
class Geometry:
    """Launch geometry shared by the models (derived, not an input)."""
    warps_per_block: int
    total_warps: int          # G #total warps
    active_sms: int           # G #active SMs
    blocks_per_sm: int        # blocks on the busiest SM
    warps_per_sm: int         # warps on the busiest SM (R n / SM)
    resident_blocks: int      # blocks resident at once on one SM
    resident_warps: int       # G N, R res_w (actual)


def geometry(p: KernelProfile, m: MachineParams) -> Geometry:
    wpb = math.ceil(p.block_threads / m.warp_size)
    active_sms = min(m.sm_count, p.grid_blocks)
    blocks_per_sm = math.ceil(p.grid_blocks / active_sms)   # busiest SM decides the time
    cap = m.max_warps_per_sm if p.active_warps_per_sm is None else min(p.active_warps_per_sm, m.max_warps_per_sm)
    resident_blocks = max(1, min(m.max_blocks_per_sm, int(cap // wpb), blocks_per_sm))
    return Geometry(wpb, p.grid_blocks * wpb, active_sms, blocks_per_sm,
                    blocks_per_sm * wpb, resident_blocks, resident_blocks * wpb)
