"""`c2gpu fix FILE`: the fix-its of c2gpu's findings on a C file, as a unified diff or applied.

The edits are the `Fix` records the analyses made (today: the clauses an OpenMP directive lacks,
analysis/openmp.py), the same ones `analyze` prints as `fix-it:` lines and as SARIF fixes; nothing here decides
what to change.  Two fix-its over one region (two findings on one directive) are one edit when they are the same
edit; when different edits overlap, the first is applied and the others are said to be left out.
"""
from __future__ import annotations

import difflib
import os
import sys

from ..diagnostics import C2GPUError
from ..frontend import load_program_recovering
from ..ir import Fix
from .driver import diagnostics, make_manager
from .options import Options

PASSES = ("normalize", "dependence")


def file_fixes(path: str, options: Options, source: str | None = None) -> tuple[list[Fix], list[C2GPUError]]:
    """The fix-its of the findings `analyze` reports on the file (with `source`: on that text), in file order,
    and the input errors (a declaration that does not parse costs only itself)."""
    manager = make_manager(PASSES, options.pass_options())
    with manager.active():
        program, errors = load_program_recovering(path, options.preprocess, source)
        program = manager.run(program)
        fixes = {f.fix for nest in program.nests for f in diagnostics(nest, manager) if f.fix is not None}
    return sorted(fixes, key=lambda x: (x.span.line, x.span.col, x.title)), errors


def apply_fixes(text: str, path: str, fixes: list[Fix]) -> tuple[str, list[Fix], list[Fix]]:
    """`text` (the file `path`) with the fix-its in it applied: (new text, applied, left out: in another file, or
    overlapping one applied before)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return starts[min(line, len(lines) + 1) - 1] + col - 1

    def mine(file: str) -> bool:
        return file == path or os.path.exists(file) and os.path.exists(path) and os.path.samefile(file, path)

    applied, left, edits = [], [], []
    for fix in fixes:
        regions = [(offset(e.span.line, e.span.col), offset(e.span.end_line, e.span.end_col), e.text)
                   for e in fix.edits]
        if not all(mine(e.span.file) and e.span.end_line <= len(lines) for e in fix.edits) or \
                any(begin < e and b < end or begin == b for begin, end, _ in regions for b, e, _ in edits):
            left.append(fix)
            continue
        edits.extend(regions)
        applied.append(fix)
    for begin, end, new in sorted(edits, reverse=True):
        text = text[:begin] + new + text[end:]
    return text, applied, left


def unified_diff(before: str, after: str, path: str) -> str:
    """The change as `diff -u` prints it, with `path` on both sides (`patch -p0` and `git apply -p0` apply it)."""
    out = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                               fromfile=path, tofile=path)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def fix_file(path: str, options: Options, write_to: str | None) -> bool:
    """`c2gpu fix`: the unified diff of the file's fix-its on stdout, or, with `write_to`, the fixed file written
    there; what is applied and left out on stderr, compiler-style.  False when the input had errors (the rest of
    the file is still fixed)."""
    fixes, errors = file_fixes(path, options)
    for e in errors:
        print(str(e), file=sys.stderr)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        before = f.read()
    after, applied, left = apply_fixes(before, path, fixes)
    for fix in applied:
        print(f"{fix.span.loc}: note: fix-it: {fix.title}", file=sys.stderr)
    for fix in left:
        print(f"{fix.span.loc}: note: fix-it left out (it overlaps another, or is in another file): {fix.title}",
              file=sys.stderr)
    count = f"{len(applied)} fix-it{'s' if len(applied) != 1 else ''}"
    if write_to is not None:
        with open(write_to, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
            f.write(after)
        print(f"c2gpu: {count} applied, written to {write_to}", file=sys.stderr)
    else:
        sys.stdout.write(unified_diff(before, after, path))
        print(f"c2gpu: {count} (--apply writes them)", file=sys.stderr)
    return not errors
