"""Instruction-level parallelism approximation: eq. 6.1 of the seed (section 6.2).

    ILP = n_insns / p        (6.1)

n_insns = instructions in the data-flow graph, p = length of its longest path
counted in instructions (the seed's example e=a+b; f=c+d; g=e*f has 3
instructions, longest chain 2, ILP 3/2).  The DFG is acyclic because the seed's
IR is SSA, so p comes from one pass in topological order, O(V + E).

With per-node latencies, the seed's own reading of (6.1) as "sequential time /
parallel time" gives ILP = sum(latency) / (latency-weighted longest path); with
unit latency this is exactly n_insns / p.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, Mapping, Optional, Sequence, Tuple

if TYPE_CHECKING:
    import networkx as nx     # imported where a graph is built or walked (start-up: ~80 ms that most runs never need)

# A three-address instruction: (dest or None for a store, op, source operands).
Instr = Tuple[Optional[str], str, Sequence[str]]


def build_dfg(instructions: Iterable[Instr], latency: Optional[Mapping[str, float]] = None,
              default_latency: float = 1.0) -> nx.DiGraph:
    """DFG of straight-line three-address code.

    Node i is instruction i with attributes dest, op, srcs (tuple) and latency
    (latency[op] if given, else default_latency).  Edge j -> i when instruction
    i reads a value defined by j (true / read-after-write dependence only; the
    seed's IR is SSA so anti and output dependences do not exist.  If a name is
    redefined we link to the most recent definition, i.e. we assume renaming).
    Operands never defined in the block (inputs, constants) add no edge.
    """
    import networkx as nx     # start-up: ~80 ms, see the top of this module
    g = nx.DiGraph()
    last_def: Dict[str, int] = {}
    for i, (dest, op, srcs) in enumerate(instructions):
        srcs = tuple(srcs)
        lat = latency.get(op, default_latency) if latency else default_latency
        g.add_node(i, dest=dest, op=op, srcs=srcs, latency=lat)
        for s in srcs:
            if s in last_def:
                g.add_edge(last_def[s], i)
        if dest is not None:
            last_def[dest] = i
    return g


def longest_path_length(dfg: nx.DiGraph, weight: Optional[str] = None) -> float:
    """Length of the longest path counted in nodes (or summed node attribute
    `weight`, missing -> 1).  Raises ValueError on a cycle (not SSA)."""
    import networkx as nx     # start-up: ~80 ms, see the top of this module
    if not nx.is_directed_acyclic_graph(dfg):
        raise ValueError("data-flow graph has a cycle; eq. 6.1 needs a DAG (SSA)")
    finish: Dict = {}
    for v in nx.topological_sort(dfg):
        w = dfg.nodes[v].get(weight, 1) if weight else 1
        finish[v] = w + max((finish[u] for u in dfg.predecessors(v)), default=0)
    return max(finish.values(), default=0)


def ilp(dfg: nx.DiGraph, weight: Optional[str] = None) -> float:
    """Eq. 6.1: ILP = n_insns / p.  With weight='latency' (or another node
    attribute) returns sum(weights) / weighted longest path.  Empty graph -> 0."""
    if dfg.number_of_nodes() == 0:
        return 0.0
    p = longest_path_length(dfg, weight)
    work = sum(d.get(weight, 1) for _, d in dfg.nodes(data=True)) if weight else dfg.number_of_nodes()
    return work / p


def ilp_of_code(instructions: Iterable[Instr],
                latency: Optional[Mapping[str, float]] = None) -> float:
    """Convenience: eq. 6.1 straight from three-address code (latency-weighted
    when a latency table is given)."""
    return ilp(build_dfg(instructions, latency), "latency" if latency else None)
