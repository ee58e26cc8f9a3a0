"""The report model: what c2gpu says about a C file, as objects (`Report`, one `NestReport` per loop nest).

Built once per analysed file by `build_report` (from the program after the pipeline, the advisor's verdicts and
the file's JSON entry); `c2gpu.analyze` returns it, `c2gpu check` decides from it, and the SARIF and HTML reports
(sarif.py, html.py) are rendered from it.
"""
from __future__ import annotations

import json
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import units
from ..codegen import build_nest_code
from ..ir import Loc, loop_words
from ..planning.plan import Kernel
from . import ir_json
from .advisor import performance_of
from .verdict import KEEP, PORT, RESIDENT, BreakEven, kernel_bound
from ..records import dataclass

if TYPE_CHECKING:
    from ..perf.predict import LaunchCost

__all__ = ["Report", "NestReport", "LoopReport", "KernelReport", "SharedMemoryDecision", "Location",
           "RelatedLocation", "Hotspot", "VERDICT_CLASSES", "build_report"]

#: Verdict classes (stable identifiers; their SARIF rule ids are in rules.RULE_OF_CLASS), with what each means.
VERDICT_CLASSES: dict[str, str] = {
    "port": "porting pays off: the GPU is faster end to end, transfers and launches included",
    "port-if-resident": "the kernels beat the CPU, but only if the data stays on the GPU: the transfers eat the gain",
    "keep-on-cpu": "the GPU is slower than the CPU even without the transfers",
    "not-portable": "c2gpu cannot port the nest (a dependence, an unknown call, possible aliasing, ...)",
    "no-verdict": "no verdict: there is no CPU time or no GPU prediction to compare (a size the file does not fix: "
                  "give it with --param NAME=VALUE; no GPU chosen)",
}
#: A loop's dependence verdict in the reports ("unknown" inside: what was not proven parallel is said so).
LOOP_STATUS: dict[str, str] = {"parallel": "parallel", "reduction": "reduction", "carried": "carried",
                               "unknown": "not-proven"}
#: The one word of each verdict class in every report: the terminal, the JSON's "verdict", SARIF and HTML.
VERDICT_LABELS: dict[str, str] = {"port": "PORT", "port-if-resident": "PORT ONLY IF THE DATA STAYS ON THE GPU",
                                  "keep-on-cpu": "KEEP ON THE CPU", "not-portable": "NOT PORTABLE",
                                  "no-verdict": "NO VERDICT"}

_CLASS_OF = {PORT: "port", RESIDENT: "port-if-resident", KEEP: "keep-on-cpu"}


# --------------------------------------------------------------------------- the report objects

# A place in a C file: 1-based line, 1-based column (0 when unknown); the IR's own type.
Location = Loc


@dataclass(frozen=True)
class RelatedLocation:
    """A location with what happens there (the access of a hotspot, the line that blocks a port)."""
    location: Location
    message: str


@dataclass(frozen=True)
class LoopReport:
    """One loop of a nest, outermost first, with the dependence pass's verdict on it."""
    var: str                     # the loop variable as written in C
    header: str                  # "for (i = 0; i < N; i++)"
    location: Location
    trip_count: str | None       # symbolic C expression ("N", "N - i - 1"), None when unknown
    status: str | None           # "parallel", "reduction", "carried", "not-proven"; None when not analysed
    reason: str = ""             # why it is not parallel (or which reduction), one sentence
    role: str = ""               # what the port does with it: "grid x", "host loop", "in each thread"; "" when
    #                              the nest is not ported

    @property
    def parallel(self) -> bool:
        """True when the loop's iterations may run concurrently (parallel, or a reduction c2gpu handles)."""
        return self.status in ("parallel", "reduction")


@dataclass(frozen=True)
class KernelReport:
    """One CUDA kernel of a ported nest, with its mapping and predictions (seconds per launch)."""
    name: str
    grid_loops: dict[str, str]   # C loop variable -> grid dimension ("x", "y", "z")
    block: tuple[int, ...]
    grid: tuple[int, ...] | None
    launches: float
    predicted_s: dict[str, float]   # model -> predicted kernel time per launch
    limiter: str | None          # "memory" or "compute" (c2gpu.report.verdict.kernel_bound, as the verdict says)
    occupancy: float | None      # active warps / maximum warps per SM


