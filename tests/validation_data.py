"""Test support: predicted vs measured on the naive CUDA PolyBench/GPU kernels of shared/validation.

It reads data outside the package (../shared/validation or C2GPU_VALIDATION_DIR), so it lives
with the tests (tests/test_perf_validation.py) and the bench (tests/bench_validation.py).

The measured time (README there) is the kernel launches of one run, each
followed by a synchronize: kernel execution plus launch overhead, no copies.
The same loop nests are in testdata/validation/*.c; they are ported with
--assume-no-alias (the CUDA versions have no restrict either, but the nests are
parallel), no shared memory (the measured kernels are naive), and the measured
block shape forced; the prediction is the sum over the file's kernel nests of
kernel time x launches plus launch overhead x launches.

Calibration (GPU files, "calibrated against shared/validation") used only the
CALIBRATION cases; HELD_OUT cases were not looked at while choosing values.
"""
from __future__ import annotations

import csv
import math
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.gpu import load_gpu
from c2gpu.model import MODELS
from c2gpu.perf.predict import predict_nest
from c2gpu.pipeline import PassManager
from c2gpu.codegen import build_nest_code
from c2gpu.plan import NestPlan, SharedMemoryPlan
from c2gpu.registry import available_passes

REPO = Path(__file__).resolve().parents[1]
CASES = {  # kernel -> (C file, forced block)
    "gemm": ("gemm.c", (32, 8)),
    "2mm": ("2mm.c", (32, 8)),
    "syrk": ("syrk.c", (32, 8)),
    "convolution-2d": ("convolution-2d.c", (32, 8)),
    "jacobi-2d-imper": ("jacobi-2d-imper.c", (32, 8)),
    "fdtd-2d": ("fdtd-2d.c", (32, 8)),
    "gesummv": ("gesummv.c", (256,)),
}
CALIBRATION = ("gemm", "2mm", "convolution-2d", "jacobi-2d-imper")
HELD_OUT = ("syrk", "fdtd-2d", "gesummv")
GPU_KEYS = {"A10": "a10", "H100-PCIe": "h100-pcie", "H100-SXM": "h100-sxm"}


def validation_dir() -> Path | None:
    env = os.environ.get("C2GPU_VALIDATION_DIR")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "validation", Path("/work/shared/validation")]:
        if (cand / "naive_cuda_measured.tsv").is_file():
            return cand
    return None


@dataclass
class Case:
    kernel: str
    gpu: str             # as in the TSV
    measured_s: float
    predicted: dict      # model -> seconds (kernels + launches)
    parts: dict          # model -> {"kernels": s, "launch": s}
    held_out: bool
    perfs: list          # the NestPerformance objects the prediction sums (tests check them too)

    def ratio(self, model: str) -> float:
        return self.predicted[model] / self.measured_s


def measurements(directory: Path | None = None) -> list[dict]:
    d = directory or validation_dir()
    if d is None:
        return []
    with open(d / "naive_cuda_measured.tsv", newline="") as f:
        return [dict(r) for r in csv.DictReader(f, delimiter="\t")]


def predict_case(kernel: str, gpu_key: str, registers: str = "auto"):
    """NestPerformance objects of the kernel nests of one validation file on one GPU."""
    fname, block = CASES[kernel]
    gpu = load_gpu(gpu_key)
    opts = {"assume_no_alias": True, "block": block, "shared_memory": "off", "params": {}}
    mgr = PassManager(available_passes(), ["normalize", "dependence", "mapping"], opts)
    program = mgr.run(load_program(str(REPO / "testdata" / "validation" / fname), PreprocessOptions()))
    out = []
    for nest in program.nests:
        if nest.function == "main":
            continue          # the initialisation and checksum loops are not part of the measurement
        mapping = mgr.result("mapping", nest)
        if mapping is None:
            errs = mgr.errors_of(nest)
            raise RuntimeError(f"{kernel}: nest {nest.name} not mapped: " + "; ".join(e.message for e in errs))
        # the naive kernels measured: no tiles, and every `+=` on a global element a load and a store per iteration
        plan = NestPlan(nest.name, mapping, SharedMemoryPlan(), scalar_replacement=False)
        try:
            code = build_nest_code(nest, plan)
        except Exception:
            code = None       # codegen refuses the nest (convolution-2d): registers estimated, no kernel text
        out.append(predict_nest(nest, plan, gpu, {}, code=code, options=opts, search=False, registers=registers))
    return out


def run(registers: str = "auto") -> list[Case]:
    cases = []
    for row in measurements():
        kernel, gpu_name = row["kernel"], row["gpu"]
        if kernel not in CASES or gpu_name not in GPU_KEYS:
            continue
        perfs = predict_case(kernel, GPU_KEYS[gpu_name], registers)
        pred, parts = {}, {}
        for m in MODELS:
            k = sum(p.kernel_s(m) for p in perfs)
            launch = sum(p.launch_overhead_s for p in perfs)
            pred[m] = k + launch
            parts[m] = {"kernels": k, "launch": launch}
        cases.append(Case(kernel, gpu_name, float(row["median_s"]), pred, parts, kernel in HELD_OUT, perfs))
    return cases


def median_ratio(cases: list[Case], model: str, held_out: bool | None = None) -> float:
    sel = [c.ratio(model) for c in cases if held_out is None or c.held_out == held_out]
    return statistics.median(sel) if sel else float("nan")


def table(cases: list[Case]) -> str:
    models = list(MODELS)
    head = f"{'kernel':<16} {'gpu':<10} {'measured':>10} " + " ".join(
        f"{m + ' [ms]':>13} {'ratio':>6}" for m in models) + "  set"
    lines = [head, "-" * len(head)]
    for c in sorted(cases, key=lambda c: (c.kernel, c.gpu)):
        lines.append(f"{c.kernel:<16} {c.gpu:<10} {c.measured_s * 1e3:>10.4f} " + " ".join(
            f"{c.predicted[m] * 1e3:>13.4f} {c.ratio(m):>6.2f}" for m in models)
            + ("  held-out" if c.held_out else "  calibration"))
    lines.append("-" * len(head))
    for label, sel in (("all", None), ("calibration", False), ("held-out", True)):
        lines.append(f"median predicted/measured ({label}): " + ", ".join(
            f"{m} {median_ratio(cases, m, sel):.2f}" for m in models))
    for m in models:
        logs = [abs(math.log(c.ratio(m))) for c in cases]
        lines.append(f"{m}: geometric mean |error| x{math.exp(sum(logs) / len(logs)):.2f}, worst x"
                     f"{math.exp(max(logs)):.2f}")
    return "\n".join(lines)
