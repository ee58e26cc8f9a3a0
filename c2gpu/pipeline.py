"""Pass pipeline: passes declare what they require and provide; the manager orders, caches and times them.

A pass works on one nest at a time, so a failure in one nest is recorded for
that nest and never stops the others.  Analysis passes return a result that is
cached by (analysis name, nest name); a transform pass returns a new `Nest`
and the cache entries for that nest are dropped unless the pass lists them in
`preserves` (modelled on LLVM's new pass manager, which numba records but never
enforces: we enforce it).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

from .ir import Flag, Nest, Program


class PipelineError(Exception):
    """A pipeline that cannot be built (missing provider, unknown pass, cycle)."""


class PassFailed(Exception):
    """Raised inside a pass to refuse a nest with a user-facing reason."""


class _Repeated(PassFailed):
    """A cached refusal, raised again for every pass that needs the failed analysis."""


class Pass:
    """Base class for built-in and third-party passes.

    name:        unique name (`c2gpu passes` lists it).
    description: one line for humans.
    requires:    analysis names whose results `run` reads through `ctx.get`.
    provides:    analysis names this pass computes (analysis passes provide exactly one).
    transforms:  True when `run` returns a new Nest instead of an analysis result.
    preserves:   for transforms, the analyses that stay valid ("*" = all).
    """
    name: str = ""
    description: str = ""
    requires: tuple[str, ...] = ()
    provides: tuple[str, ...] = ()
    transforms: bool = False
    preserves: tuple[str, ...] = ()

    def run(self, nest: Nest, ctx: "PassContext") -> Any:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class PassTiming:
    name: str
    seconds: float = 0.0
    runs: int = 0


@dataclass
class PassContext:
    """What a running pass sees: the program, options, and other analyses on demand."""
    program: Program
    options: dict[str, Any]
    manager: "PassManager"

    def get(self, analysis: str, nest: Nest) -> Any:
        return self.manager.analysis(analysis, nest, self)


class PassManager:
    def __init__(self, available: Iterable[Pass], pipeline: Iterable[str], options: dict[str, Any] | None = None):
        self.available: dict[str, Pass] = {}
        for p in available:
            if p.name in self.available:
                raise PipelineError(f"two passes are named '{p.name}'")
            self.available[p.name] = p
        self.providers: dict[str, Pass] = {}
        for p in self.available.values():
            for a in p.provides:
                if not p.transforms:
                    self.providers.setdefault(a, p)
        self.options = options or {}
        self.steps = self.build(list(pipeline))
        self.cache: dict[tuple[str, str], Any] = {}
        self.failed: dict[tuple[str, str], PassFailed] = {}
        self.timings: dict[str, PassTiming] = {}
        self.errors: dict[str, list[Flag]] = {}
        self.print_after: set[str] = set()
        self.dump: Callable[[str, Nest], None] | None = None

    # -- building ---------------------------------------------------------------
    def build(self, names: list[str]) -> list[Pass]:
        """Resolve names to passes and check every requirement has a provider, at build time."""
        steps: list[Pass] = []
        for n in names:
            if n not in self.available:
                known = ", ".join(sorted(self.available))
                raise PipelineError(f"unknown pass '{n}' (available: {known})")
            steps.append(self.available[n])
        for p in steps:
            self._check_requirements(p, [])
        return steps

    def _check_requirements(self, p: Pass, chain: list[str]) -> None:
        for req in p.requires:
            provider = self.providers.get(req)
            if provider is None:
                raise PipelineError(f"pass '{p.name}' requires '{req}', which no registered pass provides")
            if provider.name in chain or provider is p:
                raise PipelineError("passes require each other in a cycle: " + " -> ".join(chain + [p.name, provider.name]))
            self._check_requirements(provider, chain + [p.name])

    def order(self) -> list[str]:
        """The order passes will run in: each step preceded by the analyses it needs (first use)."""
        seen: list[str] = []

        def visit(p: Pass) -> None:
            for req in p.requires:
                visit(self.providers[req])
            if p.name not in seen or p.transforms:
                seen.append(p.name)

        for p in self.steps:
            visit(p)
        return seen

    # -- running ------------------------------------------------------------------
    def run(self, program: Program) -> Program:
        ctx = PassContext(program, self.options, self)
        nests = []
        for nest in program.nests:
            nests.append(self.run_nest(nest, ctx))
        return replace(program, nests=tuple(nests))

    def run_nest(self, nest: Nest, ctx: PassContext) -> Nest:
        for p in self.steps:
            try:
                if p.transforms:
                    new = self._timed(p, nest, ctx)
                    self._invalidate(nest.name, p)
                    nest = new
                else:
                    for a in p.provides:
                        self.analysis(a, nest, ctx, provider=p)
            except _Repeated:
                pass                    # already recorded when the analysis first failed
            except PassFailed as e:
                self._fail(nest, p, str(e))
            except Exception as e:  # a bug in one pass must not stop other nests
                self._fail(nest, p, f"internal error in pass '{p.name}': {type(e).__name__}: {e}")
            if p.name in self.print_after and self.dump:
                self.dump(p.name, nest)
        return nest

    def _fail(self, nest: Nest, p: Pass, message: str) -> None:
        self.errors.setdefault(nest.name, []).append(Flag("pass-failed", message, nest.loc))

    def analysis(self, name: str, nest: Nest, ctx: PassContext, provider: Pass | None = None) -> Any:
        key = (name, nest.name)
        if key in self.failed:
            raise self.failed[key]      # a refusal is an answer too: not recomputed, not reported twice
        if key in self.cache:
            return self.cache[key]
        p = provider or self.providers.get(name)
        if p is None:
            raise PipelineError(f"no pass provides '{name}'")
        try:
            result = self._timed(p, nest, ctx)
        except PassFailed as e:
            self.failed[key] = _Repeated(str(e))
            self.errors.setdefault(nest.name, []).append(Flag("pass-failed", str(e), nest.loc))
            raise self.failed[key] from None
        self.cache[key] = result
        return result

    def _timed(self, p: Pass, nest: Nest, ctx: PassContext) -> Any:
        t0 = time.perf_counter()
        try:
            return p.run(nest, ctx)
        finally:
            t = self.timings.setdefault(p.name, PassTiming(p.name))
            t.seconds += time.perf_counter() - t0
            t.runs += 1

    def _invalidate(self, nest_name: str, p: Pass) -> None:
        if "*" in p.preserves:
            return
        for store in (self.cache, self.failed):
            for key in [k for k in store if k[1] == nest_name and k[0] not in p.preserves]:
                del store[key]

    def result(self, name: str, nest: Nest) -> Any:
        """A cached analysis result, or None when it was not computed (or failed) for this nest."""
        return self.cache.get((name, nest.name))