@dataclass(frozen=True)
class SharedMemoryDecision:
    """A shared-memory opportunity (a tile of an array) and what c2gpu decided for it."""
    kernel: str
    array: str
    kind: str                    # "reuse", "halo", "small array", "store"
    shape: tuple[int, ...]
    size_bytes: int
    value: float                 # global loads saved per block per byte of shared memory
    loads_saved_per_block: float
    bank_conflicts: int          # conflict degree of the shared reads (1: none)
    padded: bool
    taken: bool
    reason: str


@dataclass(frozen=True)
class Hotspot:
    """A memory access the compute units waited on (Resios), with the share of the kernel time."""
    kernel: str
    text: str
    line: int | None
    idle_s: float
    share: float


@dataclass
class NestReport:
    """Everything c2gpu says about one loop nest.

    Times are in seconds.  `verdict` is the sentence of the terminal report ("port", "port only if the data
    stays on the GPU", "keep on the CPU") or None when there is no verdict; `verdict_class` its stable
    identifier (see `VERDICT_CLASSES`).  `speedup` is end to end (transfers and launches included),
    `kernel_speedup` the kernels alone.  `no_verdict_reason` says why the advisor gave no verdict ("" when it
    gave one, or did not run: no GPU).  `data` is the nest's entry of `analyze --format json`.
    """
    name: str
    function: str
    location: Location
    loops: list[LoopReport]
    ported: bool
    refusal: str = ""
    blocking: list[RelatedLocation] = field(default_factory=list)
    mapping: str = ""
    kernels: list[KernelReport] = field(default_factory=list)
    host_loops: list[str] = field(default_factory=list)
    gpu: str | None = None
    model: str | None = None
    predicted_s: dict[str, float] = field(default_factory=dict)    # model -> total GPU time
    gpu_s: dict[str, float] = field(default_factory=dict)          # total, kernels, launches, transfers, context
    launch: "LaunchCost | None" = None        # gpu_s["launches"] as launches x launch_s + synchronizes x synchronize_s
    cpu_s: float | None = None
    cpu_source: str | None = None                                  # "measured" or "static estimate"
    verdict: str | None = None
    verdict_class: str = "no-verdict"
    reason: str = ""
    no_verdict_reason: str = ""
    speedup: float | None = None
    kernel_speedup: float | None = None
    bottleneck: str | None = None
    break_even: list[BreakEven] = field(default_factory=list)
    recommendations: list[str] = field(default_factory=list)
    hotspots: list[Hotspot] = field(default_factory=list)
    shared_memory: list[SharedMemoryDecision] = field(default_factory=list)
    cuda: str | None = None
    source: str = ""
    data: dict = field(default_factory=dict, repr=False)

    @property
    def parallel_loops(self) -> list[str]:
        """The C variables of the loops whose iterations may run concurrently."""
        return [lp.var for lp in self.loops if lp.parallel]

    @property
    def has_verdict(self) -> bool:
        """True when the advisor compared the GPU with the CPU (port, port-if-resident or keep-on-cpu)."""
        return self.verdict_class in _CLASS_OF.values()

    def __repr__(self) -> str:
        speed = f", speedup={units.speedup(self.speedup)}" if self.speedup is not None else ""
        what = self.verdict_class if self.ported else f"not-portable: {self.refusal[:60]}"
        return f"<NestReport {self.name} at {self.location}: {what}{speed}>"


@dataclass
class Report:
    """The analysis of one C file (or source text): its nests, in source order.

    `errors` lists what could not be read (a syntax error costs its declaration, the rest is analysed).
    `data` is the file's entry of `analyze --format json`; `to_json()` gives the whole document.
    """
    path: str
    nests: list[NestReport]
    gpu: str | None = None
    gpu_name: str | None = None
    gpu_peaks: dict[str, float] = field(default_factory=dict)   # dram_gbs, fp32_gflops, fp64_gflops
    errors: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict, repr=False)
    input_errors: list[dict] = field(default_factory=list, repr=False)
    program: object = None      # c2gpu.report.program_view.WholeProgram: the nests' shares and Amdahl's law (GPU only)

    def nest(self, name: str) -> NestReport:
        """The nest named `name` ("matmul@16"), or the first nest of function `name`."""
        for n in self.nests:
            if n.name == name:
                return n
        for n in self.nests:
            if n.function == name:
                return n
        raise KeyError(name)

    def to_json(self, indent: int | None = 2) -> str:
        """The same document as `c2gpu analyze --format json` (schema c2gpu/schemas/analysis.schema.json)."""
        files = [self.data] if self.data else []
        return json.dumps(ir_json.document(files, list(self.input_errors)), indent=indent) + "\n"

    def __repr__(self) -> str:
        on = f" on {self.gpu}" if self.gpu else ""
        verdicts = ", ".join(f"{n.name}: {n.verdict_class}" + (f" {units.speedup(n.speedup)}" if n.speedup is not None else "")
                             for n in self.nests)
        return f"<Report {self.path}{on}: {len(self.nests)} nest{'s' if len(self.nests) != 1 else ''} ({verdicts})>"


