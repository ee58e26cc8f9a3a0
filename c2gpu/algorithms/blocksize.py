"""Block-size strategies of the seed's section 5.2.1, on explicit numbers.

The seed computes a number of warps per block n_w and converts it to a shape:

    blocks(n_w) = n_w * warp_size        (1-D loop)
                = (n_w, warp_size)       (2-D loop: x = n_w, y = warp_size)

    n_w   = min(n_w^1, n_w^2, n_w^3)
    n_w^1 = n_t / (n_SM * warp_size)                                  even division
    n_w^2 = min(max_w, max_r / (warp_size * n_r), max_s / (warp_size * n_s))  utilization
    n_w^3 = max_i warps_l(i),  warps_l(i) = c*L_i (compute) or c*L_i / ai (memory)

Choices made explicit (the seed leaves them implicit):
* Rounding: n_w^1 and n_w^3 round up (cover all threads / hide all latency),
  n_w^2 rounds down (a resource limit).  Rounding n_w^1 up reproduces the
  seed's validation number: 1024 iterations on the 7-SM GTX 460 -> 5 warps ->
  block size 160 (section 7.1).
* n_s is read as shared-memory bytes *per thread*: that is the only reading in
  which max_s / (warp_size * n_s) is a warp count.
* The combined answer is also capped by max_threads_per_block / warp_size and
  floored at 1 warp; the seed's (32, 32) answer for large 2-D workloads
  (section 7.2) is exactly that cap on a 1024-thread-per-block GPU.
* c (instructions in flight per cycle per SM, "4 for CUDA 2.1") and the
  latencies are inputs; nothing here is tied to one GPU.
"""

from __future__ import annotations

import math
from typing import Iterable, List, Optional, Sequence, Tuple
from ..records import dataclass


@dataclass(frozen=True)
class BlockChoice:
    warps: int           # n_w
    threads: int         # n_w * warp_size
    explanation: str     # one line, with the numbers that produced it


def _choice(warps: int, warp_size: int, why: str) -> BlockChoice:
    return BlockChoice(warps, warps * warp_size, why)


def even_division(total_threads: int, sm_count: int, warp_size: int = 32) -> BlockChoice:
    """Strategy 1, n_w^1 = ceil(n_t / (n_SM * warp_size)): one block per SM
    shares the work evenly."""
    w = max(1, math.ceil(total_threads / (sm_count * warp_size)))
    return _choice(w, warp_size,
                   f"even division: ceil({total_threads} threads / ({sm_count} SMs * {warp_size})) = {w} warps")


