"""Turn CUDA source into C++ that g++ compiles against ``cuda_emu.h``.

Two source rewrites are needed because g++ cannot parse them at all:

* ``k<<<grid, block[, shmem[, stream]]>>>(args)`` becomes
  ``c2gpu_launch(k, grid, block, shmem_or_0, args)`` (the stream is dropped:
  emulated launches are synchronous);
* ``extern __shared__ T name[];`` becomes a ``static thread_local`` pointer to
  the running block's dynamic shared memory buffer.

Only the compiled file itself is rewritten, not the headers it includes.
``#include <cuda_runtime.h>`` and friends resolve to empty stub headers that
compile_for_cpu() generates (the emulation header is force-included).
Rewrites never add or remove newlines, so line numbers in compiler messages
match the original ``.cu`` file.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

from ..drivers import process
from ..records import dataclass

__all__ = [
    "CompileResult",
    "CompilerNotFoundError",
    "compile_for_cpu",
    "header_path",
    "mask_comments_and_strings",
    "rewrite_launches",
    "rewrite_source",
]

HEADER_NAME = "cuda_emu.h"

# Headers that cuda_emu.h replaces (compile_for_cpu provides empty stubs).
_CUDA_HEADERS = (
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "cuda.h",
    "device_launch_parameters.h",
    "device_functions.h",
    "cuda_device_runtime_api.h",
)


class CompilerNotFoundError(RuntimeError):
    """The requested C++ compiler is not installed / not on PATH."""


@dataclass
class CompileResult:
    ok: bool
    returncode: int | None  # None when the compiler did not run to completion
    stdout: str
    stderr: str
    command: list[str]
    exe_path: Path
    cpp_source: str  # the rewritten source that was compiled


def header_path() -> Path:
    """Path of cuda_emu.h (a package data file next to this module)."""
    path = Path(__file__).resolve().parent / HEADER_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing; the package must ship c2gpu/emulate/{HEADER_NAME} as package data"
        )
    return path


# ---------------------------------------------------------------------------
# Lexing: find the parts of the source that are code
# ---------------------------------------------------------------------------

_STRING_PREFIXES = {"L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R"}
_IDENT_START = re.compile(r"[A-Za-z_]")
_IDENT = re.compile(r"[A-Za-z_0-9]*")
_RAW_DELIM = re.compile(r'([^()\\\s"]{0,16})\(')


def mask_comments_and_strings(src: str) -> str:
    """Return ``src`` with comments and string/char literals blanked out.

    The result has the same length and the same newlines, so offsets found in
    it are valid in ``src``.  Comment text becomes spaces; literal contents
    become spaces but the quotes are kept; backslash-newlines become
    whitespace.  Numbers with digit separators
    (``1'000``) and prefixed/raw literals (``u8"x"``, ``R"(...)"``) are handled.
    """
    out = list(src)
    n = len(src)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    i = 0
    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            j = i
            while j < n and src[j] != "\n":
                # a backslash-newline continues a // comment
                j += 2 if src[j] == "\\" and j + 1 < n and src[j + 1] == "\n" else 1
            blank(i, j)
            i = j
        elif c == "/" and src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif _IDENT_START.match(c):
            j = _IDENT.match(src, i + 1).end()
            word = src[i:j]
            if j < n and src[j] in "\"'" and word in _STRING_PREFIXES:
                i = _skip_literal(src, j, raw=word.endswith("R"), blank=blank)
            else:
                i = j
        elif c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            # pp-number: digits, letters, '.', digit separators, exponent signs
            j = i + 1
            while j < n:
                d = src[j]
                if d.isalnum() or d in "._":
                    j += 1
                elif d == "'" and j + 1 < n and src[j + 1].isalnum():
                    j += 1
                elif d in "+-" and src[j - 1] in "eEpP":
                    j += 1
                else:
                    break
            i = j
        elif c in "\"'":
            i = _skip_literal(src, i, raw=False, blank=blank)
        elif c == "\\" and src.startswith("\\\n", i):  # line splice = whitespace
            out[i] = " "
            i += 2
        else:
            i += 1
    return "".join(out)


def _skip_literal(src: str, i: int, raw: bool, blank) -> int:
    """Skip the literal whose opening quote is at ``i``; blank its contents."""
    n = len(src)
    quote = src[i]
    if raw and quote == '"':
        m = _RAW_DELIM.match(src, i + 1)
        if m:
            end = src.find(")" + m.group(1) + '"', m.end())
            end = n if end < 0 else end + len(m.group(1)) + 1
            blank(i + 1, end)
            return min(end + 1, n)
    j = i + 1
    while j < n and src[j] != quote and src[j] != "\n":
        j += 2 if src[j] == "\\" else 1
    blank(i + 1, j)
    return min(j + 1, n)


# ---------------------------------------------------------------------------
# Launch rewriting
# ---------------------------------------------------------------------------

_OPEN = "([{"
_CLOSE = ")]}"


def _split_top_level(text: str, masked: str) -> list[str]:
    """Split ``text`` at commas outside (), [] and {} (``masked`` is its
    comment/string-blanked twin)."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(masked):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return parts


def _kernel_name_start(masked: str, end: int) -> int:
    """Start of the kernel expression that ends right before ``end``
    (``name``, ``ns::name``, ``name<T, 4>``)."""
    i = end
    while i > 0 and masked[i - 1].isspace():
        i -= 1
    while True:
        if i > 0 and masked[i - 1] == ">":  # template argument list
            depth, i = 0, i - 1
            while i >= 0:
                if masked[i] in ">)]":
                    depth += 1
                elif masked[i] in "<([":
                    depth -= 1
                    if depth == 0:
                        break
                i -= 1
            if i < 0:
                raise ValueError("unbalanced template arguments before '<<<'")
            while i > 0 and masked[i - 1].isspace():
                i -= 1
        j = i
        while j > 0 and (masked[j - 1].isalnum() or masked[j - 1] == "_"):
            j -= 1
        if j == i:
            raise ValueError(f"no kernel name before '<<<' at offset {end}")
        i = j
        k = i
        while k > 0 and masked[k - 1].isspace():
            k -= 1
        if k >= 2 and masked[k - 2 : k] == "::":  # qualified name
            i = k - 2
            while i > 0 and masked[i - 1].isspace():
                i -= 1
            if i == 0 or not (masked[i - 1].isalnum() or masked[i - 1] in "_>"):
                return i  # leading ::name
            continue
        return i


def _matching(masked: str, i: int) -> int:
    """Index of the bracket closing the one at ``i``."""
    depth = 0
    for k in range(i, len(masked)):
        if masked[k] in _OPEN:
            depth += 1
        elif masked[k] in _CLOSE:
            depth -= 1
            if depth == 0:
                return k
    raise ValueError(f"unbalanced '{masked[i]}' at offset {i}")


def _config_end(masked: str, i: int) -> int:
    """Offset of the ``>>>`` that closes a launch configuration starting at i."""
    depth = 0
    k = i
    while k < len(masked):
        c = masked[k]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif depth == 0 and masked.startswith(">>>", k):
            return k
        k += 1
    raise ValueError(f"unterminated '<<<' launch configuration at offset {i}")


def _line_of(src: str, offset: int) -> int:
    return src.count("\n", 0, offset) + 1


def rewrite_launches(cuda_source: str) -> str:
    """Rewrite every ``k<<<g, b[, shmem[, stream]]>>>(args)`` into
    ``c2gpu_launch(k, g, b, shmem_or_0, args)``.

    Launch syntax inside comments and string literals is left alone.  The
    number of lines is preserved.  Raises ValueError on malformed launches.
    """
    src = cuda_source
    masked = mask_comments_and_strings(src)
    out: list[str] = []
    pos = 0  # src[:pos] has been emitted
    search = 0
    while True:
        lt = masked.find("<<<", search)
        if lt < 0:
            break
        try:
            name_start = _kernel_name_start(masked, lt)
            if name_start < pos:
                raise ValueError("overlapping launches")
            cfg_end = _config_end(masked, lt + 3)
            paren = cfg_end + 3
            while paren < len(masked) and masked[paren].isspace():
                paren += 1
            if paren >= len(masked) or masked[paren] != "(":
                raise ValueError("expected '(' after '>>>'")
            close = _matching(masked, paren)
        except ValueError as e:
            raise ValueError(f"line {_line_of(src, lt)}: cannot rewrite kernel launch: {e}") from None

        name_end = lt
        while masked[name_end - 1].isspace():
            name_end -= 1
        name = src[name_start:name_end]
        # Pieces keep their line breaks (incl. backslash-newlines inside
        # macros); only spaces and tabs around them are trimmed.
        cfg = _split_top_level(src[lt + 3 : cfg_end], masked[lt + 3 : cfg_end])
        if not 2 <= len(cfg) <= 4 or not all(p.strip() for p in cfg):
            raise ValueError(
                f"line {_line_of(src, lt)}: launch configuration needs 2 to 4 values, got {src[lt:cfg_end + 3]!r}"
            )
        grid, block = cfg[0].strip(" \t"), cfg[1].strip(" \t")
        shmem = cfg[2].strip(" \t") if len(cfg) >= 3 else "0"
        args = src[paren + 1 : close].strip(" \t")
        call = f"c2gpu_launch({name}, {grid}, {block}, {shmem}"
        call += f", {args})" if masked[paren + 1 : close].strip() else f"{args})"
        # Line breaks in the dropped text (gaps around <<< >>>, the stream)
        # go after the call, so later lines keep their numbers.
        dropped = src[name_end:lt] + (cfg[3] if len(cfg) == 4 else "") + src[cfg_end + 3 : paren]
        call += "".join(re.findall(r"\\\n|\n", dropped))
        out.append(src[pos:name_start])
        out.append(call)
        pos = search = close + 1
    out.append(src[pos:])
    return "".join(out)


# ``extern [volatile] __shared__ [__align__(16)] float tile[];``, matched on
# the masked source.
_EXTERN_SHARED = re.compile(
    r"\bextern\s+((?:(?:volatile|const|__shared__|__align__\s*\((?:[^()]|\([^()]*\))*\)|"
    r"__attribute__\s*\(\(.*?\)\))\s+)*)"
    r"([A-Za-z_][\w:<>,\s\*]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;"
)


def rewrite_extern_shared(cuda_source: str) -> str:
    """``extern __shared__ T name[];`` -> ``static thread_local T* const name
    = (T*)c2gpu::dynamic_shared_memory();`` (valid at namespace and block
    scope; the buffer is per worker thread = per running block)."""
    masked = mask_comments_and_strings(cuda_source)
    out, pos = [], 0
    for m in _EXTERN_SHARED.finditer(masked):
        quals = m.group(1)
        if "__shared__" not in quals:
            continue
        cv = " ".join(q for q in ("volatile", "const") if re.search(rf"\b{q}\b", quals))
        ty = " ".join(cuda_source[m.start(2) : m.end(2)].split())
        ty = f"{cv} {ty}".strip()
        name = m.group(3)
        repl = (
            f"static thread_local {ty}* const {name} = "
            f"reinterpret_cast<{ty}*>(c2gpu::dynamic_shared_memory());"
        )
        repl += "\n" * cuda_source.count("\n", m.start(), m.end())
        out.append(cuda_source[pos : m.start()])
        out.append(repl)
        pos = m.end()
    out.append(cuda_source[pos:])
    return "".join(out)


def rewrite_source(cuda_source: str) -> str:
    """All rewrites needed before compiling with cuda_emu.h."""
    return rewrite_launches(rewrite_extern_shared(cuda_source))


# ---------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------


def compile_for_cpu(
    cu_path: str | os.PathLike,
    exe_path: str | os.PathLike,
    extra_flags: Sequence[str] = (),
    cxx: str = "g++",
    timeout: float = 300.0,
) -> CompileResult:
    """Compile a CUDA program for the CPU against cuda_emu.h.

    The rewritten source goes to a temporary directory (``#line`` keeps
    diagnostics pointing at ``cu_path``; quoted includes still resolve
    relative to the .cu file), next to empty stand-ins for the CUDA headers.
    Raises CompilerNotFoundError if ``cxx`` is not installed; malformed
    launches, compile errors and timeouts give ``ok=False``.
    """
    cu_path = Path(cu_path).resolve()
    exe_path = Path(exe_path).resolve()
    compiler = shutil.which(cxx)
    if compiler is None:
        raise CompilerNotFoundError(
            f"C++ compiler {cxx!r} not found on PATH; install g++ (>= 10, C++20) to run emulated CUDA"
        )
    text = cu_path.read_text(encoding="utf-8", errors="surrogateescape")
    try:
        cpp = rewrite_source(text)
    except ValueError as e:
        return CompileResult(
            ok=False, returncode=None, stdout="", stderr=f"{cu_path}: {e}\n",
            command=[], exe_path=exe_path, cpp_source="",
        )
    line_marker = '#line 1 "' + str(cu_path).replace("\\", "\\\\").replace('"', '\\"') + '"\n'
    exe_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="c2gpu_emu_") as tmp:
        src = Path(tmp) / (cu_path.stem + ".cpp")
        src.write_text(line_marker + cpp, encoding="utf-8", errors="surrogateescape")
        stubs = Path(tmp) / "include"
        stubs.mkdir()
        for name in _CUDA_HEADERS:
            (stubs / name).write_text(f"#pragma once\n// c2gpu: everything is in {HEADER_NAME}\n")
        cmd = [
            compiler, "-std=c++20", "-O1", "-pthread",
            "-include", str(header_path()),
            "-iquote", str(cu_path.parent),
            "-I", str(stubs),
            str(src), "-o", str(exe_path),
            *extra_flags,
        ]
        r = process.run(cmd, timeout=timeout)
    stderr = r.stderr_text + (f"\ncompiler timed out after {timeout} s" if r.timed_out else "")
    return CompileResult(
        ok=r.returncode == 0, returncode=r.returncode, stdout=r.stdout_text,
        stderr=stderr, command=cmd, exe_path=exe_path, cpp_source=cpp,
    )