# --------------------------------------------------------------------------- building a Report

def _loc(loc) -> Location:
    return Location(loc.file, loc.line, loc.col)


def build_report(path: str, program, manager, advice, file_dict: dict, input_errors: list[dict],
                 source: str | None = None, view=None) -> Report:
    """The Report of one analysed file: `program` after `manager.run`, `advice` from c2gpu.report.advisor (or None
    without --gpu), `file_dict` its JSON entry, `source` the C text when it was given as text (named `path`)."""
    gpu_key = gpu_name = None
    peaks: dict[str, float] = {}
    g = manager.options.get("gpu")
    if g is not None:
        gpu_key, gpu_name = g.key, g.name
        peaks = {"dram_gbs": g.dram_bandwidth_gbs, "fp32_gflops": g.peak_fp32_gflops,
                 "fp64_gflops": g.peak_fp64_gflops}
    nests = [_nest_report(nest, nd, manager, advice.get(nest.name) if advice else None, path, source)
             for nest, nd in zip(program.nests, file_dict.get("nests", []))]
    return Report(path, nests, gpu_key, gpu_name, peaks, [e["message"] for e in input_errors], file_dict,
                  list(input_errors), view)


def _nest_source(path: str, nest, source: str | None) -> str:
    """The nest's lines as written: from its `for` to the end of its last statement and closing braces.
    `source` is the text of `path` when it was given as text; a nest in an included file is read from it."""
    file = nest.loc.file or path
    try:
        text = source if source is not None and file == path else Path(file).read_text(errors="replace")
    except OSError:
        return ""
    lines = text.splitlines()
    start = nest.loc.line
    if not 1 <= start <= len(lines):
        return ""
    last = max([start] + [s.loc.line for s in nest.statements() if s.loc is not None and s.loc.file == nest.loc.file]
               + [lp.loc.line for lp in nest.loops() if lp.loc is not None and lp.loc.file == nest.loc.file])
    end = min(last, len(lines))
    text = lines[start - 1][max(nest.loc.col - 1, 0):] + "\n" + "\n".join(lines[start:end])
    depth = text.count("{") - text.count("}")
    while end < len(lines) and end - start < 400 and (depth > 0 or not lines[end - 1].rstrip().endswith((";", "}"))):
        end += 1
        depth += lines[end - 1].count("{") - lines[end - 1].count("}")
    return "\n".join(lines[start - 1:end])


def _nest_report(nest, nd: dict, manager, adv, path: str, source: str | None) -> NestReport:
    deps = manager.result("dependence", nest)
    plan = manager.result("plan", nest)
    perf = performance_of(nest, manager, adv)
    loops = loop_reports(nest, deps, plan)
    errs = manager.errors_of(nest)
    ported = plan is not None
    refusal = "" if ported else (errs[-1].message if errs else "not mapped")
    rep = NestReport(nest.name, nest.function, _loc(nest.loc), loops, ported, refusal, data=nd,
                     source=_nest_source(path, nest, source))
    if not ported:
        rep.blocking = _blocking(nest, deps, refusal)
        rep.verdict_class = "not-portable"
        rep.reason = f"not portable: {refusal}"
    else:
        _describe_mapping(rep, nest, plan.mapping)
        code, decisions = _code_and_decisions(nest, manager.result("plan", nest))
        rep.cuda = code
        rep.shared_memory = decisions
    if perf is not None:
        _add_performance(rep, perf)
    if adv is not None:
        v = adv.verdict
        rep.no_verdict_reason = "" if v is not None else adv.refusal
        rep.cpu_s = adv.cpu.median_s if adv.cpu is not None else None
        rep.cpu_source = adv.cpu.source if adv.cpu is not None else None
        if v is not None:
            rep.verdict, rep.reason = v.verdict, v.reason
            rep.verdict_class = _CLASS_OF.get(v.verdict, "no-verdict")
            rep.speedup, rep.kernel_speedup, rep.bottleneck = v.speedup, v.kernel_speedup, v.bottleneck
            rep.gpu_s = {"total": v.total_gpu_s, "kernels": v.kernel_s, "launches": v.launch_s,
                         "transfers": v.transfer_s, "context": v.context_s}
            rep.break_even = list(v.break_even)
            rep.recommendations = list(v.recommendations)
            rep.model = v.model
        elif not ported:
            rep.verdict = VERDICT_LABELS["not-portable"].lower()
        elif adv.needs:
            rep.reason = f"no verdict: {adv.refusal}"
        else:               # mapped, but the performance could not be predicted (a symbolic size, ...)
            rep.reason = f"no prediction: {adv.refusal}" if adv.refusal else "no prediction"
    return rep


