"""Analyses of one kernel share what does not differ between them (c2gpu/perf/profile.py _facts, _results): the
block search builds one KernelAnalysis per shape and per shared-memory budget.  What differs must not be shared.
They share it through the memo tables of the pass manager at work (pipeline.memo), and only there."""
from __future__ import annotations

from c2gpu.drivers.driver import make_manager
from c2gpu.perf.profile import KernelAnalysis
from c2gpu.pipeline import PORT
from c2gpu.planning.shared_tiles import tiles_for_kernel

from conftest import TESTDATA
from test_perf import A100, analysis


def test_same_inputs_share_results_and_tiles_do_not():
    ka, k = analysis(TESTDATA / "matmul.c", defines=("N=512",))
    block = tuple(k.block)
    with make_manager(PORT.passes).active():
        ka = KernelAnalysis(ka.nest, k, A100, {}, host_lids=ka.host_lids, registers="estimate")
        twin = KernelAnalysis(ka.nest, k, A100, {}, host_lids=ka.host_lids, registers="estimate")
        assert twin.memory(block) is ka.memory(block)
        assert twin.footprints is ka.footprints
        tiles = tiles_for_kernel(ka.nest, k, {})
        assert tiles is not None and tiles.chosen          # matmul stages A and B
        tiled = KernelAnalysis(ka.nest, k, A100, {}, host_lids=ka.host_lids, registers="estimate", shared=tiles)
        assert tiled.footprints is ka.footprints           # a kernel fact: the tiles change no footprint
        wheres = {c.where for c in tiled.memory(block).accesses}
        assert "shared tile" in wheres and "tile load" in wheres
        assert {c.where for c in ka.memory(block).accesses} == {"global"}
    alone = KernelAnalysis(ka.nest, k, A100, {}, host_lids=ka.host_lids, registers="estimate")
    assert alone.memory(block) is not ka.memory(block)     # no manager at work: nothing kept beyond the analysis
