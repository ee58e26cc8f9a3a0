"""The advisor: for every nest of a file, the verdict, the break-even size and recommendations.

Builds on the pipeline's `performance` results (c2gpu.perf) and the CPU baseline (c2gpu.cpu): the CPU
time is measured once per file (one build); the break-even size re-analyses the nest at other sizes
(the model is fast) and scales the measured CPU time by the static CPU estimate's growth.
"""
from __future__ import annotations

import re
from dataclasses import field, replace
from pathlib import Path

from ..codegen import build_nest_code
from ..cpu import CpuTiming, cpu_baseline, measure_file, static_estimate
from ..frontend import PreprocessOptions, load_program
from ..ir import Nest, Program
from ..perf.predict import predict_nest
from ..perf.profile import PerfError
from .. import units
from .verdict import BreakEven, Verdict, decide, find_break_even, kernel_bound
from ..records import dataclass

_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\s+\(?\s*(\d+)\s*\)?\s*$", re.M)


@dataclass
class AdvisorOptions:
    """The advisor's settings: how to measure the CPU baseline, and whether and for which speedups to
    search for the break-even size."""
    run_cpu: bool = True
    cc: str = "cc"
    cflags: tuple[str, ...] = ("-O2",)
    repeats: int = 3
    timeout: float = 60.0
    extra_sources: tuple[str, ...] = ()      # the program's other C files, linked into the timed build
    break_even: bool = True
    break_even_param: str | None = None
    targets: tuple[float, ...] = (1.0,)
    cache_dir: str | None = None


@dataclass
class NestAdvice:
    """What the advisor says about one nest: its verdict and CPU time and recommendations, or why it has no
    verdict."""
    nest: str
    verdict: Verdict | None
    cpu: CpuTiming | None
    refusal: str = ""              # why the nest is not ported, or why it has no verdict
    recommendations: list[str] = field(default_factory=list)
    ported: bool = False           # `port` emits the nest (it has a plan), with or without a verdict
    needs: tuple[str, ...] = ()    # the symbolic sizes the prediction needs values of (no verdict then)
    at_sizes: tuple["PricedSize", ...] = ()   # the plan priced at each size the program ran it (see _price_at_sizes)


@dataclass(frozen=True)
class PricedSize:
    """The plan `port` emits for a nest whose sizes only the program knows, priced at one tuple of sizes the
    measured run entered it with: the executions per run and their CPU time (measured) and GPU time (predicted)."""
    size: object                   # cpu.AtSize
    perf: object                   # perf.predict.NestPerformance at that size
    cpu_s: float                   # per run
    gpu_s: float                   # per run: kernels, launches and transfers of each execution


def size_candidates(path: str, options: PreprocessOptions, source: str | None = None) -> list[tuple[str, int]]:
    """Integer sizes the user can change: -D values given on the command line, then the file's #defines."""
    out: list[tuple[str, int]] = []
    for name, value in options.defines:
        try:
            out.append((name, int(value, 0)))
        except ValueError:
            continue
    text = source if source is not None else Path(path).read_text(errors="replace")
    for m in _DEFINE.finditer(text):
        if m.group(1) not in {n for n, _ in out}:
            out.append((m.group(1), int(m.group(2))))
    return out


class SizeProbe:
    """Analyses of the same file at other values of one size macro, memoized per value."""

    def __init__(self, path: str, options: PreprocessOptions, make_manager, param: str, source: str | None = None):
        self.path, self.options, self.make_manager, self.param, self.source = path, options, make_manager, param, source
        self.memo: dict[int, tuple[Program, object] | None] = {}

    def at(self, value: int):
        if value not in self.memo:
            defines = tuple((n, v) for n, v in self.options.defines if n != self.param) + ((self.param, str(value)),)
            try:
                prog = load_program(self.path, replace(self.options, defines=defines), source=self.source)
                manager = self.make_manager()
                self.memo[value] = (manager.run(prog), manager)
            except Exception:
                self.memo[value] = None
        return self.memo[value]

    def moves(self, nest_name: str, value: int) -> bool:
        """Does the size change this nest's trip counts (so it is the nest's size)?"""
        a, b = self.at(value), self.at(value + 7)
        if a is None or b is None:
            return False
        try:
            ta = [str(lp.trip_count) for lp in a[0].nest(nest_name).loops()]
            tb = [str(lp.trip_count) for lp in b[0].nest(nest_name).loops()]
        except KeyError:
            return False
        return ta != tb


