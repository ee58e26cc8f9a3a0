"""Algorithm 6.3 (arithmetic intensity) and the roofline ratio."""
import math

import networkx as nx
import pytest

from c2gpu.algorithms.ilp import build_dfg
from c2gpu.algorithms.intensity import arithmetic_intensity, bfs_order, flops_per_byte

# A in global memory (kernel in/out), S staged in shared memory, C the output.
CODE = [
    ("a", "ld", ["A", "i"]),       # 0: reads global A            -> off, a off-chip
    ("w", "ld", ["S", "i"]),       # 1: reads shared S            -> on,  w on-chip
    ("t", "mul", ["a", "w"]),      # 2: uses a (off)              -> off
    ("u", "add", ["w", "w"]),      # 3: only w                    -> on
    ("v", "mul", ["u", "t"]),      # 4: u, t are register results -> on (prose rule)
    (None, "st", ["C", "i", "v"]), # 5: writes global C           -> off
]


def test_hand_example_prose_rule():
    r = arithmetic_intensity(build_dfg(CODE), shared={"S"}, inouts={"A", "C"})
    # on: 1, 3, 4 -> n = 3; off: 0, 2, 5 -> m = 3; ai = 1.
    assert (r.on_chip, r.off_chip, r.intensity) == (3, 3, 1.0)
    assert dict(r.classification) == {0: "off", 1: "on", 2: "off", 3: "on", 4: "on", 5: "off"}


def test_hand_example_literal_pseudocode():
    # Literal pseudo-code also puts compute results t, u, v into `off`,
    # so instruction 4 (uses u, t) becomes off-chip: n = 2 (1, 3), m = 4, ai = 0.5.
    r = arithmetic_intensity(build_dfg(CODE), {"S"}, {"A", "C"}, literal_pseudocode=True)
    assert (r.on_chip, r.off_chip, r.intensity) == (2, 4, 0.5)


def test_bfs_order_puts_operands_first():
    g = build_dfg(CODE)
    order = bfs_order(g)
    assert order == [0, 1, 2, 3, 4, 5]
    pos = {v: k for k, v in enumerate(order)}
    assert all(pos[u] < pos[v] for u, v in g.edges())


def test_all_shared_is_infinite_and_all_global_is_zero():
    code = [("x", "ld", ["S", "i"]), ("y", "add", ["x", "x"]), ("z", "mul", ["y", "x"])]
    r = arithmetic_intensity(build_dfg(code), {"S"}, set())
    assert (r.on_chip, r.off_chip) == (3, 0) and math.isinf(r.intensity)
    r = arithmetic_intensity(build_dfg(code), set(), {"S"})
    # S now global: load off, x off-chip, so y and z (using x) are off too.
    assert (r.on_chip, r.off_chip, r.intensity) == (0, 3, 0.0)


def test_plain_networkx_graph_input():
    g = nx.DiGraph()
    g.add_node("l", op="load", srcs=("G",), dest="p")
    g.add_node("m", op="fmul", srcs=("p", "q"), dest="r")
    g.add_edge("l", "m")
    r = arithmetic_intensity(g, shared=(), inouts=("G",))
    assert (r.on_chip, r.off_chip) == (0, 2)


def test_flops_per_byte():
    # SAXPY y = a*x + y on floats: 2 flops, 12 bytes (read x, read y, write y).
    n = 1 << 20
    assert flops_per_byte(2 * n, 12 * n) == pytest.approx(1 / 6)
    # naive N^3 matmul reading each operand once: 2N^3 / (3 * 4 N^2) = N/6.
    assert flops_per_byte(2 * 96**3, 3 * 4 * 96**2) == pytest.approx(16.0)
    assert math.isinf(flops_per_byte(10, 0))
    with pytest.raises(ValueError):
        flops_per_byte(-1, 4)
