"""Thread and launch geometry of a kernel (GeometryMixin, a part of KernelAnalysis in c2gpu/perf/profile.py): the
grid of a block shape, the threads taking turns over a loop, and the lanes of sampled warps (the mapped variables'
values, a statement's in-thread loops over a window and its active lanes) the coalescing and guard estimates read."""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..ir import Loop, Statement
from ..records import dataclass
from ..intexpr import EvaluationError, vector
from .sampling import loop_span_np, origin_values, poly_np, sample_blocks, sym_np, warp_lanes


@dataclass(frozen=True)
class Geometry:
    """The launch shape of a kernel at given sizes: grid and block, and the threads needed against those
    launched."""
    extents: tuple[int, int, int]  # threads needed per dimension (largest trip count)
    grid: tuple[int, int, int]
    blocks: int
    block: tuple[int, int, int]
    threads: int                   # useful threads (iterations of the mapped loops) per launch
    launched_threads: int


class GeometryMixin:
    """The geometry part of KernelAnalysis (reads its kernel, env, host and mapped loops, threads and executions)."""

    @cached_property
    def turn_loops(self) -> list:
        """The mapped loops whose iterations the threads along their dimension take in turns (MappedLoop.turns)."""
        return [m for m in self.kernel.loops if m.turns]

    def _turn_threads(self, m, env) -> int:
        """Threads along mapped loop `m`'s dimension that have iterations of it (all of them: one per thread)."""
        trips = max(1, _max_trip(self.mapped_path, self.by_id[m.lid], env))
        return min(m.turns, trips) if m.turns else trips

    # ------------------------------------------------------------------ geometry
    def geometry(self, block: tuple[int, int, int]) -> Geometry:
        block = tuple(block) + (1,) * (3 - len(block))
        key = ("geometry", block)      # asked for by every analysis of a block (memory, occupancy, profile, ...)
        if key not in self._block_cache:
            self._block_cache[key] = self._geometry(block)
        return self._block_cache[key]

    def _geometry(self, block: tuple[int, int, int]) -> Geometry:
        extents = [1, 1, 1]
        env = dict(self.env)
        for h in self.host_path:     # a host loop variable the bounds use: its middle iteration
            env[h.var] = _mid(h, env)
        for m in self.kernel.loops:
            extents["xyz".index(m.dim)] = self._turn_threads(m, env)
        grid = tuple(-(-e // b) for e, b in zip(extents, block))
        blocks = grid[0] * grid[1] * grid[2]
        return Geometry(tuple(extents), grid, blocks, tuple(block), int(round(self.threads)),
                        blocks * block[0] * block[1] * block[2])

    # ------------------------------------------------------------------ sampling
    def _samples(self, block: tuple[int, int, int]):
        """Lane values of the mapped variables over sampled blocks: dict var -> (B, Wp, 1, L) arrays."""
        geo = self.geometry(block)
        tx, ty, tz, valid = warp_lanes(geo.block, self.gpu.warp_size)
        blocks = sample_blocks(geo.grid)
        bidx = np.array(blocks, dtype=np.int64)            # (B, 3)
        lanes = {"x": tx, "y": ty, "z": tz}
        env: dict = {}
        for m in self.kernel.loops:
            k = "xyz".index(m.dim)
            g = bidx[:, k][:, None, None] * geo.block[k] + lanes[m.dim][None, :, :]
            env[m.var] = g[:, :, None, :]                   # (B, Wp, 1, L)
        base_valid = np.broadcast_to(valid[None, :, None, :], (len(blocks), valid.shape[0], 1, valid.shape[1]))
        for h in self.host_path:
            env[h.var] = _mid(h, self.env)
        return geo, env, base_valid

    def _domain_env(self, s: Statement, env0: dict, valid0, window: int):
        """Env with the statement's in-thread loops bound (window over the innermost) and its active lanes."""
        info = self.executions[s.sid]
        env = {**self.env, **env0}
        active = valid0
        for lp in self.mapped_path:                          # mapped loops' bounds (triangular grids)
            trip = sym_np(lp.trip_count, env)
            active = active & (env[lp.var] < trip)
        w = 1
        for k, lp in enumerate(info.inner):
            first, trip, step = loop_span_np(lp, env)
            tmax = int(np.max(trip)) if np.size(trip) else int(trip)
            if k == len(info.inner) - 1:
                w = max(1, min(window, tmax)) if tmax > 0 else 1
                start = max(0, (tmax // 2) // 32 * 32)
                if start + w > tmax:
                    start = max(0, tmax - w)
                vals = start + np.arange(w, dtype=np.int64).reshape(1, 1, w, 1)
            else:
                vals = np.int64(max(0, tmax // 2))
            active = active & (vals < trip)
            # iteration counts; a loop with min/max bounds keeps its own variable: its value at that count
            env[lp.var] = vals if lp.trip_count is not None else first + vals * step
        env = origin_values(self.host_path + self.mapped_path + list(info.inner), env)
        shape = np.broadcast_shapes(*(np.shape(v) for v in [active] + [env[lp.var] for lp in self.mapped_path]),
                                    (1, 1, w, 1))
        active = np.broadcast_to(active, shape)
        guarded = active
        for g in s.guards:
            val = _guard_value(g, env)
            if val is None:
                continue          # unknown: the path is taken (Resios: branches serialized)
            guarded = guarded & val
        return env, active, np.broadcast_to(guarded, shape)


def _mid(lp: Loop, env) -> int:
    """The middle iteration of a host loop: the value its variable has there."""
    try:
        start, trip, step = loop_span_np(lp, env)
    except KeyError:
        return 0
    return int(start + max(0, int(trip)) // 2 * step)


def _max_trip(mapped: list[Loop], lp: Loop, env) -> int:
    """Largest trip count of a mapped loop over the outer ones of the `mapped` loops (grid extent)."""
    outer = mapped[:mapped.index(lp)]
    if not lp.trip_count.variables & {o.var for o in outer}:
        return int(lp.trip_count.evaluate(env))
    grids = [np.arange(max(0, int(o.trip_count.evaluate(env)))) if not o.trip_count.variables & {
        x.var for x in outer} else None for o in outer]
    if any(g is None for g in grids):
        # nested triangular: enumerate (bounded)
        best = 0
        for vals in _enumerate(outer, env, limit=200_000):
            best = max(best, int(lp.trip_count.evaluate({**env, **vals})))
        return best
    mesh = np.meshgrid(*grids, indexing="ij") if grids else []
    e = dict(env)
    for o, g in zip(outer, mesh):
        e[o.var] = g
    vals = sym_np(lp.trip_count, e)
    return int(np.max(vals)) if np.size(vals) else 0


def _enumerate(loops: list[Loop], env, limit: int):
    def rec(i, bound):
        if i == len(loops):
            yield dict(bound)
            return
        t = max(0, int(loops[i].trip_count.evaluate({**env, **bound})))
        for v in range(t):
            bound[loops[i].var] = v
            yield from rec(i + 1, bound)
        bound.pop(loops[i].var, None)
    n = 0
    for vals in rec(0, {}):
        n += 1
        if n > limit:
            return
        yield vals


def _guard_value(g, env):
    if g.constraints is not None:
        out = True
        try:
            for c in g.constraints:
                v = poly_np(c.expr, env)
                out = out & ((v >= 0) if c.kind == "ge" else (v == 0))
        except KeyError:
            return None
        return out
    if g.value is None:
        return None
    try:
        return vector(g.value, env) != 0
    except (EvaluationError, TypeError):
        return None