def recommendations(v: Verdict, perf) -> list[str]:
    """Plain-words advice from the time breakdown, the kernel analyses and GPUPerf's benefit metrics."""
    out: list[str] = []
    total = v.total_gpu_s
    if total > 0 and v.transfer_s > 0.5 * total:
        out.append(f"host-device transfers take {100 * v.transfer_s / total:.0f}% of the GPU time "
                   f"({units.seconds(v.transfer_s)}): keep the arrays on the GPU across calls (port the code around "
                   "this nest as well) so they are copied once")
    launches = sum(k.launches for k in perf.kernels)
    if total > 0 and v.launch_s > 0.3 * total:
        what = "the kernel launch costs" if launches == 1 else f"{launches:.0f} kernel launches cost"
        out.append(f"{what} {units.seconds(v.launch_s)} ({100 * v.launch_s / total:.0f}% of the GPU time): give each "
                   "launch more work (more iterations per kernel, fused kernels in time loops, more mapped loops)")
    model = v.model
    tiles_gain = None
    if getattr(perf, "without_shared_s", None) and perf.shared_budget is not None:
        tiles_gain = 1.0 - perf.total_s(model) / perf.without_shared_s
    for k in perf.kernels:
        # one line per array and kind of problem: a stencil's nine uncoalesced reads of A are one piece of advice
        groups: dict[tuple, list] = {}
        for c in k.memory.accesses:
            # a warp whose 32 threads touch consecutive elements needs elem_size 32-byte sectors per request
            # (4 for float, 8 for double): coalesced is that, not a fixed count
            ideal = max(1, c.elem_size)
            if getattr(c, "where", "") == "shared tile" or c.sectors < 2 * ideal:
                continue
            groups.setdefault((c.text.split("[")[0], bool(c.unknown), ideal), []).append(c)
        for (array, unknown, ideal), accs in groups.items():
            lines = sorted({c.line for c in accs})
            where = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}"
            kinds = " and ".join(f"{n} {w}{'s' if n > 1 else ''}" for w, n in (
                ("read", sum(c.kind == "read" for c in accs)), ("write", sum(c.kind != "read" for c in accs))) if n)
            what = f"{accs[0].text} ({where}) is {'read' if accs[0].kind == 'read' else 'written'}" if len(accs) == 1 \
                else f"{kinds} of {array} ({where}) are"
            sectors = max(c.sectors for c in accs)
            if unknown:
                out.append(f"{what} at addresses chosen by data ({sectors:.0f} sectors per warp request, {ideal} when "
                           "coalesced): no loop order coalesces them" if len(accs) > 1 else
                           f"{what} at addresses chosen by data ({sectors:.0f} sectors per warp request, {ideal} when "
                           "coalesced): no loop order coalesces it")
                continue
            advice = (f"{what} uncoalesced (up to {sectors:.0f} sectors per warp request, {ideal} when coalesced): make "
                      "the x-mapped loop the last subscript (interchange the loops)" if len(accs) > 1 else
                      f"{what} uncoalesced ({sectors:.0f} sectors per warp request, {ideal} when coalesced): make the "
                      "x-mapped loop the last subscript (interchange the loops)")
            if tiles_gain and tiles_gain > 0.01:
                advice += f" or stage it in shared memory (predicted -{100 * tiles_gain:.0f}%)"
            out.append(advice)
        occ = k.occupancy
        if occ is not None and occ.occupancy < 0.5:
            out.append(f"{k.name}: occupancy {100 * occ.occupancy:.0f}% is limited by {occ.limiting_factor}: "
                       "fewer registers or less shared memory per block would let more warps hide latency")
        b = k.benefits
        t = k.predictions[model].time_s if model in k.predictions else 0
        if b and t > 0 and model == "gpuperf":
            name, val = max(((n, b.get(n, 0.0)) for n in ("B_memlp", "B_itilp", "B_serial", "B_fp")), key=lambda x: x[1])
            meaning = {"B_memlp": "more memory-level parallelism (independent loads per thread, coalescing)",
                       "B_itilp": "more instruction-level parallelism between warps (more warps or independent work)",
                       "B_serial": "less serialization (barriers, divergence, bank conflicts)",
                       "B_fp": "fewer non-floating-point instructions (address arithmetic, conversions)"}[name]
            if val > 0.1 * t:
                out.append(f"{k.name}: {meaning} could save up to {units.seconds(val)} per launch "
                           f"({100 * val / t:.0f}% of the kernel; GPUPerf's benefit metric {name}, seed 000)")
    return out


