"""Roofline lower bound (Williams, Waterman & Patterson 2009) as a sanity check.

A kernel cannot finish before its DRAM traffic has crossed the memory bus nor
before its flops have gone through the arithmetic units:

    T >= max(DRAM bytes / DRAM bandwidth, fp32 flops / fp32 peak + fp64 flops / fp64 peak)

fp32 and fp64 are added because on the GPUs we model they share issue slots;
when the machine has no fp64 peak the fp32 one is used, which keeps the bound
a lower bound (optimistic).
"""

from __future__ import annotations


from .inputs import KernelProfile, MachineParams
from .prediction import Prediction
from ..records import dataclass


@dataclass(frozen=True)
class Roofline:
    """The roofline lower bound of a kernel's time: the memory and compute times and which of them limits it."""
    memory_s: float       # DRAM bytes / bandwidth
    compute_s: float      # flops / peak flops
    bound_s: float        # max of the two
    limiter: str          # "memory" or "compute"
    intensity: float      # flops per DRAM byte (inf when no traffic)


def roofline(p: KernelProfile, m: MachineParams) -> Roofline:
    p = p.with_trace_counts()
    dram = p.total_dram_bytes()
    f32, f64 = p.total_flops()
    mem_s = dram / (m.dram_bw_gbs * 1e9)
    comp_s = 0.0
    if f32:
        comp_s += f32 / m.peak_flops
    if f64:
        comp_s += f64 / m.peak_flops_fp64
    intensity = (f32 + f64) / dram if dram else float("inf")
    limiter = "memory" if mem_s >= comp_s else "compute"
    return Roofline(mem_s, comp_s, max(mem_s, comp_s), limiter, intensity)


@dataclass(frozen=True)
class RooflineCheck:
    """Whether a prediction respects the roofline bound, with the ratio and a message."""
    ok: bool              # prediction >= bound (within rel_tol)
    ratio: float          # predicted / bound (inf when the bound is 0)
    bound: Roofline
    message: str


def check(pred: Prediction, p: KernelProfile, m: MachineParams, rel_tol: float = 1e-9) -> RooflineCheck:
    """Is the predicted kernel time (overheads excluded) at least the roofline bound?"""
    b = roofline(p, m)
    ratio = pred.time_s / b.bound_s if b.bound_s > 0 else float("inf")
    ok = pred.time_s >= b.bound_s * (1 - rel_tol)
    msg = (f"{pred.model}: {pred.time_s:.3e} s is {ratio:.2f}x the {b.limiter} roofline bound "
           f"{b.bound_s:.3e} s" + ("" if ok else " -- below the bound, prediction is too optimistic"))
    return RooflineCheck(ok, ratio, b, msg)
