"""Registers per thread: ptxas's count when nvcc is available, else seed 004 Algorithm 6.4.

ptxas: the kernel text codegen emits (with the prelude's includes) is compiled
with c2gpu.codegen.nvcc.compile_cuda for the GPU's architecture (the nearest one this
nvcc supports when it dropped the GPU's own, e.g. Fermi or Kepler), and the
"Used N registers" line is read.  Results are cached by (architecture, kernel
text) in memory and on disk (``$C2GPU_CACHE_DIR`` or ``$XDG_CACHE_HOME/c2gpu``,
default ``~/.cache/c2gpu``), so a kernel is compiled once.

One nvcc call for a whole file (`run_with_one_nvcc_call`): an nvcc call costs some 0.1 s of CPU whatever its
size (0.4 s when the host preprocessor and cicc read CUDA's 1.3 MB runtime header: see SLIM_RUNTIME_HEADER),
so compiling a file's kernels one call each cost more than the whole analysis.  The pipeline runs once with the misses collected (answered by
the estimate), they are compiled in one translation unit (each kernel text in a namespace of its own, as
texts of different candidates share kernel names), and the pipeline runs again with every count cached.

Estimate (no nvcc): Belady's MIN (Alg. 6.4) over the three-address code of the
kernel body gives the register pressure of the values (max_live) and the
spills with k = the GPU's registers-per-thread limit; ptxas also keeps
addresses and indices in registers, which the estimate adds as a fixed part:
2 per pointer parameter (64-bit addresses), 1 per scalar parameter, 2 per
mapped dimension (thread index and its bound), 2 per in-thread loop (counter
and bound) and 4 for the block/thread indices and the stack pointer.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import field
from functools import lru_cache
from pathlib import Path

from ..codegen import nvcc
from ..drivers import process
from ..drivers.cache import cache_dir
from ..algorithms.spills import belady_min, from_three_address
from ..model.gpu import GPU
from ..pipeline import at_work
from .dfg import TAC
from ..records import dataclass

PRELUDE = "#include <math.h>\n#include <limits.h>\n#include <float.h>\n"
# Most kernels need only the built-in variables, __syncthreads and the atomics of CUDA's runtime header: with
# this slim cuda_runtime.h (CUDA's own headers for those, nothing else) and no <math.h>, nvcc reads some 20 kB
# of headers instead of 1.3 MB, and the call costs about half (0.3 s against 0.6 s of CPU for matmul.c's 10
# candidate kernels) for the same machine code (tests/test_registers.py compares the counts).  The atomics'
# headers include the host API's cuda_runtime_api.h (with <stdlib.h>: 200 kB more for cicc to read, 0.05 s)
# and use nothing of it: its include guard is set around them.  A kernel that uses anything else (a math
# function, INFINITY) does not compile against it: the unit is then compiled with CUDA's own header and
# PRELUDE, as the emitted .cu file is.
SLIM_PRELUDE = "#include <limits.h>\n#include <float.h>\n"
SLIM_RUNTIME_HEADER = """\
#pragma once
#define __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__
#define __CUDA_RUNTIME_API_H__
#include "crt/host_defines.h"
#include "vector_types.h"
#include "device_launch_parameters.h"
extern "C" __device__ __cudart_builtin__ __device_builtin__ void __syncthreads(void);
#include "device_atomic_functions.h"
#include "sm_20_atomic_functions.h"
#include "sm_60_atomic_functions.h"
#undef __CUDA_RUNTIME_API_H__
#undef __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__
"""


@dataclass(frozen=True)
class Registers:
    """The registers per thread of a kernel and its spills: ptxas's count, or the estimate without nvcc."""
    count: int                 # registers per thread used for occupancy
    spill_stores: int          # bytes (ptxas) or values (estimate)
    spill_loads: int
    source: str                # "ptxas (sm_80)" or "estimate (Belady, Alg. 6.4)"
    arch: str | None = None

    @property
    def measured(self) -> bool:
        return self.source.startswith("ptxas")


# ptxas's counts by (arch, kernel text): the memory layer of the on-disk cache (_cache_file), a fact about the
# text that holds in any run, not a result of analysing some IR
_memory_cache: dict[tuple[str, str], tuple[int, int, int] | None] = {}


@lru_cache(maxsize=1)
def supported_archs() -> tuple[int, ...]:
    """Compute capabilities (as 75, 80, ...) this nvcc can compile for; () without nvcc."""
    exe = nvcc.nvcc_path()
    if exe is None:
        return ()
    try:
        r = process.run([exe, "--list-gpu-arch"], timeout=60)
    except OSError:
        return ()
    out = "" if r.timed_out else r.stdout_text
    return tuple(sorted({int(m) for m in re.findall(r"compute_(\d+)", out)}))


