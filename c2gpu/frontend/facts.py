"""What the rest of a function (or file) tells about a nest's variables: `FunctionFacts` (address taken, pointers
reassigned, values read after the nest), the values locals hold at the nest's entry, and the static arrays only
main uses.

Separate because these facts come from the code around a nest, not from the nest itself.
"""
from __future__ import annotations

from functools import cached_property

from pycparser import c_ast

from ..symbolic import Poly
from .inline import only_indexes
from .row_pointers import FunctionWrites, function_writes
from .context import NestContext, Scope
from .syntax import _assigned_name, _ids, _walk, changed_here, has_side_effect, text_of


def _main_statics(ast: c_ast.FileAST) -> frozenset[str]:
    """The file's `static` arrays (no other file can name them) that nothing but the function main names, in a
    file that never calls main: main runs once, so what it leaves in them after its last use is never read."""
    statics = {ext.name for ext in ast.ext if isinstance(ext, c_ast.Decl) and "static" in (ext.storage or ())
               and isinstance(ext.type, c_ast.ArrayDecl)}
    mains = [ext for ext in ast.ext if isinstance(ext, c_ast.FuncDef) and ext.decl.name == "main"]
    if not statics or len(mains) != 1:
        return frozenset()
    elsewhere: set[str] = set()
    for ext in ast.ext:
        if ext is mains[0]:
            continue
        part = ext.init if isinstance(ext, c_ast.Decl) else ext
        for n, _ in _walk(part) if part is not None else ():
            if isinstance(n, c_ast.ID):
                elsewhere.add(n.name)
    called = any(isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name == "main"
                 for n, _ in _walk(ast))
    return frozenset() if called else frozenset(statics - elsewhere)


def _place(n: c_ast.Node) -> tuple:
    """Where a node is in the source (a copy of the tree keeps it)."""
    c = n.coord
    return (c.file, c.line, c.column) if c is not None else (None, id(n))


def _entry_values(ctx: NestContext, nest: c_ast.Node, facts: "FunctionFacts") -> dict[str, Poly]:
    """The integer locals that hold a polynomial of other integer locals at the nest's entry: `lj = 2 * lk;`
    among the statements just before the nest in its block, when no statement between it and the nest (nor
    the nest) writes either, and the function never takes their address.  Only relations between the nest's
    parameters: delinearize uses them to prove a column stays in its row."""
    parent = facts.parent.get(id(nest))
    if not isinstance(parent, c_ast.Compound) or facts.has_goto:
        return {}
    items = parent.block_items or []
    ids = [id(i) for i in items]
    if id(nest) not in ids:
        return {}

    def plain_int(name: str) -> bool:
        var = ctx.scope.lookup(name)
        return var is not None and var.storage in ("local", "param") and var.ctype.is_integer and \
            var.ctype.is_scalar and name not in facts.address_taken
    killed = set(ctx.written)
    out: dict[str, Poly] = {}
    for item in reversed(items[:ids.index(id(nest))]):
        if isinstance(item, c_ast.Assignment) and item.op == "=" and isinstance(item.lvalue, c_ast.ID):
            name = item.lvalue.name
            reads = {n.name for n in _ids(item.rvalue)}
            if name not in killed and plain_int(name) and reads and all(plain_int(r) for r in reads) \
                    and not reads & killed and not has_side_effect(item.rvalue) and name not in reads:
                saved = set(ctx.params)
                value, _ = ctx.poly(item.rvalue)
                ctx.params = saved
                if value is not None and value.variables == frozenset(reads):
                    out[name] = value
        # (a call cannot change them: their address is never taken, and they are not globals)
        killed |= {n.name for n, up in _walk(item) if isinstance(n, c_ast.ID) and changed_here(n, up)} | \
            {n.name for n, _ in _walk(item) if isinstance(n, c_ast.Decl) and n.name}
    return out


