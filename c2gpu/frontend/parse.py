"""pycparser front: parse preprocessed text, turning parse errors into compiler-style errors."""
from __future__ import annotations

import re
import sys
import threading

from pycparser import c_ast, c_parser

from ..diagnostics import C2GPUError
from ..ir import Loc
from .preprocess import INCLUDE_DIR
from .recover import parse_recovering

_PARSE_ERR = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$", re.S)
_MARKER = re.compile(r'^[ \t]*#[ \t]*(?:line[ \t]+)?(\d+)(?:[ \t]+"((?:[^"\\\n]|\\.)*)")?', re.M)

# pycparser's parser and our visitors recurse once per nesting level; deep nests
# (40 loops) and long else-if chains need more than Python's default of 1000.
_RECURSION_LIMIT = 20000
# In a thread with a large stack (deep_call, c2gpu/drivers/deep.py, re-exported here) far deeper inputs are safe.
from ..drivers.deep import _DEEP_RECURSION_LIMIT, _DEEP_STACK_BYTES, deep_call  # noqa: E402,F401


class _Parser(c_parser.CParser):
    """pycparser 3.0 reports 'Invalid expression' with the file name only; add the next token's coordinate."""

    def _parse_error(self, msg, coord):
        if not hasattr(coord, "line"):
            try:
                tok = self._peek()
                if tok is not None:
                    coord, msg = self._tok_coord(tok), f"{msg.lower()} before '{tok.value}'"
            except Exception:  # private API of pycparser: degrade to its own message
                pass
        super()._parse_error(msg, coord)

    def _parse_external_declaration(self):
        # K&R with an implicit int (`main(argc, argv) int argc; char **argv; { ... }`, NPB's IS): pycparser 3.0
        # takes an implicit-int definition only when its body follows the declarator directly
        tok = self._peek()
        if tok is not None and tok.type == "ID" and not self._starts_declaration(tok):
            mark = self._mark()
            try:
                decl = self._parse_id_declarator()
            except c_parser.ParseError:
                decl = None
            if decl is not None and self._starts_declaration():
                params = self._parse_declaration_list()
                if self._peek_type() == "LBRACE":
                    spec = dict(qual=[], alignment=[], storage=[], function=[],
                                type=[c_ast.IdentifierType(["int"], coord=decl.coord)])
                    return [self._build_function_definition(spec=spec, decl=decl, param_decls=params,
                                                            body=self._parse_compound_statement())]
            self._reset(mark)
        return super()._parse_external_declaration()

    def parse_after(self, text: str, filename: str, names: dict[str, bool]) -> c_ast.FileAST:
        """parse(text) as the continuation of declarations that left `names` in the file scope (pycparser's
        parse, with its first scope given)."""
        self._scope_stack = [dict(names)]
        self.clex.input(text, filename)
        self._tokens = c_parser._TokenStream(self.clex)
        ast = self._parse_translation_unit_or_empty()
        tok = self._peek()
        if tok is not None:
            self._parse_error(f"before: {tok.value}", self._tok_coord(tok))
        return ast

    def _lex_on_rbrace_func(self):
        # pycparser asserts (AssertionError, a crash) on a '}' that closes nothing: make it a syntax error
        if len(getattr(self, "_scope_stack", [None, None])) <= 1:
            lex = self.clex
            try:
                coord = self._coord(lex._lineno, lex._pos - lex._line_start)
            except Exception:  # private API of pycparser's lexer
                coord = self._coord(getattr(lex, "lineno", 1))
            self._parse_error("'}' without a matching '{'", coord)
        super()._lex_on_rbrace_func()


def _end_loc(text: str, path: str) -> Loc:
    """Where the text ends, in the user's coordinates (for 'At end of input')."""
    markers = list(_MARKER.finditer(text))
    if not markers:
        return Loc(path, text.count("\n") + 1, 1)
    m = markers[-1]
    file = m.group(2) if m.group(2) is not None else path
    for earlier in reversed(markers):
        if earlier.group(2) is not None:
            file = earlier.group(2)
            break
    line = int(m.group(1)) + text.count("\n", m.end()) - 1
    return Loc(unescape(file), max(line, 1), 1)


def to_error(e: Exception, text: str, path: str) -> C2GPUError:
    """A pycparser exception (or RecursionError) as a compiler-style error."""
    if isinstance(e, RecursionError):
        return C2GPUError("construct nested too deeply to parse", Loc(path, 1, 1))
    if not isinstance(e, c_parser.ParseError):   # an assertion inside pycparser: still the input's fault
        return C2GPUError(f"syntax error (the C parser gave up: {type(e).__name__} {e})".rstrip(), Loc(path, 1, 1))
    m = _PARSE_ERR.match(str(e))
    if m:
        msg = m["msg"]
        if msg.startswith("before: "):
            msg = f"syntax error before '{msg[len('before: '):]}'"
        return C2GPUError(msg, Loc(unescape(m["file"]), int(m["line"]), int(m["col"])))
    msg = str(e)
    if msg.endswith("At end of input"):
        return C2GPUError("unexpected end of input (missing '}' or ';'?)", _end_loc(text, path))
    # pycparser names only the file when the error is at the end of the input ("f.c: Invalid expression")
    _, sep, tail = msg.rpartition(": ")
    if sep and tail and ":" not in tail:
        return C2GPUError(f"{tail[0].lower()}{tail[1:]} at the end of the input", _end_loc(text, path))
    return C2GPUError(f"syntax error: {msg}", Loc(path, 1, 1))


