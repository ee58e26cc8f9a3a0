"""Static analyses of one mapped kernel, and the KernelProfile both models read.

`KernelAnalysis(nest, kernel, gpu, env)` works on a mapping Kernel (the loops
that became the grid, the in-thread loops below them) with numeric parameter
values `env` (-D macros are already constants in the IR; `--param` binds the
rest).  Block-independent results are computed once and cached; everything
that depends on the block shape takes it as an argument, so the block-size
search re-evaluates only that part.  Each analysis is usable alone:

  executions()       per-thread executions of every statement (average over threads)
  instructions(b)    per-thread dynamic instructions by class (IR classes, machine classes)
  accesses(b)        coalescing: sectors and lines per warp request, unknown strides flagged
  ilp(), mlp()       eq. 6.1 on the data-flow graph of the innermost loop body / straight-line code
  intensity()        Alg. 6.3 and the roofline form (flops per DRAM byte)
  registers()        ptxas or Alg. 6.4, saying which
  occupancy(b)       c2gpu.occupancy
  memory(b)          L1 / L2 / DRAM traffic per access, DRAM lower bound and estimate
  trace(b)           the Resios trace (Alg. 5.1 input)
  profile(b)         KernelProfile and the kernel's effective MachineParams

Choices (documented here once)
-------------------------------
Instruction counts.  Statement ops (IR classes) map to the catalog's classes:
fp*_add/mul/fma as is, fp32_div/sqrt as is, fp32_special -> sfu, int -> int_add
(the IR does not separate integer multiply or divide), compare/select ->
compare, convert -> int_add, unknown_call -> sfu; fp64 division and square
root are compiled sequences of about 8 DFMA (fp64_fma x 8), fp64 transcendental
calls about 20.  Added: address arithmetic -- an access whose flat index
moves with the innermost in-thread loop costs one int_add per execution (the
compiler strength-reduces it to a pointer bump), one invariant in that loop
costs nothing (hoisted), one in straight-line code costs an int_mad per index
variable plus the 64-bit address add; loop overhead -- one int_add and one
compare per in-thread loop iteration; the prologue -- an int_mad and a compare
per mapped dimension (thread index and bound) and an int_add per rewritten
(normalized) loop variable.  Per-thread counts are averages over the threads
(instances / threads, so a triangular nest gets its mean trip count); a
guarded statement counts for the warps where at least one lane takes it
(branches are serialized per warp, Resios 5.2.1), estimated on sampled warps.

Registers.  An array element the kernel keeps in a register across an in-thread loop (c2gpu/promotion.py,
the decision code generation prints) is no global access inside that loop: it counts one load before the
loop (when the code loads it) and one store after it (when the loop writes it), per run of the loop, with
the address computed once.

Coalescing.  For each global access, the byte address of every lane of real
warps (x fastest, then y, then z) of a few interior blocks is evaluated from
the affine flat index over a window of consecutive iterations of the
innermost in-thread loop, arrays starting 256-byte aligned (cudaMalloc).  The
average number of distinct 32-byte sectors and 128-byte lines per warp
request is the access's coalescing.  An index that cannot be evaluated
(non-affine or data-dependent) counts 32 sectors and 32 lines and is flagged
(seed 004, section 6.1).

Reuse.  L1: the union of the sectors one block touches over the window (all
its warps, all accesses to the array in the same loop body) against the sum
of the warps' requests gives the L1 miss ratio of that group: matmul's
A[i][k] is one sector per warp shared over 8 iterations of k, B[k][j] is
fetched once per block for its 8 warps.  Stores are write-through (always go
to L2), and loads of an array the kernel also writes get no reuse across
iterations (the store invalidates the line).  When the window's footprint of
the resident blocks does not fit the L1 (unified L1/shared capacity minus the
shared memory in use), only the reuse within one iteration is kept.  L2: the
unique footprint of each array per launch (exact index ranges, isl) is read
from DRAM once when the kernel's whole working set fits in half the L2;
otherwise data shared by blocks along a grid dimension is re-read from DRAM
once per wave of resident blocks that needs it (B[k][j] of matmul once per
wave, A[i][k] once, since the blocks sharing a row of A run together).  Written
data goes to DRAM once (write-back).  A kernel in a host time loop finds part of
its data still in the L2 from the previous launch: a share min(1, L2/2 / the
loop body's working set) of its DRAM traffic is served by the L2 (the DRAM
lower bound then becomes max(footprint - L2, footprint / launches) per launch,
still a true bound).

Costs.  Each warp request is charged its L1 wavefronts (one 128-byte line per
cycle: banks x bank width), its L2 sectors at the calibrated L2-to-SM bandwidth
(memory.l2_bytes_per_cycle_per_sm) and its DRAM sectors at the SM's share of
the sustained DRAM bandwidth (spec.dram_bandwidth_gbs x memory.dram_efficiency
/ active SMs), in series; the sum is expressed as the equivalent number of
DRAM transactions, the `c` of eq. 4.8 and G's avg_trans_warp, so both models
keep their own formulas.  The latency of a request is the sector-weighted mix
of L1, L2 and DRAM latencies; the kernel's average is the `latency` of eq. 4.6
and G's DRAM_lat (miss_ratio = 1 then: the hierarchy is already in it).
Stores do not stall the warp: their trace nodes get memory parallelism max_p.
"""
from __future__ import annotations

import math
from dataclasses import field, replace
from functools import cached_property, lru_cache
from typing import Optional

import islpy as isl
import numpy as np

from .. import isl_sets as ph
from ..counting import evaluate_instances
from ..gpu import GPU
from ..ir import Access, Loop, Nest, Statement, ordered_reduction, reduction_type
from ..plan import SPLIT_THREADS
from ..model.inputs import (Branch, Compute, GlobalMem, KernelProfile, Loop as TLoop, MachineParams,
                            SharedMem, TraceNode, counts_from_trace)
from ..occupancy import InvalidLaunchError, Occupancy, occupancy as occupancy_of
from ..promotion import Promotion, promoted_accesses, promotions
from ..symbolic import Poly
from .dfg import TAC, memory_parallelism, three_address
from .machine import machine_params
from .registers import Registers, arch_for, estimate_registers, ptxas_registers
from .sampling import (distinct_in_rows, floor_div, loop_span_np, origin_values, poly_np, run_starts, sample_blocks, sorted_rows,
                       sym_np, warp_lanes)
from ..records import dataclass

# IR op class -> (machine class, instructions per op)
OP_CLASSES: dict[str, tuple[str, float]] = {
    "fp32_add": ("fp32_add", 1), "fp32_mul": ("fp32_mul", 1), "fp32_fma": ("fp32_fma", 1),
    "fp32_div": ("fp32_div", 1), "fp32_sqrt": ("fp32_sqrt", 1), "fp32_special": ("sfu", 1),
    "fp64_add": ("fp64_add", 1), "fp64_mul": ("fp64_mul", 1), "fp64_fma": ("fp64_fma", 1),
    "fp64_div": ("fp64_fma", 8), "fp64_sqrt": ("fp64_fma", 8), "fp64_special": ("fp64_fma", 20),
    "int": ("int_add", 1), "compare": ("compare", 1), "select": ("compare", 1),
    "convert": ("int_add", 1), "unknown_call": ("sfu", 1),
}
FLOPS_PER_OP = {"fma": 2.0}
WINDOW = 32               # consecutive iterations of the innermost in-thread loop in the reuse window
UNKNOWN_TRANSACTIONS = 32  # seed 004 section 6.1: unknown stride = worst case
REUSE_DISTANCE = 8        # iterations a line must survive in L1 for its reuse (32-byte sector / 4-byte stride)
L2_REUSE_SHARE = 0.5      # share of the L2 that keeps data for reuse across blocks (the rest streams)


_RANGE_CACHE: dict = {}    # (nest id, sizes, host values, accesses) -> (nest, (lo, hi) | None)
_FLAT_CACHE: dict = {}     # (nest id, access id, sizes) -> (nest, access, flat index | None)
_SECTOR_CACHE: dict = {}   # (nest id, kernel without block, host loops, sizes, block, GPU geometry) -> (nest, stats)
_FACTS: dict = {}          # (nest id, GPU id, host loops, registers?, sizes, kernel without its block)
#                            -> (nest, GPU, {fact name: value})
_RESULTS: dict = {}        # (nest id, GPU id, host loops, registers?, sizes, kernel, tiles, register count)
#                            -> (nest, GPU, {(what, block): result})


class PerfError(Exception):
    """The kernel cannot be analysed with the given inputs (message for the user)."""


# --------------------------------------------------------------------------- result records

@dataclass(frozen=True)
class StatementInfo:
    """A statement as one thread of a kernel runs it: the in-thread loops around it and how often it runs."""
    stmt: Statement
    inner: tuple[Loop, ...]         # in-thread loops around it, outermost first
    executions: float              # per thread, average (guards not applied)


@dataclass(frozen=True)
class AccessInfo:
    """One array access of a kernel's threads: its flat element index and the in-thread loop around it."""
    key: str                       # unique id, e.g. "A[i][k]@20"
    access: Access
    stmt: Statement
    flat: Optional[Poly]           # flat element index with parameters bound; None = unknown
    window_lid: Optional[int]      # innermost in-thread loop around it
    per_thread: Optional[float] = None   # executions per thread when not the statement's: the load or the
    #                                      store of a register (promotion.py), once per run of its loop
    hoisted: Optional[int] = None  # that loop's lid (the load runs just before it, the store just after)
    local: bool = False            # an element of a per-thread array in local memory (flat: its interleaved address)


