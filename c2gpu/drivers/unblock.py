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
  print      the calls that print (printf, fprintf, puts, ...) at the top of a loop's body, moved into a loop of
             their own after it (the same header) when they are all that keeps the loop from the GPU: the
             computation runs on the device, then the values are printed in the same order.  It keeps the
             program's meaning, checked here: every value a call prints is final when the loop ends, so it is
             the value the call read as written.  That is, each call reads only the loop's variable, constants,
             scalars the loop never writes, and array elements the loop writes, if at all, only at that same
             element in the same iteration before the call (statements of the body above it with the same
             subscripts, another element in each iteration), in an array no other array the loop writes may
             share memory with; and it writes nothing (no `%n`).
  hoist      a loop bound that is the length of a string (`i < strlen(s)`, called again at every test), computed
             once before the loop into a constant (`const size_t i_end = strlen(s);`), so that the loop counts
             from 0 to a size.  It keeps the meaning when the loop does not change the string, checked here: the
             loop does not assign `s`, and writes no array that may share memory with it.
"""
from __future__ import annotations

import re
from typing import Callable

from ..analysis.aliasing import may_alias
from ..syntax_tree import Assign, Binary, Call, Const, Decl, Decls, For, Index, Member, Name, Unary, walk
from ..frontend.objects import distinct_objects
from ..frontend.source import SpanError, apply_fixes, for_span, line_offsets, matching, statement_end
from ..ir import Edit, Fix, Flag, Nest, Span, Statement

_NAME = re.compile(r"[A-Za-z_]\w*")
# (edited text, nest name, its function) -> what the nest's port would then give, or None when it is still not ported
Reanalyse = Callable[[str, str, str], "str | None"]


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


# the calls that only print -> the positions of their format and of their stream (None: none).  They read the
# values of their other arguments, and the memory a pointer among them points to (`%s`, puts): refused below, as
# is `%n`, which writes
PRINT_CALLS = {"printf": (0, None), "fprintf": (1, 0), "puts": (None, None), "putchar": (None, None),
               "fputs": (None, 1), "fputc": (None, 1), "putc": (None, 1)}
_WRITES_COUNT = re.compile(r"%[-+ #0-9.*]*(hh|h|ll|l|j|z|t|L)?n")


def print_fix(nest: Nest, info, lines: list[str], path: str) -> Fix | None:
    """The print calls of the root loop's body moved into a loop of their own after it (module doc), or None."""
    root = nest.root
    prints = [s for s in nest.statements() if s.calls and set(s.calls) <= set(PRINT_CALLS)]
    rest = [s for s in nest.statements() if s not in prints]
    # (a call among the rest that might print too blocks the port of the loop: the fix is then not offered)
    if not prints or not rest or not all(_movable(s, nest) and _final_when_printed(s, nest, rest) for s in prints):
        return None
    text = "\n".join(lines)
    offsets = line_offsets(text)
    try:
        start, end = for_span(text, root.loc.line, root.loc.col)
        header_end = matching(text, text.index("(", start), "(", ")")
        spans = [(a, statement_end(text, a)) for a in (_offset(offsets, s.loc) for s in prints)]
    except (SpanError, ValueError):
        return None
    if not text[header_end:end].lstrip().startswith("{") or \
            any(not text.startswith(s.calls[0], a) for s, (a, _) in zip(prints, spans)):
        return None                     # a body of one statement, or a call a macro wrote
    before = text[offsets[root.loc.line - 1]:start]
    indent = before if not before.strip() else ""
    moved = "".join(f"{indent}  {text[a:b]}\n" for a, b in spans)
    at = _position(offsets, end)
    edits = [_delete(text, a, b, path, offsets) for a, b in spans]
    edits.append(Edit(Span(path, *at, *at), f"\n{indent}{text[start:header_end]} {{\n{moved}{indent}}}"))
    names = sorted({c for s in prints for c in s.calls})
    return Fix(f"move the {_words(names)} calls out of the loop, into a loop of their own after it", tuple(edits))


