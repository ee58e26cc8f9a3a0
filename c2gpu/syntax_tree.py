"""C syntax as IR data: the statements and loops of a nest as the frontend hands them over, a frozen tree of plain
values that the passes, the models and code generation read without knowing the parser the frontend used.

The nodes follow C's grammar: expressions (an expression statement is its expression), declarations of one
name, and the statements a loop body holds (blocks, `if`, loops, jumps, `switch`, pragmas).  Names are the C
spellings as written (the IR's renamings, such as `t#2` for a second `t`, are the statement's
`scalar_reads`/`scalar_writes`); `at` is where the node starts in the source (the Loc of the
IR's `Access` of the same place).  One tree per nest: a Statement's `syntax` is the very node of
its loop's tree (code generation finds statements in the loop bodies it prints by identity).

`Printer` prints a tree as C exactly as pycparser's generator prints the parsed tree (parentheses, layout), so
that what c2gpu prints of the user's code reads as the user's; code generation subclasses it.  `Opaque` stands
for what the IR keeps as text only (a compound literal, a statement expression, a typedef in a body).
"""
from __future__ import annotations

from dataclasses import field, fields, is_dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterator, Union, get_args

from .records import dataclass

if TYPE_CHECKING:
    from .ir import Loc

_AT = dict(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Name:
    name: str
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Const:
    kind: str                   # C type of the literal as the parser says ("int", "double", "char", "string")
    value: str                  # as written (`1.0f`, `'a'`, `0x10`)
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Index:
    """`base[index]`"""
    base: "Expr"
    index: "Expr"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Member:
    """`base.name` or `base->name`"""
    base: "Expr"
    op: str                     # "." or "->"
    name: str
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Unary:
    """`op operand`; the postfix increments are "p++" and "p--" (pycparser's spelling), `sizeof` of a type has
    a `TypeName` operand."""
    op: str
    operand: "Expr"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Binary:
    op: str
    left: "Expr"
    right: "Expr"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Ternary:
    cond: "Expr"
    then: "Expr"
    otherwise: "Expr"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Cast:
    ctype: str                  # the type as written between the parentheses
    operand: "Expr"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Call:
    func: "Expr"
    args: tuple["Expr", ...]
    at: "Loc | None" = field(**_AT)

    @property
    def callee(self) -> str | None:
        """The function's name when the call names one (not a call through an expression)."""
        return self.func.name if isinstance(self.func, Name) else None


@dataclass(frozen=True)
class Assign:
    op: str                     # "=", "+=", ...
    target: "Expr"
    value: "Expr"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Comma:
    """`a, b, c` (its value is the last)."""
    items: tuple["Expr", ...]
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class InitList:
    """`{a, b}` of a declaration."""
    items: tuple["Expr", ...]
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class TypeName:
    """A type as an operand (`sizeof(double)`)."""
    text: str
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Opaque:
    """An expression the IR keeps as text only."""
    text: str
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Decl:
    """A declaration of one name: `head` is its text without the initializer and the storage classes (`double t`,
    `int v[3]`, `const int k` for `static const int k`), `storage` those (`static`, `extern`, `register`, ...).
    A declaration c2gpu writes (transform/) says its type as data, for the frontend to describe: `spec`, the
    words of a scalar type (`("const", "int")`), or `like`, the declaration as written whose type it takes,
    assignable (a renamed copy, without the name's own `const`)."""
    name: str
    head: str
    init: "Expr | None"
    at: "Loc | None" = field(**_AT)
    spec: tuple[str, ...] = field(default=(), compare=False, repr=False)
    like: "Decl | None" = field(default=None, compare=False, repr=False)
    storage: tuple[str, ...] = ()
    # the head of the name declared without its initializer, when that differs (the name's own `const` dropped:
    # `double t` for `const double t`, assigned where the initializer was); "" when `head` serves
    assignable: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True)
