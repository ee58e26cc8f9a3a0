"""Error recovery for `c2gpu analyze`: one syntax error must not hide the valid nests around it.

pycparser stops at the first error.  When the whole translation unit does not
parse, we split the preprocessed text into its external declarations
(function definitions, K&R ones included, declarations, top-level pragmas) by matching braces,
parse each one on its own, report the ones that fail with their
compiler-style diagnostic, and lower the rest.

Each piece is parsed with the typedef names of the pieces before it declared
(`typedef int T;` stand-ins: pycparser only needs to know that `T` names a
type; the real typedefs come from their own pieces), and starts with a line
marker and its column padding so coordinates are those of the user's file.

Splitting works on the preprocessor's output (no comments; line markers and
pragmas on their own lines): a function body ends at the `}` matching the `{`
that follows a `)`; any other declaration ends at a `;` outside braces.  When
the braces never balance (a `}` is missing), a second pass also closes a
definition at every `}` in the first column and starts a new one at every
line that begins with an identifier in the first column (not a label), so the
functions after the broken one are still found.
"""
from __future__ import annotations

import re

from pycparser import c_ast

from ..diagnostics import C2GPUError
from ..records import dataclass

_MARKER = re.compile(r'[ \t]*#[ \t]*(?:line[ \t]+)?(\d+)(?:[ \t]+"((?:[^"\\\n]|\\.)*)")?')
_DIRECTIVE = re.compile(r"[ \t]*#")
_DECL_START = re.compile(r"[A-Za-z_](?![A-Za-z_0-9]*[ \t]*:(?!:))")   # an identifier in column 1, not a label
# a K&R definition's head: an identifier list in parentheses followed by a declaration (`f(a, b) int a;`)
_KNR_HEAD = re.compile(r"\(\s*[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*\)\s*[A-Za-z_]")
MAX_REPORTED = 50   # syntax errors reported per file (like gcc's -fmax-errors)


@dataclass
class Chunk:
    text: str          # line marker + padding + the declaration's text
    file: str          # presumed file of its first token (as written in the line marker, escaped)
    line: int
    col: int


def split_external(text: str, path: str, first_column_closes: bool = False) -> tuple[list[Chunk], bool]:
    """Cut preprocessed text into external declarations. Returns (chunks, braces balanced)."""
    chunks: list[Chunk] = []
    cur_file, cur_line = _quote_free(path), 1
    depth = 0
    start = None                  # (offset, file, line, col) of the current chunk's first token
    last_sig = ""                 # last significant character at depth 0 in the current chunk
    func_body = False
    knr = False                   # the current chunk is a K&R definition: its `;`s end parameter declarations
    balanced = True
    pos = 0
    n = len(text)

    def close(end: int) -> None:
        nonlocal start, last_sig, func_body, knr
        off, f, ln, col = start
        chunks.append(Chunk(f'# {ln} "{f}"\n' + " " * (col - 1) + text[off:end], f, ln, col))
        start, last_sig, func_body, knr = None, "", False, False

    while pos < n:
        eol = text.find("\n", pos)
        eol = n if eol < 0 else eol
        if _DIRECTIVE.match(text, pos, eol):
            m = _MARKER.match(text, pos, eol)
            if m:
                # a line marker: the next line is line N of that file
                if m.group(2) is not None:
                    cur_file = m.group(2)
                cur_line = int(m.group(1))
                pos = eol + 1
                continue
            # another directive (#pragma): its own external declaration when between declarations
            if start is None:
                col = text.index("#", pos, eol) - pos + 1
                start = (pos + col - 1, cur_file, cur_line, col)
                close(eol)
            pos, cur_line = eol + 1, cur_line + 1
            continue
        if first_column_closes and depth > 0 and start is not None and _DECL_START.match(text, pos, eol):
            # an unclosed brace swallowed the text so far: a declaration in the first column starts afresh
            close(pos)
            depth = 0
        i = pos
        while i < eol:
            c = text[i]
            if c in " \t\r\f\v":
                i += 1
                continue
            if start is None:
                start = (i, cur_file, cur_line, i - pos + 1)
            if c == '"' or c == "'":
                j = i + 1
                while j < eol and text[j] != c:
                    j += 2 if text[j] == "\\" else 1
                i = min(j + 1, eol)
                if depth == 0:
                    last_sig = c
                continue
            if c == "{":
                if depth == 0:
                    func_body = last_sig == ")" or knr
                depth += 1
            elif c == "}":
                if first_column_closes and i == pos and depth > 1:
                    depth = 1
                depth -= 1
                if depth < 0:          # a stray '}': it ends (and breaks) the current piece
                    balanced = False
                    depth = 0
                    close(i + 1)
                    i += 1
                    continue
                if depth == 0 and func_body:
                    close(i + 1)
                    i += 1
                    continue
            elif c == ";" and depth == 0 and (knr or (_KNR_HEAD.search(text, start[0], i)
                                                      and "}" not in text[start[0]:i])):
                knr = True
            elif c == ";" and depth == 0:
                close(i + 1)
                i += 1
                continue
            if depth == 0:
                last_sig = c
            i += 1
        pos, cur_line = eol + 1, cur_line + 1
    if start is not None:
        balanced = balanced and depth == 0
        close(n)
    return chunks, balanced


def _quote_free(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')


def parse_recovering(text: str, path: str, parse_one, to_error) -> tuple[c_ast.FileAST | None, list[C2GPUError]]:
    """Parse `text` piece by piece. parse_one(text) -> FileAST raises; to_error(exc, text) -> C2GPUError.

    Returns (AST of the pieces that parsed, or None when none did; the errors of the others).
    """
    chunks, balanced = split_external(text, path)
    if not balanced:
        chunks, _ = split_external(text, path, first_column_closes=True)
    typedefs: list[str] = []
    known: set[str] = set()
    ext: list[c_ast.Node] = []
    errors: list[C2GPUError] = []
    skipped = 0
    for ch in chunks:
        stubs = "".join(f"typedef int {t};\n" for t in typedefs)
        try:
            ast = parse_one(stubs + ch.text)
        except C2GPUError as e:
            err = e
        except Exception as e:  # pycparser's ParseError, RecursionError, ...
            err = to_error(e, ch.text)
        else:
            for node in ast.ext[len(typedefs):]:
                ext.append(node)
                if isinstance(node, c_ast.Typedef) and node.name not in known:
                    known.add(node.name)
                    typedefs.append(node.name)
            continue
        if len(errors) < MAX_REPORTED:
            errors.append(err)
        else:
            skipped += 1
    if skipped:
        last = errors[-1]
        errors.append(C2GPUError(f"{skipped} more declarations could not be parsed (not reported)", last.loc))
    if not ext:
        return None, errors
    return c_ast.FileAST(ext), errors