@dataclass(frozen=True)
class AccessCost:
    """One global access on one block shape: coalescing and where its sectors come from."""
    key: str
    text: str
    line: int
    array: str
    kind: str                      # "read" / "write"
    elem_size: int
    requests: float                # warp requests per thread (= per warp), guards applied
    sectors: float                 # distinct 32-byte sectors per warp request
    lines: float                   # distinct 128-byte lines per warp request
    unknown: bool                  # stride unknown: 32 assumed and flagged
    l2_sectors: float = 0.0        # sectors per request that miss L1
    dram_sectors: float = 0.0      # sectors per request served by DRAM
    latency: float = 0.0           # cycles, sector-weighted L1/L2/DRAM mix
    transactions: float = 1.0      # DRAM-equivalent transactions (eq. 4.8's c)
    cycles: float = 0.0            # L1 + L2 + DRAM cycles of one request on one SM
    where: str = "global"          # "global"; "shared tile" (a read served by a tile); "tile load" /
                                   # "tile store" (the cooperative, coalesced copies of a tile)


@dataclass(frozen=True)
class Geometry:
    """The launch shape of a kernel at given sizes: grid and block, and the threads needed against those
    launched."""
    extents: tuple[int, int, int]  # threads needed per dimension (largest trip count)
    grid: tuple[int, int, int]
    blocks: int
    block: tuple[int, int, int]
    threads: int                   # useful threads (iterations of the mapped loops) per launch
    launched_threads: int


@dataclass
class MemoryAnalysis:
    """The memory traffic of one launch of a kernel: each global access's cost, the DRAM and L2 bytes, and
    the working set."""
    accesses: list[AccessCost]
    dram_lower_bound: float        # bytes per launch: unique footprint (roofline)
    dram_estimate: float           # bytes per launch the models assume
    l2_bytes: float                # bytes per launch crossing L2 -> SM
    l1_window: int                 # iterations of temporal reuse kept in L1 (1 = none)
    working_set: float             # bytes per launch
    per_array: dict[str, dict] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class InstructionCounts:
    """The instruction counts of one thread of a kernel: per instruction class, and for address arithmetic,
    loop overhead and memory accesses."""
    per_class: dict[str, float]    # machine classes, per thread
    per_ir_class: dict[str, float]  # statement ops only, per thread
    address: float                 # address arithmetic instructions per thread
    loop_overhead: float
    prologue: float
    memory: float                  # global memory instructions per thread
    shared: float

    @property
    def total(self) -> float:
        return sum(self.per_class.values()) + self.memory + self.shared


@dataclass(frozen=True)
class Intensity:
    """A kernel's arithmetic intensity: Alg. 6.3's on-chip to off-chip ratio and the roofline's flops per
    DRAM byte."""
    alg63: float                   # on-chip / off-chip instructions (Alg. 6.3)
    on_chip: int
    off_chip: int
    flops_per_dram_byte: float     # roofline intensity (flops / DRAM lower bound)
    flops: float                   # per launch (fp32 + fp64)


# --------------------------------------------------------------------------- the analysis

class kernel_fact:
    """A cached property of a KernelAnalysis that depends neither on the block shape nor on the tiles nor on
    the register count: kept in the analysis's `_facts`, which every analysis of the same kernel shares (the
    block search builds one analysis per shape it tries and per shared-memory budget, and each asked isl
    again for the footprints)."""

    def __init__(self, fn):
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        facts = obj._facts
        if self.name not in facts:
            facts[self.name] = self.fn(obj)
        return facts[self.name]


