"""The whole-program view: each nest's share of the program's time, and what porting the recommended nests
does to the whole program (Amdahl's law), as Intel Advisor's offload report leads with.

Times are per program run.  A nest's CPU time per run is its measured total in a run (every execution of it),
or the static estimate times the executions per run (1 when unknown); its GPU time per run is the predicted
time of one execution times the same count.  The program's time is its measured CPU time (main and everything
before exit); with --no-run there is none, and the shares are of the nests' time only.

Amdahl's law (seed 004, section 5.3, applied to the whole program): new time = program - CPU time of the
ported nests + their GPU time.  Two figures: every ported nest copying its data in and out as `port` emits it,
and the data kept on the device between the ported nests (`_resident_gpu_s`).  Kept on the device, the ported
nests are taken in the order a run first reaches them (Program.run_order, not source order: matmul.c's
`main` fills A and B before it calls `matmul`): a copy-in is left out when earlier ported nests already put
that region on the device (copied it in or wrote it there), and each array goes back once, after the last
nest, as the union of what the nests wrote.  An array that a nest left on the CPU also touches keeps the
copies `port` emits.  Host code outside the nests is assumed not to touch the arrays in between.
With the data kept on the device, nests that lose on their own because of their copies (verdict
port-if-resident, or keep-on-cpu) may win: the set ported then is chosen greedily (`_resident_choice`: add the
nest that lowers the program's time most, while one does), starting from the recommended nests.
A nest priced at the sizes its run used (advisor.PricedSize) counts each size's executions with that size's
kernels and copies.
"""
from __future__ import annotations

import math

from dataclasses import field, replace

from .. import units
from .model import _CLASS_OF
from ..records import dataclass


@dataclass(frozen=True)
class NestShare:
    """One nest in the whole-program view: its verdict, its CPU and GPU time per program run, and its share."""
    name: str
    line: int
    verdict: str                   # the verdict class ("port", "keep-on-cpu", "not-portable", ...)
    cpu_s: float | None            # per program run
    gpu_s: float | None            # per program run, transfers included
    share: float | None            # of the program's time (or of the nests' time without a measured program)
    why: str                       # the verdict's reason, or why the nest is not ported
    no_time: str = ""              # why it has no CPU time, when it has none (the static estimate's note)


@dataclass(frozen=True)
class WholeProgram:
    """The whole-program view: each nest's share of the time, and the program's time with the recommended
    nests ported."""
    program_s: float | None        # measured CPU time of one program run; None: not measured
    nests_s: float                 # the nests' CPU time per run (those with a time)
    shares: list[NestShare] = field(default_factory=list)     # largest CPU time first
    ported: tuple[str, ...] = ()   # the recommended nests (verdict port)
    after_s: float | None = None   # the program's time with them ported, each copying its data
    resident_s: float | None = None  # the program's time with `resident` ported, the data kept on the device
    resident: tuple[str, ...] = ()   # the nests ported when the data stays on the device (_resident_choice)
    unmeasured: str = ""           # why the program's own time was not measured ("" when it was)
    context_s: float = 0.0         # creating the CUDA context: paid once by a run that uses the GPU (not in after_s)
    resident_copies: tuple[Copy, ...] = ()   # the copies of resident_s, in run order (copy-outs last)

    @property
    def base_s(self) -> float:
        return self.program_s if self.program_s is not None else self.nests_s

    def speedup(self, after: float | None) -> float | None:
        return self.base_s / after if after else None

    @property
    def untimed(self) -> list[NestShare]:
        """The nests without a CPU time when the program's own time is not measured: every figure leaves them
        out.  (With a measured program, their time is in the program's.)"""
        return [r for r in self.shares if not r.cpu_s] if self.program_s is None else []


