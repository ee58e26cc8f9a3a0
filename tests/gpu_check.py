"""GPU check: c2gpu's ports of the 30 PolyBench/C kernels and of the validation kernels, run and timed on a GPU.

    python tests/gpu_check.py [--size LARGE] [--gpu KEY] [--runs 3] [--only gemm,atax] [--json FILE]

For the GPU it finds (nvidia-smi's name, matched to a key of `c2gpu gpus`; --gpu overrides), for each program:
c2gpu analyses it for that GPU and ports it with verify's probes around each ported nest (c2gpu.drivers.verify.instrument:
the kernels are the ones whose times analyze predicts); the original is built with cc -O2, the port with
nvcc -O3 -arch=native -cudart shared.  The original runs once (it dumps what each ported nest leaves and times
each nest); the port runs once with dumps (a warm-up; checked against the original's dump by verify's comparison:
integers bit for bit, floating point within --rtol of each record's magnitude; a port that adds floating-point
values in another order than C's and differs is rebuilt with --exact-fp and checked again, to tell whether that
order is the cause), then --runs times with every
kernel launch timed by CUDA events (gpu_check_cuda/timer.cpp, preloaded), then --runs times for each nest's
end-to-end time (copies, launches and all; the CUDA context is created before the program starts).  It prints,
per program and kernel: launches measured / predicted, the median measured time, the predicted time and their
ratio, and per nest the CPU time of the original against the measured and predicted GPU time.  It begins with
the launch, copy and bandwidth constants measured by gpu_check_cuda/micro.cu beside the catalog's values.

Without a GPU it builds everything, says that it found no GPU and exits 0 (1 if something did not build):
tests/test_gpu_check.py runs it so in CI.  The originals run on the CPU in parallel (--jobs), the ports one at
a time; a program predicted to take more than --max-predicted seconds on the GPU is not run, and none is started
after --budget seconds.  Runs so far: testdata/validation/gpu_check/.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from c2gpu.drivers.api import _options                       # noqa: E402  (the options of `c2gpu analyze --gpu KEY`)
from c2gpu.drivers.driver import analyze_file, manager_for   # noqa: E402
from c2gpu.model.gpu import list_gpus, load_gpu            # noqa: E402
from c2gpu.drivers.verify import compare, instrument, read_dump, PORT_CU, PORT_HOST_C  # noqa: E402
import polybench_corpus                              # noqa: E402

CUDA = HERE / "gpu_check_cuda"
VALIDATION = HERE.parent / "testdata" / "validation"
TIMEOUT = 300.0


@dataclass
class Program:
    name: str
    path: Path
    defines: dict
    include_dirs: tuple = ()
    extra_sources: tuple = ()


def programs(size: str) -> list[Program]:
    """The validation kernels (their own sizes) first, then the 30 PolyBench/C kernels at `size`."""
    out = [Program(f"validation/{p.stem}", p, {}) for p in sorted(VALIDATION.glob("*.c"))]
    util = polybench_corpus.UTILITIES
    out += [Program(k.stem, k, {f"{size}_DATASET": 1}, (str(util), str(k.parent)), (str(util / "polybench.c"),))
            for k in polybench_corpus.kernels()]
    return out


def find_gpu() -> str | None:
    """nvidia-smi's name of GPU 0, or None."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    r = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
    names = r.stdout.strip().splitlines()
    return names[0].strip() if r.returncode == 0 and names else None


def catalog_key(device_name: str) -> str | None:
    """The catalog GPU whose name begins with nvidia-smi's, followed by a space or the end ("NVIDIA A10" is not
    "NVIDIA A100-SXM4-40GB"); the longest such name wins."""
    want = device_name.lower()
    hits = [g for g in list_gpus() if g.name.lower().startswith(want)
            and g.name.lower()[len(want):len(want) + 1] in ("", " ")]
    return max(hits, key=lambda g: len(g.name)).key if hits else None


def _run(cmd, cwd, env=None, timeout=TIMEOUT) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, errors="replace",
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"exit status {r.returncode}: {' '.join(map(str, cmd))}\n{r.stderr[-2000:]}")
    return r


def _nvcc_flags(flags: list[str]) -> list[str]:
    out, it = [], iter(flags)
    for f in it:
        out += ["-I", next(it)] if f == "-iquote" else [f]
    return out


