"""Syntax trees the transforms build: isl's AST as pycparser nodes, for the frontend to describe again.

The rescheduled loops (schedule.py) and the wavefronts (wavefront.py) are new C around the statements of the
nest; they are built here as syntax trees, node by node, never written as text and parsed back.
"""
from __future__ import annotations

import copy
from typing import Callable

import islpy as isl
from pycparser import c_ast

_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pdiv_q": "/", "pdiv_r": "%", "zdiv_r": "%",
           "eq": "==", "le": "<=", "lt": "<", "ge": ">=", "gt": ">", "and_": "&&", "and_then": "&&",
           "or_": "||", "or_else": "||"}


def integer(v: int) -> c_ast.Node:
    """The literal `v` (a negative one as C spells it: minus applied to a literal)."""
    return c_ast.Constant("int", str(v)) if v >= 0 else c_ast.UnaryOp("-", c_ast.Constant("int", str(-v)))


def isl_expr(e, name: Callable[[str], str] = lambda n: n) -> c_ast.Node:
    """An isl AST expression as plain C (min, max and floor division as conditionals: the frontend reads
    `a < b ? a : b` as a bound, and no C header defines isl's `floord`); `name` spells isl's identifiers."""
    t = e.get_type()
    if t == isl.ast_expr_type.id:
        return c_ast.ID(name(e.get_id().get_name()))
    if t == isl.ast_expr_type.int:
        return integer(int(e.get_val().to_python()))
    op = e.get_op_type().name
    args = [isl_expr(e.get_op_arg(k), name) for k in range(e.get_op_n_arg())]
    if op in _BINARY:
        out = args[0]
        for a in args[1:]:
            out = c_ast.BinaryOp(_BINARY[op], out, a)
        return out
    if op == "minus":
        return c_ast.UnaryOp("-", args[0])
    if op in ("min", "max"):
        out = args[0]
        for a in args[1:]:
            out = c_ast.TernaryOp(c_ast.BinaryOp("<" if op == "min" else ">", out, a), copy.deepcopy(out),
                                  copy.deepcopy(a))
        return out
    if op == "fdiv_q":             # rounds toward minus infinity; the divisor is a positive constant
        a, d = args
        up = c_ast.BinaryOp("-", c_ast.BinaryOp("+", c_ast.UnaryOp("-", copy.deepcopy(a)), copy.deepcopy(d)),
                            integer(1))
        return c_ast.TernaryOp(c_ast.BinaryOp(">=", a, integer(0)), c_ast.BinaryOp("/", copy.deepcopy(a), d),
                               c_ast.UnaryOp("-", c_ast.BinaryOp("/", up, copy.deepcopy(d))))
    if op in ("cond", "select"):
        return c_ast.TernaryOp(*args)
    raise ValueError(f"isl expression '{op}' has no C form here")


def declaration(var: str, ctype: str, init: c_ast.Node, const: bool = False) -> c_ast.Decl:
    """`[const] ctype var = init;`"""
    quals = ["const"] if const else []
    return c_ast.Decl(var, list(quals), [], [], [], c_ast.TypeDecl(var, list(quals), None,
                                                                     c_ast.IdentifierType(ctype.split())), init, None)


def replace_node(node: c_ast.Node, old: c_ast.Node, new: c_ast.Node) -> c_ast.Node:
    """`node` with `old` (somewhere under it) replaced by `new`: the nodes on the way are copies."""
    if node is old:
        return new
    clone, changed = copy.copy(node), False
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr)
        if isinstance(value, c_ast.Node):
            got = replace_node(value, old, new)
            if got is not value:
                setattr(clone, attr, got)
                changed = True
        elif isinstance(value, list):
            got = [replace_node(x, old, new) if isinstance(x, c_ast.Node) else x for x in value]
            if any(a is not b for a, b in zip(got, value)):
                setattr(clone, attr, got)
                changed = True
    return clone if changed else node


def with_coord(node: c_ast.Node, coord) -> None:
    """Every node of the tree placed at `coord` (the source line the new code stands for)."""
    stack = [node]
    while stack:
        n = stack.pop()
        n.coord = coord
        stack.extend(c for _, c in n.children())
