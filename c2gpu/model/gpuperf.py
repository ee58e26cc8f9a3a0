"""GPUPerf (Sim, Dasgupta, Kim, Vuduc, PPoPP 2012): T_exec = T_comp + T_mem - T_overlap.

Equation numbers are the paper's (seed 000).  MWP/CWP are in its Appendix A,
which the seed excerpt only references; below they are Hong & Kim's (ISCA 2009)
definitions with GPUPerf's substitutions (AMAT for the fixed latency, ITILP in
the computation period, MLP in the memory period) -- a reconstruction, to be
checked against the paper's appendix when it is available:

    MWP           = min(avg_DRAM_lat / Δ, MWP_peak_bw, N)            (App. A)
    MWP_peak_bw   = BW / (BW_per_warp * #active SMs)
    BW_per_warp   = bytes per warp request / avg_DRAM_lat           (bytes/cycle)
    CWP           = min((mem_cycles + comp_cycles) / comp_cycles, N) (App. A)
    comp_cycles   = #insts * avg_inst_lat / ITILP                    (one warp)
    mem_cycles    = #mem_insts * AMAT / MLP                          (one warp)

and the three cases of Hong & Kim:
    MWP == CWP == N   not enough warps: neither cost is fully hidden
    CWP >  MWP        memory bound: computation hidden under memory
    MWP >= CWP        compute bound: memory hidden under computation
GPUPerf expresses the cases through MWP_cp (eq 15) and zeta (eq 17); the Hong &
Kim execution-time formulas are also evaluated and reported as T_hong_kim for
comparison.

All cycle quantities are per SM (the SMs run in parallel), cycles of the SM clock.

Interpretation choices:
* #insts (Table 2: "total insts per warp, excluding SFU insts") = non-SFU
  compute + global + shared memory instructions + syncs.  #FP insts = classes
  named fp32_* / fp64_* (SFU excluded).  #mem insts = global accesses.
* avg_inst_lat: MachineParams.avg_inst_lat_cycles when set (the paper's
  "approximated by the latency of FP operations"), else the count-weighted
  mean latency of the kernel's non-SFU compute classes ("precisely calculated
  by taking into account the instruction mix").  FP_lat = default class latency.
* O_CFdiv (eq 6) is a part of #insts, not an addition to it.  #insts is a warp's
  count (Table 2: "# of total insts. per warp", source Sec. 5.1, the hardware
  counters): a warp issues a guarded instruction when any of its lanes takes
  the path, so a diverged warp issues both paths -- what Sec. 4.1.1 means by
  modelling O_CFdiv "by counting all the instructions in both paths" [9].
  The paper's #insts thus holds them already.  c2gpu's counts are the
  same (the trace weights a guarded statement by the share of warps with an
  active lane; counts_from_trace walks both paths of a Branch), so the
  instructions a warp issues only because it diverged
  (KernelProfile.divergent_insts) are already in #insts.  Adding them again
  (eq 3 over #insts, plus O_CFdiv) would pay for them twice; so eq 3 is taken
  over the useful instructions (#insts - divergent: seed 001's slide 11:
  "Wparallel: Work executed in parallel (useful work)") and O_CFdiv over the divergent
  ones, both at eq 3's cost per instruction: T_comp (eq 2) is #insts' issue
  cost plus O_sync, O_SFU and O_bank, and O_CFdiv says how much of it
  divergence wastes.  CWP's comp_cycles and eq 8's memory ratio keep the whole
  #insts (what a warp issues).  O_bank: each extra conflict way replays the
  shared instruction (not in #insts), costed like an instruction.  The paper
  measures both with counters; these are the static equivalents.
* size_of_data in eq 19 is read as warp requests per SM, D / (rb * S) with
  D = dram bytes, rb = bytes per warp request, S = #active SMs.  With App. A's
  MWP_peak_bw = BW * avg_DRAM_lat / (rb * S) eq 19 becomes exactly D / BW: the
  bandwidth floor ("the minimum time to move all data from the DRAM").
* eq 12 is written miss*DRAM_lat + (1-miss)*hit_lat: identical to the printed
  miss*penalty + hit_lat when DRAM_lat = penalty + hit_lat, the full latency
  that MachineParams.dram_latency_cycles holds for both models.
* Ties CWP == MWP (< N) count as compute bound (zeta = 1, as eq 17's CWP <= MWP).
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Dict

from .inputs import KernelProfile, MachineParams, geometry
from .prediction import Prediction
from ..records import dataclass

NOT_ENOUGH_WARPS = "not_enough_warps"
MEMORY_BOUND = "memory_bound"
COMPUTE_BOUND = "compute_bound"


@dataclass(frozen=True)
class GPUPerfTerms:
    """Every intermediate of the model; times in cycles per SM."""
    case: str
    N: float                 # active warps per SM
    warps_per_sm: float      # #total warps / #active SMs
    insts: float             # #insts per warp
    mem_insts: float
    avg_inst_lat: float
    ITILP: float
    ITILP_max: float
    W_parallel: float
    F_sync: float
    O_sync: float
    F_SFU: float
    O_SFU: float
    O_CFdiv: float
    O_bank: float
    W_serial: float
    T_comp: float
    avg_trans_warp: float
    avg_DRAM_lat: float
    AMAT: float
    MWP_peak_bw: float
    MWP: float
    comp_cycles: float
    mem_cycles: float
    CWP: float
    MWP_cp: float
    ITMLP: float
    T_mem: float
    zeta: float
    F_overlap: float
    T_overlap: float
    T_exec: float
    T_fp: float
    T_mem_min: float
    B_itilp: float
    B_serial: float
    B_fp: float
    B_memlp: float
    T_hong_kim: float


def _is_sfu(cls: str) -> bool:
    return cls == "sfu" or cls.startswith("sfu_")


def classify(mwp: float, cwp: float, n: float) -> str:
    """Hong & Kim's three cases."""
    if math.isclose(mwp, n) and math.isclose(cwp, n):
        return NOT_ENOUGH_WARPS
    return MEMORY_BOUND if cwp > mwp else COMPUTE_BOUND


