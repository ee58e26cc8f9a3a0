"""c2gpu's kernel structures for PolyBench/C 4.2.1 at LARGE on h100-sxm, next to what PPCG generates for the same
kernels (testdata/ppcg: facts read off PPCG's output committed by others; see its README).

    python tests/ppcg_comparison.py        # prints the Markdown table the README shows

For each kernel: PPCG's kernels, launches per run, what a thread computes and what it stages on chip; c2gpu's
structure per nest (`analyze --no-run --format json`: the search's choice), its kernels and launches, and its
verdict.  Nothing here is measured on a GPU."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from polybench_corpus import UTILITIES, kernels  # noqa: E402

PPCG = ROOT / "testdata" / "ppcg" / "structures.tsv"


def ppcg_rows() -> list[list[str]]:
    return [line.split("\t") for line in PPCG.read_text().splitlines() if line and not line.startswith("#")]


def _structure(nest) -> str:
    """The structure the search chose, or the one structure there was (host and grid loops from the loops' roles)."""
    chosen = [s["structure"] for s in (nest["performance"].get("structure_decision") or []) if s["chosen"]]
    if chosen:
        return chosen[0]
    host = [lp["var"] for lp in nest["loop_verdicts"] if lp.get("role") == "host loop"]
    grid = list(dict.fromkeys(lp["var"] for lp in nest["loop_verdicts"] if "grid" in (lp.get("role") or "")))
    return "; ".join(part for part in (f"host {', '.join(host)}" if host else "",
                                       f"grid {', '.join(grid)}" if grid else "one thread") if part)


def c2gpu_cells(path: Path) -> tuple[str, int, str, str]:
    """(the structures of the file's nests, kernels, launches, verdicts) at LARGE."""
    r = subprocess.run([sys.executable, "-m", "c2gpu", "analyze", str(path), "-I", str(UTILITIES), "-I", str(path.parent),
                        "-DLARGE_DATASET", "--no-run", "--gpu", "h100-sxm", "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    nests = json.loads(r.stdout)["files"][0]["nests"]
    structures, count, launches, verdicts = [], 0, 0.0, []
    for n in nests:
        perf = n.get("performance")
        if not perf:
            structures.append("not ported")
            continue
        structures.append(_structure(n))
        count += len(perf["kernels"])
        launches += sum(k["launches"] for k in perf["kernels"])
        verdicts.append(n["verdict"]["verdict"])
    return " / ".join(structures), count, f"{launches:,.0f}", " / ".join(dict.fromkeys(verdicts))


def main() -> None:
    files = {k.stem: k for k in kernels()}
    print("| kernel | PPCG: kernels, launches | PPCG: per thread | PPCG: on chip | c2gpu at LARGE: structure "
          "| kernels, launches | verdict |")
    print("|---|---|---|---|---|---|---|")
    for name, source, size, k, launches, per_thread, on_chip in ppcg_rows():
        structure, count, runs, verdict = c2gpu_cells(files[name])
        print(f"| {name} | {k}, {launches} ({size}, {source}) | {per_thread} | {on_chip} | {structure} | {count}, {runs} "
              f"| {verdict} |")


if __name__ == "__main__":
    main()
