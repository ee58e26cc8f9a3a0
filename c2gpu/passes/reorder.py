"""The reorder pass: when a nest maps to no threads, or only with loops running in one thread between
launches, its statements may run in another order that maps better: the order isl's scheduler finds
(c2gpu/transform/schedule.py, lu's right-looking form), or fronts of two nested loops that both carry dependences
(c2gpu/transform/wavefront.py, seidel-2d).  When it maps well, adjacent loop nests in a host loop may run as
one nest, one kernel where there were several (c2gpu/transform/fusion.py, fdtd-2d).  The rewritten nest is C
again, analysed from the start; it is kept only when its plan is better, and the port is checked against the
original C like any other."""
from __future__ import annotations

from dataclasses import replace

from c2gpu.ir import Nest
from c2gpu.pipeline import Pass, PassFailed
from c2gpu.planning.plan import kernels_in
from c2gpu.transform.fusion import fused
from c2gpu.transform.schedule import rescheduled
from c2gpu.transform.wavefront import find, rewritten

from .mapping import Mapper


class Reorder(Pass):
    name = "reorder"
    description = ("run the statements in another order when that maps more to threads: isl's scheduler, or "
                   "wavefronts of two loops that both carry dependences (a host loop over the fronts)")
    requires = ("dependence",)
    transforms = True
    preserves = ()

    def run(self, nest: Nest, ctx) -> Nest:
        frontend = ctx.program.frontend
        if ctx.options.get("map") or frontend is None or not frontend.describes(nest):
            return nest                  # --map names the loops as written; a rewrite would rename them
        deps = ctx.get("dependence", nest)
        plain = _plan(nest, deps, ctx.options)
        if plain is not None and not _one_thread_loops(plain, nest):
            return _fewer_kernels(nest, deps, plain, ctx)
        for rewrite in (_wavefront, rescheduled):
            new = rewrite(nest, deps, frontend.describe_again)
            if new is None:
                continue
            new = replace(new, as_written=nest.as_written or nest)
            try:
                better = _plan(new, ctx.get("dependence", new), ctx.options)
            except PassFailed:
                better = None
            if better is not None and not _one_thread_loops(better, new):
                return new
            ctx.manager.forget(new)
        return nest


def _fewer_kernels(nest: Nest, deps, plain, ctx) -> Nest:
    """The nest with adjacent loop nests fused when that plans fewer kernels, none running a loop in one
    thread; else the nest."""
    new = fused(nest, deps, ctx.program.frontend.describe_again)
    if new is None:
        return nest
    new = replace(new, as_written=nest.as_written or nest)
    try:
        better = _plan(new, ctx.get("dependence", new), ctx.options)
    except PassFailed:
        better = None
    if better is not None and not _one_thread_loops(better, new) and len(kernels_in(better)) < len(kernels_in(plain)):
        return new
    ctx.manager.forget(new)
    return nest


def _wavefront(nest: Nest, deps, describe_again) -> Nest | None:
    wf = find(nest, deps)
    return None if wf is None else rewritten(nest, wf, describe_again)


def _plan(nest: Nest, deps, options):
    """The kernels and host loops the mapping would choose, or None when it refuses the nest."""
    try:
        return Mapper(nest, deps, options).plan_root()
    except PassFailed:
        return None


def _one_thread_loops(items, nest: Nest) -> bool:
    """Whether a one-thread kernel of the plan runs a loop (a sequential computation, not a few statements)."""
    return any(k.serial and k.inner_loops({lp.lid: lp for lp in (k.view or nest).loops()}) for k in kernels_in(items))
