"""Walking and copying pycparser syntax trees."""
from __future__ import annotations

from pycparser import c_ast


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