def whole_program(program, advice, manager) -> WholeProgram | None:
    """The view of one file from its program, the advisor's advice per nest name and the pass manager's
    performance results; None when there is no advice (no GPU)."""
    if advice is None:
        return None
    program_s, rows, pieces, arrays, unmeasured = None, [], {}, {}, ""
    for nest in program.nests:
        adv = advice.get(nest.name)
        cpu = adv.cpu if adv is not None else None
        if cpu is not None and cpu.source != "measured" and not unmeasured:
            unmeasured = cpu.details.get("reason") or cpu.note or cpu.source
        v = adv.verdict if adv is not None else None
        if cpu is not None and cpu.program_median_s:
            program_s = cpu.program_median_s
        runs = (cpu.executions or 1) if cpu is not None else 1
        cpu_s = (cpu.total_median_s if cpu is not None and cpu.source == "measured" and cpu.total_median_s
                 else cpu.median_s * runs if cpu is not None and cpu.median_s else None)
        gpu_s = v.total_gpu_s * runs if v is not None else None
        cls = _CLASS_OF.get(v.verdict, "no-verdict") if v is not None else (
            "not-portable" if adv is None or not adv.ported else "no-verdict")
        why = v.reason if v is not None else (adv.refusal if adv is not None else "not analysed")
        no_time = "" if cpu_s else (cpu.note if cpu is not None else "not analysed")
        rows.append(NestShare(nest.name, nest.loc.line, cls, cpu_s, gpu_s, None, why, no_time))
        arrays[nest.name] = {a.array for s in nest.statements() for a in s.accesses}
        perf = manager.result("performance", nest)
        if v is not None and cpu_s and adv.at_sizes:
            pieces[nest.name] = [(p.perf.kernel_s(v.model) + p.perf.launch_overhead_s, p.size.executions,
                                  p.perf.transfers) for p in adv.at_sizes]
        elif v is not None and cpu_s and perf is not None:
            pieces[nest.name] = [(v.kernel_s + v.launch_s, runs, perf.transfers)]
    nests_s = sum(r.cpu_s for r in rows if r.cpu_s)
    base = program_s if program_s is not None else nests_s
    rows = [replace(r, share=r.cpu_s / base if r.cpu_s and base else None) for r in rows]
    rows.sort(key=lambda r: -(r.cpu_s or 0.0))
    ported = [r for r in rows if r.verdict == "port" and r.cpu_s and r.gpu_s is not None]
    after = resident_s = None
    resident: tuple[str, ...] = ()
    copies: list[Copy] = []
    if base and pieces:
        if ported:
            after = base - sum(r.cpu_s for r in ported) + sum(r.gpu_s for r in ported)
        rank = {n.name: k for k, n in enumerate(program.in_run_order(program.nests))}
        cpu_of = {r.name: r.cpu_s for r in rows}
        resident, resident_s, copies = _resident_choice([r.name for r in ported], sorted(pieces, key=rank.get), pieces,
                                                arrays, cpu_of, base, manager.options["gpu"].transfer_time_s)
    return WholeProgram(program_s, nests_s, rows, tuple(r.name for r in ported), after, resident_s, resident,
                        "" if program_s is not None else unmeasured or "no nest was measured",
                        manager.options["gpu"].context_creation_ms * 1e-3, tuple(copies))


def _resident_choice(start: list[str], candidates: list[str], pieces: dict, arrays: dict[str, set[str]],
                     cpu_of: dict, base: float, transfer_time_s) -> tuple[tuple[str, ...], float | None, list[Copy]]:
    """The nests to port when the data stays on the device, the program's time then and its copies: from
    `start` (the recommended nests), add the candidate (a nest with a prediction, in run order) that lowers the
    time most, while one does.  An array a nest left on the CPU touches keeps its copies (`_resident_gpu_s`)."""
    def time_of(chosen: set[str]) -> tuple[float, list[Copy]]:
        host = set().union(*(a for n, a in arrays.items() if n not in chosen))
        order = [(n, *piece) for n in candidates if n in chosen for piece in pieces[n]]
        gpu_s, copies = _resident_gpu_s(order, host, transfer_time_s)
        return base - math.fsum(cpu_of[n] for n in chosen) + gpu_s, copies     # (fsum: the same in any set order)

    chosen = set(start)
    best, copies = time_of(chosen) if chosen else (base, [])
    while True:
        trials = [(*time_of(chosen | {n}), n) for n in candidates if n not in chosen]
        better = min(trials, key=lambda t: t[0], default=None)
        if better is None or better[0] >= best * (1 - 1e-9):
            break
        best, copies, chosen = better[0], better[1], chosen | {better[2]}
    if not chosen:
        return (), None, []
    return tuple(n for n in candidates if n in chosen), best, copies