class FunctionFacts:
    """What the rest of a function tells about a nest's variables: which have their address taken, which
    pointers are reassigned, and which values are still read after the nest (a backward liveness scan)."""

    def __init__(self, fn: c_ast.FuncDef, user_functions: set[str], functions: dict[str, c_ast.FuncDef] | None = None):
        self.fn = fn
        self.functions = functions or {}    # the program's functions c2gpu reads (FileLowerer.inlinable): an
        #                                     array passed where one only indexes its parameter does not escape
        taken, assigned = set(), set()
        self.parent: dict[int, c_ast.Node] = {}
        self.has_goto = False
        for n, up in _walk(fn.body):
            if up is not None:
                self.parent[id(n)] = up
            if isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID):
                call = up if isinstance(up, c_ast.ExprList) else None
                call = self.parent.get(id(call)) if call is not None else None
                library = isinstance(call, c_ast.FuncCall) and text_of(call.name) not in user_functions
                if not library:       # a library call (scanf("%d", &n)) does not keep the pointer
                    taken.add(n.expr.name)
            elif _assigned_name(n) is not None:
                assigned.add(_assigned_name(n))
            elif isinstance(n, (c_ast.Goto, c_ast.Label)):
                self.has_goto = True
        self.address_taken = frozenset(taken)
        self.assigned = frozenset(assigned)
        self.values = frozenset(n.name for n, _ in _walk(fn.body) if isinstance(n, c_ast.ID) and not self._element(n))
        self.value_places: dict[str, set[tuple]] = {}     # name -> where it is used other than by element
        for n, _ in _walk(fn.body):
            if isinstance(n, c_ast.ID) and n.name in self.values and not self._element(n) and not self._indexed_by(n):
                self.value_places.setdefault(n.name, set()).add(_place(n))

    @cached_property
    def writes(self) -> FunctionWrites:
        """What the function writes and declares (row_pointers.FunctionWrites), read for each of its nests."""
        return function_writes(self.fn)

    @cached_property
    def names(self) -> frozenset[str]:
        """Every identifier the function mentions."""
        return frozenset(n.name for n, _ in _walk(self.fn) if isinstance(n, c_ast.ID))

    def _indexed_by(self, name: c_ast.ID) -> bool:
        """Whether this use passes the array to a function of the program that only indexes its parameter
        (`vranlc(0, &t1, A, x)`, or `x - 1`): the call keeps no pointer to it."""
        arg, up = name, self.parent.get(id(name))
        if isinstance(up, c_ast.BinaryOp) and up.op in ("+", "-") and up.left is name:
            arg, up = up, self.parent.get(id(up))
        call = self.parent.get(id(up)) if isinstance(up, c_ast.ExprList) else None
        if not isinstance(call, c_ast.FuncCall) or not isinstance(call.name, c_ast.ID) \
                or call.name.name not in self.functions:
            return False
        position = next((k for k, e in enumerate(up.exprs) if e is arg), None)
        return position is not None and only_indexes(self.functions[call.name.name], position)

    def escapes(self, name: str, passed: frozenset[tuple] = frozenset()) -> bool:
        """Whether the function uses `name` other than by element (`&a[i]`, `a`, `a + 1`: a pointer to it may
        be kept), leaving out the arguments `passed` of calls the nest inlines (there they are only indexed)."""
        return bool(self.value_places.get(name, set()) - passed)

    def _element(self, name: c_ast.ID) -> bool:
        """Whether this use of a name only reads or writes an element (`a[i][j]`, not `&a[i]`, `a`, `a + 1`)."""
        node, up = name, self.parent.get(id(name))
        while isinstance(up, c_ast.ArrayRef) and up.name is node:
            node, up = up, self.parent.get(id(up))
        return node is not name and not (isinstance(up, c_ast.UnaryOp) and up.op == "&")

    def live_after(self, nest: c_ast.For, scope: Scope | None, stop: c_ast.Node | None = None) -> set[str]:
        """Names whose value may be read after the loop `nest` ends (before being overwritten), by the C name
        the nest uses: globals, statics and address-taken variables always.  With `stop` (an enclosing
        loop), only the reads up to the end of `stop` count."""
        always = set() if stop is not None else {name for name in self.address_taken}
        s: Scope | None = scope
        while s is not None:
            always |= {n for n, v in s.vars.items() if v.storage in ("global", "static")}
            s = s.parent
        if self.has_goto:
            return always | {n.name for n in _ids(self.fn.body)}
        live: set[str] = set()
        killed: set[str] = set()
        child, node = nest, self.parent.get(id(nest))
        while node is not None:
            if isinstance(node, c_ast.Compound):
                items = node.block_items or []
                after = items[[id(i) for i in items].index(id(child)) + 1:]
                declared = set()
                for item in after:
                    reads, kills = _uses(item, killed | declared)
                    live |= reads
                    killed |= kills
                    if isinstance(item, c_ast.Decl) and item.name:
                        declared.add(item.name)      # from here on the name is another variable
            elif isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)):
                # the next iteration: the step and the condition, then the body from its start
                heads = [node.cond] + ([node.next] if isinstance(node, c_ast.For) else [])
                live |= {n.name for h in heads for n in _ids(h)} - killed
                live |= _uses(node.stmt, killed)[0]
                if node is stop:
                    break
            child, node = node, self.parent.get(id(node))
        return live | always

    def read_later(self, loop: c_ast.For, name: str, stop: c_ast.Node) -> bool:
        """Whether `name` may be read after `loop` ends and before it is overwritten, up to the end of
        the enclosing loop `stop` (the nest): one name, so the scan stops at the first answer."""
        if self.has_goto:
            return True
        child, node = loop, self.parent.get(id(loop))
        while node is not None:
            if isinstance(node, c_ast.Compound):
                items = node.block_items or []
                for item in items[[id(i) for i in items].index(id(child)) + 1:]:
                    if isinstance(item, c_ast.Decl) and item.name == name:
                        break                             # hidden for the rest of this block
                    r = _first_use(item, name)
                    if r is not None:
                        return r == "read"
            elif isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)):
                # the next iteration (step, condition, body from its start) may read it; a write at the start of
                # the body does not settle it, for the loop may also exit to the code after it
                heads = [node.cond] + ([node.next] if isinstance(node, c_ast.For) else [])
                if any(i.name == name for h in heads for i in _ids(h)) or _first_use(node.stmt, name) == "read":
                    return True
                if node is stop:
                    return False
            child, node = node, self.parent.get(id(node))
        return False


