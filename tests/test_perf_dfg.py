"""c2gpu.perf.dfg computes eq. 6.1, the load chains and Alg. 6.3 on its instruction lists without networkx: the same
results as c2gpu.algorithms' networkx functions on TAC.dfg(), on random straight-line code (names redefined,
stores, loads, operands never defined)."""
import random

import networkx as nx
import pytest

from c2gpu.algorithms.ilp import ilp
from c2gpu.algorithms.intensity import arithmetic_intensity
from c2gpu.perf.dfg import TAC, memory_parallelism


def _random_tac(rng: random.Random) -> TAC:
    names = [f"v{k}" for k in range(6)] + ["A", "B", "%t1", "%t2"]
    instrs = []
    for _ in range(rng.randint(0, 25)):
        op = rng.choice(["ld", "st", "+", "*", "mov", "ld", "fma"])
        srcs = tuple(rng.choice(names) for _ in range(rng.randint(0, 3)))
        dest = None if op == "st" else rng.choice(names)
        instrs.append((dest, op, srcs))
    return TAC(instrs, {"A", "B"}, set())


def _mlp_networkx(tac: TAC) -> float:
    g = tac.dfg()
    loads = [v for v, d in g.nodes(data=True) if d["op"] == "ld"]
    if not loads:
        return 1.0
    depth = {}
    for v in nx.topological_sort(g):
        depth[v] = (1 if g.nodes[v]["op"] == "ld" else 0) + max((depth[u] for u in g.predecessors(v)), default=0)
    return len(loads) / max(1, max(depth[v] for v in loads))


@pytest.mark.parametrize("seed", range(300))
def test_plain_python_matches_networkx(seed):
    tac = _random_tac(random.Random(seed))
    g = tac.dfg()
    assert tac.ilp() == ilp(g)
    assert memory_parallelism(tac) == _mlp_networkx(tac)
    for shared, inouts in (((), tac.arrays), ({"v1"}, {"A", "v2"})):
        assert tac.intensity(shared, inouts) == arithmetic_intensity(g, shared, inouts)
