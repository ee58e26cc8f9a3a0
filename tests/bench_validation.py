"""Predicted vs measured kernel time on testdata/validation/naive_cuda_measured.tsv (a script, not a test).

    python tests/bench_validation.py [--registers auto|ptxas|estimate] [--own]

Prints, for every kernel x GPU of testdata/validation/naive_cuda_measured.tsv/naive_cuda_measured.tsv, the measured
median, each model's prediction (kernel time x launches + launch overhead) and the ratio,
then the median predicted/measured ratio per model (all cases, calibration cases, held-out
cases).  See tests/validation_data.py for how the cases are ported.
"""
import argparse
import sys
import time

import validation_data as validation


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--registers", default="auto", choices=("auto", "ptxas", "estimate"))
    ap.add_argument("--own", action="store_true", help="also c2gpu's own port of each case against the measurement")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cases = validation.run(args.registers)
    print(validation.table(cases))
    print(f"({len(cases)} cases in {time.perf_counter() - t0:.1f} s; held out: {', '.join(validation.HELD_OUT)})")
    if args.own:
        print(validation.own_choice_table(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