def utilization_limit(max_warps_per_sm: int, regs_per_sm: int, regs_per_thread: int,
                      smem_per_sm: int, smem_per_thread: float, warp_size: int = 32) -> BlockChoice:
    """Strategy 2, n_w^2 = min(max_w, max_r/(warp*n_r), max_s/(warp*n_s)): the
    most warps one SM can hold given registers and shared memory.  A per-thread
    use of 0 imposes no limit."""
    by_regs = regs_per_sm // (warp_size * regs_per_thread) if regs_per_thread else math.inf
    by_smem = int(smem_per_sm // (warp_size * smem_per_thread)) if smem_per_thread else math.inf
    w = int(min(max_warps_per_sm, by_regs, by_smem))
    limiter = {max_warps_per_sm: "resident-warp limit", by_regs: "registers",
               by_smem: "shared memory"}[w]
    return _choice(max(1, w), warp_size,
                   f"utilization: min({max_warps_per_sm} warps, regs {by_regs}, smem {by_smem}) = {w} warps ({limiter})")


def latency_hiding(latencies: Iterable[Tuple[float, bool]], arithmetic_intensity: float,
                   c: float = 4.0, warp_size: int = 32) -> BlockChoice:
    """Strategy 3, n_w^3 = max_i warps_l(i) with warps_l(i) = c * L_i for
    compute and c * L_i / ai for memory instructions.

    latencies: (latency in cycles, is_memory) per instruction of the kernel.
    arithmetic_intensity: Algorithm 6.3's ai (inf: memory latency needs no warps;
    0: treated as 1, i.e. unscaled, to avoid an infinite requirement)."""
    ai = arithmetic_intensity if arithmetic_intensity > 0 else 1.0
    need, worst = 0.0, None
    for lat, is_mem in latencies:
        w = c * lat / ai if is_mem else c * lat
        if w > need:
            need, worst = w, (lat, is_mem)
    n = max(1, math.ceil(need))
    what = "none" if worst is None else f"{'memory' if worst[1] else 'compute'} latency {worst[0]}"
    return _choice(n, warp_size, f"latency hiding: c={c}, worst {what}, ai={arithmetic_intensity:g} -> {n} warps")


def choose_block_size(total_threads: int, sm_count: int, *, max_threads_per_block: int,
                      max_warps_per_sm: int, regs_per_sm: int, regs_per_thread: int,
                      smem_per_sm: int, smem_per_thread: float,
                      latencies: Iterable[Tuple[float, bool]] = (),
                      arithmetic_intensity: float = math.inf, c: float = 4.0,
                      warp_size: int = 32) -> BlockChoice:
    """n_w = min(n_w^1, n_w^2, n_w^3), capped at max_threads_per_block.
    Without latencies the third strategy is skipped."""
    parts = [even_division(total_threads, sm_count, warp_size),
             utilization_limit(max_warps_per_sm, regs_per_sm, regs_per_thread,
                               smem_per_sm, smem_per_thread, warp_size)]
    lats = list(latencies)
    if lats:
        parts.append(latency_hiding(lats, arithmetic_intensity, c, warp_size))
    cap = max(1, max_threads_per_block // warp_size)
    best = min(parts, key=lambda p: p.warps)
    if best.warps > cap:
        return _choice(cap, warp_size, f"block limit {max_threads_per_block} threads = {cap} warps "
                                       f"(strategies gave {[p.warps for p in parts]})")
    return best


def block_from_warps(n_warps: int, ndims: int, warp_size: int = 32) -> Tuple[int, ...]:
    """The seed's blocks(n_w): 1-D -> (n_w * warp_size,), 2-D -> (n_w, warp_size).
    Note the seed puts the warp size on y; candidate_block_shapes explores the
    coalescing-friendly alternatives (x a multiple of the warp size)."""
    if ndims == 1:
        return (n_warps * warp_size,)
    if ndims == 2:
        return (n_warps, warp_size)
    raise ValueError("the seed defines blocks(n_w) for 1-D and 2-D loops only")


def candidate_block_shapes(ndims: int, extents: Sequence[int], max_threads: int = 1024,
                           warp_size: int = 32,
                           max_dims: Sequence[int] = (1024, 1024, 64)) -> List[Tuple[int, ...]]:
    """Block shapes worth evaluating for an ndims-deep loop nest with the given
    extents (x = innermost / fastest-varying loop first).

    x: every multiple of warp_size up to roundup(extent_x, warp_size) (so a
       warp reads consecutive x), or exactly extent_x when it is below a warp;
    y, z: powers of two up to the next power of two >= the extent;
    kept when threads <= max_threads, each dim <= max_dims (CUDA limits), and
    threads is a multiple of warp_size, unless the block covers the whole
    iteration space (then partial warps are unavoidable).  Sorted."""
    if ndims not in (1, 2, 3) or len(extents) != ndims:
        raise ValueError("need 1..3 dims and one extent per dim")
    if any(e < 1 for e in extents):
        raise ValueError("extents must be positive")
    ex = extents[0]
    if ex < warp_size:
        xs = [ex]
    else:
        top = min(math.ceil(ex / warp_size) * warp_size, max_threads, max_dims[0])
        xs = list(range(warp_size, top + 1, warp_size))

    def pow2_upto(e: int, dim_cap: int) -> List[int]:
        out, p = [], 1
        while p <= min(dim_cap, max_threads):
            out.append(p)
            if p >= e:
                break
            p *= 2
        return out

    axes = [xs] + [pow2_upto(e, max_dims[d]) for d, e in enumerate(extents[1:], start=1)]
    shapes = [()]
    for vals in axes:
        shapes = [s + (v,) for s in shapes for v in vals]
    keep = []
    for s in shapes:
        threads = math.prod(s)
        covers = all(b >= e for b, e in zip(s, extents))
        if threads <= max_threads and (threads % warp_size == 0 or covers):
            keep.append(s)
    return sorted(set(keep))
