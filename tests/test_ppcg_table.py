"""The README's table of kernels next to PPCG's (tests/ppcg_comparison.py prints it): PPCG's side is the data in
testdata/ppcg/structures.tsv, whose sources its README names, for kernels of the PolyBench/C corpus."""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from polybench_corpus import kernels  # noqa: E402
from ppcg_comparison import ppcg_rows  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def test_every_row_is_a_polybench_kernel_from_a_named_source():
    rows = ppcg_rows()
    names = {k.stem for k in kernels()}
    assert len(rows) == 19 and len({r[0] for r in rows}) == 19
    assert all(len(r) == 7 and r[0] in names and r[1] in ("C", "T") and r[2] in ("SMALL", "LARGE") for r in rows), rows
    sources = (ROOT / "testdata" / "ppcg" / "README.md").read_text()
    assert "abhishek111226/Constant-PPCG, commit fd596a9ce99ceb647abc83b64e80a9f382531d01" in sources
    assert "abhishek111226/Texturizing-PPCG, commit 11ced1d0d61216be0bca15a9037a1ce505af3d74" in sources


def test_the_readme_table_shows_the_data():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Kernels next to PPCG's"):readme.index("### Shared memory")]
    shown = {m[0]: m[1:] for m in re.findall(r"^\| ([\w-]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|", section, re.M)}
    for name, source, size, count, launches, per_thread, on_chip in ppcg_rows():
        cells = tuple(c.strip() for c in shown[name])
        assert cells == (f"{count}, {launches} ({size}, {source})", per_thread, on_chip), name
