"""The named pipelines: which passes each command runs, in order, with what each is for.

One place for them (numba's DefaultPassBuilder habit): the command line, the Python API and the advisor's
break-even probes take their pass lists from here.  A pass added to the port pipeline (say a pass that
finalizes the plan before `performance`) is one line in `PORT`.
"""
from __future__ import annotations
from .records import dataclass



@dataclass(frozen=True)
class Pipeline:
    """A named pipeline: the passes a command runs, in order, and what it is for."""
    name: str
    passes: tuple[str, ...]
    description: str


ANALYZE = Pipeline("analyze", ("normalize",), "the loop nests as read, normalized (`analyze` without --gpu)")
PORT = Pipeline("port", ("normalize", "dependence", "reorder", "mapping", "shared-memory", "plan"),
                "dependences (and another statement order when that maps more: isl's scheduler, wavefronts), loops "
                "mapped to GPU threads, shared-memory tiles, the finalized plan: what port, emit and verify need")

PIPELINES: dict[str, Pipeline] = {p.name: p for p in (ANALYZE, PORT)}


def with_performance(passes: tuple[str, ...]) -> tuple[str, ...]:
    """`passes` with what any run with a GPU adds when missing: the shared-memory tiles the model compares, the
    plan it finalizes (the reports' kernels and CUDA) and the performance pass itself, so that it predicts the
    kernels and the advisor can give a verdict.  A pipeline that normalizes also gets the reorder pass (isl's
    scheduler, wavefronts) right after it, so that the verdict is about the nest `port` would port."""
    if "normalize" in passes and "reorder" not in passes:
        at = passes.index("normalize") + 1
        passes = passes[:at] + ("reorder",) + passes[at:]
    return passes + tuple(p for p in ("shared-memory", "plan", "performance") if p not in passes)