def _build(prog: Program, gpu: str, d: Path, arch: str, exact_fp: bool):
    """Analyse, instrument and build one program in `d`: (Report, Instrumented), or None when nothing is ported."""
    options = replace(_options(None, prog.defines, prog.include_dirs, gpu, None, False, False, False),
                      exact_fp=exact_fp)
    manager = manager_for(options)
    report = analyze_file(str(prog.path), options, manager, want_report=True, err=lambda m: None).report
    built = instrument(str(prog.path), options.preprocess, manager, split=bool(prog.extra_sources))
    if not built.probes:
        return None
    d.mkdir(parents=True, exist_ok=True)
    cc = shutil.which("cc")
    (d / "original.c").write_text(built.original, errors="surrogateescape")
    (d / PORT_CU).write_text(built.port, errors="surrogateescape")
    extra = []
    for k, src in enumerate(prog.extra_sources):
        _run([cc, "-O2", "-w", *built.flags, "-c", src, "-o", f"extra{k}.o"], d)
        extra.append(f"extra{k}.o")
    _run([cc, "-O2", "-w", *built.flags, "original.c", *extra, "-o", "original", "-lm"], d)
    nvcc = ["nvcc", "-O3", f"-arch={arch}", "-w", *_nvcc_flags(built.flags)]
    if built.host is not None:
        (d / PORT_HOST_C).write_text(built.host, errors="surrogateescape")
        _run([cc, "-O2", "-w", *built.flags, "-c", PORT_HOST_C, "-o", "host.o"], d)
        _run([*nvcc, "-c", PORT_CU, "-o", "kernels.o"], d)
        _run(["nvcc", f"-arch={arch}", "-cudart", "shared", "host.o", "kernels.o", *extra, "-o", "ported", "-lm"], d)
    else:
        _run([*nvcc, "-cudart", "shared", PORT_CU, "-o", "ported", "-lm"], d)
    return report, built


def prepare(prog: Program, gpu: str, work: Path, arch: str, run_original: bool) -> dict:
    """Analyse, instrument and build one program (and run its original when a GPU will run the port); a port
    that adds floating-point values in another order than C's is also built with --exact-fp (exact/)."""
    d = work / prog.name.replace("/", "_")
    res = {"name": prog.name, "dir": str(d)}
    try:
        got = _build(prog, gpu, d, arch, exact_fp=False)
        if got is None:
            res["error"] = "no nest ported"
            return res
        report, built = got
        res["nests"] = {n.name: {"ported": n.ported, "model": n.model, "gpu_s": n.gpu_s,
                                 "kernels": {k.name: {"launches": k.launches, "predicted_s": k.predicted_s.get(n.model)}
                                             for k in n.kernels}}
                        for n in report.nests if n.name in built.probes}
        res["reassociates"] = [o.nest.name for o in built.outcomes
                               if o.ported and o.plan is not None and o.plan.mapping.reassociates]
        if res["reassociates"] and _build(prog, gpu, d / "exact", arch, exact_fp=True) is not None:
            res["exact_dir"] = str(d / "exact")
        res["built"] = True
        if run_original:
            t = time.perf_counter()
            _run(["./original"], d, dict(os.environ, C2GPU_DUMP="original.dump", C2GPU_TIMES="original.times"))
            res["original_wall_s"] = time.perf_counter() - t
    except Exception as e:         # one program's failure is reported, the others go on
        res["error"] = f"{type(e).__name__}: {e}"
    return res


