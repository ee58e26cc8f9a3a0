"""nvcc: compile emitted CUDA and read ptxas's register, spill and shared-memory use per kernel.

When nvcc is not on PATH, `compile_cuda` returns None and callers say so and fall back.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import process

ARCH = "sm_80"

_FUNC = re.compile(r"Compiling entry function '(?P<name>[^']+)'")
_USED = re.compile(r"Used (?P<regs>\d+) registers(?:.*?(?P<smem>\d+) bytes smem)?")
_SPILL = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads")


@dataclass
class PtxasKernel:
    name: str
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0


@dataclass
class NvccResult:
    ok: bool
    command: list[str]
    stderr: str
    kernels: list[PtxasKernel] = field(default_factory=list)


def nvcc_path() -> str | None:
    return shutil.which("nvcc")


def parse_ptxas(text: str) -> list[PtxasKernel]:
    kernels: list[PtxasKernel] = []
    current: PtxasKernel | None = None
    for line in text.splitlines():
        m = _FUNC.search(line)
        if m:
            current = PtxasKernel(_demangle(m["name"]))
            kernels.append(current)
            continue
        if current is None:
            continue
        m = _SPILL.search(line)
        if m:
            current.stack_bytes, current.spill_stores, current.spill_loads = int(m["stack"]), int(m["st"]), int(m["ld"])
        m = _USED.search(line)
        if m:
            current.registers = int(m["regs"])
            current.shared_bytes = int(m["smem"] or 0)
    return kernels


def _demangle(name: str) -> str:
    """_Z20c2gpu_matmul_16_k0PKfS0_Pf -> c2gpu_matmul_16_k0 (the length-prefixed identifier)."""
    m = re.match(r"_Z(\d+)", name)
    if m:
        n = int(m.group(1))
        return name[m.end():m.end() + n]
    return name


def compile_cuda(path: str, defines=(), include_dirs=(), arch: str = ARCH, timeout: float = 300.0,
                 extra=()) -> NvccResult | None:
    exe = nvcc_path()
    if exe is None:
        return None
    with tempfile.TemporaryDirectory(prefix="c2gpu_nvcc_") as tmp:
        # nvcc hands file names to its host compiler through a shell: a name with spaces, quotes or `$`
        # breaks there.  Compile a copy under a plain name, with the original directory (and any such
        # include directory) reached through plain-named links.
        source, dirs = str(path), list(include_dirs)
        if not _SAFE_NAME.fullmatch(source):
            source = str(Path(tmp) / "input.cu")
            shutil.copyfile(path, source)
            dirs.insert(0, str(Path(path).resolve().parent))
        dirs = [_plain_dir(d, tmp, k) for k, d in enumerate(dirs)]
        cmd = [exe, f"-arch={arch}", "-c", source, "-o", str(Path(tmp) / "out.o"), "-Xptxas", "-v",
               *[f"-D{n}={v}" for n, v in defines], *[f"-I{d}" for d in dirs], *extra]
        r = process.run(cmd, timeout=timeout)
        if r.timed_out:
            return NvccResult(False, cmd, f"nvcc did not finish within {timeout:g} s")
    stderr = r.stderr_text.replace(source, str(path)) if source != str(path) else r.stderr_text
    return NvccResult(r.returncode == 0, cmd, stderr, parse_ptxas(stderr))


_SAFE_NAME = re.compile(r"[A-Za-z0-9_./+,=:@%-]+")


def _plain_dir(d: str, tmp: str, k: int) -> str:
    if _SAFE_NAME.fullmatch(d):
        return d
    link = Path(tmp) / f"include{k}"
    try:
        link.symlink_to(Path(d).resolve(), target_is_directory=True)
    except OSError:
        return d
    return str(link)
