"""Conditions: the `Guard` of an `if` around a statement (its affine constraints where it has them), and the truth
of a condition whose value is known from the text alone (`_truth`).

Separate because statement lowering, nest lowering and the passes read conditions the same way.
"""
from __future__ import annotations

from pycparser import c_ast

from ..intexpr import IntExpr, op
from ..ir import Constraint, Guard
from ..symbolic import Poly
from .objects import _constant
from .ctypes import FLOAT_TYPES, int_result, is_unsigned
from .context import NestContext
from .syntax import _ids, text_of


# The most alternatives a condition is kept with (`a != b && c != d` has 4, the else of `i == 0 || j == 0 ||
# i == n - 1 || j == n - 1` 16): more is dropped, as a condition
# c2gpu cannot model (a larger domain, sound), so that every dependence test stays a union of a few pieces
MAX_ALTERNATIVES = 16

Conjunction = tuple[Constraint, ...]


def guard_of(ctx: NestContext, cond: c_ast.Node, negated: bool, stmt_sid: int | None = None,
             site: int | None = None) -> Guard:
    """The guard of the branch of `cond` (negated: its else branch); `site`: the number of the `if` whose other
    branch got one (a new number otherwise, under which the lowering keeps `cond`: NestContext.conditions)."""
    if site is None:
        site = len(ctx.conditions) + 1
        ctx.conditions[site] = cond
    alternatives = _alternatives(ctx, cond)
    if negated and alternatives is not None:
        alternatives = _negation(alternatives)
    # one conjunction: the guard's constraints; several: a disjunction of them (`!=`, `||`, an else branch)
    cons = alternatives[0] if alternatives is not None and len(alternatives) == 1 else None
    alternatives = None if cons is not None else alternatives
    reads = tuple(sorted({n.name if n.name in ctx.loop_vars else ctx.ir_name(n.name) for n in _ids(cond)}))
    value = int_value(cond)
    if negated and value is not None:
        value = op("!", value)
    return Guard(("!(" + text_of(cond) + ")") if negated else text_of(cond), cons, ctx.loc(cond), negated, site,
                 reads=reads, depth=len(ctx.loop_ids), stmt_sid=stmt_sid, alternatives=alternatives, value=value)


_INT_CAST_WORDS = {"unsigned", "signed", "int", "long", "short", "char", "size_t"}
_INT_OPS = {"+", "-", "*", "/", "%", "<<", ">>", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}


def int_value(e: c_ast.Node) -> IntExpr | None:
    """An expression of integer literals and names (`i % 2 == 0`, `(unsigned)i * i < n`) as an IntExpr over
    the names as written, or None (an array element, a call, a floating-point literal, a side effect).  A cast
    to an integer type is read as the value it converts, exact unless that value wraps: the performance model
    evaluates these to estimate which threads work, never to prove anything."""
    v = _constant(e)
    if v is not None:
        return Poly.const(v)
    if isinstance(e, c_ast.ID):
        return Poly.var(e.name)
    if isinstance(e, c_ast.Cast):
        decl = e.to_type.type
        words = getattr(getattr(decl, "type", None), "names", None)
        if isinstance(decl, c_ast.TypeDecl) and words and set(words) <= _INT_CAST_WORDS:
            return int_value(e.expr)
        return None
    if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+", "!"):
        a = int_value(e.expr)
        return None if a is None else a if e.op == "+" else op("neg" if e.op == "-" else "!", a)
    if isinstance(e, c_ast.BinaryOp) and e.op in _INT_OPS:
        a, b = int_value(e.left), int_value(e.right)
        return None if a is None or b is None else op(e.op, a, b)
    if isinstance(e, c_ast.TernaryOp):
        parts = [int_value(x) for x in (e.cond, e.iftrue, e.iffalse)]
        return None if None in parts else op("?:", *parts)
    return None


