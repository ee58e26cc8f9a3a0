"""Fix-its that unblock a port: for a nest c2gpu does not port, small edits of the source that would let it.

Each candidate edit is applied to a copy of the text and the nest is analysed again, whole pipeline; an edit is
offered (as the fix-it of an `unblocking-edit` note at the nest) only when the nest is then ported, with what
the port would give. The analysis, not this module, decides: a generator here only proposes.

The edits, and what each asserts:
  restrict   the pointer and array parameters a nest reads and writes, when its loops are blocked because they
             may alias and the file does not show what they point to: each declared `restrict`.  It asserts what
             the code does not show (no call passes two of them pointing into one object while one is written
             through), for the user to check at every call; c2gpu takes `restrict` at its word, as C does
             (C11 6.7.3.1).  Never offered when the file shows that two of them may point into one object (a
             `restrict` the file contradicts would be wrong).
"""
from __future__ import annotations

import re
from typing import Callable

from ..frontend.objects import distinct_objects
from ..frontend.source import apply_fixes
from ..ir import Edit, Fix, Flag, Nest, Span

_NAME = re.compile(r"[A-Za-z_]\w*")
# (edited text, nest name) -> what the nest's port would then give, or None when it is still not ported
Reanalyse = Callable[[str, str], "str | None"]


def restrict_fix(nest: Nest, info, lines: list[str], path: str) -> Fix | None:
    """`restrict` on the parameters of the nest's function whose aliasing blocks it (module doc), or None;
    `lines`: those of the file `path`, where the parameters must be declared."""
    if not any(r.kind == "alias" for v in info.verdicts.values() for r in v.reasons):
        return None
    pointers = [a for a in nest.arrays if a.storage in ("param-pointer", "param-array")]
    shown = [a for a in pointers if a.target is not None]
    if any(not distinct_objects(a, b) for k, a in enumerate(shown) for b in shown[k + 1:]):
        return None                 # the file shows two of them may point into one object: it decides
    params = [a for a in pointers if not a.restrict]
    if not params or any(a.loc.file != path for a in params):
        return None
    edits = []
    for a in params:
        edit = _restrict_edit(a.name, a.loc.file, a.loc.line, a.loc.col, lines)
        if edit is None:
            return None
        edits.append(edit)
    return Fix(f"declare {_names(params)} restrict", tuple(edits),
               asserts=f"no call of {nest.function}() passes {_names(pointers)} pointing into one object while one "
                       "of them is written through")


def _names(arrays) -> str:
    quoted = [f"'{a.name}'" for a in arrays]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" and {quoted[-1]}"


def _restrict_edit(name: str, file: str, line: int, col: int, lines: list[str]) -> Edit | None:
    """The edit that declares the parameter `name` restrict: `float *restrict a`, `float a[restrict]`,
    `double a[restrict N][M]`; None when the declaration is not one of those forms as written (a macro, a
    typedef'd pointer).  line:col is where pycparser puts the declarator: its name, or the `*` before it."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    m = _NAME.search(text, col - 1) if col > 0 else None
    if m is None or m.group() != name or text[col - 1:m.start()].strip(" \t*(") not in ("", "const", "volatile"):
        return None
    start = m.start()
    col = start + 1
    before, after = text[:start].rstrip(), text[m.end():].lstrip()
    if before.endswith("*"):
        return Edit(Span(file, line, col, line, col), "restrict ")
    if after.startswith("["):
        at = len(text) - len(after) + 1          # the column of the '['
        inner = after[1:].lstrip()
        return Edit(Span(file, line, at + 1, line, at + 1), "restrict" if inner.startswith("]") else "restrict ")
    return None


CANDIDATES = (restrict_fix,)


def unblocking_flags(program, manager, text: str, reanalyse: Reanalyse) -> dict[str, list[Flag]]:
    """For each nest not ported, the candidate edits after which it is (module doc), as notes with their fix;
    by nest name.  `text` is the program's file (the edits are made there, and only there)."""
    lines = text.split("\n")
    out: dict[str, list[Flag]] = {}
    for nest in program.nests:
        info = manager.result("dependence", nest)
        if manager.result("plan", nest) is not None or info is None or nest.loc.file != program.path:
            continue
        for candidate in CANDIDATES:
            fix = candidate(nest, info, lines, program.path)
            if fix is None:
                continue
            gain = reanalyse(apply_fixes(text, program.path, [fix])[0], nest.name)
            if gain is None:
                continue
            asserted = f"; it asserts what the code does not show: {fix.asserts}" if fix.asserts else ""
            out.setdefault(nest.name, []).append(Flag(
                "unblocking-edit", f"with this edit ({fix.title}) the nest can be ported; then: {gain}{asserted}",
                nest.loc, fix=fix))
    return out
