"""Helpers on pycparser trees, the one place that walks and copies them: every node under one (`nodes`, or with
its parent: `_walk`), a node's C text (`text_of`) and source location (`loc_of`), the names and the array chain of
an expression, copying a tree (`copy_tree`) and replacing a node in it (`swap`).

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


def nodes(node: c_ast.Node | None):
    """Every node under `node` (itself included), depth first."""
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for _, c in n.children())


def changed_here(ref: c_ast.Node, up: c_ast.Node | None) -> bool:
    """Whether the expression `ref` is assigned, stepped or has its address taken where it stands (`up`: its
    parent)."""
    if isinstance(up, c_ast.Assignment) and up.lvalue is ref:
        return True
    return isinstance(up, c_ast.UnaryOp) and up.op in ("++", "--", "p++", "p--", "&")


def has_side_effect(node: c_ast.Node) -> bool:
    """Whether evaluating the expression may change something: an assignment, `++`/`--` or a call in it."""
    return any(isinstance(n, (c_ast.Assignment, c_ast.FuncCall)) or
               (isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--")) for n in nodes(node))


def copy_tree(n):
    """A copy of a syntax tree, its nodes new and their coordinates shared: what copy.deepcopy makes of a tree,
    several times faster (rewrites copy whole nests, and inlining a callee's body at every call)."""
    if isinstance(n, list):
        return [copy_tree(x) for x in n]
    if not isinstance(n, c_ast.Node):
        return n
    new = object.__new__(type(n))
    for attr in n.__slots__:
        if attr != "__weakref__":
            value = getattr(n, attr, None)
            setattr(new, attr, value if attr == "coord" else copy_tree(value))
    return new


def swap(root: c_ast.Node, old: c_ast.Node, new: c_ast.Node) -> None:
    """Replace `old` under `root` by `new`, in place."""
    for n in nodes(root):
        for attr in n.__slots__:
            if attr in ("coord", "__weakref__"):
                continue
            value = getattr(n, attr, None)
            if value is old:
                setattr(n, attr, new)
                return
            if isinstance(value, list):
                for k, x in enumerate(value):
                    if x is old:
                        value[k] = new
                        return
