"""The Python API: ``c2gpu.analyze(path_or_source, gpu=...) -> Report``.

For refactoring tools, editors and notebooks that want c2gpu's answers as objects rather than text::

    import c2gpu
    report = c2gpu.analyze("testdata/matmul.c", defines={"N": 512}, gpu="h100-sxm", run_cpu=False)
    for nest in report.nests:
        print(nest.name, nest.location, nest.verdict, nest.speedup)
    print(report.nests[0].cuda)          # the emitted kernels and host wrapper
    report.to_json()                     # the same document as `c2gpu analyze --format json`

The analysis is exactly the command line's (`c2gpu analyze FILE --gpu NAME`): the same pipeline, CPU baseline,
verdict and break-even search; a `Report` holds, per nest, the loops with the dependence pass's verdict on each,
the mapping, the predicted times of every model, the verdict with its speedups, the break-even sizes, the
recommendations, the shared-memory decisions and the emitted CUDA.  The reports of the command line
(`--format sarif`, `--html`) are rendered from these objects.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from . import driver
from ..diagnostics import C2GPUError  # noqa: F401  (raised by analyze(); c2gpu.drivers.api.C2GPUError for callers)
from ..model import MODELS
from .options import Options, OptionsError, load_gpu_option, parse_defines, parse_params
from ..pipeline import PORT
from ..report.model import (VERDICT_CLASSES, Hotspot, KernelReport, Location, LoopReport, NestReport, RelatedLocation,
                            Report, SharedMemoryDecision)

__all__ = ["analyze", "Report", "NestReport", "LoopReport", "KernelReport", "SharedMemoryDecision", "Location",
           "RelatedLocation", "Hotspot", "VERDICT_CLASSES"]

SOURCE_NAME = "<source>"
"""The file name that locations carry when `analyze` is given C source text instead of a path."""


def analyze(path_or_source: str | os.PathLike, *, params: Mapping[str, int] | None = None,
            defines: Mapping[str, Any] | Iterable[str] | None = None, include_dirs: Sequence[str | os.PathLike] = (),
            gpu: str | os.PathLike | None = None, model: str | None = None, run_cpu: bool = True,
            break_even: bool = False, assume_no_alias: bool = False, name: str | None = None) -> Report:
    """Analyse a C file (or C source text) and return its `Report`.

    path_or_source: a path, or C source text (taken as text when it contains a newline or ``{``, or names no
        existing file; a missing ``*.c`` path raises FileNotFoundError).
    name: the file name that locations of source text carry (default ``<source>``); ``#include "..."`` is
        looked up beside it.  The text is analysed as given, never written to a file.
    params: values of symbolic sizes such as function arguments (``{"n": 4096}``), as ``--param``.
    defines: macros, as ``-D``: ``{"N": 512}`` or ``["N=512", "DEBUG"]``.
    include_dirs: directories for ``#include``, as ``-I``.
    gpu: a key of ``c2gpu gpus`` ("a100", "h100-sxm") or a GPU description file; without it there is no
        prediction and no verdict, but loops, dependences, mapping and CUDA are still reported.
    model: the performance model for the verdict ("gpuperf", "resios"); default: the validated default.
    run_cpu: build and time the nest on this machine's C compiler (False: the static CPU estimate).
    break_even: also search the size at which porting pays off (it analyses the file again at other sizes, some
        40 times: slower; the command line does it on request, --break-even, and for the HTML report).
    assume_no_alias: treat distinct pointer parameters as non-overlapping (as if declared ``restrict``).

    Raises ValueError for a bad option (unknown GPU or model, malformed define) and c2gpu's C2GPUError
    when the input cannot be read at all.
    """
    text = _source_text(path_or_source)
    options = _options(params, defines, include_dirs, gpu, model, run_cpu, break_even, assume_no_alias)
    if text is None:
        return driver.analyze(str(path_or_source), options)
    return driver.analyze(name or SOURCE_NAME, options, source=text)


def _source_text(x) -> str | None:
    if isinstance(x, os.PathLike):
        return None
    s = str(x)
    if "\n" in s or "{" in s:
        return s
    if Path(s).exists():
        return None
    if s.endswith((".c", ".h", ".i")) and not any(ch.isspace() for ch in s):
        raise FileNotFoundError(f"no such file: '{s}'")
    return s


def _options(params, defines, include_dirs, gpu, model, run_cpu, break_even, assume_no_alias) -> Options:
    """The options of `c2gpu analyze FILE --passes PORT --gpu GPU ...` (OptionsError, a ValueError, for a bad
    one); without a GPU, model, run_cpu and break_even mean nothing."""
    if gpu is None and params:
        raise OptionsError("params need a gpu: they are sizes for the prediction")
    if gpu is not None and model not in (None, "all", *MODELS):
        raise OptionsError(f"model '{model}': expected one of {', '.join(sorted(MODELS))}")
    return Options(defines=parse_defines(defines), include_dirs=tuple(str(d) for d in include_dirs),
                   pipeline=PORT.name, gpu=None if gpu is None else load_gpu_option(str(gpu)),
                   models=None if model in (None, "all") else (model,),
                   params=parse_params(f"{k}={v}" for k, v in (params or {}).items()),
                   assume_no_alias=assume_no_alias, run_cpu=run_cpu, break_even=break_even)