def loop_reports(nest, deps, plan) -> list[LoopReport]:
    """Each loop of `nest`, outermost first, with the dependence verdict on it (`deps`, None when the dependence
    pass did not run) and, when `plan` is given, what the port does with it."""
    roles = _loop_roles(nest, plan.mapping) if plan is not None else {}
    out = []
    for lp in nest.loops():
        v = deps.verdicts.get(lp.lid) if deps is not None else None
        reason = ""
        if v is not None and v.reasons:
            reason = v.reasons[0].message
        elif v is not None and v.reductions:
            reason = "reduction on " + ", ".join(v.reductions)
        var = lp.source_var
        out.append(LoopReport(var, lp.header, _loc(lp.loc), lp.trip_count.to_c() if lp.trip_count is not None else None,
                              LOOP_STATUS.get(v.status, v.status) if v is not None else None, reason,
                              roles.get(lp.lid, roles.get(_place(lp), "in each thread")) if plan is not None else ""))
    return out


def _loop_roles(nest, mapping) -> dict:
    """Each loop, by its lid or, for a kernel that runs its own view of the nest (after distribution or
    interchange), by its name and place in the source, -> what the plan does with it ("grid y", "host loop",
    "grid x in k1, in each thread in k2" when kernels differ: kN is the kernel's own number).  Never by name alone:
    gramschmidt has four loops named i, and isl's scheduler writes several loops named c2gpu_c1 at one place."""
    kernels, out = mapping.kernels(), {}

    def walk(items):
        for it in items:
            if not isinstance(it, Kernel):
                out[it.lid] = "host loop"
                walk(it.body)
    walk(mapping.items)
    per_kernel = []
    for k in kernels:
        by_id = {lp.lid: lp for lp in (k.view or nest).loops()}
        key = (lambda lid: lid) if k.view is None else (lambda lid: _place(by_id[lid]))
        grid = {key(m.lid): f"split across {m.turns} threads along {m.dim}" if m.turns
                else f"grid {m.dim}" + (f", {m.coarsened} iterations per thread" if m.coarsened > 1 else "")
                for m in k.loops}
        inside = {key(lp.lid) for lp in k.inner_loops(by_id)} if k.body_lid in by_id and k.loops else set()
        per_kernel.append((k.name.rsplit("_", 1)[-1], grid, inside))
    for at in {p for _, grid, inside in per_kernel for p in (grid.keys() | inside)} - out.keys():
        roles = [(name, grid.get(at, "in each thread")) for name, grid, inside in per_kernel
                 if at in grid or at in inside]
        if len({r for _, r in roles}) == 1:
            out[at] = roles[0][1]
        else:
            out[at] = ", ".join(f"{r} in {name}" for name, r in roles)
    return out


def _place(lp) -> tuple[str, int, int]:
    return (lp.source_var, lp.loc.line, lp.loc.col)


def _blocking(nest, deps, refusal: str = "") -> list[RelatedLocation]:
    """Where a refused nest is blocked: the loops that carry a dependence (or could not be proven parallel),
    the accesses involved, and the flags (unknown call, unsupported statement) with their lines; the loop the
    refusal names comes first."""
    out: list[RelatedLocation] = []
    seen: set[tuple[int, int, str]] = set()

    def add(loc, msg):
        if loc is None or not loc.line:
            return
        key = (loc.line, loc.col, msg)
        if key not in seen:
            seen.add(key)
            out.append(RelatedLocation(_loc(loc), msg))

    by_id = {lp.lid: lp for lp in nest.loops()}
    blocked = []
    if deps is not None:
        named = [(f"{loop_words(v.var)}" not in refusal, lid, v) for lid, v in deps.verdicts.items()
                 if v.status in ("carried", "unknown")]
        blocked = [v for _, _, v in sorted(named, key=lambda t: (t[0], t[1]))]
    for v in blocked:                       # the loops first, then the accesses of their dependences
        lp = by_id.get(v.lid)
        first = v.reasons[0] if v.reasons else None
        if lp is not None:
            add(lp.loc, f"{loop_words(v.var)} {'carries a dependence' if v.status == 'carried' else 'is not proven parallel'}"
                + (f": {first.message}" if first else ""))
    for v in blocked:
        for r in v.reasons[:2]:
            if r.kind not in ("flow", "anti", "output"):       # not a dependence: what the analysis could not see
                add(r.source or r.sink or (by_id[v.lid].loc if v.lid in by_id else None),
                    f"keeps {loop_words(v.var)} from being proven parallel: {r.message}")
                continue
            what = f"{r.kind} dependence{' on ' + r.array if r.array else ''} carried by {loop_words(v.var)}"
            if r.sink is not None:
                add(r.sink, f"{what} (where it is read or written second)")
            if r.source is not None:
                add(r.source, f"{what} (where it is read or written first)")
    for f in nest.all_flags():
        if f.code != "pass-failed":
            add(f.loc, f"{f.code}: {f.message}")
    return out[:12]


