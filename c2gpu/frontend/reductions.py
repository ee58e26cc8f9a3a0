"""Reductions as C writes them: whether an assignment is `acc = acc OP value` (or a max/min idiom) with an
associative operator, and in which order equal values are kept (`Order`).

Separate from the statement lowering that records them: the reduction forms are a topic of their own.
"""
from __future__ import annotations

from typing import NamedTuple

from pycparser import c_ast

from ..ir import Guard
from .libc import MATH_FUNCTIONS
from .ctypes import FLOAT_TYPES, INT_RANGES, SIZES, int_result, promote
from .context import NestContext
from .syntax import _array_chain, _same, text_of


_MAX_NAMES = {"fmax", "fmaxf"}
_MIN_NAMES = {"fmin", "fminf"}


def _order_fields(order: Order | None, trees) -> dict:
    """Reduction's fields of a max/min's Order, the value compared as the IR's tree (`trees`: NestContext.trees)."""
    return {} if order is None else {"ties": order.ties, "nan_init": order.nan_init, "value": trees(order.value)}


def _mentions(node: c_ast.Node | None, name: str) -> bool:
    if node is None:
        return False
    if isinstance(node, c_ast.ID):
        return node.name == name
    if isinstance(node, c_ast.ArrayRef):
        base, subs = _array_chain(node)
        return _mentions(base, name) or any(_mentions(s, name) for s in subs)
    return any(_mentions(c, name) for _, c in node.children())


def _mentions_besides_elements(node: c_ast.Node | None, name: str, element: str) -> bool:
    """Whether `node` uses array `name` other than by reading whole elements written differently from
    `element`: `x[j]` in `x[i] -= L[i][j] * x[j]` does not count (the dependence analysis then proves, or
    refuses, that x[j] is never x[i] within the loop); `x[i]` itself, `x + 1` or `*x` do."""
    if node is None:
        return False
    if isinstance(node, c_ast.ArrayRef):
        base, subs = _array_chain(node)
        if isinstance(base, c_ast.ID) and base.name == name:
            return text_of(node) == element or len(subs) != element.count("[") or \
                any(_mentions(s, name) for s in subs)
        return _mentions_besides_elements(base, name, element) or \
            any(_mentions_besides_elements(s, name, element) for s in subs)
    if isinstance(node, c_ast.ID):
        return node.name == name
    return any(_mentions_besides_elements(c, name, element) for _, c in node.children())


class Order(NamedTuple):
    """How a max/min form picks between equal values and treats NaN, as C wrote it: what a port across threads
    must reproduce (Reduction.ties, Reduction.nan_init, Reduction.value)."""
    ties: str             # "first": a later equal value does not replace the accumulator (x < m); "last": it does
    nan_init: bool        # a NaN accumulator takes the next value (fmin/fmax); a comparison never replaces it
    value: c_ast.Node     # the value compared with the accumulator


