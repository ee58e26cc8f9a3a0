"""nvcc: compile emitted CUDA and read ptxas's register, spill and shared-memory use per kernel.

When nvcc is not on PATH, `compile_cuda` returns None and callers say so and fall back.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import field
from pathlib import Path

from ..drivers import process
from ..records import dataclass

ARCH = "sm_80"

_FUNC = re.compile(r"Compiling entry function '(?P<name>[^']+)'")
_USED = re.compile(r"Used (?P<regs>\d+) registers(?:.*?(?P<smem>\d+) bytes smem)?")
_ERROR = re.compile(r"ptxas error\s*: Entry function '(?P<name>[^']+)'\s*(?P<why>.*)")
_SPILL = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads")


@dataclass
class PtxasKernel:
    name: str
    mangled: str = ""          # as ptxas names it (with namespaces): c2gpu.perf.registers.compile_batch reads it
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0
    reported: bool = False     # ptxas printed its "Used N registers" line
    error: str = ""            # ptxas refused this entry (e.g. "uses too much shared data ...")


@dataclass
class NvccResult:
    ok: bool
    command: list[str]
    stderr: str
    kernels: list[PtxasKernel] = field(default_factory=list)


def nvcc_path() -> str | None:
    return shutil.which("nvcc")


def parse_ptxas(text: str) -> list[PtxasKernel]:
    """One PtxasKernel per entry function, in ptxas's order; an entry ptxas refused carries the error (ptxas
    may print the error before it reports the entry's registers)."""
    by_name: dict[str, PtxasKernel] = {}
    current: PtxasKernel | None = None

    def entry(mangled: str) -> PtxasKernel:
        return by_name.setdefault(mangled, PtxasKernel(_demangle(mangled), mangled))
    for line in text.splitlines():
        m = _FUNC.search(line)
        if m:
            current = entry(m["name"])
            continue
        m = _ERROR.search(line)
        if m:
            entry(m["name"]).error = m["why"].strip() or "ptxas error"
            continue
        if current is None:
            continue
        m = _SPILL.search(line)
        if m:
            current.stack_bytes, current.spill_stores, current.spill_loads = int(m["stack"]), int(m["st"]), int(m["ld"])
        m = _USED.search(line)
        if m:
            current.registers, current.reported = int(m["regs"]), True
            current.shared_bytes = int(m["smem"] or 0)
    return list(by_name.values())


def scoped_name(mangled: str) -> list[str]:
    """The names of a mangled entry, outermost first: _Z18c2gpu_matmul_16_k0PKfS0_Pf -> [c2gpu_matmul_16_k0];
    in a namespace, _ZN13c2gpu_batch_018c2gpu_matmul_16_k0EPKfS1_Pf -> [c2gpu_batch_0, c2gpu_matmul_16_k0]
    (length-prefixed identifiers); a name that is not mangled is itself."""
    if not mangled.startswith("_Z"):
        return [mangled]
    nested = mangled.startswith("_ZN")
    parts, rest = [], mangled[3 if nested else 2:]
    while (n := re.match(r"\d+", rest)) is not None:
        k = int(n.group(0))
        parts.append(rest[n.end():n.end() + k])
        rest = rest[n.end() + k:]
        if not nested:
            break
    return parts or [mangled]


def _demangle(name: str) -> str:
    return scoped_name(name)[-1]


def compile_cuda(path: str, defines=(), include_dirs=(), arch: str = ARCH, timeout: float = 300.0,
                 extra=(), runtime_header: str | None = None) -> NvccResult | None:
    """nvcc `path` for `arch` with ptxas's report.  runtime_header: the text of a cuda_runtime.h to use
    instead of CUDA's own (c2gpu.perf.registers counts registers with a slim one)."""
    exe = nvcc_path()
    if exe is None:
        return None
    with tempfile.TemporaryDirectory(prefix="c2gpu_nvcc_") as tmp:
        # nvcc hands file names to its host compiler through a shell: a name with spaces, quotes or `$`
        # breaks there.  Compile a copy under a plain name, with the original directory (and any such
        # include directory) reached through plain-named links.
        source, dirs = os.path.abspath(path), [os.path.abspath(d) for d in include_dirs]
        if not _SAFE_NAME.fullmatch(source):
            source = str(Path(tmp) / "input.cu")
            shutil.copyfile(path, source)
            dirs.insert(0, str(Path(path).resolve().parent))
        dirs = [_plain_dir(d, tmp, k) for k, d in enumerate(dirs)]
        # nvcc makes the host preprocessor `-include "cuda_runtime.h"`, which looks in the working directory
        # first: run in the temporary one, so that a cuda_runtime.h in the user's never shadows CUDA's, and
        # a runtime_header is found there
        if runtime_header is not None:
            (Path(tmp) / "cuda_runtime.h").write_text(runtime_header, encoding="utf-8")
        cmd = [exe, f"-arch={arch}", "-c", source, "-o", str(Path(tmp) / "out.o"), "-Xptxas", "-v",
               *[f"-D{n}={v}" for n, v in defines], *[f"-I{d}" for d in dirs], *extra]
        r = process.run(cmd, timeout=timeout, cwd=tmp)
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