def _describe_mapping(rep: NestReport, nest, mapping) -> None:
    host = []

    def walk(items):
        for it in items:
            if not isinstance(it, Kernel):
                host.append(f"{it.var}: {it.why}" if it.why else it.var)
                walk(it.body)
    walk(mapping.items)
    rep.host_loops = host
    rep.kernels = [KernelReport(k.name, {m.c_var: m.dim for m in k.loops}, tuple(k.block), None, 1.0, {}, None, None)
                   for k in mapping.kernels()]
    _mapping_sentence(rep)


def _mapping_sentence(rep: NestReport) -> None:
    """"c2gpu_matmul_16_k0: i -> y, j -> x (block 32x32x1)", with the block the prediction chose."""
    rep.mapping = mapping_sentence([(k.name, k.grid_loops, k.block) for k in rep.kernels], rep.host_loops)


def mapping_sentence(kernels, host_loops=()) -> str:
    """The kernels (name, {C loop variable: dimension}, block) and host loops of a plan, in one line."""
    parts = [f"{name}: {', '.join(f'{v} -> {d}' for v, d in grid.items()) or 'one thread'} "
             f"(block {'x'.join(str(b) for b in block)})" for name, grid, block in kernels]
    return "; ".join(parts) + (f"; on the host: {'; '.join(host_loops)}" if host_loops else "")


def plan_sentence(plan) -> str:
    """`mapping_sentence` of a NestPlan, host loops by name only (the loop lines say why they stay)."""
    host = []

    def walk(items):
        for it in items:
            if not isinstance(it, Kernel):
                host.append(it.var)
                walk(it.body)
    walk(plan.mapping.items)
    text = mapping_sentence([(k.name, {m.c_var: m.dim for m in k.loops}, tuple(k.block))
                             for k in plan.mapping.kernels()], [", ".join(host)] if host else ())
    if len(plan.structures) > 1:
        text += f"; structure {plan.mapping.structure}, the fastest of {len(plan.structures)} compared"
    return text


def _code_and_decisions(nest, plan) -> tuple[str | None, list[SharedMemoryDecision]]:
    """The CUDA of the nest's plan (as `c2gpu port --gpu` writes it) and every shared-memory opportunity with
    its decision."""
    try:
        text = build_nest_code(nest, plan).wrapper
    except Exception:
        text = None
    decisions = []
    for kname, d in plan.decisions:
        o = d.opportunity
        decisions.append(SharedMemoryDecision(kname, o.array, o.kind, tuple(o.shape), o.size_bytes, o.value,
                                              o.loads_saved_per_block, o.conflicts, bool(o.pad), d.taken, d.reason))
    return text, decisions


def _add_performance(rep: NestReport, perf) -> None:
    rep.gpu = perf.gpu.key
    rep.model = perf.default_model
    rep.predicted_s = {m: perf.total_s(m) for m in perf.models}
    rep.launch = perf.launch
    kernels = []
    old = {k.name: k for k in rep.kernels}
    for k in perf.kernels:
        o = k.occupancy
        prev = old.get(k.name)
        kernels.append(KernelReport(k.name, prev.grid_loops if prev else {}, tuple(k.block), tuple(k.geometry.grid),
                                    k.launches, {m: k.predictions[m].time_s for m in perf.models}, kernel_bound(k),
                                    o.occupancy if o is not None else None))
        for h in k.hotspots:
            rep.hotspots.append(Hotspot(k.name, h.text, h.line or None, h.idle_s, h.share))
    rep.kernels = kernels or rep.kernels
    if rep.ported:
        _mapping_sentence(rep)