def arch_for(gpu: GPU) -> str | None:
    """sm_XY for the GPU, or the nearest architecture this nvcc supports; None without nvcc."""
    archs = supported_archs()
    if not archs:
        return None
    want = gpu.cc[0] * 10 + gpu.cc[1]
    if want in archs:
        return f"sm_{want}"
    lower = [a for a in archs if a <= want]
    return f"sm_{max(lower) if lower else min(archs)}"


@dataclass
class _Batch:
    """What a collecting run (run_with_one_nvcc_call) gathers for one nvcc call, kept by its pass manager."""
    misses: dict[tuple[str, str, str], None] = field(default_factory=dict)  # (arch, kernel name, kernel text)
    stale: list = field(default_factory=list)   # the analyses that read a count it missed (as `running` names them)


def _batch() -> _Batch | None:
    """The batch the pass manager at work collects, or None when no collecting run is at work."""
    manager = at_work()
    return None if manager is None else manager.memo_table(manager, "registers").get("batch")


def _missed(batch: _Batch, key: tuple[str, str, str]) -> None:
    batch.misses[key] = None
    batch.stale.append(at_work().running())


def _cache_file(arch: str, kernel_name: str, kernel_text: str) -> Path | None:
    cdir = cache_dir()
    digest = hashlib.sha256(f"{arch}\0{kernel_name}\0{kernel_text}".encode()).hexdigest()
    return cdir / "ptxas" / f"{digest}.json" if cdir is not None else None


def _cached(arch: str, kernel_name: str, kernel_text: str) -> tuple[bool, tuple[int, int, int] | None]:
    """(found, value) from the memory cache, else the disk cache."""
    key = (arch, kernel_text)
    if key in _memory_cache:
        return True, _memory_cache[key]
    cfile = _cache_file(arch, kernel_name, kernel_text)
    if cfile is not None and cfile.is_file():
        try:
            data = json.loads(cfile.read_text())
        except (OSError, ValueError):
            return False, None
        _memory_cache[key] = None if data is None else tuple(data)
        return True, _memory_cache[key]
    return False, None


def _remember(arch: str, kernel_name: str, kernel_text: str, val: tuple[int, int, int] | None) -> None:
    _memory_cache[(arch, kernel_text)] = val
    cfile = _cache_file(arch, kernel_name, kernel_text)
    if cfile is None:
        return
    try:
        cfile.parent.mkdir(parents=True, exist_ok=True)
        tmpf = cfile.with_suffix(f".{os.getpid()}.tmp")
        tmpf.write_text(json.dumps(val))
        tmpf.replace(cfile)
    except OSError:
        pass


def _counts(k) -> tuple[int, int, int]:
    return k.registers, k.spill_stores, k.spill_loads


def collecting() -> bool:
    """Whether this run only collects the kernels to compile (run_with_one_nvcc_call's first run)."""
    return _batch() is not None


def request(arch: str, kernel_name: str, kernel_text: str) -> bool:
    """Ask for a kernel's counts ahead of the analysis that reads them; True when it was not cached and is now
    collected for the batch."""
    batch = _batch()
    if batch is None or _cached(arch, kernel_name, kernel_text)[0]:
        return False
    _missed(batch, (arch, kernel_name, kernel_text))
    return True


def ptxas_registers(kernel_text: str, kernel_name: str, arch: str) -> tuple[int, int, int] | None:
    """(registers, spill store bytes, spill load bytes) of one kernel, or None when it did not compile (or, while
    a batch is collected, is not cached yet)."""
    found, val = _cached(arch, kernel_name, kernel_text)
    if found:
        return val
    batch = _batch()
    if batch is not None:
        _missed(batch, (arch, kernel_name, kernel_text))
        return None
    res = _compile_kernels(kernel_text, arch, timeout=120.0)
    if res is None:
        return None
    val = None
    if res.ok:
        for k in res.kernels:
            if k.name == kernel_name or len(res.kernels) == 1:
                val = _counts(k)
                break
    _remember(arch, kernel_name, kernel_text, val)
    return val


_BATCH = re.compile(r"c2gpu_batch_(\d+)")


