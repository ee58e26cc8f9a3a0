"""Helpers on pycparser trees, the one place that walks and copies them: every node under one (`nodes`, or with
its parent: `_walk`), a node's C text (`text_of`) and source location (`loc_of`), the names and the array chain of
an expression, copying a tree (`copy_tree`) and replacing a node in it (`swap`); the one conversion of a
tree into the IR's syntax trees (`Trees`, c2gpu.syntax_tree), and the way back for the trees the transforms
write (`Sources`).

Separate because every lowering module needs them (and the port driver the names a file declares): none of
those needs to import lowering itself for them.
"""
from __future__ import annotations

import copy

from pycparser import c_ast, c_generator
from pycparser.c_parser import Coord

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

    def __init__(self, sources: "Sources | None" = None) -> None:
        self._done: dict[int, tuple[c_ast.Node, object]] = {}
        self._files: dict[object, str] = {}        # a coordinate's file -> its name (unescaped once)
        self._sources = sources                    # where the way back is recorded (None: nowhere)

    def __call__(self, n: c_ast.Node | None):
        if n is None:
            return None
        hit = self._done.get(id(n))
        if hit is None or hit[0] is not n:
            hit = self._done[id(n)] = (n, self._convert(n, self._loc(n.coord)))
            if self._sources is not None:
                self._sources.record(hit[1], n)
        return hit[1]

    def _loc(self, c) -> Loc | None:
        """loc_of a node at coordinate `c`."""
        if c is None or c.line is None:
            return None
        name = self._files.get(c.file)
        if name is None:
            name = self._files[c.file] = _unescape(str(c.file))
            if self._sources is not None:
                self._sources.files[name] = c.file
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
                if n.init is not None or n.storage:
                    head = copy.copy(n)
                    head.init, head.storage = None, []
                assignable = assignable_copy(head)
                return tree.Decl(n.name, text_of(head), self(n.init), at, storage=tuple(n.storage or ()),
                                 assignable="" if assignable is head else text_of(assignable))
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


def assignable_copy(d: c_ast.Decl) -> c_ast.Decl:
    """Declaration `d` without the declared name's own `const` (of a scalar, or of a pointer itself: a pointer to
    const stays one), for a declaration split from its initializer: a copy, or `d` itself when it has none."""
    if not (isinstance(d.type, (c_ast.TypeDecl, c_ast.PtrDecl)) and "const" in (d.type.quals or ())):
        return d
    d = copy.copy(d)
    d.type = copy.copy(d.type)
    d.type.quals = [q for q in d.type.quals if q != "const"]
    if isinstance(d.type, c_ast.TypeDecl):
        d.quals = [q for q in d.quals or () if q != "const"]
    return d


def function_trees(ast: c_ast.FileAST) -> dict[str, tree.Function]:
    """The file's function definitions as syntax trees, by name (the last definition of a name)."""
    trees, out = Trees(), {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            args = ext.decl.type.args
            params = tuple(p.name for p in (args.params if args is not None else ()) if getattr(p, "name", None))
            out[ext.decl.name] = tree.Function(ext.decl.name, params, trees(ext.body), trees._loc(ext.coord))
    return out


class Sources:
    """The way back from the IR's syntax trees to the parser's nodes, for the frontend to describe a nest that a
    transform rewrote (transform/: isl's schedules, wavefronts, fusion, coarsening) from the tree it wrote: the
    nodes the tree holds from the source are the parser's nodes they were converted from (each place a copy of
    its own), the nodes c2gpu wrote are built from what they say (a declaration's type from its `spec` or
    `like`, never from text).  One per file lowering; Trees records what it converts."""

    def __init__(self) -> None:
        self.nodes: dict[int, tuple[object, c_ast.Node]] = {}   # id(tree node) -> (the node, its parser node)
        self.types: dict[str, c_ast.Node] = {}    # a cast's type as written -> the parser's node of it
        self.files: dict[str, object] = {}        # a Loc's file -> the file of the parser's coordinates

    def record(self, t, n: c_ast.Node) -> None:
        self.nodes[id(t)] = (t, n)
        if isinstance(n, c_ast.Cast):
            self.types.setdefault(t.ctype, n.to_type)

    def parser_node(self, t) -> c_ast.Node | None:
        """The parser's node of tree `t` (ValueError for a node c2gpu did not write and the source does not hold)."""
        if t is None:
            return None
        hit = self.nodes.get(id(t))
        if hit is not None and hit[0] is t:
            return copy.deepcopy(hit[1])
        conv, at = self.parser_node, self._coord(t.at)
        match t:
            case tree.Name(name):
                return c_ast.ID(name, at)
            case tree.Const(kind, value):
                return c_ast.Constant(kind, value, at)
            case tree.Index(base, index):
                return c_ast.ArrayRef(conv(base), conv(index), at)
            case tree.Member(base, op, name):
                return c_ast.StructRef(conv(base), op, c_ast.ID(name, at), at)
            case tree.Unary(op, operand):
                return c_ast.UnaryOp(op, conv(operand), at)
            case tree.Binary(op, left, right):
                return c_ast.BinaryOp(op, conv(left), conv(right), at)
            case tree.Ternary(cond, a, b):
                return c_ast.TernaryOp(conv(cond), conv(a), conv(b), at)
            case tree.Cast(ctype, operand) if ctype in self.types:
                return c_ast.Cast(copy.deepcopy(self.types[ctype]), conv(operand), at)
            case tree.Call(func, args):
                return c_ast.FuncCall(conv(func), c_ast.ExprList([conv(a) for a in args], at) if args else None, at)
            case tree.Assign(op, target, value):
                return c_ast.Assignment(op, conv(target), conv(value), at)
            case tree.Comma(items):
                return c_ast.ExprList([conv(x) for x in items], at)
            case tree.Decl(name, _, init) if t.spec or t.like is not None:
                if t.like is not None:
                    d = assignable_copy(self.parser_node(t.like))     # (parser_node's copy: changed freely)
                    declarator = d.type
                    while not isinstance(declarator, c_ast.TypeDecl):
                        declarator = declarator.type
                    d.name = declarator.declname = name
                    d.init, d.coord = conv(init), at
                    return d
                quals = [w for w in t.spec if w in _QUALIFIERS]
                words = [w for w in t.spec if w not in _QUALIFIERS]
                return c_ast.Decl(name, list(quals), [], [], [], c_ast.TypeDecl(name, list(quals), None,
                                  c_ast.IdentifierType(words), at), conv(init), None, at)
            case tree.Decls(items):
                return c_ast.DeclList([conv(d) for d in items], at)
            case tree.Block(items):
                return c_ast.Compound([conv(x) for x in items], at)
            case tree.If(cond, then, other):
                return c_ast.If(conv(cond), conv(then), conv(other), at)
            case tree.For(init, cond, nxt, body):
                return c_ast.For(conv(init), conv(cond), conv(nxt), conv(body), at)
            case tree.Empty():
                return c_ast.EmptyStatement(at)
        raise ValueError(f"no parser node for {type(t).__name__} '{tree.to_c(t)}', which the source does not hold")

    def _coord(self, at: Loc | None):
        return None if at is None else Coord(self.files.get(at.file, at.file), at.line, at.col)


_QUALIFIERS = ("const", "volatile", "restrict")
