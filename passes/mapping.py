"""Loop-to-thread mapping: which loops become the CUDA grid, which stay in a thread, which stay on the host.

Rules (decisions live here; templates only print them):
- A loop proven parallel starts a kernel. Directly nested loops that are also
  parallel join it while the nest is perfect (the body is just the next loop),
  up to three grid dimensions.  Loops inside the innermost mapped loop run
  sequentially in each thread (that is how `k` of matmul, a reduction kept in
  the thread, is handled: per-thread accumulation).
- A loop whose only carried dependences are scalar `+`, `max` or `min`
  reductions can be mapped too: each thread keeps a partial result, the
  block combines them with a tree in shared memory, and one atomic per block
  updates the result.
- A sequential loop (a time loop, or one carrying a dependence) whose body
  consists only of loops stays on the host and launches the inner kernels on
  every iteration; the data stays on the device in between.
- Anything else is refused with the reason and the line that blocks it.
The x dimension goes to the mapped loop that is the fastest-varying subscript
of most accesses (coalescing); users can override loops and block shape.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


from c2gpu.ir import Loop, Nest, Reduction
from c2gpu.plan import HostLoop, Kernel, MappedLoop, Mapping
from c2gpu.pipeline import Pass, PassFailed
from c2gpu.symbolic import Sym

DIMS = ("x", "y", "z")
DEFAULT_BLOCKS = {1: (256, 1, 1), 2: (32, 8, 1), 3: (32, 4, 2)}
MAPPABLE_REDUCTIONS = ("+", "max", "min")
SERIAL_SAFE = ("flow", "anti", "output", "reduction")   # reasons a loop is sequential that one thread respects


def _only_loop_child(loop: Loop) -> Loop | None:
    """The single loop that is the whole body of `loop` (a perfect nest), or None."""
    if loop.perfect and len(loop.body) == 1 and isinstance(loop.body[0], Loop) and loop.body[0].header_stmt is None:
        return loop.body[0]
    return None


def _path_lids(root: Loop, lid: int) -> list[int]:
    """The lids of the loops from `root` down to loop `lid`, both included ([] if it is not there)."""
    if root.lid == lid:
        return [lid]
    for node in root.body:
        if isinstance(node, Loop) and (path := _path_lids(node, lid)):
            return [root.lid] + path
    return []


SMALL_TRIP = 16


def _small_trip(loop: Loop) -> bool:
    t = loop.trip_count
    return t is not None and not t.variables and t.evaluate({}) < SMALL_TRIP


def _c_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


class Mapper:
    def __init__(self, nest: Nest, deps, options: dict):
        self.nest = nest
        self.deps = deps
        self.options = options
        self.kernel_count = 0
        self.block_override = options.get("block")
        self.map_override = options.get("map")  # loop variable names (as written in C) to map

    def status(self, loop: Loop) -> str:
        v = self.deps.verdicts.get(loop.lid)
        return v.status if v is not None else "unknown"

    def reason(self, loop: Loop) -> str:
        v = self.deps.verdicts.get(loop.lid)
        if v is None or not v.reasons:
            return f"loop '{self.c_var(loop)}' is not proven parallel"
        return v.reasons[0].message

    def blocking_loc(self, loop: Loop):
        """Where the first reason `loop` is not parallel happens (the dependence's sink), else the loop."""
        v = self.deps.verdicts.get(loop.lid)
        first = v.reasons[0] if v is not None and v.reasons else None
        return (first.sink or first.source or loop.loc) if first is not None else loop.loc

    def c_var(self, loop: Loop) -> str:
        return loop.origin.var if loop.origin is not None else loop.var

    def wanted(self, loop: Loop) -> bool | None:
        """--map override: True/False when the user said, None when c2gpu decides."""
        if not self.map_override:
            return None
        return self.c_var(loop) in self.map_override

    def mapped_reductions(self, loop: Loop) -> tuple[Reduction, ...] | None:
        """The scalar reductions a mapped reduction loop needs, or None if they cannot be done across threads."""
        reds = [r for s in self.nest.statements() if loop.lid in s.loop_ids for r in s.reductions
                if loop.var in r.loops]
        if not reds or any(r.array_access is not None or r.op not in MAPPABLE_REDUCTIONS for r in reds):
            return None
        scalars = {s.name: s for s in self.nest.scalars}
        if any(scalars.get(r.target) is None or scalars[r.target].role == "local" for r in reds):
            return None
        if self.options.get("exact_fp") and any(r.op == "+" and _is_float(self.nest, r.target) for r in reds):
            return None      # --exact-fp: a tree of partial sums would add in another order than C
        by_target: dict[str, Reduction] = {}
        for r in reds:
            if by_target.setdefault(r.target, r).op != r.op:
                return None  # s += ... and s = max(s, ...) on one scalar cannot be combined
        return tuple(by_target.values())

    def can_start_kernel(self, loop: Loop) -> tuple[bool, tuple[Reduction, ...]]:
        st = self.status(loop)
        if self.wanted(loop) is False or loop.trip_count is None or not loop.normalized:
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
            raise PassFailed(f"--map asks for loop '{self.c_var(loop)}' (line {loop.loc.line}), but {self.reason(loop)}",
                             code="map-refused", loc=loop.loc)
        where = f"loop '{self.c_var(loop)}' at line {loop.loc.line}"
        if self.status(loop) in ("parallel", "reduction") and (loop.lower_pieces or loop.upper_pieces):
            start, end = loop.bound_texts()
            raise PassFailed(f"{where} is proven {self.status(loop)}, but its bounds are a min/max of several values "
                             f"(from {start} to below {end}): c2gpu maps to threads only a loop with one trip count",
                             code="not-generated", loc=loop.loc)
        if self.status(loop) == "reduction":
            exact = " (--exact-fp keeps floating-point sums in one thread)" if self.options.get("exact_fp") else ""
            raise PassFailed(f"{where} is a reduction c2gpu does not run across threads (only scalar +, max and "
                             f"min reductions are{exact}): {self.reason(loop)}", code="unmapped-reduction", loc=loop.loc)
        if self.status(loop) != "carried":
            # not proven either way (aliasing, calls, non-affine accesses): the nest stays on the CPU
            raise PassFailed(f"{where} is not proven parallel: {self.reason(loop)}", code="not-proven-parallel",
                             loc=self.blocking_loc(loop))
        # proven sequential (a time loop): it stays on the host around the kernels of the loops inside it; the
        # statements and loops between those kernels run as written in one-thread kernels, on the device data
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
            raise PassFailed(f"loop '{self.c_var(loop)}' at line {loop.loc.line}: guarded code under a host loop "
                             "is not supported", code="guarded-host-loop", loc=loop.loc)
        body: list[HostLoop | Kernel] = []
        run: list[int] = []
        for pos, node in enumerate(loop.body):
            if isinstance(node, Loop) and node.header_stmt is None and self.parallel_inside(node):
                if run:
                    body.append(self.serial_kernel(loop, run))
                    run = []
                body.append(self.plan(node))
            else:
                run.append(pos)
        if run:
            body.append(self.serial_kernel(loop, run))
        return HostLoop(loop.lid, self.c_var(loop), loop.header, tuple(body),
                        f"loop '{self.c_var(loop)}' stays on the host: {self.reason(loop)}")

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
            doubt = next((r for r in (v.reasons if v is not None else ()) if r.kind not in SERIAL_SAFE), None)
            if doubt is not None:
                raise PassFailed(f"the code between the kernels of loop '{self.c_var(host)}' (line {host.loc.line}) "
                                 f"would run in one thread on the device, but {doubt.message}",
                                 code="not-proven-parallel", loc=doubt.sink or doubt.source or host.loc)
        flag = next((f for f in self.nest.all_flags() if f.loop_ids is None or lids & set(f.loop_ids)), None)
        if flag is not None:
            raise PassFailed(f"the code between the kernels of loop '{self.c_var(host)}' (line {host.loc.line}) would "
                             f"run in one thread on the device, but {flag.message} (line {flag.loc.line})",
                             code="not-proven-parallel", loc=flag.loc)
        first, last = nodes[0].loc.line, max(n.loc.line for n in nodes)
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        name = _c_name(f"c2gpu_{self.nest.name}_k{self.kernel_count}")
        self.kernel_count += 1
        why = (f"runs {lines} in one thread between the launches of loop '{self.c_var(host)}' (they are not parallel; "
               "the data stays on the device)")
        return Kernel(name, (), host.lid, (1, 1, 1), (), why, tuple(positions))

    def kernel(self, root: Loop, reds: tuple[Reduction, ...]) -> Kernel:
        chain = [root]
        while len(chain) < 3:
            nxt = _only_loop_child(chain[-1])
            if nxt is None or nxt.trip_count is None or not nxt.normalized:
                break
            st = self.status(nxt)
            want = self.wanted(nxt)
            if want is False:
                break
            if st == "parallel" or (st == "reduction" and reds and self.mapped_reductions(nxt) == reds):
                chain.append(nxt)
                continue
            if want is True:
                raise PassFailed(f"--map asks for loop '{self.c_var(nxt)}' (line {nxt.loc.line}), but {self.reason(nxt)}",
                                 code="map-refused", loc=nxt.loc)
            break
        # a short innermost loop (RGB channels, a 3-point stencil) would leave most of a warp idle as a
        # grid dimension: it stays in the thread unless the user maps it
        while len(chain) > 1 and self.wanted(chain[-1]) is not True and _small_trip(chain[-1]):
            chain.pop()
        if self.map_override:
            chain = [lp for lp in chain if self.wanted(lp)] or chain[:1]
            # only a prefix-closed perfect chain can be mapped; keep the leading run of wanted loops
        verdict = self.deps.verdicts.get(root.lid)
        red_targets = {r.target for r in reds}
        shared = [v for v in getattr(verdict, "outer_writes", ()) if v not in verdict.private and v not in red_targets]
        if shared:
            # each thread would need the one value the scalar has across iterations (or after the loop)
            raise PassFailed(f"loop '{self.c_var(root)}' at line {root.loc.line}: scalar '{shared[0]}' is written in "
                             "the loop and keeps its value across iterations or after it; c2gpu ports only private "
                             "scalars and +, max, min reductions", code="shared-scalar", loc=root.loc)
        dims = self.assign_dims(chain)
        block = self.block_shape(len(chain))
        if reds and (block[0] * block[1] * block[2]) & (block[0] * block[1] * block[2] - 1):
            raise PassFailed(f"block {block} has a thread count that is not a power of two, which the reduction tree "
                             "needs", code="block-not-power-of-two", loc=root.loc)
        mapped = tuple(MappedLoop(lp.lid, lp.var, dims[lp.lid], lp.trip_count, lp.origin, self.c_var(lp), lp.loc)
                       for lp in chain)
        name = _c_name(f"c2gpu_{self.nest.name}_k{self.kernel_count}")   # function@line: unique per file
        self.kernel_count += 1
        x_loop = next(m for m in mapped if m.dim == "x")
        why = (f"maps {', '.join(m.c_var + '->' + m.dim for m in mapped)} (proven parallel"
               f"{'; reduction of ' + ', '.join(r.target for r in reds) + ' by block tree and atomics' if reds else ''}); "
               f"x is '{x_loop.c_var}', the fastest-varying subscript of most accesses")
        return Kernel(name, mapped, chain[-1].lid, block, reds, why)

    def assign_dims(self, chain: list[Loop]) -> dict[int, str]:
        """x to the loop that varies fastest in most accesses, then inner-to-outer for y and z."""
        score = {lp.lid: 0 for lp in chain}
        inner = chain[-1]
        for s in self.nest.statements():
            if inner.lid not in s.loop_ids:
                continue
            for a in s.accesses:
                subs = a.linearized or a.subscripts
                if not subs or any(x is None for x in subs):
                    continue
                # the loop that moves this access by one element: unit coefficient in the last
                # subscript and absent from the others (U[i][i + j] is stride-1 in j, not in i)
                for lp in chain:
                    if abs(subs[-1].coeff(lp.var)) == 1 and all(x.coeff(lp.var) == 0 for x in subs[:-1]):
                        score[lp.lid] += 1
        order = sorted(chain, key=lambda lp: (-score[lp.lid], -chain.index(lp)))
        x = order[0]
        rest = [lp for lp in reversed(chain) if lp is not x]
        dims = {x.lid: "x"}
        for d, lp in zip(DIMS[1:], rest):
            dims[lp.lid] = d
        return dims

    def block_shape(self, ndims: int) -> tuple[int, int, int]:
        if self.block_override:
            b = tuple(self.block_override) + (1,) * (3 - len(self.block_override))
            return b[:3]
        return DEFAULT_BLOCKS[ndims]


class MapLoops(Pass):
    name = "mapping"
    description = "choose the loops that become the CUDA grid, the block shape, and what stays on the host"
    requires = ("dependence",)
    provides = ("mapping",)

    def run(self, nest: Nest, ctx) -> Mapping:
        deps = ctx.get("dependence", nest)
        blockers = [f for f in nest.all_flags() if f.code == "unsupported-statement"]
        if blockers:
            raise PassFailed(f"{blockers[0].message} (line {blockers[0].loc.line})", code="unsupported-statement",
                             loc=blockers[0].loc)
        mapper = Mapper(nest, deps, ctx.options)
        item = mapper.plan(nest.root)
        notes = list(getattr(deps, "notes", ()))
        for k in mapper_kernels(item):
            if k.reductions and any(r.op == "+" and _is_float(nest, r.target) for r in k.reductions):
                notes.append("floating-point reduction across threads is reassociated: results differ from the "
                             "sequential sum in the last bits (verify compares with a tolerance)")
                break
        return Mapping(nest.name, (item,), tuple(notes))


def mapper_kernels(item) -> list[Kernel]:
    return Mapping("", (item,), ()).kernels()


def _is_float(nest: Nest, scalar: str) -> bool:
    for s in nest.scalars:
        if s.name == scalar:
            return s.ctype in ("float", "double", "long double")
    return False
