"""Registers per thread: ptxas's count when nvcc is available, else seed 004 Algorithm 6.4.

ptxas: the kernel text codegen emits (with the prelude's includes) is compiled
with c2gpu.nvcc.compile_cuda for the GPU's architecture (the nearest one this
nvcc supports when it dropped the GPU's own, e.g. Fermi or Kepler), and the
"Used N registers" line is read.  Results are cached by (architecture, kernel
text) in memory and on disk (``$C2GPU_CACHE_DIR`` or ``$XDG_CACHE_HOME/c2gpu``,
default ``~/.cache/c2gpu``), so a kernel is compiled once.

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
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import process
from ..algorithms.spills import belady_min, from_three_address
from ..gpu import GPU
from .dfg import TAC

PRELUDE = "#include <math.h>\n#include <limits.h>\n#include <float.h>\n"


@dataclass(frozen=True)
class Registers:
    count: int                 # registers per thread used for occupancy
    spill_stores: int          # bytes (ptxas) or values (estimate)
    spill_loads: int
    source: str                # "ptxas (sm_80)" or "estimate (Belady, Alg. 6.4)"
    arch: str | None = None

    @property
    def measured(self) -> bool:
        return self.source.startswith("ptxas")


_memory_cache: dict[tuple[str, str], tuple[int, int, int] | None] = {}


@lru_cache(maxsize=1)
def supported_archs() -> tuple[int, ...]:
    """Compute capabilities (as 75, 80, ...) this nvcc can compile for; () without nvcc."""
    from ..nvcc import nvcc_path
    exe = nvcc_path()
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


def ptxas_registers(kernel_text: str, kernel_name: str, arch: str) -> tuple[int, int, int] | None:
    """(registers, spill store bytes, spill load bytes) of one kernel, or None when it did not compile."""
    key = (arch, kernel_text)
    if key in _memory_cache:
        return _memory_cache[key]
    digest = hashlib.sha256(f"{arch}\0{kernel_name}\0{kernel_text}".encode()).hexdigest()
    from ..cache import cache_dir
    cdir = cache_dir()
    cfile = cdir / "ptxas" / f"{digest}.json" if cdir is not None else None
    if cfile is not None and cfile.is_file():
        try:
            data = json.loads(cfile.read_text())
            val = None if data is None else tuple(data)
            _memory_cache[key] = val
            return val
        except (OSError, ValueError):
            pass
    from ..nvcc import compile_cuda
    with tempfile.TemporaryDirectory(prefix="c2gpu_regs_") as tmp:
        src = Path(tmp) / "kernel.cu"
        src.write_text(PRELUDE + kernel_text, encoding="utf-8")
        res = compile_cuda(str(src), arch=arch, timeout=120.0, extra=("-cubin",))
    val = None
    if res is not None and res.ok:
        for k in res.kernels:
            if k.name == kernel_name or len(res.kernels) == 1:
                val = (k.registers, k.spill_stores, k.spill_loads)
                break
    _memory_cache[key] = val
    if cfile is not None and res is not None:
        try:
            cfile.parent.mkdir(parents=True, exist_ok=True)
            tmpf = cfile.with_suffix(f".{os.getpid()}.tmp")
            tmpf.write_text(json.dumps(val))
            tmpf.replace(cfile)
        except OSError:
            pass
    return val


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
