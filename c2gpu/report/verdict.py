"""The porting verdict: end-to-end speedup over the measured CPU time, and the size at which porting pays off.

Seed 004, section 5.3: speedup = sequential time / (overhead + parallel time), with the overhead being
the host-device transfers, the kernel launches (every launch of a time loop) and, when asked, the CUDA
context creation.  Verdicts:
- "port": the end-to-end speedup is above 1;
- "port only if the data stays on the GPU": the kernels alone beat the CPU but the transfers eat it;
- "keep on the CPU": even the kernels alone are slower than the CPU.
"""
from __future__ import annotations

from dataclasses import field
from typing import Callable

from .. import units
from ..records import dataclass

PORT = "port"
RESIDENT = "port only if the data stays on the GPU"
KEEP = "keep on the CPU"
UNKNOWN = "cannot tell"


@dataclass
class BreakEven:
    """The smallest value of a size parameter at which a nest reaches a target speedup (1x: break-even),
    with the range searched and the sizes around the answer."""
    param: str
    target: float                 # the speedup asked for (1.0: break-even)
    value: int | None             # smallest size reaching it, None when none in the range searched
    searched: tuple[int, int]
    below: tuple[int, float] | None = None   # (size, speedup) just below the answer: evidence
    at: tuple[int, float] | None = None      # (size, speedup) at the answer
    evaluations: int = 0

    def sentence(self, gpu: str) -> str:
        goal = "worth porting" if self.target == 1.0 else f"{units.speedup(self.target)} faster on the GPU"
        if self.value is None:
            return f"not {goal} on {gpu} for any {self.param} in {self.searched[0]:,}..{self.searched[1]:,}"
        return f"{goal} when {self.param} >= {self.value:,} on {gpu}"


@dataclass
class Verdict:
    """The porting verdict for one nest on one GPU by one model: the CPU and GPU times it rests on, the
    speedups, and why."""
    nest: str
    gpu: str
    model: str
    cpu_s: float | None
    cpu_source: str               # "measured" or "static estimate"
    cpu_note: str
    transfer_s: float
    launch_s: float
    kernel_s: float
    context_s: float              # included in total_gpu_s only when asked
    total_gpu_s: float
    verdict: str
    reason: str
    bottleneck: str
    speedup: float | None = None          # end to end
    kernel_speedup: float | None = None   # kernels only (data already on the GPU)
    recommendations: list[str] = field(default_factory=list)
    break_even: list[BreakEven] = field(default_factory=list)


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.0f}%" if whole > 0 else "0%"