def _alternatives(ctx: NestContext, cond: c_ast.Node) -> tuple[Conjunction, ...] | None:
    """The condition as a disjunction of conjunctions of affine constraints (comparisons, `!=`, &&, || and !), or
    None when some part is not affine or there would be more than MAX_ALTERNATIVES."""
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("&&", "||"):
        a, b = _alternatives(ctx, cond.left), _alternatives(ctx, cond.right)
        if a is None or b is None:
            return None
        out = tuple(x + y for x in a for y in b) if cond.op == "&&" else a + b
        return out if len(out) <= MAX_ALTERNATIVES else None
    if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
        inner = _alternatives(ctx, cond.expr)
        return None if inner is None else _negation(inner)
    if isinstance(cond, c_ast.BinaryOp) and cond.op == "!=":
        equal = _constraints(ctx, c_ast.BinaryOp("==", cond.left, cond.right, cond.coord))
        return None if equal is None else _negation((equal,))
    cons = _constraints(ctx, cond)
    return None if cons is None else (cons,)


def _negation(alternatives: tuple[Conjunction, ...]) -> tuple[Conjunction, ...] | None:
    """not (A1 or A2 ...), each A a conjunction: not (e >= 0) is -e - 1 >= 0, not (e == 0) is e - 1 >= 0 or
    -e - 1 >= 0, so not A is a disjunction, and the conjunction of those is multiplied out; None past
    MAX_ALTERNATIVES."""
    out: tuple[Conjunction, ...] = ((),)
    for conjunction in alternatives:
        negated = tuple(alt for c in conjunction for alt in (((Constraint(-c.expr - 1),),) if c.kind == "ge" else
                                                              ((Constraint(c.expr - 1),), (Constraint(-c.expr - 1),))))
        out = tuple(x + y for x in out for y in negated)
        if len(out) > MAX_ALTERNATIVES:
            return None
    return out


def _constraints(ctx: NestContext, cond: c_ast.Node) -> tuple[Constraint, ...] | None:
    if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
        a, b = _constraints(ctx, cond.left), _constraints(ctx, cond.right)
        return a + b if a is not None and b is not None else None
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=", "=="):
        if ctx.type_of(cond.left) in FLOAT_TYPES or ctx.type_of(cond.right) in FLOAT_TYPES:
            return None
        saved = set(ctx.params)
        a, _ = ctx.poly(cond.left)
        b, _ = ctx.poly(cond.right)
        if a is None or b is None or not (a - b).is_affine():
            ctx.params = saved
            return None
        common = int_result(ctx.int_type(cond.left), ctx.int_type(cond.right))
        if common is None or (is_unsigned(common) and not (ctx.fits(a, common) and ctx.fits(b, common))):
            # compared as unsigned: a negative side becomes a huge value, so the affine comparison would be wrong
            ctx.params = saved
            return None
        d = a - b
        return ({"<": (Constraint(-d - 1),), "<=": (Constraint(-d),), ">": (Constraint(d - 1),),
                 ">=": (Constraint(d),), "==": (Constraint(d, "eq"),)})[cond.op]
    return None


_TRUTH_OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
              ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
              "&&": lambda a, b: bool(a and b), "||": lambda a, b: bool(a or b)}


def _truth(cond: c_ast.Node | None) -> bool | None:
    """Whether an `if` condition made only of integer constants is true, or None when it is not constant."""
    value = _integer_value(cond)
    return None if value is None else value != 0


def _integer_value(e: c_ast.Node | None) -> int | None:
    """The value of an integer constant expression of literals, arithmetic, comparisons and ! && || (no side
    effect, no name), or None."""
    v = _constant(e)
    if v is not None:
        return v
    if isinstance(e, c_ast.UnaryOp) and e.op == "!":
        a = _integer_value(e.expr)
        return None if a is None else int(a == 0)
    if isinstance(e, c_ast.BinaryOp) and e.op in _TRUTH_OPS:
        a, b = _integer_value(e.left), _integer_value(e.right)
        return None if a is None or b is None else int(_TRUTH_OPS[e.op](a, b))
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*"):
        a, b = _integer_value(e.left), _integer_value(e.right)
        return None if a is None or b is None else a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None
