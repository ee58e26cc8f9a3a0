"""What the whole file shows about the memory pointers point to: distinct objects, which cannot alias.

Two pointers may share memory unless the code shows they cannot (c2gpu/analysis/aliasing.py `may_alias`).  The
file often shows it: `a = malloc(...); b = malloc(...);`, or `kernel(A, B)` called only from `main` with two
different arrays.  This module gives every pointer (and array) whose target the file determines a *target
label*; the dependence pass tells two labels apart.

- A declared array (global, static or local) is its own object: `array:NAME@LINE:COL`.
- A pointer variable whose every assignment is a fresh allocation (`malloc`, `calloc`, ...,
  `posix_memalign(&p, ...)`, or a function of the file that returns one), or NULL, points to objects no other
  variable reaches (`fresh:NAME@LINE:COL`): an assignment `q = p` is not fresh, so q gets p's label (the
  same object) when that is all q is ever assigned, and p's address is never taken.  Two pointers swapped
  with a temporary (`t = a; a = b; b = t;`: double buffering) only trade their objects, so they stay distinct
  from each other and from everything else (but a copy of either is unknown).
- A pointer parameter of a function whose calls are all in the file points, at each call, to what the
  argument points to.  The calls are all in the file when the function is `static`, or when the file defines
  `main` (the file is then taken as the whole program), and its name is only ever called, never used as a
  value (a function pointer could be called from anywhere).  A global pointer is judged the same way: the
  file must hold all of its assignments.

A parameter's labels are one per *context*: one per call of its function, times the contexts of the caller
(so the labels of two parameters of one function line up call by call); anything else has one label,
which holds in every context.  Two pointers are distinct when their labels differ in every context.
"""
from __future__ import annotations

import re


from pycparser import c_ast, c_generator

from ..ir import ArrayInfo, Loc
from .ctypes import CType, decl_type
from .syntax import nodes as _nodes
from ..records import dataclass

# Functions that return (or store through their first argument) a new object no other pointer reaches.
ALLOCATORS = {
    "malloc": "C11 7.22.3.4", "calloc": "C11 7.22.3.2", "aligned_alloc": "C11 7.22.3.1",
    "valloc": "glibc", "memalign": "glibc", "pvalloc": "glibc", "_mm_malloc": "Intel intrinsics guide",
    # PolyBench/C's allocator (utilities/polybench.c: posix_memalign, one new block per call)
    "polybench_alloc_data": "PolyBench/C 4.2.1 utilities/polybench.c",
}
OUT_ALLOCATORS = {"posix_memalign": "POSIX.1-2008"}
FREERS = ("free", "polybench_free_data")    # what they are given is never read again    # stores a new object through its first argument
_GEN = c_generator.CGenerator()
ROW = "row["              # a row loaded from a table whose rows are objects of their own: row[<its subscript, as
#                           _slot_key writes it>]:<the table's label>
SCALAR = "scalar:"        # the label of a scalar variable whose address a pointer holds (`&x`): scalar:NAME@LINE:COL
MAX_CONTEXTS = 64         # calls followed through (beyond: unknown), so a call tree cannot blow up


@dataclass(frozen=True)
class Alias:
    """A pointer that is always a declared array at a constant offset (FileObjects.alias)."""
    array: str                   # the array's name
    array_loc: Loc               # where it is declared (to check the nest sees that declaration)
    offset: int                  # in elements of the pointer's rows
    source: str                  # the fact, for the report


@dataclass(frozen=True)
class Target:
    """The target labels of a pointer or array: the object(s) it is or points into, as the whole file shows it,
    with where that fact comes from."""
    labels: tuple[str, ...]      # one per context (a parameter) or one for all (anything else)
    source: str                  # where the fact comes from, for the report
    moves: bool = False          # the object changes hands (a swapped pointer): a copy cannot keep the label


class _Decl:
    """One declared variable: where, its type, and what the function or file assigns to it."""

    def __init__(self, node: c_ast.Node, name: str, ctype: CType, kind: str, function: str | None, loc: Loc):
        self.node, self.name, self.ctype, self.kind, self.function, self.loc = node, name, ctype, kind, function, loc
        self.defs: list[tuple[c_ast.Node, str]] = []     # (assigned expression, function it is assigned in)
        self.address_taken = False
        self.moved = False                # stepped in place (`p++`, `p += k`): still in its object, at another offset
        self.swapped_with: set["_Decl"] = set()

    @property
    def is_array(self) -> bool:
        return self.ctype.pointers == 0 and bool(self.ctype.dims)

    @property
    def is_pointer(self) -> bool:
        return self.ctype.pointers > 0 and not self.ctype.pointer_rows


