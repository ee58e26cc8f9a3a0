"""The table of diagnostic codes is complete (every code the sources give a Flag or a refusal is in it), and
silencing a code removes exactly its flags."""
import ast
from pathlib import Path

import pytest

from c2gpu.diagnostics import CODES, C2GPUError, silence
from c2gpu.ir import Flag, Loc

ROOT = Path(__file__).resolve().parents[1]
# calls whose code argument is a diagnostic code: Flag(code, ...), lowering's ctx.flag(code, ...),
# PassFailed(..., code=...) and the dependence pass's DepReason(..., code=...) (the code of the flag behind it)
_POSITIONAL = {"Flag", "flag"}
_KEYWORD = {"Flag", "flag", "PassFailed", "DepReason"}


def codes_in(source: str) -> list[tuple[str, int]]:
    """(code, line) of every literal code a module passes to a Flag or a refusal; a module-level constant
    (`CODE = "..."; Flag(CODE, ...)`) counts as its literal."""
    tree = ast.parse(source)
    constants = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 for t in node.targets if isinstance(t, ast.Name)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}

    def literal(e: ast.expr) -> str | None:
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return e.value
        return constants.get(e.id) if isinstance(e, ast.Name) else None

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        args = [node.args[0]] if name in _POSITIONAL and node.args else []
        args += [k.value for k in node.keywords if k.arg == "code" and name in _KEYWORD]
        found += [(c, node.lineno) for c in map(literal, args) if c is not None]
    return found


def test_the_scan_sees_every_form_of_code():
    src = 'CODE = "c1"\nFlag(CODE, "m", loc)\nctx.flag("c2", "m", node)\nPassFailed("m", code="c3")\n' \
          'DepReason("flag", "m", code="c4")\nFlag(code, "m", loc)\n'
    assert [c for c, _ in codes_in(src)] == ["c1", "c2", "c3", "c4"]


def test_every_code_in_the_sources_is_in_the_table():
    seen, missing = set(), []
    for path in sorted((ROOT / "c2gpu").rglob("*.py")):
        for code, line in codes_in(path.read_text(encoding="utf-8")):
            seen.add(code)
            if code not in CODES:
                missing.append(f"{path.relative_to(ROOT)}:{line}: '{code}'")
    assert not missing, "codes missing from c2gpu/diagnostics.py CODES:\n" + "\n".join(missing)
    # the scan found lowering's codes, the passes' and the manager's own (a scan that finds nothing passes too)
    assert {"unsupported-statement", "out-of-bounds-subscript", "nest-too-deep", "internal-error"} <= seen


def test_every_entry_says_what_it_means():
    kinds = {"limit", "refusal", "note", "openmp", "fix", "bug"}
    assert all(d.kind in kinds and d.summary and d.summary[0].islower() for d in CODES.values())


def test_silence_removes_exactly_the_silenced_codes():
    loc = Loc("t.c", 3)
    flags = [Flag("unknown-call", "call to 'f'", loc), Flag("skipped", "nest at line 3 skipped", loc),
             Flag("unknown-call", "call to 'g'", loc)]
    assert silence(flags, ["unknown-call"]) == [flags[1]]
    assert silence(flags, []) == flags


def test_silencing_an_unknown_code_is_a_user_error():
    with pytest.raises(C2GPUError, match="unknown diagnostic code 'unknown-cal' \\(known: .*unknown-call"):
        silence([], ["unknown-cal"])