def _reduction_form(ctx: NestContext, stmt: c_ast.Assignment, idiom_guard: Guard | None):
    """`target op= other` read off an assignment, or Nones.

    Returns (target node, op, the other operand, the type the operation combines in, the guard when matched
    through an `if`, the Order of a max/min).  A max/min is a reduction only where its result is the same in
    any grouping: a floating-point form that takes a NaN value (`m = m > x ? m : x` takes x when x is NaN, and
    the next value replaces that NaN) depends on where the NaN falls, so it is not one.  The `if` form is
    matched only when the guard is exactly the comparison of the statement with its accumulator, has no else
    and controls nothing but this statement: a guard that also controls a counter, a flag or an
    else-branch makes the statement part of something that is not a max/min.
    """
    none = None, None, None, None, None, None
    lv, rv = stmt.lvalue, stmt.rvalue
    if not isinstance(lv, (c_ast.ID, c_ast.ArrayRef)):
        return none
    if stmt.op in ("+=", "-=", "*="):
        return lv, "*" if stmt.op == "*=" else "+", rv, ctx.type_of(rv), None, None
    if stmt.op != "=":
        return none
    if isinstance(rv, c_ast.BinaryOp) and rv.op in ("+", "*", "-"):
        if _same(rv.left, lv):
            return lv, "*" if rv.op == "*" else "+", rv.right, ctx.type_of(rv.right), None, None
        if _same(rv.right, lv) and rv.op != "-":
            return lv, rv.op, rv.left, ctx.type_of(rv.left), None, None
    if isinstance(rv, c_ast.FuncCall) and rv.args and len(rv.args.exprs) == 2:
        name = text_of(rv.name)
        a, b = rv.args.exprs
        if name in _MAX_NAMES | _MIN_NAMES and ctx.is_math(name):
            op = "max" if name in _MAX_NAMES else "min"
            kind = MATH_FUNCTIONS[name][1]       # fmaxf compares in float, whatever its arguments are
            # a NaN argument gives the other one; between -0.0 and 0.0 C leaves fmin and fmax unspecified
            # (F.10.9.2), and gcc takes them as commutative: with glibc, which returns its first argument on a
            # tie, an optimized build keeps the accumulator whichever side it is written on, and so does the port
            if _same(a, lv):
                return lv, op, b, kind, None, Order("first", True, b)
            if _same(b, lv):
                return lv, op, a, kind, None, Order("first", True, a)
    if isinstance(rv, c_ast.TernaryOp) and isinstance(rv.cond, c_ast.BinaryOp) and rv.cond.op in ("<", "<=", ">", ">="):
        c = rv.cond
        if {text_of(c.left), text_of(c.right)} == {text_of(rv.iftrue), text_of(rv.iffalse)} and text_of(lv) in (text_of(c.left), text_of(c.right)):
            # (l > r) ? l : r is max(l, r)
            picks_larger = (c.op in (">", ">=")) == _same(rv.iftrue, c.left)
            other = c.right if _same(c.left, lv) else c.left
            op = "max" if picks_larger else "min"
            if _same(rv.iftrue, lv) and ctx.type_of(lv) in FLOAT_TYPES:
                return none                      # m = (m > x) ? m : x takes x when the comparison fails: a NaN
            # x replaces m when the comparison holds: strict keeps the first of equal values, <= / >= the last
            return lv, op, other, ctx.type_of(other), None, Order("first" if c.op in ("<", ">") else "last", False, other)
    if idiom_guard is not None and idiom_guard.constraints is None and not idiom_guard.negated:
        cond = ctx.conditions[idiom_guard.site]
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">="):
            ties = "first" if cond.op in ("<", ">") else "last"
            # if (e > t) t = e;  -> max ;  if (e < t) t = e;  -> min
            if _same(cond.left, rv) and _same(cond.right, lv):
                return (lv, "max" if cond.op in (">", ">=") else "min", rv, ctx.type_of(rv), idiom_guard,
                        Order(ties, False, rv))
            if _same(cond.right, rv) and _same(cond.left, lv):
                return (lv, "max" if cond.op in ("<", "<=") else "min", rv, ctx.type_of(rv), idiom_guard,
                        Order(ties, False, rv))
    return none


def _associative(op: str, acc: str, value: str) -> bool:
    """Whether `acc = acc op value`, repeated, may be regrouped: c2gpu reduces in any order.

    Floating-point `+` and `*` are regrouped like every GPU reduction (verify compares with a tolerance);
    max/min must compare in the accumulator's own type.  An integer accumulator narrower than int
    converts back at every step, and one fed floating-point values truncates at every step
    (`int s; s += x[i]`): neither is the reduction of its values, so neither is accepted.
    """
    if value == "?" or acc == "?":
        return False
    if acc in FLOAT_TYPES:
        return op in ("+", "*") and value in FLOAT_TYPES + tuple(INT_RANGES) or value == acc
    if acc not in INT_RANGES or SIZES[acc] < 4 or value in FLOAT_TYPES or value not in INT_RANGES:
        return False
    if op in ("max", "min"):
        return int_result(acc, value) == promote(acc)    # compared in the accumulator's type
    return True