class FileObjects:
    """The target labels of every pointer and array declaration of a file (`target(loc)`)."""

    def __init__(self, ast: c_ast.FileAST, path: str, typedefs: dict[str, CType], loc_of):
        self.path, self.typedefs, self.loc_of = path, typedefs, loc_of
        self.functions: dict[str, c_ast.FuncDef] = {}
        self.static: set[str] = set()
        self.decls: dict[Loc, _Decl] = {}
        self.calls: dict[str, list[tuple[str, list[c_ast.Node], dict[str, "_Decl"]]]] = {}   # callee -> calls
        self.used_as_value: set[str] = set()
        self.swap_nodes: set[int] = set()
        # element type -> stores that put into memory a pointer to such elements (or to rows of them) that is not
        # new memory (`rows[k] = other`, `tab[k]++`, `memset(tab, ...)`), as "line N: text"; "*" for stores whose
        # type c2gpu cannot tell, which may be any of them (rows_distinct)
        self.row_stores: dict[str, list[str]] = {}
        self.row_allocs: dict[str, list[int]] = {}     # element type -> lines storing new memory into a row slot
        # id(argument of a call statement) -> {variable: the expression it was last assigned in the same block,
        # unchanged since}: `j = k - 1; rprj3(r[k], ..., r[j], ...)` passes rows k and k - 1 (_slot_key)
        self._recent: dict[int, dict[str, c_ast.Node]] = {}
        self._bodies: set[int] = set()                  # id(the body of a function)
        # id(a call's argument list in `calls`) -> (the call, the function body's items, its position there) for
        # a call statement directly in a function's body (dead_after_calls)
        self._top_calls: dict[int, tuple[c_ast.FuncCall, list, int]] = {}
        self._call_args: dict[int, int] = {}             # id(call node) -> id(its argument list in `calls`)
        # id(expression) -> the names visible there (the block's own dict: names declared later in a block
        # cannot be named earlier in it, and an inner block has a copy)
        self._env: dict[int, dict[str, _Decl]] = {}
        self._memo: dict[int, Target | None] = {}
        self._busy: set[int] = set()
        self._busy_fns: set[str] = set()
        globals_: dict[str, _Decl] = {}
        for ext in ast.ext:
            if isinstance(ext, c_ast.FuncDef):
                self.functions[ext.decl.name] = ext
                if "static" in (ext.decl.storage or ()):
                    self.static.add(ext.decl.name)
        self.whole_program = "main" in self.functions
        for ext in ast.ext:
            if isinstance(ext, c_ast.Decl) and ext.name and not isinstance(ext.type, c_ast.FuncDecl):
                if ext.name in globals_:          # `extern double *p;` then `double *p;`: one variable
                    d = globals_[ext.name]
                    d.ctype = decl_type(ext, self.typedefs)
                    self.decls[self.loc_of(ext)] = d
                else:
                    d = self._declare(ext, "global", None)
                globals_[ext.name] = d
                if ext.init is not None:
                    d.defs.append((ext.init, ""))
                    self._env[id(ext.init)] = globals_
                if "static" in (ext.storage or ()):
                    d.kind = "static"
            elif isinstance(ext, c_ast.FuncDef):
                self._function(ext, dict(globals_))

    # ------------------------------------------------------------------ the walk

    def _declare(self, node: c_ast.Decl, kind: str, function: str | None) -> _Decl:
        d = _Decl(node, node.name, decl_type(node, self.typedefs), kind, function, self.loc_of(node))
        self.decls[d.loc] = d
        return d

    def _function(self, fn: c_ast.FuncDef, scope: dict[str, _Decl]) -> None:
        name = fn.decl.name
        scope = dict(scope)
        args = fn.decl.type.args
        for p in (args.params if args is not None else []):
            if isinstance(p, c_ast.Decl) and p.name:
                scope[p.name] = self._declare(p, "param", name)
        self._bodies.add(id(fn.body))
        self._walk(fn.body, scope, name)

    def _walk(self, node: c_ast.Node | None, scope: dict[str, _Decl], fn: str) -> None:
        if node is None:
            return
        if isinstance(node, (c_ast.Compound, c_ast.For)):
            scope = dict(scope)          # a block (or a for's header) opens a scope
        if isinstance(node, c_ast.Compound):
            items = node.block_items or []
            recent: dict[str, c_ast.Node] = {}
            for k, item in enumerate(items):
                self._swap(items[k:k + 3], scope)
                if isinstance(item, (c_ast.Label, c_ast.Case, c_ast.Default)):
                    recent = {}                   # control may arrive here without the assignments above
                if isinstance(item, c_ast.FuncCall) and item.args is not None:
                    for a in item.args.exprs:
                        self._recent[id(a)] = recent
                self._walk(item, scope, fn)       # a declaration enters `scope` as it is met
                if id(node) in self._bodies and id(item) in self._call_args:
                    self._top_calls[self._call_args[id(item)]] = (item, items, k)
                recent = _still_holding(recent, item, scope)
            return
        if isinstance(node, c_ast.Decl):
            if node.name and not isinstance(node.type, c_ast.FuncDecl):
                d = self._declare(node, "static" if "static" in (node.storage or ()) else "local", fn)
                if isinstance(node.init, c_ast.InitList) and d.ctype.pointer_rows:
                    for e in node.init.exprs:       # `double *rows[2] = {a, b};`: rows that may be one object
                        self._row_store(None, e, scope, node, _slot=(d.ctype.base, 1))
                if node.init is not None and not isinstance(node.init, c_ast.InitList):
                    self._row_convert(node.init, d.ctype, scope, node)
                if node.init is not None:
                    self._walk(node.init, scope, fn)
                    d.defs.append((node.init, fn))
                    self._env[id(node.init)] = scope
                scope[node.name] = d
            return
        if isinstance(node, c_ast.Assignment) and not isinstance(node.lvalue, (c_ast.ID, c_ast.StructRef)):
            self._row_store(node.lvalue, node.rvalue if node.op == "=" else None, scope, node)
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") \
                and not isinstance(node.expr, (c_ast.ID, c_ast.StructRef)):
            self._row_store(node.expr, None, scope, node)
        if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID):
            d = scope.get(node.lvalue.name)
            if d is not None and node.op == "=":
                self._row_convert(node.rvalue, d.ctype, scope, node)
            if d is not None:
                if node.op == "=":
                    swap = id(node) in self.swap_nodes         # a swap only trades objects (see _swap)
                    d.defs.append((None if swap else node.rvalue, fn))
                    self._env[id(node.rvalue)] = scope
                elif node.op in ("+=", "-="):            # p += k stays in its object
                    d.moved = True
                else:
                    d.defs.append((node, fn))
            self._walk(node.rvalue, scope, fn)
            return
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") and isinstance(node.expr, c_ast.ID):
            d = scope.get(node.expr.name)
            if d is not None:
                d.moved = True
            return
        if isinstance(node, c_ast.UnaryOp) and node.op == "&" and isinstance(node.expr, c_ast.ID):
            d = scope.get(node.expr.name)
            if d is not None:
                d.address_taken = True
            if node.expr.name in self.functions:
                self.used_as_value.add(node.expr.name)
            return
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID):
            callee = node.name.name
            args = list(node.args.exprs) if node.args is not None else []
            if callee in OUT_ALLOCATORS and callee not in self.functions and args:
                out = args[0]
                if isinstance(out, c_ast.UnaryOp) and out.op == "&" and isinstance(out.expr, c_ast.ID) \
                        and out.expr.name in scope:
                    scope[out.expr.name].defs.append((node, fn))     # posix_memalign(&p, ...): p is fresh
                    args = args[1:]
            if callee in self.functions:
                self.calls.setdefault(callee, []).append((fn, args, scope))
                self._call_args[id(node)] = id(args)
                params = self.functions[callee].decl.type.args
                params = [p for p in (params.params if params is not None else []) if isinstance(p, c_ast.Decl)]
                for a, p in zip(args, params):
                    self._row_convert(a, decl_type(p, self.typedefs), scope, node)
            elif callee not in ("free",) + tuple(ALLOCATORS):
                for a in args:                  # a function c2gpu cannot see may store pointers into a table
                    self._row_escape(a, scope, node)
            for a in args:
                self._walk(a, scope, fn)
            return
        if isinstance(node, c_ast.Cast):
            self._row_convert(node.expr, decl_type(node.to_type, self.typedefs), scope, node)
        elif isinstance(node, c_ast.Return) and node.expr is not None and fn in self.functions:
            self._row_convert(node.expr, decl_type(self.functions[fn].decl.type.type, self.typedefs), scope, node)
        if isinstance(node, c_ast.ID) and node.name in self.functions and node.name not in scope:
            self.used_as_value.add(node.name)      # a function used as a value: callable from anywhere
            return
        for _, child in node.children():
            self._walk(child, scope, fn)

    def _row_store(self, lvalue: c_ast.Node | None, value: c_ast.Node | None, scope: dict[str, _Decl],
                   node: c_ast.Node, _slot: tuple[str, int] | None = None) -> None:
        """Record a store into memory (`lvalue = value`; `value` None for `++`, `+=`, ...) for rows_distinct."""
        slot = _slot or _pointer_slot(lvalue, scope)
        if slot is None:
            return                               # not a pointer (an element, or a member of a struct)
        base, _ = slot
        line = self.loc_of(node).line
        if base == "*" and isinstance(value, c_ast.Constant) and value.type != "string":
            return                               # a number stored into a struct's array: no pointer
        if value is not None and self._new_or_null(value):
            self.row_allocs.setdefault(base, []).append(line)
            return
        self.row_stores.setdefault(base, []).append(f"line {line}: {_GEN.visit(node)[:60]}")

    def _row_convert(self, value: c_ast.Node, to: CType | None, scope: dict[str, _Decl], node: c_ast.Node) -> None:
        """A table of row pointers converted to another type (`void *p = u`, `(char *)u[k]`, an argument of
        another type, a return): what it then stores is out of sight, so it counts as a store rows_distinct
        cannot check.  Kept as the same table type (`double ***z = u[l]`), its stores are checked where made."""
        base = _table_passed(value, scope)
        if base is not None and not (to is not None and to.pointer_rows and to.base == base):
            self.row_stores.setdefault(base, []).append(f"line {self.loc_of(node).line}: {_GEN.visit(node)[:60]}")

    def _new_or_null(self, e: c_ast.Node) -> bool:
        """Whether `e` is new memory or NULL whichever way it is evaluated (`k < n ? malloc(m) : NULL`)."""
        while isinstance(e, c_ast.Cast):
            e = e.expr
        if isinstance(e, c_ast.TernaryOp):
            return self._new_or_null(e.iftrue) and self._new_or_null(e.iffalse)
        return _is_null(e) or self._allocator(e) is not None

    def _row_escape(self, arg: c_ast.Node, scope: dict[str, _Decl], call: c_ast.Node) -> None:
        """An argument of a call to a function the file does not define that may be a table of row pointers (a
        pointer to pointers): that function may store anything into it.  Elements and rows passed (`u[k][j][i]`,
        `fread(u[k][j], ...)`) hand over data, not pointers to store."""
        bad = _table_passed(arg, scope)
        if bad is not None:
            self.row_stores.setdefault(bad, []).append(f"line {self.loc_of(call).line}: {_GEN.visit(call)[:60]}")

    def rows_distinct(self, base: str) -> str | None:
        """Whether every row that pointers to pointers to `base` reach is an object of its own, with the fact:
        the file is the whole program and every pointer it stores into memory where such a row pointer can
        live (an element of `double **`, `double ***`, `double *rows[N]`) is new memory (or NULL), and no
        table of such pointers is handed to a function the file does not define.  Then two row pointers
        loaded from different places are different objects (each store made a new one), so `u[i][j][k]` and
        `u[i'][j'][k']` are the same element only when i = i', j = j', k = k', as in an array.  None otherwise."""
        if not self.whole_program or self.row_stores.get(base) or self.row_stores.get("*") \
                or any(self.row_stores.get(t) for t in _ANY_POINTEE):
            return None
        lines = sorted(set(self.row_allocs.get(base, ())))
        where = (f" (line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines[:6]))}"
                 f"{', ...' if len(lines) > 6 else ''})") if lines else ""
        return f"every row pointer to {base} the program stores is new memory{where}"

    def _swap(self, items: list[c_ast.Node], scope: dict[str, _Decl]) -> None:
        """`t = a; a = b; b = t;` (or `T *t = a;` first) over pointer variables: a and b trade objects."""
        if len(items) != 3:
            return
        first, second, third = items

        def assign(n, lhs=None, rhs=None):
            return isinstance(n, c_ast.Assignment) and n.op == "=" and isinstance(n.lvalue, c_ast.ID) \
                and isinstance(n.rvalue, c_ast.ID) and (lhs is None or n.lvalue.name == lhs) \
                and (rhs is None or n.rvalue.name == rhs)
        if isinstance(first, c_ast.Decl) and isinstance(first.init, c_ast.ID):
            t, a = first.name, first.init.name
        elif assign(first):
            t, a = first.lvalue.name, first.rvalue.name
        else:
            return
        if not assign(second, lhs=a) or not assign(third, rhs=t):
            return
        b = second.rvalue.name
        if third.lvalue.name != b or len({t, a, b}) != 3 or a not in scope or b not in scope:
            return
        da, db = scope[a], scope[b]
        if da.is_pointer and db.is_pointer:
            self.swap_nodes.update((id(second), id(third)))
            da.swapped_with.add(db)
            db.swapped_with.add(da)

    # ------------------------------------------------------------------ labels

    def target(self, loc: Loc) -> Target | None:
        """The labels of the variable declared at `loc`, or None when the file does not determine them."""
        d = self.decls.get(loc)
        return None if d is None else self._target(d)

    def alias(self, loc: Loc) -> Alias | None:
        """The declared array that the pointer declared at `loc` always is, at a constant offset, or None.

        Every assignment the file makes to the pointer is `A`, `A + k`, `A - k`, `k + A` or `&A[k]` (one A, one
        constant k) with A a declared array whose rows are the pointer's rows; the pointer is never stepped
        (`p++`, `p += k`), swapped or passed by address, and the file holds all its assignments (a global in a
        file with `main`).  Before its first assignment the pointer is null or indeterminate, so every
        dereference the program may make reads A: `p[e]` is `A[e + k]`, one object under two names."""
        d = self.decls.get(loc)
        if d is None or not d.is_pointer or d.ctype.pointers != 1 or d.kind == "param" or d.address_taken \
                or d.moved or d.swapped_with or (d.kind == "global" and not self.whole_program) or not d.defs:
            return None
        found = {self._offset_into(e, self._env.get(id(e))) for e, _ in d.defs}
        if len(found) != 1 or None in found:
            return None
        array, offset = found.pop()
        rows = [_text(x) for x in array.ctype.dims[1:]]
        if array.ctype.base != d.ctype.base or array.ctype.pointers or rows != [_text(x) for x in d.ctype.dims] \
                or None in rows:
            return None
        lines = sorted({self.loc_of(e).line for e, _ in d.defs})
        at = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
        where = f"{array.name}{f' + {offset}' if offset > 0 else f' - {-offset}' if offset < 0 else ''}"
        return Alias(array.name, array.loc, offset, f"{d.name} = {where} at {at}, never assigned anything else")

    def extent(self, loc: Loc, seen: frozenset = frozenset()) -> tuple[int, str] | None:
        """The number of elements the pointer parameter declared at `loc` can reach, with where that comes from:
        its function's calls are all in the file and each passes a whole declared array (or a parameter known
        the same way) of one element type and the same constant extent, so every call's object has that many
        elements from where the parameter points.  None otherwise (different extents, an offset, a pointer)."""
        d = self.decls.get(loc)
        if d is None or d.kind != "param" or d.ctype.pointers + len(d.ctype.dims) != 1 or d.defs or d.moved \
                or d.address_taken or loc in seen:
            return None
        fn = d.function
        if fn is None or not self._closed(fn) or fn not in self.calls:
            return None
        index = _param_index(self.functions[fn], d.node)
        found = set()
        for _, args, scope in self.calls[fn]:
            arg = args[index] if index is not None and index < len(args) else None
            a = scope.get(arg.name) if isinstance(arg, c_ast.ID) else None
            if a is None or a.ctype.base != d.ctype.base:
                return None
            if a.kind == "param":
                known = self.extent(a.loc, seen | {loc})
                if known is None:
                    return None
                found.add(known[0])
            elif a.is_array and len(a.ctype.dims) == 1 and (n := _constant(a.ctype.dims[0])) is not None:
                found.add(n)
            else:
                return None
        if len(found) != 1:
            return None
        n, calls = found.pop(), len(self.calls[fn])
        return n, f"{n} elements: the array passed at {'the call' if calls == 1 else f'all {calls} calls'} of {fn}()"

    def _offset_into(self, e: c_ast.Node | None, scope: dict[str, _Decl] | None) -> tuple[_Decl, int] | None:
        """(A, k) for an expression `A`, `A + k`, `k + A`, `A - k` or `&A[k]` with A a declared array in `scope`."""
        if e is None or scope is None:
            return None
        offset = 0
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            base, k = (e.left, _constant(e.right)) if isinstance(e.left, c_ast.ID) else \
                (e.right, _constant(e.left)) if e.op == "+" else (None, None)
            if base is None or k is None:
                return None
            e, offset = base, (k if e.op == "+" else -k)
        elif isinstance(e, c_ast.UnaryOp) and e.op == "&" and isinstance(e.expr, c_ast.ArrayRef) \
                and isinstance(e.expr.name, c_ast.ID):
            k = _constant(e.expr.subscript)
            if k is None:
                return None
            e, offset = e.expr.name, k
        if not isinstance(e, c_ast.ID) or e.name not in scope or not scope[e.name].is_array:
            return None
        return scope[e.name], offset

    def dead_after_calls(self, loc: Loc) -> str | None:
        """Whether no caller reads what the array parameter declared at `loc` holds after the call, with the
        fact: every call of its function is in the file (see _closed), a statement directly in the caller's
        body (no loop around it), passing a local variable (`sum`, or `*sum` for a pointer to an array) whose
        address is never taken, that no other variable is assigned from, and that the caller's code after the
        call names only to free it.  None otherwise."""
        d = self.decls.get(loc)
        if d is None or d.kind != "param" or d.defs or d.moved or d.address_taken:
            return None
        fn = d.function
        if fn is None or not self._closed(fn) or fn not in self.calls:
            return None
        index = _param_index(self.functions[fn], d.node)
        for caller, args, scope in self.calls[fn]:
            top = self._top_calls.get(id(args))
            arg = args[index] if index is not None and index < len(args) else None
            while isinstance(arg, c_ast.Cast) or (isinstance(arg, c_ast.UnaryOp) and arg.op == "*"):
                arg = arg.expr
            x = scope.get(arg.name) if isinstance(arg, c_ast.ID) else None
            if top is None or x is None or x.kind != "local" or x.function != caller or x.address_taken:
                return None
            if any(x.name in _names(e) for other in self.decls.values() if other is not x and other.function == caller
                   for e, _ in other.defs if e is not None):
                return None                    # a copy of the pointer may read the memory later
            _, items, k = top
            for item in items[k + 1:]:
                freed = {id(n) for c in _nodes(item) if isinstance(c, c_ast.FuncCall) and isinstance(c.name, c_ast.ID)
                         and c.name.name in FREERS for n in _nodes(c.args)}
                if any(isinstance(n, c_ast.ID) and n.name == x.name and id(n) not in freed for n in _nodes(item)):
                    return None
        calls = len(self.calls[fn])
        return f"no caller reads it after {'the call' if calls == 1 else f'any of the {calls} calls'} of {fn}()"

    def value(self, loc: Loc) -> tuple[int, str] | None:
        """The one integer value the file gives the scalar declared at `loc` wherever the nest can read it,
        with where it comes from: a parameter passed the same constant at every call of its function (a
        constant, or a variable of the caller initialized to one and never assigned again), or a variable
        initialized to a constant and never assigned again.  None when the file does not show one."""
        d = self.decls.get(loc)
        if d is None or not d.ctype.is_integer or d.address_taken:
            return None
        if d.kind != "param":
            if d.kind == "global" and not self.whole_program or len(d.defs) != 1 or d.defs[0][0] is None:
                return None
            v = _constant(d.defs[0][0])
            return None if v is None else (v, f"{d.name} = {v} (line {d.loc.line}), never assigned again")
        fn = d.function
        if d.defs or fn is None or not self._closed(fn) or fn not in self.calls:
            return None
        index = _param_index(self.functions[fn], d.node)
        values = set()
        for _, args, scope in self.calls[fn]:
            if index is None or index >= len(args):
                return None
            arg = args[index]
            v = _constant(arg)
            if v is None and isinstance(arg, c_ast.ID) and arg.name in scope:
                known = self.value(scope[arg.name].loc)
                v = None if known is None else known[0]
            if v is None:
                return None
            values.add(v)
        if len(values) != 1:
            return None
        v, calls = values.pop(), len(self.calls[fn])
        return v, f"{d.name} = {v} at {'the call' if calls == 1 else f'all {calls} calls'} of {fn}()"

    def _closed(self, fn: str) -> bool:
        return (fn in self.static or self.whole_program) and fn not in self.used_as_value and fn != "main"

    def _target(self, d: _Decl) -> Target | None:
        key = id(d)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return None                        # a cycle (p = q; q = p; or recursion): unknown
        self._busy.add(key)
        try:
            found = self._compute(d)
        finally:
            self._busy.discard(key)
        self._memo[key] = found
        return found

    def _table(self, d: _Decl) -> bool:
        """A table of row pointers whose rows are objects of their own (rows_distinct): labelled like a pointer,
        its rows `row:` + its label."""
        return d.ctype.pointer_rows and self.rows_distinct(d.ctype.base) is not None

    def _compute(self, d: _Decl) -> Target | None:
        table = self._table(d)
        if table and d.moved:
            return None                        # a stepped table (`u++`): its label would not be its start
        if d.kind == "param":
            return self._param(d) if (d.is_pointer or d.is_array or table) and not d.address_taken else None
        if d.is_array or (table and d.ctype.dims):
            return Target((f"array:{d.name}@{d.loc.line}:{d.loc.col}",), f"the array '{d.name}' (line {d.loc.line})")
        if not (d.is_pointer or table) or d.address_taken or (d.kind == "global" and not self.whole_program):
            return None                        # (another file may assign a global)
        defs = [e for e, _ in d.defs if e is None or not _is_null(e)]
        fresh = [self._allocator(e) for e in defs if e is not None]
        if fresh and all(f is not None for f in fresh) and all(self._fresh_only(o) for o in d.swapped_with):
            how = f"assigned only new memory ({', '.join(sorted(set(fresh)))})" + (
                f" and swapped with {', '.join(sorted(o.name for o in d.swapped_with))}" if d.swapped_with else "")
            return Target((f"fresh:{d.name}@{d.loc.line}:{d.loc.col}",), f"'{d.name}' (line {d.loc.line}), {how}",
                          moves=bool(d.swapped_with))
        if not defs or None in defs:
            return None
        # every assignment points into one known object that stays put: the pointer shares its label
        targets = [self._expr(e, self._env.get(id(e))) for e in defs]
        if any(t is None or t.moves or len(t.labels) != 1 for t in targets) or len({t.labels for t in targets}) != 1:
            return None
        return Target(targets[0].labels, f"'{d.name}' (line {d.loc.line}), which points into {targets[0].source}")

    def _fresh_only(self, d: _Decl) -> bool:
        """A swap partner must itself be assigned nothing but new memory (and the swaps)."""
        return not d.address_taken and all(e is None or _is_null(e) or self._allocator(e) is not None
                                           for e, _ in d.defs)

    def _allocator(self, e: c_ast.Node) -> str | None:
        """The allocator an expression calls for a new object (through casts), or None."""
        while isinstance(e, c_ast.Cast):
            e = e.expr
        if isinstance(e, c_ast.Compound):
            return self._block_allocator(e)
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID):
            name = e.name.name
            if name in self.functions:
                return name if self._returns_fresh(name) else None
            if name in ALLOCATORS or name in OUT_ALLOCATORS:
                return name
        return None

    def _block_allocator(self, e: c_ast.Compound) -> str | None:
        """A GNU statement expression whose value is new memory (`#define xmalloc(n) ({ void *p = malloc(n); if
        (!p) abort(); p; })`): its last item is a pointer it declares with an allocation, which nothing in it
        assigns again or lets escape (only tested or freed).  The allocator, or None."""
        items = e.block_items or []
        if not items or not isinstance(items[-1], c_ast.ID):
            return None
        name = items[-1].name
        decl = next((d for d in items[:-1] if isinstance(d, c_ast.Decl) and d.name == name), None)
        if decl is None or decl.init is None:
            return None
        rest = c_ast.Compound(items[:-1])
        if any(isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID) and n.lvalue.name == name
               or isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID) and n.expr.name == name
               for n in _nodes(rest)) or not _only_returned(rest, name):
            return None
        return self._allocator(decl.init)

    def _returns_fresh(self, fn: str) -> bool:
        """A function of the file whose every `return` gives a fresh allocation (directly, or a local pointer
        that is assigned only fresh memory and used for nothing but being returned, tested or freed)."""
        if fn in self._busy_fns:
            return False                       # recursion: not shown fresh
        self._busy_fns.add(fn)
        try:
            return self._all_returns_fresh(fn)
        finally:
            self._busy_fns.discard(fn)

    def _all_returns_fresh(self, fn: str) -> bool:
        body = self.functions[fn].body
        returns = [n for n in _nodes(body) if isinstance(n, c_ast.Return)]
        if not returns:
            return False
        for r in returns:
            e = r.expr
            while isinstance(e, c_ast.Cast):
                e = e.expr
            if e is not None and self._allocator(e) is not None:
                continue
            local = next((d for d in self.decls.values() if isinstance(e, c_ast.ID) and d.function == fn
                          and d.name == e.name and d.kind == "local"), None)
            if local is None or local.address_taken or not local.defs \
                    or not all(x is not None and (_is_null(x) or self._allocator(x) is not None) for x, _ in local.defs):
                return False
            if not _only_returned(body, local.name):
                return False
        return True

    def _param(self, d: _Decl) -> Target | None:
        fn = d.function
        if fn is None or not self._closed(fn) or fn not in self.calls:
            return None
        index = _param_index(self.functions[fn], d.node)
        labels: list[str] = []
        lines = []
        for caller, args, scope in self.calls[fn]:
            if index is None or index >= len(args):
                return None
            t = self._expr(args[index], scope)
            if t is None:
                return None
            n = self._contexts(caller)
            if n is None:
                return None
            labels.extend(t.labels * n if len(t.labels) == 1 else t.labels)
            lines.append(t.source)
        if len(labels) > MAX_CONTEXTS:
            return None
        calls = len(self.calls[fn])
        where = f"{'the call' if calls == 1 else f'its {calls} calls'} of {fn}()"
        return Target(tuple(labels), f"{' / '.join(dict.fromkeys(lines))} at {where}")

    def _contexts(self, fn: str, seen: frozenset = frozenset()) -> int | None:
        """How many contexts the labels of `fn`'s parameters have: 1 for a function nobody in the file calls
        (main), else the sum over its calls of the caller's contexts."""
        if fn in seen:
            return None
        if not self._closed(fn) or fn not in self.calls:
            return 1
        total = 0
        for caller, _, _ in self.calls[fn]:
            n = self._contexts(caller, seen | {fn})
            if n is None:
                return None
            total += n
        return total if total <= MAX_CONTEXTS else None

    def _expr(self, e: c_ast.Node | None, scope: dict[str, _Decl] | None) -> Target | None:
        """The object an expression points into: `a`, `*A` (A a pointer to arrays), `a + k`, `&a[k]`, `(T *)a`."""
        if e is None or scope is None:
            return None
        recent = self._recent.get(id(e), {})
        while True:
            if isinstance(e, c_ast.Cast):
                e = e.expr
            elif isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-") and _pointerish(e.left, scope):
                e = e.left
            elif isinstance(e, c_ast.BinaryOp) and e.op == "+" and _pointerish(e.right, scope):
                e = e.right
            elif isinstance(e, c_ast.UnaryOp) and e.op == "&" and isinstance(e.expr, c_ast.ArrayRef):
                e = _array_base(e.expr)
            elif isinstance(e, c_ast.UnaryOp) and e.op == "*" and isinstance(e.expr, c_ast.ID) \
                    and _rows_in_place(scope.get(e.expr.name)):
                e = e.expr                     # *A with A a pointer to arrays: A's first row, in A's object
            elif isinstance(e, c_ast.ArrayRef) and _rows_in_place(scope.get(getattr(_array_base(e), "name", ""))) \
                    and _depth(e) < _levels(scope.get(_array_base(e).name)):
                e = _array_base(e)             # A[k] of a 2-D array is a row of A, in A's object
            else:
                break
        if isinstance(e, (c_ast.ArrayRef, c_ast.UnaryOp)) and (slot := _pointer_slot(e, scope)) is not None \
                and slot[0] != "*" and self._table(scope[_chain_root(e).name]):
            # a row (or a table of rows) loaded from a table: one of the objects the table's own stores made, told
            # apart from the table's other rows by its subscripts where they differ by a constant
            root = _chain_root(e)
            t = self._target(scope[root.name])
            if t is None:
                return None
            keys = []
            while e is not root:
                keys.insert(0, _slot_key(e.subscript if isinstance(e, c_ast.ArrayRef) else c_ast.Constant("int", "0"),
                                         recent))
                e = e.name if isinstance(e, c_ast.ArrayRef) else e.expr
            labels = []
            for label in t.labels:
                for key in keys:
                    label = f"{ROW}{key}]:{label}"
                labels.append(label)
            return Target(tuple(labels), f"a row of {t.source}")
        if isinstance(e, c_ast.UnaryOp) and e.op == "&" and isinstance(e.expr, c_ast.ID) and e.expr.name in scope \
                and scope[e.expr.name].ctype.is_scalar:
            d = scope[e.expr.name]            # &x: the scalar variable x itself
            return Target((f"{SCALAR}{d.name}@{d.loc.line}:{d.loc.col}",), f"the address of '{d.name}' (line {d.loc.line})")
        if not isinstance(e, c_ast.ID) or e.name not in scope:
            return None
        return self._target(scope[e.name])


