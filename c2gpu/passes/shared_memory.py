"""The shared-memory pass: the tiles of every kernel of a mapped nest (c2gpu/planning/shared_tiles.py, seed 004,
section 6.1: Algorithms 6.1 and 6.2) under the default budget; the plan pass settles the budget."""
from __future__ import annotations

from c2gpu.ir import Nest
from c2gpu.pipeline import Pass
from c2gpu.planning.plan import SharedMemoryPlan
from c2gpu.planning.shared_tiles import plan_shared_memory


class SharedMemory(Pass):
    name = "shared-memory"
    description = "find shared-memory tiles (reuse, halos, small arrays) and choose them by greedy knapsack (seed 004, 6.1-6.2)"
    requires = ("mapping",)
    provides = ("shared-memory",)

    def run(self, nest: Nest, ctx) -> SharedMemoryPlan:
        return plan_shared_memory(nest, ctx.get("mapping", nest), ctx.options)