def terms(p: KernelProfile, m: MachineParams) -> GPUPerfTerms:
    p = p.with_trace_counts()
    g = geometry(p, m)
    N = float(g.resident_warps)
    wps = g.total_warps / g.active_sms                         # #total warps / #active SMs
    ws = m.warp_size

    # ---- instruction counts (Table 2), per warp
    sfu = sum(n for c, n in p.inst_counts.items() if _is_sfu(c))
    comp = {c: n for c, n in p.inst_counts.items() if not _is_sfu(c) and n > 0}
    mem_insts = sum(a.count for a in p.global_accesses)
    shared_insts = sum(a.count for a in p.shared_accesses)
    insts = sum(comp.values()) + mem_insts + shared_insts + p.syncs
    fp_insts = sum(n for c, n in comp.items() if c.startswith(("fp32_", "fp64_")))

    if m.avg_inst_lat_cycles > 0:
        avg_lat = m.avg_inst_lat_cycles
    elif comp:
        avg_lat = sum(m.inst_class(c).latency * n for c, n in comp.items()) / sum(comp.values())
    else:
        avg_lat = m.inst_class(m.default_class).latency
    fp_lat = m.inst_class(m.default_class).latency

    # ---- computation cost
    itilp_max = avg_lat / (ws / m.simd_width)                  # eq 5
    itilp = min(p.ilp * N, itilp_max)                          # eq 4
    per_inst = wps * avg_lat / itilp                           # cycles per instruction of every warp of the SM
    divergent = min(p.divergent_insts, insts)                  # a part of #insts (module doc: O_CFdiv)
    w_parallel = (insts - divergent) * per_inst                # eq 3, the useful instructions

    avg_trans = (sum(a.count * a.transactions for a in p.global_accesses) / mem_insts) if mem_insts else 1.0
    avg_dram_lat = m.dram_latency_cycles + (avg_trans - 1) * m.departure_delay_cycles   # eq 13
    f_sync = m.sync_gamma * avg_dram_lat * (mem_insts / insts if insts else 0.0)        # eq 8
    o_sync = p.syncs * wps * f_sync                                                     # eq 7
    f_sfu = min(max((sfu / insts if insts else 1.0) - m.sfu_width / m.simd_width, 0.0), 1.0)  # eq 10
    o_sfu = sfu * wps * (ws / m.sfu_width) * f_sfu                                      # eq 9
    o_cfdiv = divergent * per_inst                             # O_CFdiv: the rest of #insts' issue
    replays = sum(a.count * max(0.0, a.conflict_degree - 1) for a in p.shared_accesses)
    o_bank = replays * per_inst                                 # O_bank: replayed instructions
    w_serial = o_sync + o_sfu + o_cfdiv + o_bank                # eq 6
    t_comp = w_parallel + w_serial                              # eq 2

    # ---- memory cost
    # eq 12, AMAT = avg_DRAM_lat * miss_ratio + hit_lat, with DRAM_lat there the miss *penalty*;
    # our dram_latency_cycles is the full latency of a DRAM access (R's 500), i.e. penalty + hit_lat:
    amat = avg_dram_lat * p.miss_ratio + m.cache_hit_latency_cycles * (1.0 - p.miss_ratio)
    req_bytes = m.transaction_bytes * avg_trans                 # bytes one warp request moves
    bw_per_warp = req_bytes / avg_dram_lat                      # App. A, bytes/cycle
    mwp_peak_bw = m.bw_bytes_per_cycle / (bw_per_warp * g.active_sms)
    mwp = min(avg_dram_lat / m.departure_delay_cycles, mwp_peak_bw, N)
    comp_cycles = insts * avg_lat / itilp                       # App. A (one warp)
    mem_cycles = mem_insts * amat / p.mlp                       # App. A (one warp)
    cwp = min((mem_cycles + comp_cycles) / comp_cycles, N) if comp_cycles else N
    case = classify(mwp, cwp, N)
    if mem_insts == 0 and case != NOT_ENOUGH_WARPS:
        case = COMPUTE_BOUND
    mwp_cp = min(max(1.0, cwp - 1), mwp)                        # eq 15
    itmlp = min(p.mlp * mwp_cp, mwp_peak_bw)                    # eq 14
    t_mem = mem_insts * wps / itmlp * amat                      # eq 11

    zeta = 0.0 if cwp > mwp else 1.0                            # eq 17
    f_overlap = (N - zeta) / N
    t_overlap = min(t_comp * f_overlap, t_mem)                  # eq 16
    t_exec = t_comp + t_mem - t_overlap                         # eq 1

    # ---- ideal costs and benefits
    t_fp = fp_insts * wps * fp_lat / itilp                      # eq 18
    size_of_data = p.total_dram_bytes() / (req_bytes * g.active_sms)   # warp requests per SM
    t_mem_min = size_of_data * avg_dram_lat / mwp_peak_bw       # eq 19
    b_itilp = w_parallel - (insts - divergent) * wps * avg_lat / itilp_max   # eq 20 (its W_parallel's insts)
    b_serial = w_serial                                         # eq 21
    b_fp = t_comp - t_fp - b_itilp - b_serial                   # eq 22
    b_memlp = max(t_mem - t_mem_min, 0.0)                       # eq 23

    # ---- Hong & Kim 2009 execution cycles for the same case (comparison only)
    rep = wps / N                                               # #Rep per SM
    per_mem = comp_cycles / mem_insts if mem_insts else 0.0     # computation per memory period
    mem_l = amat if mem_insts else 0.0
    if case == NOT_ENOUGH_WARPS:
        hk = (mem_cycles + comp_cycles + per_mem * (mwp - 1)) * rep
    elif case == MEMORY_BOUND:
        hk = (mem_cycles * N / mwp + per_mem * (mwp - 1)) * rep
    else:
        hk = (mem_l + comp_cycles * N) * rep

    return GPUPerfTerms(case, N, wps, insts, mem_insts, avg_lat, itilp, itilp_max, w_parallel,
                        f_sync, o_sync, f_sfu, o_sfu, o_cfdiv, o_bank, w_serial, t_comp,
                        avg_trans, avg_dram_lat, amat, mwp_peak_bw, mwp, comp_cycles, mem_cycles,
                        cwp, mwp_cp, itmlp, t_mem, zeta, f_overlap, t_overlap, t_exec,
                        t_fp, t_mem_min, b_itilp, b_serial, b_fp, b_memlp, hk)