class Decls:
    """Several declarations in one (`int i = 0, j = 1` in a `for`'s first clause): the type is printed once."""
    items: tuple[Decl, ...]
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Block:
    items: tuple["Stmt", ...]
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class If:
    cond: "Expr"
    then: "Stmt"
    otherwise: "Stmt | None"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class For:
    init: "Decls | Expr | None"
    cond: "Expr | None"
    next: "Expr | None"
    body: "Stmt"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class While:
    cond: "Expr"
    body: "Stmt"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class DoWhile:
    body: "Stmt"
    cond: "Expr"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Switch:
    cond: "Expr"
    body: "Stmt"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Case:
    value: "Expr | None"         # None: `default:`
    items: tuple["Stmt", ...]
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Label:
    name: str
    body: "Stmt"
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Jump:
    """`break;`, `continue;`, `goto label;` (`label`), `return e;` (`value`)."""
    kind: str                   # "break", "continue", "goto", "return"
    label: str = ""
    value: "Expr | None" = None
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Empty:
    """`;`"""
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Pragma:
    text: str                   # after `#pragma `
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class OpaqueStmt:
    """A statement the IR keeps as text only (a typedef in a body), printed as `text` on its own line."""
    text: str
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Placeholder:
    """Where statement `sid` of a nest goes in a tree a transform builds (transform/schedule.py): the new loops
    are built and placed around it, then the statement's own tree takes its place.  Never printed or described."""
    sid: int
    at: "Loc | None" = field(**_AT)


@dataclass(frozen=True)
class Function:
    """A function definition as written: its name, its parameters' names and its body."""
    name: str
    params: tuple[str, ...]
    body: "Block"
    at: "Loc | None" = field(**_AT)


Expr = Union[Name, Const, Index, Member, Unary, Binary, Ternary, Cast, Call, Assign, Comma, InitList, TypeName,
             Opaque]
Stmt = Union[Expr, Decl, Decls, Block, If, For, While, DoWhile, Switch, Case, Label, Jump, Empty, Pragma, OpaqueStmt,
             Placeholder]
EXPRESSIONS = get_args(Expr)          # (for isinstance)


def children(n) -> tuple:
    """The nodes right under `n`, in source order."""
    match n:
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
        case Comma(items) | InitList(items) | Decls(items) | Block(items):
            return items
        case Decl(_, _, init):
            return () if init is None else (init,)
        case If(c, a, b):
            return (c, a) if b is None else (c, a, b)
        case For(init, cond, nxt, body):
            return tuple(x for x in (init, cond, nxt) if x is not None) + (body,)
        case While(cond, body) | Switch(cond, body):
            return (cond, body)
        case Label(_, body):
            return (body,)
        case DoWhile(body, cond):
            return (body, cond)
        case Case(value, items):
            return ((value,) if value is not None else ()) + items
        case Jump(_, _, value):
            return () if value is None else (value,)
    return ()


def index_chain(e: Index) -> tuple:
    """`A[i][j]` -> (Name A, [i, j]): the base of an element and its subscripts, outermost first."""
    subs = []
    while isinstance(e, Index):
        subs.append(e.index)
        e = e.base
    return e, subs[::-1]


def int_constant(e) -> int | None:
    """The value of an integer constant expression made of literals, + - * and parentheses, or None."""
    match e:
        case Const("int" | "long int" | "long long int" | "unsigned int", value):
            text = value.rstrip("uUlL")
            try:
                return int(text, 0) if not (text.startswith("0") and text[1:].isdigit()) else int(text, 8)
            except ValueError:
                return None
        case Unary("-" | "+", operand):
            v = int_constant(operand)
            return None if v is None else (-v if e.op == "-" else v)
        case Binary("+" | "-" | "*", left, right):
            a, b = int_constant(left), int_constant(right)
            return None if a is None or b is None else a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def rebuilt(n, change: Callable):
    """`n` with every node under it (children first) replaced by what `change` gives for it (the node itself
    to keep it); a node none of whose children changed is kept as it is, so that what a rewrite leaves alone
    keeps its identity."""
    return None if n is None else change(with_children(n, lambda c: rebuilt(c, change)))


