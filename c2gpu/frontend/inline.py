"""Calls into the file, inlined: a call statement to a `void` function of the file becomes the callee's body with
its parameters replaced by the arguments, so that the analyses see what it reads and writes through them (NPB
BT's `binvcrhs(lhs[i][j][k][BB], lhs[i][j][k][CC], rhs[i][j][k])` touches two 5x5 blocks and a vector of one
cell), and the kernel runs it in the thread as the C does.

A call is inlined when it is a statement of its own, its value unused or assigned to a variable (`t3 =
randlc(&t1, t2);`: the value the function returns, converted to its type, is assigned after its body), and:
- the callee is defined in the file, takes a fixed list of parameters and does not call itself (through other
  functions either); its body has no `goto`, label, `static` local or `return` before its end (a function that
  returns a value ends with its only `return`, of an arithmetic type);
- a parameter of array or pointer type is only indexed (`p[e]`, `*p`) or passed on to another call that is
  inlined, never assigned or taken the address of; its argument is an array or pointer variable or a part of
  one (`lhs[i][j][k][BB]`: the rest of it has the parameter's row type, so `p[a][b]` is `lhs[i][j][k][BB][a][b]`)
  whose subscripts read only constants and the caller's own variables (which the callee cannot change), or a
  one-dimensional one moved by such an offset (`x - 1`: `p[e]` is `x[e - 1]`);
- a pointer parameter whose argument is the address of a scalar variable of the caller (`&t1`) is used only as
  `*p` or `p[0]`, which are that variable;
- a scalar parameter is never assigned: it becomes a local initialized with its argument (evaluated once, before
  the body, as C does), and the argument has no side effect;
- every other name the callee uses is a global the caller sees under that name (not hidden by a local).
The callee's locals are renamed `c2gpu_<function>_<name>`, so that they hide nothing of the caller's.
"""
from __future__ import annotations

from typing import Callable

from pycparser import c_ast

from .ctypes import CType, decl_type
from .libc import MATH_FUNCTIONS
from .objects import _constant, _text
from .syntax import changed_here, copy_tree, has_side_effect, nodes as _nodes

_BUILTIN = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool"}
MAX_DEPTH = 4           # calls inlined inside inlined calls, at most
MAX_GROWTH = 6_000      # syntax-tree nodes inlining may add to a nest (BT's binvcrhs is 3,612): beyond, none is
#                         inlined, so that a time loop calling whole phases (LU's ssor: rhs, jacld, blts, ...)
#                         stays a nest of calls rather than one too large to analyse


def _params(fn: c_ast.FuncDef) -> list[c_ast.Decl] | None:
    """The named parameters of `fn`, or None for a variadic or K&R definition."""
    if fn.param_decls:
        return None
    args = fn.decl.type.args
    params = list(args.params) if args is not None else []
    if len(params) == 1 and isinstance(params[0], c_ast.Typename):      # (void)
        return []
    if any(not isinstance(p, c_ast.Decl) or not p.name for p in params):
        return None
    return params


def _returns_void(fn: c_ast.FuncDef) -> bool:
    t = fn.decl.type.type
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and t.type.names == ["void"]


def _returns_arithmetic(fn: c_ast.FuncDef) -> bool:
    t = fn.decl.type.type
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and t.type.names != ["void"]


def _chain(e: c_ast.Node) -> tuple[c_ast.Node, list[c_ast.Node]]:
    """(the base, its subscripts outermost first) of `a[i][j]`; (e, []) for anything else."""
    subs = []
    while isinstance(e, c_ast.ArrayRef):
        subs.insert(0, e.subscript)
        e = e.name
    return e, subs


def _address_of_variable(arg: c_ast.Node) -> str | None:
    """The variable `arg` takes the address of (`&t1`), or None."""
    if isinstance(arg, c_ast.UnaryOp) and arg.op == "&" and isinstance(arg.expr, c_ast.ID):
        return arg.expr.name
    return None


