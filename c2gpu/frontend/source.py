"""Source spans in the user's own file, for splicing ported code in place.

pycparser gives the start of a `for` statement (file, line, column) but not
its end, and its coordinates are those of the original file thanks to the
preprocessor's line markers.  We find the end by scanning the original text
the way a C lexer would: skipping comments, string and character literals and
preprocessor lines, matching parentheses and braces.
"""
from __future__ import annotations

import os
import re

from ..ir import Fix, Loc, Span

_WORD = re.compile(r"[A-Za-z_]\w*")


class SpanError(Exception):
    pass


def directive_span(lines: list[str] | None, loc: Loc) -> Span:
    """The region of the preprocessor directive whose line `loc` names (`lines`: the file's lines, without their
    ends): from its '#' to the end of its last line, lines continued with a backslash included.  Empty (at `loc`)
    when the line holds no '#' (a _Pragma of a macro) or the file could not be read: nothing there to replace."""
    text = lines[loc.line - 1] if lines is not None and 0 < loc.line <= len(lines) else ""
    if not text.lstrip().startswith("#"):
        return Span(loc.file, loc.line, loc.col, loc.line, loc.col)
    end = loc.line
    while lines[end - 1].rstrip().endswith("\\") and end < len(lines):
        end += 1
    last = lines[end - 1].rstrip()
    return Span(loc.file, loc.line, len(text) - len(text.lstrip()) + 1, end, len(last) + 1)


def line_offsets(text: str) -> list[int]:
    offs = [0]
    for m in re.finditer("\n", text):
        offs.append(m.end())
    return offs


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n\f\v":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise SpanError("unterminated comment")
            i = j + 2
        elif c == "#" and (i == 0 or text[text.rfind("\n", 0, i) + 1:i].strip() == ""):
            # a preprocessor line (e.g. #pragma) between tokens
            while True:
                j = text.find("\n", i)
                if j < 0:
                    return n
                if text[j - 1] == "\\":
                    i = j + 1
                    continue
                i = j + 1
                break
        elif c == "\\" and text.startswith("\\\n", i):
            i += 2
        else:
            break
    return i


def _skip_literal(text: str, i: int) -> int:
    q = text[i]
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == q:
            return i + 1
        if text[i] == "\n":
            raise SpanError("unterminated literal")
        i += 1
    raise SpanError("unterminated literal")


def matching(text: str, i: int, open_c: str, close_c: str) -> int:
    """text[i] == open_c; return the index just after its matching close_c."""
    depth = 0
    while i < len(text):
        i = _skip_ws(text, i)
        if i >= len(text):
            break
        c = text[i]
        if c in "\"'":
            i = _skip_literal(text, i)
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise SpanError(f"no matching '{close_c}'")


def _word_at(text: str, i: int) -> str:
    m = _WORD.match(text, i)
    return m.group(0) if m else ""


def statement_end(text: str, i: int) -> int:
    """Index just after the C statement starting at text[i]."""
    i = _skip_ws(text, i)
    if i >= len(text):
        raise SpanError("statement expected")
    if text[i] == "{":
        return matching(text, i, "{", "}")
    w = _word_at(text, i)
    if w in ("for", "while", "switch"):
        j = _skip_ws(text, i + len(w))
        if j >= len(text) or text[j] != "(":
            raise SpanError(f"'(' expected after '{w}'")
        return statement_end(text, matching(text, j, "(", ")"))
    if w == "if":
        j = _skip_ws(text, i + 2)
        end = statement_end(text, matching(text, j, "(", ")"))
        k = _skip_ws(text, end)
        if _word_at(text, k) == "else":
            return statement_end(text, k + 4)
        return end
    if w == "do":
        end = statement_end(text, i + 2)
        k = _skip_ws(text, end)
        if _word_at(text, k) != "while":
            raise SpanError("'while' expected after do-body")
        k = matching(text, _skip_ws(text, k + 5), "(", ")")
        k = _skip_ws(text, k)
        return k + 1
    # expression statement: up to the ';' at depth 0
    depth = 0
    while i < len(text):
        i = _skip_ws(text, i)
        c = text[i]
        if c in "\"'":
            i = _skip_literal(text, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                raise SpanError("unbalanced brackets")
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    raise SpanError("';' expected")


def for_span(text: str, line: int, col: int) -> tuple[int, int]:
    """(start, end) offsets of the `for` statement whose keyword pycparser put at line:col (1-based)."""
    offs = line_offsets(text)
    if line < 1 or line > len(offs):
        raise SpanError(f"line {line} is outside the file")
    start_of_line = offs[line - 1]
    end_of_line = offs[line] if line < len(offs) else len(text)
    guess = start_of_line + max(col - 1, 0)
    if _word_at(text, guess) != "for" or (guess > 0 and (text[guess - 1].isalnum() or text[guess - 1] == "_")):
        hits = [m.start() for m in re.finditer(r"\bfor\b", text[start_of_line:end_of_line])]
        if len(hits) != 1:
            raise SpanError(f"cannot find the 'for' of line {line} in the source (macro-generated loop?)")
        guess = start_of_line + hits[0]
    return guess, statement_end(text, guess)


def insert_at(text: str, insertions: list[tuple[int, str]]) -> str:
    """`text` with each (offset, snippet) inserted; snippets at one offset keep their order."""
    out, pos = [], 0
    for at, snippet in sorted(insertions, key=lambda e: e[0]):
        out.append(text[pos:at])
        out.append(snippet)
        pos = at
    out.append(text[pos:])
    return "".join(out)


def apply_fixes(text: str, path: str, fixes: list[Fix]) -> tuple[str, list[Fix], list[Fix]]:
    """`text` (the file `path`) with the fix-its in it applied: (new text, applied, left out: in another file, or
    overlapping one applied before)."""
    lines = text.split("\n")              # as the frontend counts them (directive_span): CR stays in its line
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

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
