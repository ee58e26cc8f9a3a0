"""`c2gpu port`: the user's file with each ported nest replaced by a call to its host wrapper.

The analysis is the port pipeline's (ending with the plan pass); code generation and splicing are
c2gpu.codegen's.  This module puts them together for a whole file: which nests are ported (and why not),
the .cu text, and the split into .cu + .c when the host code cannot be compiled as C++.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .codegen import CodegenError, NestCode, build_nest_code, c_only_constructs, render_port, render_split
from .frontend import PreprocessOptions, load_program
from .ir import Loc, Nest
from .pipeline import PassManager
from .pipelines import PORT

PIPELINE = list(PORT.passes)


@dataclass
class NestOutcome:
    nest: Nest
    ported: bool
    reason: str = ""
    loc: Loc | None = None
    code: NestCode | None = None
    plan: object = None             # c2gpu.plan.NestPlan, when the nest was mapped
    dependence: object = None
    performance: object = None      # c2gpu.perf NestPerformance, when a GPU was given


@dataclass
class PortResult:
    source_path: str
    text: str                                   # the .cu file
    outcomes: list[NestOutcome] = field(default_factory=list)
    host_text: str | None = None                # split mode: the user's C file calling the wrappers
    split_reasons: list[str] = field(default_factory=list)

    @property
    def ported(self) -> list[NestOutcome]:
        return [o for o in self.outcomes if o.ported]


def analyse_for_port(path: str, options: PreprocessOptions, manager: PassManager, source: str | None = None):
    """The program after the port pipeline, and each nest's outcome: its code, or why it is not ported."""
    if "plan" not in manager.available or "plan" not in {p.name for p in manager.steps}:
        raise ValueError("the port needs a pipeline that ends with the 'plan' pass")
    program = load_program(path, options, source=source)
    program = manager.run(program)
    outcomes = []
    for nest in program.nests:
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


def read_source(path: str) -> str:
    return Path(path).read_bytes().decode("utf-8", "surrogateescape")


def host_name_for(output_name: str) -> str:
    base = output_name[:-3] if output_name.endswith(".cu") else output_name
    return base + ".host.c"


def port_file(path: str, options: PreprocessOptions, manager: PassManager, output_name: str,
              split: bool | None = None) -> PortResult:
    """Port a file; split=None splits only when the host code cannot be compiled as C++."""
    program, outcomes = analyse_for_port(path, options, manager)
    source = read_source(path)
    reasons = c_only_constructs(program)
    if split is None:
        split = bool(reasons)
    if split:
        cu, host = render_split(path, source, outcomes, output_name, host_name_for(output_name))
        result = PortResult(path, cu, outcomes)
        result.host_text = host
        result.split_reasons = reasons or ["--split was given"]
        return result
    return PortResult(path, render_port(path, source, outcomes, output_name), outcomes)