def compile_batch(requests) -> int:
    """Compile the (arch, kernel name, kernel text) requests in one nvcc call per architecture and cache their
    counts; returns how many were cached.  ptxas compiles each entry on its own, so when it refuses one (too
    much shared memory for one candidate) the others' counts stand and the refused one gets None, as it does
    compiled alone.  A front-end error caches nothing: each kernel is then compiled alone when it is asked for."""
    done = 0
    by_arch: dict[str, list[tuple[str, str]]] = {}
    for arch, name, text in requests:
        by_arch.setdefault(arch, []).append((name, text))
    for arch, items in by_arch.items():
        unit = "".join(f"namespace c2gpu_batch_{i} {{\n{text}\n}}\n" for i, (_, text) in enumerate(items))
        res = _compile_kernels(unit, arch, timeout=120.0 + 10.0 * len(items))
        if res is None or not (res.ok or _only_entry_errors(res)):
            continue
        found: dict[int, tuple[int, int, int] | None] = {}
        for k in res.kernels:
            scope = nvcc.scoped_name(k.mangled)
            m = _BATCH.fullmatch(scope[0]) if len(scope) == 2 else None
            if m is None or int(m.group(1)) >= len(items) or k.name != items[int(m.group(1))][0]:
                continue
            if k.error:
                found[int(m.group(1))] = None
            elif k.reported:
                found[int(m.group(1))] = _counts(k)
        for i, (name, text) in enumerate(items):
            if i in found:
                _remember(arch, name, text, found[i])
                done += 1
    return done


def _compile_kernels(kernels: str, arch: str, timeout: float, slim: bool = True):
    """nvcc's result for the kernel text `kernels` (a cubin, ptxas verbose), against the slim runtime header
    when they compile with it, else against CUDA's own; None without nvcc."""
    with tempfile.TemporaryDirectory(prefix="c2gpu_regs_") as tmp:
        src = Path(tmp) / "kernels.cu"
        if slim:
            src.write_text(SLIM_PRELUDE + kernels, encoding="utf-8")
            res = nvcc.compile_cuda(str(src), arch=arch, timeout=timeout, extra=("-cubin",),
                               runtime_header=SLIM_RUNTIME_HEADER)
            if res is None or res.ok or _only_entry_errors(res):
                return res
        src.write_text(PRELUDE + kernels, encoding="utf-8")
        return nvcc.compile_cuda(str(src), arch=arch, timeout=timeout, extra=("-cubin",))


def _only_entry_errors(res) -> bool:
    """Whether every error nvcc printed is ptxas refusing an entry (so the other entries compiled as they
    would alone), not an error of the front end."""
    return all("ptxas error" in line and "Entry function" in line
               for line in res.stderr.splitlines() if "error" in line.lower() and "warning" not in line.lower())


def run_with_one_nvcc_call(manager, program, rounds: int = 3):
    """`manager.run(program)` with ptxas's counts of the kernels it compiles taken from one nvcc call (see the
    module doc): when a run asked for counts that were not cached, they are compiled together and the pipeline
    runs again: the analyses that read a missing count, and what was computed from them, are computed again
    (PassManager.recompute); the rest of the first run stands (normalized nests, dependences, mappings, the
    rules' kernels: computed twice, they were 0.04 s of matmul.c's 1 s).  The performance pass asks for the
    kernels of the rules' structure first (`request`) and stops the nest there when one was missing, so a
    collecting run costs little more than building them.  Another structure's kernels, when the counts show that it may be faster, and the kernels
    of a decision the counts change (a structure, a tile budget) are collected by the next run: up to `rounds`
    batches; the last run compiles what is still missing one kernel at a time."""
    state = manager.memo_table(manager, "registers")
    if state.get("batch") is not None:          # already inside a collecting run
        return manager.run(program)
    for _ in range(rounds):
        state["batch"] = batch = _Batch()
        try:
            result = manager.run(program)
        finally:
            state["batch"] = None
        misses, stale = list(batch.misses), batch.stale
        if not misses:
            return result
        with manager.phase("registers (nvcc, one call)"):
            compile_batch(misses)
        manager.recompute(stale)
    return manager.run(program)


def estimate_registers(tac: TAC, pointer_params: int, scalar_params: int, mapped_dims: int,
                       inner_loops: int, limit: int) -> Registers:
    """Alg. 6.4 on the body's three-address code plus the fixed part described in the module doc."""
    steps = from_three_address(tac.instrs)
    live_out = set(tac.scalar_outs or ())     # the scalars' final values outlive the body
    fixed = 2 * pointer_params + scalar_params + 2 * mapped_dims + 2 * inner_loops + 4
    k = max(4, limit - fixed)
    widest = max((len(set(u)) for _d, u in steps), default=0)
    if steps and widest <= k:
        r = belady_min(steps, k, live_out)
        pressure, spills, reloads = r.max_live, r.spills, r.reloads
    else:
        pressure, spills, reloads = 0, 0, 0
    count = min(limit, fixed + min(pressure, k))
    return Registers(count, spills, reloads, "estimate (Belady MIN, seed 004 Alg. 6.4)")
