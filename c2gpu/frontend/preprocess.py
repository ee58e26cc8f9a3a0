"""Run the system C preprocessor like a compiler would, with c2gpu's own libc headers.

pycparser understands plain C99 only, and glibc's headers are full of GNU
extensions, so we preprocess with `-nostdinc` against the small headers in
`c2gpu/include/` (declarations only: real builds still use the system headers).
The preprocessor's line markers (`# 12 "file.c"`) carry the original file and
line into pycparser's coordinates, which is our map from preprocessed text back
to the user's source.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import field
from pathlib import Path

from ..drivers import process
from ..diagnostics import C2GPUError
from ..ir import Loc
from ..records import dataclass

INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"

# GNU spellings that may appear in user code; mapped to what pycparser parses.
GNU_COMPAT = (
    "__attribute__(x)=", "__restrict=restrict", "__restrict__=restrict", "__inline=inline",
    "__inline__=inline", "__extension__=", "__asm__(x)=", "__volatile__=volatile",
    "__const=const", "__signed__=signed",
)


@dataclass(frozen=True)
class PreprocessOptions:
    """How to run the C preprocessor on a file: macros (-D), include directories (-I) and the command."""
    defines: tuple[tuple[str, str], ...] = ()     # -D NAME=VALUE
    include_dirs: tuple[str, ...] = ()            # -I DIR
    cpp: str | None = None                         # preprocessor command; found on PATH when None
    extra_args: tuple[str, ...] = field(default=())
    program_files: tuple[str, ...] = ()            # the program's other C files (--extra-source): the analysis
    #                                                reads their functions where the file calls them

    def define_map(self) -> dict[str, str]:
        return dict(self.defines)


def parse_define(text: str) -> tuple[str, str]:
    """'N=64' -> ('N', '64'); 'DEBUG' -> ('DEBUG', '1') as a compiler does."""
    name, _, value = text.partition("=")
    name = name.strip()
    if not name or not (name[0].isalpha() or name[0] == "_") or not all(c.isalnum() or c == "_" for c in name.split("(")[0]):
        raise C2GPUError(f"invalid -D definition '{text}': expected NAME or NAME=VALUE")
    return name, (value if "=" in text else "1")


def find_preprocessor(preferred: str | None = None) -> list[str]:
    if preferred:
        exe = shutil.which(preferred.split()[0])
        if not exe:
            raise C2GPUError(f"C preprocessor '{preferred}' not found on PATH")
        return [exe, *preferred.split()[1:]]
    for cand in (("cpp",), ("cc", "-E"), ("gcc", "-E"), ("clang", "-E")):
        exe = shutil.which(cand[0])
        if exe:
            return [exe, *cand[1:]]
    raise C2GPUError("no C preprocessor found (looked for cpp, cc, gcc, clang): install one or pass --cpp")


def preprocess(path: str, options: PreprocessOptions, source: str | None = None) -> str:
    """Return the preprocessed text of `path` (or of `source`, reported as `path`)."""
    text, _ = _preprocess(path, options, source, recover=None)
    return text


def preprocess_recovering(path: str, options: PreprocessOptions,
                          source: str | None = None) -> tuple[str, list[C2GPUError]]:
    """Like preprocess, but go on after errors a compiler would also go on after, and after missing headers.

    Non-fatal errors (`#error`, an unterminated comment or `#if`) keep the
    preprocessor's output; a missing `#include` is replaced by an empty header
    (in a private temporary directory, removed afterwards) and preprocessing runs
    again, so the rest of the file is still analysed.  Returns (text, the errors).
    Raises when nothing usable comes out.
    """
    return _preprocess(path, options, source, recover="all")


def preprocess_missing_headers(path: str, options: PreprocessOptions,
                               source: str | None = None) -> tuple[str, list[tuple[str, C2GPUError]]]:
    """Like preprocess, but a missing `#include` is replaced by an empty header (as preprocess_recovering does);
    every other error still raises.  Returns (text, (header name, error at its #include) per missing header).
    For `port`: the emitted file keeps the user's `#include` lines, and the compiler that builds it will have
    the real headers."""
    text, errors = _preprocess(path, options, source, recover="headers")
    return text, [(m["name"], e) for e in errors if (m := _MISSING.match(e.message))]


MAX_SOURCE_BYTES = 64 << 20   # a C file larger than this is generated data, not code to analyse
_MISSING = re.compile(r"^(?P<name>[^:]+): No such file or directory$")
MAX_STUB_HEADERS = 32


def _preprocess(path: str, options: PreprocessOptions, source: str | None,
                recover: str | None) -> tuple[str, list[C2GPUError]]:
    """recover: None (the first error raises), "headers" (go on past missing headers only) or "all"."""
    if source is None:
        p = Path(path)
        if p.is_dir():
            raise C2GPUError(f"'{path}' is a directory, not a C file")
        if not p.exists():
            raise C2GPUError(f"no such file: '{path}'")
        if not os.access(p, os.R_OK):
            raise C2GPUError(f"cannot read '{path}': permission denied")
        if not p.is_file():   # /dev/zero, a FIFO: reading would never end
            raise C2GPUError(f"'{path}' is not a regular file")
        if p.stat().st_size > MAX_SOURCE_BYTES:
            raise C2GPUError(f"'{path}' is {p.stat().st_size} bytes: larger than the {MAX_SOURCE_BYTES >> 20} MiB "
                             "c2gpu reads")
    cmd = find_preprocessor(options.cpp)
    cmd += ["-nostdinc", "-undef", "-D__C2GPU__=1", "-I", str(INCLUDE_DIR)]
    for d in GNU_COMPAT:
        cmd += ["-D", d]
    for inc in options.include_dirs:
        cmd += ["-I", inc]
    if source is None:
        # the file's own directory comes first for "quoted" includes, as with cc
        cmd += ["-iquote", str(Path(path).resolve().parent)]
    for name, value in options.defines:
        cmd += ["-D", f"{name}={value}"]
    cmd += list(options.extra_args)
    # read the bytes ourselves so non-UTF-8 comments or strings never stop us
    try:
        data = (source.encode("utf-8", "surrogateescape") if source is not None else Path(path).read_bytes())
    except OSError as e:
        raise C2GPUError(f"cannot read '{path}': {e.strerror or e}") from None
    if b"\0" in data[:4096]:
        raise C2GPUError("file looks binary (contains NUL bytes), not C source", Loc(path, 1, 1))
    errors: list[C2GPUError] = []
    stub_dir: str | None = None
    try:
        while True:
            run = cmd + (["-idirafter", stub_dir] if stub_dir else []) + ["-x", "c", "-"]
            proc = _run_cpp(run, data, path)
            stderr = proc.stderr.decode("utf-8", "replace")
            if proc.returncode == 0:
                break
            if not recover:
                raise _cpp_error(stderr, path)
            found = _cpp_errors(stderr, path)
            missing = [(e, m["name"]) for e in found if (m := _MISSING.match(e.message))]
            if missing and len(errors) < MAX_STUB_HEADERS:
                err, name = missing[0]
                if stub_dir is None:
                    stub_dir = tempfile.mkdtemp(prefix="c2gpu_stubs_")
                if not _make_stub(stub_dir, name):
                    raise err
                errors.append(err)
                continue
            if recover == "headers" or not found or not proc.stdout.strip():
                raise _cpp_error(stderr, path)
            errors.extend(found)   # non-fatal: the output is complete
            break
    finally:
        if stub_dir is not None:
            shutil.rmtree(stub_dir, ignore_errors=True)
    text = proc.stdout.decode("utf-8", "replace")
    # cpp names stdin "<stdin>": give the user's file name back to the line markers
    return text.replace('"<stdin>"', _quote(path)), errors


MAX_OUTPUT_BYTES = 512 << 20   # preprocessed text: past this a macro expands without bound (a "macro bomb")
CPP_TIMEOUT = 60.0
CPP_MEMORY_BYTES = 2 << 30     # address space for the preprocessor (and cc1): a macro bomb fails instead of eating RAM


def _run_cpp(cmd: list[str], data: bytes, path: str) -> process.Completed:
    """Run the preprocessor with bounds on its time, its memory and its output (a runaway expansion is
    stopped at MAX_OUTPUT_BYTES instead of filling our memory)."""
    r = process.run(cmd, timeout=CPP_TIMEOUT, input=data, max_output=MAX_OUTPUT_BYTES,
                    memory_limit=CPP_MEMORY_BYTES)
    if r.output_exceeded:
        raise C2GPUError(f"the preprocessed text of '{path}' exceeds {MAX_OUTPUT_BYTES >> 20} MiB "
                         "(a macro that expands without bound?)")
    if r.timed_out:
        raise C2GPUError(f"the preprocessor took longer than {CPP_TIMEOUT:g} s on '{path}'")
    return r


def _make_stub(stub_dir: str, name: str) -> bool:
    """An empty header for a missing `#include` (only plain relative names: nothing outside stub_dir)."""
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        return False
    target = Path(stub_dir, rel)
    if target.exists():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"/* c2gpu: stand-in for the missing header {name} */\n")
    return True


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


_CPP_DIAG = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: (?P<msg>.*)$")


def _cpp_errors(stderr: str, path: str) -> list[C2GPUError]:
    out = []
    for line in stderr.replace("<stdin>", path).splitlines():
        m = _CPP_DIAG.match(line)
        if m:
            out.append(C2GPUError(m["msg"], Loc(m["file"], int(m["line"]), int(m["col"] or 0))))
    return out


def _cpp_error(stderr: str, path: str) -> C2GPUError:
    found = _cpp_errors(stderr, path)
    if found:
        return found[0]
    return C2GPUError(stderr.strip().replace("<stdin>", path) or "preprocessing failed")
