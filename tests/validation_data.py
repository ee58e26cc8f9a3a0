"""Test support: predicted vs measured on the naive CUDA PolyBench/GPU kernels of testdata/validation/naive_cuda_measured.tsv.

It reads data the package does not install (testdata/validation/naive_cuda_measured.tsv, with its README
MEASURED.md; C2GPU_VALIDATION_DIR names another folder holding a naive_cuda_measured.tsv, for example one with
the held-back rows), so it lives with the tests (tests/test_perf_validation.py) and the bench (tests/bench_validation.py).

The measured time (README there) is the kernel launches of one run: kernel execution plus the
launch and synchronization costs, no copies.  The same loop nests are in testdata/validation/*.c;
they are ported with --assume-no-alias (the CUDA versions have no restrict either, but the nests
are parallel), no shared memory (the measured kernels are naive), the measured block shape forced
and, where the CUDA version keeps a parallel loop on the host, the grid loops it maps (`map`).
The prediction is the sum over the file's kernel nests of kernel time x launches plus the launch
cost of the host code as the measured program runs it (`Spec.synchronize`: PolyBench/GPU
synchronizes after every launch in most programs, once after all of them in a few), never the
wrapper c2gpu would emit.

Calibration (GPU files, "calibrated against testdata/validation/naive_cuda_measured.tsv") used only the CALIBRATION cases;
HELD_OUT cases were not looked at while choosing values.  The TSV holds 7 kernels; the HELD_OUT
ones that it does not have (doitgen, convolution-3d, adi, atax, mvt: held back by whoever holds
the measurements) are predicted and reported as "no measurement" until their rows are handed
over, and are compared from then on without any change here.
"""
from __future__ import annotations

import csv
import math
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.model.gpu import GPU, load_gpu
from c2gpu.model import MODELS
from c2gpu.perf.predict import SYNC_AT_END, SYNC_EACH_LAUNCH, launch_cost, predict_nest
from c2gpu.pipeline import PassManager
from c2gpu.codegen import build_nest_code
from c2gpu.planning.plan import NestPlan, SharedMemoryPlan
from c2gpu.registry import available_passes

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Spec:
    """How the measured CUDA program (PolyBench/GPU 1.0, CUDA/<NAME>/*.cu) runs a kernel."""
    file: str                       # testdata/validation/<file>: the nest as the CUDA version computes it
    block: tuple[int, ...]          # its thread block
    synchronize: str                # SYNC_EACH_LAUNCH or SYNC_AT_END: what its host code does
    launches: int                   # the kernel launches it times: c2gpu's plan must launch as many
    map: tuple[str, ...] = ()       # its grid loops (C names), when a parallel loop stays on the host


CASES = {
    "gemm": Spec("gemm.c", (32, 8), SYNC_EACH_LAUNCH, 1),
    "2mm": Spec("2mm.c", (32, 8), SYNC_EACH_LAUNCH, 2),
    "syrk": Spec("syrk.c", (32, 8), SYNC_EACH_LAUNCH, 1),
    "convolution-2d": Spec("convolution-2d.c", (32, 8), SYNC_EACH_LAUNCH, 1),
    "jacobi-2d-imper": Spec("jacobi-2d-imper.c", (32, 8), SYNC_EACH_LAUNCH, 40),
    "fdtd-2d": Spec("fdtd-2d.c", (32, 8), SYNC_EACH_LAUNCH, 1500),
    "gesummv": Spec("gesummv.c", (256,), SYNC_EACH_LAUNCH, 1),
    # held back: not in the TSV handed over (the issue names them); see each file's header
    "doitgen": Spec("doitgen.c", (32, 8), SYNC_EACH_LAUNCH, 256, map=("q", "p")),
    "convolution-3d": Spec("convolution-3d.c", (32, 8), SYNC_AT_END, 254, map=("j", "k")),
    "adi": Spec("adi.c", (256,), SYNC_EACH_LAUNCH, 2049),
    "atax": Spec("atax.c", (32, 8), SYNC_EACH_LAUNCH, 2),
    "mvt": Spec("mvt.c", (32, 8), SYNC_AT_END, 2),
}
CALIBRATION = ("gemm", "2mm", "convolution-2d", "jacobi-2d-imper")
HELD_OUT = ("syrk", "fdtd-2d", "gesummv", "doitgen", "convolution-3d", "adi", "atax", "mvt")
GPU_KEYS = {"A10": "a10", "H100-PCIe": "h100-pcie", "H100-SXM": "h100-sxm"}


