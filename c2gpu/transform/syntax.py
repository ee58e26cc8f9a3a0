"""Syntax trees the transforms build: isl's AST as the IR's syntax trees (c2gpu.syntax_tree), for the frontend to
describe again.

The rescheduled loops (schedule.py), the wavefronts (wavefront.py), the fused nests (fusion.py) and the coarsened
kernels (coarsen.py) are new C around the statements of the nest; they are built here as trees, node by node,
never written as text and parsed back.  The trees hold the statements' own trees (the frontend knows them as the
source's) and nodes c2gpu wrote, which say what they are as data (a declaration's type as words, `spec`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import islpy as isl

from ..ir import Loc
from ..syntax_tree import Binary, Const, Decl, Name, Ternary, Unary, rebuilt

_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pdiv_q": "/", "pdiv_r": "%", "zdiv_r": "%",
           "eq": "==", "le": "<=", "lt": "<", "ge": ">=", "gt": ">", "and_": "&&", "and_then": "&&",
           "or_": "||", "or_else": "||"}


def integer(v: int):
    """The literal `v` (a negative one as C spells it: minus applied to a literal)."""
    return Const("int", str(v)) if v >= 0 else Unary("-", Const("int", str(-v)))


def isl_expr(e, name: Callable[[str], str] = lambda n: n):
    """An isl AST expression as plain C (min, max and floor division as conditionals: the frontend reads
    `a < b ? a : b` as a bound, and no C header defines isl's `floord`); `name` spells isl's identifiers."""
    t = e.get_type()
    if t == isl.ast_expr_type.id:
        return Name(name(e.get_id().get_name()))
    if t == isl.ast_expr_type.int:
        return integer(int(e.get_val().to_python()))
    op = e.get_op_type().name
    args = [isl_expr(e.get_op_arg(k), name) for k in range(e.get_op_n_arg())]
    if op in _BINARY:
        out = args[0]
        for a in args[1:]:
            out = Binary(_BINARY[op], out, a)
        return out
    if op == "minus":
        return Unary("-", args[0])
    if op in ("min", "max"):
        out = args[0]
        for a in args[1:]:
            out = Ternary(Binary("<" if op == "min" else ">", out, a), out, a)
        return out
    if op == "fdiv_q":             # rounds toward minus infinity; the divisor is a positive constant
        a, d = args
        up = Binary("-", Binary("+", Unary("-", a), d), integer(1))
        return Ternary(Binary(">=", a, integer(0)), Binary("/", a, d), Unary("-", Binary("/", up, d)))
    if op in ("cond", "select"):
        return Ternary(*args)
    raise ValueError(f"isl expression '{op}' has no C form here")


def declaration(var: str, ctype: str, init, const: bool = False) -> Decl:
    """`[const] ctype var = init;` (`ctype`: a scalar type as the IR spells it, `int`, `long`, `unsigned int`)."""
    spec = ("const",) * const + tuple(ctype.split())
    return Decl(var, " ".join(spec + (var,)), init, spec=spec)


def replace_node(node, old, new):
    """`node` with `old` (that very node, somewhere under it) replaced by `new`."""
    return rebuilt(node, lambda n: new if n is old else n)


def placed(node, at: Loc | None):
    """`node` with every node under it placed at `at` (the source position the new code stands for)."""
    return rebuilt(node, lambda n: replace(n, at=at))


def renamed_decl(d: Decl, name: str) -> Decl:
    """A declaration c2gpu wrote (`declaration`) of another name."""
    return replace(d, name=name, head=" ".join(d.spec + (name,)))
