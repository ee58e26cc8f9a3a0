"""Row pointers: a pointer declared in the nest's body from an array or a pointer, and then only indexed, read as
what it points into.

    for (i = 0; i < n; i++) {                      for (i = 0; i < n; i++) {
      const float *row = A + (long)i * m;    ->      for (j = 0; j < m; j++)
      for (j = 0; j < m; j++)                          s += A[(long)i * m + j] * x[j];
        s += row[j] * x[j];                        ...
      ...

A pointer declared before the nest the same way (`const float *row = A;`), which the function assigns nowhere
else (its steps in the nest, if any, already read as offsets: frontend/inductions.py), is read the same way in
the nest, when neither the array nor the offset is assigned anywhere in the function.

Left as it is, `row` is a local pointer of every iteration, an object c2gpu does not follow: the loop is not
proven.  `row[k]` is `*(A + e + k)`, which is `A[e + k]`; `double *r = B[i];` (a row of a two-dimensional array)
makes `r[k]` `B[i][k]`.  The rewrite is exact when what the declaration reads is what the uses read: the pointer
is one level deep and points to the type the array holds (no cast), it is never assigned, stepped or has its
address taken, every use is `p[k]` or `*p` in the rest of its block, the array is not assigned in the nest (an
array, or a pointer that is a local or parameter whose address is never taken), and the offset and subscripts
read only constants and locals or parameters the nest does not write (its loop variables included: only their
headers step them) and whose address is never taken.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast, c_generator

from .inductions import _plain, _written_names
from .syntax import nodes as _nodes


def resolve_row_pointers(loop: c_ast.For, lookup, address_taken, ctype_of) -> tuple[c_ast.For, list[str]]:
    """`loop` with its row pointers replaced by what they point into (a new tree), and a note for each; `loop`
    itself and no note when there is none.  lookup(name) -> the frontend's Var or None; address_taken: names
    whose address the function takes; ctype_of(decl) -> the CType a declaration declares."""
    if not _rows(loop, lookup, address_taken, ctype_of):
        return loop, []
    new = copy.deepcopy(loop)
    notes = []
    while rows := _rows(new, lookup, address_taken, ctype_of):      # one per block each time
        for block, k, name, base in rows:
            decl = block.block_items[k]
            for item in block.block_items[k + 1:]:
                replace_uses(item, name, base)
            del block.block_items[k]
            line = decl.coord.line if decl.coord else 0
            notes.append(f"'{name}' (line {line}) is always {_text(decl.init)}: the nest reads {name}[...] as "
                         f"{_text(_indexed(base, c_ast.ID('...')))}")
    return new, notes


def resolve_entry_pointers(loop: c_ast.For, writes: "FunctionWrites", original: c_ast.Node, lookup, address_taken,
                           ctype_of) -> tuple[c_ast.For, list[str]]:
    """`loop` with the pointers declared before it into an array (module doc) read as that array's elements (a
    new tree), and a note for each.  `writes` is what the function declares and writes (function_writes, once
    per function), `original` the nest as written in it (where the pointer's steps were)."""
    uses = [n for n in _nodes(loop.stmt) if isinstance(n, c_ast.ID)]
    in_loop = _written(loop.stmt)
    # the tests on the name alone first: most nests use no pointer that could qualify, and the rest reads the
    # whole function
    names = [name for name in sorted({n.name for n in uses})
             if (v := lookup(name)) is not None and v.storage == "local" and v.ctype.pointers == 1
             and name not in address_taken and name not in in_loop]
    if not names:
        return loop, []
    inside = {id(n) for n in _nodes(original)}
    parents = {id(c): n for n in _nodes(loop.stmt) for _, c in n.children()}
    chosen = {}
    for name in names:
        decls = writes.decls.get(name, [])
        if len(decls) != 1 or id(decls[0]) in inside or any(site not in inside for site in writes.sites.get(name, ())):
            continue
        decl = decls[0]
        mine = ctype_of(decl)
        if decl.init is None or not isinstance(decl.type, c_ast.PtrDecl) or mine is None or mine.pointers != 1:
            continue
        base = _base(decl.init, lookup, address_taken, writes.everywhere, set(), set())
        target = lookup(base[0]) if base is not None else None
        if base is None or target is None or target.ctype.base != mine.base:
            continue
        if all(_indexed_use(n, parents.get(id(n))) for n in uses if n.name == name):
            chosen[name] = (decl, base)
    if not chosen:
        return loop, []
    new = copy.deepcopy(loop)
    notes = []
    for name, (decl, base) in chosen.items():
        replace_uses(new.stmt, name, base)
        line = decl.coord.line if decl.coord else 0
        notes.append(f"'{name}' is {_text(decl.init)} where the nest starts (line {line}; the function assigns it "
                     f"nowhere else): the nest reads {name}[...] as {_text(_indexed(base, c_ast.ID('...')))}")
    return new, notes


@dataclass(frozen=True)
class FunctionWrites:
    """What resolve_entry_pointers reads of a whole function, once per function: its declarations by name, the
    nodes that assign, step or take the address of each name (by id), and the names written anywhere outside
    its loops' headers or address-taken."""
    decls: dict[str, list[c_ast.Decl]]
    sites: dict[str, list[int]]
    everywhere: frozenset[str]


def function_writes(fn: c_ast.FuncDef) -> FunctionWrites:
    decls: dict[str, list[c_ast.Decl]] = {}
    sites: dict[str, list[int]] = {}
    for n in _nodes(fn.body):
        if isinstance(n, c_ast.Decl) and n.name:
            decls.setdefault(n.name, []).append(n)
        for name in _written_names([n]):
            sites.setdefault(name, []).append(id(n))
    addressed = {n.expr.name for n in _nodes(fn.body) if isinstance(n, c_ast.UnaryOp) and n.op == "&"
                 and isinstance(n.expr, c_ast.ID)}
    return FunctionWrites(decls, sites, frozenset(_written(fn.body) | addressed))


def _written_outside(body: c_ast.Node, inside: set[int]) -> set[str]:
    """Names assigned, stepped or address-taken in `body` outside the nodes `inside` (loop headers included)."""
    return _written_names([n for n in _nodes(body) if id(n) not in inside])


def _rows(loop: c_ast.For, lookup, address_taken, ctype_of) -> list[tuple[c_ast.Compound, int, str, tuple]]:
    """(block, index of the declaration in it, pointer name, how an index of it reads the array) of each row
    pointer of the loop (module doc), one per block at most (the others are found in a later pass)."""
    everything = list(_nodes(loop.stmt))
    written = _written(loop.stmt)
    # the loops' own variables: stepped by their headers only, fixed in each iteration of their bodies
    counters = {d.name for n in [loop, *everything] if isinstance(n, c_ast.For) and isinstance(n.init, c_ast.DeclList)
                for d in n.init.decls}
    declared = {n.name for n in everything if isinstance(n, c_ast.Decl) and n.name} - counters
    out = []
    for block in (n for n in everything if isinstance(n, c_ast.Compound)):
        items = block.block_items or []
        for k, item in enumerate(items):
            if not (isinstance(item, c_ast.Decl) and item.init is not None and isinstance(item.type, c_ast.PtrDecl)
                    and isinstance(item.type.type, c_ast.TypeDecl)
                    and isinstance(item.type.type.type, c_ast.IdentifierType)):
                continue
            name = item.name
            base = _base(item.init, lookup, address_taken, written, declared, counters)
            if base is None or name in address_taken or name in written:
                continue
            target = lookup(base[0])
            mine = ctype_of(item)
            if mine is None or mine.pointers != 1 or target is None or target.ctype.base != mine.base:
                continue
            rest = [n for it in items[k + 1:] for n in _nodes(it)]
            if any(isinstance(n, c_ast.Decl) and n.name == name for n in rest):
                continue                                    # a declaration of the same name hides it
            parents = {id(c): n for it in items[k + 1:] for n in _nodes(it) for _, c in n.children()}
            if all(_indexed_use(n, parents.get(id(n))) for n in rest if isinstance(n, c_ast.ID) and n.name == name):
                out.append((block, k, name, base))
                break
    return out


def _base(init: c_ast.Node, lookup, address_taken, written: set[str], declared: set[str],
          counters: set[str]) -> tuple | None:
    """(array name, subscripts that select a row, offset and its sign) of an initializer `A`, `A + e`, `e + A`,
    `A - e` or `B[i]` (a row of a two-dimensional array); None for any other."""
    def fixed(e) -> bool:      # reads constants, the loops' variables, and locals or parameters the nest never writes
        if not _plain(e):
            return False
        for n in _nodes(e):
            if isinstance(n, c_ast.ID) and n.name not in counters:
                v = lookup(n.name)
                if n.name in written or n.name in declared or n.name in address_taken or v is None \
                        or v.storage not in ("local", "param"):
                    return False
        return True

    def array(n) -> str | None:
        if not isinstance(n, c_ast.ID) or n.name in written or n.name in declared:
            return None
        v = lookup(n.name)
        if v is None:
            return None
        t = v.ctype
        if len(t.dims) == 1 and not t.pointers:
            return n.name                               # an array: never reassigned
        if t.pointers == 1 and not t.dims and not t.pointer_rows and v.storage in ("local", "param", "param-pointer") \
                and n.name not in address_taken:
            return n.name
        return None

    if isinstance(init, c_ast.ID):
        return (name, (), None, "+") if (name := array(init)) else None
    if isinstance(init, c_ast.BinaryOp) and init.op in ("+", "-"):
        for a, e in ((init.left, init.right), (init.right, init.left) if init.op == "+" else (None, None)):
            if a is not None and (name := array(a)) and fixed(e):
                return name, (), e, init.op
        return None
    if isinstance(init, c_ast.ArrayRef):
        subs = []
        node = init
        while isinstance(node, c_ast.ArrayRef):
            subs.insert(0, node.subscript)
            node = node.name
        if not isinstance(node, c_ast.ID) or node.name in written or node.name in declared:
            return None
        v = lookup(node.name)
        if v is None or v.ctype.pointers or len(v.ctype.dims) != len(subs) + 1 or not all(map(fixed, subs)):
            return None
        return node.name, tuple(subs), None, "+"
    return None


def _indexed(base: tuple, index: c_ast.Node, at: c_ast.Node | None = None) -> c_ast.ArrayRef:
    """The array element `p[index]` is, for a pointer p of `base` (array, row subscripts, offset, its sign):
    `A[index + e]`; the new nodes at the source position of `at`, the use they replace (its diagnostics
    point there)."""
    name, subs, offset, op = base
    coord = at.coord if at is not None else None
    node: c_ast.Node = c_ast.ID(name, coord=coord)
    for s in subs:
        node = c_ast.ArrayRef(node, copy.deepcopy(s), coord=coord)
    if offset is not None:
        index = c_ast.BinaryOp(op, index, copy.deepcopy(offset), coord=index.coord)
    return c_ast.ArrayRef(node, index, coord=coord)


def _indexed_use(n: c_ast.ID, up: c_ast.Node | None) -> bool:
    return isinstance(up, c_ast.ArrayRef) and up.name is n or isinstance(up, c_ast.UnaryOp) and up.op == "*"


def replace_uses(root: c_ast.Node, name: str, base: tuple) -> None:
    """Every `p[k]` and `*p` of the row pointer `name` in `root` as the element it is (in place)."""
    for n in list(_nodes(root)):
        for attr in n.__slots__:
            child = getattr(n, attr, None)
            new = _element(child, name, base)
            if new is not None:
                setattr(n, attr, new)
            elif isinstance(child, list):
                for j, c in enumerate(child):
                    new = _element(c, name, base)
                    if new is not None:
                        child[j] = new


def _element(node, name: str, base: tuple) -> c_ast.Node | None:
    if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID) and node.name.name == name:
        return _indexed(base, node.subscript, node)
    if isinstance(node, c_ast.UnaryOp) and node.op == "*" and isinstance(node.expr, c_ast.ID) and node.expr.name == name:
        return _indexed(base, c_ast.Constant("int", "0", coord=node.coord), node)
    return None


def _written(body: c_ast.Node) -> set[str]:
    """Names the body assigns, steps or takes the address of, outside the headers of its loops (a loop's
    variable is written by its own header only, and stays fixed in each iteration of its body)."""
    headers = {id(x) for n in _nodes(body) if isinstance(n, c_ast.For) for part in (n.init, n.next)
               if part is not None for x in _nodes(part)}
    return _written_outside(body, headers)


def _text(node: c_ast.Node) -> str:
    return c_generator.CGenerator().visit(node)
