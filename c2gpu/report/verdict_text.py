"""The terminal verdict: one compact table per nest, coloured when the terminal supports it."""
from __future__ import annotations

import os
import sys

from .. import units
from ..ir import line_of
from ..perf.categories import CATEGORIES
from .verdict import KEEP, PORT, RESIDENT

COLOURS = {PORT: "32", RESIDENT: "33", KEEP: "31"}   # green, yellow, red


def use_colour(stream=None) -> bool:
    stream = stream or sys.stdout
    return hasattr(stream, "isatty") and stream.isatty() and "NO_COLOR" not in os.environ \
        and os.environ.get("TERM") != "dumb"


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour and code else text


def loop_rows(loops, home: str = "") -> list[tuple[str, str]]:
    """One row per loop: its dependence verdict and what the port does with it (`home`: the nest's file; a loop
    inlined from another file is named with its file)."""
    rows = []
    width = max((len(lp.var) for lp in loops), default=0)
    lines = [line_of(lp.location, home) for lp in loops]
    lwidth = max((len(x) for x in lines), default=0)
    for lp, line in zip(loops, lines):
        status = {"parallel": "parallel", "reduction": lp.reason or "reduction",
                  "carried": lp.reason if lp.reason.startswith("carries") else
                  f"carries a dependence: {lp.reason}" if lp.reason else "carries a dependence",
                  "not-proven": f"not proven parallel: {lp.reason}" if lp.reason else "not proven parallel",
                  None: "not analysed"}.get(lp.status, lp.status)
        role = f" -> {lp.role}" if lp.role else ""
        var = "-" if lp.var.startswith("?") else lp.var       # a for with no loop variable (loop_words)
        rows.append(("loops" if not rows else "", f"{var:<{width}}  {line:<{max(lwidth, 9)}} {status}{role}"))
    return rows


def rewrite_rows(nest) -> list[tuple[str, str]]:
    """What c2gpu rewrote in the nest's C before the verdicts above (a wavefront, induction counters)."""
    return [("rewritten" if k == 0 else "", note) for k, note in enumerate(nest.rewrites)]


def nest_table(nest, advice, perf, loops=(), colour: bool = False, mapping: str = "", refusal: str = "") -> str:
    """The verdict of one nest, its times, and each loop's dependence verdict (`loops`: LoopReports).
    `advice` is None when no GPU was chosen; `mapping` names the kernels of a ported nest, `refusal` says why
    a nest is not ported."""
    head = f"{nest.name}  {nest.loc}"
    v = advice.verdict if advice is not None else None
    if v is None:
        ported = advice.ported if advice is not None else bool(mapping)
        if not ported:
            reason = advice.refusal if advice is not None else refusal or "not mapped"
            verdict = _paint("NOT PORTABLE", COLOURS[KEEP], colour) + f": {reason}"
        elif advice is None:
            verdict = _paint("NO VERDICT", "", colour) + ": no GPU chosen (--gpu none), so no time to compare"
        else:
            verdict = _paint("NO VERDICT", "", colour) + f": {advice.refusal}"
        rows = [("verdict", verdict)]
        if ported and mapping:
            rows.append(("port", mapping))
        rows += loop_rows(loops, nest.loc.file) + rewrite_rows(nest)
        return head + "\n" + "".join(f"  {k:<13} {val}\n" for k, val in rows)
    cpu = advice.cpu
    rows = [("verdict", _paint(v.verdict.upper(), COLOURS.get(v.verdict, ""), colour)
             + f": {v.reason}")]
    if advice.at_sizes:
        rows += sizes_rows(advice)
    elif cpu is not None and cpu.median_s is not None:
        rows.append(("CPU", f"{units.seconds(cpu.median_s)} per execution, {cpu_how(cpu)}"))
    else:
        rows.append(("CPU", f"unknown ({cpu.note if cpu else 'no baseline'})"))
    ctx = f" + CUDA context {units.seconds(v.context_s)}" if perf.include_context else \
        f" (creating the CUDA context, {units.seconds(v.context_s)} once per program, not included)"
    rows.append(("GPU", f"{units.seconds(v.total_gpu_s)} = kernels {units.seconds(v.kernel_s)} "
                        f"+ launches {units.seconds(v.launch_s)} + transfers {units.seconds(v.transfer_s)}{ctx}; "
                        f"model {v.model}"))
    rows += kernel_time_rows(perf, v.model, advice.at_sizes[0] if advice.at_sizes else None)
    if v.speedup is not None:
        ks = f", {units.speedup(v.kernel_speedup)} kernels only" if v.kernel_speedup is not None else ""
        rows.append(("speedup", f"{units.speedup(v.speedup)} end to end{ks}"))
    rows.append(("bottleneck", v.bottleneck))
    for be in v.break_even:
        rows.append(("break-even", be.sentence(perf.gpu.key)))
    if mapping:
        rows.append(("port", mapping))
    rows += loop_rows(loops, nest.loc.file) + rewrite_rows(nest)
    if v.recommendations:
        rows.append(("advice", v.recommendations[0]))
        for r in v.recommendations[1:]:
            rows.append(("", r))
    return head + "\n" + "".join(f"  {k:<13} {val}\n" for k, val in rows)


