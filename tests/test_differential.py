"""Differential test: every nest c2gpu claims parallel and ports must compute what the C loop computes.

Random affine nests (tests/random_nests.py) are ported and run through the CPU
execution layer, in thread order and in reverse thread order, and every array
region they write is compared with the original program's.  A failure here is a
wrong parallelism claim (or a code generation bug), never a flaky test: the
programs are seeded.

    pytest tests/test_differential.py                 # 10 programs x 30 nests (CI)
    pytest tests/test_differential.py -m slow         # 100 more programs
"""
import pytest

from c2gpu.cli import PORT_PIPELINE, make_manager
from c2gpu.frontend import PreprocessOptions
from c2gpu.verify import verify

from conftest import requires_tool
from random_nests import program

NESTS_PER_PROGRAM = 30
TOTALS = {"nests": 0, "ported": 0}


def _check(tmp_path, seed):
    src = tmp_path / f"random_{seed}.c"
    src.write_text(program(seed, NESTS_PER_PROGRAM))
    manager = make_manager(PORT_PIPELINE, {})
    res = verify(str(src), PreprocessOptions(), manager)
    ported = [o for o in res.outcomes if o.ported]
    TOTALS["nests"] += len(res.outcomes)
    TOTALS["ported"] += len(ported)
    assert len(res.outcomes) == NESTS_PER_PROGRAM + 1           # the nests and init()'s loop
    assert res.ok, f"seed {seed}: {res.message}\n(program kept at {src})"
    return ported


@requires_tool("g++")
@pytest.mark.parametrize("seed", range(10))
def test_random_nests_verify(tmp_path, seed):
    ported = _check(tmp_path, seed)
    # the generator mixes parallel and sequential nests: some, never all or none, are ported
    assert 3 <= len(ported) <= NESTS_PER_PROGRAM


@requires_tool("g++")
@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 110))
def test_random_nests_verify_more(tmp_path, seed):
    _check(tmp_path, seed)


def test_report_totals():
    """Runs last in this file: prints how many nests were tried and ported (see -s)."""
    print(f"\ndifferential test: {TOTALS['nests']} nests, {TOTALS['ported']} ported and verified")
    assert TOTALS["nests"] == 0 or TOTALS["ported"] > 0
