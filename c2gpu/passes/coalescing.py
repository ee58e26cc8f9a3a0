"""Which mapped loop gets x, y and z, and the block shape (for c2gpu/passes/mapping.py's Mapper).

x goes to the loop whose warps leave the fewest bytes uncoalesced, by the bytes a thread moves through each access
(`WarpBytes`); the block shape is --block's, else the default for the number of mapped loops, with the
dimension of a loop whose iterations its threads take in turns (MappedLoop.turns) given that many threads.
"""
from __future__ import annotations

import math

from c2gpu.drivers.options import block_for
from c2gpu.ir import Loop
from c2gpu.records import dataclass

DIMS = ("x", "y", "z")
DEFAULT_BLOCKS = {1: (256, 1, 1), 2: (32, 8, 1), 3: (32, 4, 2)}
UNKNOWN_TRIP = 64      # iterations of a loop whose trip count is not known, when weighing accesses by bytes


@dataclass(frozen=True)
class WarpBytes:
    """The bytes a thread moves through the accesses of a kernel, by how a warp over each mapped loop touches them
    (Mapper.warp_bytes): by lid, coalesced (`unit`) and strided; in all; the strided accesses, most bytes first."""
    unit: dict[int, float]
    strided: dict[int, float]
    total: float
    worst: dict[int, list[str]]


def _trip(lp: Loop, env: dict) -> float:
    """A loop's trip count with the sizes known, else UNKNOWN_TRIP (a triangular loop: its largest, roughly)."""
    if lp.trip_count is None:
        return float(UNKNOWN_TRIP)
    try:
        return float(max(1, lp.trip_count.evaluate(env)))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return float(UNKNOWN_TRIP)


class Coalescing:
    """The Mapper's methods that choose the grid's dimensions and the block shape (a base of Mapper: they read its
    `nest`, `options` and `block_override`)."""

    def coalescing(self, chain: list[Loop], x_lid: int, x_var: str) -> str:
        """What the kernel note says of coalescing, by the bytes the accesses move (warp_bytes)."""
        w = self.warp_bytes(chain)
        unit, strided = w.unit[x_lid], w.strided[x_lid]
        worst = ", ".join(w.worst[x_lid][:2])
        if not strided:
            return (f"x is '{x_var}', the fastest-varying subscript of the accesses that move most bytes" if unit else
                    f"x is '{x_var}'")
        share = strided / w.total
        shown = f"{share:.0%}" if share >= 0.01 else "under 1%"
        if share < 0.25:
            return (f"x is '{x_var}', the fastest-varying subscript of the accesses that move most bytes; {worst} "
                    f"({shown} of the bytes) not coalesced")
        return f"x is '{x_var}', but a warp's accesses to {worst} ({shown} of the bytes) are not coalesced"

    def assign_dims(self, chain: list[Loop]) -> dict[int, str]:
        """x to the loop whose warps leave the fewest bytes uncoalesced (then the one that moves most bytes by one
        element, then the innermost), then inner-to-outer for y and z (warp_bytes)."""
        w = self.warp_bytes(chain)
        order = sorted(chain, key=lambda lp: (w.strided[lp.lid], -w.unit[lp.lid], -chain.index(lp)))
        x = order[0]
        rest = [lp for lp in reversed(chain) if lp is not x]
        dims = {x.lid: "x"}
        for d, lp in zip(DIMS[1:], rest):
            dims[lp.lid] = d
        return dims

    def warp_bytes(self, chain: list[Loop]) -> "WarpBytes":
        """How the accesses of a warp over each loop of `chain` fall, by the bytes a thread moves through them.
        Coalescing is judged by bytes, not by counting accesses: an access runs once per iteration of the loops
        inside the thread that move it (its element stays in a register across the others, promotion.py), each
        of UNKNOWN_TRIP iterations when the trip count is not known.  Over a loop, an access is coalesced when
        the loop moves it by one element in its last subscript and not in the others, the same for the whole
        warp (a broadcast) when the loop does not move it, and strided otherwise."""
        unit = {lp.lid: 0.0 for lp in chain}
        strided = {lp.lid: 0.0 for lp in chain}
        inner = chain[-1]
        env = self.nest.param_env(self.options.get("params"))
        loops = {lp.lid: lp for lp in self.nest.loops()}
        total = 0.0
        worst: dict[int, dict[str, float]] = {lp.lid: {} for lp in chain}
        for s in self.nest.statements():
            if inner.lid not in s.loop_ids:
                continue
            inside = [loops[lid] for lid in s.loop_ids[s.loop_ids.index(inner.lid) + 1:]]
            for a in s.accesses:
                subs = a.linearized or a.subscripts
                if not subs or any(x is None for x in subs):
                    continue
                runs = 1.0
                for lp in inside:
                    if any(x.coeff(lp.var) != 0 for x in subs):
                        runs *= _trip(lp, env)
                weight = runs * a.elem_size
                total += weight
                for lp in chain:
                    if abs(subs[-1].coeff(lp.var)) == 1 and all(x.coeff(lp.var) == 0 for x in subs[:-1]):
                        unit[lp.lid] += weight
                    elif any(x.coeff(lp.var) != 0 for x in subs):
                        strided[lp.lid] += weight
                        worst[lp.lid][a.text] = worst[lp.lid].get(a.text, 0.0) + weight
        return WarpBytes(unit, strided, total, {lid: sorted(d, key=lambda text: -d[text]) for lid, d in worst.items()})

    def block_shape(self, ndims: int, kernel: str, fixed: dict[str, int] | None = None) -> tuple[int, int, int]:
        """--block's shape for `kernel`, else the default for `ndims` mapped loops; the dimensions whose thread
        count a loop taking turns fixes (`fixed`: dim -> threads, MappedLoop.turns) have it, the others share the
        rest of the default's 256 threads."""
        forced = block_for(self.block_override, kernel)
        if forced and not fixed:
            return (tuple(forced) + (1, 1, 1))[:3]
        if not fixed:
            return DEFAULT_BLOCKS[ndims]
        block = [1, 1, 1]
        for d, n in fixed.items():
            block["xyz".index(d)] = n
        rest = [d for d in "xyz"[:ndims] if d not in fixed]
        room = max(1, 256 // math.prod(fixed.values()))
        for d, n in zip(rest, ((room,), (max(1, room // 2), min(2, room)))[len(rest) - 1] if rest else ()):
            block["xyz".index(d)] = n
        return tuple(block)
