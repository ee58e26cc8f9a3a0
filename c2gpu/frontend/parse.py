"""pycparser front: parse preprocessed text, turning parse errors into compiler-style errors."""
from __future__ import annotations

import re
import sys

from pycparser import c_ast, c_parser

from ..diagnostics import C2GPUError
from ..ir import Loc

_PARSE_ERR = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$", re.S)

# pycparser's parser and our visitors recurse once per nesting level; deep nests
# (40 loops) and long else-if chains need more than Python's default of 1000.
_RECURSION_LIMIT = 20000


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


def parse_c(text: str, path: str) -> c_ast.FileAST:
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    parser = _Parser()
    try:
        return parser.parse(text, filename=path)
    except c_parser.ParseError as e:
        m = _PARSE_ERR.match(str(e))
        if m:
            msg = m["msg"]
            if msg.startswith("before: "):
                msg = f"syntax error before '{msg[len('before: '):]}'"
            raise C2GPUError(msg, Loc(m["file"], int(m["line"]), int(m["col"]))) from None
        raise C2GPUError(f"syntax error: {e}", Loc(path, 1, 1)) from None
    except RecursionError:
        raise C2GPUError("construct nested too deeply to parse", Loc(path, 1, 1)) from None
