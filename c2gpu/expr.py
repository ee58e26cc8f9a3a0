"""C expressions as IR data: the statements of a nest as the frontend hands them over, a frozen tree of plain
values that the passes, the models and code generation read without knowing the parser the frontend used.

The nodes follow C's expression grammar; names are the C spellings as written (the IR's renamings, such as
`t#2` for a second `t`, are the statement's `scalar_reads`/`scalar_writes`); `at` is the (line, column) where
the node starts in the source, for matching a node with the IR's `Access` of the same place.  `to_c` prints a
tree as C with the parentheses pycparser's generator puts (so that a printed statement reads as the user's).
`Opaque` stands for what an analysis need not look into (a compound literal, a statement expression): its
text only.
"""
from __future__ import annotations

from dataclasses import field
from typing import Iterator, Union

from .records import dataclass

_AT = dict(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Name:
    name: str
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Const:
    kind: str                   # C type of the literal as the parser says ("int", "double", "char", "string")
    value: str                  # as written (`1.0f`, `'a'`, `0x10`)
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Index:
    """`base[index]`"""
    base: "Expr"
    index: "Expr"
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Member:
    """`base.name` or `base->name`"""
    base: "Expr"
    op: str                     # "." or "->"
    name: str
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Unary:
    """`op operand`; the postfix increments are "p++" and "p--" (pycparser's spelling), `sizeof` of a type has
    a `TypeName` operand."""
    op: str
    operand: "Expr"
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Binary:
    op: str
    left: "Expr"
    right: "Expr"
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Ternary:
    cond: "Expr"
    then: "Expr"
    otherwise: "Expr"
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Cast:
    ctype: str                  # the type as written between the parentheses
    operand: "Expr"
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Call:
    func: "Expr"
    args: tuple["Expr", ...]
    at: tuple[int, int] | None = field(**_AT)

    @property
    def callee(self) -> str | None:
        """The function's name when the call names one (not a call through an expression)."""
        return self.func.name if isinstance(self.func, Name) else None


@dataclass(frozen=True)
class Assign:
    op: str                     # "=", "+=", ...
    target: "Expr"
    value: "Expr"
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Comma:
    """`a, b, c` (its value is the last)."""
    items: tuple["Expr", ...]
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class InitList:
    """`{a, b}` of a declaration."""
    items: tuple["Expr", ...]
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class TypeName:
    """A type as an operand (`sizeof(double)`)."""
    text: str
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Opaque:
    """An expression the IR keeps as text only."""
    text: str
    at: tuple[int, int] | None = field(**_AT)


@dataclass(frozen=True)
class Decl:
    """A declaration statement of one name: `head` is its text without the initializer (`double t`,
    `int v[3]`)."""
    name: str
    head: str
    init: "Expr | None"
    at: tuple[int, int] | None = field(**_AT)


Expr = Union[Name, Const, Index, Member, Unary, Binary, Ternary, Cast, Call, Assign, Comma, InitList, TypeName,
             Opaque]


def children(e: "Expr | Decl") -> tuple:
    """The operands of `e`, left to right."""
    match e:
        case Index(base, index):
            return (base, index)
        case Member(base, _, _) | Unary(_, base) | Cast(_, base):
            return (base,)
        case Binary(_, left, right) | Assign(_, left, right):
            return (left, right)
        case Ternary(c, a, b):
            return (c, a, b)
        case Call(func, args):
            return (func,) + args
        case Comma(items) | InitList(items):
            return items
        case Decl(_, _, init):
            return () if init is None else (init,)
    return ()


def walk(e: "Expr | Decl | None") -> Iterator["Expr | Decl"]:
    """`e` and every node under it, parents before their operands, left to right."""
    stack = [e] if e is not None else []
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


# --------------------------------------------------------------------------- printing

# binding strength of the binary operators (pycparser's c_generator.precedence_map)
_PRECEDENCE = {"||": 0, "&&": 1, "|": 2, "^": 3, "&": 4, "==": 5, "!=": 5, ">": 6, ">=": 6, "<": 6, "<=": 6,
               ">>": 7, "<<": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9}
_SIMPLE = (Const, Name, Index, Member, Call)


def to_c(e: "Expr | Decl") -> str:
    """`e` as C, parenthesized as pycparser's generator does (every operand that is not a name, a constant, an
    element, a member or a call gets parentheses), so that it reads as `text_of` of the parsed node."""
    match e:
        case Name(name):
            return name
        case Const(_, value):
            return value
        case Index(base, index):
            return _simple(base) + "[" + to_c(index) + "]"
        case Member(base, op, name):
            return _simple(base) + op + name
        case Call(func, args):
            return _simple(func) + "(" + ", ".join(_operand(a) for a in args) + ")"
        case Unary("sizeof", operand):
            return f"sizeof({to_c(operand)})"
        case Unary(("p++" | "p--") as op, operand):
            return _simple(operand) + op[1:]
        case Unary(op, operand):
            return op + _simple(operand)
        case Binary(op, left, right):
            return f"{_simple(left)} {op} {_simple(right)}"
        case Assign(op, target, value):
            v = _operand(value)
            return f"{to_c(target)} {op} " + (f"({v})" if isinstance(value, Assign) else v)
        case Ternary(c, a, b):
            return f"({_operand(c)}) ? ({_operand(a)}) : ({_operand(b)})"
        case Cast(ctype, operand):
            return f"({ctype}) " + _simple(operand)
        case Comma(items) | InitList(items):
            return ", ".join(_operand(x) for x in items)
        case TypeName(text) | Opaque(text):
            return text
        case Decl(_, head, init):
            return head if init is None else f"{head} = {_operand(init)}"
    raise TypeError(f"not an expression: {e!r}")


def _operand(e: "Expr") -> str:
    """An operand in a list (arguments, initializers, the parts of ?:): braces around an initializer list,
    parentheses around a comma expression."""
    if isinstance(e, InitList):
        return "{" + to_c(e) + "}"
    if isinstance(e, Comma):
        return "(" + to_c(e) + ")"
    return to_c(e)


def _simple(e: "Expr") -> str:
    text = _operand(e)
    return text if isinstance(e, _SIMPLE) else "(" + text + ")"
