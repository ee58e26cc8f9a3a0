"""The driver: one analysis of a C file (or C source text) under `Options`, for every front door.

`analyze(path, options, source=...) -> Report` is the Python API's (c2gpu.analyze); the command line's
`analyze` and `check` call `analyze_file` per file (in worker processes with --jobs), which also renders the
text and JSON reports.  Both run the same pipeline, advisor and report model.
"""
from __future__ import annotations

import sys
from dataclasses import field, replace
from typing import Callable, Sequence

from ..diagnostics import C2GPUError, silence
from ..frontend import load_program_recovering
from .options import Options, OptionsError, check_map_loops, planned_kernels, unmatched_block_keys
from ..perf.registers import run_with_one_nvcc_call
from ..perf.report import performance_json, performance_text
from ..pipeline import PassManager, PipelineError
from ..pipeline import PIPELINES, with_performance
from ..registry import discover
from ..report import ir_json, text
from ..report.advisor import AdvisorOptions, advise, performance_of
from ..report.model import Report, build_report, loop_reports, plan_sentence
from ..report.program_view import program_json, program_text, whole_program
from ..report.verdict_json import verdict_json
from ..report.text import diagnostic_lines
from ..report.verdict_text import nest_table
from .unblock import unblocking_flags
from ..analysis.openmp import OPENMP_CODES, openmp_findings
from ..analysis.subscript_bounds import findings
from ..records import dataclass


def pipeline_passes(options: Options) -> tuple[str, ...]:
    """The passes `options` asks for: the explicit list, else the named pipeline; with a GPU, then performance."""
    passes = options.passes if options.passes is not None else PIPELINES[options.pipeline].passes
    return with_performance(passes) if options.gpu is not None else passes


def make_manager(pipeline: Sequence[str], options: dict | None = None) -> PassManager:
    """A pass manager over the registered passes (a plugin that fails to load is a warning, not an error)."""
    registered, failures = discover(pipeline)     # built-in passes only: no entry-point scan
    for f in failures:
        print(f"c2gpu: warning: pass {f.origin} failed to load: {f.message}", file=sys.stderr)
    try:
        return PassManager([r.instance for r in registered], pipeline, options)
    except PipelineError as e:
        raise OptionsError(str(e)) from None


def manager_for(options: Options) -> PassManager:
    """The pass manager of `options`, printing the IR after the passes of --print-after (on stderr)."""
    manager = make_manager(pipeline_passes(options), options.pass_options())
    manager.print_after = set(options.print_after)
    for name in manager.print_after:
        if name not in manager.available:
            raise OptionsError(f"--print-after: unknown pass '{name}'")
    manager.dump = _dump_ir
    return manager


def _dump_ir(pass_name: str, nest) -> None:
    print(f"--- {nest.name} after {pass_name} ---\n{text.nest_ir(nest)}", file=sys.stderr)


def merge_timings(into: dict, more: dict) -> None:
    for name, t in more.items():
        mine = into.setdefault(name, type(t)(t.name, kind=t.kind))
        mine.seconds += t.seconds
        mine.runs += t.runs


# --------------------------------------------------------------------------- one file

@dataclass(frozen=True)
class TextStyle:
    """How the text report is written: with the IR of each nest and the performance analysis (details), in
    colour."""
    details: bool = False
    colour: bool = False
    gpu_origin: str = ""      # where the GPU was chosen ("--gpu", "C2GPU_GPU", a settings file, "default")


@dataclass
class FileAnalysis:
    """What analysing one file gave: its JSON entry (None when it could not be read or was not asked for), its text report, the
    input errors, the exit status (0, or 1 for an input error) and, when asked, its Report."""
    path: str
    file_dict: dict | None
    text: str
    errors: list
    status: int
    report: Report | None = None
    flags: dict = field(default_factory=dict)        # the diagnostics of each nest (Flags, by nest name)
    messages: list = field(default_factory=list)     # stderr lines of a worker process, printed in file order
    timings: dict = field(default_factory=dict)


def analyze_file(path: str, options: Options, manager: PassManager, *, source: str | None = None,
                 style: TextStyle | None = None, want_report: bool = False,
                 err: Callable[[str], None] | None = None, want_json: bool = True) -> FileAnalysis:
    """Analyse one file: load it (recovering from errors), run the pipeline, advise, render JSON, the text
    report (with `style`), the Report (with `want_report`) and the JSON entry (with `want_json` or `want_report`:
    the text report alone does not need it, and on a large file it is a tenth of the run).  With `source`, that C text is analysed and
    `path` only names it.  Input errors go to `err` (default: stderr) as compiler-style messages."""
    with manager.active():     # what the analyses' helpers keep lives as long as the manager (pipeline.memo)
        return _analyze_file(path, options, manager, source=source, style=style, want_report=want_report, err=err,
                             want_json=want_json)


