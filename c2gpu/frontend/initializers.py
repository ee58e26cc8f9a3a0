"""Arrays initialized where a nest declares them, read as assignments of their elements.

    for (i = 1; i < n - 1; i++) {                  for (i = 1; i < n - 1; i++) {
      const float w[3] = {0.25f, 0.5f, 0.25f};  ->     float w[3];
      out[i] = w[0] * in[i - 1] + ...;                 w[0] = 0.25f; w[1] = 0.5f; w[2] = 0.25f;
    }                                                  out[i] = w[0] * in[i - 1] + ...;

An automatic array declared in a loop's body is a new object in every iteration, and its initializer runs each
time the declaration is reached: the same as a declaration without one followed by an assignment of every element
in row-major order, those the list leaves out set to 0 (C11 6.7.9, paragraphs 10 and 21).  Written that way, the
array is one the analysis already follows (a private copy per thread, its reads covered by the writes of the same
iteration), and the port runs the assignments in each thread.  Only where that reading is exact and small: an
array of scalars of constant extents, automatic, of at most MAX_ELEMENTS elements, initialized by a brace list of
expressions without side effects, either flat (row-major, C's brace elision) or braced at every level; no
designators, no string literal.  `const` goes (its elements are assigned once, then only read).
"""
from __future__ import annotations

from math import prod

from pycparser import c_ast

from .syntax import has_side_effect, nodes

MAX_ELEMENTS = 64          # more would be a long run of assignments in every iteration: left as it is


def expanded(root: c_ast.Node) -> list[tuple[c_ast.Compound, int, c_ast.Decl, list[c_ast.Node]]]:
    """(block, index of the declaration in it, the declaration, its assignments) of each array declaration under
    `root` whose initializer reads as assignments (module doc)."""
    out = []
    for block in (n for n in nodes(root) if isinstance(n, c_ast.Compound)):
        for k, item in enumerate(block.block_items or []):
            if isinstance(item, c_ast.Decl) and (stores := _assignments(item)) is not None:
                out.append((block, k, item, stores))
    return out


def rewrite(root: c_ast.Node) -> list[str]:
    """Rewrite, in place, each declaration `expanded` finds as one without initializer followed by its assignments;
    a note for each."""
    notes = []
    for block, k, decl, stores in reversed(expanded(root)):   # from the last: the indices stay right
        decl.init = None
        if decl.type.dim is None:                         # `int w[] = {...}`: its size, from the list
            decl.type.dim = c_ast.Constant("int", str(len(stores) // _row(decl)), coord=decl.coord)
        for n in nodes(decl.type):
            if isinstance(n, c_ast.TypeDecl):
                n.quals = [q for q in n.quals if q != "const"]
        decl.quals = [q for q in decl.quals if q != "const"]
        block.block_items[k + 1:k + 1] = stores
        notes.append(f"'{decl.name}' (line {decl.coord.line if decl.coord else 0}) is initialized where it is "
                     f"declared: read as the assignment of its {len(stores)} elements")
    return notes[::-1]


def _assignments(decl: c_ast.Decl) -> list[c_ast.Node] | None:
    if not isinstance(decl.type, c_ast.ArrayDecl) or not isinstance(decl.init, c_ast.InitList) \
            or {"static", "extern", "register"} & set(decl.storage or ()) or not decl.name:
        return None
    dims, t = [], decl.type
    while isinstance(t, c_ast.ArrayDecl):
        if t.dim is not None and _extent(t.dim) is None:
            return None                                   # an extent c2gpu cannot read as a constant
        dims.append(_extent(t.dim))
        t = t.type
    if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
        return None                                       # an array of pointers or of structs
    values = _values(decl.init, dims)
    if values is None or any(d is None for d in dims[1:]):
        return None
    if dims[0] is None:                                   # `int w[] = {...}`: as many rows as the list fills
        dims[0] = -(-len(values) // prod(dims[1:]))
    total = prod(dims)
    if not 0 < total <= MAX_ELEMENTS or len(values) > total:
        return None
    stores = []
    for flat in range(total):
        index, rest = [], flat
        for d in reversed(dims):
            index.append(rest % d)
            rest //= d
        ref = c_ast.ID(decl.name, coord=decl.coord)
        for i in reversed(index):
            ref = c_ast.ArrayRef(ref, c_ast.Constant("int", str(i), coord=decl.coord), coord=decl.coord)
        value = values[flat] if flat < len(values) else c_ast.Constant("int", "0", coord=decl.coord)
        stores.append(c_ast.Assignment("=", ref, value, coord=decl.coord))
    return stores


def _row(decl: c_ast.Decl) -> int:
    """The elements of one row of the array (the product of its extents after the first)."""
    t, n = decl.type.type, 1
    while isinstance(t, c_ast.ArrayDecl):
        n *= _extent(t.dim)
        t = t.type
    return n


def _extent(dim: c_ast.Node | None) -> int | None:
    if isinstance(dim, c_ast.Constant) and dim.type == "int":
        try:
            value = int(dim.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
        return value if value > 0 else None
    return None


def _values(init: c_ast.InitList, dims: list[int | None]) -> list[c_ast.Node] | None:
    """The initializer's values in row-major order (those left out not included): a flat list, or one braced at
    every level with no more entries than each extent; None for anything else."""
    exprs = init.exprs or []
    if all(not isinstance(e, (c_ast.InitList, c_ast.NamedInitializer)) for e in exprs):
        return None if any(_not_plain(e) for e in exprs) else list(exprs)   # flat: brace elision
    if len(dims) < 2 or not all(isinstance(e, c_ast.InitList) for e in exprs) \
            or (dims[0] is not None and len(exprs) > dims[0]):
        return None
    row = prod(dims[1:]) if all(d is not None for d in dims[1:]) else None
    if row is None:
        return None
    out: list[c_ast.Node] = []
    for sub in exprs:
        inner = _values(sub, dims[1:])
        if inner is None or len(inner) > row or (len(dims) > 2 and not _braced(sub)):
            return None
        out.extend(inner + [c_ast.Constant("int", "0", coord=sub.coord)] * (row - len(inner)))
    return out


def _braced(sub: c_ast.InitList) -> bool:
    """Whether a sub-array's list is itself braced at every level (no brace elision inside)."""
    return all(isinstance(e, c_ast.InitList) for e in sub.exprs or [])


def _not_plain(e: c_ast.Node) -> bool:
    """A value that is not an expression without side effects (a string literal, a call, an assignment)."""
    return (isinstance(e, c_ast.Constant) and e.type == "string") or has_side_effect(e)
