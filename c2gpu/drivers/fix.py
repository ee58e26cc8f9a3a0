"""`c2gpu fix FILE`: the fix-its of c2gpu's findings on a C file, as a unified diff or applied.

The edits are the `Fix` records of the diagnostics `analyze` reports (the clauses an OpenMP directive lacks,
analysis/openmp.py; the edits that unblock a port, drivers/unblock.py), the ones it prints as `fix-it:` lines
and SARIF fixes: the file is analysed as `analyze --no-run` does (the CPU time a static estimate), and nothing
here decides what to change.  A fix that asserts what the code does not show (`restrict`) is applied only with
--assert.  Two findings with the same fix (two clauses one directive lacks) are one fix; when different fixes
overlap, the first is applied and the others are said to be left out.
"""
from __future__ import annotations

import difflib
import sys
from dataclasses import replace

from ..frontend.source import apply_fixes
from ..ir import Fix
from .driver import analyze_file, manager_for
from .options import Options


def file_fixes(path: str, options: Options, source: str | None = None) -> tuple[list[Fix], int]:
    """The fix-its of the diagnostics `analyze` reports on the file (with `source`: on that text), in file
    order, and the status (1: an input error, printed on stderr; the rest of the file is analysed)."""
    options = replace(options, run_cpu=False, break_even=False)
    result = analyze_file(path, options, manager_for(options), source=source)
    fixes = {f.fix for flags in result.flags.values() for f in flags if f.fix is not None}
    return sorted(fixes, key=lambda x: (x.span.line, x.span.col, x.title)), result.status


def unified_diff(before: str, after: str, path: str) -> str:
    """The change as `diff -u` prints it, with `path` on both sides (`patch -p0` and `git apply -p0` apply it)."""
    out = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                               fromfile=path, tofile=path)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def fix_file(path: str, options: Options, write_to: str | None, asserted: bool) -> bool:
    """`c2gpu fix`: the unified diff of the file's fix-its on stdout, or, with `write_to`, the fixed file written
    there; what is applied and left out on stderr, compiler-style.  `asserted`: also the fixes that assert what
    the code does not show.  False when the input had errors (the rest of the file is still fixed)."""
    fixes, status = file_fixes(path, options)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        before = f.read()
    unasked = [x for x in fixes if x.asserts and not asserted]
    after, applied, left = apply_fixes(before, path, [x for x in fixes if x not in unasked])
    for fix in applied:
        checked = f" (it asserts what the code does not show: {fix.asserts}; check it)" if fix.asserts else ""
        print(f"{fix.span.loc}: note: fix-it: {fix.title}{checked}", file=sys.stderr)
    for fix in unasked:
        print(f"{fix.span.loc}: note: fix-it left out, --assert applies it: {fix.title} (it asserts what the code "
              f"does not show: {fix.asserts})", file=sys.stderr)
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
    return status == 0