def validation_dir() -> Path:
    """The folder of naive_cuda_measured.tsv: C2GPU_VALIDATION_DIR, else the copy in testdata/validation."""
    env = os.environ.get("C2GPU_VALIDATION_DIR")
    return Path(env) if env else REPO / "testdata" / "validation"


@dataclass
class Case:
    kernel: str
    gpu: str             # as in the TSV
    measured_s: float | None   # None: no measurement handed over
    predicted: dict      # model -> seconds (kernels + launch cost); empty when c2gpu cannot express the case
    parts: dict          # model -> {"kernels": s, "launch": s}
    held_out: bool
    perfs: list          # the NestPerformance objects the prediction sums (tests check them too)
    launches: float = 0.0
    synchronizes: float = 0.0
    not_expressed: str = ""    # why c2gpu cannot run the nest as the CUDA version does ("" when it can)

    def ratio(self, model: str) -> float:
        return self.predicted[model] / self.measured_s

    @property
    def compared(self) -> bool:
        return self.measured_s is not None and bool(self.predicted)


def measurements(directory: Path | None = None) -> list[dict]:
    d = directory or validation_dir()
    with open(d / "naive_cuda_measured.tsv", newline="") as f:
        return [dict(r) for r in csv.DictReader(f, delimiter="\t")]


class NotExpressed(Exception):
    """c2gpu cannot run the nest the way the measured CUDA program does (the mapper refuses that structure)."""


def predict_case(kernel: str, gpu_key: str, registers: str = "auto"):
    """NestPerformance objects of the kernel nests of one validation file on one GPU, each with the launch cost
    of the measured program's host code (Spec.synchronize)."""
    spec = CASES[kernel]
    gpu = load_gpu(gpu_key)
    opts = {"assume_no_alias": True, "block": spec.block, "shared_memory": "off", "params": {}}
    if spec.map:
        opts["map"] = list(spec.map)
    mgr = PassManager(available_passes(), ["normalize", "dependence", "mapping"], opts)
    program = mgr.run(load_program(str(REPO / "testdata" / "validation" / spec.file), PreprocessOptions()))
    out = []
    for nest in program.nests:
        if nest.function == "main":
            continue          # the initialisation and checksum loops are not part of the measurement
        mapping = mgr.result("mapping", nest)
        if mapping is None:
            errs = mgr.errors_of(nest)
            raise NotExpressed(f"nest {nest.name} not mapped: " + "; ".join(e.message for e in errs))
        # the naive kernels measured: no tiles, and every `+=` on a global element a load and a store per iteration
        plan = NestPlan(nest.name, mapping, SharedMemoryPlan(), scalar_replacement=False)
        try:
            code = build_nest_code(nest, plan)
        except Exception:
            code = None       # codegen refuses the nest (convolution-2d): registers estimated, no kernel text
        out.append(predict_nest(nest, plan, gpu, {}, code=code, options=opts, search=False, registers=registers,
                                synchronize=spec.synchronize))
    return out


