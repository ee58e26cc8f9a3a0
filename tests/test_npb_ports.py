"""NPB's own result verification as the oracle for whole-program ports.

Each benchmark of the NAS Parallel Benchmarks (class S, testdata/corpora/npb-3.0-omp-c: see tests/npb_recall.py)
is ported with `c2gpu port --split`, its kernels built for the CPU execution layer (c2gpu/emulate) and linked with
its host code and the common files its own Makefile names, then run twice with device memory poisoned: blocks and
threads in forward order, then in reverse.  Both runs must print NPB's successful verification, which compares the
benchmark's result with the reference values its authors computed.  The quicker benchmarks run by default, BT, LU
and SP (several minutes each) under `pytest -m slow`.  The whole-program view of each benchmark (measured) must
judge every nest that ran.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import npb_recall
from c2gpu.emulate.build import compile_for_cpu
from conftest import requires_tool, sweep

# at least these nests ported (measured 2026-12-02): a drop means a capability was lost
PORTED = {"BT": 57, "CG": 11, "EP": 7, "FT": 9, "IS": 7, "LU": 45, "MG": 14, "SP": 80}
VERIFIED = re.compile(r"verification\s*(=\s*)?successful", re.IGNORECASE)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return npb_recall.prepare(tmp_path_factory.mktemp("npb"))


def common_sources(tree: Path, name: str) -> list[Path]:
    """The common C files the benchmark's Makefile links (`${COMMON}/c_timers.o`; c_${RAND} is c_randdp and
    c_wtime is wtime.c, as sys/make.common builds them)."""
    makefile = (tree / name / "Makefile").read_text()
    out = []
    for obj in re.findall(r"\$\{COMMON\}/(\S+)\.o", makefile):
        stem = {"c_${RAND}": "c_randdp", "c_wtime": "wtime"}.get(obj, obj)
        out.append(tree / "common" / f"{stem}.c")
    return out


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("name", sweep(npb_recall.BENCHMARKS, default=("CG", "EP", "FT", "IS", "MG")))
def test_ported_benchmark_passes_its_own_verification(tree, tmp_path, name):
    src = tree / name / f"{name.lower()}.c"
    includes = [f"-I{tree / 'common'}", f"-I{tree / name}"]
    cu = tmp_path / f"{name.lower()}.cu"
    # the program's other files (its Makefile's) are read where it calls them: EP's randlc and vranlc
    extra = [x for c in common_sources(tree, name) for x in ("--extra-source", str(c))]
    port = subprocess.run(["python", "-m", "c2gpu", "port", str(src), *includes, *extra, "--split", "-o", str(cu)],
                          capture_output=True, text=True, timeout=1200)
    assert port.returncode == 0, port.stderr[-3000:]
    ported = port.stderr.count("note: ported nest")
    assert ported >= PORTED[name], port.stderr[-3000:]
    if name == "EP":            # the main loop: each batch's seed, its 2^17 numbers and their tally in one thread
        assert "ported nest main@153" in port.stderr, port.stderr[-3000:]
    objects = []
    for c in [tmp_path / f"{name.lower()}.host.c", *common_sources(tree, name)]:
        obj = tmp_path / f"{c.stem}.o"
        subprocess.run(["cc", "-O1", "-w", *includes, "-c", str(c), "-o", str(obj)], check=True, timeout=600)
        objects.append(str(obj))
    kernels = tmp_path / "kernels.o"
    built = compile_for_cpu(str(cu), str(kernels), extra_flags=["-c", "-w", *includes])
    assert built.ok, built
    exe = tmp_path / "ported"
    subprocess.run(["g++", *objects, str(kernels), "-o", str(exe), "-pthread", "-lm"], check=True, timeout=600)
    for order, poison in (("forward", "0xFF"), ("reverse", "0x7F")):
        env = {**os.environ, "C2GPU_EMU_ORDER": order, "C2GPU_EMU_POISON": poison, "C2GPU_EMU_THREADS": "2"}
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=1800, env=env, cwd=tmp_path)
        assert run.returncode == 0 and VERIFIED.search(run.stdout), (order, run.stdout[-3000:], run.stderr[-2000:])


@requires_tool("cc")
@pytest.mark.parametrize("name", sweep(npb_recall.BENCHMARKS, default=("CG", "FT", "IS", "MG")))
def test_the_whole_program_view_judges_every_nest_that_ran(tree, tmp_path, name):
    """analyze on the benchmark with its common files: the program is measured, and every nest that ran and
    that port emits has a verdict (sizes only the run knows, as grid_points[0] or a multigrid level's n1, are
    taken from the run); the view names the nests ported with the data kept on the device and says why the
    others stay on the CPU."""
    src = tree / name / f"{name.lower()}.c"
    extra = [x for c in common_sources(tree, name) for x in ("--extra-source", str(c))]
    r = subprocess.run(["python", "-m", "c2gpu", "analyze", str(src), f"-I{tree / 'common'}", f"-I{tree / name}",
                        *extra, "--gpu", "h100-sxm", "--runs", "1", "--format", "json"], capture_output=True, text=True, timeout=1200,
                       cwd=tmp_path, env={**os.environ, "C2GPU_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr[-3000:]
    view = json.loads(r.stdout)["files"][0]["whole_program"]
    assert view["program_s"] and view["unmeasured"] is None
    ran = [n for n in view["nests"] if n["cpu_s"]]
    assert ran and not [n["name"] for n in ran if n["verdict"] == "no-verdict"]
    assert all(n["why"] for n in view["nests"] if n["name"] not in view["resident"])
    if view["resident"]:
        assert view["resident_speedup"] > 1.0 and set(view["ported"]) <= set(view["resident"])
