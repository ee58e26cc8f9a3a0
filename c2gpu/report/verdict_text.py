"""The terminal verdict: one compact table per nest, coloured when the terminal supports it."""
from __future__ import annotations

import os
import sys

from .. import units
from ..verdict import KEEP, PORT, RESIDENT

COLOURS = {PORT: "32", RESIDENT: "33", KEEP: "31"}   # green, yellow, red


def use_colour(stream=None) -> bool:
    stream = stream or sys.stdout
    return hasattr(stream, "isatty") and stream.isatty() and "NO_COLOR" not in os.environ \
        and os.environ.get("TERM") != "dumb"


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour and code else text


def nest_table(nest, advice, perf, colour: bool = False) -> str:
    head = f"{nest.name}  {nest.loc}"
    v = advice.verdict if advice is not None else None
    if v is None:
        reason = advice.refusal if advice is not None else "not analysed"
        return f"{head}\n  verdict       {_paint('NOT PORTED', COLOURS[KEEP], colour)}: {reason}\n"
    cpu = advice.cpu
    rows = [("verdict", _paint(v.verdict.upper(), COLOURS.get(v.verdict, ""), colour)
             + f": {v.reason}")]
    if cpu is not None and cpu.median_s is not None:
        how = (f"measured ({' '.join(cpu.compiler[:1])} {' '.join(cpu.flags[:1])}, median of {cpu.runs} runs"
               f"{', ' + str(cpu.executions) + ' executions per run' if cpu.executions and cpu.executions > 1 else ''})"
               if cpu.source == "measured" else f"static estimate ({cpu.note})")
        rows.append(("CPU", f"{units.seconds(cpu.median_s)} per execution, {how}"))
    else:
        rows.append(("CPU", f"unknown ({cpu.note if cpu else 'no baseline'})"))
    ctx = f" + context {units.seconds(v.context_s)}" if perf.include_context else \
        f" (context creation {units.seconds(v.context_s)} not included)"
    rows.append(("GPU", f"{units.seconds(v.total_gpu_s)} on {perf.gpu.name} = kernels {units.seconds(v.kernel_s)} "
                        f"+ launches {units.seconds(v.launch_s)} + transfers {units.seconds(v.transfer_s)}{ctx}; "
                        f"model {v.model}"))
    if v.speedup is not None:
        ks = f", {units.speedup(v.kernel_speedup)} kernels only" if v.kernel_speedup is not None else ""
        rows.append(("speedup", f"{units.speedup(v.speedup)} end to end{ks}"))
    rows.append(("bottleneck", v.bottleneck))
    for be in v.break_even:
        rows.append(("break-even", be.sentence(perf.gpu.key)))
    if v.recommendations:
        rows.append(("advice", v.recommendations[0]))
        for r in v.recommendations[1:]:
            rows.append(("", r))
    return head + "\n" + "".join(f"  {k:<13} {val}\n" for k, val in rows)