@dataclass(frozen=True)
class Copy:
    """One host-device copy of the program with the data kept on the device (per program run)."""
    array: str
    direction: str                 # "in" (before the nest) or "out" (after it)
    nest: str
    bytes: float                   # per copy
    seconds: float                 # per program run
    each_execution: bool           # at every execution of the nest: an array a nest left on the CPU touches, or
    #                                a region whose start is not known; else once per run


def _resident_gpu_s(ported, host_arrays: set[str], transfer_time_s) -> tuple[float, list[Copy]]:
    """The GPU time per program run of the ported nests, (name, kernel and launch seconds per execution,
    executions per run, transfers per execution) in run order, with the data kept on the device, and its copies:
    kernels and launches as predicted; a copy-in only when earlier nests did not put that byte range on the
    device; each array copied out once, after the last nest that writes it, the union of the ranges written.
    Arrays in `host_arrays` (touched by a nest left on the CPU) keep every copy, as does a range whose start is
    not known (never taken as on the device)."""
    held: dict[str, list[tuple[float, float]]] = {}       # per array, the byte ranges the device holds
    written: dict[str, list[tuple[float, float]]] = {}    # per array, the byte ranges written on the device
    last_writer: dict[str, str] = {}
    busy, copies = 0.0, []
    for name, busy_s, runs, transfers in ported:
        busy += busy_s * runs
        for t in transfers:
            span = (t.offset, t.offset + t.bytes) if t.offset is not None else None
            if t.array in host_arrays or span is None:
                copies.append(Copy(t.array, t.direction, name, t.bytes, t.seconds * runs, True))
            elif t.direction == "in":
                if not _covers(held.get(t.array, []), span):
                    copies.append(Copy(t.array, "in", name, t.bytes, t.seconds, False))
                    held.setdefault(t.array, []).append(span)
            else:
                held.setdefault(t.array, []).append(span)
                written.setdefault(t.array, []).append(span)
                last_writer[t.array] = name
    for array, spans in written.items():
        nbytes = _union_length(spans)
        copies.append(Copy(array, "out", last_writer[array], nbytes, transfer_time_s(nbytes), False))
    return busy + sum(c.seconds for c in copies), copies


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _covers(spans: list[tuple[float, float]], span: tuple[float, float]) -> bool:
    return any(lo <= span[0] and span[1] <= hi for lo, hi in _merged(spans))


def _union_length(spans: list[tuple[float, float]]) -> float:
    return sum(hi - lo for lo, hi in _merged(spans))


def program_json(view: WholeProgram) -> dict:
    """The view for --format json (the file's "whole_program")."""
    return {"program_s": view.program_s, "nests_s": view.nests_s, "base_s": view.base_s,
            "nests": [{"name": r.name, "line": r.line, "verdict": r.verdict, "cpu_s": r.cpu_s, "gpu_s": r.gpu_s,
                       "share": r.share, "why": r.why} for r in view.shares],
            "ported": list(view.ported), "after_s": view.after_s, "speedup": view.speedup(view.after_s),
            "resident_s": view.resident_s, "resident_speedup": view.speedup(view.resident_s),
            "resident": list(view.resident),
            "resident_copies": [{"array": c.array, "direction": c.direction, "nest": c.nest, "bytes": c.bytes,
                                 "seconds": c.seconds, "each_execution": c.each_execution}
                                for c in view.resident_copies],
            "context_s": view.context_s, "unmeasured": view.unmeasured or None}


