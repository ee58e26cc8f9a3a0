"""Helpers on pycparser trees, the one place that walks and copies them: every node under one (`nodes`, or with
its parent: `_walk`), a node's C text (`text_of`) and source location (`loc_of`), the names and the array chain of
an expression, copying a tree (`copy_tree`) and replacing a node in it (`swap`); and the one conversion of a
tree into the IR's syntax trees (`Trees`, c2gpu.syntax_tree).

Separate because every lowering module needs them, and codegen and the passes import them too: none of those
needs to import lowering itself for them.
"""
from __future__ import annotations

import copy

from pycparser import c_ast, c_generator

from .. import syntax_tree as tree
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


def declared_names(ast: c_ast.FileAST) -> set[str]:
    """Every name the file declares anywhere (variables, functions, typedefs, enumerators)."""
    return {n.name for n in nodes(ast) if isinstance(n, (c_ast.Decl, c_ast.Typedef, c_ast.Enumerator)) and n.name}


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


# --------------------------------------------------------------------------- the IR's syntax trees

class Trees:
    """The IR's syntax trees (c2gpu.syntax_tree) of pycparser nodes, converted once per node: converting a node again,
    or a tree that holds it, gives the same object, so that a statement's tree is the very node of its loop's
    tree (code generation finds statements in the bodies it prints by identity).  One per lowering of a nest."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[c_ast.Node, object]] = {}
        self._files: dict[object, str] = {}        # a coordinate's file -> its name (unescaped once)

    def __call__(self, n: c_ast.Node | None):
        if n is None:
            return None
        hit = self._done.get(id(n))
        if hit is None or hit[0] is not n:
            hit = self._done[id(n)] = (n, self._convert(n, self._loc(n.coord)))
        return hit[1]

    def _loc(self, c) -> Loc | None:
        """loc_of a node at coordinate `c`."""
        if c is None or c.line is None:
            return None
        name = self._files.get(c.file)
        if name is None:
            name = self._files[c.file] = _unescape(str(c.file))
        return Loc(name, int(c.line), int(c.column or 0))

    def _convert(self, n: c_ast.Node, at: Loc | None):
        match n:
            case c_ast.ID():
                return tree.Name(n.name, at)
            case c_ast.Constant():
                return tree.Const(n.type, n.value, at)
            case c_ast.ArrayRef():
                return tree.Index(self(n.name), self(n.subscript), at)
            case c_ast.StructRef():
                return tree.Member(self(n.name), n.type, n.field.name, at)
            case c_ast.UnaryOp():
                return tree.Unary(n.op, self(n.expr), at)
            case c_ast.BinaryOp():
                return tree.Binary(n.op, self(n.left), self(n.right), at)
            case c_ast.TernaryOp():
                return tree.Ternary(self(n.cond), self(n.iftrue), self(n.iffalse), at)
            case c_ast.Cast():
                return tree.Cast(text_of(n.to_type), self(n.expr), at)
            case c_ast.FuncCall():
                return tree.Call(self(n.name), tuple(self(a) for a in (n.args.exprs if n.args else ())), at)
            case c_ast.Assignment():
                return tree.Assign(n.op, self(n.lvalue), self(n.rvalue), at)
            case c_ast.ExprList():
                return tree.Comma(tuple(self(x) for x in n.exprs), at)
            case c_ast.InitList():
                return tree.InitList(tuple(self(x) for x in n.exprs), at)
            case c_ast.Typename():
                return tree.TypeName(text_of(n), at)
            case c_ast.Decl() if n.name and not isinstance(n.type, c_ast.FuncDecl):
                head = n
                if n.init is not None:
                    head = copy.copy(n)
                    head.init = None
                return tree.Decl(n.name, text_of(head), self(n.init), at)
            case c_ast.Decl() | c_ast.Typedef():        # a prototype, a struct's declaration
                return tree.OpaqueStmt(text_of(n) + ";", at)
            case c_ast.DeclList():
                return tree.Decls(tuple(self(d) for d in n.decls), at)
            case c_ast.Compound():
                return tree.Block(tuple(self(x) for x in n.block_items or ()), at)
            case c_ast.If():
                return tree.If(self(n.cond), self(n.iftrue), self(n.iffalse), at)
            case c_ast.For():
                return tree.For(self(n.init), self(n.cond), self(n.next), self(n.stmt), at)
            case c_ast.While():
                return tree.While(self(n.cond), self(n.stmt), at)
            case c_ast.DoWhile():
                return tree.DoWhile(self(n.stmt), self(n.cond), at)
            case c_ast.Switch():
                return tree.Switch(self(n.cond), self(n.stmt), at)
            case c_ast.Case():
                return tree.Case(self(n.expr), tuple(self(x) for x in n.stmts or ()), at)
            case c_ast.Default():
                return tree.Case(None, tuple(self(x) for x in n.stmts or ()), at)
            case c_ast.Label():
                return tree.Label(n.name, self(n.stmt), at)
            case c_ast.Goto():
                return tree.Jump("goto", n.name, at=at)
            case c_ast.Break() | c_ast.Continue():
                return tree.Jump(type(n).__name__.lower(), at=at)
            case c_ast.Return():
                return tree.Jump("return", value=self(n.expr), at=at)
            case c_ast.EmptyStatement():
                return tree.Empty(at)
            case c_ast.Pragma():
                return tree.Pragma(n.string or "", at)
            case c_ast.CompoundLiteral() | c_ast.NamedInitializer():
                return tree.Opaque(text_of(n), at)
        return tree.OpaqueStmt(text_of(n), at)