def _text(e: c_ast.Node | None) -> str | None:
    return None if e is None else _GEN.visit(e)


def _constant(e: c_ast.Node | None) -> int | None:
    """The value of an integer constant expression made of literals, + - * and parentheses (casts to int)."""
    if isinstance(e, c_ast.Constant) and e.type in ("int", "long int", "long long int", "unsigned int"):
        text = e.value.rstrip("uUlL")
        try:
            return int(text, 0) if not (text.startswith("0") and text[1:].isdigit()) else int(text, 8)
        except ValueError:
            return None
    if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+"):
        v = _constant(e.expr)
        return None if v is None else (-v if e.op == "-" else v)
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*"):
        a, b = _constant(e.left), _constant(e.right)
        if a is None or b is None:
            return None
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def _is_null(e: c_ast.Node) -> bool:
    while isinstance(e, c_ast.Cast):
        e = e.expr
    return isinstance(e, c_ast.Constant) and e.value in ("0", "0L", "0UL")



def _only_returned(body: c_ast.Node, name: str) -> bool:
    """`name` appears only as an assignment target, in `return name`, in a test (`!p`, `p == NULL`), freed, or
    indexed (`g[k] = malloc(...)` fills a new table: its slots, never a pointer into it, unless `&g[k]`)."""
    for n in _nodes(body):
        if isinstance(n, c_ast.UnaryOp) and n.op == "&" and not isinstance(n.expr, c_ast.ID) \
                and isinstance(root := _chain_root(n.expr), c_ast.ID) and root.name == name:
            return False
        for _, c in n.children():
            if not (isinstance(c, c_ast.ID) and c.name == name):
                continue
            if isinstance(n, c_ast.Return) or (isinstance(n, c_ast.Assignment) and n.lvalue is c) \
                    or (isinstance(n, c_ast.ArrayRef) and n.name is c) \
                    or (isinstance(n, c_ast.UnaryOp) and n.op == "!") \
                    or (isinstance(n, c_ast.BinaryOp) and n.op in ("==", "!=")) \
                    or isinstance(n, (c_ast.If, c_ast.Decl)):
                continue
            if isinstance(n, c_ast.UnaryOp) and n.op == "&":
                continue           # posix_memalign(&p, ...): the only call the allocator check accepts
            return False
    return True


