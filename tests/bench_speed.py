"""How fast c2gpu answers: CPU seconds (user + system, c2gpu and the compilers and programs it runs) and wall
seconds of the commands a user types first.

    python tests/bench_speed.py            # 3 repetitions of each, the median printed
    python tests/bench_speed.py --reps 5

1. The README's first command, `c2gpu analyze testdata/matmul.c` (the default GPU; the CPU baseline compiled and
   run), cold (an empty CPU-baseline cache, as for a new user) and warm (the measurement cached).
2. `c2gpu analyze testdata/matmul.c --gpu h100-sxm -D N=2048 --no-run`.
3. The 30 PolyBench/C kernels of testdata/corpora, `--gpu h100-sxm --no-run`: in one
   invocation, and one process per file.
4. A whole application: each of the NAS Parallel Benchmarks' sequential C files (class S, testdata/corpora),
   `--gpu h100-sxm --no-run`, one process per benchmark; the largest, BT (3,600 lines), on its own.
The targets (issue "The answer first", on the 2-core development machine): under 1 s of CPU for (1), under
2 s for (2), under 5 s for (3) in one invocation.  Nothing here asserts a time: it prints them.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from polybench_corpus import CORPUS, UTILITIES, kernels  # noqa: E402


def run(cmd: list[str], env: dict) -> tuple[float, float, int]:
    """(CPU seconds of the command and its children, wall seconds, exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 3):
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, r.returncode


def measure(label: str, cmds: list[list[str]], reps: int, env: dict, fresh_cache: bool = False,
            target: float | None = None) -> None:
    cpus, walls = [], []
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as cache:
            e = dict(env, C2GPU_CACHE_DIR=cache) if fresh_cache else env
            cpu = wall = 0.0
            for cmd in cmds:
                c, w, _ = run(cmd, e)
                cpu, wall = cpu + c, wall + w
        cpus.append(cpu)
        walls.append(wall)
    goal = f"   (target < {target:g} s CPU)" if target else ""
    print(f"{label:<62} CPU {statistics.median(cpus):6.2f} s   wall {statistics.median(walls):6.2f} s{goal}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    c2gpu = [sys.executable, "-m", "c2gpu"]
    env = {k: v for k, v in os.environ.items() if k != "C2GPU_GPU"}     # the default GPU, as a new user has it
    # byte-compiled, as pip leaves an installed package (with PYTHONDONTWRITEBYTECODE set, as on the development
    # machine, a module edited since its .pyc was written is compiled again by every command: ~0.1 s)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "c2gpu")],
                   stdout=subprocess.DEVNULL, check=False)
    warm = tempfile.mkdtemp(prefix="c2gpu_bench_cache_")
    print(f"c2gpu speed, median of {args.reps} (CPU = user + system of c2gpu and everything it runs), "
          f"{os.cpu_count()} CPUs")
    first = c2gpu + ["analyze", "testdata/matmul.c"]
    measure("c2gpu analyze testdata/matmul.c (cold: nothing cached)", [first], args.reps, env, fresh_cache=True,
            target=1.0)
    run(first, dict(env, C2GPU_CACHE_DIR=warm))
    measure("c2gpu analyze testdata/matmul.c (warm: CPU time cached)", [first], args.reps,
            dict(env, C2GPU_CACHE_DIR=warm), target=1.0)
    measure("c2gpu analyze testdata/matmul.c --gpu h100-sxm -D N=2048 --no-run",
            [first + ["--gpu", "h100-sxm", "-D", "N=2048", "--no-run"]], args.reps, env, target=2.0)
    if not CORPUS.is_dir():
        print(f"PolyBench/C not found at {CORPUS}")
        return
    files = [str(f) for f in kernels()]
    inc = ["-I", str(UTILITIES)]
    common = ["--gpu", "h100-sxm", "--no-run"] + inc
    measure(f"{len(files)} PolyBench kernels, one invocation", [c2gpu + ["analyze", *files] + common], args.reps, env,
            target=5.0)
    measure(f"{len(files)} PolyBench kernels, one process per file", [c2gpu + ["analyze", f] + common for f in files],
            1, env)
    from npb_recall import BENCHMARKS, CORPUS as NPB, prepare
    if not NPB.is_dir():
        print(f"the NAS Parallel Benchmarks not found at {NPB}")
        return
    tree = prepare(Path(tempfile.mkdtemp(prefix="c2gpu_bench_npb_")))
    npb = {b: [c2gpu + ["analyze", str(f), "--gpu", "h100-sxm", "--no-run", "-I", str(tree / "common"), "-I",
                        str(tree / b)] for f in sorted((tree / b).glob("*.c"))] for b in BENCHMARKS}
    measure("NPB BT (bt.c, 3,600 lines)", npb["BT"], args.reps, env)
    measure(f"NPB {', '.join(BENCHMARKS)}, one process per file", [c for b in BENCHMARKS for c in npb[b]], 1, env)


if __name__ == "__main__":
    main()
