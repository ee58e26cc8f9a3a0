"""Loop-to-thread mapping: which loops become the CUDA grid, which stay in a thread, which stay on the host.

Rules (decisions live here; templates only print them):
- A loop proven parallel starts a kernel. Directly nested loops that are also
  parallel join it while the nest is perfect (the body is just the next loop),
  up to three grid dimensions.  Loops inside the innermost mapped loop run
  sequentially in each thread (that is how `k` of matmul, a reduction kept in
  the thread, is handled: per-thread accumulation).
- A loop whose only carried dependences are `+`, `max` or `min` reductions
  into a scalar, or into one array element no loop inside it indexes
  (`x[i] -= L[i][j] * x[j]` over j), can be mapped too: each thread keeps a
  partial result, the block combines them with a tree in shared memory, and
  one atomic per block updates the result (the element itself for an array).
- A sequential loop (a time loop, or one carrying a dependence) around
  parallel loops stays on the host and launches their kernels on every
  iteration; the data stays on the device in between, and the code between
  those kernels runs as written in one-thread kernels (`serial_kernel`).
- The root loop's body may be distributed into kernels, one per part, with a
  parallel loop moved outside a sequential one where the dependences allow
  (`distributed`, `inner_parts`, `_interchangeable`; c2gpu/transform/reorder.py builds
  each such kernel's view of the nest).
- Anything else is refused with the reason and the line that blocks it.
The x dimension goes to the mapped loop that is the fastest-varying subscript
of most accesses (coalescing, c2gpu/passes/coalescing.py); users can override loops and block shape.
"""
from __future__ import annotations

import re
from dataclasses import replace

from c2gpu.ir import Loop, Nest, Reduction, Statement, line_of, loop_words, ordered_reduction, reduction_type
from c2gpu.frontend.libc import MATH_FUNCTIONS
from c2gpu.algorithms.distribution import forward_groups
from c2gpu.diagnostics import HOST_ONLY
from c2gpu.model.gpu import GPU, load_gpu
from c2gpu.planning.plan import (ROW_BLOCK_THREADS, SPLIT_THREADS, WHOLE_BLOCK, ElementRange, HostLoop, Kernel,
                                 MappedLoop, Mapping, fixed_threads, kernels_in, power_of_two_needed)
from c2gpu.pipeline import Pass, PassFailed
from c2gpu.transform.coarsen import coarsened_mappings
from c2gpu.transform.reorder import kernel_view
from c2gpu.symbolic import Sym

from .coalescing import Coalescing
from .dependence import proves_parallel
from .scalars import outlives_nest

MAPPABLE_REDUCTIONS = ("+", "max", "min")
SERIAL_SAFE = ("flow", "anti", "output", "reduction")
# what may stand in the way of parallel loops but not of code run in order by one thread: an access c2gpu does
# not analyse runs in the C's order there, and its array is copied whole (codegen/arrays.py _gathered)
ONE_THREAD_SAFE = SERIAL_SAFE + ("non-affine",)
ONE_THREAD_SAFE_FLAGS = ("non-affine-subscript", "runs-in-thread")
FLOATS = ("float", "double", "long double")   # reasons a loop is sequential that one thread respects
# the most local memory a CUDA thread may have, on every compute capability since 2.0 (CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability": maximum amount of local memory per thread, 512 KB); ptxas
# compiles a larger stack frame, and the launch fails
LOCAL_BYTES_PER_THREAD = 512 * 1024


def _only_loop_child(loop: Loop) -> Loop | None:
    """The single loop that is the whole body of `loop` (a perfect nest), or None."""
    if loop.perfect and len(loop.body) == 1 and isinstance(loop.body[0], Loop) and loop.body[0].header_stmt is None:
        return loop.body[0]
    return None


def _component(d, k: int) -> str:
    """The direction of dependence `d` at common-loop level `k` ("=", "<", ..., "*" when unknown)."""
    if d.distance is not None:
        if k >= len(d.distance):
            return "*"
        return "=" if d.distance[k] == 0 else "<" if d.distance[k] > 0 else ">"
    return d.directions[k] if k < len(d.directions) else "*"


WARP_THREADS = 32      # a grid of fewer threads than this leaves most of its one warp idle


def _path_lids(root: Loop, lid: int) -> list[int]:
    """The lids of the loops from `root` down to loop `lid`, both included ([] if it is not there)."""
    if root.lid == lid:
        return [lid]
    for node in root.body:
        if isinstance(node, Loop) and (path := _path_lids(node, lid)):
            return [root.lid] + path
    return []


SMALL_TRIP = 16
FEW_THREADS = WARP_THREADS * SMALL_TRIP     # a grid this small keeps its short innermost loops mapped
# partial results of one array reduction a thread keeps, one per element the loops inside it choose (rms[m] over
# m < 5): each is a tree in shared memory and an atomic per block
MAX_ELEMENT_PARTIALS = 16


def _split_words(dim: str, var: str, threads: int) -> str:
    """How a split reduction over loop `var` runs, in the kernel's description."""
    return (f" split over {threads} threads along {dim} per element (they take turns over '{var}'; a tree "
            f"along {dim} adds up their results, then one atomic per element)")


def _sunk_words(stmts) -> str:
    """The statements a kernel runs in each thread before its body, in its description."""
    lines = sorted({st.loc.line for st in stmts})
    return f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))} (between the mapped loops) run"


def _small_trip(loop: Loop) -> bool:
    t = loop.trip_count
    return t is not None and not t.variables and t.evaluate({}) < SMALL_TRIP


def _c_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


