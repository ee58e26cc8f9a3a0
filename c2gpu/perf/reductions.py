"""Reductions across threads on a block shape: the trace nodes of the reduction trees and of their atomics, the
trees' steps weighted by the warps that work, and their barriers."""
from __future__ import annotations

import math

from ..ir import ordered_reduction
from ..model.inputs import Compute, GlobalMem, SharedMem, TraceNode
from ..planning.plan import WHOLE_BLOCK


def _reduction_nodes(nest, kernel, by_id, warp_size: int, block) -> list[TraceNode]:
    if not kernel.reductions:
        return []
    threads = block[0] * block[1] * block[2]
    tree = kernel.tree_threads(block)
    steps = max(1, int(math.log2(tree)))
    nodes: list[TraceNode] = []
    warps = max(1, threads // warp_size)
    active = tree_warp_steps(kernel, warp_size, block)
    for r in kernel.reductions:
        partials = kernel.partials(r)         # a tree and an atomic for each partial result the thread keeps
        nodes.append(SharedMem(f"reduction tree {r.target}", 1.0, 8, partials, is_store=True))
        nodes.append(SharedMem(f"reduction tree {r.target} (combine)", 1.0, 8, 2 * active * partials))
        nodes.append(SharedMem(f"reduction tree {r.target} (store)", 1.0, 8, active * partials, is_store=True))
        nodes.append(Compute("compare", float(steps * partials)))
        if ordered_reduction(nest, r):
            # the iterations travel with the values (one more compare and move per step, as shared memory);
            # the block's pair goes to global memory and a counter; the last block's pass over the blocks'
            # pairs is one block's work and is left out
            ranks = len(kernel.rank_loops(r, by_id))
            nodes.append(SharedMem(f"reduction tree {r.target} (iterations)", 1.0, 8, (2 + ranks) * active))
            nodes.append(Compute("compare", float(steps)))
        # one atomic per tree: per block, or per row of it (Kernel.tree_dims)
        nodes.append(GlobalMem(f"atomic {r.target}", 1.0, partials * (threads // tree) / warps, is_store=True))
    return nodes


def tree_warp_steps(kernel, warp_size: int, block) -> float:
    """The steps of the reduction tree weighted by the share of the block's warps with an active lane (warps
    with none skip the step): a tree over the whole block (Kernel.tree_dims) halves the active threads at each
    step; a tree per row along x keeps a lane of every warp busy while its rows are at most a warp, one along y
    or z halves the warps that work."""
    threads = block[0] * block[1] * block[2]
    warps = max(1, threads // warp_size)
    if kernel.tree_dims == WHOLE_BLOCK:
        steps = max(1, int(math.log2(threads)))
        return sum(min(1.0, max(threads >> (k + 1), 1) / warp_size / warps) for k in range(steps))
    k = "xyz".index(kernel.tree_dims)
    total = 0.0
    for step in range(max(1, int(math.log2(block[k])))):
        s = block[k] >> (step + 1)
        total += (1.0 if block[0] <= warp_size else min(1.0, max(s, warp_size) / block[0])) \
            if k == 0 else s / block[k]
    return total


def reduction_syncs(kernel, block) -> float:
    if not kernel.reductions:
        return 0.0
    return 1.0 + max(1, int(math.log2(kernel.tree_threads(block))))
