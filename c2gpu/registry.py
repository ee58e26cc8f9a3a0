"""Pass discovery through the entry-point group `c2gpu.passes`.

Built-in passes are registered in c2gpu's own pyproject.toml under the same
group as third-party ones, so both load the same way (flake8's plugin finder
does the same).  A plugin that fails to load is reported with its name rather
than crashing the tool.

Scanning the installed distributions' entry points costs about 0.15 s, on every
run: a pipeline made only of built-in passes (`discover(wanted)`) loads them
from BUILTIN, the same table as pyproject.toml's entry points
(tests/test_registry.py checks it), and the scan happens only when a requested
pass is not built in, or when every pass is listed (`discover()`).
"""
from __future__ import annotations

from typing import Iterable

from .pipeline import Pass
from .records import dataclass

GROUP = "c2gpu.passes"

# The built-in passes, as pyproject.toml registers them; also used when c2gpu runs without being installed
# (no entry-point metadata).
BUILTIN = {
    "normalize": "c2gpu.passes.normalize:NormalizeLoops",
    "dependence": "c2gpu.passes.dependence:DependenceAnalysis",
    "mapping": "c2gpu.passes.mapping:MapLoops",
    "shared-memory": "c2gpu.passes.shared_memory:SharedMemory",
    "kernel-analysis": "c2gpu.passes.kernel_analyses:KernelAnalyses",
    "coalescing": "c2gpu.passes.kernel_analyses:Coalescing",
    "ilp": "c2gpu.passes.kernel_analyses:ILP",
    "intensity": "c2gpu.passes.kernel_analyses:Intensity",
    "registers": "c2gpu.passes.kernel_analyses:RegisterCount",
    "occupancy": "c2gpu.passes.kernel_analyses:OccupancyPass",
    "traffic": "c2gpu.passes.kernel_analyses:Traffic",
    "performance": "c2gpu.passes.kernel_analyses:Performance",
    "plan": "c2gpu.passes.finalize_plan:FinalizePlan",
    "reorder": "c2gpu.passes.reorder:Reorder",
}


@dataclass(frozen=True)
class RegisteredPass:
    """A pass found through the entry points (or BUILTIN), with the package and entry point it came from."""
    instance: Pass
    origin: str          # "c2gpu[normalize]" or "thirdparty-pkg[mypass]"


@dataclass(frozen=True)
class LoadFailure:
    """A pass that could not be loaded: where it was registered and what went wrong."""
    origin: str
    message: str


def _load(ref: str):
    module, _, attr = ref.partition(":")
    obj = __import__(module, fromlist=[attr])
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def discover(wanted: Iterable[str] | None = None) -> tuple[list[RegisteredPass], list[LoadFailure]]:
    """Every registered pass; with `wanted` (the pass names a pipeline asks for) only the built-in ones when
    they are all built in (no entry-point scan)."""
    found: list[RegisteredPass] = []
    failures: list[LoadFailure] = []
    if wanted is not None and set(wanted) <= set(BUILTIN):
        items = [(name, ref, "c2gpu", None) for name, ref in BUILTIN.items()]
    else:
        # start-up: ~10 ms, which a pipeline of built-in passes only (every run but `c2gpu passes`) never needs
        from importlib import metadata
        eps = list(metadata.entry_points(group=GROUP))
        seen_builtin = any((ep.dist and ep.dist.name == "c2gpu") for ep in eps)
        items = [(ep.name, ep.value, ep.dist.name if ep.dist else "?", ep) for ep in eps]
        if not seen_builtin:
            items += [(name, ref, "c2gpu", None) for name, ref in BUILTIN.items()]
    for name, ref, dist, ep in sorted(items, key=lambda t: (t[2] != "c2gpu", t[2], t[0])):
        origin = f"{dist}[{name}]"
        try:
            obj = ep.load() if ep is not None else _load(ref)
            inst = obj() if isinstance(obj, type) else obj
            if not isinstance(inst, Pass) or not inst.name:
                raise TypeError("entry point is not a c2gpu Pass with a name")
        except Exception as e:  # a broken plugin is reported, not fatal
            failures.append(LoadFailure(origin, f"{type(e).__name__}: {e}"))
            continue
        if any(r.instance.name == inst.name for r in found):
            failures.append(LoadFailure(origin, f"a pass named '{inst.name}' is already registered"))
            continue
        found.append(RegisteredPass(inst, origin))
    return found, failures


def available_passes() -> list[Pass]:
    return [r.instance for r in discover()[0]]
