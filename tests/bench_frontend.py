"""Frontend speed benchmark (not a test): preprocess, parse and IR-build time per testdata file.

    python tests/bench_frontend.py [--repeat 5]

Prints the median of several runs per phase, in milliseconds.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, parse_c, preprocess
from c2gpu.frontend.lower import lower_program

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    opts = PreprocessOptions(include_dirs=(str(ROOT / "testdata" / "polybench"),))
    manager = make_manager(["normalize"])
    print(f"{'file':<36} {'preprocess':>11} {'parse':>9} {'lower':>9} {'normalize':>10} {'nests':>6}   (ms, median of {args.repeat})")
    totals = [0.0] * 4
    for path in sorted(p for p in (ROOT / "testdata").rglob("*.c") if "corpora" not in p.parts):
        times = [[], [], [], []]
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            text = preprocess(str(path), opts)
            t1 = time.perf_counter()
            ast = parse_c(text, str(path))
            t2 = time.perf_counter()
            prog = lower_program(ast, str(path), opts)
            t3 = time.perf_counter()
            manager.clear()
            manager.run(prog)
            t4 = time.perf_counter()
            for k, dt in enumerate((t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                times[k].append(dt * 1000)
        med = [statistics.median(t) for t in times]
        totals = [a + b for a, b in zip(totals, med)]
        print(f"{str(path.relative_to(ROOT)):<36} {med[0]:>11.1f} {med[1]:>9.1f} {med[2]:>9.1f} {med[3]:>10.1f} {len(prog.nests):>6}")
    print(f"{'total':<36} {totals[0]:>11.1f} {totals[1]:>9.1f} {totals[2]:>9.1f} {totals[3]:>10.1f}")


if __name__ == "__main__":
    main()