def _param_index(fn: c_ast.FuncDef, param: c_ast.Node) -> int | None:
    params = fn.decl.type.args.params if fn.decl.type.args is not None else []
    for k, p in enumerate(params):
        if p is param:
            return k
    return None


def _array_base(e: c_ast.Node) -> c_ast.Node:
    while isinstance(e, c_ast.ArrayRef):
        e = e.name
    return e


def _depth(e: c_ast.Node) -> int:
    k = 0
    while isinstance(e, c_ast.ArrayRef):
        e, k = e.name, k + 1
    return k


def _levels(d: _Decl | None) -> int:
    return 0 if d is None else d.ctype.pointers + len(d.ctype.dims)


def _rows_in_place(d: _Decl | None) -> bool:
    """Whether indexing or dereferencing `d` short of an element stays in d's object: an array, or a pointer
    to arrays (`double (*A)[N]`), never a pointer to pointers (`double **a`: its rows are other objects)."""
    return d is not None and not d.ctype.pointer_rows and d.ctype.pointers <= 1 and (d.is_array or d.is_pointer)


def _names(e: c_ast.Node) -> set[str]:
    return {n.name for n in _nodes(e) if isinstance(n, c_ast.ID)}


def _chain(e: c_ast.Node) -> tuple[c_ast.Node, int]:
    """(what `e` indexes or dereferences, how many times): `u[a][b]` is (u, 2), `*p` is (p, 1), `x` is (x, 0)."""
    k = 0
    while isinstance(e, c_ast.ArrayRef) or (isinstance(e, c_ast.UnaryOp) and e.op == "*"):
        e, k = (e.name if isinstance(e, c_ast.ArrayRef) else e.expr), k + 1
    return e, k