class Mapper(Coalescing):
    def __init__(self, nest: Nest, deps, options: dict):
        self.nest = nest
        self.deps = deps
        self.options = options
        self.kernel_count = 0
        self.block_override = options.get("block")
        self.map_override = options.get("map")  # loop variable names (as written in C) to map
        # loops kept on the host with a launch per iteration although they are parallel: named with
        # --map host:NAME, or left out of --map's grid loops while outside them, or chosen by the performance
        # pass from the legal structures (structures())
        self.host_names = set(options.get("map_host") or ())
        self.env = nest.param_env(options.get("params"))
        self.host_chain: list[Loop] = []        # the host loops around the root the kernels are planned under

    def status(self, loop: Loop) -> str:
        v = self.deps.verdicts.get(loop.lid)
        return v.status if v is not None else "unknown"

    def reason(self, loop: Loop) -> str:
        v = self.deps.verdicts.get(loop.lid)
        if v is None or not v.reasons:
            return f"{loop_words(self.c_var(loop))} is not proven parallel"
        return v.reasons[0].message

    def blocking_loc(self, loop: Loop):
        """Where the first reason `loop` is not parallel happens (the dependence's sink), else the loop."""
        v = self.deps.verdicts.get(loop.lid)
        first = v.reasons[0] if v is not None and v.reasons else None
        return (first.sink or first.source or loop.loc) if first is not None else loop.loc

    def at(self, loc) -> str:
        """How a message names the line of `loc` (line_of: with its file when code was inlined from another)."""
        return line_of(loc, self.nest.loc.file)

    def c_var(self, loop: Loop) -> str:
        return loop.source_var

    def wanted(self, loop: Loop) -> bool | None:
        """--map override: True/False when the user said, None when c2gpu decides."""
        if not self.map_override:
            return None
        return self.c_var(loop) in self.map_override

    def mapped_reductions(self, loop: Loop) -> tuple[Reduction, ...] | None:
        """The scalar reductions a mapped reduction loop needs, or None if they cannot be done across threads.
        Scatters (Statement.scatter) need none: each thread updates its element with an atomic."""
        inside = [s for s in self.nest.statements() if loop.lid in s.loop_ids]
        reds = [r for s in inside for r in s.reductions if loop.var in r.loops]
        scatters = {s.scatter for s in inside if s.scatter}
        verdict = self.deps.verdicts.get(loop.lid)
        if scatters and set(getattr(verdict, "reductions", ())) <= {r.target for r in reds} | {
                a.text for s in inside if s.scatter for a in s.accesses if a.array == s.scatter}:
            if self.options.get("exact_fp") and any(self.nest.array(a).elem_type in FLOATS for a in scatters):
                return None  # --exact-fp: atomic floating-point adds in any order would round differently
            if not reds:
                return ()
        if not reds or any(r.op not in MAPPABLE_REDUCTIONS for r in reds):
            return None
        scalars = {s.name: s for s in self.nest.scalars}
        if any(r.array_access is None and (scalars.get(r.target) is None or scalars[r.target].role == "local")
               for r in reds):
            return None
        # an array element (y[i] += over j) is folded into the array by the atomics; its element must be the
        # same for every thread: only loops the thread runs whole may index it (element_range)
        # (one array of partials per target: every update of it must index it alike)
        ranges: dict[str, ElementRange | tuple[()]] = {}
        for r in reds:
            if r.array_access is not None and ((e := self.element_range(loop, r, ())) is None
                                               or ranges.setdefault(r.target, e) != e):
                return None
        if self.options.get("exact_fp") and any(r.op == "+" and reduction_type(self.nest, r) in FLOATS for r in reds):
            return None      # --exact-fp: a tree of partial sums would add in another order than C
        by_target: dict[str, Reduction] = {}
        for r in reds:
            if by_target.setdefault(r.target, r).op != r.op:
                return None  # s += ... and s = max(s, ...) on one scalar cannot be combined
        return tuple(by_target.values())

    def element_range(self, loop: Loop, r: Reduction, mapped: tuple[Loop, ...]) -> ElementRange | None | tuple[()]:
        """How the threads of a kernel mapping `loop` (and `mapped` inside it) fold array reduction `r`: () when
        its element is the same in every iteration the thread runs (`y[i] += ...` over j), the ElementRange of
        the loops inside the thread that index it (`rms[m]`, m from 0 to 4: a partial result per value, at most
        MAX_ELEMENT_PARTIALS of them), None when the threads cannot (a mapped loop indexes it, a loop inside
        whose start or trip count is not a constant, a subscript c2gpu cannot read)."""
        access = r.array_access
        if not access.affine or any(p is None for p in access.subscripts):
            return None
        # the loops around the reduction's statement, by identity: two sibling loops may share a variable's name
        # (the element of `U[30 - i] += ...` is chosen by its own loop over i, not by the next loop over i)
        stmt = next((st for st in loop.statements() if r in st.reductions), None)
        if stmt is None:
            return None
        by_lid = {lp.lid: lp for lp in loop.loops()}
        inside = {by_lid[lid].var: by_lid[lid] for lid in stmt.loop_ids if lid in by_lid}
        used = set().union(*(p.variables for p in access.subscripts)) & inside.keys()
        if not used:
            return ()
        if ordered_reduction(self.nest, r):
            return None     # a floating-point max/min keeps its iteration with each value: one partial only
        loops = []
        mapped_lids = {lp.lid for lp in (loop, *mapped)}
        for lp in inside.values():      # outermost first
            if lp.var not in used:
                continue
            c_first = lp.lower if lp.origin is None else lp.origin.lower    # the C variable's first value
            if lp.lid in mapped_lids or lp.step != 1 or (lp.origin is not None and lp.origin.step != 1) \
                    or lp.lower is None or not lp.lower.is_const() or c_first is None or not c_first.is_const() \
                    or lp.trip_count is None or lp.trip_count.variables:
                return None
            loops.append((lp.var, int(lp.lower.const_value()), self.c_var(lp), int(c_first.const_value()),
                          lp.trip_count.evaluate({})))
        er = ElementRange(r.target, tuple(loops))
        return er if 0 < er.count <= MAX_ELEMENT_PARTIALS else None

    def one_trip(self, loop: Loop) -> bool:
        """Whether `loop` runs once (trip count 1 once the sizes are known: `TSTEPS = 1`): it is folded away,
        never a grid dimension (a grid of one thread would run the whole nest in it)."""
        t = loop.trip_count
        if t is None or not t.variables <= self.env.keys():
            return False
        try:
            return t.evaluate(self.env) == 1
        except Exception:
            return False

    def can_start_kernel(self, loop: Loop) -> tuple[bool, tuple[Reduction, ...]]:
        st = self.status(loop)
        if self.wanted(loop) is False or loop.trip_count is None or not loop.normalized or self.one_trip(loop) \
                or self.c_var(loop) in self.host_names:
            return False, ()
        if st == "parallel":
            return True, ()
        if st == "reduction":
            reds = self.mapped_reductions(loop)
            return (reds is not None), reds or ()
        return False, ()

    def plan(self, loop: Loop) -> "HostLoop | Kernel":
        ok, reds = self.can_start_kernel(loop)
        if ok:
            return self.kernel(loop, reds)
        if self.wanted(loop) is True:
            raise PassFailed(f"--map asks for {loop_words(self.c_var(loop))} ({self.at(loop.loc)}), but {self.reason(loop)}",
                             code="map-refused", loc=loop.loc)
        where = f"{loop_words(self.c_var(loop))} at {self.at(loop.loc)}"
        host = self.stays_on_host(loop)
        if host:
            return self.host_loop(loop, host)
        if self.status(loop) in ("parallel", "reduction") and (loop.lower_pieces or loop.upper_pieces):
            start, end = loop.bound_texts()
            why = (f"{where} is proven {self.status(loop)}, but its bounds are a min/max of several values (from "
                   f"{start} to below {end}): c2gpu maps to threads only a loop with one trip count")
            if any(self.parallel_inside(k) for k in loop.body if isinstance(k, Loop)):
                return self.host_loop(loop, f"{why}; it stays on the host with a launch per iteration")
            raise PassFailed(why, code="not-generated", loc=loop.loc)
        if self.status(loop) == "reduction":
            exact = " (--exact-fp keeps floating-point sums in one thread)" if self.options.get("exact_fp") else ""
            raise PassFailed(f"{where} is a reduction c2gpu does not run across threads (only scalar +, max and "
                             f"min reductions are{exact}): {self.reason(loop)}", code="unmapped-reduction", loc=loop.loc)
        if self.status(loop) in ("parallel", "reduction") and self.map_override and self.wanted(loop) is False:
            raise PassFailed(f"{where} is proven {self.status(loop)}, but --map leaves it out and names no loop "
                             "inside it to map", code="map-refused", loc=loop.loc)
        if self.status(loop) != "carried":
            # not proven either way (aliasing, calls, non-affine accesses): the nest stays on the CPU
            raise PassFailed(f"{where} is not proven parallel: {self.reason(loop)}", code="not-proven-parallel",
                             loc=self.blocking_loc(loop))
        return self.host_loop(loop, f"{loop_words(self.c_var(loop))} stays on the host: {self.reason(loop)}")

    def stays_on_host(self, loop: Loop) -> str | None:
        """Why a loop proven parallel (or a mappable reduction) stays on the host with a launch per iteration:
        it runs once (folded), --map names it a host loop or leaves it out while mapping a loop inside it, or
        the chosen structure keeps it there; None when it does not."""
        if self.status(loop) not in ("parallel", "reduction"):
            return None
        name = self.c_var(loop)
        if self.one_trip(loop):
            return f"{loop_words(name)} runs once: folded away (a launch for its one iteration), never a grid dimension"
        if name in self.host_names:
            return f"{loop_words(name)} stays on the host with a launch per iteration (the structure chosen)"
        if self.map_override and self.wanted(loop) is False and any(
                self.wanted(lp) for lp in loop.loops() if lp is not loop):
            return f"{loop_words(name)} stays on the host with a launch per iteration (--map leaves it out of the grid)"
        return None

    def host_loop(self, loop: Loop, why: str) -> HostLoop:
        """`loop` kept on the host around the kernels of the loops inside it; the statements and loops between
        those kernels run as written in one-thread kernels, on the device data."""
        where = f"{loop_words(self.c_var(loop))} at {self.at(loop.loc)}"
        kids = [n for n in loop.body if isinstance(n, Loop)]
        if not kids:
            raise PassFailed(f"{where} cannot run in parallel: {self.reason(loop)}", code="carried-dependence",
                             loc=self.blocking_loc(loop))
        if not any(self.parallel_inside(k) for k in kids):
            if len(kids) == len(loop.body):
                for k in kids:
                    self.plan(k)               # raises why the inner loop cannot run in parallel either
            raise PassFailed(f"{where} cannot run in parallel ({self.reason(loop)}), and no loop inside it can",
                             code="carried-dependence", loc=self.blocking_loc(loop))
        if any(n.guards != loop.guards for n in loop.body):
            raise PassFailed(f"{loop_words(self.c_var(loop))} at {self.at(loop.loc)}: guarded code under a host loop "
                             "is not supported", code="guarded-host-loop", loc=loop.loc)
        if (other := self.uses_outside(loop)) is not None:
            # the host's loop variable and the device's copy of the scalar would be two variables
            raise PassFailed(f"{where} would stay on the host, but line {other.loc.line} uses its variable "
                             f"'{self.c_var(loop)}' outside it, in code that runs on the device",
                             code="not-generated", loc=other.loc)
        body: list[HostLoop | Kernel] = []
        run: list[int] = []
        for pos, node in enumerate(loop.body):
            if isinstance(node, Loop) and node.header_stmt is None and self.worth_kernels(node):
                if run:
                    body.append(self.serial_kernel(loop, run))
                    run = []
                body.append(self.plan(node))
            else:
                run.append(pos)
        if run:
            body.append(self.serial_kernel(loop, run))
        if all(isinstance(it, Kernel) and it.serial for it in body):
            raise PassFailed(f"{where} cannot run in parallel ({self.reason(loop)}), and the loops inside it would "
                             "run in one thread: only reductions deep inside them are parallel",
                             code="carried-dependence", loc=self.blocking_loc(loop))
        return HostLoop(loop.lid, self.c_var(loop), loop.header, tuple(body), why)

    def uses_outside(self, loop: Loop) -> Statement | None:
        """A statement of the nest outside `loop`, and outside every loop of the same variable, that reads or
        writes `loop`'s variable (SP's `i = grid_points[0]-2;` after the sweep over i), or None."""
        name = self.c_var(loop)
        same = {lp.lid for lp in self.nest.loops() if self.c_var(lp) == name}
        return next((st for st in self.nest.statements() if not same & set(st.loop_ids)
                     and name in (*st.scalar_reads, *st.scalar_writes)), None)

    def plan_root(self) -> tuple[HostLoop | Kernel, ...]:
        """The plan of the whole nest: the loops that stay on the host around everything (the perfect chain
        from the root of loops that stays_on_host), then under them the first other loop's plan, or its body
        distributed into kernels when that maps more loops to threads (or maps where that loop alone cannot)."""
        root = self.nest.root
        whys = []
        while (why := self.stays_on_host(root)) and (child := _only_loop_child(root)) is not None:
            self.host_chain.append(root)
            whys.append(why)
            root = child
        items = self.plan_under(root)
        for lp, why in zip(reversed(self.host_chain), reversed(whys)):
            items = (HostLoop(lp.lid, self.c_var(lp), lp.header, items, why),)
        return items

    def plan_under(self, root: Loop) -> tuple[HostLoop | Kernel, ...]:
        try:
            plain = self.plan(root)
        except PassFailed:
            if (split := self.distributed(root, whole=True)) is None or not self.respects_map(split):
                raise
            return split
        if not isinstance(plain, Kernel) or len(plain.loops) > 1:
            return (plain,)
        count, self.kernel_count = self.kernel_count, 0
        split = self.distributed(root)
        if split is not None and all(len(k.loops) >= 1 for k in split) and any(len(k.loops) > 1 for k in split) \
                and self.respects_map(split):
            return split
        self.kernel_count = count
        return self.few_threads_on_host(root, plain) or (plain,)

    def few_threads_on_host(self, root: Loop, plain: Kernel) -> tuple[HostLoop] | None:
        """The root on the host (a launch per iteration) when, mapped, it would be the whole grid with fewer
        threads than a warp (SP's z_solve: `for (m = 3; m < 5; m++)` around two 3-D solves) while loops inside
        it can be a grid of a warp or more: a kernel of two threads running everything in each is never the
        better port.  None when that is not so, or the loops inside cannot be planned."""
        trip = root.trip_count
        if self.map_override or plain.fixed_threads or trip is None or not trip.variables <= self.env.keys():
            return None
        try:
            threads = trip.evaluate(self.env)
        except Exception:
            return None
        if threads >= WARP_THREADS or not any(self.can_start_kernel(lp)[0] for lp in root.loops() if lp is not root):
            return None
        count, self.kernel_count = self.kernel_count, 0
        try:
            host = self.host_loop(root, f"{loop_words(self.c_var(root))} stays on the host with a launch per "
                                        f"iteration: its {threads:g} iterations would be a grid of fewer threads "
                                        "than a warp, and loops inside it can be the grid")
        except PassFailed:
            host = None
        if host is None or max((self.threads(k) for k in kernels_in(host.body) if not k.serial), default=0) \
                < WARP_THREADS:
            self.kernel_count = count      # (convolution's 5 x 5 filter: the loop inside is no wider)
            return None
        return (host,)

    def few_threads(self, loops: list[Loop]) -> bool:
        """Whether `loops` as a grid would be fewer than FEW_THREADS threads (every trip count known)."""
        return 0 < self.grid_size(lp.trip_count for lp in loops) < FEW_THREADS

    def threads(self, kernel: Kernel) -> float:
        """The iterations of a kernel's mapped loops once the sizes are known (grid_size)."""
        return self.grid_size(m.trip for m in kernel.loops)

    def grid_size(self, trips) -> float:
        """The product of trip counts once the sizes are known: inf when a size is not known, 0 when a trip count
        moves with a loop around (a triangular `k < i`: no width to count on)."""
        loop_vars = {lp.var for lp in self.nest.loops()}
        n = 1.0
        for trip in trips:
            if trip is None or trip.variables & loop_vars:
                return 0.0
            if not trip.variables <= self.env.keys():
                return float("inf")
            try:
                n *= trip.evaluate(self.env)
            except Exception:
                return 0.0
        return n

    def respects_map(self, kernels) -> bool:
        """Whether distributed kernels map only loops --map names (every kernel, when it is given)."""
        return not self.map_override or all(self.wanted_name(m.c_var) for k in kernels for m in k.loops)

    def wanted_name(self, c_var: str) -> bool:
        return c_var in self.map_override

    # ------------------------------------------------------------------ distribution and interchange

    def distributed(self, root: Loop, whole: bool = False) -> tuple[Kernel, ...] | None:
        """The root loop's body split into groups that run as separate kernels (loop distribution), each
        mapping what it can (with an interchange where a parallel loop sits in a sequential one), or None.

        Legal when every dependence carried by the root goes forward from a group to the same or a later
        one (groups run in order, each over all iterations); groups are merged until that holds.  Applied
        only to nests whose dependences are all known: no aliasing doubt, call or flag, no scalar written
        across items (each kernel would see another's value), no guard around the items.  With `whole` (the
        root alone maps nothing), one group may be the whole body: then only its interchange helps."""
        if len(root.body) < (1 if whole else 2) or self.nest.all_flags() or not self._mappable(root):
            return None             # every kernel of a distribution maps the root or runs it in each thread
        for lp in self.nest.loops():
            v = self.deps.verdicts.get(lp.lid)
            if v is None or any(r.kind not in SERIAL_SAFE for r in v.reasons) or lp.header_stmt is not None:
                return None
        stmts = self.nest.statements()
        local = {sc.name for sc in self.nest.scalars if sc.declared_in is not None}
        if any(set(st.scalar_writes) - local - {st.decl} for st in stmts):
            return None
        if any(st.guards != root.guards for st in stmts) or any(n.guards != root.guards for n in root.body):
            return None
        if any(sc.declared_in and sc.declared_in[-1] == root.lid for sc in self.nest.scalars):
            return None                            # a variable of the root's body could be split across kernels
        group_of: dict[int, int] = {}
        for k, node in enumerate(root.body):
            for st in (node.statements() if isinstance(node, Loop) else [node]):
                group_of[st.sid] = k
        first = forward_groups(len(root.body), [(group_of[d.source_sid], group_of[d.sink_sid])
                                                for d in self.deps.dependences if d.loop == root.lid])
        groups: dict[int, list[int]] = {}
        for k, start in enumerate(first):
            groups.setdefault(start, []).append(k)
        if len(groups) < (1 if whole else 2):
            return None

        def sids(positions):
            return {st.sid for st in stmts if group_of[st.sid] in positions}
        parts: list[tuple[int, ...]] = []
        for positions in groups.values():
            # a group that maps only the root joins the one before it when that maps only the root too and
            # the root carries nothing between them: one launch instead of two
            if parts and self._root_only(root, parts[-1], sids) and self._root_only(root, tuple(positions), sids) \
                    and self.group_kernel(root, parts[-1] + tuple(positions), sids(parts[-1] + tuple(positions)),
                                          probe=True) is not None:
                parts[-1] += tuple(positions)
            else:
                parts.append(tuple(positions))
        kernels = []
        for positions in parts:
            k = self.group_kernel(root, positions, sids(positions))
            items = [root.body[p] for p in positions]
            if k is None and len(items) == 1 and isinstance(items[0], Loop):
                more = self.inner_parts(root, items[0])
                if more is None:
                    return None
                kernels.extend(more)
            elif k is None:
                return None
            else:
                kernels.append(k)
        return tuple(kernels)

    def inner_parts(self, root: Loop, inner: Loop) -> list[Kernel] | None:
        """Loop `inner`, an item of the root, with its body split into parts that each run over both loops as a
        kernel (two-level distribution: bicg's `for i { for j { s[j] += ...; q[i] += ... } }` is a kernel over
        j with i in each thread for s, then one over i with j in each thread for q).  Legal when every
        dependence either loop carries goes forward between parts; None when some part cannot be mapped."""
        if len(inner.body) < 2:
            return None
        part_of: dict[int, int] = {}
        for k, node in enumerate(inner.body):
            for st in (node.statements() if isinstance(node, Loop) else [node]):
                part_of[st.sid] = k
        first = forward_groups(len(inner.body), [(part_of[d.source_sid], part_of[d.sink_sid])
                                                 for d in self.deps.dependences if d.loop in (root.lid, inner.lid)
                                                 and d.source_sid in part_of and d.sink_sid in part_of])
        parts: dict[int, list[int]] = {}
        for k, start in enumerate(first):
            parts.setdefault(start, []).append(k)
        if len(parts) < 2:
            return None
        kernels = []
        for positions in parts.values():
            psids = {sid for sid, k in part_of.items() if k in positions}

            def carries(lp: Loop) -> bool:
                return any(d.loop == lp.lid and d.source_sid in psids and d.sink_sid in psids
                           for d in self.deps.dependences)
            split: tuple[Reduction, ...] = ()
            if not carries(root) and not carries(inner) and self._mappable(inner):
                mapped, stay = [root, inner], []
            elif not carries(root):
                mapped, stay = [root], [inner]
                if split := self.split_over(inner, psids, {root.var}):
                    mapped, stay = [root, inner], []        # the inner loop's reduction split across threads
            elif not carries(inner) and self._mappable(inner) and self._interchangeable(root, inner, 0, psids):
                mapped, stay = [inner], [root]
                if split := self.split_over(root, psids, {inner.var}):
                    mapped, stay = [inner, root], []        # the root's reduction split across threads, inside
            else:
                return None
            kernels.append(self._view_kernel(root, [inner.body[k] for k in positions], mapped, stay, inner,
                                             tuple(positions), split))
        return kernels

    def _root_only(self, root: Loop, positions: tuple[int, ...], sids) -> bool:
        """Whether the group's kernel maps the root loop and nothing inside it."""
        plan = self.group_kernel(root, positions, sids(positions), probe=True)
        return plan is not None and len(plan) == 1 and plan[0] is root

    def group_kernel(self, root: Loop, positions: tuple[int, ...], sids: set[int], probe: bool = False):
        """The kernel of one group of the root's body: the root mapped when it carries nothing within the
        group (then the group's single loop too, or the parallel loop inside it, interchanged), else the
        group's single parallel loop mapped with the root running inside each thread.  With `probe`, only
        the loops it would map (None when it cannot)."""
        items = [root.body[k] for k in positions]
        single = items[0] if len(items) == 1 and isinstance(items[0], Loop) else None
        reds: tuple[Reduction, ...] = ()
        carried = any(d.loop == root.lid and d.source_sid in sids and d.sink_sid in sids for d in self.deps.dependences)
        if not carried:
            mapped, inner, body_of, sel = [root], [], root, positions
            if single is not None and self.status(single) == "parallel" and self._mappable(single):
                mapped, body_of, sel = [root, single], single, None
                nxt = _only_loop_child(single)
                if nxt is not None and self.status(nxt) == "parallel" and self._mappable(nxt):
                    mapped, body_of = [root, single, nxt], nxt
            elif single is not None and (nxt := _only_loop_child(single)) is not None \
                    and self.status(nxt) == "parallel" and self._mappable(nxt) and self._interchangeable(single, nxt, 1):
                mapped, inner, body_of, sel = [root, nxt], [single], nxt, None
            elif single is not None and (reds := self.split_over(single, sids, {root.var})):
                mapped, body_of, sel = [root, single], single, None     # the reduction split across threads
        elif single is not None and self.status(single) == "parallel" and self._mappable(single) \
                and self._interchangeable(root, single, 0):
            mapped, inner, body_of, sel = [single], [root], single, None
            if reds := self.split_over(root, sids, {single.var}):
                mapped, inner = [single, root], []        # the root's reduction split across threads, inside
        else:
            return None
        if probe:
            return mapped
        return self._view_kernel(root, items, mapped, inner, body_of, sel, reds)

    def _view_kernel(self, root: Loop, items: list, mapped: list[Loop], inner: list[Loop], body_of: Loop,
                     sel: tuple[int, ...] | None, split: tuple[Reduction, ...] = ()) -> Kernel:
        """The kernel mapping `mapped` with `inner` in each thread around `body_of`'s body (the items at `sel`,
        or all), on its own view of the nest; `items` are the root's items it runs, for its description.
        `split`: the reductions of the last mapped loop, split across the threads of its block dimension
        (split_reductions)."""
        # the host loops around the root stay outermost in the view: the kernel reads their variables
        view = kernel_view(self.nest, self.host_chain + mapped + inner, body_of, sel)
        hosts = len(self.host_chain)
        view_loops = view.loops()[hosts:hosts + len(mapped)]
        dims = Mapper(view, self.deps, self.options).assign_dims(view_loops)
        mapped_loops = tuple(MappedLoop(lp.lid, lp.var, dims[lp.lid], lp.trip_count, lp.origin, self.c_var(lp), lp.loc)
                             for lp in view_loops)
        name = _c_name(f"c2gpu_{self.nest.name}_k{self.kernel_count}")
        self.kernel_count += 1
        first, last = items[0].loc.line, max(n.loc.line for n in items)
        if split:               # the last mapped loop's iterations taken in turns by the threads of each element
            mapped_loops = mapped_loops[:-1] + (replace(mapped_loops[-1], turns=self.split_threads),)
        split_dim = dims[view_loops[-1].lid] if split else ""
        how = (f"; reduction of {', '.join(r.target for r in split)}"
               f"{_split_words(split_dim, mapped_loops[-1].c_var, self.split_threads)}") if split else ""
        why = (f"maps {', '.join(m.c_var + '->' + m.dim for m in mapped_loops)} (proven parallel{how}); distributed "
               f"from {loop_words(self.c_var(root))} ({self.at(root.loc)}): runs line{'s' if first != last else ''} "
               f"{first}{'-' + str(last) if first != last else ''}")
        moved = [lp for lp in inner if any(m is x for m in mapped for x in lp.loops())]   # was outside one
        if moved:
            why += (f"; loop{'s' if len(moved) > 1 else ''} {', '.join(repr(self.c_var(lp)) for lp in moved)} "
                    "run in each thread, interchanged inside the mapped loops (every dependence they carry keeps "
                    "the mapped loops' iteration)")
        elif inner:
            why += f"; {', '.join(repr(self.c_var(lp)) for lp in inner)} runs in each thread"
        x = next(m for m in mapped_loops if m.dim == "x")
        why += "; " + Mapper(view, self.deps, self.options).coalescing(view_loops, x.lid, x.c_var)
        return self.with_private_arrays(Kernel(name, mapped_loops, view_loops[-1].lid,
                                               self.block_shape(len(mapped_loops), name,
                                                               fixed_threads(mapped_loops)), split, why,
                                               view=view, tree_dims=split_dim or WHOLE_BLOCK),
                                        [lp.lid for lp in mapped])

    def _mappable(self, lp: Loop) -> bool:
        return lp.trip_count is not None and lp.normalized and not (lp.lower_pieces or lp.upper_pieces) \
            and not self.one_trip(lp)

    def _interchangeable(self, outer: Loop, inner: Loop, depth: int, sids: set[int] | None = None) -> bool:
        """Whether `inner`, a loop in `outer`'s body (at nest depth `depth`), may run outside it: its bounds
        do not depend on `outer`, and every dependence `outer` carries among the statements inside `inner`
        (those of `sids` only, when given) is within one iteration of `inner` (distance 0 at depth + 1), so
        swapping keeps its order."""
        if not any(n is inner for n in outer.body):
            return False
        if any(outer.var in p.variables for p in (inner.lower, inner.upper) if p is not None) or \
                inner.trip_count is None or outer.var in inner.trip_count.variables or outer.trip_count is None:
            return False
        sids = sids if sids is not None else {st.sid for st in inner.statements()}
        depth += len(self.host_chain)              # depths above are the root's: the host loops come first
        return all(_component(d, depth + 1) == "=" for d in self.deps.dependences
                   if d.loop == outer.lid and d.source_sid in sids and d.sink_sid in sids)

    def worth_kernels(self, loop: Loop) -> bool:
        """Whether an item of a host loop gets kernels of its own: it starts one, or a parallel loop inside
        it does.  A sequential loop whose only parallelism is a reduction deeper down runs in one thread
        instead (lu's `for j { for k: A[i][j] -= ...; A[i][j] /= ... }`): a launch per iteration of it would
        cost more than it saves."""
        return self.can_start_kernel(loop)[0] or any(
            self.status(lp) == "parallel" and self.can_start_kernel(lp)[0] for lp in loop.loops())

    def parallel_inside(self, loop: Loop) -> bool:
        """Whether `loop` or a loop inside it could start a kernel."""
        return any(self.can_start_kernel(lp)[0] for lp in loop.loops())

    def serial_kernel(self, host: Loop, positions: list[int]) -> Kernel:
        """A one-thread kernel running the items at `positions` of host loop `host`'s body, as written.

        Sound when the only reasons the loops around and inside them are sequential are proven dependences
        (the items keep their order); an aliasing doubt, a call or a pointer assigned in the nest would make
        the device copies of the arrays differ from the original's memory."""
        nodes = [host.body[k] for k in positions]
        lids = {lp.lid for node in nodes if isinstance(node, Loop) for lp in node.loops()}
        lids |= set(_path_lids(self.nest.root, host.lid))
        for lid in sorted(lids):
            v = self.deps.verdicts.get(lid)
            doubt = next((r for r in (v.reasons if v is not None else ()) if r.kind not in ONE_THREAD_SAFE), None)
            if doubt is not None:
                raise PassFailed(f"the code between the kernels of {loop_words(self.c_var(host))} ({self.at(host.loc)}) "
                                 f"would run in one thread on the device, but {doubt.message}",
                                 code="not-proven-parallel", loc=doubt.sink or doubt.source or host.loc)
        flag = next((f for f in self.nest.all_flags() if (f.loop_ids is None or lids & set(f.loop_ids))
                     and f.code not in ONE_THREAD_SAFE_FLAGS), None)
        if flag is not None:
            raise PassFailed(f"the code between the kernels of {loop_words(self.c_var(host))} ({self.at(host.loc)}) would "
                             f"run in one thread on the device, but {flag.message} ({self.at(flag.loc)})",
                             code="not-proven-parallel", loc=flag.loc)
        first, last = nodes[0].loc.line, max(n.loc.line for n in nodes)
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        name = _c_name(f"c2gpu_{self.nest.name}_k{self.kernel_count}")
        self.kernel_count += 1
        why = (f"runs {lines} in one thread between the launches of {loop_words(self.c_var(host))} (they are not parallel; "
               "the data stays on the device)")
        return Kernel(name, (), host.lid, (1, 1, 1), (), why, serial=tuple(positions))

    def kernel(self, root: Loop, reds: tuple[Reduction, ...]) -> Kernel:
        chain = [root]
        split_lid = None
        sunk: dict[int, tuple[Statement, ...]] = {}     # lid of a loop joining the chain -> statements sunk into it
        # (only under the host loops of the root's perfect chain, which a view keeps as they are numbered)
        path = [self.nest.loop(lid) for lid in _path_lids(self.nest.root, root.lid)[:-1]]
        can_sink = [lp.lid for lp in path] == [lp.lid for lp in self.host_chain]
        while len(chain) < 3:
            nxt, more = _only_loop_child(chain[-1]), ()
            if nxt is None and can_sink and (found := self.sinkable(chain[-1], [s for ss in sunk.values() for s in ss])):
                more, nxt = found
            if nxt is None or nxt.trip_count is None or not nxt.normalized or self.one_trip(nxt):
                break
            st = self.status(nxt)
            want = self.wanted(nxt)
            if want is False:
                break
            if any(r.array_access is not None and self.element_range(root, r, (*chain, nxt)) is None for r in reds):
                break       # it indexes a reduction's element: the thread runs it whole
            if st == "reduction" and not reds and not more and not sunk and (split := self.split_over(
                    nxt, {x.sid for x in nxt.statements()}, {lp.var for lp in chain})):
                reds, split_lid = split, nxt.lid      # the reduced loop joins the grid; nothing maps inside it
                chain.append(nxt)
                break
            if st == "parallel" or (st == "reduction" and reds and self.mapped_reductions(nxt) == reds):
                chain.append(nxt)
                if more:
                    sunk[nxt.lid] = more
                continue
            if want is True:
                raise PassFailed(f"--map asks for {loop_words(self.c_var(nxt))} ({self.at(nxt.loc)}), but {self.reason(nxt)}",
                                 code="map-refused", loc=nxt.loc)
            break
        # a short innermost loop (RGB channels, a 3-point stencil) would leave most of a warp idle as a
        # grid dimension: it stays in the thread unless the user maps it, or the loops around it would then be
        # a grid of a few warps at most (12 x 12 x 12: 1,728 threads mapped whole, not 12), or the search asks
        # for the structure with it mapped (keep_short_loops)
        while len(chain) > 1 and self.wanted(chain[-1]) is not True and _small_trip(chain[-1]) \
                and not self.options.get("keep_short_loops") and not self.few_threads(chain[:-1]):
            chain.pop()
        if self.map_override:
            chain = [lp for lp in chain if self.wanted(lp)] or chain[:1]
            # only a prefix-closed perfect chain can be mapped; keep the leading run of wanted loops
        if split_lid is not None and split_lid not in {lp.lid for lp in chain}:
            reds = ()                       # the split loop was left in the thread after all
        prelude = tuple(st for lp in chain for st in sunk.get(lp.lid, ()))
        verdict = self.deps.verdicts.get(root.lid)
        red_targets = {r.target for r in reds}
        shared = [v for v in getattr(verdict, "outer_writes", ()) if v not in verdict.private and v not in red_targets]
        if shared:
            # each thread would need the one value the scalar has across iterations (or after the loop)
            raise PassFailed(f"{loop_words(self.c_var(root))} at {self.at(root.loc)}: scalar '{shared[0]}' is written in "
                             "the loop and keeps its value across iterations or after it; c2gpu ports only private "
                             "scalars and +, max, min reductions", code="shared-scalar", loc=root.loc)
        originals = list(chain)                        # the verdicts' loops (a view renumbers them)
        view = None
        if prelude:
            # the statements between the mapped loops run first in each thread: a view of the nest, perfect
            view = kernel_view(self.nest, path + chain, chain[-1], None, prelude)
            chain = view.loops()[len(path):len(path) + len(chain)]      # (no split reduction then: see above)
        dims = Mapper(view, self.deps, self.options).assign_dims(chain) if view is not None else self.assign_dims(chain)
        name = _c_name(f"c2gpu_{self.nest.name}_k{self.kernel_count}")   # function@line: unique per file
        mapped = tuple(MappedLoop(lp.lid, lp.var, dims[lp.lid], lp.trip_count, lp.origin, self.c_var(lp), lp.loc,
                                  turns=self.split_threads if lp.lid == split_lid else 0)
                       for lp in chain)
        block = self.block_shape(len(chain), name, fixed_threads(mapped))
        if reds and power_of_two_needed(block):
            raise PassFailed(f"block {block} has a thread count that is not a power of two, which the reduction tree "
                             "needs", code="block-not-power-of-two", loc=root.loc)
        self.kernel_count += 1
        x_loop = next(m for m in mapped if m.dim == "x")
        scatters = sorted({a.text for s in (view or self.nest).statements() if s.scatter and chain[-1].lid in s.loop_ids
                           for a in s.accesses if a.array == s.scatter})
        ordered = [r for r in reds if ordered_reduction(self.nest, r)]
        ranges = () if split_lid is not None else tuple(
            e for r in reds if r.array_access is not None
            and (e := self.element_range(root, r, tuple(originals))))
        split_dim = next((dims[lp.lid] for lp in chain if lp.lid == split_lid), "")
        per = {e.target: f" (a partial per value of {', '.join(c for _, _, c, _, _ in e.loops)} in each thread: "
                         f"{e.count})" for e in ranges}
        atomic = [r.target + per.get(r.target, "") for r in reds if r not in ordered]
        ops = sorted({r.op for r in ordered})
        rows = _split_words(split_dim, self.c_var(chain[-1]), self.split_threads) if split_dim else \
            " by block tree and atomics"
        how = "; ".join(([f"reduction of {', '.join(atomic)}{rows}"] if atomic else []) +
                        ([f"{'/'.join(ops)} of {', '.join(r.target for r in ordered)} by block tree over (value, "
                          "iteration) pairs, as C keeps equal values"] if ordered else []))
        moved = f"; {_sunk_words(prelude)} in each thread first" if prelude else ""
        why = (f"maps {', '.join(m.c_var + '->' + m.dim for m in mapped)} (proven parallel"
               f"{'; ' + how if how else ''}"
               f"{'; ' + ', '.join(scatters) + ' updated with atomics' if scatters else ''}{moved}); "
               + (Mapper(view, self.deps, self.options) if view is not None else self).coalescing(
                   chain, x_loop.lid, x_loop.c_var))
        return self.with_private_arrays(Kernel(name, mapped, chain[-1].lid, block, reds, why, ranges,
                                               tree_dims=split_dim or WHOLE_BLOCK, view=view),
                                        [lp.lid for lp in originals])

    def sinkable(self, loop: Loop, before: list[Statement]) -> tuple[tuple[Statement, ...], Loop] | None:
        """(the statements, the loop) when `loop`'s body is a few statements and then one loop, and each thread of
        a kernel mapping both may run those statements itself before the inner loop's body (`xi = (double)i *
        dnxm1;` between NPB's `for i` and `for j`): each assigns a scalar private to `loop`'s iterations (dead
        after them, so no other thread needs its value) that nothing inside the inner loop writes, from scalars
        that nothing in the nest writes but such statements (`before`: those of the loops around), loop variables
        and arrays the nest never writes, with no call but a math function and no condition of its own: computing
        it again in every thread of an iteration gives each the value C gives it there.  None otherwise (and
        with --map, which names the loops as written)."""
        if self.map_override or len(loop.body) < 2 or not isinstance(loop.body[-1], Loop):
            return None
        inner, stmts = loop.body[-1], loop.body[:-1]
        if inner.header_stmt is not None or any(isinstance(n, Loop) for n in stmts):
            return None
        verdict = self.deps.verdicts.get(loop.lid)
        infos = {sc.name: sc for sc in self.nest.scalars}
        private = {v for v in getattr(verdict, "private", ()) if not outlives_nest(v, infos.get(v), self.nest)} | {
            sc.name for sc in self.nest.scalars if sc.declared_in and loop.lid in sc.declared_in}
        everything = self.nest.statements()
        written_arrays = {a.array for st in everything for a in st.accesses if a.kind == "write"}
        written_scalars = {v for st in everything for v in st.scalar_writes}
        inside = {v for st in inner.statements() for v in st.scalar_writes} | {
            v for lp in inner.loops() for v in (lp.var, self.c_var(lp))}
        loop_vars = {v for lp in self.nest.loops() for v in (lp.var, self.c_var(lp))}
        mine = {v for st in before for v in st.scalar_writes}
        for st in stmts:
            targets = set(st.scalar_writes)
            if st.kind not in ("assign", "decl") or st.syntax is None or st.guards != inner.guards or len(targets) != 1 \
                    or not targets <= private or targets & inside or st.scatter or st.reductions \
                    or any(a.kind != "read" or a.array in written_arrays for a in st.accesses) \
                    or any(c not in MATH_FUNCTIONS or c in {f.name for f in self.nest.functions} for c in st.calls) \
                    or any(v in written_scalars and v not in mine and v not in loop_vars for v in st.scalar_reads):
                return None
            mine |= targets
        return tuple(stmts), inner

    @property
    def split_threads(self) -> int:
        """The threads of a row that take turns over a split reduction's loop: a warp, or what the search asks."""
        return self.options.get("split_threads", SPLIT_THREADS)

    def split_over(self, loop: Loop, sids: set[int], kept: set[str]) -> tuple[Reduction, ...]:
        """The reductions over `loop` among the statements `sids` when `loop` can be split across the threads of a
        block dimension as a CUDA programmer splits a matrix-vector product's rows (`y[i] += A[i][j] * x[j]`: a
        row of threads per i takes turns over j, a tree per row, one atomic into y[i]); () when it cannot.

        With split_reductions asked for (the search's alternative structure): every dependence `loop` carries
        among those statements is the self-dependence of one of these reductions, each a +, max or min into an
        array element (not an ordered floating-point max/min; no floating-point sum under --exact-fp) that the
        loops named in `kept` (mapped beside it) alone choose; no scalar written there outlives an iteration
        (each thread has its own), and no scatter."""
        if not self.options.get("split_reductions") or not self._mappable(loop):
            return ()
        stmts = {st.sid: st for st in self.nest.statements() if st.sid in sids}
        local = {sc.name for sc in self.nest.scalars if sc.declared_in and loop.lid in sc.declared_in}
        if any(st.scatter or set(st.scalar_writes) - local - {st.decl} for st in stmts.values()):
            return ()
        loop_vars = {lp.var for lp in self.nest.loops()}
        reds: dict[str, Reduction] = {}
        for d in self.deps.dependences:
            if d.loop != loop.lid or d.source_sid not in stmts or d.sink_sid not in stmts:
                continue
            if d.scalar or d.source_sid != d.sink_sid or d.source is None or d.sink is None:
                return ()
            r = next((r for r in stmts[d.source_sid].reductions if r.array_access is not None
                      and r.array_access.array == d.array and loop.var in r.loops
                      and d.source.subscripts == r.array_access.subscripts == d.sink.subscripts), None)
            if r is None or r.op not in MAPPABLE_REDUCTIONS or ordered_reduction(self.nest, r) \
                    or not r.array_access.affine or any(p is None for p in r.array_access.subscripts) \
                    or any((p.variables & loop_vars) - kept for p in r.array_access.subscripts) \
                    or (self.options.get("exact_fp") and r.op == "+" and reduction_type(self.nest, r) in FLOATS):
                return ()
            if reds.setdefault(r.target, r).op != r.op:
                return ()
        return tuple(reds.values())

    def with_private_arrays(self, kernel: Kernel, lids: list[int] | None = None) -> Kernel:
        """`kernel` with the arrays the dependence pass privatized for one of its mapped loops (`lids`: theirs in
        the nest, when the kernel's view renumbered them): each thread has its own copy.  Every access to such an
        array must be one the kernel runs (the dependence pass saw them all inside that loop; a kernel that runs
        part of its body, after distribution, may not hold them all): otherwise values would have to pass between
        kernels through copies that no longer exist."""
        lids = lids if lids is not None else [m.lid for m in kernel.loops]
        names = sorted({a for lid in lids for a in getattr(self.deps.verdicts.get(lid), "private_arrays", ())})
        if not names:
            return kernel
        view = kernel.view or self.nest
        runs = {st.sid for st in kernel.statements({lp.lid: lp for lp in view.loops()})}
        for a in names:
            other = next((st for st in self.nest.statements() if st.sid not in runs
                          and any(x.array == a for x in st.accesses)), None)
            if other is not None:
                raise PassFailed(f"array '{a}' has a copy per thread in {kernel.name}, but {self.at(other.loc)} uses "
                                 "it outside that kernel", code="private-array-split", loc=other.loc)
        sizes = {a: self.array_bytes(a) for a in names}
        if None in sizes.values():
            shown = ", ".join(f"'{a}' ({'unknown size' if b is None else f'{b:,} bytes'})" for a, b in sizes.items())
            raise PassFailed(f"each thread of {kernel.name} would need its own copy of {shown}: of a size c2gpu "
                             "cannot tell", code="private-array-too-large", loc=self.nest.array(names[0]).loc)
        # CUDA gives a thread at most 512 KiB of local memory: the largest copies go to device memory instead (NPB
        # EP's 1 MiB x), one per thread, interleaved as local memory is, so that a warp's accesses coalesce
        scratch: list[str] = []
        for a in sorted(names, key=lambda a: -sizes[a]):
            if sum(b for n, b in sizes.items() if n not in scratch) <= LOCAL_BYTES_PER_THREAD:
                break
            scratch.append(a)
        why = kernel.why
        if scratch:
            why += "; " + ", ".join(f"'{a}' ({sizes[a]:,} bytes)" for a in sorted(scratch)) + \
                f" per thread in device memory (over the {LOCAL_BYTES_PER_THREAD // 1024} KiB of local memory a " \
                "thread may have), interleaved across threads"
        return replace(kernel, private_arrays=tuple(names), scratch_arrays=tuple(sorted(scratch)), why=why)

    def array_bytes(self, name: str) -> int | None:
        """The bytes of a declared array of constant extents (None: an extent is not a constant)."""
        info = self.nest.array(name)
        total = info.elem_size
        for d in info.dims:
            if d is None or not d.is_const():
                return None
            total *= int(d.const_value())
        return total