def _first_use(node: c_ast.Node | None, name: str) -> str | None:
    """Whether statement `node`, run from its start, first reads `name` ("read"), surely overwrites it
    first ("write"), or neither (None).  Conservative like `_uses`: any other mention is a read."""
    if node is None:
        return None
    if isinstance(node, c_ast.Compound):
        for item in node.block_items or []:
            if isinstance(item, c_ast.Decl) and item.name == name:
                return "read" if any(n.name == name for n in _ids(item.init)) else None   # hidden from here on
            r = _first_use(item, name)
            if r is not None:
                return r
        return None
    mentions = lambda n: any(i.name == name for i in _ids(n))  # noqa: E731
    if isinstance(node, c_ast.Assignment) and node.op == "=" and isinstance(node.lvalue, c_ast.ID) \
            and node.lvalue.name == name:
        return "read" if mentions(node.rvalue) else "write"
    if isinstance(node, c_ast.For):
        if isinstance(node.init, c_ast.DeclList):
            if any(mentions(d.init) for d in node.init.decls):
                return "read"
            if any(d.name == name for d in node.init.decls):
                return None                                   # the loop's own variable hides it
        else:
            r = _first_use(node.init, name)
            if r is not None:
                return r
        if mentions(node.cond) or mentions(node.next) or _first_use(node.stmt, name) == "read":
            return "read"
        return None
    if isinstance(node, c_ast.If):
        if mentions(node.cond):
            return "read"
        r1, r2 = _first_use(node.iftrue, name), _first_use(node.iffalse, name)
        if "read" in (r1, r2):
            return "read"
        return "write" if r1 == r2 == "write" else None
    return "read" if mentions(node) else None


def _uses(node: c_ast.Node | None, killed: set[str]) -> tuple[set[str], set[str]]:
    """(names `node` may read before writing them, names it surely writes), for a statement in sequence.

    Conservative: any mention counts as a read unless a write that surely runs comes first (`x = e;`, a `for`
    header's `x = e`, both branches of an `if`); writes inside loop bodies may not run.
    """
    if node is None:
        return set(), set()
    if isinstance(node, c_ast.Compound):
        reads, kills, declared = set(), set(), set()
        for item in node.block_items or []:
            r, k = _uses(item, killed | kills | declared)
            reads |= r
            kills |= k
            if isinstance(item, c_ast.Decl) and item.name:
                declared.add(item.name)
        return reads, kills - declared
    if isinstance(node, c_ast.Assignment) and node.op == "=" and isinstance(node.lvalue, c_ast.ID):
        reads = {n.name for n in _ids(node.rvalue)} - killed
        return reads, {node.lvalue.name}
    if isinstance(node, c_ast.Decl):
        return {n.name for n in _ids(node.init)} - killed, set()
    if isinstance(node, c_ast.For):
        reads, kills = _uses(node.init, killed) if not isinstance(node.init, c_ast.DeclList) else \
            ({n.name for d in node.init.decls for n in _ids(d.init)} - killed, set())
        inner = killed | kills
        if isinstance(node.init, c_ast.DeclList):
            inner |= {d.name for d in node.init.decls}
        reads |= {n.name for n in _ids(node.cond)} - inner
        reads |= {n.name for n in _ids(node.next)} - inner
        reads |= _uses(node.stmt, inner)[0]
        return reads, kills
    if isinstance(node, c_ast.If):
        reads = {n.name for n in _ids(node.cond)} - killed
        r1, k1 = _uses(node.iftrue, killed)
        r2, k2 = _uses(node.iffalse, killed)
        return reads | r1 | r2, (k1 & k2) if node.iffalse is not None else set()
    return {n.name for n in _ids(node)} - killed, set()