def program_text(view: WholeProgram, gpu_key: str) -> str:
    """The terminal view, above the nests."""
    if view is None or not view.shares:
        return ""
    if not view.nests_s:
        return (f"whole program: cannot tell what porting would do: no nest has a CPU time "
                f"({view.unmeasured or 'none could be timed'})\n")
    untimed = view.untimed
    if view.program_s is not None:
        head = (f"whole program: {units.seconds(view.program_s)} of CPU time per run (measured), "
                f"{100 * view.nests_s / view.program_s:.0f}% of it in the loop nests below")
        if view.nests_s > view.program_s:
            head += " (a nest that runs inside another, through a call, counts in both)"
    elif not untimed:
        head = (f"whole program: the loop nests take {units.seconds(view.nests_s)} per run (static estimate: "
                f"{_short(view.unmeasured, 160)}; shares are of the nests' time)")
    else:
        # without a measured program, a nest without a time is missing from every figure below; one whose
        # verdict waits for sizes says which, else the first says why it has none
        sizes = next((r for r in untimed if r.verdict == "no-verdict"), None)
        example = f" ({sizes.name}: {_short(sizes.why, 120)})" if sizes is not None else \
            f" ({untimed[0].name}: {_short(untimed[0].no_time, 120)})" if untimed[0].no_time else ""
        head = (f"whole program: {len(view.shares) - len(untimed)} of the {len(view.shares)} loop nests take "
                f"{units.seconds(view.nests_s)} per run (static estimate: {_short(view.unmeasured, 160)}; shares "
                f"are of their time); {_the_others(len(untimed))} left out of every figure here{example}")
    lines = [head]
    width = max(len(r.name) for r in view.shares)
    for r in view.shares:
        share = f"{share_text(r.share):>6}"
        gpu = f" -> {units.seconds(r.gpu_s)} on the GPU" if r.gpu_s is not None else ""
        lines.append(f"  {r.name:<{width}}  {share}  {units.seconds(r.cpu_s):>9} on the CPU{gpu}  [{r.verdict}]")
    if view.after_s is not None:
        names = ", ".join(view.ported)
        whole = "the nests timed" if untimed else "the whole program"
        lines.append(f"  porting {names} on {gpu_key}: {units.seconds(view.base_s)} -> {units.seconds(view.after_s)} "
                     f"per run, {units.speedup(view.speedup(view.after_s))} for {whole} (Amdahl's law)")
    elif untimed:
        lines.append(f"  no nest timed is worth porting on its own (each copying its data); the {len(untimed)} "
                     "without a time may be")
    else:
        lines.append("  no nest is worth porting on its own (each copying its data)")
    if view.resident_s is not None:
        same = set(view.resident) == set(view.ported)
        which = "these nests" if same else ", ".join(view.resident)
        lines.append(f"  {'the same' if same else 'porting ' + which} with the data kept on the GPU between them "
                     f"(copied in only where the host's values are needed, out once after the last nest that "
                     f"writes them): "
                     f"{units.seconds(view.base_s)} -> {units.seconds(view.resident_s)} per run, "
                     f"{units.speedup(view.speedup(view.resident_s))}")
        lines.append("  " + copies_text(view.resident_copies))
        once = view.resident_s + view.context_s
        lines.append(f"  a program run that uses the GPU also creates the CUDA context once, "
                     f"{units.seconds(view.context_s)}: a single run takes {units.seconds(once)}, "
                     f"{units.speedup(view.speedup(once))} against {units.seconds(view.base_s)}")
    elif view.after_s is None and not untimed:
        lines[-1] += ": the whole program stays as fast as it is"
    keep = [r for r in view.shares if r.name not in view.resident and r.verdict != "port" and r.cpu_s][:3]
    if keep:
        lines.append("  not to port: " + "; ".join(f"{r.name} ({r.verdict}: {_short(r.why)})" for r in keep))
    return "\n".join(lines) + "\n"


def _the_others(n: int) -> str:
    return "the other one has no time and is" if n == 1 else f"the other {n} have no time and are"


def copies_text(copies, shown: int = 6) -> str:
    """Where the copies are with the data kept on the device: the largest first (the copy-ins before the nest
    that first needs the host's values, the copy-outs after the last nest that writes the array)."""
    if not copies:
        return "copies then: none"
    top = sorted(copies, key=lambda c: -c.seconds)
    words = [f"'{c.array}' {'in before' if c.direction == 'in' else 'out after'} {c.nest} "
             f"({units.byte_size(c.bytes)}{', every execution' if c.each_execution else ''})" for c in top[:shown]]
    more = f" and {len(top) - shown} more" if len(top) > shown else ""
    return "copies then: " + "; ".join(words) + more


def share_text(share: float | None) -> str:
    """A share of the program's time: `76.0%`, `<0.1%`, `–`."""
    if share is None:
        return "–"
    return "<0.1%" if 0 < share < 0.001 else f"{100 * share:.1f}%"


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
