"""The GPU catalog entry as the models' MachineParams.

Every MachineParams field is filled from the catalog (c2gpu/gpus/*.toml,
c2gpu.model.gpu.GPU); the comments say which catalog field feeds which seed symbol
("R" = seed 004, Resios; "G" = seed 000, GPUPerf).  Two fields are derived
and say so: G's departure delay and the transaction size.
"""
from __future__ import annotations

from functools import lru_cache

from ..model.gpu import GPU, INSTRUCTION_CLASSES
from ..model.inputs import InstClass, MachineParams


def transaction_bytes(gpu: GPU) -> int:
    """R's "size" of one global-memory transaction (eq. 4.8).

    Fermi (cc 2.x, the seed's GTX 460 and GPUPerf's C2050) caches global loads in L1 and moves
    whole 128-byte lines (spec.cache_line_bytes); every later architecture moves 32-byte sectors
    (spec.sector_bytes) between L2/DRAM and the SM.
    """
    return gpu.cache_line_bytes if gpu.cc[0] <= 2 else gpu.sector_bytes


def departure_delay_cycles(gpu: GPU) -> float:
    """G's Δ (eq. 13; Hong & Kim's Departure_delay): cycles between two transactions leaving one SM
    when it gets its share of the DRAM bandwidth: transaction bytes / (spec.dram_bandwidth_gbs /
    spec.core_clock_ghz / spec.sm_count).  With it, avg_DRAM_lat / Δ (the MWP bound of App. A) is the
    Little's-law number of requests in flight that saturates the SM's share of the bandwidth, the
    same quantity as MWP_peak_bw for coalesced requests.  (The seed's GTX 460 preset uses 2 cycles,
    the chip-wide time of one 128-byte transaction; per SM that would be 14.)"""
    return transaction_bytes(gpu) / gpu.mem_bytes_per_cycle_per_sm


@lru_cache(maxsize=64)
def machine_params(gpu: GPU) -> MachineParams:
    """MachineParams with every field taken (or derived, as documented) from the GPU description."""
    inst = {cls: InstClass(t.latency, t.throughput, t.warps_for_peak)       # R Table 3.1 rows:
            for cls, t in gpu.instructions.items() if cls in INSTRUCTION_CLASSES}  # [latency], [throughput],
                                                                                 # [warps_for_peak] = max_i
    return MachineParams(
        name=gpu.name,
        sm_count=gpu.sm_count,                          # spec.sm_count -> R n_SM, G #active SMs bound
        clock_ghz=gpu.core_clock_ghz,                   # spec.core_clock_ghz -> R clk
        warp_size=gpu.warp_size,                        # spec.warp_size -> R/G warp_size
        max_warps_per_sm=gpu.max_warps_per_sm,          # spec.max_warps_per_sm -> R res_w (max_w)
        max_blocks_per_sm=gpu.max_blocks_per_sm,        # spec.max_blocks_per_sm -> resident block limit
        inst=inst,
        default_class="fp32_fma",                       # G FP_lat: "latency of FP operations"
        simd_width=gpu.fp32_lanes_per_sm,               # spec.fp32_lanes_per_sm -> G SIMD_width (eq. 5):
                                                        #   lanes issuing warp instructions per cycle per SM
        sfu_width=gpu.sfu_per_sm,                       # spec.sfu_per_sm -> G SFU_width (eq. 9-10)
        avg_inst_lat_cycles=0.0,                        # G avg_inst_lat: mix-weighted from [latency]
        dram_latency_cycles=gpu.dram_latency_cycles,    # memory.dram_latency_cycles -> R latency (4.6), G DRAM_lat
        dram_bw_gbs=gpu.dram_bandwidth_gbs,             # spec.dram_bandwidth_gbs -> R BW (4.8), roofline
        transaction_bytes=transaction_bytes(gpu),       # spec.sector_bytes / cache_line_bytes -> R size (4.8)
        max_mem_parallelism=gpu.memory_max_parallelism,  # memory.memory_max_parallelism -> R max_p (4.6)
        departure_delay_cycles=departure_delay_cycles(gpu),  # derived -> G Δ (eq. 13)
        cache_hit_latency_cycles=gpu.l2_latency_cycles,  # memory.l2_latency_cycles -> G hit_lat (eq. 12)
        shared_latency_cycles=gpu.shared_mem_latency_cycles,  # memory.shared_mem_latency_cycles -> R (4.9: 36)
        shared_banks=gpu.shared_mem_banks,              # spec.shared_mem_banks -> R n_banks (4.9)
        shared_bank_bw_bytes_per_cycle=gpu.shared_mem_bandwidth_bytes_per_cycle,  # -> R BW of 4.9 (32)
        shared_max_parallelism=gpu.shared_mem_max_parallelism,  # -> R peak warps of 4.9 (8)
        sync_gamma=gpu.gpuperf_sync_gamma,              # memory.gpuperf_sync_gamma -> G Γ (eq. 8)
        launch_overhead_s=gpu.launch_sync_us * 1e-6,    # overhead.launch_sync_us -> R LAUNCH (4.3): the seed timed
                                                        #   one empty kernel, i.e. a launch + synchronize
        context_init_s=gpu.context_creation_ms * 1e-3,  # overhead.context_creation_ms -> R CUDA (4.3)
        pcie_peak_mbps=gpu.transfer_peak_mbs,           # host_link.transfer_peak_mbs -> R BW_peak (4.2)
        pcie_slope_mbps=gpu.transfer_slope_mbs_per_kib,  # host_link.transfer_slope_mbs_per_kib -> R BW_inc slope
        pcie_intercept_mbps=gpu.transfer_intercept_mbs,  # host_link.transfer_intercept_mbs -> R BW_inc intercept
        pcie_size_unit_bytes=1024,                      # eq. 4.2 size unit (KiB; see c2gpu.model.gpu.transfer_time_s)
        peak_gflops=gpu.peak_fp32_gflops,               # derived: 2 x fp32_lanes x SMs x clock (roofline)
        peak_gflops_fp64=gpu.peak_fp64_gflops,          # derived: 2 x fp64_lanes x SMs x clock (roofline)
    )