def advise(path: str, program: Program, manager, options: PreprocessOptions, make_manager, aopts: AdvisorOptions,
           source: str | None = None) -> dict[str, NestAdvice]:
    """Verdict, break-even and recommendations for every nest the pipeline predicted."""
    params = manager.options.get("params") or {}
    with manager.phase("cpu baseline"):
        cpu_times = cpu_baseline(path, program, options, run=aopts.run_cpu, cc=aopts.cc, cflags=aopts.cflags,
                                 repeats=aopts.repeats, timeout=aopts.timeout, params=params,
                                 cache_dir=aopts.cache_dir, source=source, extra_sources=aopts.extra_sources)
    candidates = size_candidates(path, options, source) if aopts.break_even else []
    probes: dict[str, SizeProbe] = {}
    out: dict[str, NestAdvice] = {}
    for nest in program.nests:
        perf = manager.result("performance", nest)
        cpu = cpu_times.get(nest.name)
        ported = manager.result("plan", nest) is not None      # no plan: port would not emit it
        needs = tuple(sorted(set(nest.params) - nest.param_env(params).keys())) if ported else ()
        at_sizes = _price_at_sizes(nest, manager, cpu, needs) if perf is None and needs else ()
        if at_sizes:
            out[nest.name] = _sized_advice(nest, at_sizes, cpu)
            continue
        if perf is None or not ported:
            errs = manager.errors_of(nest)
            why = (f"give {', '.join(needs)} a value (" + " ".join(f"--param {n}=VALUE" for n in needs) +
                   "): the time depends on it" if needs else errs[-1].message if errs else "not predicted")
            out[nest.name] = NestAdvice(nest.name, None, cpu, why, ported=ported, needs=needs)
            continue
        model = perf.default_model
        memory_bound = None
        if perf.kernels:
            k0 = max(perf.kernels, key=lambda k: k.predictions[model].time_s * k.launches)
            memory_bound = kernel_bound(k0) == "memory"
        v = decide(nest.name, perf.gpu.key, model, cpu.median_s if cpu else None, cpu.source if cpu else "none",
                   cpu.note if cpu else "", perf.transfer_s, perf.launch_overhead_s, perf.kernel_s(model),
                   perf.context_s, perf.include_context, memory_bound)
        v.recommendations = recommendations(v, perf)
        if aopts.break_even and cpu is not None and cpu.median_s:
            with manager.phase("break-even"):
                v.break_even = _break_even(path, options, nest, perf, cpu, candidates, probes, make_manager, aopts,
                                           source)
        out[nest.name] = NestAdvice(nest.name, v, cpu, "", v.recommendations, ported=True)
    return out


def _price_at_sizes(nest: Nest, manager, cpu: CpuTiming | None, needs: tuple[str, ...]) -> tuple[PricedSize, ...]:
    """A nest whose sizes the file does not show (`n1` of a function called at each level of a multigrid,
    `grid_points[0]` set by main) but which the measured run entered with known values: the plan `port` emits
    (chosen without the sizes, so the same kernels) priced at each tuple of sizes the run used, largest CPU
    time first.  () when the run did not record every size the prediction needs, or the model cannot price one."""
    plan = manager.result("plan", nest)
    if plan is None or cpu is None or cpu.source != "measured" or not cpu.sizes:
        return ()
    if any(not set(needs) <= set(a.env) for a in cpu.sizes):
        return ()
    opts = manager.options
    code = build_nest_code(nest, plan)
    out = []
    for a in cpu.sizes:
        try:
            perf = predict_nest(nest, plan, opts["gpu"], nest.param_env({**(opts.get("params") or {}), **a.env}),
                                code=code, options=opts, models=opts.get("models"), search=False,
                                include_context=bool(opts.get("include_context")),
                                registers=opts.get("registers", "auto"))
        except PerfError:
            return ()
        if not perf.kernels:
            return ()
        out.append(PricedSize(a, perf, a.total_s, a.executions * perf.total_s()))
    return tuple(out)


