"""Shared-memory opportunities and their selection (seed 004, section 6.1: Algorithms 6.1 and 6.2).

An opportunity is a read-only array whose elements the threads of one block
share: an access that does not depend on one of the thread dimensions
(matmul's A[i][k] is the same for every thread with the same i), accesses
whose footprints overlap between neighbouring threads (stencil and
convolution halos), or a small array read by every thread (a filter).

All three are one computation here.  For the block's box of mapped loop
iterations, a chunk of TILE iterations of one sequential in-thread loop (the
"tiled" loop, matmul's k) and the full range of the in-thread loops inside it
(the "covered" loops, convolution's fy and fx), each subscript of the access
spans an interval; the tile is the box of those intervals, loaded once per
block and chunk by all threads together (coalesced) and read from shared
memory instead of global memory.  Its value is the global loads it saves per
block divided by its size (Algorithm 6.2), and the greedy knapsack takes the
best ones while they fit the per-block budget.  Bank conflicts of the shared
reads are computed with Algorithm 6.1, with one column of padding when that
removes them (the classic [32][33] tile).
"""
from __future__ import annotations

import numbers
from dataclasses import replace as _replace
from fractions import Fraction

from ..algorithms.banks import bank_conflict_degree
from ..algorithms.knapsack import Opportunity as KnapsackItem, greedy_select, exact_select
from ..ir import Access, Loop, Nest
from ..pipeline import memo
from ..analysis import isl_sets as ph
from .promotion import promoted_accesses, promotions
from .plan import KernelSharedPlan, SharedDecision, SharedMemoryPlan, SharedOpportunity, TileDim
from ..symbolic import Poly

DEFAULT_TILE = 32            # iterations of the tiled loop per chunk (one warp's width of k, as in CUDA's matmul sample)
MAX_COVERED_TRIP = 64        # an in-thread loop with a larger (or unknown) trip is tiled, not covered
DEFAULT_BUDGET = 48 * 1024   # bytes per block when no GPU is given: the default static limit of every GPU since Fermi


def _loops_by_id(nest: Nest) -> dict[int, Loop]:
    return {lp.lid: lp for lp in nest.loops()}


def _const_trip(lp: Loop) -> int | None:
    if lp.trip_count is None or lp.trip_count.variables:
        return None
    return max(0, lp.trip_count.evaluate({}))