_TIMES = ("T_exec", "T_comp", "T_mem", "T_overlap", "W_parallel", "W_serial", "O_sync", "O_SFU",
          "O_CFdiv", "O_bank", "T_fp", "T_mem_min", "B_itilp", "B_serial", "B_fp", "B_memlp",
          "T_hong_kim")


class GPUPerfModel:
    name = "gpuperf"

    def predict(self, p: KernelProfile, m: MachineParams) -> Prediction:
        t = terms(p, m)
        clk = m.clock_hz
        d = {f.name: getattr(t, f.name) for f in fields(t)}     # (numbers and a string: asdict's deep copy is not needed)
        extras: Dict[str, object] = {k: (v / clk if k in _TIMES else v) for k, v in d.items()}
        extras["AMAT_cycles"] = extras.pop("AMAT")
        extras["avg_DRAM_lat_cycles"] = extras.pop("avg_DRAM_lat")
        extras["avg_inst_lat_cycles"] = extras.pop("avg_inst_lat")
        extras["comp_cycles"] = t.comp_cycles
        extras["mem_cycles"] = t.mem_cycles
        breakdown = {k: d[k] / clk for k in ("T_comp", "T_mem", "T_overlap", "W_parallel", "W_serial",
                                              "O_sync", "O_SFU", "O_CFdiv", "O_bank")}
        notes = [f"MWP/CWP case: {t.case}"]
        missing = sorted(c for c in p.with_trace_counts().inst_counts if c not in m.inst and not _is_sfu(c))
        if missing:
            notes.append(f"instruction classes not in machine table, costed as {m.default_class}: "
                         + ", ".join(missing))
        notes = tuple(notes)
        return Prediction(self.name, t.T_exec / clk, breakdown, 0.0, notes, extras)


def predict(p: KernelProfile, m: MachineParams) -> Prediction:
    return GPUPerfModel().predict(p, m)
