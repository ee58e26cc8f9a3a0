"""Pass pipeline: passes declare what they require, use and provide; the manager orders, caches and times them;
the named pipelines (at the end) say which passes each command runs.

A pass works on one nest at a time, so a failure in one nest is recorded for
that nest and never stops the others.  Results are cached per nest object (by
identity, not by name: nests of different files share names such as
`main@29`, and one manager analyses them all).  A transform pass returns a new
`Nest`; an analysis of the old nest carries over to the new one only when the
pass lists it in `preserves` and every analysis it was computed from carries
over too (modelled on LLVM's new pass manager, which numba records but never
enforces: we enforce it, transitively); a transform that returns its input
unchanged keeps everything.  A pass reads only the analyses it
declares, so the declarations are the dependence graph invalidation follows.
"""
from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar
from dataclasses import field, replace
from typing import Any, Callable, Iterable

from .ir import Flag, Loc, Nest, Program
from .records import dataclass


_ACTIVE: ContextVar["PassManager | None"] = ContextVar("c2gpu_pass_manager", default=None)


def memo(owner: object, table: str) -> dict:
    """The table `table` of what was computed for `owner` (a nest, a kernel's view of one, loops), kept by the
    pass manager at work (`PassManager.active`) for as long as it lives, by the object's identity: the analyses'
    helpers that many passes, the block-size search and the reports ask again (promotions, tile regions, sector
    counts, ...) keep their answers there, so that nothing outlives the analysis that computed it.  Called
    outside a manager's work (a helper called on its own), an empty table that nothing keeps.  (Pure functions
    of values, which hold for any IR: a GPU description, an isl text, keep functools.lru_cache.)"""
    manager = _ACTIVE.get()
    return {} if manager is None else manager.memo_table(owner, table)


def at_work() -> "PassManager | None":
    """The pass manager at work (PassManager.active), or None."""
    return _ACTIVE.get()


class PipelineError(Exception):
    """A pipeline that cannot be built (missing provider, unknown pass, cycle), or a pass that reads an
    analysis it did not declare: a bug in a pass, the same for every input, so it stops the run."""


class PassFailed(Exception):
    """Raised inside a pass to refuse a nest with a user-facing reason.

    code: a stable code of c2gpu.diagnostics.CODES, which users filter and silence on.
    loc:  the line that blocks (None: the nest's first line).
    """

    def __init__(self, message: str, *, code: str = "pass-failed", loc: Loc | None = None):
        super().__init__(message)
        self.message, self.code, self.loc = message, code, loc

    def flag(self, nest: Nest) -> Flag:
        return Flag(self.code, self.message, self.loc or nest.loc)


class _Repeated(PassFailed):
    """A refusal already recorded, raised again for every pass that needs the refused analysis."""


class Pass:
    """Base class for built-in and third-party passes.

    name:        unique name (`c2gpu passes` lists it).
    description: one line for humans.
    requires:    analyses `run` reads through `ctx.get` (always computed first; a refusal there refuses this).
    uses:        analyses `run` reads when this pipeline computes them (`ctx.get_optional`, `ctx.available`).
    provides:    analysis names this pass computes (analysis passes provide exactly one).
    transforms:  True when `run` returns a new Nest instead of an analysis result.
    preserves:   for transforms, the analyses that stay valid ("*" = all).
    """
    name: str = ""
    description: str = ""
    requires: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    provides: tuple[str, ...] = ()
    transforms: bool = False
    preserves: tuple[str, ...] = ()

    def run(self, nest: Nest, ctx: "PassContext") -> Any:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class PassTiming:
    """Time spent in a pass (without the passes it asked for: each is timed on its own) or in a phase of the
    driver around the passes (loading the file, the CPU baseline, the break-even search, the reports)."""
    name: str
    seconds: float = 0.0
    runs: int = 0
    kind: str = "pass"       # "pass" or "phase"


