"""Integer expressions with C semantics, as data: sizes of copies and allocations, and conditions of `if`s.

An `IntExpr` is a tree whose leaves are polynomials (`Poly`) and whose inner nodes are the operations C and isl
use on sizes: `+ - *`, division and remainder as C truncates them, shifts, isl's floor division, `min`, `max`, `?:`,
comparisons and `! && ||`.  It is built from what c2gpu knows (polynomials, isl's piecewise functions, the
frontend's syntax tree), never parsed back from C text, and it evaluates with C semantics, for one set of sizes
(`evaluate`) or elementwise over numpy arrays (`vector`).

`CInt` pairs an IntExpr with the C spelling the emitted code uses for it, fixed where it is built, so that what
the performance model evaluates and what the port prints are the same decision (and the printed text stays
what it always was).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping, Union

import numpy as np

from .records import dataclass
from .symbolic import Poly


class EvaluationError(ValueError):
    """The expression has no value for these sizes: a name without a value, or a division by zero."""


@dataclass(frozen=True)
class Op:
    """An operation over integer expressions: one of OPS, with C's meaning (`/` and `%` truncate toward zero;
    `floord` rounds toward minus infinity; comparisons and `! && ||` give 0 or 1; `?:` selects)."""
    name: str
    args: tuple["IntExpr", ...]


IntExpr = Union[Poly, Op]

_ARITH = ("+", "-", "*")
OPS = frozenset(_ARITH + ("neg", "/", "%", "<<", ">>", "floord", "min", "max", "?:", "==", "!=", "<", "<=", ">",
                          ">=", "&&", "||", "!"))


def op(name: str, *args: IntExpr) -> IntExpr:
    """The expression `name(args)`, folded into one polynomial when it is one (sums, differences, products)."""
    assert name in OPS, name
    if all(isinstance(a, Poly) for a in args):
        if name == "+":
            return args[0] + args[1]
        if name == "-":
            return args[0] - args[1]
        if name == "*":
            return args[0] * args[1]
        if name == "neg":
            return -args[0]
    return Op(name, tuple(args))


def as_poly(e: IntExpr) -> Poly | None:
    """The expression as one polynomial, when it is one."""
    return e if isinstance(e, Poly) else None


def _poly_value(p: Poly, env: Mapping[str, object]):
    total = 0
    for mono, c in p.terms:
        t = int(c) if c.denominator == 1 else Fraction(c)
        for v, k in mono:
            try:
                x = env[v]
            except KeyError:
                raise EvaluationError(f"no value for '{v}'") from None
            t = t * (x if k == 1 else x ** k)
        total = total + t
    return total


def _trunc_div(a, b):
    if np.any(np.asarray(b) == 0):
        raise EvaluationError("division by zero")
    q = abs(a) // abs(b)
    return np.where((np.asarray(a) >= 0) == (np.asarray(b) >= 0), q, -q)


_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": _trunc_div, "%": lambda a, b: a - _trunc_div(a, b) * b,
    "<<": np.left_shift, ">>": np.right_shift,
    "floord": lambda a, b: a // b,
    "min": np.minimum, "max": np.maximum,
    "==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "&&": np.logical_and, "||": np.logical_or,
}


def vector(e: IntExpr, env: Mapping[str, object]):
    """The value of `e` with C semantics, elementwise: the values in `env` may be ints or numpy integer arrays.
    Raises EvaluationError for a name without a value or a division by zero."""
    if isinstance(e, Poly):
        return _poly_value(e, env)
    args = [vector(a, env) for a in e.args] if e.name != "?:" else None
    if e.name == "neg":
        return -args[0]
    if e.name == "!":
        return np.logical_not(args[0]).astype(np.int64)
    if e.name == "?:":
        return np.where(vector(e.args[0], env), vector(e.args[1], env), vector(e.args[2], env))
    out = args[0]
    for b in args[1:]:
        out = _BINARY[e.name](out, b)
    return out.astype(np.int64) if isinstance(out, np.ndarray) and out.dtype == bool else out


def evaluate(e: IntExpr, env: Mapping[str, int]) -> int:
    """The value of `e` for these sizes, with C semantics (an int)."""
    v = vector(e, env)
    if isinstance(v, Fraction):
        if v.denominator != 1:
            raise EvaluationError(f"{v} is not an integer")
        return int(v)
    return int(v)


@dataclass(frozen=True)
class CInt:
    """An integer expression and the C that the emitted code spells it with (fixed where it is built)."""
    c: str
    expr: IntExpr

    @staticmethod
    def of_poly(p: Poly) -> "CInt":
        return CInt(p.to_c(), p)

    @staticmethod
    def const(n: int) -> "CInt":
        return CInt.of_poly(Poly.const(n))

    @staticmethod
    def folded(c: str, expr: IntExpr) -> "CInt":
        """`expr` spelt `c`, or as its polynomial when it is one (the simplest spelling)."""
        p = as_poly(expr)
        return CInt(p.to_c(), p) if p is not None else CInt(c, expr)

    def __str__(self) -> str:
        return self.c

    @property
    def poly(self) -> Poly | None:
        return as_poly(self.expr)

    def constant(self) -> int | None:
        """Its value when it does not depend on any size."""
        p = self.poly
        return int(p.const_value()) if p is not None and p.is_const() else None

    def evaluate(self, env: Mapping[str, int]) -> int:
        return evaluate(self.expr, env)


def plain_c(e: IntExpr, wide: bool = False, top: bool = True) -> str:
    """`e` as C that needs no helper (min, max and floor division written out as conditionals), every operation
    parenthesised but the outermost (`top`); wide: min and max and floor division computed in 64 bits
    (`long long`), as host code mixing int and long long values needs."""
    if isinstance(e, Poly):
        text = e.to_c()
        return text if top or text.isidentifier() or text.isdigit() else f"({text})"
    args = [plain_c(a, wide, top=False) for a in e.args]
    if e.name == "neg":
        text = f"-{args[0]}"
    elif e.name == "!":
        text = f"!{args[0]}"
    elif e.name == "?:":
        text = f"{args[0]} ? {args[1]} : {args[2]}"
    else:
        if wide and e.name in ("min", "max", "floord"):
            args = [f"((long long){a})" for a in args]
        if e.name in ("min", "max"):
            a, b = args
            text = f"{a} {'<' if e.name == 'min' else '>'} {b} ? {a} : {b}"
        elif e.name == "floord":            # rounds toward minus infinity; its divisor is a positive constant
            a, d = args
            text = f"{a} >= 0 ? {a} / {d} : -((-{a} + {d} - 1) / {d})"
        else:
            text = f"{args[0]} {e.name} {args[1]}"
    return text if top else f"({text})"