def _analyze_file(path: str, options: Options, manager: PassManager, *, source: str | None = None,
                  style: TextStyle | None = None, want_report: bool = False,
                  err: Callable[[str], None] | None = None, want_json: bool = True) -> FileAnalysis:
    err = err or (lambda m: print(m, file=sys.stderr))
    status, errors = 0, []
    try:
        # a syntax error or missing header costs its declaration, not the file: report it, analyse the rest
        with manager.phase("load"):
            program, problems = load_program_recovering(path, options.preprocess, source=source)
    except C2GPUError as e:
        problems, program = [e], None
    for e in problems:
        err(str(e))
        errors.append({"path": path, "message": e.message, "location": ir_json.loc(e.loc)})
        status = 1
    if program is None:
        return FileAnalysis(path, None, "", errors, status)
    try:
        check_map_loops((options.map or ()) + tuple(options.map_host), program, path)
    except C2GPUError as e:
        err(f"{path}: error: {e.message}")
        errors.append({"path": path, "message": e.message, "location": None})
        return FileAnalysis(path, None, "", errors, 1)
    program = run_with_one_nvcc_call(manager, program)
    for message in unmatched_block_keys(options.block, planned_kernels(program, manager)):
        err(f"{path}: warning: {message}")
    advice = _advise(options, path, program, manager, source)
    with manager.phase("unblocking edits"):
        unblocked = _unblocking(path, options, manager, program, source)
    with manager.phase("reports"):
        flags = {nest.name: diagnostics(nest, manager, options.silenced, _priced_at_sizes(advice, nest))
                 + silence(unblocked.get(nest.name, []), options.silenced) for nest in program.nests}
        view = whole_program(program, advice, manager)
        fd = None
        if want_json or want_report:
            fd = _with_verdict_json(_with_performance_json(_with_loop_verdicts_json(
                ir_json.program(program, flags), program, manager), program, manager), program, advice)
            if view is not None:
                fd["whole_program"] = program_json(view)
        report_text = _text(program, flags, manager, advice, style, view) if style is not None else ""
        report = build_report(path, program, manager, advice, fd, errors, source, view) if want_report else None
    return FileAnalysis(path, fd, report_text, errors, status, report, flags)


def analyze_worker(path: str, options: Options, style: TextStyle | None, want_report: bool,
                   want_json: bool = True) -> FileAnalysis:
    """One file in a worker process, with a pipeline of its own (no state shared between files)."""
    manager = manager_for(options)
    messages: list[str] = []
    result = analyze_file(path, options, manager, style=style, want_report=want_report, err=messages.append,
                          want_json=want_json)
    result.messages, result.timings = messages, dict(manager.timings)
    return result


def analyze(path: str, options: Options, source: str | None = None) -> Report:
    """The Report of the C file `path` or, with `source`, of that C text (`path` then names it in locations).
    Raises C2GPUError when the input cannot be read at all."""
    result = analyze_file(path, options, manager_for(options), source=source, want_report=True,
                          err=lambda message: None)
    if result.report is None:
        raise C2GPUError(result.errors[0]["message"] if result.errors else f"cannot analyse '{path}'")
    return result.report


# --------------------------------------------------------------------------- the verdict and the reports

def _advise(options: Options, path: str, program, manager: PassManager, source: str | None):
    if "performance" not in {p.name for p in manager.steps}:
        return None
    aopts = AdvisorOptions(run_cpu=options.run_cpu, cc=options.cc, cflags=options.cflags,
                           repeats=options.runs, timeout=options.timeout, extra_sources=options.extra_sources,
                           break_even=options.break_even,
                           break_even_param=options.break_even_param, targets=(1.0, *options.targets))
    steps = [p.name for p in manager.steps]
    return advise(path, program, manager, options.preprocess,
                  lambda: make_manager(steps, dict(manager.options, block_search=False, registers="estimate")),
                  aopts, source)


def _unblocking(path: str, options: Options, manager: PassManager, program, source: str | None) -> dict:
    """The unblocking edits of the nests not ported (drivers/unblock.py), by nest name: each candidate's nest
    analysed again, alone, with the edit in the text, by the same passes and options (the CPU time a static
    estimate, no break-even search)."""
    if "plan" not in {p.name for p in manager.steps} or all(manager.result("plan", n) is not None
                                                            for n in program.nests):
        return {}
    if source is None:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            source = f.read()

    def reanalyse(edited: str, name: str, function: str) -> str | None:
        try:
            # (only the nest's function: the others' nests are not asked for)
            again, _ = load_program_recovering(path, options.preprocess, source=edited,
                                               functions=frozenset({function}))
        except C2GPUError:
            return None
        nest = next((n for n in again.nests if n.name == name), None) if again is not None else None
        if nest is None:
            return None
        alone = make_manager([p.name for p in manager.steps], dict(manager.options))
        with alone.active():
            again = run_with_one_nvcc_call(alone, replace(again, nests=(nest,)))
            plan = alone.result("plan", again.nests[0])
            if plan is None:
                return None
            advice = _advise(replace(options, run_cpu=False, break_even=False), path, again, alone, edited)
        adv = advice.get(name) if advice is not None else None
        if adv is not None and adv.verdict is not None:
            return f"{adv.verdict.verdict}: {adv.verdict.reason}"
        return plan_sentence(plan) + (f"; no verdict: {adv.refusal}" if adv is not None and adv.refusal else "")

    return unblocking_flags(program, manager, source, reanalyse)


