"""The sequential CPU baseline of each nest: measured when possible, else a labelled static estimate.

    from c2gpu.cpu import cpu_baseline
    times = cpu_baseline("matmul.c", program, options)        # {nest name: CpuTiming}
    times["matmul@16"].median_s, times["matmul@16"].source    # 0.0036, "measured"

`harness` times the original nests inside the user's own program (see its docstring for what is
measured and how); `static` estimates them from the IR against a CPU description when no compiler
is available, `--no-run` is given, or the measurement failed.  Seed 004, section 5.3:
speedup = sequential / (overhead + parallel), with this as the sequential time.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from typing import Iterable, Mapping

from ..diagnostics import C2GPUError
from ..frontend import PreprocessOptions
from ..ir import Program
from .harness import CompilerNotFound, cache_path, compiler_version, measure_file, measure_nest
from .static import CpuDescription, estimate_program, host_cpu, load_cpu, static_estimate
from .timing import CpuTiming

__all__ = ["CpuTiming", "CpuDescription", "CompilerNotFound", "cpu_baseline", "measure_file", "measure_nest",
           "static_estimate", "estimate_program", "load_cpu", "host_cpu", "cache_path", "compiler_version"]


def cpu_baseline(path: str, program: Program, options: PreprocessOptions | None = None, *, run: bool = True,
                 cc: str | None = None, cflags: Iterable[str] = ("-O2",), repeats: int = 5, timeout: float = 60,
                 params: Mapping[str, object] | None = None, cache_dir: str | os.PathLike | None = None,
                 use_cache: bool = True, cpu: CpuDescription | None = None,
                 source: str | None = None, extra_sources: Iterable[str] = ()) -> dict[str, CpuTiming]:
    """Sequential time of every nest of `program` (loaded from `path`), by nest name.

    Measured (`source == "measured"`) when `run` and the compiler `cc` (default "cc") is on PATH;
    otherwise, and for each nest the measurement could not time (the build failed, it never ran),
    the static estimate (`source == "static estimate"`) with the reason in its note: "--no-run
    given", "no C compiler found on PATH", "measurement failed: ...".  The static estimate gets
    `params` for the nest's symbolic parameters, completed by the values the measurement observed.
    """
    cc = cc or "cc"
    cpu = cpu or load_cpu()
    if not run:
        return estimate_program(program, _ints(params), cpu, "--no-run given")
    if shutil.which(cc) is None:
        return estimate_program(program, _ints(params), cpu, f"no C compiler found on PATH (looked for '{cc}')")
    try:
        measured = measure_file(path, options, cc=cc, cflags=cflags, repeats=repeats, timeout=timeout,
                                params=params, cache_dir=cache_dir, use_cache=use_cache, program=program,
                                source=source, extra_sources=extra_sources)
    except C2GPUError as e:
        return estimate_program(program, _ints(params), cpu, f"the program could not be timed: {e.message}")
    out = {}
    for nest in program.nests:
        t = measured.get(nest.name)
        if t is not None and t.median_s is not None:
            out[nest.name] = _at_given_size(nest, t, _ints(params), cpu)
            continue
        why = t.note if t is not None else "not measured"
        env = {k: lo for k, (lo, hi) in (t.observed_params if t else {}).items() if lo == hi}
        env.update(nest.param_env(_ints(params)))
        out[nest.name] = static_estimate(nest, env, cpu, f"not measured: {why}")
    return out


def _at_given_size(nest, t: CpuTiming, given: dict[str, int], cpu: CpuDescription) -> CpuTiming:
    """The measured time at the sizes the GPU is predicted for: a symbolic size given with --param that the
    program itself ran at another value cannot be set in a measurement, so the measured time is scaled by
    the static estimate's growth from the size that ran to the size given (and `scaled` says so)."""
    ran = {k: lo for k, (lo, hi) in t.observed_params.items() if lo == hi}
    moved = {k: v for k, v in given.items() if k in nest.params and k in ran and ran[k] != v}
    if not moved:
        return t
    before = static_estimate(nest, nest.param_env(ran), cpu).median_s
    after = static_estimate(nest, nest.param_env({**ran, **given}), cpu).median_s
    if not before or not after:
        return t
    k = after / before
    what = ", ".join(f"{n} = {ran[n]:,}" for n in sorted(moved))
    to = ", ".join(f"{n} = {v:,}" for n, v in sorted(moved.items()))
    return replace(t, median_s=t.median_s * k, min_s=t.min_s and t.min_s * k, max_s=t.max_s and t.max_s * k,
                   total_median_s=t.total_median_s and t.total_median_s * k,
                   scaled=f"measured at {what} (the program's own size) and scaled to {to} by the static estimate's "
                          f"growth (x{k:.3g}): cache effects at the new size are not measured")


def _ints(params: Mapping[str, object] | None) -> dict[str, int]:
    """The integer-valued parameters (symbolic sizes); others (e.g. macro text) mean nothing to the IR."""
    out = {}
    for k, v in (params or {}).items():
        try:
            out[k] = int(str(v), 0)
        except ValueError:
            continue
    return out
