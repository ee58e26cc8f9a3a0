import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"


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
