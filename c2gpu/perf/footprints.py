"""The data a kernel touches (FootprintsMixin, a part of KernelAnalysis in c2gpu/perf/profile.py): each array's
footprint per launch and the working set of a host loop's iteration, from exact index ranges (isl)."""
from __future__ import annotations

import math
from functools import lru_cache

import islpy as isl

from ..analysis import isl_sets as ph
from ..pipeline import memo
from .accesses import AccessInfo
from .facts import kernel_fact
from .geometry import _mid

class FootprintsMixin:
    """The footprints part of KernelAnalysis (reads its nest, env, host loops, accesses and threads)."""

    @kernel_fact
    def footprints(self) -> dict[str, dict]:
        """Per array, bytes touched per launch: from the exact index ranges (isl) with the parameters
        bound and host loop variables at their middle iteration, at most the sectors the executed access
        instances touch; `*_lb` is a true lower bound (at most one byte per executed access instance)."""
        out: dict[str, dict] = {}
        by_array: dict[str, list[AccessInfo]] = {}
        for ai in self.access_infos:
            by_array.setdefault(ai.access.array, []).append(ai)
        for name, infos in by_array.items():
            es = infos[0].access.elem_size
            rec = {"read": 0.0, "write": 0.0, "read_lb": 0.0, "write_lb": 0.0, "overlap": 0.0}
            ranges = {}
            for kind in ("read", "write"):
                acc = [ai for ai in infos if ai.access.kind == kind]
                if not acc:
                    continue
                rng = self._range(acc)
                inst = sum(self._executions(ai) * self.threads for ai in acc)
                if rng is None:
                    span = inst * es
                    ranges[kind] = None
                else:
                    span = (rng[1] - rng[0] + 1) * es
                    ranges[kind] = rng
                sec = self.gpu.sector_bytes
                # the span of the addresses, but no more sectors than the accesses touch: a column walk of a
                # matrix in one thread (gramschmidt's norm) touches one sector per row, not the rows between
                rec[kind] = min(math.ceil(span / sec), math.ceil(inst * max(1, math.ceil(es / sec)))) * sec \
                    if span > 0 else 0.0
                rec[f"{kind}_lb"] = float(min(span, inst * es))
            if ranges.get("read") and ranges.get("write"):
                lo = max(ranges["read"][0], ranges["write"][0])
                hi = min(ranges["read"][1], ranges["write"][1])
                rec["overlap"] = max(0, hi - lo + 1) * es
            out[name] = rec
        return out

    @kernel_fact
    def host_working_set(self) -> float:
        """Bytes the statements of the outermost host loop touch in one of its iterations (0 without a
        host loop): the data a time loop's kernels keep reusing from launch to launch.  A share
        min(1, reusable L2 / this) of each launch's DRAM traffic is served by the L2 instead."""
        if not self.host_path:
            return 0.0
        outer = self.host_path[0].lid
        by_array: dict[str, list[AccessInfo]] = {}
        for s in self.nest.statements():
            if outer not in s.loop_ids:
                continue
            for a in s.accesses:
                by_array.setdefault(a.array, []).append(AccessInfo("", a, s, self._flat_index(a), None))
        total = 0.0
        for name, infos in by_array.items():
            rng = self._range(infos)
            if rng is None:
                return 0.0   # unknown extent: assume nothing stays in the L2
            total += (rng[1] - rng[0] + 1) * infos[0].access.elem_size
        return total

    def _range(self, infos: list[AccessInfo]) -> tuple[int, int] | None:
        """Min and max flat index over the accesses' statement domains (isl, exact); kept per nest (pipeline.memo),
        sizes and accesses, since every kernel of a nest asks for the same ranges."""
        host_fix = {h.var: _mid(h, self.env) for h in self.host_path}
        key = (tuple(sorted(self.env.items())), tuple(sorted(host_fix.items())),
               tuple((ai.stmt.sid, ai.stmt.accesses.index(ai.access) if ai.access in ai.stmt.accesses else -1,
                      ai.access.text) for ai in infos))
        table = memo(self.nest, "index ranges")
        if key not in table:
            table[key] = self._range_uncached(infos, host_fix)
        return table[key]

    def _range_uncached(self, infos: list[AccessInfo], host_fix: dict) -> tuple[int, int] | None:
        lo = hi = None
        for ai in infos:
            if ai.flat is None:
                return None
            s = ai.stmt
            loops = ph.loop_path(self.nest, s)
            names = {lp.var: ph.dim(lp.lid) for lp in loops}
            try:
                cons = ph.domain_constraints(loops, names, s.guards)
            except ValueError:
                return None
            for p, v in self.env.items():
                if p in self.nest.params:
                    cons.append(f"{p} = {v}")
            on_path = {lp.lid for lp in loops}
            for lp in self.host_path:
                if lp.lid in on_path:     # a host loop fixes only the statements inside it (another part of the
                    cons.append(f"{names[lp.var]} = {host_fix[lp.var]}")   # outer host loop runs in full)
            params = ", ".join(self.nest.params)
            dims = ", ".join(names[lp.var] for lp in loops)
            try:
                index = f"[{params}] -> {{ [{dims}] -> [e] : e = {ph.poly_to_isl(ai.flat, names)} }}"
            except Exception:
                index = None         # (no range, unless the domain is empty)
            extremes = _extremes(f"[{params}] -> {{ [{dims}] : {' and '.join(cons) or 'true'} }}", index)
            if extremes is None:
                return None
            if not extremes:
                continue
            a, b = extremes
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
        return None if lo is None else (lo, hi)


@lru_cache(maxsize=4096)
def _extremes(domain: str, index: str | None) -> tuple[int, int] | tuple[()] | None:
    """(min, max) of the isl map `index` over the isl set `domain` (texts); () when the domain is empty, None
    when isl cannot say (or there is no index).  Once per text: the kernels of a nest and the structures compared ask for the same
    ranges (PolyBench: 652 asked, 178 distinct)."""
    try:
        dom = isl.Set(domain)
        if dom.is_empty():
            return ()
        if index is None:
            return None
        vals = dom.apply(isl.Map(index))
        return int(vals.dim_min_val(0).to_python()), int(vals.dim_max_val(0).to_python())
    except Exception:
        return None
