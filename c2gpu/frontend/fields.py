"""Struct fields as the scalars and arrays they are: `v->n`, `v->a[i]`, `s.scale`.

C written for real programs keeps sizes and arrays in structs (`for (i = 0; i < v->n; i++) v->b[i] += v->s *
v->a[i];`).  A field reached from a variable that the nest never reassigns names one object in every
iteration: `v->n` is a scalar, `v->a` a pointer, `s.x` an array.  Before a nest is described, each such field
access is renamed to a variable of its own (`v__n`, `v__a`) of the field's type, and the nest keeps what each
stands for (`Nest.stands_for`), so that the port passes `v->n` and `v->a` where the nest ran; everything else
(dependences, aliasing, transfers, kernels) sees ordinary variables.

What this does not cover stays a flagged struct access: a field written as a scalar (`v->n = 0`), a field
whose address is taken, a base the nest reassigns (`p = p->next`), fields of fields (`s.a.b`), arrays of
structs (`p[i].x`).  A scalar field lives in memory a pointer may reach, so it is treated like a global: a
write through a pointer that may point to it blocks the proof (passes/dependence.py); two pointer fields may
alias like two pointer parameters.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from .ctypes import SIZES, CType, decl_type


def struct_fields(ast: c_ast.FileAST, typedefs: dict[str, CType]) -> dict[str, dict[str, CType]]:
    """'struct X' -> field name -> type, for every struct of the file with its fields declared; an anonymous
    struct is known by the typedef that names it ('struct vec' for `typedef struct {...} vec;`)."""
    out: dict[str, dict[str, CType]] = {}
    stack: list[tuple[c_ast.Node, str | None]] = [(ext, None) for ext in ast.ext]
    while stack:
        node, alias = stack.pop()
        if isinstance(node, c_ast.Struct) and node.decls:
            key = f"struct {node.name or alias or '?'}"
            out.setdefault(key, {d.name: decl_type(d, typedefs) for d in node.decls if d.name})
        for _, child in node.children():
            stack.append((child, node.name if isinstance(node, c_ast.Typedef) else alias
                          if isinstance(node, (c_ast.TypeDecl, c_ast.Struct)) else None))
    return out


def _parents(node: c_ast.Node) -> dict[int, c_ast.Node]:
    out, stack = {}, [node]
    while stack:
        n = stack.pop()
        for _, child in n.children():
            out[id(child)] = n
            stack.append(child)
    return out


def _written(ref: c_ast.Node, up: c_ast.Node | None) -> bool:
    """Whether the expression `ref` is assigned, incremented or has its address taken where it stands."""
    if isinstance(up, c_ast.Assignment) and up.lvalue is ref:
        return True
    return isinstance(up, c_ast.UnaryOp) and up.op in ("++", "--", "p++", "p--", "&")


def _arithmetic(t: CType) -> bool:
    return t.base in SIZES and not t.pointer_rows


def renamed(node: c_ast.For, lookup, structs: dict[str, dict[str, CType]], taken: set[str]):
    """(a copy of `node` with each field access it can rename replaced by an identifier, {identifier: (type,
    the C expression it stands for, where first seen)}), or (node, {}) when there is nothing to rename.

    lookup: C name -> the variable's CType (None when not declared); taken: identifiers already in use."""
    parents = _parents(node)
    refs = [n for n in _nodes(node) if isinstance(n, c_ast.StructRef)]
    if not refs:
        return node, {}
    reassigned = {n.name for n in _nodes(node) if isinstance(n, c_ast.ID) and _written(n, parents.get(id(n)))}
    chosen: dict[tuple[str, str, str], CType] = {}
    refused: set[tuple[str, str, str]] = set()
    for r in refs:
        if not isinstance(r.name, c_ast.ID) or r.name.name in reassigned:
            continue
        t = lookup(r.name.name)
        fields = structs.get(t.base) if t is not None else None
        if fields is None or t.dims or t.pointers != (1 if r.type == "->" else 0) or r.field.name not in fields:
            continue
        key = (r.name.name, r.type, r.field.name)
        ftype = fields[r.field.name]
        usable = _arithmetic(ftype) and (ftype.is_scalar or ftype.pointers + len(ftype.dims) >= 1)
        if not usable or _written(r, parents.get(id(r))):
            refused.add(key)
        else:
            chosen[key] = ftype
    chosen = {k: v for k, v in chosen.items() if k not in refused}
    if not chosen:
        return node, {}
    names: dict[tuple[str, str, str], str] = {}
    out: dict[str, tuple[CType, str, c_ast.Node]] = {}
    new = copy.deepcopy(node)
    for r in [n for n in _nodes(new) if isinstance(n, c_ast.StructRef)]:
        if not isinstance(r.name, c_ast.ID):
            continue
        key = (r.name.name, r.type, r.field.name)
        if key not in chosen:
            continue
        if key not in names:
            name = f"{key[0]}__{key[2]}"
            while name in taken:
                name += "_"
            taken.add(name)
            names[key] = name
            out[name] = (chosen[key], f"{key[0]}{key[1]}{key[2]}", r)
        _swap(new, r, c_ast.ID(names[key], coord=r.coord))
    return new, out


def _swap(root: c_ast.Node, old: c_ast.Node, new: c_ast.Node) -> None:
    """Replace `old` under `root` by `new`, in place."""
    for n in _nodes(root):
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


def _nodes(node: c_ast.Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for _, c in n.children())
