"""`c2gpu port`: the user's file with each ported nest replaced by a call to its host wrapper.

The analysis is the port pipeline's (ending with the plan pass); code generation and splicing are
c2gpu.codegen's.  This module puts them together for a whole file: which nests are ported (and why not),
the .cu text, and the split into .cu + .c when the host code cannot be compiled as C++.
"""
from __future__ import annotations

import sys
from dataclasses import field, replace
from pathlib import Path


from ..codegen import CodegenError, NestCode, build_nest_code, host_not_cxx, render_port, render_split
from ..diagnostics import C2GPUError
from ..frontend import PreprocessOptions
from ..frontend.lower import lower_program
from ..frontend.parse import parse_c
from ..frontend.preprocess import preprocess_missing_headers
from ..frontend.syntax import declared_names
from ..ir import Loc, Nest
from ..perf.registers import run_with_one_nvcc_call
from ..pipeline import PassManager
from ..pipeline import PORT
from ..records import dataclass
from .options import check_map_loops, planned_kernels, unmatched_block_keys

PIPELINE = list(PORT.passes)


@dataclass
class NestOutcome:
    nest: Nest
    ported: bool
    reason: str = ""
    loc: Loc | None = None
    code: NestCode | None = None
    plan: object = None             # c2gpu.planning.plan.NestPlan, when the nest was mapped
    dependence: object = None
    performance: object = None      # c2gpu.perf NestPerformance, when a GPU was given
    left: str = ""                  # a portable nest left on the CPU (port --worth): its verdict, why


@dataclass
class PortResult:
    source_path: str
    text: str                                   # the .cu file
    outcomes: list[NestOutcome] = field(default_factory=list)
    host_text: str | None = None                # split mode: the user's C file calling the wrappers
    split_reasons: list[str] = field(default_factory=list)
    warnings: list[C2GPUError] = field(default_factory=list)   # headers c2gpu could not find (the port went on)
    notes: tuple = ()                           # the file's own diagnostics (Program.diagnostics): nests skipped
    #                                             or not described, pragmas not understood

    @property
    def ported(self) -> list[NestOutcome]:
        return [o for o in self.outcomes if o.ported]


def print_warning(warning: C2GPUError) -> None:
    where = f"{warning.loc}: " if warning.loc else ""
    print(f"{where}warning: {warning.message}", file=sys.stderr)


def analyse_for_port(path: str, options: PreprocessOptions, manager: PassManager, source: str | None = None,
                     warn=print_warning):
    """The program after the port pipeline, and each nest's outcome: its code, or why it is not ported.

    A header the preprocessor cannot find is a warning (warn(C2GPUError) for each), not the end of the
    port: the port keeps the user's `#include` lines, and the compiler that builds it has the real header.
    What c2gpu cannot know is what the header declares: a nest that uses a name declared nowhere in the
    file is not ported, with that name as the reason.
    """
    with manager.active():     # what the analyses' helpers keep lives as long as the manager (pipeline.memo)
        return _analyse_for_port(path, options, manager, source, warn)