def _chain_root(e: c_ast.Node) -> c_ast.Node:
    return _chain(e)[0]


def root_label(label: str) -> str:
    """The table a row's label (`row[k+0]:<table's label>`) comes from: rows of one table are told apart only by
    labels_apart."""
    while label.startswith(ROW):
        label = label[label.index("]:") + 2:]
    return label


def labels_apart(x: str, y: str) -> bool:
    """Whether two target labels (of one context) name different objects: different tables or objects, or two
    rows of one table whose subscripts differ by a constant (`row[k+0]:T` and `row[k-1]:T`)."""
    if root_label(x) != root_label(y):
        return True
    if not (x.startswith(ROW) and y.startswith(ROW)):
        return False
    kx, px = x[len(ROW):].split("]:", 1)
    ky, py = y[len(ROW):].split("]:", 1)
    if px != py:
        return False
    (vx, cx), (vy, cy) = _key_parts(kx), _key_parts(ky)
    return vx is not None and vx == vy and cx != cy


def _key_parts(key: str) -> tuple[str | None, int]:
    """("k", -1) for "k-1", ("", 3) for "3", (None, 0) for an unknown subscript "?"."""
    m = re.fullmatch(r"([A-Za-z_]\w*)?([+-]?\d+)", key)
    return (m.group(1) or "", int(m.group(2))) if m else (None, 0)


