"""eq. 6.1: ILP = n_insns / longest path."""
from fractions import Fraction

import networkx as nx
import pytest

from c2gpu.algorithms.ilp import build_dfg, ilp, ilp_of_code, longest_path_length

SEED_EXAMPLE = [("e", "add", ["a", "b"]), ("f", "add", ["c", "d"]), ("g", "mul", ["e", "f"])]


def test_seed_example_three_halves():
    g = build_dfg(SEED_EXAMPLE)
    assert sorted(g.edges()) == [(0, 2), (1, 2)]
    assert longest_path_length(g) == 2
    assert Fraction(ilp(g)).limit_denominator(100) == Fraction(3, 2)
    assert ilp_of_code(SEED_EXAMPLE) == 1.5


def test_chain_and_independent():
    chain = [("a", "add", ["x", "y"]), ("b", "add", ["a", "y"]),
             ("c", "add", ["b", "a"]), ("d", "add", ["c", "x"])]
    assert ilp_of_code(chain) == 1.0
    indep = [(f"t{i}", "add", ["x", "y"]) for i in range(5)]
    assert ilp_of_code(indep) == 5.0


def test_raw_graph_and_weights():
    # Diamond a->b, a->c, b->d, c->d plus an isolated e: 5 nodes, longest path 3.
    g = nx.DiGraph([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    g.add_node("e")
    assert ilp(g) == pytest.approx(5 / 3)
    # latencies: b is slow (10).  sum = 1+10+1+1+1 = 14, critical path a,b,d = 12.
    nx.set_node_attributes(g, 1, "latency")
    g.nodes["b"]["latency"] = 10
    assert longest_path_length(g, "latency") == 12
    assert ilp(g, "latency") == pytest.approx(14 / 12)


def test_latency_table_on_code():
    # e=a+b (16), f=c*d (20), g=e*f (20): sequential 56, critical path 20+20 = 40.
    code = [("e", "add", ["a", "b"]), ("f", "mul", ["c", "d"]), ("g", "mul", ["e", "f"])]
    assert ilp_of_code(code, {"add": 16, "mul": 20}) == pytest.approx(56 / 40)


def test_redefinition_links_latest_def_and_cycle_rejected():
    code = [("x", "add", ["a"]), ("x", "add", ["x"]), ("y", "add", ["x"])]
    assert sorted(build_dfg(code).edges()) == [(0, 1), (1, 2)]
    assert ilp(nx.DiGraph()) == 0.0
    with pytest.raises(ValueError):
        ilp(nx.DiGraph([(1, 2), (2, 1)]))
