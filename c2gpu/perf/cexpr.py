"""Numeric evaluation of the C integer expressions codegen emits (copy extents, grid sizes).

Codegen and isl print extents as C: `n >= 100 ? 99 : n - 1`, `floord(n, 3)`,
`(unsigned)(((n) + 31) / 32)`, `((a) > (b) ? (a) : (b))`.  The performance
analyses need their values for concrete parameters, with C semantics
(division truncates toward zero, `%` keeps the dividend's sign), so this is a
small recursive-descent parser for exactly that subset: integer literals,
names, `+ - * / %`, comparisons, `&& || !`, `?:`, parentheses, casts to
integer types, and the helpers isl prints (`min`, `max`, `floord`, `ceild`).
Anything else raises CExprError.
"""
from __future__ import annotations

import re

import numpy as np
from functools import lru_cache
from typing import Callable, Mapping

_TOKEN = re.compile(r"\s*(?:(\d+)[uUlL]*|([A-Za-z_]\w*)|(>=|<=|==|!=|&&|\|\||<<|>>|[-+*/%()<>?:,!]))")
_CAST_WORDS = {"unsigned", "int", "long", "signed", "short", "size_t", "char"}


class CExprError(ValueError):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CExprError(f"cannot read C expression {text!r} at {text[pos:pos + 10]!r}")
        pos = m.end()
        if m.group(1) is not None:
            out.append(("num", m.group(1)))
        elif m.group(2) is not None:
            out.append(("name", m.group(2)))
        else:
            out.append(("op", m.group(3)))
    return out


def _cdiv(a: int, b: int) -> int:
    if b == 0:
        raise CExprError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _cmod(a: int, b: int) -> int:
    return a - _cdiv(a, b) * b


_FUNCS: dict[str, Callable[..., int]] = {
    "min": min, "max": max,
    "floord": lambda a, b: a // b,
    "ceild": lambda a, b: -((-a) // b),
}

Env = Mapping[str, int]
Node = Callable[[Env], int]


@lru_cache(maxsize=4096)
def compile_c(text: str, vector: bool = False) -> Node:
    """Compile a C integer expression to a function of the variable values (cached by text).
    vector=True: the values may be numpy arrays (elementwise, C semantics kept)."""
    combine = _combine_np if vector else _combine
    toks = _tokens(text)
    pos = 0

    def peek(k: int = 0):
        return toks[pos + k] if pos + k < len(toks) else ("eof", "")

    def take(kind: str | None = None, value: str | None = None):
        nonlocal pos
        t = peek()
        if (kind and t[0] != kind) or (value and t[1] != value):
            raise CExprError(f"in {text!r}: expected {value or kind}, found {t[1] or 'end'}")
        pos += 1
        return t

    def primary() -> Node:
        t = peek()
        if t[0] == "num":
            take()
            v = int(t[1])
            return lambda env: v
        if t[0] == "name":
            take()
            name = t[1]
            if peek()[1] == "(":
                if name not in _FUNCS:
                    raise CExprError(f"in {text!r}: unknown function {name}()")
                take("op", "(")
                args = [ternary()]
                while peek()[1] == ",":
                    take()
                    args.append(ternary())
                take("op", ")")
                f = _FUNCS[name]
                return lambda env: f(*(a(env) for a in args))

            def var(env, name=name):
                try:
                    return env[name] if vector else int(env[name])
                except KeyError:
                    raise CExprError(f"no value for '{name}' in {text!r}") from None
            return var
        if t[1] == "(":
            # a cast `(unsigned)` / `(long long)` or a parenthesised expression
            k = 1
            while peek(k)[0] == "name" and peek(k)[1] in _CAST_WORDS:
                k += 1
            if k > 1 and peek(k)[1] == ")":
                for _ in range(k + 1):
                    take()
                return unary()
            take()
            e = ternary()
            take("op", ")")
            return e
        raise CExprError(f"in {text!r}: unexpected {t[1] or 'end'}")

    def unary() -> Node:
        t = peek()
        if t[1] in ("-", "+", "!"):
            take()
            e = unary()
            if t[1] == "-":
                return lambda env: -e(env)
            if t[1] == "!":
                if vector:
                    return lambda env: np.logical_not(e(env)).astype(np.int64)
                return lambda env: int(not e(env))
            return e
        return primary()

    def binary(level: int) -> Node:
        ops = _LEVELS[level]
        sub = (lambda: binary(level + 1)) if level + 1 < len(_LEVELS) else unary
        left = sub()
        while peek()[0] == "op" and peek()[1] in ops:
            op = take()[1]
            right = sub()
            left = combine(op, left, right)
        return left

    def ternary() -> Node:
        cond = binary(0)
        if peek()[1] == "?":
            take()
            a = ternary()
            take("op", ":")
            b = ternary()
            if vector:
                return lambda env: np.where(cond(env), a(env), b(env))
            return lambda env: a(env) if cond(env) else b(env)
        return cond

    node = ternary()
    if pos != len(toks):
        raise CExprError(f"in {text!r}: unexpected {peek()[1]}")
    return node


_LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("<<", ">>"), ("+", "-"), ("*", "/", "%"))


def _combine(op: str, a: Node, b: Node) -> Node:
    f = {
        "||": lambda x, y: int(bool(x) or bool(y)), "&&": lambda x, y: int(bool(x) and bool(y)),
        "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
        "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y),
        ">": lambda x, y: int(x > y), ">=": lambda x, y: int(x >= y),
        "<<": lambda x, y: x << y, ">>": lambda x, y: x >> y,
        "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
        "/": _cdiv, "%": _cmod,
    }[op]
    return lambda env: f(a(env), b(env))


def evaluate(text: str, env: Env) -> int:
    """The value of C integer expression `text` with the given variable values."""
    return compile_c(text)(env)


def _np_div(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if np.any(b == 0):
        raise CExprError("division by zero")
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (b >= 0), q, -q)


def _combine_np(op: str, a: Node, b: Node) -> Node:
    f = {
        "||": lambda x, y: np.logical_or(x, y).astype(np.int64),
        "&&": lambda x, y: np.logical_and(x, y).astype(np.int64),
        "==": lambda x, y: np.asarray(x == y, dtype=np.int64), "!=": lambda x, y: np.asarray(x != y, dtype=np.int64),
        "<": lambda x, y: np.asarray(x < y, dtype=np.int64), "<=": lambda x, y: np.asarray(x <= y, dtype=np.int64),
        ">": lambda x, y: np.asarray(x > y, dtype=np.int64), ">=": lambda x, y: np.asarray(x >= y, dtype=np.int64),
        "<<": lambda x, y: np.left_shift(x, y), ">>": lambda x, y: np.right_shift(x, y),
        "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
        "/": _np_div, "%": lambda x, y: np.asarray(x) - _np_div(x, y) * np.asarray(y),
    }[op]
    return lambda env: f(a(env), b(env))


def compile_vector(text: str) -> Node:
    """compile_c for numpy array values."""
    return compile_c(text, True)