class MapLoops(Pass):
    name = "mapping"
    description = "choose the loops that become the CUDA grid, the block shape, and what stays on the host"
    requires = ("dependence",)
    provides = ("mapping",)

    def run(self, nest: Nest, ctx) -> Mapping:
        deps = ctx.get("dependence", nest)
        blockers = [f for f in nest.all_flags() if f.code in HOST_ONLY] or \
            [f for f in nest.all_flags() if f.code == "unsupported-statement"]
        if blockers:
            b = blockers[0]         # host-only messages name their lines themselves
            raise PassFailed(b.message if b.code in HOST_ONLY else f"{b.message} ({line_of(b.loc, nest.loc.file)})",
                             code=b.code, loc=b.loc)
        rules = self.mapping(nest, deps, ctx.options)
        if ctx.options.get("gpu") is None or ctx.options.get("map") or ctx.options.get("map_host"):
            return rules              # no model to choose, or the user chose: the one structure
        frontend, gpu = ctx.program.frontend if ctx.program is not None else None, ctx.options["gpu"]
        gpu = gpu if isinstance(gpu, GPU) else load_gpu(str(gpu))      # a name, from the API
        coarse = () if frontend is None or not frontend.describes(nest) else coarsened_mappings(
            nest, rules, frontend.describe_again, lambda view, lids: proves_parallel(view, lids, ctx),
            gpu.sm_count * gpu.max_threads_per_sm,
            nest.param_env(ctx.options.get("params")))
        return replace(rules, alternatives=structures(nest, deps, ctx.options, rules) + coarse)

    @staticmethod
    def mapping(nest: Nest, deps, options: dict) -> Mapping:
        items = Mapper(nest, deps, options).plan_root()
        notes = list(nest.rewrites) + list(getattr(deps, "notes", ()))
        reassociates = any(r.op == "+" and reduction_type(nest, r) in FLOATS
                           for k in Mapping("", items, ()).kernels() for r in k.reductions)
        if reassociates:
            notes.append("floating-point sums across threads are reassociated: the result differs from C's "
                         "order in the last bits where the sum is well conditioned, by more where its terms "
                         "cancel (verify compares with a tolerance and says which; --exact-fp keeps C's order)")
        return Mapping(nest.name, items, tuple(notes), reassociates)


