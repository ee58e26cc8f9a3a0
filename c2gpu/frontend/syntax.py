"""Helpers on pycparser trees, the one place that walks and copies them: every node under one (`nodes`, or with
its parent: `_walk`), a node's C text (`text_of`) and source location (`loc_of`), the names and the array chain of
an expression, copying a tree (`copy_tree`) and replacing a node in it (`swap`); and the one conversion of a
statement into the IR's expression tree (`statement_expr`, c2gpu.expr).

Separate because every lowering module needs them, and codegen and the passes import them too: none of those
needs to import lowering itself for them.
"""
from __future__ import annotations

import copy

from pycparser import c_ast, c_generator

from .. import expr
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


# --------------------------------------------------------------------------- the IR's expression trees

_EXPRESSIONS = (c_ast.ID, c_ast.Constant, c_ast.ArrayRef, c_ast.StructRef, c_ast.UnaryOp, c_ast.BinaryOp,
                c_ast.TernaryOp, c_ast.Cast, c_ast.FuncCall, c_ast.Assignment, c_ast.ExprList, c_ast.InitList,
                c_ast.Typename, c_ast.CompoundLiteral, c_ast.NamedInitializer)


def statement_expr(node: c_ast.Node | None) -> expr.Expr | expr.Decl | None:
    """A statement of a nest as the IR keeps it (c2gpu.expr): an expression statement's expression or a
    declaration of one name; None for the others (loops, `if`s, jumps)."""
    if isinstance(node, c_ast.Decl) and node.name and not isinstance(node.type, c_ast.FuncDecl):
        head = node
        if node.init is not None:
            head = copy.copy(node)
            head.init = None
        return expr.Decl(node.name, text_of(head), None if node.init is None else expr_of(node.init), _at(node))
    return expr_of(node) if isinstance(node, _EXPRESSIONS) else None


def expr_of(n: c_ast.Node) -> expr.Expr:
    """The expression tree (c2gpu.expr) of a pycparser expression."""
    at = _at(n)
    match n:
        case c_ast.ID():
            return expr.Name(n.name, at)
        case c_ast.Constant():
            return expr.Const(n.type, n.value, at)
        case c_ast.ArrayRef():
            return expr.Index(expr_of(n.name), expr_of(n.subscript), at)
        case c_ast.StructRef():
            return expr.Member(expr_of(n.name), n.type, n.field.name, at)
        case c_ast.UnaryOp():
            return expr.Unary(n.op, expr_of(n.expr), at)
        case c_ast.BinaryOp():
            return expr.Binary(n.op, expr_of(n.left), expr_of(n.right), at)
        case c_ast.TernaryOp():
            return expr.Ternary(expr_of(n.cond), expr_of(n.iftrue), expr_of(n.iffalse), at)
        case c_ast.Cast():
            return expr.Cast(text_of(n.to_type), expr_of(n.expr), at)
        case c_ast.FuncCall():
            return expr.Call(expr_of(n.name), tuple(expr_of(a) for a in (n.args.exprs if n.args else ())), at)
        case c_ast.Assignment():
            return expr.Assign(n.op, expr_of(n.lvalue), expr_of(n.rvalue), at)
        case c_ast.ExprList():
            return expr.Comma(tuple(expr_of(x) for x in n.exprs), at)
        case c_ast.InitList():
            return expr.InitList(tuple(expr_of(x) for x in n.exprs), at)
        case c_ast.Typename():
            return expr.TypeName(text_of(n), at)
    return expr.Opaque(text_of(n), at)


def _at(n: c_ast.Node) -> tuple[int, int] | None:
    c = n.coord
    return None if c is None or c.line is None else (int(c.line), int(c.column or 0))
