import os
import shutil
from pathlib import Path

import pytest

# `c2gpu analyze` predicts for a default GPU (C2GPU_GPU, c2gpu.toml, else h100-sxm): the tests choose theirs
# explicitly, and stay independent of the developer's environment; tests of that default unset it
os.environ["C2GPU_GPU"] = "none"

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"


def project_programs() -> list[Path]:
    """The C programs written for this project (testdata/, its third-party corpora left out)."""
    return sorted(p for p in TESTDATA.rglob("*.c") if "corpora" not in p.relative_to(TESTDATA).parts)


def requires_tool(name: str):
    """Skip when a tool is missing, except in CI (CI=true), where its absence is a failure."""
    if shutil.which(name) is None and os.environ.get("CI") != "true":
        return pytest.mark.skip(reason=f"{name} not on PATH")
    return lambda test: test


@pytest.fixture
def testdata() -> Path:
    return TESTDATA


def write_c(tmp_path: Path, text: str, name: str = "t.c") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def verify_program(tmp_path: Path, text: str):
    """`verify` on the C program `text`: its port run on the CPU execution layer against the original (three
    thread orders, poisoned memory); the VerifyResult."""
    from c2gpu.drivers.driver import make_manager
    from c2gpu.frontend import PreprocessOptions
    from c2gpu.drivers.port import PIPELINE
    from c2gpu.drivers.verify import verify
    return verify(str(write_c(tmp_path, text)), PreprocessOptions(), make_manager(PIPELINE, {}))


def loop_verdicts(tmp_path: Path, source: str) -> dict[int, tuple[str, str, str]]:
    """{line: (loop variable, status, reason)} of c2gpu.analyze on the source, for every loop of every nest (the
    first nest that has a loop there: a function's own, not a copy inlined into a caller further down)."""
    import c2gpu
    path = tmp_path / "a.c"
    path.write_text(source)
    report = c2gpu.analyze(str(path), run_cpu=False)
    out: dict[int, tuple[str, str, str]] = {}
    for n in report.nests:
        for lp in n.loops:
            out.setdefault(lp.location.line, (lp.var, lp.status, lp.reason))
    return out


def verified_ports(tmp_path: Path, text: str) -> set[str]:
    """The nests c2gpu ports in the C program `text`, once verify_program has found the port equal to the original."""
    res = verify_program(tmp_path, text)
    assert res.ok, res.message
    return {o.nest.name for o in res.outcomes if o.ported}


def sweep(items, default):
    """items as pytest parameters: those in `default` run by default, the rest only with `pytest -m slow`.

    The default run keeps a representative set of a long sweep (its budget is 10 minutes on 2 cores);
    `-m slow` runs the others, so the two runs together assert everything the full sweep did."""
    assert set(default) <= set(items), f"not in the sweep: {set(default) - set(items)}"
    return [x if x in default else pytest.param(x, marks=pytest.mark.slow) for x in items]