def run(registers: str = "auto") -> list[Case]:
    """Every kernel of CASES on every GPU of GPU_KEYS: compared where the TSV has its row."""
    measured = {(r["kernel"], r["gpu"]): float(r["median_s"]) for r in measurements()}
    cases = []
    for kernel in CASES:
        for gpu_name, gpu_key in GPU_KEYS.items():
            meas = measured.get((kernel, gpu_name))
            try:
                perfs = predict_case(kernel, gpu_key, registers)
            except NotExpressed as e:
                cases.append(Case(kernel, gpu_name, meas, {}, {}, kernel in HELD_OUT, [], not_expressed=str(e)))
                continue
            planned = sum(p.launch.launches for p in perfs)
            if planned != CASES[kernel].launches:
                cases.append(Case(kernel, gpu_name, meas, {}, {}, kernel in HELD_OUT, perfs, planned, not_expressed=(
                    f"c2gpu's plan launches {planned:.0f} kernels, the CUDA program {CASES[kernel].launches}")))
                continue
            pred, parts = {}, {}
            # the measured program's host code runs the file's nests one after another: its launches, synchronized
            # as it does (once in all for SYNC_AT_END), not each nest's wrapper
            cost = launch_cost(sum(p.launch.launches for p in perfs), load_gpu(gpu_key), CASES[kernel].synchronize)
            launch = cost.seconds
            for m in MODELS:
                k = sum(p.kernel_s(m) for p in perfs)
                pred[m] = k + launch
                parts[m] = {"kernels": k, "launch": launch}
            cases.append(Case(kernel, gpu_name, meas, pred, parts, kernel in HELD_OUT, perfs,
                              cost.launches, cost.synchronizes))
    return cases


def own_choice(kernel: str, gpu_key: str) -> tuple[float, list[str]]:
    """What c2gpu itself would port for a validation file on a GPU: its own structure and block (the model's
    choices), registers for accumulators, one synchronize per nest; kernels + launches in seconds (no copies,
    as the measurement), and each nest's `port` sentence.  Another program than the measured CUDA, so its
    ratio to the measurement says how c2gpu's choice compares with the hand-written one, not how accurate the
    model is (the cases above check that)."""
    import c2gpu
    report = c2gpu.analyze(str(REPO / "testdata" / "validation" / CASES[kernel].file), gpu=gpu_key, run_cpu=False,
                           assume_no_alias=True)
    nests = [n for n in report.nests if n.function != "main" and n.ported and n.gpu_s]
    return (sum(n.gpu_s["kernels"] + n.gpu_s["launches"] for n in nests),
            [f"{n.name}: {n.mapping}" for n in nests])


def own_choice_table(cases: list[Case]) -> str:
    """c2gpu's own port of every measured case (own_choice) against the measurement."""
    lines = ["c2gpu's own port (its structure, block and registers; one synchronize per nest) against the measured "
             "hand-written CUDA:"]
    for c in cases:
        if c.measured_s is None and c.kernel not in ("doitgen", "convolution-3d", "adi"):
            continue
        t, ports = own_choice(c.kernel, GPU_KEYS[c.gpu])
        vs = f"{t / c.measured_s:5.2f}x the measured" if c.measured_s else "no measurement"
        lines.append(f"  {c.kernel:<16} {c.gpu:<10} {t * 1e3:9.4f} ms  {vs}  ({'; '.join(ports)})")
    return "\n".join(lines)


def compared(cases: list[Case], held_out: bool | None = None, gpu: str | None = None) -> list[Case]:
    return [c for c in cases if c.compared and (held_out is None or c.held_out == held_out)
            and (gpu is None or c.gpu == gpu)]


def median_ratio(cases: list[Case], model: str, held_out: bool | None = None) -> float:
    sel = [c.ratio(model) for c in compared(cases, held_out)]
    return statistics.median(sel) if sel else float("nan")


def error_factor(ratio: float) -> float:
    """How far a predicted/measured ratio is from 1, as a factor (0.5 and 2 are both x2)."""
    return max(ratio, 1 / ratio)


def summary(cases: list[Case], model: str) -> dict:
    """median predicted/measured, 90th percentile of the error factor (nearest rank) and the worst ratio."""
    ratios = [c.ratio(model) for c in cases]
    if not ratios:
        return {"n": 0}
    errs = sorted(error_factor(r) for r in ratios)
    return {"n": len(ratios), "median": statistics.median(ratios),
            "p90": errs[math.ceil(0.9 * len(errs)) - 1],
            "worst": max(ratios, key=error_factor)}


