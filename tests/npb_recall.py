"""The NAS Parallel Benchmarks as an external oracle for the dependence analysis: which loops c2gpu proves
parallel against those the authors run in parallel.

The corpus (testdata/corpora/npb-3.0-omp-c, LLNL's AutoParBench packaging of NPB 3.0's OpenMP C version, see its
README) holds each benchmark twice: sequential, and with the authors' `#pragma omp` lines, with a JSON that lists
every loop of the reference copy (function, line, column) and whether the authors run it in parallel ("parallel
for" or "for": positive; "NULL": negative).  A loop the authors run in parallel is parallel; one they left
sequential is not necessarily sequential (they mark one level per nest).

c2gpu analyses the sequential copy (class S: `sys/setparams` writes each benchmark's npbparams.h into a temporary
copy of the tree), and a loop counts as proven when its dependence verdict is parallel or a reduction.  The
reference copy's lines are mapped to the sequential copy's by their text (difflib): the two differ only by the
pragma lines.  A reference loop c2gpu does not see (a `while` or `do` loop, a loop outside any nest it analyses)
counts as not proven.

    python tests/npb_recall.py        # TP/FP/TN/FN per benchmark, recall and precision, the published figures
"""
from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "testdata" / "corpora" / "npb-3.0-omp-c"
BENCHMARKS = ("BT", "CG", "EP", "FT", "IS", "LU", "MG", "SP")
# AutoParBench's report of 2020-01-16 on the same loops (the corpus README): TP, TN, FP, FN
PUBLISHED = {"Intel ICC 19 (-parallel, full)": (369, 315, 23, 47), "ROSE AutoPar 0.9.10": (494, 255, 91, 60)}


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    missed: list[str] = field(default_factory=list)      # "function:line" of each positive not proven
    extra: list[str] = field(default_factory=list)       # each loop proven that the authors left sequential

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    def add(self, other: "Counts") -> None:
        self.tp, self.fp, self.tn, self.fn = self.tp + other.tp, self.fp + other.fp, self.tn + other.tn, \
            self.fn + other.fn


def prepare(workdir: Path) -> Path:
    """The sequential tree copied to `workdir`, each benchmark with its class S npbparams.h."""
    tree = workdir / "sequential"
    shutil.copytree(CORPUS / "sequential", tree)
    subprocess.run(["cc", "-o", "setparams", "setparams.c"], cwd=tree / "sys", check=True, capture_output=True)
    for b in BENCHMARKS:
        subprocess.run([str(tree / "sys" / "setparams"), b.lower(), "S"], cwd=tree / b, check=True,
                       capture_output=True)
    return tree


def line_map(reference: list[str], sequential: list[str]) -> dict[int, int]:
    """1-based reference line -> sequential line, for the lines the two copies share."""
    out = {}
    matcher = difflib.SequenceMatcher(None, reference, sequential, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            out[block.a + k + 1] = block.b + k + 1
    return out


def proven_loops(path: Path, include: list[Path]) -> dict[tuple[int, int], str]:
    """(line, column) of every loop c2gpu analyses in `path` -> its dependence verdict."""
    import c2gpu
    report = c2gpu.analyze(path, include_dirs=[str(d) for d in include])
    # a function's loops also appear, at the same place, in the nests its calls are inlined into: the loop is the
    # one of the nest that holds it in the text (the closest nest starting at or before it)
    out: dict[tuple[int, int], tuple[int, str]] = {}
    for n in report.nests:
        for lp in n.loops:
            key, start = (lp.location.line, lp.location.col), n.location.line
            if start <= key[0] and (key not in out or out[key][0] < start):
                out[key] = (start, lp.status or "not analysed")
    return {key: status for key, (_, status) in out.items()}


def benchmark(tree: Path, name: str) -> Counts:
    src = tree / name / f"{name.lower()}.c"
    ref = CORPUS / "reference" / name / f"{name.lower()}.c"
    loops = json.loads((ref.parent / f"{name.lower()}.c.json").read_text())
    mapping = line_map(ref.read_text(errors="replace").splitlines(), src.read_text(errors="replace").splitlines())
    verdicts = proven_loops(src, [tree / "common", tree / name])
    by_line: dict[int, list[tuple[int, str]]] = {}
    for (line, col), status in verdicts.items():
        by_line.setdefault(line, []).append((col, status))
    counts = Counts()
    for entry in loops.values():
        line = mapping.get(int(entry["loop line"]))
        col = int(entry["loop column"])
        found = by_line.get(line, []) if line is not None else []
        # the loop at that line (the reference's column when several loops share a line)
        status = next((s for c, s in found if c == col), found[0][1] if len(found) == 1 else None)
        proven = status in ("parallel", "reduction")
        positive = entry["pragma type"] != "NULL"
        where = f"{entry['function']}:{line or entry['loop line']}"
        if positive and proven:
            counts.tp += 1
        elif positive:
            counts.fn += 1
            counts.missed.append(where)
        elif proven:
            counts.fp += 1
            counts.extra.append(where)
        else:
            counts.tn += 1
    return counts


def run(names=BENCHMARKS) -> dict[str, Counts]:
    with tempfile.TemporaryDirectory(prefix="c2gpu_npb_") as tmp:
        tree = prepare(Path(tmp))
        return {name: benchmark(tree, name) for name in names}


def table(results: dict[str, Counts]) -> str:
    lines = [f"{'benchmark':<10} {'TP':>4} {'FP':>4} {'TN':>4} {'FN':>4}  {'recall':>6}  {'precision':>9}"]
    total = Counts()
    for name, c in results.items():
        total.add(c)
        lines.append(f"{name:<10} {c.tp:>4} {c.fp:>4} {c.tn:>4} {c.fn:>4}  {c.recall:>6.2f}  {c.precision:>9.2f}")
    lines.append(f"{'c2gpu':<10} {total.tp:>4} {total.fp:>4} {total.tn:>4} {total.fn:>4}  {total.recall:>6.2f}  "
                 f"{total.precision:>9.2f}")
    for tool, (tp, tn, fp, fn) in PUBLISHED.items():
        lines.append(f"{tool}: TP {tp}, TN {tn}, FP {fp}, FN {fn}: recall {tp / (tp + fn):.2f}, precision "
                     f"{tp / (tp + fp):.2f} (published, AutoParBench 2020)")
    return "\n".join(lines)


if __name__ == "__main__":
    names = tuple(a.upper() for a in sys.argv[1:]) or BENCHMARKS
    print(table(run(names)))
