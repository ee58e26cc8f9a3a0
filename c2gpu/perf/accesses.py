"""The array accesses of a kernel's threads (AccessesMixin, a part of KernelAnalysis in c2gpu/perf/profile.py): an
AccessInfo per access with its flat element index, the per-thread arrays and those of them in local memory, and the
loads and stores of the elements kept in registers (the "Registers" choice of profile.py's module doc)."""
from __future__ import annotations

from typing import Optional

import islpy as isl

from ..analysis import isl_sets as ph
from ..ir import Access, Statement
from ..pipeline import memo
from ..planning.promotion import Promotion, promoted_accesses, promotions
from ..records import dataclass
from ..symbolic import Poly
from .facts import kernel_fact

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


class AccessesMixin:
    """The accesses part of KernelAnalysis (reads its nest, kernel, env, statements and executions)."""

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
        # accesses (access_infos, host_working_set); the polynomial substitution is the costly part: kept per
        # nest (pipeline.memo), access (object: the entry holds it, so its id is not reused) and sizes
        key = (id(a), tuple(sorted(self.env.items())))
        table = memo(self.nest, "flat indices")
        hit = table.get(key)
        if hit is None or hit[0] is not a:
            hit = table[key] = (a, self._flat_index_uncached(a))
        return hit[1]

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
        """The inner extents of a table of rows as the port lays it out on the device (codegen.arrays._table_plan:
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