def _priced_at_sizes(advice, nest) -> bool:
    adv = advice.get(nest.name) if advice is not None else None
    return adv is not None and bool(adv.at_sizes)


def diagnostics(nest, manager: PassManager, silenced: tuple[str, ...] = (), priced: bool = False) -> list:
    """Everything the reports say about `nest`, once: the IR's flags, the subscripts found out of bounds, what
    its OpenMP directives get wrong and the passes' refusals, less the codes the user silenced.  `priced`: the advisor priced the nest at the sizes
    its run used, so the performance pass's "give the sizes a value" is answered and not repeated."""
    out, seen = [], set()
    # the directives sit on the loops as written: a nest the reorder pass rewrote (fused, rescheduled, run in
    # wavefronts) is checked as written, with the dependences the pass computed for it
    written = nest.as_written or nest
    deps = manager.result("dependence", written)
    omp = openmp_findings(written, deps) if deps is not None else []
    for f in list(nest.all_flags()) + findings(nest) + omp + manager.errors_of(nest):
        key = (f.code, f.loc.line if f.loc else None)      # a pass refusing over a flag of the IR: said once
        if f.code in OPENMP_CODES:
            key += (f.message,)                            # (one directive may miss several clauses)
        if priced and f.code == "not-predicted":
            continue
        if key not in seen:
            seen.add(key)
            out.append(f)
    return silence(out, silenced)


def _text(program, flags, manager: PassManager, advice, style: TextStyle, view=None) -> str:
    """The verdict of each nest with its loops' dependence verdicts; with details, the IR and the performance
    analysis behind it first."""
    out = text.program(program, flags, extra=_performance_text_hook(manager)) if style.details else ""
    return out + _verdict_text(program, manager, advice, style, None if style.details else flags, view)


def _verdict_text(program, manager, advice, style: TextStyle, flags: dict | None = None, view=None) -> str:
    """The verdict table of each nest; with `flags` (by nest name), its diagnostics below it, compiler-style."""
    gpu = manager.options.get("gpu")
    n = len(program.nests)
    # the file's own diagnostics (a nest not described, a pragma not understood): no nest disappears unsaid
    notes = "".join(f"{f.loc}: note: {f.message} [{f.code}]\n" for f in program.diagnostics)
    if not n:
        return f"{program.path}: no loop nests: nothing to analyse or port\n" + notes
    head = f"{program.path}: {n} loop nest{'s' if n != 1 else ''}"
    if gpu is not None:
        origin = style.gpu_origin
        head += f", predicted on {gpu.key} ({gpu.name}"
        head += ", the default GPU; --gpu NAME, C2GPU_GPU or c2gpu.toml choose another)" if origin == "default" else \
            f", from {origin})" if origin not in ("", "--gpu") else ")"
    parts = [head + "\n" + (program_text(view, gpu.key) if gpu is not None and view is not None else "")]
    for nest in program.nests:
        plan = manager.result("plan", nest)
        errs = manager.errors_of(nest)
        adv = advice.get(nest.name) if advice is not None else None
        parts.append(nest_table(nest, adv, performance_of(nest, manager, adv),
                                loop_reports(nest, manager.result("dependence", nest), plan), style.colour,
                                plan_sentence(plan) if plan is not None else "",
                                errs[-1].message if errs and plan is None else "")
                     + "".join(f"  {line}\n" for f in (flags or {}).get(nest.name, []) for line in diagnostic_lines(f)))
    if notes:
        parts.append(notes.rstrip("\n"))
    return "\n".join(parts) + "\n"


def _with_loop_verdicts_json(fd: dict, program, manager) -> dict:
    """Each nest's loops with the dependence verdict on each and what the port does with it (with or without
    a GPU), when the dependence pass ran."""
    if "dependence" not in {p.name for p in manager.steps}:
        return fd
    for nd, nest in zip(fd["nests"], program.nests):
        nd["loop_verdicts"] = [
            {"var": lp.var, "line": lp.location.line, "status": lp.status, "reason": lp.reason, "role": lp.role}
            for lp in loop_reports(nest, manager.result("dependence", nest), manager.result("plan", nest))]
    return fd


def _with_verdict_json(fd: dict, program, advice) -> dict:
    if advice is None:
        return fd
    for nd, nest in zip(fd["nests"], program.nests):
        nd["verdict"] = verdict_json(advice.get(nest.name))
    return fd


def _performance_text_hook(manager):
    if "performance" not in {p.name for p in manager.steps}:
        return None

    def extra(nest) -> str:
        perf = manager.result("performance", nest)
        if perf is None:
            return "  performance: not predicted (see the flags below)"
        return performance_text(perf)
    return extra


def _with_performance_json(file_dict: dict, program, manager) -> dict:
    if "performance" in {p.name for p in manager.steps}:
        for nd, nest in zip(file_dict["nests"], program.nests):
            errs = [f.message for f in manager.errors_of(nest)]
            nd["performance"] = performance_json(manager.result("performance", nest),
                                                 "; ".join(errs) or "not predicted")
    return file_dict
