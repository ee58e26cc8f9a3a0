"""The instructions of one thread of a kernel on a block shape (TraceMixin, a part of KernelAnalysis in
c2gpu/perf/profile.py): each statement's operations by machine class and its address arithmetic, the Resios
trace (Alg. 5.1's input) and the instruction counts read off it (the "Instruction counts" choice of profile.py's
module doc)."""
from __future__ import annotations

from dataclasses import replace

from ..ir import Loop, Statement
from ..model.inputs import Branch, Compute, GlobalMem, Loop as TLoop, SharedMem, TraceNode, counts_from_trace
from ..records import dataclass
from .accesses import AccessInfo
from .reductions import _reduction_nodes

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


class TraceMixin:
    """The instructions part of KernelAnalysis (reads its accesses, memory, tiles, reductions and loop iterations)."""

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
        statement as its loads, its compute and its stores (profile.py's module doc)."""
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
            for c, n in _ops(s).items():
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
        body = loop_nodes(self.kernel.nodes(self.by_id), self.turns_per_thread)
        if self.turn_loops:        # the loops taken in turns (MappedLoop.turns): the body is a loop in each thread
            body = [TLoop(tuple(body + [Compute("int_add", 1.0), Compute("compare", 1.0)]), self.turns_per_thread)]
        nodes = prologue + self._tile_nodes(None, costs) + body
        nodes += _reduction_nodes(self.nest, self.kernel, self.by_id, self.gpu.warp_size, block)
        tr = coarsen(tuple(nodes))
        self._results[key] = tr
        return tr

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
        if self.turn_loops:
            overhead += 2.0 * self.turns_per_thread
        prologue = 2.0 * len(self.kernel.loops) + sum(1 for m in self.kernel.loops if m.origin is not None)
        return InstructionCounts(dict(sorted(inst.items())), dict(sorted(ir.items())), addr, overhead, prologue,
                                 sum(a.count for a in g), sum(a.count for a in s))


def _ops(s: Statement) -> dict[str, float]:
    out: dict[str, float] = {}
    for cls, n in s.ops:
        mc, k = OP_CLASSES.get(cls, ("int_add", 1))
        out[mc] = out.get(mc, 0.0) + n * k
    return out


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