def _decayed(arg: c_ast.Node) -> c_ast.Node:
    """`arg` with an address of a first element written as the array it starts: `&u[i][j][0]` is `u[i][j]`
    (the same pointer, of the same type: `u[i][j]` decays to the address of its element 0)."""
    if isinstance(arg, c_ast.UnaryOp) and arg.op == "&" and isinstance(arg.expr, c_ast.ArrayRef) and \
            isinstance(arg.expr.subscript, c_ast.Constant) and arg.expr.subscript.value in ("0", "0u", "0U"):
        return arg.expr.name
    return arg


def _moved(arg: c_ast.Node) -> tuple[c_ast.ID, str, c_ast.Node] | None:
    """(the array, "+" or "-", the offset) of an argument `x - 1` or `x + k`, or None."""
    if isinstance(arg, c_ast.BinaryOp) and arg.op in ("+", "-") and isinstance(arg.left, c_ast.ID):
        return arg.left, arg.op, arg.right
    return None


class Inliner:
    """Inlines the eligible call statements of one nest (see the module's docstring)."""

    def __init__(self, functions: dict[str, c_ast.FuncDef], typedefs: dict[str, CType],
                 caller_var: Callable[[str], object], global_var: Callable[[str], object], address_taken: set[str],
                 foreign: frozenset[str] = frozenset()):
        self.functions = functions
        self.foreign = foreign              # functions defined in the program's other files: their globals and
        #                                     types are not the file's
        self.nest_names: set[str] = set()  # names the nest declares (its loops' variables included): they may
        #                                    hide a global at the call
        self.typedefs = typedefs
        self.caller_var = caller_var        # name -> the caller's variable at the nest (None: none)
        self.global_var = global_var        # name -> the file's global of that name (None: none)
        self.address_taken = address_taken  # the caller's variables whose address is taken
        self.inlined: list[str] = []        # the functions inlined, one entry per call
        self.why_not: dict[str, str] = {}   # function -> why its calls stay calls
        self.budget = MAX_GROWTH
        self.passed: list[c_ast.ID] = []    # the variables the inlined calls' array and pointer arguments name
        self.over = False                   # a call would grow the nest past MAX_GROWTH

    def nest(self, node: c_ast.For) -> c_ast.For:
        """A copy of the nest with its eligible calls inlined (the nest itself when there is none)."""
        if not any(self._candidate(n) for n in _nodes(node)):
            return node
        self.nest_names = {n.name for n in _nodes(node) if isinstance(n, c_ast.Decl) and n.name}
        new = copy_tree(node)
        self._rewrite(new, ())
        if self.over:
            self.inlined, self.passed = [], []
            return node
        return new if self.inlined else node

    def _candidate(self, n: c_ast.Node) -> bool:
        return isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in self.functions

    def _rewrite(self, node: c_ast.Node, stack: tuple[str, ...]) -> None:
        """Replace, in place, every call statement under `node` that can be inlined (`stack`: the functions
        being inlined around it)."""
        for n in list(_nodes(node)):
            for attr in ("block_items", "stmts"):          # Compound, Case and Default hold statement lists
                items = getattr(n, attr, None) if attr in getattr(n, "__slots__", ()) else None
                if items:
                    for k, item in enumerate(items):
                        block = self._inline(item, stack)
                        if block is not None:
                            items[k] = block
            for attr in ("stmt", "iftrue", "iffalse"):      # a call as the whole body of a loop or an if
                item = getattr(n, attr, None) if attr in getattr(n, "__slots__", ()) else None
                if item is not None:
                    block = self._inline(item, stack)
                    if block is not None:
                        setattr(n, attr, block)

    def _inline(self, item: c_ast.Node, stack: tuple[str, ...]) -> c_ast.Compound | None:
        call, target = item, None
        if isinstance(item, c_ast.Assignment) and item.op == "=" and isinstance(item.lvalue, (c_ast.ID, c_ast.ArrayRef)):
            call, target = item.rvalue, item.lvalue          # `t3 = randlc(&t1, t2);`, `x[i] = randlc(&s, a);`
        if not self._candidate(call):
            return None
        name = call.name.name
        args = [_decayed(a) for a in call.args.exprs] if call.args is not None else []
        why = self._why_not(name, args, stack, target)
        if why:
            self.why_not.setdefault(name, why)
            return None
        fn = self.functions[name]
        size = sum(1 for _ in _nodes(fn.body))
        if size > self.budget:
            self.over = True
            self.why_not.setdefault(name, f"inlining the nest's calls would add more than {MAX_GROWTH} syntax-tree "
                                          "nodes to it")
            return None
        self.budget -= size
        for p, a in zip(_params(fn), args):
            if not decl_type(p, self.typedefs).is_scalar:       # (lhs[i][j][k][BB], x - 1, &t1: the array, t1)
                self.passed.append(_chain(_moved(a)[0] if _moved(a) is not None else a.expr
                                          if _address_of_variable(a) else a)[0])
        block = self._body(fn, args, target)
        self.inlined.append(name)
        self._rewrite(block, stack + (name,))
        return block

    def _why_not(self, name: str, args: list[c_ast.Node], stack: tuple[str, ...], target: c_ast.Node | None) -> str:
        fn = self.functions[name]
        if name in stack or self._recursive(name):
            return "it calls itself"
        if len(stack) >= MAX_DEPTH:
            return f"it is called {MAX_DEPTH} calls deep"
        returns = not _returns_void(fn)
        if returns and not _returns_arithmetic(fn):
            return "it returns a value that is not a number"
        if not returns and target is not None:
            return "its value is used"
        if target is not None and not isinstance(target, c_ast.ID):
            # the element is chosen after the body runs: by subscripts the function cannot change (a variable
            # whose address the call passes is address-taken)
            base, subs = _chain(target)
            plain = "its value is assigned to an element that is not a plain subscript of an array"
            if not isinstance(base, c_ast.ID):
                return plain
            for sub in subs:
                why = self._fixed_why(sub, "the element its value is assigned to is chosen by", plain, fn)
                if why:
                    return why
        params = _params(fn)
        if params is None:
            return "it is variadic or defined K&R style"
        if len(params) != len(args):
            return "the call passes another number of arguments than it declares"
        body = list(_nodes(fn.body))
        parents = {id(c): n for n in body for _, c in n.children()}
        items = fn.body.block_items or []
        for n in body:
            if isinstance(n, (c_ast.Goto, c_ast.Label)):
                return "it uses goto"
            if isinstance(n, c_ast.Return) and not (n is items[-1] and (n.expr is None) != returns):
                return "it returns before its end"
            if isinstance(n, c_ast.Decl) and ({"static", "extern"} & set(n.storage or ()) or
                                              isinstance(n.type, c_ast.FuncDecl)):
                return f"its local '{n.name}' is static"
        if returns and not (items and isinstance(items[-1], c_ast.Return)):
            return "it does not end with its return"
        names = {p.name for p in params}
        for n in body:
            if isinstance(n, c_ast.ID) and n.name in names and changed_here(n, parents.get(id(n))):
                return f"it assigns its parameter '{n.name}' or takes its address"
        for p, arg in zip(params, args):
            if decl_type(p, self.typedefs).is_scalar:
                continue
            if _address_of_variable(arg) is not None or _moved(arg) is not None:
                for n in body:      # such a parameter only indexed: not passed on, not compared
                    if isinstance(n, c_ast.ID) and n.name == p.name and not _indexed(n, parents, _moved(arg) is None):
                        return f"it uses its parameter '{p.name}' other than as {'p[e]' if _moved(arg) else '*p'}"
        for p, arg in zip(params, args):
            t = decl_type(p, self.typedefs)
            why = self._argument_why_not(p.name, t, arg, fn) if not t.is_scalar else \
                ("" if not has_side_effect(arg) else f"the argument for '{p.name}' has a side effect")
            if why:
                return why
        locals_ = {n.name for n in body if isinstance(n, c_ast.Decl)}
        if name in self.foreign:
            # another file's globals are not the file's (a global of the same name here is another object), nor
            # are its types: only its parameters, locals and calls, with the types the file knows
            for n in body:
                if isinstance(n, c_ast.ID) and n.name not in names | locals_ and not self._call_name(n, parents) \
                        and not _field(n, parents):
                    return f"it is defined in another file and uses '{n.name}', a global of that file"
                if isinstance(n, c_ast.IdentifierType) and any(t not in _BUILTIN and t not in self.typedefs
                                                                for t in n.names):
                    return f"it is defined in another file and uses the type '{' '.join(n.names)}'"
        for n in body:
            if isinstance(n, c_ast.ID) and n.name not in names and n.name not in locals_ \
                    and not self._call_name(n, parents) and not _field(n, parents) \
                    and self.global_var(n.name) is not None \
                    and (self.caller_var(n.name) is not self.global_var(n.name) or n.name in self.nest_names):
                return f"the caller has a variable of its own named '{n.name}', a global the function uses"
        return ""

    def _recursive(self, name: str) -> bool:
        """Whether `name` calls itself, directly or through other functions of the file."""
        seen, stack = set(), [name]
        while stack:
            f = stack.pop()
            for n in _nodes(self.functions[f].body):
                if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in self.functions:
                    if n.name.name == name:
                        return True
                    if n.name.name not in seen:
                        seen.add(n.name.name)
                        stack.append(n.name.name)
        return False

    def _call_name(self, n: c_ast.ID, parents: dict) -> bool:
        up = parents.get(id(n))
        return isinstance(up, c_ast.FuncCall) and up.name is n

    def _fixed_why(self, expr: c_ast.Node, changed: str, not_plain: str, fn: c_ast.FuncDef) -> str:
        """Why `expr`, evaluated at the call, may not stand where the callee's body uses it ("" when it may):
        it reads a global the function `fn` may change or an address-taken variable (`changed` 'x', which ...),
        or it is not made of names, constants and arithmetic (`not_plain`)."""
        for n in _nodes(expr):
            if isinstance(n, c_ast.ID) and (self.global_var(n.name) is not None and
                                            self.caller_var(n.name) is self.global_var(n.name)
                                            and self._may_change(fn, n.name) or n.name in self.address_taken):
                return f"{changed} '{n.name}', which the function may change"
            if not isinstance(n, (c_ast.ID, c_ast.Constant, c_ast.BinaryOp, c_ast.UnaryOp)) or \
                    isinstance(n, c_ast.UnaryOp) and n.op not in ("-", "+"):
                return not_plain
        return ""

    def _may_change(self, fn: c_ast.FuncDef, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a call of `fn` may change the file's global `name`: it assigns, steps or takes the address of
        that name (or declares a variable of that name: which one a use means is not followed), writes through
        a pointer or an array parameter that could point to it (one of the global's type, or char), or calls a
        function that may (the file's, followed; any other but the math library's)."""
        body = list(_nodes(fn.body))
        parents = {id(c): n for n in body for _, c in n.children()}
        params = _params(fn)
        if any(isinstance(n, c_ast.Decl) and n.name == name for n in body) or any(p.name == name for p in params):
            return True
        gtype = getattr(self.global_var(name), "ctype", None)
        pointers = {p.name: decl_type(p, self.typedefs) for p in params}
        for n in body:
            if isinstance(n, c_ast.ID) and n.name == name and changed_here(n, parents.get(id(n))):
                return True
            if isinstance(n, c_ast.Assignment):
                base, _ = _chain(n.lvalue)
                deref = isinstance(n.lvalue, c_ast.UnaryOp) and n.lvalue.op == "*"
                t = pointers.get(base.name) if isinstance(base, c_ast.ID) else None
                if deref or t is not None and not t.is_scalar and (gtype is None or t.base in (gtype.base, "char")):
                    return True
            if isinstance(n, c_ast.FuncCall):
                callee = n.name.name if isinstance(n.name, c_ast.ID) else None
                if callee in seen:
                    continue
                if callee in self.functions:
                    if self._may_change(self.functions[callee], name, seen | {callee}):
                        return True
                elif callee not in MATH_FUNCTIONS:
                    return True
        return False

    def _argument_why_not(self, param: str, t: CType, arg: c_ast.Node, fn: c_ast.FuncDef) -> str:
        """Why `arg` cannot stand for the array or pointer parameter `param` of type `t` ("" when it can)."""
        name = _address_of_variable(arg)
        if name is not None:            # &t1 for `double *x`: *x is t1
            var = self.caller_var(name)
            vt = getattr(var, "ctype", None)
            if vt is None or not vt.is_scalar or self.global_var(name) is var or t.pointers != 1 or t.dims \
                    or vt.base != t.base:
                return f"the argument for '{param}' is not the address of a local {t.base} variable"
            return ""
        moved = _moved(arg)
        if moved is not None:           # x - 1 for `double y[]`: y[e] is x[e - 1]
            var = self.caller_var(moved[0].name)
            at = getattr(var, "ctype", None)
            if at is None or at.pointers + len(at.dims) != 1 or t.pointers + len(t.dims) != 1 or at.base != t.base:
                return f"the argument for '{param}' is not a one-dimensional array of {t.base} moved by an offset"
            return self._fixed_why(moved[2], f"the argument for '{param}' is moved by",
                                   f"the argument for '{param}' is moved by an offset that is not a plain expression",
                                   fn)
        base, subs = _chain(arg)
        if not isinstance(base, c_ast.ID):
            return f"the argument for '{param}' is not an array or a part of one"
        var = self.caller_var(base.name)
        at = getattr(var, "ctype", None)
        if at is None or at.is_scalar or at.pointer_rows or at.base != t.base:
            return f"the argument for '{param}' is not an array of {t.base}"
        for sub in subs:
            why = self._fixed_why(sub, f"the argument for '{param}' is indexed by",
                                  f"the argument for '{param}' has a subscript that is not a plain expression", fn)
            if why:
                return why
        # the rows the parameter indexes must be the rows the argument has left: its declared extents after the
        # subscripts given (a pointer level counts as one extent of unknown size)
        left = ([None] * at.pointers + list(at.dims))[len(subs):]
        rows = ([None] * t.pointers + list(t.dims))[1:]
        if len(left) != len(rows) + 1 or any(_extent(a) != _extent(b) for a, b in zip(left[1:], rows)):
            return f"the argument for '{param}' does not have the rows '{param}' is declared with"
        return ""

    def _body(self, fn: c_ast.FuncDef, args: list[c_ast.Node], target: c_ast.Node | None = None) -> c_ast.Compound:
        """The callee's body for these arguments: scalar parameters as initialized locals, array parameters
        replaced by their arguments, `*p` by the variable whose address is passed for p, locals renamed; for a
        function that returns a value, its return value assigned to `target` (or dropped)."""
        prefix = f"c2gpu_{fn.decl.name}_"
        body = copy_tree(fn.body)
        params = _params(fn)
        arrays = {p.name: a for p, a in zip(params, args) if not decl_type(p, self.typedefs).is_scalar}
        pointed = {p: _address_of_variable(a) for p, a in arrays.items() if _address_of_variable(a) is not None}
        arrays = {p: a for p, a in arrays.items() if p not in pointed}
        renamed = {n.name: prefix + n.name for n in _nodes(body) if isinstance(n, c_ast.Decl)}
        renamed.update({p.name: prefix + p.name for p in params if p.name not in arrays and p.name not in pointed})
        for n in list(_nodes(body)):
            if isinstance(n, c_ast.Decl) and n.name in renamed:
                n.name = renamed[n.name]
                _rename_declarator(n.type, n.name)
            for attr in getattr(n, "__slots__", ()):
                child = getattr(n, attr, None)
                if isinstance(n, c_ast.StructRef) and attr == "field":
                    continue                                # `s.n`: a member's name, not a variable
                if _pointee(child, pointed) is not None:
                    setattr(n, attr, c_ast.ID(_pointee(child, pointed), coord=child.coord))
                elif isinstance(child, c_ast.ID) and child.name in arrays:
                    setattr(n, attr, copy_tree(arrays[child.name]))
                elif isinstance(child, c_ast.ID) and child.name in renamed and not (
                        isinstance(n, c_ast.FuncCall) and attr == "name"):
                    child.name = renamed[child.name]
                elif isinstance(child, c_ast.UnaryOp) and child.op == "*" and isinstance(child.expr, c_ast.ID) \
                        and child.expr.name in arrays:       # *p is p[0]
                    setattr(n, attr, c_ast.ArrayRef(copy_tree(arrays[child.expr.name]),
                                                    c_ast.Constant("int", "0"), coord=child.coord))
            for attr in ("exprs", "block_items"):
                items = getattr(n, attr, None) if attr in getattr(n, "__slots__", ()) else None
                for k, child in enumerate(items or []):
                    if _pointee(child, pointed) is not None:
                        items[k] = c_ast.ID(_pointee(child, pointed), coord=child.coord)
                    elif isinstance(child, c_ast.ID) and child.name in arrays:
                        items[k] = copy_tree(arrays[child.name])
                    elif isinstance(child, c_ast.ID) and child.name in renamed:
                        child.name = renamed[child.name]
        for ref in [n for n in _nodes(body) if isinstance(n, c_ast.ArrayRef) and _moved(n.name) is not None]:
            base, op, offset = _moved(ref.name)             # (x - 1)[e] is x[e - 1]
            ref.name = base
            ref.subscript = c_ast.BinaryOp(op, ref.subscript, offset, coord=ref.subscript.coord)
        items = [i for i in (body.block_items or []) if not isinstance(i, c_ast.Return)]
        last = (body.block_items or [None])[-1]
        if isinstance(last, c_ast.Return) and last.expr is not None:
            if target is not None:
                # the value is converted to the function's type, then to the target's, as C does
                name = prefix + "value"
                while name in renamed.values():
                    name += "_"
                rtype = copy_tree(fn.decl.type.type)
                _rename_declarator(rtype, name)
                items.append(c_ast.Decl(name, [], [], [], [], rtype, last.expr, None, coord=last.coord))
                items.append(c_ast.Assignment("=", copy_tree(target), c_ast.ID(name, coord=last.coord), coord=last.coord))
            elif has_side_effect(last.expr):
                items.append(last.expr)
        copies = []
        for p, a in zip(params, args):
            if p.name in arrays or p.name in pointed:
                continue
            d = copy_tree(p)
            d.name = renamed[p.name]
            _rename_declarator(d.type, d.name)
            d.init = copy_tree(a)
            copies.append(d)
        return c_ast.Compound(copies + items, coord=body.coord)


def only_indexes(fn: c_ast.FuncDef, position: int) -> bool:
    """Whether `fn` uses its parameter at `position` only to index it (`p[e]`, `*p`), never assigning it, storing
    or passing it on: a call keeps no pointer to the array given there."""
    params = _params(fn)
    if params is None or position >= len(params):
        return False
    name = params[position].name
    body = list(_nodes(fn.body))
    parents = {id(c): n for n in body for _, c in n.children()}
    return all(_indexed(n, parents, False) and not changed_here(n, parents.get(id(n)))
               for n in body if isinstance(n, c_ast.ID) and n.name == name)


def _pointee(n: c_ast.Node | None, pointed: dict[str, str]) -> str | None:
    """The variable `*p` or `p[0]` is, for a parameter p passed the address of a variable."""
    if isinstance(n, c_ast.UnaryOp) and n.op == "*" and isinstance(n.expr, c_ast.ID):
        return pointed.get(n.expr.name)
    if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and isinstance(n.subscript, c_ast.Constant) \
            and n.subscript.value == "0":
        return pointed.get(n.name.name)
    return None


def _indexed(n: c_ast.ID, parents: dict, dereferenced_only: bool) -> bool:
    """Whether the parameter `n` is used as `*p` or `p[0]` (dereferenced_only), or as `p[e]` or `*p`."""
    up = parents.get(id(n))
    if isinstance(up, c_ast.UnaryOp) and up.op == "*":
        return True
    if isinstance(up, c_ast.ArrayRef) and up.name is n:
        return not dereferenced_only or isinstance(up.subscript, c_ast.Constant) and up.subscript.value == "0"
    return False


def _field(n: c_ast.ID, parents: dict) -> bool:
    up = parents.get(id(n))
    return isinstance(up, c_ast.StructRef) and up.field is n


def _extent(e: c_ast.Node | None) -> str | None:
    if e is None:
        return None
    v = _constant(e)
    return str(v) if v is not None else _text(e)


def _rename_declarator(t: c_ast.Node, name: str) -> None:
    while t is not None and not isinstance(t, c_ast.TypeDecl):
        t = getattr(t, "type", None)
    if t is not None:
        t.declname = name