class Analyzer:
    def __init__(self, nest: Nest, kernel, tile: int, env: dict):
        self.nest = nest = kernel.view or nest   # the kernel's own order of the loops, after any interchange
        self.kernel = kernel
        self.tile = tile
        self.by_id = _loops_by_id(nest)
        self.mapped = {m.var: kernel.block["xyz".index(m.dim)] for m in kernel.loops}
        self.body = self.by_id[kernel.body_lid]
        self.env = env

    def statements(self):
        return self.kernel.statements(self.by_id)

    def top_level_loops(self) -> set[int]:
        return {n.lid for n in self.body.body if isinstance(n, Loop)}

    def written_arrays(self) -> set[str]:
        return {a.array for s in self.statements() for a in s.accesses if a.kind == "write"}

    def opportunities(self) -> list[SharedOpportunity]:
        written = self.written_arrays()
        # an access a register replaces (promotion.py) reads global memory once before its loop, not in it: a
        # tile would serve nothing there (and was loaded, synchronized and counted for nothing)
        in_registers = promoted_accesses(promotions(self.nest, self.kernel))
        groups: dict[tuple[str, int | None, tuple[int, ...]], list[tuple[Access, list[Loop]]]] = {}
        top = self.top_level_loops()
        for s in self.statements():
            inner = [self.by_id[l] for l in s.loop_ids[s.loop_ids.index(self.kernel.body_lid) + 1:]]
            for a in s.accesses:
                if a.kind != "read" or a.array in written or not a.affine or id(a) in in_registers \
                        or self.nest.array(a.array).fields:     # (a tile of structs seen by field: not printed)
                    continue
                split = self._split(inner, top)
                if split is None:
                    continue
                # accesses that move the same way with the threads share one tile (a stencil's points);
                # syrk's A[i][k] and A[j][k] move differently: two tiles of A
                motion = self._motion(a, self._ranges(*split))
                if motion is None:
                    continue
                groups.setdefault((a.array, split[0], split[1], motion), []).append((a, inner))
        out = []
        for (array, tiled, covered, _), accs in sorted(groups.items(),
                                                       key=lambda kv: (kv[0][0], kv[0][1] or -1, _order(kv[0][3]))):
            opp = self._opportunity(array, tiled, covered, [a for a, _ in accs])
            if opp is not None:
                out.append(opp)
        return _name_tiles(self._one_tile_per_region(out) + self.store_opportunities())

    def _one_tile_per_region(self, opps: list[SharedOpportunity]) -> list[SharedOpportunity]:
        """The tiles that hold the same elements of an array for the whole kernel made one: reads of a small
        array in two different in-thread loops (two inlined calls of one function: LU's `exact` reads ce[m][*]
        in each) are two groups, but need one copy of it, loaded once."""
        out: list[SharedOpportunity] = []
        for o in opps:
            region = self._fixed_region(o)
            same = next((k for k, p in enumerate(out) if region is not None and p.array == o.array
                         and p.pad == o.pad and self._fixed_region(p) == region), None)
            if same is None:
                out.append(o)
                continue
            p = out[same]
            out[same] = _replace(p, accesses=p.accesses + o.accesses, covered_lids=p.covered_lids + o.covered_lids,
                                 loads_saved_per_block=p.loads_saved_per_block + o.loads_saved_per_block
                                 + o.tile_loads_per_block)
        return out

    def _fixed_region(self, o: SharedOpportunity) -> tuple[tuple[int, int], ...] | None:
        """The elements (first, last per dimension) a tile loaded once for the whole kernel holds, when they do
        not depend on the block or the sizes: every subscript moves only with covered loops, upwards."""
        if o.tiled_lid is not None or o.kind != "small array":
            return None
        covered = {self.by_id[lid].var for lid in o.covered_lids}
        if any(t.params.terms or any(v not in covered or c <= 0 for v, c in t.coeffs) for t in o.dims):
            return None
        return tuple((t.const, t.const + t.extent - 1) for t in o.dims)

    def _motion(self, a: Access, ranges: dict[str, int]):
        """Per subscript (how the threads move it, its offset): the same tuple for accesses that share a tile."""
        subs, extents = ph.access_shape(self.nest, a)
        if extents is None:
            return None
        parts = [_decompose(sub, ranges) for sub in subs]
        if any(p[0] is None for p in parts):
            return None
        return tuple((p[0], p[2]) for p in parts)

    def store_opportunities(self) -> list[SharedOpportunity]:
        """Write-side staging (seed 004 Listing 7.1, transpose): a store whose thread-x variable is not in
        the last subscript is uncoalesced; the block writes it to a tile first and then stores the tile
        row by row, consecutive threads writing consecutive elements."""
        stmts = self.statements()
        read = {a.array for s in stmts for a in s.accesses if a.kind == "read"}
        writes: dict[str, list] = {}
        for s in stmts:
            for a in s.accesses:
                if a.kind == "write":
                    writes.setdefault(a.array, []).append((s, a))
        x_var = next((m.var for m in self.kernel.loops if m.dim == "x"), None)
        out = []
        for array, ws in sorted(writes.items()):
            if array in read or len(ws) != 1 or self.nest.array(array).fields or array in self.kernel.private_arrays:
                continue
            s, a = ws[0]
            if s.loop_ids[-1] != self.kernel.body_lid or not a.affine or s.assign_op != "=":
                continue
            subs, extents = ph.access_shape(self.nest, a)
            if extents is None or len(subs) < 2:
                continue
            parts = [_decompose(sub, self.mapped) for sub in subs]
            if any(p[0] is None for p in parts):
                continue
            if any(v == x_var for v, _ in parts[-1][0]) or not any(v == x_var for p in parts for v, _ in p[0]):
                continue       # already coalesced, or x does not move the store
            dims = tuple(TileDim(c, k, prm, 1 + sum(abs(cf) * (self.mapped[v] - 1) for v, cf in c))
                         for c, k, prm in parts)
            elem = a.elem_size
            unpadded = self._conflicts(dims, 0, elem)
            pad, degree = 0, unpadded
            if unpadded > 1 and self._conflicts(dims, 1, elem) < unpadded:
                pad, degree = 1, self._conflicts(dims, 1, elem)
            threads = 1
            for e in self.mapped.values():
                threads *= e
            warps = max(1, threads // 32)
            # one warp's store touches 32 sectors when x moves a non-last subscript; staged, a warp stores
            # 32 consecutive elements: 32 * elem / 32-byte sectors
            saved = warps * (32 - max(1, 32 * elem // 32))
            out.append(SharedOpportunity(array, a.elem_type, elem, (a,), None, (), dims, pad, degree, unpadded,
                                         float(saved), float(saved), "store"))
        return out


    def _split(self, inner: list[Loop], top: set[int]) -> tuple[int | None, tuple[int, ...]] | None:
        """(tiled loop, covered loops) for an access under the in-thread loops `inner` (outermost first)."""
        if not inner:
            return None, ()
        first = inner[0]
        rest = inner[1:]
        for lp in inner:
            if lp.trip_count is None or any(v in self.mapped for v in lp.trip_count.variables) or lp.guards != first.guards:
                return None        # bounds that differ between threads: no common tile
            if any(v in {l.var for l in inner} for v in lp.trip_count.variables):
                return None        # triangular in-thread loops: the tile would not be a box
        if first.lid not in top:
            return None
        if all(_const_trip(lp) is not None and _const_trip(lp) <= MAX_COVERED_TRIP for lp in inner):
            return None, tuple(lp.lid for lp in inner)
        if any(_const_trip(lp) is None or _const_trip(lp) > MAX_COVERED_TRIP for lp in rest):
            return None
        return first.lid, tuple(lp.lid for lp in rest)

    def _ranges(self, tiled: int | None, covered: tuple[int, ...]) -> dict[str, int]:
        """Number of values each variable takes within one block and chunk."""
        r = dict(self.mapped)
        if tiled is not None:
            r[self.by_id[tiled].var] = self.tile
        for lid in covered:
            r[self.by_id[lid].var] = _const_trip(self.by_id[lid])
        return r

    def _opportunity(self, array: str, tiled: int | None, covered: tuple[int, ...],
                     accesses: list[Access]) -> SharedOpportunity | None:
        ranges = self._ranges(tiled, covered)
        shapes = {len(ph.access_shape(self.nest, a)[0]) for a in accesses}
        if len(shapes) != 1 or any(ph.access_shape(self.nest, a)[1] is None for a in accesses):
            return None
        ndims = shapes.pop()
        if tile_region(self.nest, array, ndims) is None:
            return None          # the tile's loads must stay inside what the nest reads: unbounded, no tile
        dims = []
        for d in range(ndims):
            subs = [ph.access_shape(self.nest, a)[0][d] for a in accesses]
            coeff_sets = set()
            lo_offsets, hi_offsets = [], []
            param_parts = set()
            for sub in subs:
                coeffs, const, params = _decompose(sub, ranges)
                if coeffs is None:
                    return None
                coeff_sets.add(coeffs)
                param_parts.add(params)
                span = sum(abs(c) * (ranges[v] - 1) for v, c in coeffs)
                lo_offsets.append(const)
                hi_offsets.append(const + span)
            if len(coeff_sets) != 1 or len(param_parts) != 1:
                return None        # accesses that move differently in one dimension: no shared base
            coeffs = coeff_sets.pop()
            base = min(lo_offsets)
            dims.append(TileDim(coeffs, base, param_parts.pop(), max(hi_offsets) - base + 1))
        elems = 1
        for t in dims:
            elems *= t.extent
        threads = 1
        for e in self.mapped.values():
            threads *= e
        per_thread = 1
        for v, n in ranges.items():
            if v not in self.mapped:
                per_thread *= n
        chunks = 1
        if tiled is not None:
            trip = self.by_id[tiled].trip_count
            try:
                total = trip.evaluate(self.env)
            except KeyError:
                total = 1024   # an unknown size: the value is only a ranking, keep it comparable
            chunks = max(1, -(-max(total, 0) // self.tile))
        global_reads = len(accesses) * threads * per_thread * chunks
        tile_loads = elems * chunks
        saved = global_reads - tile_loads
        if saved <= 0:
            return None
        elem = accesses[0].elem_size
        unpadded = self._conflicts(dims, 0, elem, accesses[0])
        pad, degree = 0, unpadded
        if unpadded > 1:
            padded = self._conflicts(dims, 1, elem, accesses[0])
            if padded < unpadded:
                pad, degree = 1, padded
        uses_mapped = {v for t in dims for v, _ in t.coeffs if v in self.mapped}
        # no thread variable: every thread reads the same elements (a filter); several offsets of one
        # motion: neighbours share a halo (a stencil); else a thread dimension is missing (matmul's A[i][k])
        overlapping = len({a.text for a in accesses}) > 1 or any(
            any(v in self.mapped for v, _ in t.coeffs) and any(v not in self.mapped for v, _ in t.coeffs) for t in dims)
        kind = "small array" if not uses_mapped else "halo" if overlapping else "reuse"
        return SharedOpportunity(array, accesses[0].elem_type, elem, tuple(accesses), tiled, covered, tuple(dims),
                                 pad, degree, unpadded, float(saved), float(tile_loads), kind)

    def _conflicts(self, dims, pad: int, elem: int, access: Access | None = None) -> int:
        """Algorithm 6.1 on the shared-memory accesses of one warp (threads x-major, then y), other loops at 0.

        A constant shift of every address (the tile's base) changes no bank collision, so it is left out.
        """
        bx, by = self.kernel.block[0], self.kernel.block[1]
        var_of_dim = {m.dim: m.var for m in self.kernel.loops}
        row_len = [t.extent for t in dims]
        row_len[-1] += pad
        addrs = []
        for t in range(32):
            env = {var_of_dim.get("x"): t % bx, var_of_dim.get("y"): (t // bx) % by}
            offset = 0
            for k, tdim in enumerate(dims):
                offset = offset * row_len[k] + sum(c * env.get(v, 0) for v, c in tdim.coeffs)
            addrs.append(offset * elem)
        shift = -min(addrs)
        return bank_conflict_degree([a + shift for a in addrs], access_size=elem)


def _decompose(sub, ranges: dict[str, int]):
    """subscript = sum(c_v * v) + const + params: the loop-variable part must use only the block's variables."""
    coeffs, const, params = [], 0, []
    for mono, c in sub.terms:
        if c.denominator != 1:
            return None, 0, Poly.const(0)
        if mono == ():
            const += int(c)
        elif len(mono) == 1 and mono[0][1] == 1 and mono[0][0] in ranges:
            coeffs.append((mono[0][0], int(c)))
        elif all(v not in ranges for v, _ in mono):
            params.append((mono, c))
        else:
            return None, 0, Poly.const(0)
    return tuple(sorted(coeffs)), const, Poly(tuple(sorted(params)))


def _name_tiles(opps: list[SharedOpportunity]) -> list[SharedOpportunity]:
    """Each tile gets its own shared array name: the array's, numbered when an array has several tiles."""
    count: dict[str, int] = {}
    for o in opps:
        count[o.array] = count.get(o.array, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for o in opps:
        k = seen.get(o.array, 0)
        seen[o.array] = k + 1
        out.append(_replace(o, tile_name=o.array if count[o.array] == 1 else f"{o.array}_{k}"))
    return out


def select(opps: list[SharedOpportunity], budget: int, force=(), exclude=()) -> tuple[list[SharedDecision], float]:
    """Algorithm 6.2 (greedy by loads saved per byte) with the user's forced and excluded arrays."""
    forced = [o for o in opps if o.array in force]
    free = [o for o in opps if o.array not in force and o.array not in exclude]
    used = sum(o.size_bytes for o in forced)
    sel = greedy_select([KnapsackItem(f"{o.array}#{k}", o.size_bytes, o.loads_saved_per_block)
                         for k, o in enumerate(free)], max(0, budget - used), skip_misfits=True)
    by_name = {d.name: d for d in sel.decisions}
    decisions = [SharedDecision(o, True, f"forced by --shared {o.array} ({o.size_bytes} B)") for o in forced]
    for k, o in enumerate(free):
        d = by_name[f"{o.array}#{k}"]
        decisions.append(SharedDecision(o, d.taken, d.reason))
    decisions += [SharedDecision(o, False, "excluded by --no-shared") for o in opps if o.array in exclude]
    gap = 0.0
    if free:
        items = [KnapsackItem(f"{o.array}#{k}", o.size_bytes, o.loads_saved_per_block) for k, o in enumerate(free)]
        best = exact_select(items, max(0, budget - used)).total_frequency
        if best > 0:
            gap = (best - sel.total_frequency) / best
    return decisions, gap


def tile_region(nest: Nest, array: str, ndims: int):
    """The exact range of each of `array`'s `ndims` subscripts over every access of the nest (isl), where a tile
    of it may load; None when isl cannot bound it, and then the array gets no tile (codegen clamps the tile's
    cooperative loads to this region, so a tile without one cannot be emitted)."""
    table = memo(nest, "tile regions")     # asked for once per candidate tile of every block shape searched
    if (array, ndims) not in table:
        accs = [a for s in nest.statements() for a in s.accesses if a.array == array]
        region = ph.subscript_ranges(nest, accs, ndims)
        table[array, ndims] = None if region is None else tuple(region)
    region = table[array, ndims]
    return None if region is None else list(region)


def plan_shared_memory(nest: Nest, mapping, opts: dict, budget: int | None = None) -> SharedMemoryPlan:
    """The tiles of every kernel of a mapped nest under a per-block budget (default: --shared-budget or 48 KiB)."""
    plan = SharedMemoryPlan()
    if opts.get("shared_memory", "auto") == "off":
        return plan
    for k in mapping.kernels():
        if k.reductions:
            continue       # the reduction tree already uses shared memory: keep those kernels simple
        kplan = tiles_for_kernel(nest, k, opts, budget)
        if kplan is not None:
            plan.kernels[k.name] = kplan
    return plan


def _opportunities(nest: Nest, kernel, tile: int, env: dict) -> list[SharedOpportunity]:
    """Analyzer(...).opportunities(), once per (nest object, kernel with its block, tile, sizes) (pipeline.memo):
    the block search replans a kernel's tiles on every shape it tries, once per shared-memory budget the
    performance pass compares, and only the knapsack's choice depends on the budget.  The table is the kernel's
    view's (Kernel leaves the view out of its hash; a view is made from one nest)."""
    key = (kernel, tile, tuple(sorted(env.items())))
    try:
        hash(key)
    except TypeError:
        return Analyzer(nest, kernel, tile, env).opportunities()
    table = memo(kernel.view or nest, "shared-memory opportunities")
    if key not in table:
        table[key] = tuple(Analyzer(nest, kernel, tile, env).opportunities())
    return list(table[key])


def tiles_for_kernel(nest: Nest, kernel, opts: dict, budget: int | None = None) -> KernelSharedPlan | None:
    """The tiles of one kernel on its block shape (tiles are sized by the block), None when there is nothing
    to stage."""
    if kernel.serial:
        return None                     # one thread: nothing to share
    tile = int(opts.get("shared_tile") or DEFAULT_TILE)
    budget = int(budget or opts.get("shared_budget") or DEFAULT_BUDGET)
    opps = _opportunities(nest, kernel, tile, nest.param_env(opts.get("params")))
    if not opps:
        return None
    # code generation stages tiles along one in-thread loop per kernel: keep the loop whose tiles save most
    saved: dict[int, float] = {}
    for o in opps:
        if o.tiled_lid is not None:
            saved[o.tiled_lid] = saved.get(o.tiled_lid, 0.0) + o.loads_saved_per_block
    along = max(saved, key=lambda lid: (saved[lid], -lid)) if saved else None
    other = [o for o in opps if o.tiled_lid not in (None, along)]
    opps = [o for o in opps if o.tiled_lid in (None, along)]
    decisions, gap = select(opps, budget, opts.get("shared_force", ()), opts.get("shared_exclude", ()))
    decisions += [SharedDecision(o, False, "tiles are staged along one loop per kernel, and another loop's save "
                                           "more loads") for o in other]
    return KernelSharedPlan(kernel.name, budget, tuple(decisions), tile, gap)


def candidate_budgets(gpu) -> list[tuple[int, str]]:
    """Per-block budgets worth trying on `gpu`: the shared memory that still lets 1, 2, 4 or 8 blocks share an
    SM (less the per-block reservation), each with why.  Capped by the static per-block limit
    (shared_mem_per_block, 48 KiB): the emitted kernels declare their tiles as `__shared__` arrays, and a kernel
    with more static shared memory does not compile (ptxas: "uses too much shared data"); the opt-in maximum
    needs dynamic shared memory and cudaFuncSetAttribute, which code generation does not emit."""
    out: list[tuple[int, str]] = []
    for blocks in (1, 2, 4, 8):
        b = min(gpu.shared_mem_per_block, gpu.shared_mem_per_sm // blocks - gpu.reserved_shared_mem_per_block)
        b -= b % 128
        if b > 0 and all(b != x for x, _ in out):
            out.append((b, f"{blocks} block{'s' if blocks > 1 else ''} per SM"))
    return out


def _order(value):
    """A motion as a sort key that orders as the motion itself where that can be ordered (numbers, names, tuples
    of them), with a symbolic stride (a Poly: NPB's LU) after the numbers, by its text."""
    if isinstance(value, tuple):
        return tuple(_order(x) for x in value)
    if isinstance(value, numbers.Real):
        return (0, value, "")
    if isinstance(value, str):
        return (1, 0, value)
    return (2, 0, str(value))
