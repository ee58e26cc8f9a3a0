"""The user's file with ported nests replaced by calls to their wrappers (`render_port`), or split into a
.cu file and the C file calling it (`render_split`), or the kernels alone (`emit_kernels`).

Everything outside the ported nests stays exactly as the user wrote it: the file is spliced by source
coordinates, never regenerated.  `#line` directives keep compiler messages pointing at the user's own lines.
Nests that cannot be ported stay as they were, preceded by a comment that says why.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from .. import __version__
from ..drivers import process
from ..ir import Program
from ..frontend.source import SpanError, for_span
from .precompiled import templates


def splice(path: str, source: str, outcomes: list[NestOutcome], after_nest=None, line_file: str | None = None):
    """The user's text with ported nests replaced by calls and refused ones annotated.

    after_nest(outcome) may return extra C text to put right after the nest (or its call): used by verify
    to dump outputs at the same point in the original and in the port.
    Returns (text, list of (outcome, SpanError) for nests whose text could not be located).
    """
    edits = []   # (start, end, replacement)
    failures = []
    for o in outcomes:
        if o.nest.loc.file != path:
            continue
        try:
            start, end = for_span(source, o.nest.loc.line, o.nest.loc.col)
        except SpanError as e:
            failures.append((o, e))
            continue
        extra = after_nest(o) if after_nest and o.ported and o.code is not None else ""
        if o.ported and o.code is not None:
            repl = "{ " + o.code.call + (" " + extra if extra else "") + " }"
            repl += f" /* c2gpu: ported nest {o.nest.name} to the GPU */"
            edits.append((start, end, repl))
        else:
            reason = o.reason.replace("*/", "* /")
            if extra:
                edits.append((end, end, " " + extra))
            edits.append((start, start, f"/* c2gpu: not portable: {reason} */ "))
    edits.sort(key=lambda e: (e[0], e[1]))
    out = []
    pos = 0
    q = line_file or path
    for start, end, repl in edits:
        out.append(source[pos:start])
        out.append(repl)
        if end > start:
            # keep the rest of the last line, then resynchronise line numbers
            nl = source.find("\n", end)
            nl = len(source) if nl < 0 else nl + 1
            out.append(source[end:nl])
            line_after = source.count("\n", 0, nl) + 1
            out.append(f'#line {line_after} "{escape_c_string(q)}"\n')
            pos = nl
        else:
            pos = start
    out.append(source[pos:])
    return "".join(out), failures


def escape_c_string(p: str) -> str:
    return p.replace("\\", "\\\\").replace('"', '\\"')


CXX_CHECK_SECONDS = 30.0
_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<message>.*)$", re.M)


def host_not_cxx(program: Program, path: str, options) -> list[str]:
    """Why the user's C cannot be compiled as C++ in one .cu file with the kernels ([] when it can): the
    constructs the frontend found (Program.c_only: frontend/cxx.py), else what a C++ compiler on PATH says of the file compiled as
    C++17 (nvcc's dialect) with the port's own shims (`restrict`, malloc's void *), syntax only.  C++ rejects
    more of C than any list holds (a call before its declaration, a `void *` from a struct field, `int f();`
    called with arguments, a jump over an initialization); a header the compiler cannot find says nothing
    either way.  Without a C++ compiler, only the known constructs are checked."""
    if program.c_only:
        return list(program.c_only)
    cxx = next((c for c in ("g++", "clang++", "c++") if shutil.which(c)), None)
    if cxx is None or not Path(path).is_file():
        return []
    shims = templates().get_template("prelude.cu.j2").render(version=__version__, source=path, output="",
                                                              summary="", cxx_compat=True, atomics=False, prototypes=[])
    with tempfile.TemporaryDirectory(prefix="c2gpu_cxx_") as tmp:
        prelude = Path(tmp) / "prelude.h"
        prelude.write_text(shims)
        argv = [shutil.which(cxx), "-x", "c++", "-std=c++17", "-fsyntax-only", "-w", "-include", str(prelude),
                *[f"-D{n}={v}" for n, v in options.defines], *[f"-I{d}" for d in options.include_dirs], path]
        try:
            r = process.run(argv, timeout=CXX_CHECK_SECONDS, env=process.user_environment(LC_ALL="C"))
        except OSError:
            return []
    if r.returncode != 0 and r.returncode is not None:
        errors = list(_ERROR.finditer(r.stderr_text))
        if errors and not any("No such file or directory" in e["message"] for e in errors):
            e = errors[0]
            return [f"{cxx} rejects it as C++ ({e['file']}:{e['line']}: {e['message'].strip()})"]
    return []


def render_split(path: str, source: str, outcomes: list[NestOutcome], cu_name: str, host_name: str,
                 after_nest=None, prefix: str = "") -> tuple[str, str]:
    """(kernels and extern "C" wrappers for nvcc, the user's C file calling them for cc)."""
    spliced, failures = splice(path, source, outcomes, after_nest)
    for o, e in failures:
        o.ported, o.reason = False, f"cannot locate the nest in the source text: {e}"
    if failures:
        spliced, _ = splice(path, source, outcomes, after_nest)
    ported = [o for o in outcomes if o.ported]
    atomics = any(r["helper"] for o in ported for k in o.code.kernels for r in k.reductions)
    cu = templates().get_template("prelude.cu.j2").render(
        version=__version__, source=path, output=cu_name, summary=f"kernels and host wrappers for {host_name}",
        cxx_compat=False, atomics=atomics, prototypes=[])
    cu += "\n".join(o.code.wrapper_with('extern "C"') for o in ported)
    protos = "".join(o.code.prototype("") + ";\n" for o in ported)
    host = (prefix + f"/* Generated by c2gpu {__version__} from {path}: the nests marked below call the CUDA "
            f"wrappers in {cu_name}. */\n" + protos + f'#line 1 "{escape_c_string(path)}"\n' + spliced)
    return cu, host


def render_port(path: str, source: str, outcomes: list[NestOutcome], output_name: str, after_nest=None,
                prefix: str = "") -> str:
    ported = [o for o in outcomes if o.ported]
    spliced, failures = splice(path, source, outcomes, after_nest)
    for o, e in failures:
        o.ported = False
        o.reason = f"cannot locate the nest in the source text: {e}"
    if failures:  # redo without the nests we could not find
        spliced, _ = splice(path, source, outcomes, after_nest)
        ported = [o for o in outcomes if o.ported]
    atomics = any(r["helper"] for o in ported for k in o.code.kernels for r in k.reductions)
    summary = (f"{len(ported)} of {len(outcomes)} loop nests ported" if outcomes else "no loop nests found")
    head = prefix + templates().get_template("prelude.cu.j2").render(
        version=__version__, source=path, output=output_name, summary=summary, cxx_compat=True, atomics=atomics,
        prototypes=[o.code.prototype() for o in ported])
    body = f'#line 1 "{escape_c_string(path)}"\n' + spliced
    if not body.endswith("\n"):
        body += "\n"
    before = head + body + "\n"
    directive_line = before.count("\n") + 1
    return before + f'#line {directive_line + 1} "{escape_c_string(output_name)}"\n' + "\n".join(o.code.wrapper for o in ported)


def emit_kernels(outcomes: list[NestOutcome], path: str, output_name: str = "kernels.cu",
                 header_name: str | None = None) -> str:
    """Just the kernels and their wrappers (c2gpu emit), the wrappers `extern "C"` so that C code links with
    them. With `header_name` (written by `emit_header`) the .cu includes it, so nvcc checks that the
    prototypes C code sees are the definitions."""
    ported = [o for o in outcomes if o.ported]
    atomics = any(r["helper"] for o in ported for k in o.code.kernels for r in k.reductions)
    head = templates().get_template("prelude.cu.j2").render(
        version=__version__, source=path, output=output_name,
        summary=f"kernels and host wrappers of {len(ported)} nests", cxx_compat=False, atomics=atomics, prototypes=[])
    if header_name:
        head += f'#include "{escape_c_string(header_name)}"\n\n'
    return head + "\n".join(o.code.wrapper_with('extern "C"') for o in ported)


def emit_header(outcomes: list[NestOutcome], path: str, header_name: str, cu_name: str) -> str:
    """The C header of `emit_kernels`'s wrappers: their prototypes, for C (and C++) code calling them."""
    guard = "C2GPU_" + re.sub(r"[^A-Za-z0-9]", "_", os.path.basename(header_name)).upper() + "_"
    protos = "".join(o.code.prototype("") + ";\n" for o in outcomes if o.ported)
    return (f"/* Generated by c2gpu {__version__} from {path}: the host wrappers defined in {cu_name}\n"
            f" * (compile it with nvcc, link the objects with nvcc or with -lcudart). */\n"
            f"#ifndef {guard}\n#define {guard}\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
            f"#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n{protos}\n"
            f"#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */\n")
