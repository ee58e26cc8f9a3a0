"""GPUPerf: hand-computed examples through every equation (cycles per SM, 1 GHz clock)."""

from dataclasses import replace

import pytest

from c2gpu.model import GlobalAccess, InstClass, KernelProfile, MachineParams, SharedAccess, predict
from c2gpu.model.gpuperf import COMPUTE_BOUND, MEMORY_BOUND, NOT_ENOUGH_WARPS, classify, terms

# A toy machine with round numbers: 2 SMs at 1 GHz, SIMD width = warp size (so
# ITILP_max = avg_inst_lat), DRAM 400 cycles, Δ = 10, 64 B/cycle, 128 B transactions.
M = MachineParams(
    name="toy", sm_count=2, clock_ghz=1.0, warp_size=32, max_warps_per_sm=48, max_blocks_per_sm=8,
    inst={"fp32_fma": InstClass(22, 32), "int_add": InstClass(15, 32)}, default_class="fp32_fma",
    simd_width=32, sfu_width=4, dram_latency_cycles=400, dram_bw_gbs=64.0, transaction_bytes=128,
    departure_delay_cycles=10, cache_hit_latency_cycles=100, sync_gamma=64)

approx = pytest.approx


def profile(**kw):
    # 16 blocks x 256 threads (8 warps), occupancy 16 warps/SM:
    # #total warps = 128, #active SMs = 2 -> 64 warps per SM, N = 16
    base = dict(grid_blocks=16, block_threads=256, active_warps_per_sm=16)
    base.update(kw)
    return KernelProfile(**base)


def test_memory_bound_case_every_equation():
    # 6 fma (lat 22) + 1 int add (lat 15) -> avg_inst_lat = (132 + 15)/7 = 21
    # global: a (2 loads, 1 transaction), c (1 store, 4 transactions)
    m = replace(M, dram_bw_gbs=16.0)                          # 16 B/cycle
    p = profile(inst_counts={"fp32_fma": 6, "int_add": 1}, ilp=2,
                global_accesses=(GlobalAccess("a", 2), GlobalAccess("c", 1, transactions=4, is_store=True)))
    t = terms(p, m)
    assert (t.N, t.warps_per_sm, t.insts, t.mem_insts) == (16, 64, 10, 3)   # #insts = 7 + 3
    assert t.avg_inst_lat == approx(21)
    assert t.ITILP_max == approx(21)             # eq 5: 21 / (32/32)
    assert t.ITILP == approx(21)                 # eq 4: min(2*16, 21)
    assert t.W_parallel == approx(640)           # eq 3: 10 * 64 * 21 / 21
    assert t.W_serial == 0 and t.T_comp == approx(640)   # eq 2, 6
    assert t.avg_trans_warp == approx(2)         # (2*1 + 1*4) / 3
    assert t.avg_DRAM_lat == approx(410)         # eq 13: 400 + (2-1)*10
    assert t.AMAT == approx(410)                 # eq 12, miss ratio 1
    # App. A: BW_per_warp = 256 B / 410; MWP_peak_bw = 16 / (256/410 * 2) = 12.8125
    assert t.MWP_peak_bw == approx(12.8125)
    assert t.MWP == approx(12.8125)              # min(410/10 = 41, 12.8125, 16)
    assert t.comp_cycles == approx(10)           # 10 * 21 / 21
    assert t.mem_cycles == approx(1230)          # 3 * 410 / MLP 1
    assert t.CWP == approx(16)                   # min(1240/10 = 124, N)
    assert t.case == MEMORY_BOUND                # CWP 16 > MWP 12.8
    assert t.MWP_cp == approx(12.8125)           # eq 15: min(max(1, 15), 12.8125)
    assert t.ITMLP == approx(12.8125)            # eq 14: min(1 * 12.8125, 12.8125)
    assert t.T_mem == approx(6144)               # eq 11: 3 * 64 / 12.8125 * 410
    assert (t.zeta, t.F_overlap) == (0.0, 1.0)   # eq 17: CWP > MWP
    assert t.T_overlap == approx(640)            # eq 16: min(640 * 1, 6144)
    assert t.T_exec == approx(6144)              # eq 1: 640 + 6144 - 640
    assert t.T_fp == approx(6 * 64 * 22 / 21)    # eq 18: 402.29
    # eq 19: size_of_data = 4096 threads * 12 B / (256 B * 2 SMs) = 96 requests per SM;
    # 96 * 410 / 12.8125 = 3072 = 49152 B / 16 B/cycle
    assert t.T_mem_min == approx(3072)
    assert t.B_itilp == approx(0)                # eq 20: ITILP already at max
    assert t.B_serial == 0                       # eq 21
    assert t.B_fp == approx(640 - 6 * 64 * 22 / 21)   # eq 22: 237.71
    assert t.B_memlp == approx(3072)             # eq 23: 6144 - 3072
    # Hong & Kim, CWP >= MWP: (mem * N/MWP + comp/#mem * (MWP-1)) * #Rep, #Rep = 64/16
    assert t.T_hong_kim == approx((1230 * 16 / 12.8125 + 10 / 3 * 11.8125) * 4)   # 6301.5
    pred = predict("gpuperf", p, m)
    assert pred.time_s == approx(6144e-9)
    assert pred.extras["MWP"] == approx(12.8125) and pred.extras["case"] == MEMORY_BOUND
    assert pred.breakdown["T_mem"] == approx(6144e-9) and pred.extras["AMAT_cycles"] == approx(410)