MAX_HOST_LOOPS = 2     # structures with 1 and 2 outer parallel loops on the host: the rules' + at most 2 others


def structures(nest: Nest, deps, options: dict, rules: Mapping) -> tuple[Mapping, ...]:
    """The other legal structures of `nest` than the rules' (`rules`), for the model to compare.

    The rules map every parallel loop from the outside in to the grid (up to three, x on the unit-stride
    subscript), keep the loops inside in each thread, and distribute a body that maps more that way.  The
    other choice a CUDA programmer makes is to keep outer parallel loops on the host with a launch per
    iteration (doitgen's `r`, convolution-3d's `i`), so that the loops inside form the grid (distributed where
    the body needs it).  Bounded: the perfect chain of parallel loops from the root, with its first 1 or 2
    loops on the host (MAX_HOST_LOOPS), and something left to map below them; each is planned by the same
    Mapper as the rules (so it is legal by the same proofs), and structures equal to one already found are
    dropped.  At most MAX_HOST_LOOPS alternatives per nest, and three more: the short innermost loops mapped,
    and the rules with each reduction loop directly inside mapped loops split across the threads of a block
    dimension (Mapper.split_over), a warp per row or a block per row (ROW_BLOCK_THREADS)."""
    probe = Mapper(nest, deps, options)
    chain = [nest.root]
    while (nxt := _only_loop_child(chain[-1])) is not None:
        chain.append(nxt)
    chain = [lp for lp in chain[:MAX_HOST_LOOPS + 1]]
    host: list[str] = []
    seen = {rules.structure}
    out = []
    for lp in chain[:MAX_HOST_LOOPS]:
        if not probe.can_start_kernel(lp)[0]:
            break                                       # not parallel, or folded / named already: the rules decide
        host.append(probe.c_var(lp))
        try:
            alt = MapLoops.mapping(nest, deps, dict(options, map_host=list(host)))
        except PassFailed:
            continue
        if alt.structure not in seen and alt.kernels():
            seen.add(alt.structure)
            out.append(alt)
    # the short innermost loops the rules keep in each thread, mapped (a 3-point stencil's, when the model finds
    # the grid they add worth their idle lanes); a reduction loop inside the grid's loops split across the threads
    # of a block dimension (split_reductions), a warp or a block of them per row
    for asked in ({"keep_short_loops": True}, {"split_reductions": True},
                  {"split_reductions": True, "split_threads": ROW_BLOCK_THREADS}):
        try:
            alt = MapLoops.mapping(nest, deps, {**options, **asked})
        except PassFailed:
            continue
        if alt.structure not in seen and alt.kernels():
            seen.add(alt.structure)
            out.append(alt)
    return tuple(out)