def performance_of(nest: Nest, manager, advice: NestAdvice | None):
    """The NestPerformance the reports show for `nest`: the performance pass's, else, for a nest priced at the
    sizes its run used, the one at the size that takes the most CPU time (the reports say which)."""
    perf = manager.result("performance", nest)
    if perf is None and advice is not None and advice.at_sizes:
        return advice.at_sizes[0].perf
    return perf


def _sized_advice(nest: Nest, at_sizes: tuple[PricedSize, ...], cpu: CpuTiming) -> NestAdvice:
    """The verdict of a nest priced at the sizes its run used: per execution, the CPU and GPU times averaged
    over all executions of a run (so that the whole program's sums are exact), decided as for one size."""
    executions = sum(p.size.executions for p in at_sizes)
    head = at_sizes[0].perf
    model = head.default_model

    def mean(part) -> float:
        return sum(p.size.executions * part(p.perf) for p in at_sizes) / executions

    k0 = max(head.kernels, key=lambda k: k.predictions[model].time_s * k.launches)
    v = decide(nest.name, head.gpu.key, model, sum(p.cpu_s for p in at_sizes) / executions, cpu.source, cpu.note,
               mean(lambda q: q.transfer_s), mean(lambda q: q.launch_overhead_s), mean(lambda q: q.kernel_s(model)),
               head.context_s, head.include_context, kernel_bound(k0) == "memory")
    v.recommendations = recommendations(v, head)
    return NestAdvice(nest.name, v, cpu, "", v.recommendations, ported=True, at_sizes=at_sizes)


def _break_even(path, options, nest: Nest, perf, cpu: CpuTiming, candidates, probes, make_manager,
                aopts: AdvisorOptions, source) -> list[BreakEven]:
    wanted = [c for c in candidates if aopts.break_even_param in (None, c[0])]
    for name, current in wanted:
        probe = probes.setdefault(name, SizeProbe(path, options, make_manager, name, source))
        if not probe.moves(nest.name, current):
            continue
        base = static_estimate(nest, perf.env).median_s
        model = perf.default_model

        measured: dict[int, float | None] = {}

        def cpu_at(n: int, prog, other) -> float | None:
            """The CPU time at size n: measured when the baseline is measured (small sizes run fast), else
            the measured time grown like the static estimate (the CPU's cache effects are then missed)."""
            if cpu.source == "measured" and aopts.run_cpu and n <= current:
                if n not in measured:
                    defines = tuple((k, v) for k, v in options.defines if k != name) + ((name, str(n)),)
                    try:
                        got = measure_file(path, replace(options, defines=defines), [nest.name], cc=aopts.cc,
                                           cflags=aopts.cflags, repeats=aopts.repeats, timeout=aopts.timeout,
                                           cache_dir=aopts.cache_dir, program=prog, source=source)
                        t = got.get(nest.name)
                        measured[n] = t.median_s if t is not None else None
                    except Exception:
                        measured[n] = None
                if measured[n]:
                    return measured[n]
            est = static_estimate(other, perf.env).median_s
            return cpu.median_s * est / base if est and base else None

        def evaluate(n: int, probe=probe):
            got = probe.at(n)
            if got is None:
                return None
            prog, mgr = got
            try:
                other = prog.nest(nest.name)
            except KeyError:
                return None
            p = mgr.result("performance", other)
            c = cpu_at(n, prog, other) if p is not None else None
            return None if p is None or not c else (p.total_s(model), c)

        return [find_break_even(evaluate, name, current, target, lo=2, hi=max(1 << 16, 4 * current))
                for target in aopts.targets]
    return []