def sizes_rows(advice) -> list[tuple[str, str]]:
    """A nest priced at the sizes its measured run used (advisor._price_at_sizes): the CPU and GPU times
    averaged over a run's executions (the verdict's), then one row per size."""
    cpu, v = advice.cpu, advice.verdict
    runs = sum(p.size.executions for p in advice.at_sizes)
    rows = [("CPU", f"{units.seconds(v.cpu_s)} per execution on average over {units.significant(runs)} executions "
                    f"per run at {len(advice.at_sizes)} size{'s' if len(advice.at_sizes) > 1 else ''}, "
                    f"{cpu_how(cpu, per_run=False)}; the file does not show the sizes: the kernels port emits are "
                    "priced at each size the run used")]
    for k, p in enumerate(advice.at_sizes):
        rows.append(("sizes" if k == 0 else "",
                     f"{p.size.text()}: {units.significant(p.size.executions)} per run, CPU "
                     f"{units.seconds(p.cpu_s)} -> GPU {units.seconds(p.gpu_s)} per run"))
    return rows


def kernel_time_rows(perf, model: str, at=None) -> list[tuple[str, str]]:
    """One row per kernel: where its predicted time goes (seed 002's categories, c2gpu.perf.categories), the
    largest first; shares under 1% are left out.  `at`: the PricedSize `perf` is of (said in the row)."""
    rows = []
    for k in perf.kernels:
        tc = k.categories.get(model)
        if tc is None or tc.time_s <= 0:
            continue
        parts = sorted(((tc.share(c), c) for c in CATEGORIES if c in tc.per_launch_s), key=lambda x: -x[0])
        split = ", ".join(f"{CATEGORIES[c]} {share:.0%}" for share, c in parts if share >= 0.005)
        per = "per launch" if k.launches == 1 else f"per launch, {units.significant(k.launches)} launches"
        per += f" at {at.size.text()}" if at is not None else ""
        rows.append(("kernel time" if not rows else "", f"{k.name} {units.seconds(tc.time_s)} {per}: {split}"))
    return rows


def cpu_how(cpu, per_run: bool = True) -> str:
    """How the CPU time was obtained, in a few words (with the spread and executions per run, by default)."""
    if cpu.source != "measured":
        return cpu.note
    spread = (f", {units.seconds(cpu.min_s)} to {units.seconds(cpu.max_s)}"
              if per_run and cpu.min_s is not None and cpu.max_s is not None and cpu.max_s > cpu.min_s else "")
    per_run = f", {cpu.executions} executions per run" if per_run and cpu.executions and cpu.executions > 1 else ""
    how = (f"measured CPU time ({' '.join(cpu.compiler[:1])} {' '.join(cpu.flags[:1])}, median of {cpu.runs} runs"
           f"{spread}{per_run})")
    return f"{how}; {cpu.scaled}" if cpu.scaled else how

