"""Theoretical occupancy, following NVIDIA's occupancy calculator (cuda_occupancy.h).

Four limits on the blocks an SM can hold at once; the smallest wins:

  warps          max_warps_per_sm // ceil(threads_per_block / warp_size)
  blocks         max_blocks_per_sm
  registers      registers are allocated per warp: ceil(regs_per_thread * warp_size,
                 register_allocation_unit).  The register file is split evenly over the
                 SM's sub-partitions (warp_allocation_granularity: 4, or 2 on GP100 and
                 Fermi), so warps/SM = (registers_per_sm / subparts // regs_per_warp) * subparts,
                 and blocks = that // warps_per_block.
  shared memory  per block: ceil(shared bytes + reserved_shared_mem_per_block (1 KiB from
                 cc 8.0, added even when the kernel uses none), shared_mem_allocation_unit);
                 blocks = shared_mem_per_sm // that.

Assumptions (the calculator's defaults): the shared-memory carveout is the largest one
(shared_mem_per_sm), a kernel needing more than 48 KiB per block opts in to the larger
per-block limit, and no partitioned global caching (not used on the catalog GPUs).

A configuration that cannot launch at all raises InvalidLaunchError rather than
returning zero blocks: threads per block over the limit, registers per thread over the
limit, a block's registers over max_registers_per_block, or a block's shared memory over
the opt-in per-block limit.
"""
from __future__ import annotations

from typing import Optional

from ..diagnostics import C2GPUError
from .gpu import GPU
from ..records import dataclass


class InvalidLaunchError(C2GPUError, ValueError):
    """The block configuration cannot run on this GPU at all."""


# Order used to name one limiting factor when several limits tie (all of them are in
# Occupancy.limiting_factors).  Warps first: if the warp limit is reached, occupancy is
# as high as this block size allows, whatever else ties with it.
FACTORS = ("warps", "blocks", "registers", "shared memory")


@dataclass(frozen=True)
class Occupancy:
    """The theoretical occupancy of a launch configuration: active blocks and warps per SM, and which of the
    four limits sets it."""
    active_blocks_per_sm: int
    active_warps_per_sm: int
    occupancy: float                     # active warps / max warps per SM
    limiting_factor: str                 # one of FACTORS
    limiting_factors: tuple[str, ...]    # every factor whose limit equals the result
    warps_per_block: int
    blocks_limit_warps: int
    blocks_limit_blocks: int
    blocks_limit_registers: Optional[int]       # None: the kernel uses no registers
    blocks_limit_shared_memory: Optional[int]   # None: no shared memory allocated at all
    registers_per_block: int             # allocated (after rounding)
    shared_mem_per_block: int            # allocated (after reserve and rounding)

    @property
    def block_limits(self) -> dict[str, Optional[int]]:
        return {"warps": self.blocks_limit_warps, "blocks": self.blocks_limit_blocks,
                "registers": self.blocks_limit_registers, "shared memory": self.blocks_limit_shared_memory}


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def occupancy(gpu: GPU, threads_per_block: int, registers_per_thread: int,
              shared_mem_per_block: int = 0) -> Occupancy:
    """Active blocks and warps per SM for one kernel configuration (see module doc)."""
    where = f"on {gpu.key} (cc {gpu.compute_capability})"
    if threads_per_block < 1 or threads_per_block > gpu.max_threads_per_block:
        raise InvalidLaunchError(f"{threads_per_block} threads per block is invalid {where}: "
                                 f"allowed 1 .. {gpu.max_threads_per_block}")
    if registers_per_thread < 0 or registers_per_thread > gpu.max_registers_per_thread:
        raise InvalidLaunchError(f"{registers_per_thread} registers per thread is invalid {where}: "
                                 f"allowed 0 .. {gpu.max_registers_per_thread}")
    if shared_mem_per_block < 0:
        raise InvalidLaunchError(f"shared memory per block must be >= 0 bytes, got {shared_mem_per_block}")

    warps_per_block = -(-threads_per_block // gpu.warp_size)

    # Warps and blocks.
    limit_warps = gpu.max_warps_per_sm // warps_per_block
    limit_blocks = gpu.max_blocks_per_sm

    # Registers, per warp, per sub-partition.
    subparts = gpu.warp_allocation_granularity
    regs_per_warp = _round_up(registers_per_thread * gpu.warp_size, gpu.register_allocation_unit)
    regs_per_block = regs_per_warp * warps_per_block
    # The hardware's launch check assumes every sub-partition gets the block's warps
    # rounded up to a multiple of the sub-partition count (cuda_occupancy.h).
    regs_checked = regs_per_warp * _round_up(warps_per_block, subparts)
    if max(regs_per_block, regs_checked) > gpu.max_registers_per_block:
        raise InvalidLaunchError(
            f"{threads_per_block} threads x {registers_per_thread} registers cannot launch {where}: the block "
            f"needs {max(regs_per_block, regs_checked)} registers (per warp {regs_per_warp} after rounding to "
            f"{gpu.register_allocation_unit}), over the limit of {gpu.max_registers_per_block} per block")
    if regs_per_warp == 0:
        limit_regs = None
    else:
        warps_by_regs = (gpu.registers_per_sm // subparts) // regs_per_warp * subparts
        limit_regs = warps_by_regs // warps_per_block

    # Shared memory, with the per-block reserve of cc >= 8.0 included in both the usage
    # and the per-block limit (cudaOccSMemPerBlock adds it to the limit too).
    smem_alloc = _round_up(shared_mem_per_block + gpu.reserved_shared_mem_per_block,
                           gpu.shared_mem_allocation_unit)
    smem_limit = gpu.shared_mem_per_block_optin + gpu.reserved_shared_mem_per_block
    if smem_alloc > smem_limit:
        raise InvalidLaunchError(
            f"{shared_mem_per_block} bytes of shared memory per block cannot launch {where}: allowed at most "
            f"{gpu.shared_mem_per_block_optin} bytes per block (opt-in limit)")
    limit_smem = gpu.shared_mem_per_sm // smem_alloc if smem_alloc else None

    limits = {"warps": limit_warps, "blocks": limit_blocks, "registers": limit_regs,
              "shared memory": limit_smem}
    active = min(v for v in limits.values() if v is not None)
    tied = tuple(f for f in FACTORS if limits[f] == active)
    active_warps = active * warps_per_block
    return Occupancy(
        active_blocks_per_sm=active,
        active_warps_per_sm=active_warps,
        occupancy=active_warps / gpu.max_warps_per_sm,
        limiting_factor=tied[0],
        limiting_factors=tied,
        warps_per_block=warps_per_block,
        blocks_limit_warps=limit_warps,
        blocks_limit_blocks=limit_blocks,
        blocks_limit_registers=limit_regs,
        blocks_limit_shared_memory=limit_smem,
        registers_per_block=regs_per_block,
        shared_mem_per_block=smem_alloc,
    )