def _slot_key(sub: c_ast.Node, recent: dict[str, c_ast.Node]) -> str:
    """A row's subscript as a variable plus a constant ("k-1", "3"), through the value `recent` says a variable
    was last given (`j = k - 1`); "?" for anything else."""
    if isinstance(sub, c_ast.ID) and sub.name in recent:
        sub = recent[sub.name]
    c = _constant(sub)
    if c is not None:
        return str(c)
    if isinstance(sub, c_ast.ID):
        return f"{sub.name}+0"
    if isinstance(sub, c_ast.BinaryOp) and sub.op in ("+", "-") and isinstance(sub.left, c_ast.ID) \
            and (k := _constant(sub.right)) is not None:
        k = k if sub.op == "+" else -k
        return f"{sub.left.name}{k:+d}"
    return "?"


def _still_holding(recent: dict[str, c_ast.Node], item: c_ast.Node, scope: dict[str, "_Decl"]) -> dict[str, c_ast.Node]:
    """`recent` (variable -> the expression it was last assigned, see FileObjects._recent) after the block item
    `item`: entries whose variable or expression it may change are dropped (a write, `&`, or for a global, static
    or address-taken variable any call), and `v = e;` (e made of variables and constants with + and -) enters."""
    written, calls = set(), False
    for n in _nodes(item):
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            written.add(n.lvalue.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") and isinstance(n.expr, c_ast.ID):
            written.add(n.expr.name)
        elif isinstance(n, c_ast.Decl) and n.name:
            written.add(n.name)
        elif isinstance(n, c_ast.FuncCall):
            calls = True

    def exposed(name: str) -> bool:
        d = scope.get(name)
        return d is None or d.kind in ("global", "static") or d.address_taken

    out = {}
    for v, e in recent.items():
        names = {v} | {i.name for i in _nodes(e) if isinstance(i, c_ast.ID)}
        if names & written or (calls and any(exposed(x) for x in names)):
            continue
        out[v] = e
    if isinstance(item, c_ast.Assignment) and item.op == "=" and isinstance(item.lvalue, c_ast.ID) \
            and _slot_key(item.rvalue, {}) != "?":
        out[item.lvalue.name] = item.rvalue
    return out


_ANY_POINTEE = ("void", "char", "signed char", "unsigned char")    # slots of these may hold any row pointer


def _pointer_slot(e: c_ast.Node | None, scope: dict[str, _Decl]) -> tuple[str, int] | None:
    """(element type, pointer level) when `e` is an lvalue in memory that holds a pointer: an element of a table
    (`rows[k]` of `double **rows`, `u[a][b]` of `double ***u`, `*p` of `double **p`); ("*", 0) when c2gpu cannot
    tell what it holds (a subscript of a cast or of a struct member); None for anything else (an element of
    data, a variable, a struct member itself)."""
    e, k = _chain(e)
    if not isinstance(e, c_ast.ID):
        return ("*", 0) if k else None
    d = scope.get(e.name)
    if d is None or k == 0:
        return None if d is not None or k == 0 else ("*", 0)
    t = d.ctype
    first = len(t.dims) if t.pointer_rows else (len(t.dims) + 1 if t.dims and t.pointers else 0)
    levels = len(t.dims) + t.pointers
    if t.pointers == 0 or not (first <= k < levels) or (not t.pointer_rows and t.dims):
        return None
    return (t.base, levels - k)


def _table_passed(e: c_ast.Node | None, scope: dict[str, _Decl]) -> str | None:
    """The element type of a table of row pointers (level 2 or more) that the expression `e` hands over, or
    None when it hands over none (it names no table, or only its elements and rows)."""
    if e is None:
        return None
    if isinstance(e, c_ast.UnaryOp) and e.op == "&":
        # the address of a row pointer or of a table: through it the callee can store any pointer there
        inner = e.expr
        while isinstance(inner, c_ast.Cast):
            inner = inner.expr
        slot = _pointer_slot(inner, scope)
        if slot is not None and slot[0] != "*":
            return slot[0]
        d = scope.get(inner.name) if isinstance(inner, c_ast.ID) else None
        if d is not None and d.ctype.pointer_rows:
            return d.ctype.base
    root, depth = _chain(e)
    if isinstance(root, c_ast.ID):
        d = scope.get(root.name)
        if d is not None and d.ctype.pointer_rows:
            slot = _pointer_slot(e, scope) if depth else (d.ctype.base, 2)
            if slot is not None and slot[1] >= 2:
                return d.ctype.base
        node = e
        while node is not root:                  # the subscripts may name tables too
            if isinstance(node, c_ast.ArrayRef):
                found = _table_passed(node.subscript, scope)
                if found is not None:
                    return found
            node = node.name if isinstance(node, c_ast.ArrayRef) else node.expr
        return None
    for _, child in e.children():
        found = _table_passed(child, scope)
        if found is not None:
            return found
    return None


def _pointerish(e: c_ast.Node, scope: dict[str, _Decl]) -> bool:
    while isinstance(e, c_ast.Cast):
        e = e.expr
    d = scope.get(e.name) if isinstance(e, c_ast.ID) else None
    return d is not None and _rows_in_place(d)


def distinct_objects(a: ArrayInfo, b: ArrayInfo) -> bool:
    """Whether the whole file shows `a` and `b` are, or point into, different objects in every context
    (c2gpu/frontend/objects.py: one label per call of the function for a parameter, one for anything else)."""
    if a.target is None or b.target is None:
        return False
    n = max(len(a.target), len(b.target))
    if {len(a.target), len(b.target)} - {1, n}:
        return False
    return all(labels_apart(x, y) for x, y in zip(a.target * (n // len(a.target)), b.target * (n // len(b.target))))