def fit_launch_sync_us(cases: list[Case], gpu: GPU) -> float:
    """The launch + synchronize cost (µs) that fits `cases` best: the least squares of log(predicted/measured)
    over the cases that synchronize after every launch and every model, the kernel times and the back-to-back
    launch cost held as predicted; searched in 0.1 µs steps from launch_back_to_back_us to 50 µs."""
    rows = [(c, m) for c in cases if c.compared and c.synchronizes == c.launches for m in MODELS]

    def loss(sync_us: float) -> float:
        total = 0.0
        for c, m in rows:
            pred = c.parts[m]["kernels"] + c.launches * sync_us * 1e-6
            total += math.log(pred / c.measured_s) ** 2
        return total
    steps = [round(gpu.launch_back_to_back_us + 0.1 * k, 1)
             for k in range(int((50 - gpu.launch_back_to_back_us) / 0.1) + 1)]
    return min(steps, key=loss)


def table(cases: list[Case]) -> str:
    models = list(MODELS)
    head = f"{'kernel':<16} {'gpu':<10} {'launches+syncs':>14} {'measured':>10} " + " ".join(
        f"{m + ' [ms]':>13} {'ratio':>6}" for m in models) + "  set"
    lines = [head, "-" * len(head)]
    for c in sorted(cases, key=lambda c: (c.kernel, c.gpu)):
        tag = "  held-out" if c.held_out else "  calibration"
        if not c.predicted:
            lines.append(f"{c.kernel:<16} {c.gpu:<10} not expressed: {c.not_expressed}{tag}")
            continue
        counts = f"{c.launches:.0f}+{c.synchronizes:.0f}"
        meas = f"{c.measured_s * 1e3:>10.4f}" if c.measured_s is not None else f"{'no meas.':>10}"
        lines.append(f"{c.kernel:<16} {c.gpu:<10} {counts:>14} {meas} " + " ".join(
            f"{c.predicted[m] * 1e3:>13.4f} " + (f"{c.ratio(m):>6.2f}" if c.compared else f"{'-':>6}")
            for m in models) + tag)
    lines.append("-" * len(head))
    lines.append("per GPU and set: median predicted/measured, 90th percentile of the error factor, worst ratio")
    for gpu in GPU_KEYS:
        for label, held in (("calibration", False), ("held-out", True)):
            sel = compared(cases, held, gpu)
            parts = []
            for m in models:
                s = summary(sel, m)
                parts.append(f"{m} " + ("no cases" if not s["n"] else
                                        f"median {s['median']:.2f}, p90 x{s['p90']:.2f}, worst {s['worst']:.2f}"))
            lines.append(f"  {gpu:<10} {label:<12} ({len(sel)} cases): " + "; ".join(parts))
    for label, held in (("all", None), ("calibration", False), ("held-out", True)):
        lines.append(f"median predicted/measured ({label}): " + ", ".join(
            f"{m} {median_ratio(cases, m, held):.2f}" for m in models))
    for m in models:
        logs = [abs(math.log(c.ratio(m))) for c in compared(cases)]
        if logs:
            lines.append(f"{m}: geometric mean |error| x{math.exp(sum(logs) / len(logs)):.2f}, worst x"
                         f"{math.exp(max(logs)):.2f}")
    missing = sorted({c.kernel for c in cases if c.measured_s is None})
    if missing:
        lines.append(f"no measurement (held back, predicted only): {', '.join(missing)}")
    for gpu_name, key in GPU_KEYS.items():
        gpu = load_gpu(key)
        fit = fit_launch_sync_us(compared(cases, False, gpu_name), gpu)
        lines.append(f"launch + synchronize on {key}: {fit:.1f} µs fitted on the calibration cases, "
                     f"{gpu.launch_sync_us:g} µs in the GPU file (back to back {gpu.launch_back_to_back_us:g} µs)")
    return "\n".join(lines)
