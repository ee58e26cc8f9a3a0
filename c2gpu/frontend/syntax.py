"""Helpers on pycparser trees that the lowering modules share: a node's C text (`text_of`) and source location
(`loc_of`), a walk that yields each node with its parent (`_walk`), the names and the array chain of an expression.

Separate because every lowering module needs them, and codegen and the passes import them too: none of those
needs to import lowering itself for them.
"""
from __future__ import annotations

from pycparser import c_ast, c_generator

from ..ir import Loc
from .parse import unescape as _unescape


_GEN = c_generator.CGenerator()


def text_of(node: c_ast.Node | None) -> str:
    return "" if node is None else _GEN.visit(node)


def loc_of(node: c_ast.Node, fallback: Loc) -> Loc:
    c = getattr(node, "coord", None)
    if c is None or c.line is None:
        return fallback
    return Loc(_unescape(str(c.file)), int(c.line), int(c.column or 0))


def _array_chain(node: c_ast.ArrayRef) -> tuple[c_ast.Node, list[c_ast.Node]]:
    """A[i][j] -> (ID A, [i, j])."""
    subs = []
    while isinstance(node, c_ast.ArrayRef):
        subs.append(node.subscript)
        node = node.name
    return node, subs[::-1]


def _same(a: c_ast.Node, b: c_ast.Node) -> bool:
    return text_of(a) == text_of(b)


def _ids(node: c_ast.Node | None) -> list[c_ast.ID]:
    """Every identifier an expression mentions (function names of calls excluded)."""
    out, stack = [], [node] if node is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.ID):
            out.append(n)
        elif isinstance(n, c_ast.FuncCall):
            stack.extend(c for name, c in n.children() if name != "name")
        elif not isinstance(n, c_ast.StructRef):
            stack.extend(c for _, c in n.children())
        else:
            stack.append(n.name)      # s.field: only `s` is a variable
    return out


def _assigned_name(n: c_ast.Node) -> str | None:
    """The variable `n` assigns by name (`x = ...`, `x op= ...`, `x++`, `--x`), or None."""
    if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
        return n.lvalue.name
    if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and isinstance(n.expr, c_ast.ID):
        return n.expr.name
    return None


def _walk(node: c_ast.Node):
    """Every node under `node` with its parent, depth first."""
    stack = [(node, None)]
    while stack:
        n, up = stack.pop()
        yield n, up
        stack.extend((c, n) for _, c in n.children())
