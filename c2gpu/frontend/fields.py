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
write through a pointer that may point to it blocks the proof (c2gpu/passes/dependence.py); two pointer fields may
alias like two pointer parameters.
"""
from __future__ import annotations

import re

from pycparser import c_ast, c_generator

from .ctypes import SIZES, CType, decl_type
from .syntax import _array_chain, changed_here, copy_tree, nodes as _nodes, swap

_GEN = c_generator.CGenerator()


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


def _arithmetic(t: CType) -> bool:
    return t.base in SIZES and not t.pointer_rows


def renamed(node: c_ast.For, lookup, structs: dict[str, dict[str, CType]], taken: set[str],
            own_struct=lambda name: False):
    """(a copy of `node` with each field access it can rename replaced by an identifier, {identifier: (type,
    the C expression it stands for, where first seen, whether the nest writes it)}), or (node, {}) when there
    is nothing to rename.

    lookup: C name -> the variable's CType (None when not declared); taken: identifiers already in use;
    own_struct: whether a name is a struct variable of the function that nothing but its own name reaches (an
    automatic variable declared outside the nest, its address never taken) and that nothing reads after the
    nest: its scalar fields are scalars of their own, which the nest may write (FT's `dcomplex u1`, set in each
    iteration by `u1.real = u[ku+i].real`), when the nest uses it only through its fields."""
    parents = _parents(node)
    refs = [n for n in _nodes(node) if isinstance(n, c_ast.StructRef)]
    if not refs:
        return node, {}
    reassigned = {n.name for n in _nodes(node) if isinstance(n, c_ast.ID) and changed_here(n, parents.get(id(n)))}
    whole = {n.name for n in _nodes(node) if isinstance(n, c_ast.ID)
             and not (isinstance(parents.get(id(n)), c_ast.StructRef) and parents[id(n)].name is n
                      and parents[id(n)].type == ".")}
    declared = {n.name for n in _nodes(node) if isinstance(n, c_ast.Decl)}
    written: set[tuple[str, str, str]] = set()
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
        if usable and changed_here(r, parents.get(id(r))):
            usable = ftype.is_scalar and r.type == "." and key[0] not in whole | declared and own_struct(key[0])
            written.add(key)
        if not usable:
            refused.add(key)
        else:
            chosen[key] = ftype
    chosen = {k: v for k, v in chosen.items() if k not in refused}
    if not chosen:
        return node, {}
    names: dict[tuple[str, str, str], str] = {}
    out: dict[str, tuple[CType, str, c_ast.Node]] = {}
    new = copy_tree(node)
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
            out[name] = (chosen[key], f"{key[0]}{key[1]}{key[2]}", r, key in written)
        swap(new, r, c_ast.ID(names[key], coord=r.coord))
    return new, out


def invariant_elements(node: c_ast.For, lookup, taken: set[str]):
    """(a copy of `node` with each array element the nest reads but never writes, read in a loop's header or in
    another access's subscript, replaced by an identifier; {identifier: (type, the C expression it stands for,
    where first seen)}), or (node, {}) when there is none.

    `for (i = 1; i < grid_points[0] - 1; i++)` (NPB's BT and SP), `x[d[0]]`, `dims[2][k]` with k unchanged, `*nzv`
    (the element `nzv[0]`: a size passed by address, as f2c and NPB's CG pass them): the
    element is a value the nest reads at its entry, a symbolic parameter like `n` (`grid_points__0`), and the port
    passes `grid_points[0]` where the nest ran.  Only an integer element of an array the nest never writes, never
    passes to a function and never takes the address of, whose subscripts are constants and variables the nest
    does not assign.  The element lives in memory a pointer may reach, so it is treated like a global: a write
    through a pointer that may point to it blocks the proof (c2gpu/passes/dependence.py).

    lookup: C name -> the variable's CType (None when not declared); taken: identifiers already in use."""
    parents = _parents(node)
    nodes = list(_nodes(node))
    assigned = {n.name for n in nodes if isinstance(n, c_ast.ID) and changed_here(n, parents.get(id(n)))}
    declared = {n.name for n in nodes if isinstance(n, c_ast.Decl) and n.name}
    touched = set()             # arrays the nest writes, passes on or takes the address of
    for n in nodes:
        if isinstance(n, (c_ast.ArrayRef, c_ast.UnaryOp)) and changed_here(n, parents.get(id(n))):
            base = _base(n.expr if isinstance(n, c_ast.UnaryOp) and n.op == "*" else n)
            if base is not None:
                touched.add(base)
        if isinstance(n, c_ast.UnaryOp) and n.op in ("&", "*"):
            base = _base(n.expr)
            if base is not None and (n.op == "&" or changed_here(n, parents.get(id(n)))):
                touched.add(base)
        if isinstance(n, c_ast.FuncCall) and n.args is not None:
            # (an element passed by value, `f(d[0])`, passes no memory: the callee cannot write `d`)
            touched.update(b for a in n.args.exprs if (b := _base(a)) is not None and not _element_value(a, lookup))

    def invariant(e: c_ast.Node) -> bool:
        if isinstance(e, c_ast.Constant):
            return e.type in ("int", "long int", "long long int", "unsigned int", "char")
        if isinstance(e, c_ast.ID):
            t = lookup(e.name)
            return e.name not in assigned and e.name not in declared and t is not None and t.is_integer
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*"):
            return invariant(e.left) and invariant(e.right)
        return isinstance(e, c_ast.UnaryOp) and e.op == "-" and invariant(e.expr)

    def wanted_context(ref: c_ast.Node) -> bool:
        """In a loop's header, or in a subscript of another access."""
        child, up = ref, parents.get(id(ref))
        while up is not None:
            if isinstance(up, c_ast.For) and child is not up.stmt:
                return True
            if isinstance(up, c_ast.ArrayRef) and child is up.subscript:
                return True
            child, up = up, parents.get(id(up))
        return False

    chosen: dict[str, CType] = {}
    for ref in nodes:
        if not _element_ref(ref, parents):
            continue
        base, subs = _element_chain(ref)
        if not isinstance(base, c_ast.ID) or base.name in touched or base.name in assigned or base.name in declared:
            continue
        t = lookup(base.name)
        if t is None or t.pointer_rows or not t.base or t.base not in SIZES or t.base in ("float", "double",
                                                                                          "long double"):
            continue
        if len(subs) != len(t.dims) + t.pointers or not all(invariant(s) for s in subs):
            continue
        if not wanted_context(ref):
            continue
        chosen[_GEN.visit(ref)] = CType(t.base)
    if not chosen:
        return node, {}
    names: dict[str, str] = {}
    out: dict[str, tuple[CType, str, c_ast.Node]] = {}
    new = copy_tree(node)
    new_parents = _parents(new)
    for ref in [n for n in _nodes(new) if _element_ref(n, new_parents)]:
        text = _GEN.visit(ref)
        if text not in chosen:
            continue
        if text not in names:
            spelled = f"{ref.expr.name}[0]" if isinstance(ref, c_ast.UnaryOp) else text     # *nzv is nzv__0
            name = "__".join(filter(None, re.split(r"\W+", spelled)))
            while name in taken:
                name += "_"
            taken.add(name)
            names[text] = name
            out[name] = (chosen[text], text, ref)
        swap(new, ref, c_ast.ID(names[text], coord=ref.coord))
    return new, out


def _element_ref(ref: c_ast.Node, parents: dict[int, c_ast.Node]) -> bool:
    """Whether `ref` is a whole access of an element: the outermost ArrayRef of a chain `a[i][j]` (an inner level
    is part of it), or `*p` with `p` a variable (`p[0]`: NPB CG's `for (k = 1; k <= *nzv; k++)`)."""
    if isinstance(ref, c_ast.UnaryOp):
        return ref.op == "*" and isinstance(ref.expr, c_ast.ID)
    up = parents.get(id(ref))
    return isinstance(ref, c_ast.ArrayRef) and not (isinstance(up, c_ast.ArrayRef) and up.name is ref)


def _element_chain(ref: c_ast.Node) -> tuple[c_ast.Node, list[c_ast.Node]]:
    """(the base of an element access, its subscripts): `a[i][j]` -> (a, [i, j]); `*p` -> (p, [0])."""
    if isinstance(ref, c_ast.UnaryOp):
        return ref.expr, [c_ast.Constant("int", "0")]
    return _array_chain(ref)


def _element_value(e: c_ast.Node, lookup) -> bool:
    """Whether `e` is one element of an array of scalars, `d[0]` or `a[i][j]`, all its subscripts given: a value."""
    subs, base = 0, e
    while isinstance(base, c_ast.ArrayRef):
        subs, base = subs + 1, base.name
    t = lookup(base.name) if isinstance(base, c_ast.ID) and subs else None
    return t is not None and not t.pointer_rows and subs == len(t.dims) + t.pointers and t.base in SIZES


def _base(e: c_ast.Node | None) -> str | None:
    """The variable an lvalue or pointer expression is an element of, through subscripts, casts and + k."""
    while True:
        if isinstance(e, c_ast.ArrayRef):
            e = e.name
        elif isinstance(e, c_ast.Cast):
            e = e.expr
        elif isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            e = e.left
        elif isinstance(e, c_ast.UnaryOp) and e.op in ("&", "*"):
            e = e.expr
        else:
            return e.name if isinstance(e, c_ast.ID) else None
