"""Arithmetic intensity: Algorithm 6.3 of the seed (section 6.3), plus roofline.

An instruction is *on-chip* when all its operands are registers produced by
other instructions or values that came from shared memory, otherwise *off-chip*
(it touches global memory, directly or through a value loaded from it).
Algorithm 6.3 walks the DFG in BFS (dependence) order with two sets:

    on  <- sh;  off <- inouts;  n, m <- 0
    for v in BFS order:
        if uses(v) & off == {}: n += 1  else: m += 1
        if v is ld/st and uses(v) & off == {}: on  |= defs(v)
        else:                                  off |= defs(v)
    return n / m

Deviation (default): the seed's prose says only memory instructions add their
result to a set ("In the case of memory instructions we also add the resulting
variable to the corresponding set"), while the pseudo-code's else-branch also
puts every *compute* result into `off`, which would make anything downstream of
any arithmetic off-chip and contradicts "registers of other compute
instructions" being on-chip.  We follow the prose; literal_pseudocode=True
reproduces the pseudo-code for comparison.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, AbstractSet, Iterable, Mapping, Tuple
from ..records import dataclass

if TYPE_CHECKING:
    import networkx as nx     # imported where a graph is walked (start-up: ~80 ms that most runs never need)

# Ops treated as "ld/st" by Algorithm 6.3 (override with memory_ops=...).
MEMORY_OPS = frozenset({"ld", "st", "load", "store"})


@dataclass(frozen=True)
class IntensityResult:
    """Algorithm 6.3's result: on-chip and off-chip instruction counts, their ratio, and how each
    instruction was classified."""
    on_chip: int                   # n of Algorithm 6.3
    off_chip: int                  # m of Algorithm 6.3
    intensity: float               # n / m (inf when m == 0)
    classification: Tuple[Tuple[object, str], ...]  # (node, "on" | "off") in visit order


def bfs_order(dfg: nx.DiGraph) -> list:
    """Breadth-first over dependences: generation 0 = nodes without
    predecessors, generation k = nodes whose operands are all in earlier
    generations; ties by node id.  Guarantees operands are processed first."""
    import networkx as nx     # start-up: ~80 ms, see the top of this module
    return [v for gen in nx.topological_generations(dfg) for v in sorted(gen, key=repr)]


def arithmetic_intensity(dfg: nx.DiGraph, shared: Iterable[str], inouts: Iterable[str], *,
                         memory_ops: AbstractSet[str] = MEMORY_OPS,
                         literal_pseudocode: bool = False) -> IntensityResult:
    """Algorithm 6.3.  dfg nodes carry attributes op, srcs (operand names) and
    dest (result name or None), as produced by c2gpu.algorithms.ilp.build_dfg.
    shared: variables in shared memory (arrays staged there); inouts: kernel
    inputs/outputs living in global memory."""
    return classify([(v, dfg.nodes[v]) for v in bfs_order(dfg)], shared, inouts, memory_ops=memory_ops,
                    literal_pseudocode=literal_pseudocode)


def classify(visits: Iterable[Tuple[object, Mapping]], shared: Iterable[str], inouts: Iterable[str], *,
             memory_ops: AbstractSet[str] = MEMORY_OPS, literal_pseudocode: bool = False) -> IntensityResult:
    """Algorithm 6.3's loop over (node, attributes) in the order of bfs_order (arithmetic_intensity without
    a networkx graph: c2gpu.perf.dfg walks its instruction lists in that order itself)."""
    on = set(shared)
    off = set(inouts)
    n = m = 0
    cls = []
    for v, d in visits:
        uses = set(d.get("srcs", ()))
        defs = {d["dest"]} if d.get("dest") is not None else set()
        clean = not (uses & off)
        if clean:
            n += 1
        else:
            m += 1
        cls.append((v, "on" if clean else "off"))
        is_mem = d.get("op") in memory_ops
        if is_mem and clean:
            on |= defs
        elif is_mem or literal_pseudocode:
            off |= defs
        # else: a compute result is a register; it joins neither set (prose rule)
    return IntensityResult(n, m, math.inf if m == 0 else n / m, tuple(cls))


def flops_per_byte(flops: float, dram_bytes: float) -> float:
    """Roofline arithmetic intensity (Williams et al.): FLOPs per byte of DRAM
    traffic.  Unlike Algorithm 6.3 (an instruction-count ratio) this is the
    quantity compared against peak_flops / peak_bandwidth.  inf for 0 bytes."""
    if flops < 0 or dram_bytes < 0:
        raise ValueError("flops and bytes must be non-negative")
    return math.inf if dram_bytes == 0 else flops / dram_bytes