def with_children(n, change: Callable):
    """`n` with each node right under it replaced by `change(child)` (`n` itself when none changes)."""
    values = {}
    for f in fields(n):
        if not f.compare:
            continue                    # a position or a reference (Decl.like), not a child
        v = getattr(n, f.name)
        if _is_node(v):
            got = change(v)
        elif isinstance(v, tuple) and v and all(_is_node(x) for x in v):
            got = tuple(change(x) for x in v)
            got = v if all(a is b for a, b in zip(got, v)) else got
        else:
            continue
        if got is not v:
            values[f.name] = got
    return replace(n, **values) if values else n


def _is_node(v) -> bool:
    return type(v).__module__ == __name__ and is_dataclass(v)


def walk(n) -> Iterator:
    """`n` and every node under it, parents before their children, in source order."""
    stack = [n] if n is not None else []
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(children(x)))


# --------------------------------------------------------------------------- printing

# operands printed without parentheses (pycparser's _is_simple_node)
_SIMPLE = (Const, Name, Index, Member, Call)
# statements printed with `;` after them (pycparser's _generate_stmt: those that may be expressions)
_SEMICOLON = (Decl, Assign, Cast, Unary, Binary, Ternary, Call, Index, Member, Const, Name, Comma)


class Printer:
    """C text of a tree, as pycparser's CGenerator prints the parsed tree: `visit_<Node>` per node type, each
    printing its children through `visit` (so that a subclass that changes how one kind of node prints changes it
    everywhere: code generation's KernelPrinter renames names and rewrites array elements)."""

    def __init__(self) -> None:
        self.indent_level = 0

    def _make_indent(self) -> str:
        return " " * self.indent_level

    def visit(self, n) -> str:
        return getattr(self, "visit_" + type(n).__name__)(n)

    # -- expressions
    def visit_Name(self, n: Name) -> str:
        return n.name

    def visit_Const(self, n: Const) -> str:
        return n.value

    def visit_Index(self, n: Index) -> str:
        return self._parenthesize_unless_simple(n.base) + "[" + self.visit(n.index) + "]"

    def visit_Member(self, n: Member) -> str:
        # (the field is printed as a name, as pycparser prints its ID)
        return self._parenthesize_unless_simple(n.base) + n.op + self.visit(Name(n.name))

    def visit_Call(self, n: Call) -> str:
        return self._parenthesize_unless_simple(n.func) + "(" + ", ".join(self._visit_expr(a) for a in n.args) + ")"

    def visit_Unary(self, n: Unary) -> str:
        if n.op == "sizeof":
            return f"sizeof({self.visit(n.operand)})"
        operand = self._parenthesize_unless_simple(n.operand)
        return operand + n.op[1:] if n.op in ("p++", "p--") else n.op + operand

    def visit_Binary(self, n: Binary) -> str:
        return f"{self._parenthesize_unless_simple(n.left)} {n.op} {self._parenthesize_unless_simple(n.right)}"

    def visit_Assign(self, n: Assign) -> str:
        value = self._visit_expr(n.value)
        return f"{self.visit(n.target)} {n.op} " + (f"({value})" if isinstance(n.value, Assign) else value)

    def visit_Ternary(self, n: Ternary) -> str:
        return f"({self._visit_expr(n.cond)}) ? ({self._visit_expr(n.then)}) : ({self._visit_expr(n.otherwise)})"

    def visit_Cast(self, n: Cast) -> str:
        return f"({n.ctype}) " + self._parenthesize_unless_simple(n.operand)

    def visit_Comma(self, n: Comma) -> str:
        return ", ".join(self._visit_expr(x) for x in n.items)

    visit_InitList = visit_Comma

    def visit_TypeName(self, n: TypeName) -> str:
        return n.text

    visit_Opaque = visit_TypeName

    def _visit_expr(self, n) -> str:
        """An operand in a list (arguments, initializers, the parts of ?:): braces around an initializer list,
        parentheses around a comma expression."""
        if isinstance(n, InitList):
            return "{" + self.visit(n) + "}"
        if isinstance(n, (Comma, Block)):
            return "(" + self.visit(n) + ")"
        return self.visit(n)

    def _parenthesize_unless_simple(self, n) -> str:
        s = self._visit_expr(n)
        return s if isinstance(n, _SIMPLE) else "(" + s + ")"

    # -- declarations
    def visit_Decl(self, n: Decl, no_type: bool = False) -> str:
        s = n.name if no_type else " ".join((*n.storage, n.head))     # (pycparser prints the storage first)
        return s if n.init is None else s + " = " + self._visit_expr(n.init)

    def visit_Decls(self, n: Decls) -> str:
        return ", ".join([self.visit(n.items[0])] + [self.visit_Decl(d, no_type=True) for d in n.items[1:]])

    # -- statements
    def visit_Block(self, n: Block) -> str:
        s = self._make_indent() + "{\n"
        self.indent_level += 2
        s += "".join(self._generate_stmt(x) for x in n.items)
        self.indent_level -= 2
        return s + self._make_indent() + "}\n"

    def visit_If(self, n: If) -> str:
        s = "if (" + self.visit(n.cond) + ")\n" + self._generate_stmt(n.then, add_indent=True)
        if n.otherwise is not None:
            s += self._make_indent() + "else\n" + self._generate_stmt(n.otherwise, add_indent=True)
        return s

    def visit_For(self, n: For) -> str:
        s = "for (" + (self.visit(n.init) if n.init is not None else "") + ";"
        s += (" " + self.visit(n.cond) if n.cond is not None else "") + ";"
        s += (" " + self.visit(n.next) if n.next is not None else "") + ")\n"
        return s + self._generate_stmt(n.body, add_indent=True)

    def visit_While(self, n: While) -> str:
        return "while (" + self.visit(n.cond) + ")\n" + self._generate_stmt(n.body, add_indent=True)

    def visit_DoWhile(self, n: DoWhile) -> str:
        return "do\n" + self._generate_stmt(n.body, add_indent=True) + self._make_indent() + "while (" + \
            self.visit(n.cond) + ");"

    def visit_Switch(self, n: Switch) -> str:
        return "switch (" + self.visit(n.cond) + ")\n" + self._generate_stmt(n.body, add_indent=True)

    def visit_Case(self, n: Case) -> str:
        s = "default:\n" if n.value is None else "case " + self.visit(n.value) + ":\n"
        return s + "".join(self._generate_stmt(x, add_indent=True) for x in n.items)

    def visit_Label(self, n: Label) -> str:
        return n.name + ":\n" + self._generate_stmt(n.body)

    def visit_Jump(self, n: Jump) -> str:
        if n.kind == "goto":
            return f"goto {n.label};"
        if n.kind == "return":
            return "return" + ("" if n.value is None else " " + self.visit(n.value)) + ";"
        return n.kind + ";"

    def visit_Empty(self, n: Empty) -> str:
        return ";"

    def visit_Pragma(self, n: Pragma) -> str:
        return "#pragma" + (" " + n.text if n.text else "")

    def visit_OpaqueStmt(self, n: OpaqueStmt) -> str:
        return n.text

    def _generate_stmt(self, n, add_indent: bool = False) -> str:
        """A statement on its own lines at the current indentation (one step more with `add_indent`)."""
        indent = " " * (self.indent_level + (2 if add_indent else 0))
        if isinstance(n, _SEMICOLON):
            return indent + self.visit(n) + ";\n"
        if isinstance(n, Block):
            return self.visit(n)
        if isinstance(n, If):
            return indent + self.visit(n)
        return indent + self.visit(n) + "\n"


_PRINTER = Printer()


def to_c(n) -> str:
    """`n` as C, as pycparser's generator prints the parsed node (so `to_c` of a statement's tree is
    `text_of` of its parsed node)."""
    return _PRINTER.visit(n)
