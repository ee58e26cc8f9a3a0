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
  occupancy(b)       c2gpu.model.occupancy
  memory(b)          L1 / L2 / DRAM traffic per access, DRAM lower bound and estimate
  trace(b)           the Resios trace (Alg. 5.1 input)
  profile(b)         KernelProfile and the kernel's effective MachineParams

This module holds the kernel's structure, executions, ILP, intensity, registers, occupancy and profile; the
other parts of KernelAnalysis are mixins of their own modules: accesses.py (accesses, flat indices, registers'
loads and stores), geometry.py (grid, sampled lanes), coalescing.py (sectors per request, L1 reuse groups),
memory.py (traffic and costs), footprints.py (index ranges, working sets), tiles.py (shared memory, tiles) and
trace.py (instructions, the trace); reductions.py (the reduction trees) is plain functions, facts.py the
cached property they share.

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

Registers.  An array element the kernel keeps in a register across an in-thread loop (c2gpu/planning/promotion.py,
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
from dataclasses import replace
from functools import cached_property
from typing import Optional

from ..analysis.counting import evaluate_instances
from ..codegen import templates
from ..model.gpu import GPU
from ..ir import Loop, Nest, Statement
from ..pipeline import memo
from ..model.inputs import KernelProfile, MachineParams
from ..model.occupancy import InvalidLaunchError, Occupancy, occupancy as occupancy_of
from ..records import dataclass
from .accesses import AccessesMixin
from .coalescing import WINDOW, CoalescingMixin
from .dfg import TAC, memory_parallelism, three_address
from .facts import kernel_fact
from .footprints import FootprintsMixin
from .geometry import GeometryMixin
from .machine import machine_params
from .memory import MemoryMixin
from .registers import Registers, arch_for, estimate_registers, ptxas_registers
from .reductions import reduction_syncs
from .tiles import TilesMixin
from .trace import TraceMixin, _ops


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
class Intensity:
    """A kernel's arithmetic intensity: Alg. 6.3's on-chip to off-chip ratio and the roofline's flops per
    DRAM byte."""
    alg63: float                   # on-chip / off-chip instructions (Alg. 6.3)
    on_chip: int
    off_chip: int
    flops_per_dram_byte: float     # roofline intensity (flops / DRAM lower bound)
    flops: float                   # per launch (fp32 + fp64)


# --------------------------------------------------------------------------- the analysis

class KernelAnalysis(AccessesMixin, GeometryMixin, CoalescingMixin, MemoryMixin, FootprintsMixin, TilesMixin,
                     TraceMixin):
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
        return self._shared_dict("kernel facts", (replace(self.kernel, block=(0, 0, 0)),))

    @cached_property
    def _results(self) -> dict:
        """(what, block) -> memory, trace, occupancy or profile on that block.  These depend on the kernel (its
        block included: tile loads are per thread of it), the host loops, the sizes, the GPU, whether elements
        live in registers, the tiles and the register count, and on nothing else: every analysis with the same
        inputs shares one dict.  The block search builds an analysis per shape it tries, once per shared-memory
        budget the performance pass compares, and the budgets often give a shape the same tiles (PolyBench:
        3,875 memory analyses, 1,571 distinct).  (The register count must be final before the first of them is
        asked for.)"""
        return self._shared_dict("kernel results", (self.kernel, self.shared, self.registers.count))

    def _shared_dict(self, table: str, inputs: tuple) -> dict:
        """The dict the nest's memo table `table` (pipeline.memo) keeps for this analysis's GPU (object), host
        loops, registers?, sizes and `inputs` (a new one the first time); the entry holds the GPU, so that its id
        is not reused while it lives.  Inputs that do not hash: a dict of this analysis's own."""
        try:
            key = (id(self.gpu), self.host_lids, self.promote, tuple(sorted(self.env.items()))) + inputs
            kept = memo(self.nest, table)
            hit = kept.get(key)
        except TypeError:
            return {}
        if hit is None or hit[0] is not self.gpu:
            hit = kept[key] = (self.gpu, {})
        return hit[1]

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
        loop whose iterations the threads along its dimension take in turns (MappedLoop.turns) has at most that
        many threads per row of the others."""
        turns = self.turn_loops
        if not turns:
            return self._count(self.host_path + self.mapped_path) / max(1.0, self.launches)
        taking = {m.lid for m in turns}
        rows = self._count(self.host_path + [lp for lp in self.mapped_path if lp.lid not in taking]) \
            if len(self.mapped_path) > len(turns) or self.host_path else 1.0
        return rows / max(1.0, self.launches) * math.prod(self._turn_threads(m, self.env) for m in turns)

    @kernel_fact
    def turns_per_thread(self) -> float:
        """The times each thread runs the kernel's body: its iterations of the loops taken in turns (one without)."""
        return self._per_thread([]) if self.turn_loops else 1.0

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

    # ------------------------------------------------------------------ ILP, intensity, registers
    @kernel_fact
    def hot_region(self) -> tuple[list, str]:
        """The statements (their expression trees) of the innermost in-thread loop body (the hot path) or of the
        straight-line kernel body, and a description."""
        innermost = [lp for lp in self.inner_loops if not any(isinstance(n, Loop) for n in lp.body)]
        if innermost:
            # the deepest / most executed innermost loop
            lp = max(innermost, key=lambda l: self.loop_iterations(l))
            stmts = [n for n in lp.body if isinstance(n, Statement)]
            return [s.expr for s in stmts], f"body of loop '{lp.source_var}' (line {lp.loc.line})"
        return [s.expr for s in self.statements], "straight-line kernel body"

    @kernel_fact
    def tac(self) -> TAC:
        exprs, _ = self.hot_region
        return three_address(exprs, {lp.var for lp in self.nest.loops()} |
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
                insts = sum(_ops(s).values()) + sum(sum(self._addr_ops(ai).values()) + 1 for ai in own)
                divergent += max(0.0, f_w - f_t) * insts * self.executions[s.sid].executions
        prof = KernelProfile.from_trace(
            tr, grid_blocks=max(1, geo.blocks), block_threads=threads, n_threads=max(1, geo.threads),
            syncs=self.syncs_per_thread() + reduction_syncs(self.kernel, block), divergent_insts=divergent,
            ilp=self.ilp, mlp=self.mlp, registers_per_thread=self.registers.count,
            shared_bytes_per_block=self.shared_bytes(block), active_warps_per_sm=occ.active_warps_per_sm,
            miss_ratio=1.0, dram_bytes=mem.dram_lower_bound, flops=f32, flops_fp64=f64,
            name=self.kernel.name)
        out = (prof, machine)
        self._results[key] = out
        return out


def kernel_source(code) -> str:
    """The text ptxas compiles for a kernel's registers: its prelude and its CUDA."""
    return getattr(code, "prelude", "") + (getattr(code, "text", None) or _render_kernel(code))


def _render_kernel(code) -> str:
    if code.body is None:
        raise ValueError(f"{code.name} is a layout: it has no text to compile")
    return templates().get_template("kernel.cu.j2").render(k=code)