@dataclass(frozen=True)
class PassContext:
    """What a running pass sees: the program, options, and the analyses it declared, on demand."""
    program: Program
    options: dict[str, Any]
    manager: "PassManager"
    running: Pass | None = None     # the pass being run: it may read what it declared, nothing else

    def get(self, analysis: str, nest: Nest) -> Any:
        """A declared analysis of `nest`, computed on first use; its refusal refuses the caller too."""
        self._check_declared(analysis)
        return self.manager.analysis(analysis, nest, self)

    def get_optional(self, analysis: str, nest: Nest) -> Any:
        """A declared analysis of `nest` when this pipeline computes it, else None; None too when it refused
        `nest` (the refusal is already among the nest's errors)."""
        self._check_declared(analysis)
        if not self.available(analysis):
            return None
        try:
            return self.manager.analysis(analysis, nest, self)
        except PassFailed:
            return None

    def available(self, analysis: str) -> bool:
        """Whether a pass of this pipeline (a step, or one a step requires) computes `analysis`."""
        return analysis in self.manager.scheduled

    def _check_declared(self, analysis: str) -> None:
        p = self.running
        if p is not None and analysis not in p.requires and analysis not in p.uses:
            raise PipelineError(f"pass '{p.name}' reads '{analysis}' without declaring it in `requires` or `uses`")


