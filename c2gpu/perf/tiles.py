"""Shared memory of a kernel (TilesMixin, a part of KernelAnalysis in c2gpu/perf/profile.py): its static size per
block (reduction trees and chosen tiles), the accesses the tiles serve, the tiles' cooperative loads and their
barriers."""
from __future__ import annotations

from typing import Optional

from ..ir import Loop, ordered_reduction, reduction_type
from ..model.inputs import GlobalMem, SharedMem, TraceNode


class TilesMixin:
    """The shared-memory part of KernelAnalysis (reads its kernel, shared-memory plan, accesses and loop
    iterations)."""

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