class KernelAnalysis:
    def __init__(self, nest: Nest, kernel, gpu: GPU, env: dict[str, int] | None = None, *,
                 host_lids: tuple[int, ...] = (), code=None, shared=None, registers: str = "auto",
                 promote: bool = True):
        self.nest = nest = kernel.view or nest   # the kernel's own order of the loops, after any interchange
        self.kernel = kernel
        self.gpu = gpu
        self.env = {k: int(v) for k, v in (env or {}).items()}
        missing = sorted(set(nest.params) - set(self.env))
        if missing:
            raise PerfError("symbolic size" + ("s " if len(missing) > 1 else " ") + ", ".join(missing) +
                            " need values: give " + " ".join(f"--param {m}=VALUE" for m in missing))
        self.host_lids = tuple(host_lids)
        self.code = code               # codegen KernelCode (kernel text for ptxas), optional
        self.shared = shared           # passes.shared_memory KernelSharedPlan, optional
        self.registers_mode = registers
        self.promote = promote         # array elements in registers (promotion.py), as code generation emits them
        self.machine = machine_params(gpu)
        self._block_cache: dict = {}

    @cached_property
    def _facts(self) -> dict:
        """Name -> value of every kernel_fact, shared by the analyses of the same nest (object), GPU (object),
        kernel (its block aside), host loops, registers? and sizes."""
        return self._shared_dict(_FACTS, (replace(self.kernel, block=(0, 0, 0)),))

    @cached_property
    def _results(self) -> dict:
        """(what, block) -> memory, trace, occupancy or profile on that block.  These depend on the kernel (its
        block included: tile loads are per thread of it), the host loops, the sizes, the GPU, whether elements
        live in registers, the tiles and the register count, and on nothing else: every analysis with the same
        inputs shares one dict.  The block search builds an analysis per shape it tries, once per shared-memory
        budget the performance pass compares, and the budgets often give a shape the same tiles (PolyBench:
        3,875 memory analyses, 1,571 distinct).  The entry holds the nest and the GPU so that their ids are
        not reused.  (The register count must be final before the first of them is asked for.)"""
        return self._shared_dict(_RESULTS, (self.kernel, self.shared, self.registers.count))

    def _shared_dict(self, cache: dict, inputs: tuple) -> dict:
        """The dict `cache` keeps for this analysis's nest and GPU (objects), host loops, registers?, sizes and
        `inputs` (a new one the first time); the entry holds the nest and the GPU, so that their ids are not
        reused while it lives.  Inputs that do not hash: a dict of this analysis's own."""
        try:
            key = (id(self.nest), id(self.gpu), self.host_lids, self.promote, tuple(sorted(self.env.items()))) + inputs
            hit = cache.get(key)
        except TypeError:
            return {}
        if hit is not None and hit[0] is self.nest and hit[1] is self.gpu:
            return hit[2]
        if len(cache) > 4096:
            cache.clear()
        cache[key] = (self.nest, self.gpu, {})
        return cache[key][2]

    # ------------------------------------------------------------------ structure
    @cached_property
    def by_id(self) -> dict[int, Loop]:
        return {lp.lid: lp for lp in self.nest.loops()}

    @cached_property
    def body(self) -> Loop:
        return self.by_id[self.kernel.body_lid]

    @cached_property
    def mapped_lids(self) -> set[int]:
        return {m.lid for m in self.kernel.loops}

    @cached_property
    def host_path(self) -> list[Loop]:
        return [self.by_id[l] for l in self.host_lids]

    @cached_property
    def mapped_path(self) -> list[Loop]:
        return [self.by_id[m.lid] for m in self.kernel.loops]

    @cached_property
    def inner_loops(self) -> list[Loop]:
        return self.kernel.inner_loops(self.by_id)

    @cached_property
    def statements(self) -> list[Statement]:
        return self.kernel.statements(self.by_id)

    def _count(self, loops: list[Loop]) -> float:
        v = evaluate_instances(loops, self.env)     # memoized there (the trace asks again for every block)
        if v is None:
            raise PerfError(f"cannot count the iterations of loop '{loops[-1].var}' (line {loops[-1].loc.line}) "
                            "with the given sizes")
        return float(v)

    @kernel_fact
    def launches(self) -> float:
        return self._count(self.host_path) if self.host_path else 1.0

    @kernel_fact
    def threads(self) -> float:
        """Useful threads per launch: iterations of the mapped loops (none when the host loops never launch); a
        split reduction's loop (Kernel.split_dim) has SPLIT_THREADS threads per row, which take turns over it."""
        split = self.split_loop
        if split is None:
            return self._count(self.host_path + self.mapped_path) / max(1.0, self.launches)
        rows = self._count(self.host_path + [lp for lp in self.mapped_path if lp is not split]) \
            if len(self.mapped_path) > 1 or self.host_path else 1.0
        return rows / max(1.0, self.launches) * self._split_threads(self.env)

    @cached_property
    def split_loop(self) -> Loop | None:
        """The loop of a split reduction (Kernel.split_dim), or None."""
        return next((self.by_id[m.lid] for m in self.kernel.loops if m.dim == self.kernel.split_dim), None)

    def _split_threads(self, env) -> int:
        """Threads along a split reduction's dimension that have iterations of its loop."""
        return max(1, min(SPLIT_THREADS, self._max_trip(self.split_loop, env)))

    def _per_thread(self, loops: list[Loop]) -> float:
        if self.threads <= 0:
            return 0.0
        return self._count(self.host_path + self.mapped_path + loops) / self.launches / self.threads

    @kernel_fact
    def executions(self) -> dict[int, StatementInfo]:
        out = {}
        for s in self.statements:
            inner = tuple(self.by_id[l] for l in s.loop_ids[s.loop_ids.index(self.kernel.body_lid) + 1:])
            out[s.sid] = StatementInfo(s, inner, self._per_thread(list(inner)))
        return out

    def loop_iterations(self, lp: Loop) -> float:
        """Iterations per thread of an in-thread loop (average)."""
        path = [l for l in self.inner_loops if l.lid in self._ancestors(lp)] + [lp]
        return self._per_thread(path)

    def _ancestors(self, lp: Loop) -> set[int]:
        out = set()

        def walk(node: Loop, path):
            if node.lid == lp.lid:
                out.update(path)
                return True
            return any(walk(n, path + [node.lid]) for n in node.body if isinstance(n, Loop))
        walk(self.body, [])
        out.discard(self.body.lid)
        return out

    @kernel_fact
    def promotions(self) -> tuple[Promotion, ...]:
        """Array elements the kernel keeps in registers across an in-thread loop (promotion.py: the same
        decision code generation prints)."""
        return promotions(self.nest, self.kernel) if self.promote else ()

    @kernel_fact
    def access_infos(self) -> list[AccessInfo]:
        out, seen = [], {}
        promoted = promoted_accesses(self.promotions)

        in_local = self.local_arrays

        def add(a: Access, s: Statement, window: Optional[int], suffix: str = "", **kw) -> None:
            base = f"{a.text}@{a.loc.line}{suffix}"
            n = seen.get(base, 0)
            seen[base] = n + 1
            key = base if n == 0 else f"{base}#{n + 1}"
            local = a.array in in_local
            out.append(AccessInfo(key, a, s, self._local_flat(a) if local else self._flat_index(a), window,
                                  local=local, **kw))

        # an array element a reduction across threads folds into: the thread's partial result, a register, in
        # the kernel (codegen/kernel.py KernelPrinter prints each access with that text as it); the fold's
        # atomics are counted with the tree (_reduction_nodes)
        folded = {r.target for r in self.kernel.reductions if r.array_access is not None}
        for s in self.statements:
            info = self.executions[s.sid]
            for a in s.accesses:
                if a.array in self.per_thread_arrays and a.array not in in_local:
                    continue  # indexed by constants only: registers (local_arrays), no memory traffic
                if a.text in folded:
                    continue
                if id(a) in promoted:
                    continue  # a register inside its loop: its global load and store are counted below
                add(a, s, info.inner[-1].lid if info.inner else None)
        # a promoted element: one load before its loop and one store after it, per run of the loop
        first_stmt = {id(a): s for s in self.statements for a in s.accesses}
        for p in self.promotions:
            if p.array in self.per_thread_arrays and p.array not in in_local:
                continue  # an element of an array in registers: no load or store to count
            loop = self.by_id[p.loop_lid]
            around = [lp for lp in self.inner_loops if lp.lid in self._ancestors(loop)]
            runs = self._per_thread(around) if around else 1.0
            window = around[-1].lid if around else None
            for kind, wanted, label in (("read", p.load, " (register load)"), ("write", p.store, " (register store)")):
                a = next((x for x in p.accesses if x.kind == kind), None)
                if wanted and a is not None:
                    add(a, first_stmt[id(a)], window, label, per_thread=runs, hoisted=p.loop_lid)
        return out

    def _executions(self, ai: AccessInfo) -> float:
        """Executions per thread of an access: its statement's, or its own for a register's load and store."""
        return ai.per_thread if ai.per_thread is not None else self.executions[ai.stmt.sid].executions

    @kernel_fact
    def local_arrays(self) -> set[str]:
        """The per-thread arrays that live in local memory: those indexed by anything but constants (CUDA C++
        Programming Guide, "Local Memory": arrays the compiler cannot prove are indexed with constant quantities);
        an array indexed by constants only lives in registers."""
        out = set()
        for s in self.statements:
            for a in s.accesses:
                if a.array in self.per_thread_arrays and not all(x is not None and x.is_const() for x in a.subscripts):
                    out.add(a.array)
        return out

    def _local_flat(self, a: Access) -> Optional[Poly]:
        """The element of a per-thread array as local memory lays it out: consecutive threads' copies of one
        element are consecutive (CUDA C++ Programming Guide, "Local Memory": accesses are fully coalesced when the
        threads of a warp access the same relative address), so element e of thread t is at e * T + t, T the
        threads of the launch and t the thread's linear index over the mapped loops (x fastest)."""
        flat = self._flat_index(a)
        if flat is None:
            return None
        extents = self.geometry(tuple(self.kernel.block)).extents       # threads needed per dimension
        tid, stride = Poly.const(0), 1
        for m in sorted(self.kernel.loops, key=lambda m: "xyz".index(m.dim)):
            tid = tid + Poly.var(self.by_id[m.lid].var) * stride
            stride *= extents["xyz".index(m.dim)]
        return flat * stride + tid

    @kernel_fact
    def per_thread_arrays(self) -> set[str]:
        """Arrays declared inside the nest (a private array per iteration, hence per thread), and those the
        dependence pass privatized for a mapped loop (Kernel.private_arrays: declared in the kernel)."""
        end = self.nest.end_loc.line if self.nest.end_loc is not None else None
        out = set(self.kernel.private_arrays)
        for arr in self.nest.arrays:
            if arr.storage == "local" and end is not None and arr.loc.file == self.nest.loc.file and \
                    self.nest.loc.line <= arr.loc.line <= end:
                out.add(arr.name)
        return out

    def _flat_index(self, a: Access) -> Optional[Poly]:
        # every KernelAnalysis of the block search and of each shared-memory trial asks again for the same
        # accesses (access_infos, host_working_set); the polynomial substitution is the costly part
        key = (id(self.nest), id(a), tuple(sorted(self.env.items())))
        hit = _FLAT_CACHE.get(key)
        if hit is not None and hit[0] is self.nest and hit[1] is a:
            return hit[2]
        flat = self._flat_index_uncached(a)
        if len(_FLAT_CACHE) > 8192:
            _FLAT_CACHE.clear()
        _FLAT_CACHE[key] = (self.nest, a, flat)
        return flat

    def _flat_index_uncached(self, a: Access) -> Optional[Poly]:
        if not a.affine and a.linearized is None:
            if any(x is None for x in a.subscripts):
                return None
        if any(x is None for x in a.subscripts):
            return None
        try:
            subs, extents = ph.access_shape(self.nest, a)
        except KeyError:
            return None
        if extents is None and self.nest.array(a.array).rows_source:
            extents = self._table_extents(a.array)
        if len(a.subscripts) == 1:
            flat = a.subscripts[0]
        else:
            if extents is None or any(x is None for x in subs):
                return None
            flat = subs[0]
            for k, e in enumerate(extents):
                flat = flat * e + subs[k + 1]
        env = {p: v for p, v in self.env.items()}
        flat = flat.substitute({p: Poly.const(v) for p, v in env.items() if p in flat.variables})
        loop_vars = {lp.var for lp in self.nest.loops()}
        if flat.variables - loop_vars:
            return None   # depends on a scalar that is not a loop variable or a bound parameter
        return flat

    def _table_extents(self, name: str) -> Optional[tuple[Poly, ...]]:
        """The inner extents of a table of rows as the port lays it out on the device (codegen.kernel._table_plan:
        the box of subscripts the nest touches, one dense array), at the sizes of this prediction."""
        key = ("table", name)
        if key not in self._block_cache:
            accs = [a for s in self.nest.statements() for a in s.accesses if a.array == name]
            ranges = ph.subscript_ranges(self.nest, accs, len(self.nest.array(name).dims))
            fixed = ph.params_at(self.nest, self.env)
            out = None
            if ranges is not None and fixed is not None:
                try:
                    out = tuple(Poly.const(int(str((hi - lo).intersect_params(fixed).max_val())) + 1)
                                for lo, hi in ranges[1:])
                except (isl.Error, ValueError):
                    out = None
            self._block_cache[key] = out
        return self._block_cache[key]

    # ------------------------------------------------------------------ geometry
    def geometry(self, block: tuple[int, int, int]) -> Geometry:
        block = tuple(block) + (1,) * (3 - len(block))
        key = ("geometry", block)      # asked for by every analysis of a block (memory, occupancy, profile, ...)
        if key not in self._block_cache:
            self._block_cache[key] = self._geometry(block)
        return self._block_cache[key]

    def _geometry(self, block: tuple[int, int, int]) -> Geometry:
        extents = [1, 1, 1]
        env = dict(self.env)
        for h in self.host_path:     # a host loop variable the bounds use: its middle iteration
            env[h.var] = self._mid(h, env)
        for m in self.kernel.loops:
            lp = self.by_id[m.lid]
            k = "xyz".index(m.dim)
            extents[k] = max(1, self._max_trip(lp, env)) if lp is not self.split_loop else self._split_threads(env)
        grid = tuple(-(-e // b) for e, b in zip(extents, block))
        blocks = grid[0] * grid[1] * grid[2]
        return Geometry(tuple(extents), grid, blocks, tuple(block), int(round(self.threads)),
                        blocks * block[0] * block[1] * block[2])

    def _mid(self, lp: Loop, env) -> int:
        """The middle iteration of a host loop: the value its variable has there."""
        try:
            start, trip, step = loop_span_np(lp, env)
        except KeyError:
            return 0
        return int(start + max(0, int(trip)) // 2 * step)

    def _max_trip(self, lp: Loop, env) -> int:
        """Largest trip count of a mapped loop over the outer mapped loops (grid extent)."""
        outer = [self.by_id[m.lid] for m in self.kernel.loops]
        outer = outer[:outer.index(lp)]
        if not lp.trip_count.variables & {o.var for o in outer}:
            return int(lp.trip_count.evaluate(env))
        grids = [np.arange(max(0, int(o.trip_count.evaluate(env)))) if not o.trip_count.variables & {
            x.var for x in outer} else None for o in outer]
        if any(g is None for g in grids):
            # nested triangular: enumerate (bounded)
            best = 0
            for vals in _enumerate(outer, env, limit=200_000):
                best = max(best, int(lp.trip_count.evaluate({**env, **vals})))
            return best
        mesh = np.meshgrid(*grids, indexing="ij") if grids else []
        e = dict(env)
        for o, g in zip(outer, mesh):
            e[o.var] = g
        vals = sym_np(lp.trip_count, e)
        return int(np.max(vals)) if np.size(vals) else 0

    # ------------------------------------------------------------------ sampling
    def _samples(self, block: tuple[int, int, int]):
        """Lane values of the mapped variables over sampled blocks: dict var -> (B, Wp, 1, L) arrays."""
        geo = self.geometry(block)
        tx, ty, tz, valid = warp_lanes(geo.block, self.gpu.warp_size)
        blocks = sample_blocks(geo.grid)
        bidx = np.array(blocks, dtype=np.int64)            # (B, 3)
        lanes = {"x": tx, "y": ty, "z": tz}
        env: dict = {}
        for m in self.kernel.loops:
            k = "xyz".index(m.dim)
            g = bidx[:, k][:, None, None] * geo.block[k] + lanes[m.dim][None, :, :]
            env[m.var] = g[:, :, None, :]                   # (B, Wp, 1, L)
        base_valid = np.broadcast_to(valid[None, :, None, :], (len(blocks), valid.shape[0], 1, valid.shape[1]))
        for h in self.host_path:
            env[h.var] = self._mid(h, self.env)
        return geo, env, base_valid

    def _domain_env(self, s: Statement, env0: dict, valid0, window: int):
        """Env with the statement's in-thread loops bound (window over the innermost) and its active lanes."""
        info = self.executions[s.sid]
        env = {**self.env, **env0}
        active = valid0
        for lp in self.mapped_path:                          # mapped loops' bounds (triangular grids)
            trip = sym_np(lp.trip_count, env)
            active = active & (env[lp.var] < trip)
        w = 1
        for k, lp in enumerate(info.inner):
            first, trip, step = loop_span_np(lp, env)
            tmax = int(np.max(trip)) if np.size(trip) else int(trip)
            if k == len(info.inner) - 1:
                w = max(1, min(window, tmax)) if tmax > 0 else 1
                start = max(0, (tmax // 2) // 32 * 32)
                if start + w > tmax:
                    start = max(0, tmax - w)
                vals = start + np.arange(w, dtype=np.int64).reshape(1, 1, w, 1)
            else:
                vals = np.int64(max(0, tmax // 2))
            active = active & (vals < trip)
            # iteration counts; a loop with min/max bounds keeps its own variable: its value at that count
            env[lp.var] = vals if lp.trip_count is not None else first + vals * step
        env = origin_values(self.host_path + self.mapped_path + list(info.inner), env)
        shape = np.broadcast_shapes(*(np.shape(v) for v in [active] + [env[lp.var] for lp in self.mapped_path]),
                                    (1, 1, w, 1))
        active = np.broadcast_to(active, shape)
        guarded = active
        for g in s.guards:
            val = self._guard_value(g, env)
            if val is None:
                continue          # unknown: the path is taken (Resios: branches serialized)
            guarded = guarded & val
        return env, active, np.broadcast_to(guarded, shape)

    def _guard_value(self, g, env):
        if g.constraints is not None:
            out = True
            try:
                for c in g.constraints:
                    v = poly_np(c.expr, env)
                    out = out & ((v >= 0) if c.kind == "ge" else (v == 0))
            except KeyError:
                return None
            return out
        from .cexpr import CExprError, compile_vector
        try:
            return compile_vector(g.text)(env) != 0
        except (CExprError, KeyError, TypeError, ValueError):
            return None

    # ------------------------------------------------------------------ accesses and memory
    def _sector_stats(self, block: tuple[int, int, int]):
        """The part of memory() that depends only on the kernel's loops and the block shape, not on its
        shared-memory tiles or registers: warp activity per statement, sectors and lines per request of
        every access, and per access group the distinct sectors of the sampled blocks.  The block-size
        search (seed 004, 5.2.1) evaluates the same shapes again for the plain kernel and for each
        shared-memory budget the performance pass compares, each with an analysis of its own: they share
        these results through _SECTOR_CACHE (keyed like _RANGE_CACHE, by the nest's identity)."""
        mine = ("sectors", tuple(block))
        if mine in self._block_cache:
            return self._block_cache[mine]
        key = self._sector_key(block)
        hit = _SECTOR_CACHE.get(key) if key is not None else None
        if hit is not None and hit[0] is self.nest:
            self._block_cache[mine] = hit[1]
            return hit[1]
        _geo, env0, valid0 = self._samples(block)
        ws = self.gpu.warp_size
        # a statement's sampled lanes depend only on its loops and guards (_domain_env): statements that share
        # both (matmul's C[i][j] read and write, a stencil's statements) share the lanes and their counts
        envs, per_stmt, warp_frac, lane_util = {}, {}, {}, {}
        for s in self.statements:
            where = (s.loop_ids, s.guards)
            if where not in envs:
                env, dom, act = self._domain_env(s, env0, valid0, WINDOW)
                # warp activity: requests come from warps with an active lane
                dom_any = dom.any(axis=-1)
                act_any = act.any(axis=-1)
                envs[where] = (env, act, act_any.sum(),
                               float(act_any.sum() / dom_any.sum()) if dom_any.sum() else 0.0,
                               float(act.sum() / (act_any.sum() * ws)) if act_any.sum() else 1.0)
            per_stmt[s.sid] = where
            warp_frac[s.sid], lane_util[s.sid] = envs[where][3:]
        sector_sets: dict[tuple[str, Optional[int]], list] = {}
        requested: dict[tuple[str, Optional[int]], float] = {}
        flags = []
        sec_b, line_b = self.gpu.sector_bytes, self.gpu.cache_line_bytes
        raw = {}
        addresses = {}   # (statement's loops and guards, flat index, element size) -> byte addresses | None
        for ai in self.access_infos:
            same = (per_stmt[ai.stmt.sid], ai.flat, ai.access.elem_size)
            if ai.flat is not None and same not in addresses:
                try:
                    idx = poly_np(ai.flat, envs[same[0]][0])
                except KeyError:
                    addresses[same] = None
                else:
                    addresses[same] = np.asarray(idx, dtype=np.int64) * ai.access.elem_size
        weights = self._block_weights(envs, addresses, math.lcm(sec_b, line_b))
        nb = int(weights.sum())
        kept = np.flatnonzero(weights)
        if len(kept) == len(weights):
            kept = weights = None         # every sampled block sorted: the plain sums
        else:
            weights = weights[kept]
        counted = {}      # same -> (sectors of the kept blocks, n_sec, n_line)
        for ai in self.access_infos:
            s = ai.stmt
            env, act, cnt = envs[per_stmt[s.sid]][:3]
            req = self._executions(ai) * warp_frac[s.sid]
            if ai.flat is None:
                flags.append(f"{ai.access.text} (line {ai.access.loc.line}): unknown stride, 32 transactions "
                             "per warp request assumed (seed 004, 6.1)")
                raw[ai.key] = (req, float(UNKNOWN_TRANSACTIONS), float(UNKNOWN_TRANSACTIONS), True)
                continue
            same = (per_stmt[s.sid], ai.flat, ai.access.elem_size)
            if same not in counted and addresses[same] is not None:
                addr, act_k = _blocks(addresses[same], kept), _blocks(act, kept)
                sectors = sorted_rows(floor_div(addr, sec_b), act_k)    # each warp request's sectors, sorted
                n_sec = distinct_in_rows(sectors, weights=weights)
                if line_b % sec_b == 0:    # a line is a run of whole sectors: lines come out sorted too
                    n_line = distinct_in_rows(sectors, line_b // sec_b, weights)
                else:
                    n_line = distinct_in_rows(sorted_rows(floor_div(addr, line_b), act_k), weights=weights)
                counted[same] = (sectors, n_sec, n_line)
            if counted.get(same) is None:
                flags.append(f"{ai.access.text} (line {ai.access.loc.line}): index not evaluable, 32 transactions assumed")
                raw[ai.key] = (req, float(UNKNOWN_TRANSACTIONS), float(UNKNOWN_TRANSACTIONS), True)
                continue
            sectors, n_sec, n_line = counted[same]
            avg_sec = float(n_sec / cnt) if cnt else 0.0
            avg_line = float(n_line / cnt) if cnt else 0.0
            raw[ai.key] = (req, avg_sec, avg_line, False)
            if ai.access.kind == "read" and ai.hoisted is None:   # (a register's load: once, no reuse window)
                group = (ai.access.array, ai.window_lid)
                sector_sets.setdefault(group, []).append((sectors, ai))
                requested[group] = requested.get(group, 0.0) + float(n_sec)
        # L1: block-level union of sectors per group, with and without the temporal window
        groups = {}
        for group, items in sector_sets.items():
            live = min(items[0][0].shape[2], REUSE_DISTANCE)
            groups[group] = (nb,) + _window_distinct(items, live, weights)
        out = (warp_frac, lane_util, raw, tuple(flags), groups, requested)
        self._block_cache[mine] = out
        if key is not None:
            if len(_SECTOR_CACHE) > 4096:
                _SECTOR_CACHE.clear()
            _SECTOR_CACHE[key] = (self.nest, out)
        return out

    def _block_weights(self, envs, addresses, unit: int):
        """How many of the sampled blocks each one stands for in the sector counts (0: counted as another).  A
        block whose lanes are active exactly where the first block's are, and whose accesses touch the first
        block's addresses moved by one distance per array, a multiple of `unit` (the sector and the line), has
        the first block's counts: its sorted sector rows are the first block's plus a constant, so the distinct
        sectors of each request, the lines, and the sectors of each reuse window are as many.  It is counted
        again instead of being sorted again (an interior block of a rectangular nest usually is: 3/4 of the
        sorting for the block search's large blocks).  Exact: the counts are the same as with every block
        sorted."""
        acts = [e[1] for e in envs.values()]
        nb = acts[0].shape[0] if acts and np.ndim(acts[0]) else 1
        weights = np.ones(nb, dtype=np.int64)
        arrays: dict[str, set] = {}
        for ai in self.access_infos:
            same = (ai.stmt.loop_ids, ai.stmt.guards), ai.flat, ai.access.elem_size
            if addresses.get(same) is not None:
                arrays.setdefault(ai.access.array, set()).add(same)
        for b in range(1, nb):
            if not all(np.array_equal(act[b], act[0]) for act in acts):
                continue
            for keys in arrays.values():
                moves = {_translation(addresses[k], b) for k in keys}
                if len(moves) != 1 or None in moves or moves.pop() % unit:
                    break
            else:
                weights[0] += 1
                weights[b] = 0
        return weights

    def warp_fractions(self, block) -> dict[int, float]:
        """Statement id -> share of the warps on `block` with a lane in its domain that have one where its guards
        hold (requests and instructions come from those warps)."""
        return self._sector_stats(block)[0]

    def _sector_key(self, block):
        """What _sector_stats reads besides the nest: the kernel without its block (loops, body, sizes),
        the host loops, whether elements live in registers, the parameter values, the block and the GPU's
        warp and cache geometry."""
        try:
            k = (id(self.nest), replace(self.kernel, block=(0, 0, 0)), self.host_lids, self.promote,
                 tuple(sorted(self.env.items())), tuple(block), self.gpu.warp_size, self.gpu.sector_bytes,
                 self.gpu.cache_line_bytes)
            hash(k)
        except TypeError:
            return None
        return k

    def memory(self, block: tuple[int, int, int]) -> MemoryAnalysis:
        done = ("memory", tuple(block))    # (not `key`: the loops below use that name for the accesses)
        if done in self._results:
            return self._results[done]
        warp_frac, lane_util, raw, flags, groups, requested = self._sector_stats(block)
        raw, flags = dict(raw), list(flags)
        geo = self.geometry(block)
        ws = self.gpu.warp_size
        costs: list[AccessCost] = []
        written_arrays = {ai.access.array for ai in self.access_infos if ai.access.kind == "write"}
        sec_b, line_b = self.gpu.sector_bytes, self.gpu.cache_line_bytes
        # ---- L1: block-level union of sectors per group, with and without the temporal window
        occ = self.occupancy(block)
        active_sms = min(self.gpu.sm_count, max(1, geo.blocks))
        resident = min(occ.active_blocks_per_sm if occ is not None else 1, -(-geo.blocks // active_sms))
        smem = self.shared_bytes(block)
        l1_bytes = self.gpu.l1_cache_bytes + self.gpu.shared_mem_per_sm - resident * smem
        miss_win, miss_one, foot = {}, {}, 0.0
        for group, (nb, u_win, u_live, u_one) in groups.items():
            r = requested[group] or 1.0
            reuse_across = group[0] not in written_arrays
            miss_win[group] = min(1.0, (u_win if reuse_across else u_one) / r)
            miss_one[group] = min(1.0, u_one / r)
            foot += (u_live / nb) * sec_b
        # the lines must stay in L1 while they are reused: the sectors the resident blocks touch over
        # REUSE_DISTANCE iterations (a 32-byte sector serves 8 iterations of a 4-byte stream)
        window_fits = foot * resident <= l1_bytes
        miss = miss_win if window_fits else miss_one
        # ---- per-array traffic and DRAM
        per_array: dict[str, dict] = {}
        warps_per_launch = {}
        staged = self._staged_keys()
        entries = []      # (key, text, line, array, kind, elem size, where)
        for ai in self.access_infos:
            req, sec, lin, unknown = raw[ai.key]
            util = lane_util[ai.stmt.sid]
            warps = self.threads / (ws * util) if util > 0 else 0.0
            warps_per_launch[ai.key] = warps
            d = per_array.setdefault(ai.access.array, {"read_l2": 0.0, "write_l2": 0.0})
            opp = staged.get(ai.key)
            a = ai.access
            if opp is not None and opp.kind != "store":
                raw[ai.key] = (req, sec, lin, unknown, 0.0)       # read from the shared tile
                entries.append((ai.key, a.text, a.loc.line, a.array, a.kind, a.elem_size, "shared tile"))
                continue
            if opp is not None:                                      # staged store: coalesced copy-out
                sec = lin = max(1.0, ws * a.elem_size / sec_b)
                lin = max(1.0, ws * a.elem_size / line_b)
                raw[ai.key] = (req, sec, lin, unknown, sec)
                d["write_l2"] += req * warps * sec * sec_b
                entries.append((ai.key, a.text, a.loc.line, a.array, a.kind, a.elem_size, "tile store"))
                continue
            if a.kind == "read":
                l2s = sec * (miss.get((a.array, ai.window_lid), 1.0) if not unknown else 1.0)
            else:
                l2s = sec
            d["read_l2" if a.kind == "read" else "write_l2"] += req * warps * l2s * sec_b
            raw[ai.key] = (req, sec, lin, unknown, l2s)
            if ai.hoisted is None:
                text = a.text
            else:
                lp = self.by_id[ai.hoisted]
                where = "load before" if a.kind == "read" else "store after"
                text = f"{a.text} (register {where} loop '{lp.origin.var if lp.origin else lp.var}')"
            entries.append((ai.key, text, a.loc.line, a.array, a.kind, a.elem_size,
                            "local memory" if ai.local else "global"))
        for o in self._tiles():                                       # cooperative tile loads
            if o.kind == "store":
                continue
            key = f"tile {o.array}"
            req = self.tile_loads_per_thread(o)
            sec = max(1.0, ws * o.elem_size / sec_b)
            lin = max(1.0, ws * o.elem_size / line_b)
            warps = geo.launched_threads / ws
            warps_per_launch[key] = warps
            raw[key] = (req, sec, lin, False, sec)
            d = per_array.setdefault(o.array, {"read_l2": 0.0, "write_l2": 0.0})
            d["read_l2"] += req * warps * sec * sec_b
            shape = "][".join(str(e) for e in o.shape)
            entries.append((key, f"{o.array} tile [{shape}]", 0, o.array, "read", o.elem_size, "tile load"))
        fp = self.footprints
        ws_bytes = sum(v["read"] + v["write"] - v["overlap"] for v in fp.values())
        waves = self._waves(geo, resident)
        l2_reuse = self.gpu.l2_cache_bytes * L2_REUSE_SHARE
        host_ws = self.host_working_set
        resident_share = min(1.0, l2_reuse / host_ws) if host_ws else 0.0
        lower = 0.0
        estimate = 0.0
        for name, d in per_array.items():
            f = fp.get(name, {"read": 0.0, "write": 0.0, "read_lb": 0.0, "write_lb": 0.0, "overlap": 0.0})
            lower += f["read_lb"] + f["write_lb"]
            if ws_bytes <= l2_reuse:
                fetch = 1.0
            else:
                fetch = self._refetch(name, geo, waves)
            rd = max(f["read"], min(f["read"] * fetch, d["read_l2"])) if d["read_l2"] > 0 else 0.0
            wr = f["write"] if d["write_l2"] > 0 else 0.0
            rd, wr = rd * (1 - resident_share), wr * (1 - resident_share)
            d.update(dram_read=rd, dram_write=wr, footprint_read=f["read"], footprint_write=f["write"],
                     refetch=fetch, l2_resident_share=resident_share)
            estimate += rd + wr
        if self.host_path:
            # a kernel launched again and again by a host loop: what the previous launch left in the L2
            # need not come from DRAM; the bound stays a true lower bound (at most the L2's capacity
            # survives, and the loop reads the footprint at least once)
            lower = max(lower - self.gpu.l2_cache_bytes, lower / max(1.0, self.launches))
        # ---- per-access costs
        m = self.effective_machine_base
        active_sms = min(self.gpu.sm_count, max(1, geo.blocks))
        dram_bpc_sm = self.gpu.dram_bandwidth_gbs * self.gpu.dram_efficiency / self.gpu.core_clock_ghz / active_sms
        l2_bpc_sm = self.gpu.l2_bytes_per_cycle_per_sm
        l1_bpc = self.gpu.shared_mem_banks * self.gpu.shared_mem_bank_bytes
        l2_total = 0.0
        for key, text, line, array, kind, es, where in entries:
            req, sec, lin, unknown, l2s = raw[key]
            d = per_array[array]
            if kind == "read":
                ratio = d["dram_read"] / d["read_l2"] if d["read_l2"] > 0 else 0.0
            else:
                ratio = d["dram_write"] / d["write_l2"] if d["write_l2"] > 0 else 0.0
            ds = l2s * ratio
            l2s = max(l2s, ds)    # data that comes from DRAM crosses the L2 too (the reuse estimate was low)
            cyc = lin * line_b / l1_bpc + (l2s - ds) * sec_b / l2_bpc_sm + ds * sec_b / dram_bpc_sm
            c = cyc * dram_bpc_sm / m.transaction_bytes
            p1 = 1.0 - (l2s / sec if sec > 0 else 1.0)
            pd = ds / l2s if l2s > 0 else 0.0
            lat = p1 * self.gpu.l1_latency_cycles + (1 - p1) * (
                (1 - pd) * self.gpu.l2_latency_cycles + pd * self.gpu.dram_latency_cycles)
            if where == "shared tile":
                cyc, c, lat = 0.0, 0.0, self.gpu.shared_mem_latency_cycles
            l2_total += req * warps_per_launch[key] * l2s * sec_b
            costs.append(AccessCost(key, text, line, array, kind, es, req, sec, lin, unknown, l2s, ds, lat,
                                    max(c, 1e-6), cyc, where))
        res = MemoryAnalysis(costs, lower, max(estimate, lower), l2_total, WINDOW if window_fits else 1, ws_bytes,
                             per_array, flags)
        self._results[done] = res
        return res

    def _waves(self, geo: Geometry, resident: int) -> float:
        per_wave = max(1, resident * min(self.gpu.sm_count, geo.blocks))
        return geo.blocks / per_wave

    def _refetch(self, array: str, geo: Geometry, waves: float) -> float:
        """Times an array's data is read from DRAM when the working set exceeds the L2 (module doc)."""
        acc = [ai for ai in self.access_infos if ai.access.array == array and ai.access.kind == "read"]
        if not acc or any(ai.flat is None for ai in acc):
            return max(1.0, waves)
        sharing = []
        for m in self.kernel.loops:
            if all(ai.flat.coeff(m.var) == 0 and not any(m.var == v for mono, _ in ai.flat.terms for v, _ in mono)
                   for ai in acc):
                sharing.append("xyz".index(m.dim))
        if not sharing:
            return 1.0
        g = geo.grid
        stride = {0: 1, 1: g[0], 2: g[0] * g[1]}[min(sharing)]
        group = 1
        for k in sharing:
            group *= g[k]
        per_wave = geo.blocks / waves if waves > 0 else geo.blocks
        return float(min(group, max(1, math.ceil(group * stride / per_wave))))

    @kernel_fact
    def footprints(self) -> dict[str, dict]:
        """Per array, bytes touched per launch: from the exact index ranges (isl) with the parameters
        bound and host loop variables at their middle iteration, at most the sectors the executed access
        instances touch; `*_lb` is a true lower bound (at most one byte per executed access instance)."""
        out: dict[str, dict] = {}
        by_array: dict[str, list[AccessInfo]] = {}
        for ai in self.access_infos:
            by_array.setdefault(ai.access.array, []).append(ai)
        for name, infos in by_array.items():
            es = infos[0].access.elem_size
            rec = {"read": 0.0, "write": 0.0, "read_lb": 0.0, "write_lb": 0.0, "overlap": 0.0}
            ranges = {}
            for kind in ("read", "write"):
                acc = [ai for ai in infos if ai.access.kind == kind]
                if not acc:
                    continue
                rng = self._range(acc)
                inst = sum(self._executions(ai) * self.threads for ai in acc)
                if rng is None:
                    span = inst * es
                    ranges[kind] = None
                else:
                    span = (rng[1] - rng[0] + 1) * es
                    ranges[kind] = rng
                sec = self.gpu.sector_bytes
                # the span of the addresses, but no more sectors than the accesses touch: a column walk of a
                # matrix in one thread (gramschmidt's norm) touches one sector per row, not the rows between
                rec[kind] = min(math.ceil(span / sec), math.ceil(inst * max(1, math.ceil(es / sec)))) * sec \
                    if span > 0 else 0.0
                rec[f"{kind}_lb"] = float(min(span, inst * es))
            if ranges.get("read") and ranges.get("write"):
                lo = max(ranges["read"][0], ranges["write"][0])
                hi = min(ranges["read"][1], ranges["write"][1])
                rec["overlap"] = max(0, hi - lo + 1) * es
            out[name] = rec
        return out

    @kernel_fact
    def host_working_set(self) -> float:
        """Bytes the statements of the outermost host loop touch in one of its iterations (0 without a
        host loop): the data a time loop's kernels keep reusing from launch to launch.  A share
        min(1, reusable L2 / this) of each launch's DRAM traffic is served by the L2 instead."""
        if not self.host_path:
            return 0.0
        outer = self.host_path[0].lid
        by_array: dict[str, list[AccessInfo]] = {}
        for s in self.nest.statements():
            if outer not in s.loop_ids:
                continue
            for a in s.accesses:
                by_array.setdefault(a.array, []).append(AccessInfo("", a, s, self._flat_index(a), None))
        total = 0.0
        for name, infos in by_array.items():
            rng = self._range(infos)
            if rng is None:
                return 0.0   # unknown extent: assume nothing stays in the L2
            total += (rng[1] - rng[0] + 1) * infos[0].access.elem_size
        return total

    def _range(self, infos: list[AccessInfo]) -> tuple[int, int] | None:
        """Min and max flat index over the accesses' statement domains (isl, exact); cached per nest,
        sizes and accesses, since every kernel of a nest asks for the same ranges."""
        host_fix = {h.var: self._mid(h, self.env) for h in self.host_path}
        key = (id(self.nest), tuple(sorted(self.env.items())), tuple(sorted(host_fix.items())),
               tuple((ai.stmt.sid, ai.stmt.accesses.index(ai.access) if ai.access in ai.stmt.accesses else -1,
                      ai.access.text) for ai in infos))
        hit = _RANGE_CACHE.get(key)
        if hit is not None and hit[0] is self.nest:
            return hit[1]
        val = self._range_uncached(infos, host_fix)
        if len(_RANGE_CACHE) > 4096:
            _RANGE_CACHE.clear()
        _RANGE_CACHE[key] = (self.nest, val)
        return val

    def _range_uncached(self, infos: list[AccessInfo], host_fix: dict) -> tuple[int, int] | None:
        lo = hi = None
        for ai in infos:
            if ai.flat is None:
                return None
            s = ai.stmt
            loops = ph.loop_path(self.nest, s)
            names = {lp.var: ph.dim(lp.lid) for lp in loops}
            try:
                cons = ph.domain_constraints(loops, names, s.guards)
            except ValueError:
                return None
            for p, v in self.env.items():
                if p in self.nest.params:
                    cons.append(f"{p} = {v}")
            on_path = {lp.lid for lp in loops}
            for lp in self.host_path:
                if lp.lid in on_path:     # a host loop fixes only the statements inside it (another part of the
                    cons.append(f"{names[lp.var]} = {host_fix[lp.var]}")   # outer host loop runs in full)
            params = ", ".join(self.nest.params)
            dims = ", ".join(names[lp.var] for lp in loops)
            try:
                index = f"[{params}] -> {{ [{dims}] -> [e] : e = {ph.poly_to_isl(ai.flat, names)} }}"
            except Exception:
                index = None         # (no range, unless the domain is empty)
            extremes = _extremes(f"[{params}] -> {{ [{dims}] : {' and '.join(cons) or 'true'} }}", index)
            if extremes is None:
                return None
            if not extremes:
                continue
            a, b = extremes
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
        return None if lo is None else (lo, hi)

    # ------------------------------------------------------------------ instructions, trace
    def shared_bytes(self, block) -> int:
        """Static shared memory per block: the reduction tree's arrays (and chosen tiles)."""
        threads = block[0] * block[1] * block[2]
        total = 0
        for r in self.kernel.reductions:        # a tree per partial result (Kernel.partials)
            total += self.kernel.partials(r) * threads * (8 if reduction_type(self.nest, r) in (
                "double", "long", "long long", "unsigned long", "unsigned long long") else 4)
            if ordered_reduction(self.nest, r):      # and the iteration of each value (codegen/kernel.py Ordered)
                total += threads * 8 * len(self.kernel.rank_loops(r, self.by_id))
        for opp in self._tiles():
            total += opp.size_bytes
        return total

    def _tiles(self):
        if self.shared is None:
            return []
        return list(self.shared.chosen)

    def _ops(self, s: Statement) -> dict[str, float]:
        out: dict[str, float] = {}
        for cls, n in s.ops:
            mc, k = OP_CLASSES.get(cls, ("int_add", 1))
            out[mc] = out.get(mc, 0.0) + n * k
        return out

    def _addr_ops(self, ai: AccessInfo) -> dict[str, float]:
        info = self.executions[ai.stmt.sid]
        if ai.flat is None:
            return {"int_add": 2.0}
        if ai.hoisted is not None:
            return {"int_add": 1.0}      # a register's load or store: the address is computed once, outside the loop
        if info.inner:
            return {"int_add": 1.0} if ai.flat.coeff(info.inner[-1].var) != 0 or \
                any(info.inner[-1].var == v for mono, _ in ai.flat.terms for v, _ in mono) else {}
        nvars = len(ai.flat.variables)
        return {"int_mad": float(max(0, nvars - 1)), "int_add": 1.0}

    def trace(self, block) -> tuple[TraceNode, ...]:
        """Resios trace of one thread (= one warp): in-thread loops as Loop nodes with their average trip
        counts, guarded statements as Branch nodes (weighted by the share of warps taking them), each
        statement as its loads, its compute and its stores (module doc)."""
        key = ("trace", tuple(block))
        if key in self._results:
            return self._results[key]
        mem = self.memory(block)
        warp_frac = self.warp_fractions(block)
        costs = {c.key: c for c in mem.accesses}
        infos_by_stmt: dict[int, list[AccessInfo]] = {}
        hoisted: dict[int, list[AccessInfo]] = {}       # loop lid -> its registers' loads and stores
        for ai in self.access_infos:
            if ai.hoisted is not None:
                hoisted.setdefault(ai.hoisted, []).append(ai)
            else:
                infos_by_stmt.setdefault(ai.stmt.sid, []).append(ai)
        staged = self._staged_keys()
        store_ilp = self.machine.max_mem_parallelism

        def register_nodes(lid: int, kind: str) -> list[TraceNode]:
            """The loads of the registers promoted across loop `lid` (before it) or their stores (after it)."""
            out = []
            for ai in hoisted.get(lid, []):
                if ai.access.kind != kind:
                    continue
                c, f = costs[ai.key], warp_frac.get(ai.stmt.sid, 1.0)
                if kind == "read":
                    out.append(GlobalMem(ai.key, c.transactions, f, bytes=ai.access.elem_size))
                else:
                    out.append(GlobalMem(ai.key, c.transactions, f, ilp=store_ilp, is_store=True,
                                         bytes=ai.access.elem_size))
            return out

        def stmt_nodes(s: Statement) -> list[TraceNode]:
            nodes: list[TraceNode] = []
            f = warp_frac.get(s.sid, 1.0)
            if f <= 0:
                return []
            comp: dict[str, float] = {}
            for ai in infos_by_stmt.get(s.sid, []):
                for c, n in self._addr_ops(ai).items():
                    comp[c] = comp.get(c, 0.0) + n
            for c, n in self._ops(s).items():
                comp[c] = comp.get(c, 0.0) + n
            loads, stores = [], []
            for ai in infos_by_stmt.get(s.sid, []):
                c = costs[ai.key]
                if ai.key in staged:
                    opp = staged[ai.key]
                    if opp.kind == "store":   # to the tile, then a coalesced copy of the tile at the end
                        stores.append(SharedMem(ai.key + " (tile)", float(opp.conflicts), ai.access.elem_size, f,
                                                is_store=True))
                        stores.append(GlobalMem(ai.key, c.transactions, f, ilp=store_ilp, is_store=True,
                                                bytes=ai.access.elem_size))
                    else:
                        loads.append(SharedMem(ai.key, float(opp.conflicts), ai.access.elem_size, f))
                    continue
                if ai.access.kind == "read":
                    loads.append(GlobalMem(ai.key, c.transactions, f, bytes=ai.access.elem_size))
                else:
                    stores.append(GlobalMem(ai.key, c.transactions, f, ilp=store_ilp, is_store=True,
                                            bytes=ai.access.elem_size))
            body = loads + [Compute(c, n * f) for c, n in comp.items() if n > 0] + stores
            if s.guards and f < 1.0 - 1e-9:
                return [Branch(tuple(body))]
            return body

        def loop_nodes(body, parent_execs: float) -> list[TraceNode]:
            out: list[TraceNode] = []
            for node in body:
                if isinstance(node, Loop):
                    iters = self.loop_iterations(node)
                    if iters <= 0 or parent_execs <= 0:
                        continue
                    trips = iters / parent_execs
                    inner = loop_nodes(node.body, iters)
                    inner += self._tile_nodes(node, costs)
                    inner += [Compute("int_add", 1.0), Compute("compare", 1.0)]   # loop overhead
                    out.extend(register_nodes(node.lid, "read"))
                    out.append(TLoop(tuple(inner), trips))
                    out.extend(register_nodes(node.lid, "write"))
                else:
                    out.extend(stmt_nodes(node))
            return out

        prologue = [Compute("int_mad", float(len(self.kernel.loops))),
                    Compute("compare", float(len(self.kernel.loops)))]
        origins = sum(1 for m in self.kernel.loops if m.origin is not None)
        if origins:
            prologue.append(Compute("int_add", float(origins)))
        nodes = prologue + self._tile_nodes(None, costs) + loop_nodes(self.kernel.nodes(self.by_id), 1.0)
        nodes += self._reduction_nodes(block)
        tr = coarsen(tuple(nodes))
        self._results[key] = tr
        return tr

    def _staged_keys(self) -> dict[str, object]:
        out = {}
        for opp in self._tiles():
            if opp.kind == "store":
                continue
            for ai in self.access_infos:
                if ai.hoisted is None and any(ai.access is a or ai.access == a for a in opp.accesses):
                    out[ai.key] = opp
        return out

    def tile_loads_per_thread(self, o) -> float:
        """Global loads per thread (per launch) of one tile: its elements over the block's threads, once per
        chunk of the tiled loop (or once for the kernel)."""
        elems = 1
        for e in o.shape:
            elems *= e
        threads = self.kernel.block[0] * self.kernel.block[1] * self.kernel.block[2]
        chunks = self.loop_iterations(self.by_id[o.tiled_lid]) / self.shared.tile if o.tiled_lid is not None else 1
        return elems / threads * chunks

    def _tile_nodes(self, lp: Optional[Loop], costs: dict) -> list[TraceNode]:
        """Cooperative tile loads (per iteration of the tiled loop `lp`, or once when lp is None): global
        loads of consecutive elements and the stores into shared memory."""
        nodes: list[TraceNode] = []
        tiles = [o for o in self._tiles() if o.kind != "store" and (o.tiled_lid == (lp.lid if lp else None))]
        for o in tiles:
            c = costs.get(f"tile {o.array}")
            per = self.tile_loads_per_thread(o)
            n = per / self.loop_iterations(lp) if lp is not None else per
            if c is None or n <= 0:
                continue
            nodes.append(GlobalMem(f"tile {o.array}", c.transactions, n, bytes=o.elem_size))
            nodes.append(SharedMem(f"tile {o.array} (store)", 1.0, o.elem_size, n, is_store=True))
        return nodes

    def syncs_per_thread(self) -> float:
        s = 0.0
        for o in self._tiles():
            if o.kind == "store":
                continue
            if o.tiled_lid is not None:
                s += 2.0 * self.loop_iterations(self.by_id[o.tiled_lid]) / self.shared.tile
            else:
                s += 1.0
        return s

    def _reduction_nodes(self, block) -> list[TraceNode]:
        if not self.kernel.reductions:
            return []
        threads = block[0] * block[1] * block[2]
        tree = self.tree_threads(block)
        steps = max(1, int(math.log2(tree)))
        nodes: list[TraceNode] = []
        warps = max(1, threads // self.gpu.warp_size)
        active = self.tree_warp_steps(block)
        for r in self.kernel.reductions:
            partials = self.kernel.partials(r)         # a tree and an atomic for each partial result the thread keeps
            nodes.append(SharedMem(f"reduction tree {r.target}", 1.0, 8, partials, is_store=True))
            nodes.append(SharedMem(f"reduction tree {r.target} (combine)", 1.0, 8, 2 * active * partials))
            nodes.append(SharedMem(f"reduction tree {r.target} (store)", 1.0, 8, active * partials, is_store=True))
            nodes.append(Compute("compare", float(steps * partials)))
            if ordered_reduction(self.nest, r):
                # the iterations travel with the values (one more compare and move per step, as shared memory);
                # the block's pair goes to global memory and a counter; the last block's pass over the blocks'
                # pairs is one block's work and is left out
                ranks = len(self.kernel.rank_loops(r, self.by_id))
                nodes.append(SharedMem(f"reduction tree {r.target} (iterations)", 1.0, 8, (2 + ranks) * active))
                nodes.append(Compute("compare", float(steps)))
            # one atomic per block, or per row of it for a split reduction (Kernel.split_dim)
            nodes.append(GlobalMem(f"atomic {r.target}", 1.0, partials * (threads // tree) / warps, is_store=True))
        return nodes

    def tree_warp_steps(self, block) -> float:
        """The steps of the reduction tree weighted by the share of the block's warps with an active lane (warps
        with none skip the step): the whole block's tree halves the active threads at each step; a split
        reduction's tree along x (Kernel.split_dim) keeps a lane of every warp busy while its rows are at most a
        warp, one along y or z halves the warps that work."""
        threads = block[0] * block[1] * block[2]
        warps = max(1, threads // self.gpu.warp_size)
        if not self.kernel.split_dim:
            steps = max(1, int(math.log2(threads)))
            return sum(min(1.0, max(threads >> (k + 1), 1) / self.gpu.warp_size / warps) for k in range(steps))
        k = "xyz".index(self.kernel.split_dim)
        total = 0.0
        for step in range(max(1, int(math.log2(block[k])))):
            s = block[k] >> (step + 1)
            total += (1.0 if block[0] <= self.gpu.warp_size else min(1.0, max(s, self.gpu.warp_size) / block[0])) \
                if k == 0 else s / block[k]
        return total

    def reduction_syncs(self, block) -> float:
        if not self.kernel.reductions:
            return 0.0
        return 1.0 + max(1, int(math.log2(self.tree_threads(block))))

    def tree_threads(self, block) -> int:
        """The threads one reduction tree folds: the whole block, or a row of it along Kernel.split_dim."""
        if not self.kernel.split_dim:
            return block[0] * block[1] * block[2]
        return block["xyz".index(self.kernel.split_dim)]

    def instructions(self, block) -> InstructionCounts:
        tr = self.trace(block)
        inst, g, s = counts_from_trace(tr)
        warp_frac = self.warp_fractions(block)
        ir: dict[str, float] = {}
        for st in self.statements:
            f = warp_frac.get(st.sid, 1.0)
            for cls, n in st.ops:
                ir[cls] = ir.get(cls, 0.0) + n * self.executions[st.sid].executions * f
        addr = 0.0
        for ai in self.access_infos:
            f = warp_frac.get(ai.stmt.sid, 1.0)
            addr += sum(self._addr_ops(ai).values()) * self._executions(ai) * f
        overhead = sum(2.0 * self.loop_iterations(lp) for lp in self.inner_loops)
        prologue = 2.0 * len(self.kernel.loops) + sum(1 for m in self.kernel.loops if m.origin is not None)
        return InstructionCounts(dict(sorted(inst.items())), dict(sorted(ir.items())), addr, overhead, prologue,
                                 sum(a.count for a in g), sum(a.count for a in s))

    # ------------------------------------------------------------------ ILP, intensity, registers
    @kernel_fact
    def hot_region(self) -> tuple[list, str]:
        """Statement ASTs of the innermost in-thread loop body (the hot path) or of the straight-line
        kernel body, and a description."""
        innermost = [lp for lp in self.inner_loops if not any(isinstance(n, Loop) for n in lp.body)]
        if innermost:
            # the deepest / most executed innermost loop
            lp = max(innermost, key=lambda l: self.loop_iterations(l))
            stmts = [n for n in lp.body if isinstance(n, Statement)]
            return [s.ast for s in stmts], f"body of loop '{lp.origin.var if lp.origin else lp.var}' (line {lp.loc.line})"
        return [s.ast for s in self.statements], "straight-line kernel body"

    @kernel_fact
    def tac(self) -> TAC:
        asts, _ = self.hot_region
        return three_address(asts, {lp.var for lp in self.nest.loops()} |
                             {lp.origin.var for lp in self.nest.loops() if lp.origin is not None})

    @kernel_fact
    def ilp(self) -> float:
        """Eq. 6.1: instructions / longest path of the hot region's data-flow graph (1 when empty)."""
        return max(1.0, self.tac.ilp()) if self.tac.instrs else 1.0

    @kernel_fact
    def mlp(self) -> float:
        return memory_parallelism(self.tac)

    @cached_property
    def flops(self) -> tuple[float, float]:
        """(fp32, fp64) flops per launch: FMA 2, every other floating-point op 1 (div, sqrt and
        transcendental calls included as 1: the bound stays a lower bound)."""
        f32 = f64 = 0.0
        for s in self.statements:
            n_exec = self.executions[s.sid].executions * self.threads * self._thread_frac(s)
            for cls, n in s.ops:
                per = 2.0 if cls.endswith("fma") else 1.0
                if cls.startswith("fp32_"):
                    f32 += per * n * n_exec
                elif cls.startswith("fp64_"):
                    f64 += per * n * n_exec
        return f32, f64

    def _thread_frac(self, s: Statement) -> float:
        """Share of the statement's domain where its guards hold (1 for unguarded or unknown guards)."""
        if not s.guards:
            return 1.0
        if getattr(self, "_tfrac", None) is None:
            self._tfrac = {}
        if s.sid not in self._tfrac:
            _geo, env0, valid0 = self._samples(self.kernel.block)
            _env, dom, act = self._domain_env(s, env0, valid0, WINDOW)
            self._tfrac[s.sid] = float(act.sum() / dom.sum()) if dom.sum() else 1.0
        return self._tfrac[s.sid]

    def intensity(self, block=None) -> Intensity:
        if self.tac.instrs:
            r = self.tac.intensity((), self.tac.arrays)
            alg, on, off = r.intensity, r.on_chip, r.off_chip
        else:
            alg, on, off = math.inf, 0, 0
        mem = self.memory(block or self.kernel.block)
        fl = sum(self.flops)
        return Intensity(alg, on, off, fl / mem.dram_lower_bound if mem.dram_lower_bound else math.inf, fl)

    @cached_property
    def registers(self) -> Registers:
        mode = self.registers_mode
        if mode in ("auto", "ptxas") and self.code is not None:
            arch = arch_for(self.gpu)
            if arch is not None:
                r = ptxas_registers(kernel_source(self.code), self.code.name, arch)
                if r is not None:
                    note = "" if arch == f"sm_{self.gpu.cc[0]}{self.gpu.cc[1]}" else \
                        f", nearest architecture this nvcc supports to cc {self.gpu.compute_capability}"
                    return Registers(r[0], r[1], r[2], f"ptxas ({arch}{note})", arch)
        pointer = len({ai.access.array for ai in self.access_infos})
        scalars = len([s for s in self.nest.scalars if s.role == "invariant"]) + len(self.nest.params)
        est = estimate_registers(self.tac, pointer, scalars, len(self.kernel.loops), len(self.inner_loops),
                                 self.gpu.max_registers_per_thread)
        why = "nvcc not available" if mode != "estimate" else "estimate requested"
        return replace(est, source=f"{est.source}; {why}")

    def occupancy(self, block) -> Optional[Occupancy]:
        key = ("occ", tuple(block))
        if key in self._results:
            return self._results[key]
        threads = block[0] * block[1] * block[2]
        smem = self.shared_bytes(block)
        try:
            if smem > self.gpu.shared_mem_per_block:
                # c2gpu's kernels declare their shared memory as __shared__ arrays, which may not exceed this
                # (the opt-in maximum occupancy_of allows needs dynamic shared memory)
                raise InvalidLaunchError(f"{smem} bytes of static shared memory")
            occ = occupancy_of(self.gpu, threads, self.registers.count, smem)
        except InvalidLaunchError:
            occ = None
        self._results[key] = occ
        return occ

    # ------------------------------------------------------------------ profile
    @cached_property
    def effective_machine_base(self) -> MachineParams:
        return replace(self.machine, dram_bw_gbs=self.gpu.dram_bandwidth_gbs * self.gpu.dram_efficiency)

    def profile(self, block) -> tuple[KernelProfile, MachineParams]:
        """The KernelProfile of this kernel on `block` and the machine the models should read it with:
        the catalog's, with the sustained DRAM bandwidth and this kernel's average memory latency
        (module doc).  Raises PerfError when the block cannot launch."""
        key = ("profile", tuple(block))
        if key in self._results:
            return self._results[key]
        block = tuple(block)
        occ = self.occupancy(block)
        threads = block[0] * block[1] * block[2]
        if occ is None:
            raise PerfError(f"block {block[0]}x{block[1]}x{block[2]} cannot launch on {self.gpu.key} with "
                            f"{self.registers.count} registers per thread and {self.shared_bytes(block)} bytes of "
                            f"shared memory per block (static: at most {self.gpu.shared_mem_per_block})")
        geo = self.geometry(block)
        mem = self.memory(block)
        tr = self.trace(block)
        loads = [c for c in mem.accesses if c.kind == "read"]
        weight = sum(c.requests for c in loads)
        lat = (sum(c.latency * c.requests for c in loads) / weight) if weight > 0 else self.gpu.dram_latency_cycles
        machine = replace(self.effective_machine_base, dram_latency_cycles=max(1.0, lat))
        f32, f64 = self.flops
        # GPUPerf's O_CFdiv input: of a guarded statement's instructions, which the trace counts for every warp
        # with an active lane (f_w), those issued only because the warp diverged (f_w - f_t): its compute as the
        # trace counts it (its operations and address arithmetic) and its memory instructions
        divergent = 0.0
        warp_frac = self.warp_fractions(block)
        for s in self.statements:
            if s.guards:
                f_w = warp_frac.get(s.sid, 1.0)
                f_t = self._thread_frac(s)
                own = [ai for ai in self.access_infos if ai.stmt.sid == s.sid and ai.hoisted is None]
                insts = sum(self._ops(s).values()) + sum(sum(self._addr_ops(ai).values()) + 1 for ai in own)
                divergent += max(0.0, f_w - f_t) * insts * self.executions[s.sid].executions
        prof = KernelProfile.from_trace(
            tr, grid_blocks=max(1, geo.blocks), block_threads=threads, n_threads=max(1, geo.threads),
            syncs=self.syncs_per_thread() + self.reduction_syncs(block), divergent_insts=divergent,
            ilp=self.ilp, mlp=self.mlp, registers_per_thread=self.registers.count,
            shared_bytes_per_block=self.shared_bytes(block), active_warps_per_sm=occ.active_warps_per_sm,
            miss_ratio=1.0, dram_bytes=mem.dram_lower_bound, flops=f32, flops_fp64=f64,
            name=self.kernel.name)
        out = (prof, machine)
        self._results[key] = out
        return out


@lru_cache(maxsize=4096)
def _extremes(domain: str, index: str | None) -> tuple[int, int] | tuple[()] | None:
    """(min, max) of the isl map `index` over the isl set `domain` (texts); () when the domain is empty, None
    when isl cannot say (or there is no index).  Once per text: the kernels of a nest and the structures compared ask for the same
    ranges (PolyBench: 652 asked, 178 distinct)."""
    import islpy as isl
    try:
        dom = isl.Set(domain)
        if dom.is_empty():
            return ()
        if index is None:
            return None
        vals = dom.apply(isl.Map(index))
        return int(vals.dim_min_val(0).to_python()), int(vals.dim_max_val(0).to_python())
    except Exception:
        return None


def _window_distinct(items, live: int, weights=None) -> tuple[int, int, int]:
    """Distinct sectors a group of accesses touches, summed over the sampled blocks (all of a block's warps, all
    the group's accesses): over the whole window, over its first `live` iterations, and as distinct (iteration,
    sector) pairs.  `items`: (sorted_rows of each warp request's sectors, ...) of shape (blocks, warps, window,
    lanes); `weights`: how many sampled blocks each of those blocks stands for (KernelAnalysis._block_weights),
    None for one each.  Only a request's distinct sectors matter (run_starts: a coalesced request's 32 lanes are 4
    sectors), as keys sector * 64 + iteration (the window has at most 64 iterations), one sorted vector per
    block: sorted keys are sorted by sector, then iteration, so a sector starts a run of equal `key >> 6`, and
    that run's first entry has its smallest iteration (the sector is touched within the first `live`
    iterations iff that one is)."""
    nb = items[0][0].shape[0]
    per_block: list[list] = [[] for _ in range(nb)]
    for s, _ai in items:
        starts = run_starts(s)
        keys = s * 64 + np.arange(s.shape[2], dtype=np.int64).reshape(1, 1, -1, 1)
        for b in range(nb):
            per_block[b].append(keys[b][starts[b]])
    u_win = u_live = u_one = 0
    for b, parts in enumerate(per_block):
        k = np.sort(np.concatenate(parts), kind="stable")
        if not k.size:
            continue
        w = 1 if weights is None else int(weights[b])
        sec = k >> 6
        new_sec = np.empty(k.size, dtype=bool)
        new_sec[0] = True
        np.not_equal(sec[1:], sec[:-1], out=new_sec[1:])
        u_one += w * (1 + int(np.count_nonzero(k[1:] != k[:-1])))
        u_win += w * int(np.count_nonzero(new_sec))
        u_live += w * int(np.count_nonzero(new_sec & ((k & 63) < live)))
    return u_win, u_live, u_one


def _blocks(a, kept):
    """The kept sampled blocks of `a` (blocks first; a value without a block axis is the same for all)."""
    if kept is None or np.ndim(a) == 0 or np.shape(a)[0] == 1:
        return a
    return a[kept]


def _translation(a, b: int):
    """The distance by which sampled block b's values of `a` are block 0's moved, or None when they are not a
    translation of them (0 for a value without a block axis)."""
    if np.ndim(a) == 0 or np.shape(a)[0] == 1:
        return 0
    d = a[b] - a[0]
    first = d.flat[0]
    return int(first) if (d == first).all() else None


def kernel_source(code) -> str:
    """The text ptxas compiles for a kernel's registers: its prelude and its CUDA."""
    return getattr(code, "prelude", "") + (getattr(code, "text", None) or _render_kernel(code))


def _render_kernel(code) -> str:
    from ..codegen import templates
    return templates().get_template("kernel.cu.j2").render(k=code)


def _enumerate(loops: list[Loop], env, limit: int):
    def rec(i, bound):
        if i == len(loops):
            yield dict(bound)
            return
        t = max(0, int(loops[i].trip_count.evaluate({**env, **bound})))
        for v in range(t):
            bound[loops[i].var] = v
            yield from rec(i + 1, bound)
        bound.pop(loops[i].var, None)
    n = 0
    for vals in rec(0, {}):
        n += 1
        if n > limit:
            return
        yield vals


TRACE_UNROLL = 2   # loop copies kept per trace Loop node (Alg. 5.1 interleaving granularity)


def coarsen(nodes, factor: float = 1.0, unroll: int = TRACE_UNROLL) -> tuple:
    """The same trace with every Loop of more than `unroll` trips folded to `unroll` trips, its body's
    counts scaled up by trips/unroll.  Per-thread counts and, since delays are linear in an item's
    weight, one warp's simulated time are unchanged; the simulation only interleaves warps in coarser
    steps (measured: no change in the validation ratios between 1 and 1000 copies, 10-50x faster)."""
    out = []
    for n in nodes:
        if isinstance(n, TLoop):
            trips = n.trips
            new = min(trips, float(unroll))
            f = factor * (trips / new if new > 0 else 1.0)
            out.append(TLoop(coarsen(n.body, f, unroll), new, n.ilp))
        elif isinstance(n, Branch):
            out.append(Branch(coarsen(n.then, factor, unroll), coarsen(n.orelse, factor, unroll)))
        elif factor != 1.0:
            out.append(replace(n, count=n.count * factor))
        else:
            out.append(n)
    return tuple(out)