def _analyse_for_port(path: str, options: PreprocessOptions, manager: PassManager, source: str | None = None,
                      warn=print_warning):
    if "plan" not in manager.available or "plan" not in {p.name for p in manager.steps}:
        raise ValueError("the port needs a pipeline that ends with the 'plan' pass")
    text, missing = preprocess_missing_headers(path, options, source=source)
    headers = ("the header " if len(missing) == 1 else "the headers ") + ", ".join(f"'{name}'" for name, _ in missing)
    for _, e in missing:
        warn(C2GPUError(f"{e.message}: c2gpu goes on without it, and does not port a nest that uses a name "
                        "it may declare", e.loc))
    try:
        ast = parse_c(text, path)
    except C2GPUError as e:
        if missing:   # an undeclared type name is a syntax error for the parser
            raise C2GPUError(f"{e.message} ({headers} could not be found: a name used here may be declared there)", e.loc) from None
        raise
    program = lower_program(ast, path, options, original_source=source)
    check_map_loops(list(manager.options.get("map") or ()) + list(manager.options.get("map_host") or ()), program, path)
    program = run_with_one_nvcc_call(manager, program)
    for message in unmatched_block_keys(manager.options.get("block"), planned_kernels(program, manager)):
        warn(C2GPUError(f"{path}: {message}"))
    declared = declared_names(ast) if missing else set()
    outcomes = []
    for nest in program.nests:
        undeclared = _undeclared_use(nest, declared) if missing else None
        if undeclared is not None:
            outcomes.append(NestOutcome(nest, False, f"{undeclared}, and {headers} could not be found: "
                                        "the name may be declared there", nest.loc))
            continue
        errs = manager.errors_of(nest)
        plan = manager.result("plan", nest)
        dep = manager.result("dependence", nest)
        perf = manager.result("performance", nest)
        if plan is None:
            reason = errs[-1].message if errs else "not mapped"
            outcomes.append(NestOutcome(nest, False, reason, nest.loc, dependence=dep))
            continue
        try:
            code = build_nest_code(nest, plan)
        except (CodegenError, ValueError) as e:
            outcomes.append(NestOutcome(nest, False, str(e), nest.loc, plan=plan, dependence=dep))
            continue
        except Exception as e:  # a bug in code generation must cost one nest, not the file
            outcomes.append(NestOutcome(nest, False, f"internal error in code generation: {type(e).__name__}: {e}",
                                        nest.loc, plan=plan, dependence=dep))
            continue
        outcomes.append(NestOutcome(nest, True, "", nest.loc, code, plan, dep, perf))
    return program, outcomes


def _undeclared_use(nest: Nest, declared: set[str]) -> str | None:
    """Why the nest uses a name the file does not declare (lowering flags variables; calls are checked here), or None."""
    flag = next((f for f in nest.flags if f.code in ("unknown-identifier", "unknown-array")), None)
    if flag is not None:
        return f"{flag.message} (line {flag.loc.line})"
    call = next(((s, name) for s in nest.root.statements() for name in s.calls if name not in declared), None)
    if call is not None:
        return f"'{call[1]}' is not declared (called at line {call[0].loc.line})"
    return None


def read_source(path: str) -> str:
    return Path(path).read_bytes().decode("utf-8", "surrogateescape")


def host_name_for(output_name: str) -> str:
    base = output_name[:-3] if output_name.endswith(".cu") else output_name
    return base + ".host.c"


def port_file(path: str, options: PreprocessOptions, manager: PassManager, output_name: str,
              split: bool | None = None, left: dict[str, str] | None = None) -> PortResult:
    """Port a file; split=None splits only when the host code cannot be compiled as C++.  `left`: nests to leave
    on the CPU although they are portable (by name, with why: port --worth)."""
    with manager.active():     # what the analyses' helpers keep lives as long as the manager (pipeline.memo)
        return _port_file(path, options, manager, output_name, split, left)


def _port_file(path: str, options: PreprocessOptions, manager: PassManager, output_name: str,
               split: bool | None = None, left: dict[str, str] | None = None) -> PortResult:
    warnings: list[C2GPUError] = []

    def warn(w: C2GPUError) -> None:
        warnings.append(w)
        print_warning(w)
    program, outcomes = analyse_for_port(path, options, manager, warn=warn)
    outcomes = [replace(o, ported=False, reason=left[o.nest.name], left=left[o.nest.name], code=None)
                if o.ported and o.nest.name in (left or {}) else o for o in outcomes]
    source = read_source(path)
    reasons = host_not_cxx(program, path, options) if split is not True else []
    if split is None:
        split = bool(reasons)
    if split:
        cu, host = render_split(path, source, outcomes, output_name, host_name_for(output_name))
        result = PortResult(path, cu, outcomes)
        result.host_text = host
        result.split_reasons = reasons or ["--split was given"]
        result.warnings = warnings
        result.notes = program.diagnostics
        return result
    return PortResult(path, render_port(path, source, outcomes, output_name), outcomes, warnings=warnings,
                      notes=program.diagnostics)