def decide(nest: str, gpu: str, model: str, cpu_s: float | None, cpu_source: str, cpu_note: str,
           transfer_s: float, launch_s: float, kernel_s: float, context_s: float, include_context: bool,
           memory_bound: bool | None = None) -> Verdict:
    total = transfer_s + launch_s + kernel_s + (context_s if include_context else 0.0)
    parts = {"host-device transfers": transfer_s, "kernel launches": launch_s, "kernel execution": kernel_s}
    if include_context:
        parts["CUDA context creation"] = context_s
    bottleneck = max(parts, key=parts.get)
    if bottleneck == "kernel execution" and memory_bound is not None:
        bottleneck = "kernel execution (memory bound)" if memory_bound else "kernel execution (compute bound)"
    v = Verdict(nest, gpu, model, cpu_s, cpu_source, cpu_note, transfer_s, launch_s, kernel_s, context_s, total,
                UNKNOWN, "", bottleneck)
    if cpu_s is not None and cpu_s <= 0 < total and cpu_source == "measured":
        # the nest ran, too briefly for the clock (its reads, taken off, are most of a few-nanosecond nest):
        # whatever its time, the GPU's microseconds are more
        v.verdict = KEEP
        v.reason = (f"the nest runs too briefly on the CPU for the clock to time it (under the cost of reading the "
                    f"clock), against {units.seconds(total)} on the GPU ({bottleneck} is the largest part)")
        return v
    if cpu_s is None or cpu_s <= 0 or total <= 0:
        v.reason = "no CPU time to compare with" if cpu_s is None else "no time to compare"
        return v
    v.speedup = cpu_s / total
    v.kernel_speedup = cpu_s / (kernel_s + launch_s) if kernel_s + launch_s > 0 else None
    fixed = kernel_s + launch_s + (context_s if include_context else 0.0)
    if v.speedup > 1.0:
        v.verdict = PORT
        v.reason = (f"the GPU takes {units.seconds(total)} in all against {units.seconds(cpu_s)} on the CPU "
                    f"({units.speedup(v.speedup)} faster end to end; {bottleneck} is the largest part)")
    elif include_context and v.kernel_speedup is not None and v.kernel_speedup > 1.0 and fixed >= cpu_s:
        v.verdict = KEEP
        v.reason = (f"creating the CUDA context ({units.seconds(context_s)}) costs more than the whole CPU time "
                    f"({units.seconds(cpu_s)}); in a program that already uses the GPU the kernels would be "
                    f"{units.speedup(v.kernel_speedup)} faster")
    elif v.kernel_speedup is not None and v.kernel_speedup > 1.0:
        v.verdict = RESIDENT
        v.reason = (f"the kernels take {units.seconds(kernel_s + launch_s)} against {units.seconds(cpu_s)} "
                    f"on the CPU, but moving the data costs {units.seconds(transfer_s)} "
                    f"({_pct(transfer_s, total)} of the GPU time)")
    else:
        v.verdict = KEEP
        v.reason = (f"even without transfers the GPU needs {units.seconds(kernel_s + launch_s)} against "
                    f"{units.seconds(cpu_s)} on the CPU ({bottleneck} is the largest part)")
    return v


def kernel_bound(kernel) -> str:
    """"memory" or "compute": the one classification every report uses.  GPUPerf's terms when it predicted
    the kernel (seed 000: the memory cycles against the computation cycles of a warp, as its MWP/CWP case
    says), else the roofline's limiter (the DRAM traffic against the flops, both at peak rates)."""
    p = kernel.predictions.get("gpuperf")
    extras = p.extras if p is not None else {}
    if "mem_cycles" in extras and "comp_cycles" in extras:
        return "memory" if extras["mem_cycles"] >= extras["comp_cycles"] else "compute"
    return kernel.roofline.limiter


def find_break_even(evaluate: Callable[[int], tuple[float, float] | None], param: str, current: int,
                    target: float = 1.0, lo: int = 2, hi: int = 1 << 16, budget: int = 24) -> BreakEven:
    """Smallest size with speedup >= target, assuming the speedup grows with the size.

    evaluate(size) -> (gpu seconds, cpu seconds) or None when the model cannot be evaluated there.
    A geometric scan brackets the answer, then bisection narrows it; every answer is backed by the
    evaluations on both sides of it (`below` and `at`).
    """
    count = 0
    cache: dict[int, float | None] = {}

    def speedup(n: int) -> float | None:
        nonlocal count
        if n not in cache:
            count += 1
            r = evaluate(n)
            cache[n] = None if r is None or r[0] <= 0 else r[1] / r[0]
        return cache[n]

    points = sorted({lo, *[1 << k for k in range(1, 17) if lo <= 1 << k <= hi], hi, max(lo, min(hi, current))})
    prev_ok_below = None
    bracket = None
    for n in points:
        if count >= budget:
            break
        s = speedup(n)
        if s is None:
            continue
        if s >= target:
            bracket = (prev_ok_below, n)
            break
        prev_ok_below = n
    if bracket is None:
        return BreakEven(param, target, None, (lo, hi), evaluations=count)
    a, b = bracket
    if a is None:
        return BreakEven(param, target, b, (lo, hi), None, (b, cache[b]), count)
    while b - a > 1 and count < budget + 20:
        mid = (a + b) // 2
        s = speedup(mid)
        if s is None:
            break
        if s >= target:
            b = mid
        else:
            a = mid
    return BreakEven(param, target, b, (lo, hi), (a, cache[a]), (b, cache[b]), count)
