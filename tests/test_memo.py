"""The analyses' memo tables belong to the pass manager at work (c2gpu/pipeline.py `memo`): kept while it lives, by
the identity of the IR object, and nowhere else (issue "Plans as data, one search", item 4)."""
from __future__ import annotations

from collections import Counter

import pytest

from c2gpu.analysis import isl_sets
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import load_program
from c2gpu.pipeline import PORT, at_work, memo, with_performance

from conftest import TESTDATA


class Owner:
    pass


def test_outside_a_manager_nothing_is_kept():
    owner = Owner()
    memo(owner, "t")["k"] = 1
    assert memo(owner, "t") == {}
    assert at_work() is None


def test_a_manager_at_work_keeps_one_table_per_object_and_name_until_it_forgets():
    manager = make_manager(PORT.passes)
    a, b = Owner(), Owner()
    with manager.active():
        memo(a, "t")["k"] = 1
        assert memo(a, "t") == {"k": 1}
        assert memo(a, "u") == {} and memo(b, "t") == {}
        manager.forget(a)
        assert memo(a, "t") == {}
        memo(b, "t")["k"] = 2
    assert memo(b, "t") == {}                   # not at work: its tables are not reachable
    with manager.active():
        assert memo(b, "t") == {"k": 2}         # at work again: they are still its own
        manager.clear()
        assert memo(b, "t") == {}


def test_the_inner_manager_at_work_gives_way_to_the_outer_one_when_it_ends():
    outer, inner = make_manager(PORT.passes), make_manager(PORT.passes)
    with outer.active():
        with inner.active():
            assert at_work() is inner
        assert at_work() is outer
    assert at_work() is None


def test_a_run_computes_each_statement_domain_once(monkeypatch):
    """The dependence analysis, the shared-memory tiles, the block search and code generation all ask for the
    iteration domains of the same statements: the run's manager keeps each one."""
    calls: Counter = Counter()
    real = isl_sets._statement_domain

    def counted(nest, stmt):
        calls[id(nest), id(stmt)] += 1
        return real(nest, stmt)
    monkeypatch.setattr(isl_sets, "_statement_domain", counted)
    manager = make_manager(with_performance(PORT.passes), {"gpu": "h100-sxm", "registers": "estimate"})
    manager.run(load_program(str(TESTDATA / "matmul.c")))
    assert calls and max(calls.values()) == 1, calls.most_common(3)
    assert manager._memos                      # kept by the manager, not by the module


def test_port_renders_each_plan_once(monkeypatch, tmp_path):
    """The plan pass renders the chosen plan to check that it can be emitted; the port reads that rendering
    (before, it rendered the plan of every nest again)."""
    from c2gpu.codegen import wrapper
    from c2gpu.drivers.cli import main
    renders: Counter = Counter()
    real = wrapper._build_nest_code

    def counted(nest, plan, mode):
        renders[id(plan), mode] += 1
        return real(nest, plan, mode)
    monkeypatch.setattr(wrapper, "_build_nest_code", counted)
    assert main(["port", str(TESTDATA / "matmul.c"), "--gpu", "h100-sxm", "-o", str(tmp_path / "mm.cu")]) == 0
    assert renders and max(renders.values()) == 1, renders


@pytest.mark.parametrize("program", ["matmul.c", "convolution.c", "reductions.c", "nbody.c"])
def test_the_search_prints_only_the_chosen_plan(monkeypatch, program):
    """The performance search ranks every candidate (structures, shared-memory budgets) by its layout, which says
    what code generation would refuse and copy without printing anything; the one plan printed per nest is the
    plan the plan pass chose, which the port and the reports read.  (With ptxas's counts, the candidates whose
    registers are compiled are printed too: their text is what ptxas counts.)  Before, every candidate was printed:
    176 nests' code for the 31 PolyBench files."""
    from c2gpu.codegen import wrapper
    printed, laid_out = [], []
    real = wrapper._build_nest_code

    def counted(nest, plan, mode):
        (laid_out if mode == "layout" else printed).append((nest.name, plan))
        return real(nest, plan, mode)
    monkeypatch.setattr(wrapper, "_build_nest_code", counted)
    manager = make_manager(with_performance(PORT.passes), {"gpu": "h100-sxm", "registers": "estimate"})
    prog = manager.run(load_program(str(TESTDATA / program)))
    plans = {n.name: manager.result("plan", n) for n in prog.nests if manager.result("plan", n) is not None}
    assert laid_out and len(laid_out) > len(plans)          # candidates were compared
    assert sorted(name for name, _ in printed) == sorted(plans), printed
    assert all(plan is plans[name] for name, plan in printed)