def test_compute_bound_case():
    # 54 fma + 9 add -> avg lat (1188 + 135)/63 = 21; one coalesced load; #insts = 64
    p = profile(inst_counts={"fp32_fma": 54, "int_add": 9}, ilp=2, global_accesses=(GlobalAccess("a"),))
    t = terms(p, M)
    assert t.insts == 64 and t.avg_inst_lat == approx(21)
    assert t.W_parallel == approx(4096)          # 64 * 64 * 21/21
    assert t.MWP_peak_bw == approx(100)          # 64 * 400 / (128 * 2)
    assert t.MWP == approx(16)                   # min(40, 100, 16)
    assert t.comp_cycles == approx(64) and t.mem_cycles == approx(400)
    assert t.CWP == approx(7.25)                 # (400 + 64) / 64
    assert t.case == COMPUTE_BOUND               # MWP 16 > CWP 7.25
    assert t.MWP_cp == approx(6.25)              # min(max(1, 6.25), 16)
    assert t.ITMLP == approx(6.25)
    assert t.T_mem == approx(4096)               # 1 * 64 / 6.25 * 400
    assert t.zeta == 1 and t.F_overlap == approx(15 / 16)
    assert t.T_overlap == approx(3840)           # min(4096 * 15/16, 4096)
    assert t.T_exec == approx(4352)              # 4096 + 4096 - 3840
    assert t.T_hong_kim == approx((400 + 64 * 16) * 4)   # (Mem_L + comp * N) * #Rep = 5696
    assert t.T_fp == approx(54 * 64 * 22 / 21)   # 3620.57
    assert t.B_fp == approx(4096 - 54 * 64 * 22 / 21)
    assert t.T_mem_min == approx(16384 / 64)     # 4096 threads * 4 B / 64 B/cycle = 256
    assert t.B_memlp == approx(4096 - 256)


def test_not_enough_warps_case():
    # 2 blocks of 2 warps on 2 SMs: N = 2, 2 warps per SM, ILP 1
    p = KernelProfile(grid_blocks=2, block_threads=64, inst_counts={"fp32_fma": 6, "int_add": 1},
                      global_accesses=(GlobalAccess("a", 2), GlobalAccess("c", 1, transactions=4, is_store=True)))
    t = terms(p, M)
    assert (t.N, t.warps_per_sm) == (2, 2)
    assert t.ITILP == approx(2)                  # min(1 * 2, 21)
    assert t.W_parallel == approx(210)           # 10 * 2 * 21 / 2
    assert t.MWP == approx(2)                    # min(41, 51.25, 2)
    assert t.comp_cycles == approx(105)          # 10 * 21 / 2
    assert t.CWP == approx(2)                    # min((1230 + 105)/105, 2)
    assert t.case == NOT_ENOUGH_WARPS
    assert t.MWP_cp == approx(1) and t.ITMLP == approx(1)
    assert t.T_mem == approx(2460)               # 3 * 2 / 1 * 410
    assert t.F_overlap == approx(0.5)            # (2 - 1) / 2
    assert t.T_overlap == approx(105)            # min(210 * 0.5, 2460)
    assert t.T_exec == approx(2565)              # 210 + 2460 - 105
    assert t.T_hong_kim == approx(1230 + 105 + 105 / 3)   # #Rep = 1
    # low ILP*N: eq 20's ITILP benefit is 210 - 10*2*21/21 = 190
    assert t.B_itilp == approx(190)
    # eq 18 uses the *current* ITILP, so T_fp = 6*2*22/2 = 132 exceeds the compute
    # time left at ITILP_max (20): eq 22 gives a negative B_fp = 210 - 132 - 190 = -112
    assert t.T_fp == approx(132)
    assert t.B_fp == approx(-112)