def _nest_times(path: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in path.read_text().split("\n") if path.exists() else ():
        if line.strip():
            nest, s = line.rsplit(" ", 1)
            out[nest] = out.get(nest, 0.0) + float(s)
    return out


def _kernel_times(path: Path) -> dict[str, tuple[int, float]]:
    out = {}
    for line in path.read_text().split("\n") if path.exists() else ():
        if line.strip():
            name, launches, ms = line.rsplit(" ", 2)
            out[name] = (int(launches), float(ms) * 1e-3)
    return out


def run_port(res: dict, timer: Path, runs: int, rtol: float, timeout: float) -> None:
    """The port's runs on the GPU (see the module docstring); results go into `res`."""
    d = Path(res["dir"])
    t = time.perf_counter()
    env = dict(os.environ, LD_PRELOAD=str(timer))
    env.pop("C2GPU_KERNEL_TIMES", None)
    _run(["./ported"], d, dict(env, C2GPU_DUMP="ported.dump"), timeout)
    res["ported_wall_s"] = time.perf_counter() - t
    expected = read_dump(d / "original.dump")
    check = compare(expected, read_dump(d / "ported.dump"), rtol, 0.0)
    res["check"] = {"ok": check.ok, "message": check.message, "max_rel_diff": check.max_rel_diff}
    if not check.ok and "exact_dir" in res:      # is the difference the order of a floating-point sum?
        exact = Path(res["exact_dir"])
        _run(["./ported"], exact, dict(env, C2GPU_DUMP="ported.dump"), timeout)
        again = compare(expected, read_dump(exact / "ported.dump"), rtol, 0.0)
        res["check"]["exact_fp"] = {"ok": again.ok, "message": again.message, "max_rel_diff": again.max_rel_diff}
    kernel_runs, nest_runs = [], []
    for k in range(runs):
        _run(["./ported"], d, dict(env, C2GPU_KERNEL_TIMES=f"kernels{k}.times"), timeout)
        kernel_runs.append(_kernel_times(d / f"kernels{k}.times"))
    for k in range(runs):
        _run(["./ported"], d, dict(env, C2GPU_TIMES=f"ported{k}.times"), timeout)
        nest_runs.append(_nest_times(d / f"ported{k}.times"))
    names = sorted({n for r in kernel_runs for n in r})
    res["kernels_measured"] = {n: {"launches": max(r.get(n, (0, 0))[0] for r in kernel_runs),
                                   "s": statistics.median(r.get(n, (0, 0.0))[1] for r in kernel_runs)} for n in names}
    res["nests_measured"] = {n: statistics.median(r.get(n, 0.0) for r in nest_runs) for n in res["nests"]}
    res["nests_cpu"] = _nest_times(d / "original.times")


def _fmt(s: float | None) -> str:
    if s is None:
        return "-"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(s) >= f:
            return f"{s / f:.3g} {unit}"
    return f"{s / 1e-6:.3g} us"


def print_program(res: dict) -> None:
    if "error" in res:
        print(f"{res['name']}: {res['error'].splitlines()[0][:300]}")
        return
    c = res.get("check")
    if c is None:
        print(f"{res['name']}: built ({len(res['nests'])} ported nests)")
        return
    print(f"{res['name']}: {'PASS' if c['ok'] else 'FAIL'} ({c['message'][:200]}; largest relative difference "
          f"{c['max_rel_diff']:.2g})")
    if "exact_fp" in c:
        e = c["exact_fp"]
        print(f"  {', '.join(res['reassociates'])} add floating-point values in another order than C's; built with "
              f"--exact-fp the port {'agrees' if e['ok'] else 'differs too: ' + e['message'][:200]}")
    measured = res["kernels_measured"]
    for nest, info in res["nests"].items():
        cpu, gpu, pred = res["nests_cpu"].get(nest), res["nests_measured"].get(nest), info["gpu_s"].get("total")
        speed = f", {cpu / gpu:.3g}x measured against {cpu / pred:.3g}x predicted" if cpu and gpu and pred else ""
        print(f"  {nest}: CPU {_fmt(cpu)}; GPU {_fmt(gpu)} end to end, predicted {_fmt(pred)} "
              f"({info['model']}){speed}")
        for name, k in info["kernels"].items():
            m = measured.get(name, {"launches": 0, "s": 0.0})
            p = k["predicted_s"] * k["launches"] if k["predicted_s"] is not None else None
            ratio = f"{p / m['s']:.2f}" if p and m["s"] else "-"
            print(f"    {name}: {m['launches']} launches (predicted {k['launches']:.0f}), {_fmt(m['s'])} measured, "
                  f"{_fmt(p)} predicted, predicted/measured {ratio}")


def summary(results: list[dict]) -> str:
    ratios = []
    for res in results:
        for info in res.get("nests", {}).values():
            for name, k in info["kernels"].items():
                m = res.get("kernels_measured", {}).get(name)
                if m and m["s"] > 0 and k["predicted_s"]:
                    ratios.append(k["predicted_s"] * k["launches"] / m["s"])
    checked = [r for r in results if "check" in r]
    passed = sum(r["check"]["ok"] for r in checked)
    order = sum(not r["check"]["ok"] and r["check"].get("exact_fp", {}).get("ok", False) for r in checked)
    line = f"{passed} of {len(checked)} ports agree with their original"
    if order:
        line += f" ({order} more with --exact-fp: they differ by the order of a floating-point sum)"
    if ratios:
        line += (f"; kernel time predicted/measured over {len(ratios)} kernels: median {statistics.median(ratios):.2f}, "
                 f"within 2x {sum(0.5 <= r <= 2 for r in ratios)}")
    return line


def micro(arch: str, work: Path, gpu: str | None) -> dict:
    exe = work / "micro"
    _run(["nvcc", "-O2", f"-arch={arch}", CUDA / "micro.cu", "-o", exe], work)
    if gpu is None:
        return {}
    values = dict(line.split(" ", 1) for line in _run([exe], work).stdout.splitlines())
    g = load_gpu(gpu)
    print(f"measured on {values.get('device')} ({values.get('sms')} SMs); the catalog's {gpu} in brackets:")
    for key, what in (("launch_back_to_back_us", "launch_back_to_back_us"), ("launch_sync_us", "launch_sync_us")):
        print(f"  {key} {values.get(key)} [{getattr(g, what, '?')}]")
    for key in ("h2d_pageable_gbs", "d2h_pageable_gbs", "small_copy_us", "malloc_free_1mb_us", "dram_copy_gbs"):
        print(f"  {key} {values.get(key)}")
    return values


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="LARGE", choices=("MINI", "SMALL", "MEDIUM", "LARGE", "EXTRALARGE"))
    ap.add_argument("--gpu", help="the catalog key to predict for (default: the GPU found; h100-sxm without one)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", help="comma-separated program names (gemm, validation/gemm)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--keep", help="build in this directory and keep it")
    ap.add_argument("--no-gpu", action="store_true", help="build only, as if no GPU were found")
    ap.add_argument("--run-timeout", type=float, default=120.0, help="seconds for each run of a port (default 120)")
    ap.add_argument("--max-predicted", type=float, default=5.0,
                    help="seconds: a program whose ported nests are predicted to take longer is not run (default 5)")
    ap.add_argument("--budget", type=float, default=480.0,
                    help="seconds after which the remaining ports are built but not run (default 480)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if shutil.which("nvcc") is None:
        print("gpu_check: nvcc is not on PATH: nothing can be built")
        return 1
    device = None if args.no_gpu else find_gpu()
    gpu = args.gpu or (catalog_key(device) if device else None) or "h100-sxm"
    arch = "native" if device else "sm_80"
    print(f"gpu_check: {'GPU ' + device if device else 'no GPU found (nvidia-smi)'}; predicting for {gpu}; "
          f"PolyBench at {args.size}")
    progs = programs(args.size)
    if args.only:
        want = set(args.only.split(","))
        progs = [p for p in progs if p.name in want or p.name.split("/")[-1] in want]
    work = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="c2gpu_gpu_check_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        micro_values = micro(arch, work, gpu if device else None)
        timer = work / "libtimer.so"
        _run(["nvcc", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", CUDA / "timer.cpp", "-o", timer, "-ldl"],
             work)
        with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(prepare, p, gpu, work, arch, device is not None) for p in progs]
            results = []
            for fut in futures:                      # in order: each port runs while the others still build
                res = fut.result()
                predicted = sum(n["gpu_s"].get("total", 0.0) for n in res.get("nests", {}).values())
                if device and "error" not in res and time.perf_counter() - t0 > args.budget:
                    res["error"] = f"not run: the {args.budget:g} s budget was spent"
                elif device and "error" not in res and predicted > args.max_predicted:
                    res["error"] = f"not run: its ported nests are predicted to take {_fmt(predicted)} on the GPU"
                elif device and "error" not in res:
                    try:
                        run_port(res, timer, args.runs, args.rtol, args.run_timeout)
                    except Exception as e:
                        res["error"] = f"{type(e).__name__}: {e}"
                print_program(res)
                sys.stdout.flush()
                results.append(res)
                if args.json:
                    Path(args.json).write_text(json.dumps({"device": device, "gpu": gpu, "size": args.size,
                                                           "micro": micro_values, "programs": results}, indent=1))
        built = sum(bool(r.get("built")) for r in results)
        print(f"gpu_check: built {built} of {len(results)} programs" + (f"; {summary(results)}" if device else
              "; no GPU found: nothing ran") + f" ({time.perf_counter() - t0:.0f} s)")
        failed = [r["name"] for r in results if not r.get("built") and r.get("error") != "no nest ported"]
        bad = [r["name"] for r in results if "check" in r and not r["check"]["ok"]
               and not r["check"].get("exact_fp", {}).get("ok")]
        return 1 if failed or bad else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