@dataclass(eq=False)
class _NestRecord:
    """What the manager knows of one nest object; holding the nest keeps its id from being reused."""
    nest: Nest
    results: dict[str, Any] = field(default_factory=dict)
    refusals: dict[str, PassFailed] = field(default_factory=dict)
    inputs: dict[str, tuple[str, ...]] = field(default_factory=dict)   # analysis -> what its pass declared
    errors: list[tuple[str, Flag]] = field(default_factory=list)       # (the analysis or transform, its error)


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
        self.scheduled: frozenset[str] = frozenset(a for n in self.order() for a in self.available[n].provides)
        self._records: dict[int, _NestRecord] = {}
        # (transform, id of its input) -> (input, output; None when it refused): a later run of the same
        # program (recompute) finds the nests, and what is known of them, that this one made
        self._transformed: dict[tuple[str, int], tuple[Nest, Nest | None]] = {}
        self.timings: dict[str, PassTiming] = {}
        self.progress: Callable[[str], None] | None = None   # told what is being done (the command line's ticker)
        self._nested: list[float] = []      # time of the passes a running pass asked for, innermost last
        self._running: list[tuple[Pass, Nest]] = []     # the passes running, innermost last
        self.print_after: set[str] = set()
        self.dump: Callable[[str, Nest], None] | None = None
        # id of an IR object -> (the object, table name -> that table): what the analyses' helpers computed for
        # it (memo); holding the object keeps its id from being reused
        self._memos: dict[int, tuple[object, dict[str, dict]]] = {}

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
        # a used analysis may have no provider (then it is unavailable), but it must not close a cycle
        for req in p.requires + tuple(u for u in p.uses if u in self.providers):
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
        done = []
        with self.active():
            for k, nest in enumerate(program.nests):
                if self.progress is not None:
                    self.progress(f"nest {k + 1} of {len(program.nests)}, {nest.name}")
                done.append(self.run_nest(nest, ctx))
        return replace(program, nests=tuple(done))

    @contextlib.contextmanager
    def active(self):
        """Make this manager the one at work (`memo` keeps its tables here): `run` is, and so is a driver while it
        builds the reports and the port from the run's results."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    def memo_table(self, owner: object, table: str) -> dict:
        entry = self._memos.get(id(owner))
        if entry is None or entry[0] is not owner:
            entry = self._memos[id(owner)] = (owner, {})
        return entry[1].setdefault(table, {})

    def run_nest(self, nest: Nest, ctx: PassContext) -> Nest:
        for p in self.steps:
            try:
                if p.transforms:
                    done = self._transformed.get((p.name, id(nest)))
                    if done is not None and done[0] is nest:
                        nest = done[1] or nest      # run before (recompute): its nest, or its refusal, stands
                    else:
                        self._transformed[(p.name, id(nest))] = (nest, None)
                        new = self._timed(p, nest, ctx)
                        self._transformed[(p.name, id(nest))] = (nest, new)
                        self._carry_over(nest, new, p)
                        nest = new
                else:
                    for a in p.provides:
                        self.analysis(a, nest, ctx, provider=p)
            except _Repeated:
                pass                    # already recorded when the analysis first failed
            except PassFailed as e:
                self._record(nest).errors.append((p.name, e.flag(nest)))
            except PipelineError:
                raise                   # a pass reading what it did not declare: wrong for every nest
            except Exception as e:  # a bug in one pass must not stop other nests
                source = p.name if p.transforms else p.provides[0]
                self._record(nest).errors.append((source, Flag(
                    "internal-error", f"internal error in pass '{p.name}': {type(e).__name__}: {e}", nest.loc)))
            if p.name in self.print_after and self.dump:
                self.dump(p.name, nest)
        return nest

    def analysis(self, name: str, nest: Nest, ctx: PassContext, provider: Pass | None = None) -> Any:
        record = self._record(nest)
        if name in record.refusals:
            raise record.refusals[name]     # a refusal is an answer too: not recomputed, not reported twice
        if name in record.results:
            return record.results[name]
        p = provider or self.providers.get(name)
        if p is None:
            raise PipelineError(f"no pass provides '{name}'")
        try:
            result = self._timed(p, nest, ctx)
        except _Repeated as e:              # an analysis it needs refused the nest: reported there, once
            record.refusals[name], record.inputs[name] = e, p.requires + p.uses
            raise
        except PassFailed as e:
            record.refusals[name] = _Repeated(e.message, code=e.code, loc=e.loc)
            record.inputs[name] = p.requires + p.uses
            record.errors.append((name, e.flag(nest)))
            raise record.refusals[name] from None
        record.results[name], record.inputs[name] = result, p.requires + p.uses
        return result

    def _timed(self, p: Pass, nest: Nest, ctx: PassContext) -> Any:
        t0 = time.perf_counter()
        self._nested.append(0.0)
        self._running.append((p, nest))
        try:
            return p.run(nest, replace(ctx, running=p))
        finally:
            self._running.pop()
            elapsed = time.perf_counter() - t0
            inner = self._nested.pop()
            if self._nested:
                self._nested[-1] += elapsed
            t = self.timings.setdefault(p.name, PassTiming(p.name))
            t.seconds += elapsed - inner
            t.runs += 1

    @contextlib.contextmanager
    def phase(self, name: str):
        """Time a phase of the work around the passes (`--timings` shows it with the passes)."""
        if self.progress is not None:
            self.progress(name)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            t = self.timings.setdefault(f"phase {name}", PassTiming(name, kind="phase"))
            t.seconds += time.perf_counter() - t0
            t.runs += 1

    def _record(self, nest: Nest) -> _NestRecord:
        return self._records.setdefault(id(nest), _NestRecord(nest))

    def _carry_over(self, old: Nest, new: Nest, p: Pass) -> None:
        """Move what is known of `old` to `new`: errors always, analyses that `p` preserves together with
        everything they were computed from, and what the pass itself found out about `new`.  A transform that
        returns the very nest it was given changed nothing (nests are immutable): everything stays."""
        if new is old:
            return                      # nothing changed: everything known stays true
        # a rewrite that keeps the nest as written (Nest.as_written) keeps what is known of it too: the reports
        # check the OpenMP directives on the loops as written, with its dependences (the nest outlives the run,
        # so its id is not reused)
        record = self._records.get(id(old)) if new.as_written is old else self._records.pop(id(old), None)
        if record is None:
            return
        valid: dict[str, bool] = {}

        def survives(a: str) -> bool:
            if a not in valid:
                valid[a] = False        # guards a cycle of declarations; built pipelines have none
                valid[a] = ("*" in p.preserves or a in p.preserves) and \
                    all(survives(d) for d in record.inputs[a] if d in record.inputs)
            return valid[a]

        kept = [a for a in record.inputs if survives(a)]
        mine = self._records.get(id(new)) or _NestRecord(new)     # the pass may have analysed the new nest
        self._records[id(new)] = _NestRecord(
            new, {**{a: record.results[a] for a in kept if a in record.results}, **mine.results},
            {**{a: record.refusals[a] for a in kept if a in record.refusals}, **mine.refusals},
            {**{a: record.inputs[a] for a in kept}, **mine.inputs}, record.errors + mine.errors)

    # -- answers --------------------------------------------------------------------
    def result(self, name: str, nest: Nest) -> Any:
        """A cached analysis result, or None when it was not computed (or failed) for this nest."""
        record = self._records.get(id(nest))
        return None if record is None else record.results.get(name)

    def errors_of(self, nest: Nest) -> list[Flag]:
        """Why passes refused `nest` (the nest the run returned), in the order the refusals happened."""
        record = self._records.get(id(nest))
        return [] if record is None else [flag for _, flag in record.errors]

    @property
    def errors(self) -> dict[str, list[Flag]]:
        """errors_of by nest name, for callers not yet moved to errors_of: a name names one nest only within
        one program, so with several programs the lists of equally named nests are merged."""
        out: dict[str, list[Flag]] = {}
        for record in self._records.values():
            if record.errors:
                out.setdefault(record.nest.name, []).extend(flag for _, flag in record.errors)
        return out

    def forget(self, nest: Nest) -> None:
        """Drop what is known of `nest` (a transform's trial it did not keep), its errors and memo included."""
        self._records.pop(id(nest), None)
        self._memos.pop(id(nest), None)

    def clear(self) -> None:
        """Forget every nest (results, refusals, errors, memo tables); timings stay."""
        self._records.clear()
        self._transformed.clear()
        self._memos.clear()

    def running(self) -> tuple[Pass, Nest] | None:
        """The innermost pass running now and the nest it runs on; None between passes."""
        return self._running[-1] if self._running else None

    def recompute(self, stale: Iterable[tuple[Pass, Nest] | None]) -> None:
        """Prepare the next `run` of the same program to compute again what the analyses in `stale` (as
        `running` named them while they ran) computed from an input that has changed since (ptxas's register
        counts, compiled in between: c2gpu.perf.registers.run_with_one_nvcc_call), with every analysis
        computed from them, their errors included; an analysis that failed without an answer (an internal
        error) runs again too.  Everything else stays: the next run finds the same nests (transforms are
        remembered) and what is known of them, as a run from scratch would compute it.  A transform among
        `stale` changes nests, and a read outside any pass (None) cannot be traced: then everything is
        forgotten (clear)."""
        drop: dict[int, set[str]] = {}
        for who in stale:
            if who is None or who[0].transforms:
                self.clear()
                return
            drop.setdefault(id(who[1]), set()).update(who[0].provides)
        for record in self._records.values():
            gone = set(drop.get(id(record.nest), ()))
            gone |= {source for source, _ in record.errors if source in self.providers
                     and source not in record.results and source not in record.refusals}
            changed = True
            while changed:                 # and whatever was computed from them
                more = {a for a, used in record.inputs.items() if a not in gone and gone.intersection(used)}
                gone |= more
                changed = bool(more)
            for a in gone:
                record.results.pop(a, None)
                record.refusals.pop(a, None)
                record.inputs.pop(a, None)
            record.errors = [(source, flag) for source, flag in record.errors if source not in gone]


# ------------------------------------------------------------------ the named pipelines
# The named pipelines: which passes each command runs, in order, with what each is for.
# One place for them (numba's DefaultPassBuilder habit): the command line, the Python API and the advisor's
# break-even probes take their pass lists from here.  A pass added to the port pipeline (say a pass that
# finalizes the plan before `performance`) is one line in `PORT`.


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
