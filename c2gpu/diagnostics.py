"""User-facing errors in compiler style: `file:line:col: error: message`."""
from __future__ import annotations

from .ir import Loc


class C2GPUError(Exception):
    """An error the user caused (bad input, bad option); printed without a traceback."""

    def __init__(self, message: str, loc: Loc | None = None, code: str = "error"):
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.code = code

    def __str__(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        return f"{where}error: {self.message}"
