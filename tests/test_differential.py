"""Differential test: every nest c2gpu claims parallel and ports must compute what the C loop computes.

Random nests (tests/random_nests.py) of four families, in programs of their own so that a failure says which:
affine float nests, integer nests that probe C's conversions, side effects, aliasing and calls, time loops
around adjacent nests (what fusion rewrites: c2gpu/transform/fusion.py), and affine nests under conditions
with `!=`, `||`, `!` and `else` (unions of affine pieces).  Each program is ported and checked
twice:

* `verify` runs the original and the port (CPU execution layer, threads in order and in reverse order) and
  compares every array region and reduction each ported nest writes, right after the nest;
* then the two programs verify built run again and their final output is compared: a checksum of all integer
  state (exact) and the float results (relative 1e-4), which also covers what verify does not look at
  (local scalars stored after a nest, elements a wrong analysis leaves out of a nest's region).

A failure here is a wrong parallelism claim (or a code generation bug), never a flaky test: the programs are
seeded, and the message keeps the program.

    pytest tests/test_differential.py -s              # 3 + 3 + 1 + 1 programs x 30 nests (the default run, CI)
    pytest tests/test_differential.py -m slow         # seeds 3..5 (1..5 of siblings and disjunctions) and 100 more of each family
"""
import os
import subprocess

import pytest

from c2gpu.drivers.driver import make_manager
from c2gpu.pipeline import PORT
from c2gpu.frontend import PreprocessOptions
from c2gpu.drivers.verify import verify

from conftest import requires_tool
from random_nests import FAMILIES, program

NESTS_PER_PROGRAM = 30
# seeds 0..2 in the default run (its time budget is 10 minutes on 2 cores), 3..5 with the slow sweep
SEEDS = [0, 1, 2] + [pytest.param(seed, marks=pytest.mark.slow) for seed in range(3, 6)]
TOTALS = {family: {"nests": 0, "ported": 0} for family in FAMILIES}


def final_output(exe, order=None) -> tuple[list[int], list[float]]:
    """What report() prints: the integer checksum and scalars, and the float results."""
    env = dict(os.environ, C2GPU_EMU_ORDER=order) if order else None
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, f"{exe.name} exited with status {r.returncode}: {r.stderr[-500:]}"
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    return [int(x) for x in lines["ints"].split()], [float(x) for x in lines["floats"].split()]


def _check(tmp_path, seed, family):
    src = tmp_path / f"random_{family}_{seed}.c"
    src.write_text(program(seed, NESTS_PER_PROGRAM, family=family))
    manager = make_manager(PORT.passes, {})
    built = tmp_path / "verify"
    res = verify(str(src), PreprocessOptions(), manager, keep=str(built))
    ported = [o for o in res.outcomes if o.ported]
    TOTALS[family]["nests"] += len(res.outcomes)
    TOTALS[family]["fused"] = TOTALS[family].get("fused", 0) + sum(
        any(r.startswith("fused") for r in o.nest.rewrites) for o in ported)
    TOTALS[family]["ported"] += len(ported)
    assert len(res.outcomes) == NESTS_PER_PROGRAM           # init() and report() are marked '#pragma c2gpu skip'
    if not ported:              # nothing to check (verify fails on such a file); the totals keep count
        return ported
    assert res.ok, f"{family} seed {seed}: {res.message}\n(program kept at {src})"
    ints, floats = final_output(built / "original")
    for order in ("forward", "reverse"):
        p_ints, p_floats = final_output(built / "ported", order)
        assert p_ints == ints, f"{family} seed {seed}, {order} thread order: final integer state differs " \
                               f"({p_ints} instead of {ints}; program kept at {src})"
        assert p_floats == pytest.approx(floats, rel=1e-4, abs=1e-4), \
            f"{family} seed {seed}, {order} thread order: final float results differ (program kept at {src})"
    return ported


@requires_tool("g++")
@pytest.mark.parametrize("seed", SEEDS)
def test_random_affine_nests(tmp_path, seed):
    ported = _check(tmp_path, seed, "affine")
    # the generator mixes parallel and sequential nests: some, never all or none, are ported
    assert 3 <= len(ported) < NESTS_PER_PROGRAM


@requires_tool("g++")
@pytest.mark.parametrize("seed", SEEDS)
def test_random_c_semantics_nests(tmp_path, seed):
    _check(tmp_path, seed, "c")


@requires_tool("g++")
@pytest.mark.parametrize("seed", [0] + [pytest.param(seed, marks=pytest.mark.slow) for seed in range(1, 6)])
def test_random_sibling_nests(tmp_path, seed):
    """Some of the adjacent nests fuse (seed 0: two of its 30 time loops), and the ports compute what the C does."""
    before = TOTALS["siblings"].get("fused", 0)
    _check(tmp_path, seed, "siblings")
    if seed == 0:
        assert TOTALS["siblings"]["fused"] - before == 2


@requires_tool("g++")
@pytest.mark.parametrize("seed", [0] + [pytest.param(seed, marks=pytest.mark.slow) for seed in range(1, 6)])
def test_random_disjunction_nests(tmp_path, seed):
    """Nests under `!=`, `||`, `!` and `else`: the conditions are exact pieces in the dependences, and the ports
    compute what the C does."""
    _check(tmp_path, seed, "disjunctions")


@requires_tool("g++")
@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(10, 110))
def test_random_nests_more(tmp_path, seed, family):
    _check(tmp_path, seed, family)


@requires_tool("gcc")
@pytest.mark.parametrize("family", FAMILIES)
def test_generated_programs_are_defined_c(tmp_path, family):
    """The generator's promise: whatever the conversions do, no access leaves its array and no arithmetic
    overflows, so a difference can only come from the port.  UBSan and ASan check three seeds."""
    for seed in range(3):
        src = tmp_path / f"random_{family}_{seed}.c"
        src.write_text(program(seed, NESTS_PER_PROGRAM, family=family))
        exe = tmp_path / "checked"
        subprocess.run(["gcc", "-O1", "-w", "-fsanitize=undefined,address", "-fno-sanitize-recover=all", str(src),
                        "-o", str(exe)], check=True, capture_output=True, timeout=120)
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "runtime error" not in r.stderr, f"{family} seed {seed}: {r.stderr[-800:]}"
        assert r.stdout.startswith("ints ")


def test_report_totals():
    """Runs last in this file: prints how many nests were tried and ported (see -s); a family whose nests
    were checked but never ported proves nothing."""
    for family, n in TOTALS.items():
        print(f"\ndifferential test, {family} nests: {n['nests']} nests, {n['ported']} ported and verified"
              + (f" ({n['fused']} of them fused)" if n.get("fused") else ""), end="")
    print()
    assert all(n["nests"] == 0 or n["ported"] > 0 for n in TOTALS.values())