def _words(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" and {quoted[-1]}"


def _movable(s: Statement, nest: Nest) -> bool:
    """A call statement directly in the root's body, unconditional, that writes nothing, prints no `%n` and hands
    over no memory."""
    root = nest.root
    values = {lp.source_var for lp in nest.loops()} | \
        {sc.source_name for sc in nest.scalars if "*" not in sc.ctype and "[" not in sc.ctype}
    if s not in root.body or s.guards != root.guards or s.scalar_writes or any(a.kind != "read" for a in s.accesses):
        return False
    call = s.syntax
    if not isinstance(call, Call) or call.callee is None:
        return False
    fmt, stream = PRINT_CALLS[call.callee]
    args = call.args
    if fmt is not None and not (len(args) > fmt and isinstance(args[fmt], Const)
                                and args[fmt].kind == "string" and not _WRITES_COUNT.search(args[fmt].value)):
        return False                    # a format c2gpu cannot read may hold %n
    return not any(_passes_memory(a, values) for k, a in enumerate(args) if k not in (fmt, stream))


def _passes_memory(arg, values: set[str]) -> bool:
    """Whether a call's argument may hand over memory rather than a value: a name that is not one of `values`
    (the nest's arithmetic scalars and loop variables: an array or a pointer, whose contents `%s` or puts would
    read unseen), other than an array indexed to an element, an address, or a member (`p.name` may be an
    array)."""
    indexed = {id(n.base) for n in walk(arg) if isinstance(n, Index)}
    return any(isinstance(n, Unary) and n.op == "&" or isinstance(n, Member) or isinstance(n, Name)
               and id(n) not in indexed and n.name not in values for n in walk(arg))


def _final_when_printed(p: Statement, nest: Nest, rest: list[Statement]) -> bool:
    """Whether every value `p` reads is the one it would read after the loop (module doc)."""
    root = nest.root
    if set(p.scalar_reads) & {v for s in rest for v in s.scalar_writes}:
        return False
    above = set(root.body[:root.body.index(p)])
    written = {a.array for s in rest for a in s.accesses if a.kind == "write"}
    for a in p.accesses:
        writes = [(s, w) for s in rest for w in s.accesses if w.kind == "write" and w.array == a.array]
        if any(s not in above or w.subscripts != a.subscripts for s, w in writes):
            return False                # written below it, in an inner loop, or at another element
        if writes and not any(q is not None and q.is_affine() and q.as_dict().get(((root.var, 1),))
                              for q in a.subscripts):
            return False                # the same element in several iterations
        if any(b != a.array and may_alias(nest.array(a.array), nest.array(b), False) for b in written):
            return False
    return True


def _offset(offsets: list[int], loc) -> int:
    if not 0 < loc.line <= len(offsets):
        raise SpanError(f"line {loc.line} is outside the file")
    return offsets[loc.line - 1] + loc.col - 1


def _position(offsets: list[int], at: int) -> tuple[int, int]:
    line = max(k for k, o in enumerate(offsets) if o <= at)
    return line + 1, at - offsets[line] + 1


def _delete(text: str, a: int, b: int, path: str, offsets: list[int]) -> Edit:
    """The edit that removes text[a:b], with its line when nothing else is on it."""
    line_start = text.rfind("\n", 0, a) + 1
    line_end = text.find("\n", b)
    if line_end >= 0 and not text[line_start:a].strip() and not text[b:line_end].strip():
        a, b = line_start, line_end + 1
    return Edit(Span(path, *_position(offsets, a), *_position(offsets, b)), "")


# functions that read the string their one argument points to and return its length -> their result type
LENGTH_CALLS = {"strlen": "size_t", "wcslen": "size_t"}


def hoist_fix(nest: Nest, info, lines: list[str], path: str) -> Fix | None:
    """The root loop's bound `strlen(s)` computed once before it (module doc), or None."""
    root, loop = nest.root, nest.root.syntax
    if root.pragmas or not isinstance(loop, For) or not isinstance(loop.cond, Binary):
        return None
    match loop.init:        # the variable the loop initialises
        case Decls((Decl(name, _, _),)) | Assign("=", Name(name), _):
            var = Name(name)
        case _:
            return None
    cond = loop.cond
    bound = cond.right if cond.left == var else cond.left if cond.right == var else None
    if not (isinstance(bound, Call) and bound.callee in LENGTH_CALLS and len(bound.args) == 1
            and isinstance(bound.args[0], Name)):
        return None
    string = bound.args[0].name
    arrays = {a.name: a for a in nest.arrays}
    written = {a.array for st in nest.statements() for a in st.accesses if a.kind == "write"}
    if string not in arrays or string in written or any(string in st.scalar_writes for st in nest.statements()) \
            or any(may_alias(arrays[string], arrays[b], False) for b in written if b in arrays):
        return None
    text = "\n".join(lines)
    offsets = line_offsets(text)
    try:
        start, _ = for_span(text, root.loc.line, root.loc.col)
        where = bound.at or root.loc
        if where.file != path:
            return None
        call = _offset(offsets, where)
        call_end = matching(text, text.index("(", call), "(", ")")
    except (SpanError, ValueError):
        return None
    line_start = offsets[root.loc.line - 1]
    if not text.startswith(bound.callee, call) or text[line_start:start].strip() or not _after_statement(lines, root.loc.line):
        return None                 # a macro wrote it, or the loop is not a statement of a block of its own
    indent = text[line_start:start]
    name = f"{var.name}_end"
    while re.search(rf"\b{name}\b", text):
        name += "_"
    decl = f"{indent}const {LENGTH_CALLS[bound.callee]} {name} = {text[call:call_end]};\n"
    return Fix(f"compute '{text[call:call_end]}' once, before the loop", (
        Edit(Span(path, root.loc.line, 1, root.loc.line, 1), decl),
        Edit(Span(path, *_position(offsets, call), *_position(offsets, call_end)), name)))


def _after_statement(lines: list[str], line: int) -> bool:
    """Whether the last line before `line` that holds code ends a statement or opens or closes a block, so that a
    declaration put before the loop is a statement of that block too (not the body of an `if` or `else`, nor
    between a `#pragma` and its loop)."""
    for text in reversed(lines[:line - 1]):
        code = text.strip()
        if not code or code.startswith("//"):
            continue
        return not code.startswith("#") and code.endswith((";", "{", "}"))
    return False


CANDIDATES = (restrict_fix, print_fix, hoist_fix)


def _name_after(nest: Nest, fix: Fix) -> str:
    """The nest's name once `fix` is applied: lines inserted or removed above it move it."""
    moved = sum(e.text.count("\n") - (e.span.end_line - e.span.line) for e in fix.edits
                if (e.span.end_line, e.span.end_col) <= (nest.loc.line, nest.loc.col))
    return f"{nest.function}@{nest.loc.line + moved}"


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
            gain = reanalyse(apply_fixes(text, program.path, [fix])[0], _name_after(nest, fix), nest.function)
            if gain is None:
                continue
            asserted = f"; it asserts what the code does not show: {fix.asserts}" if fix.asserts else ""
            out.setdefault(nest.name, []).append(Flag(
                "unblocking-edit", f"with this edit ({fix.title}) the nest can be ported; then: {gain}{asserted}",
                nest.loc, fix=fix))
    return out