def _raise_limit() -> None:
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)


def ansi_parameters(ast: c_ast.FileAST) -> c_ast.FileAST:
    """Give every K&R definition (`int f(a, b) int a; float *b; {...}`) its parameters as declarations.

    pycparser keeps a K&R definition's parameter list as bare identifiers and their declarations in
    `FuncDef.param_decls`; everything after parsing reads `decl.type.args.params`, so the identifiers are
    replaced by their declarations, in the list's order (an identifier without one is an `int`, as in C89).
    `param_decls` stays as written: it is how later stages know the definition is K&R (C++ cannot compile it).
    """
    for ext in ast.ext:
        if not (isinstance(ext, c_ast.FuncDef) and ext.param_decls and isinstance(ext.decl.type, c_ast.FuncDecl)
                and ext.decl.type.args is not None):
            continue
        declared = {d.name: d for d in ext.param_decls if isinstance(d, c_ast.Decl) and d.name}
        params = []
        for p in ext.decl.type.args.params:
            if isinstance(p, c_ast.ID):
                p = declared.get(p.name) or c_ast.Decl(
                    p.name, [], [], [], [], c_ast.TypeDecl(p.name, [], None, c_ast.IdentifierType(["int"]), p.coord),
                    None, None, p.coord)
            params.append(p)
        ext.decl.type.args.params = params
    return ast


# The text c2gpu's own headers (c2gpu/include, declarations only) put before a file's first line of its own is
# the same for most files: parsed once per process, it is shared by their ASTs.  (prefix text -> (its external
# declarations, the parser's names after them: which are types))
_PREFIXES: dict[str, tuple[tuple[c_ast.Node, ...], dict[str, bool]]] = {}
_LINE_MARKER = re.compile(r'^# (\d+) "((?:[^"\\\n]|\\.)*)"([ 0-9]*)$', re.M)


def header_prefix(text: str) -> tuple[str, int]:
    """(the declarations c2gpu's headers put first, where the rest starts): the text up to the first line
    marker of a file with a line of its own, when c2gpu's headers gave lines before it and the other files
    (the one being read, between its includes) only markers and blank lines.  The declarations are the
    headers' parts with their own markers, without the blank parts of the other files, so that they are the
    same text for every file that includes the same headers first.  ("", 0) when there is no such prefix."""
    ours = str(INCLUDE_DIR) + "/"
    markers = list(_LINE_MARKER.finditer(text))
    parts = []
    for i, m in enumerate(markers):
        end = markers[i + 1].start() if i + 1 < len(markers) else len(text)
        if m.group(2).startswith(ours):
            parts.append(text[m.start():end])
        elif text[m.end():end].strip():
            return ("".join(parts), m.start()) if any(p[p.index("\n") + 1:].strip() for p in parts) else ("", 0)
    return "", 0


def _parse(parser: "_Parser", text: str, path: str) -> c_ast.FileAST:
    """parser.parse(text), with the header prefix (header_prefix) parsed once per process (_PREFIXES).  A
    prefix that does not parse on its own (an include in the middle of a declaration) is not split off."""
    prefix, cut = header_prefix(text)
    if not cut:
        return parser.parse(text, filename=path)
    if prefix not in _PREFIXES:
        try:
            exts = tuple(parser.parse(prefix, filename=path).ext)
        except (c_parser.ParseError, RecursionError, AssertionError):
            return parser.parse(text, filename=path)
        if len(_PREFIXES) > 16:
            _PREFIXES.clear()
        _PREFIXES[prefix] = (exts, dict(parser._scope_stack[0]))
    exts, names = _PREFIXES[prefix]
    rest = parser.parse_after(text[cut:], path, names)
    return c_ast.FileAST(list(exts) + rest.ext)


def unescape(name: str) -> str:
    """Line markers quote file names C-style (`"my \\"q\\".c"`); pycparser keeps the escapes."""
    if "\\" not in name:
        return name
    out, i = [], 0
    while i < len(name):
        if name[i] == "\\" and i + 1 < len(name):
            out.append(name[i + 1])
            i += 2
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


def parse_c(text: str, path: str) -> c_ast.FileAST:
    _raise_limit()
    parser = _Parser()
    try:
        return ansi_parameters(_parse(parser, text, path))
    except (c_parser.ParseError, RecursionError, AssertionError) as e:
        raise to_error(e, text, path) from None


def parse_c_recovering(text: str, path: str) -> tuple[c_ast.FileAST, list[C2GPUError]]:
    """Parse; on a syntax error, parse each external declaration on its own (see recover.py).

    Returns the AST of what parsed and the errors of what did not; raises the first
    error when nothing parsed.
    """
    _raise_limit()
    parser = _Parser()
    try:
        return ansi_parameters(_parse(parser, text, path)), []
    except (c_parser.ParseError, RecursionError, AssertionError) as e:
        first = to_error(e, text, path)
    ast, errors = parse_recovering(text, path, lambda t: parser.parse(t, filename=path),
                                   lambda e, t: to_error(e, t, path))
    if ast is None:
        raise first
    # every piece parsed on its own, yet the whole did not (e.g. a typedef redeclared): report the whole's error
    return ansi_parameters(ast), errors or [first]