def test_serialization_overheads_and_benefits():
    # 48 fma + 8 add (avg 21), 1 load, 5 shared ops with 3-way conflicts, 2 syncs,
    # 16 SFU ops; 4 of the 64 instructions issued only because the warp diverged.  #insts = 56 + 1 + 5 + 2 = 64
    p = profile(inst_counts={"fp32_fma": 48, "int_add": 8, "sfu": 16}, ilp=2,
                global_accesses=(GlobalAccess("a"),), shared_accesses=(SharedAccess("s", 5, conflict_degree=3),),
                syncs=2, divergent_insts=4)
    t = terms(p, M)
    assert t.insts == 64 and t.avg_inst_lat == approx(21)
    assert t.W_parallel == approx(3840)          # eq 3 over the useful instructions: (64 - 4) * 64 * 21/21
    assert t.F_sync == approx(400)               # eq 8: 64 * 400 * (1/64)
    assert t.O_sync == approx(51200)             # eq 7: 2 * 64 * 400
    assert t.F_SFU == approx(0.125)              # eq 10: 16/64 - 4/32
    assert t.O_SFU == approx(1024)               # eq 9: 16 * 64 * (32/4) * 0.125
    assert t.O_CFdiv == approx(256)              # the 4 divergent insts * 64 * 21/21: a part of #insts' issue
    assert t.O_bank == approx(640)               # 5 * (3-1) replays * 64
    assert t.W_serial == approx(53120)           # eq 6
    assert t.T_comp == approx(56960)             # eq 2: 64 insts issued (4096) + O_sync + O_SFU + O_bank
    assert t.W_parallel + t.O_CFdiv == approx(64 * 64)   # the divergent instructions paid once
    assert t.case == COMPUTE_BOUND and t.T_mem == approx(4096)
    assert t.T_overlap == approx(4096)           # min(56960 * 15/16, 4096)
    assert t.T_exec == approx(56960)
    assert t.B_serial == approx(53120)           # eq 21
    assert t.B_itilp == approx(0)
    assert t.T_fp == approx(48 * 64 * 22 / 21)   # 3218.29
    assert t.B_fp == approx(56960 - 48 * 64 * 22 / 21 - 53120)   # 621.71
    assert t.B_memlp == approx(4096 - 256)
    # SFU hidden when its share is below SFU_width/SIMD_width = 1/8
    assert terms(replace(p, inst_counts={"fp32_fma": 48, "int_add": 8, "sfu": 8}), M).O_SFU == 0


def test_cache_hits_lower_amat():
    # eq 12 with miss ratio 0.25: 0.25 * 400 + 0.75 * 100 = 175
    p = profile(inst_counts={"fp32_fma": 7}, global_accesses=(GlobalAccess("a"),), miss_ratio=0.25)
    assert terms(p, M).AMAT == approx(175)


def test_no_memory_is_compute_bound_without_memory_time():
    t = terms(profile(inst_counts={"fp32_fma": 10}), M)
    assert t.case == COMPUTE_BOUND and t.T_mem == 0 and t.T_exec == approx(t.T_comp)
    assert t.ITILP == approx(16)                  # min(1 * 16, ITILP_max = 22)
    assert t.T_comp == approx(880)                # 10 * 64 * 22 / 16
    assert t.B_itilp == approx(880 - 640)         # eq 20: minus 10 * 64 * 22 / 22


def test_classify():
    assert classify(8, 8, 8) == NOT_ENOUGH_WARPS
    assert classify(4, 6, 8) == MEMORY_BOUND
    assert classify(6, 4, 8) == COMPUTE_BOUND
    assert classify(5, 5, 8) == COMPUTE_BOUND     # tie: eq 17's CWP <= MWP side


def test_counts_from_trace_feed_gpuperf():
    from c2gpu.model import Branch, Compute, GlobalMem, Loop, SharedMem
    from c2gpu.model.inputs import counts_from_trace
    trace = (Loop((GlobalMem("a"), Compute("fp32_fma", 3),
                   Branch((Compute("int_add"),), (SharedMem("s", conflict_degree=2),))), 10),
             GlobalMem("c", transactions=4, is_store=True))
    inst, g, s = counts_from_trace(trace)
    assert inst == {"fp32_fma": 30, "int_add": 10}        # loop x 10, both branch paths
    assert [(a.id, a.count, a.transactions, a.is_store) for a in g] == [("a", 10, 1, False), ("c", 1, 4, True)]
    assert [(a.id, a.count, a.conflict_degree) for a in s] == [("s", 10, 2)]
    only_trace = profile(trace=trace)
    explicit = KernelProfile.from_trace(trace, 16, 256, active_warps_per_sm=16)
    assert terms(only_trace, M) == terms(explicit, M)
    assert terms(explicit, M).insts == 30 + 10 + 11 + 10     # compute + global + shared
