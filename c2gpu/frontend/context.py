"""What lowering knows while it walks one nest: the variables in scope (`Var`, `Scope`) and `NestContext`, which
turns integer expressions into polynomials, gives expressions their C types and value ranges, and follows the
nest's index temporaries.

Separate from the statement and loop lowering that use it: every other lowering module reads a `NestContext`,
and it needs none of them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import field
from typing import Callable, NamedTuple
from fractions import Fraction

from pycparser import c_ast

from ..ir import Flag, Guard, Loc, Span
from ..symbolic import Poly
from .libc import MATH_FUNCTIONS
from .functions import PureFunction
from .ctypes import INT_RANGES, SIZES, CType, arith_result, decl_type, int_result, is_unsigned, promote
from ..records import dataclass
from .syntax import Trees, _array_chain, _assigned_name, _walk, loc_of, text_of


# --------------------------------------------------------------------------- scopes

class Var(NamedTuple):
    """A declared variable: its type, storage kind, where it is declared, and its name in the IR.

    `ir` differs from the C name only for a variable declared inside a nest whose
    name another variable of the nest (or around it) also has: "t#2".  Names in
    the IR identify variables, so two `t`s in sibling blocks are never conflated.
    `decl_lids`: the loops of the nest around the declaration (None: outside the nest).
    """
    ctype: CType
    storage: str
    loc: Loc
    ir: str = ""
    decl_lids: tuple[int, ...] | None = None


@dataclass
class Scope:
    """Variables visible at a point: C name -> Var."""
    vars: dict[str, Var] = field(default_factory=dict)
    parent: "Scope | None" = None

    def lookup(self, name: str) -> Var | None:
        s: Scope | None = self
        while s is not None:
            if name in s.vars:
                return s.vars[name]
            s = s.parent
        return None

    def child(self) -> "Scope":
        return Scope({}, self)


# --------------------------------------------------------------------------- expressions

class Temporary(NamedTuple):
    """What an index temporary holds (NestContext.record_temporary): `value` from its assignment, which sits
    directly in the body of the innermost of `loop_ids` (whose variables are `loop_vars`), to that body's end."""
    value: Poly
    loop_ids: tuple[int, ...]
    loop_vars: tuple[str, ...]


class NestContext:
    """What lowering one nest needs to know while it walks the loops."""

    def __init__(self, scope: Scope, typedefs: dict[str, CType], functions: dict[str, CType], fallback: Loc,
                 user_functions: frozenset[str] = frozenset(), address_taken: frozenset[str] = frozenset()):
        self.scope = scope
        self.typedefs = typedefs
        self.functions = functions
        self.user_functions = user_functions    # defined or declared by the user's code (not c2gpu's headers)
        self.pure: dict[str, PureFunction] = {}  # the file's pure functions (frontend/functions.py): no side effects
        self.structs: dict[str, dict[str, CType]] = {}   # 'struct X' -> its fields (fields.struct_fields)
        self.by_field: dict[str, tuple[str, ...]] = {}   # arrays of structs accessed by field -> the field names
        self.not_inlined: dict[str, str] = {}    # function of the file -> why its calls were not inlined
        self.macro_origin: dict[str, str] = {}    # identifier -> the -D that gave it (FileLowerer.macro_origin)
        self.directive_span: Callable[[Loc], Span] = lambda loc: Span(loc.file, loc.line, loc.col, loc.line, loc.col)
        self.address_taken = address_taken      # names whose address the function takes (`&x`)
        self.fallback = fallback
        self.loop_vars: list[str] = []
        self.loop_ids: list[int] = []
        self.loop_types: dict[str, str] = {}     # loop variable -> its C type
        self.renamed: dict[int, str] = {}        # id(Decl) -> IR name, for declarations whose C name is not unique
        self.locals: dict[str, tuple[Var, "c_ast.Decl"]] = {}  # IR name -> nest-local variable and its declaration
        self.next_lid = 0
        self.written: set[str] = set()          # scalars assigned anywhere in the nest
        self.uncounted: dict[str, int] = {}     # the variable of a loop that runs whole in each thread -> its line
        self.local_depth: dict[str, int] = {}    # nest-local scalar -> loop depth at its declaration
        self.local_affine: dict[str, Poly] = {}  # nest-local int defined once by a polynomial (`int c = i*nx + j`)
        self.local_why: dict[str, str] = {}
        self.assignments: Counter[str] = Counter()   # C name -> assignments in the nest (`=`, `op=`, ++, --)
        self.has_goto = False                        # the function holds a goto or a label (FunctionFacts)
        self.rows_distinct = lambda base: None       # element type -> the fact that tables of it have rows of their
        #                                              own (frontend/objects.py FileObjects.rows_distinct), or None
        self.temporaries: dict[str, Temporary] = {}   # IR name -> the value an index temporary holds (see below)
        self.idiom_guard: Guard | None = None
        self.conditions: dict[int, c_ast.Node] = {}   # Guard.site -> the condition it was made of
        self.trees = Trees()                           # the IR's syntax trees of the nest's nodes (c2gpu.syntax_tree)
        self.loop_decls: dict[int, list[str]] = {}   # lid -> C names its body declares
        self.range_cache: dict[tuple, tuple[Fraction, Fraction] | None] = {}      # nest-local int whose initialization converts its value (by IR name)
        self.flags: list[Flag] = []
        self.arrays_used: dict[str, Loc] = {}
        self.inner_arrays: dict[str, tuple[CType, "c_ast.Decl", tuple[int, ...], tuple[Poly, ...]]] = {}   # arrays
        #                                            declared inside the nest (a new object each iteration of the loops
        #                                            around): type, declaration, those loops' lids, constant extents
        self.scalars_used: dict[str, Loc] = {}
        self.params: set[str] = set()
        self.entry_values: dict[str, Poly] = {}  # parameter -> the polynomial of other parameters it holds at the
        #                                          nest's entry (`lj = 2 * lk;` just before it: _entry_values)
        self.sid = 0

    def loc(self, node: c_ast.Node) -> Loc:
        return loc_of(node, self.fallback)

    def flag(self, code: str, message: str, node: c_ast.Node) -> None:
        f = Flag(code, message, self.loc(node), tuple(self.loop_ids))
        if f not in self.flags:
            self.flags.append(f)

    def type_of_name(self, name: str) -> CType | None:
        if name in self.loop_types and name in self.loop_vars:
            return CType(self.loop_types[name])
        found = self.scope.lookup(name)
        return found.ctype if found else None

    def ir_name(self, name: str) -> str:
        """The IR name of the variable `name` denotes here (its C name unless a nest-local one was renamed)."""
        found = self.scope.lookup(name)
        return (found.ir or name) if found is not None else name

    def field_of(self, node: c_ast.StructRef) -> tuple[str, list[c_ast.Node], int, str] | None:
        """`a[i][j].re` with `a` an array of structs whose fields all have one scalar type (`dcomplex`: two
        doubles): (array, its subscripts, the field's position, that type), or None.  Such an array is, for the
        analyses and the port, an array of that type with one more dimension, the field: `a[i][j][0]`.  (Every
        ABI c2gpu targets lays out members of one scalar type without padding between them.)"""
        if node.type != "." or not isinstance(node.name, c_ast.ArrayRef) or not isinstance(node.field, c_ast.ID):
            return None
        base, subs = _array_chain(node.name)
        t = self.type_of_name(base.name) if isinstance(base, c_ast.ID) else None
        fields = self.structs.get(t.base) if t is not None else None
        if not fields or len(subs) != len(t.dims) + t.pointers or t.pointer_rows or node.field.name not in fields:
            return None
        field_type = _one_scalar_type(fields)
        if field_type is None:
            return None
        return base.name, subs, list(fields).index(node.field.name), field_type

    def is_math(self, name: str) -> bool:
        """A math library function c2gpu knows, not a function of the user's that happens to share its name."""
        return name in MATH_FUNCTIONS and name not in self.user_functions

    # -- value ranges (for conversions) --------------------------------------
    def int_type(self, node: c_ast.Node) -> str:
        """The C type of an integer expression after the integer promotions ('?' when unknown or not integer)."""
        if isinstance(node, c_ast.Constant):
            v = node.value.lower()
            if node.type == "char":
                return "int"
            if node.type not in ("int", "long", "long long", "unsigned int", "unsigned long", "unsigned long long") \
                    and not node.type.endswith("int"):
                return "?"
            suffix = v.lstrip("0123456789abcdefx")
            try:
                value = int(v.rstrip("ul"), 0)
            except ValueError:
                return "?"
            t = ("unsigned " if "u" in suffix else "") + ("long" if "l" in suffix or value > 2 ** 31 - 1 else "int")
            if t == "int" and v.startswith("0") and value > 2 ** 31 - 1:
                t = "unsigned int"
            return t
        if isinstance(node, c_ast.ID):
            t = self.type_of_name(node.name)
            return promote(t.base) if t is not None and t.is_integer else "?"
        if isinstance(node, c_ast.Cast):
            t = decl_type(node.to_type, self.typedefs)
            return promote(t.base) if t.is_integer else "?"
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+", "~"):
            return self.int_type(node.expr)
        if isinstance(node, c_ast.BinaryOp):
            if node.op in ("<<", ">>"):
                return self.int_type(node.left)
            if node.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
                return "int"
            return int_result(self.int_type(node.left), self.int_type(node.right)) or "?"
        if isinstance(node, c_ast.ArrayRef):
            t = self.type_of(node)
            return promote(t) if t in INT_RANGES else "?"
        return "?"

    def value_range(self, p: Poly, depth: int = 0) -> tuple[Fraction, Fraction] | None:
        """Bounds on the values `p` takes in the nest, by interval arithmetic (sound, not tight).

        A loop variable ranges over its loop's bounds (themselves bounded the same way), a
        parameter over its C type; None when a variable is neither (or the bounds nest too deep).
        """
        if depth > 64:
            return None
        lo = hi = Fraction(0)
        for mono, c in p.terms:
            tlo = thi = Fraction(c)
            for v, power in mono:
                r = self.var_range(v, depth)
                if r is None:
                    return None
                for _ in range(power):
                    cands = (tlo * r[0], tlo * r[1], thi * r[0], thi * r[1])
                    tlo, thi = min(cands), max(cands)
            lo, hi = lo + tlo, hi + thi
        return lo, hi

    def var_range(self, v: str, depth: int) -> tuple[Fraction, Fraction] | None:
        key = (v, tuple(self.loop_ids))         # a loop variable's range depends only on the loops around it
        if key not in self.range_cache:
            self.range_cache[key] = self._var_range(v, depth)
        return self.range_cache[key]

    def _var_range(self, v: str, depth: int) -> tuple[Fraction, Fraction] | None:
        t = self.type_of_name(v)
        if t is None or not t.is_integer or t.base not in INT_RANGES:
            return None
        tlo, thi = (Fraction(x) for x in INT_RANGES[t.base])
        if v in self.loop_vars:
            lo_p, hi_p = self.loop_ranges.get(v, (None, None))
            lo = self.value_range(lo_p, depth + 1) if lo_p is not None else None
            hi = self.value_range(hi_p - 1, depth + 1) if hi_p is not None else None
            tlo = max(tlo, lo[0]) if lo is not None else tlo
            thi = min(thi, hi[1]) if hi is not None else thi
        return tlo, thi

    def fits(self, p: Poly, ctype: str) -> bool:
        """Whether every value `p` takes is a value of `ctype` (so converting it to `ctype` changes nothing)."""
        if ctype not in INT_RANGES:
            return False
        r = self.value_range(p)
        lo, hi = INT_RANGES[ctype]
        return r is not None and lo <= r[0] and r[1] <= hi

    # -- affine conversion ---------------------------------------------------
    def poly(self, node: c_ast.Node) -> tuple[Poly | None, str]:
        """Integer expression -> Poly over loop variables and parameters, or (None, reason)."""
        if isinstance(node, c_ast.Constant):
            if node.type in ("int", "long", "long long", "unsigned int", "unsigned long", "unsigned long long") or node.type.endswith("int"):
                try:
                    return Poly.const(int(node.value.rstrip("uUlL"), 0)), ""
                except ValueError:
                    return None, f"constant '{node.value}'"
            if node.type == "char":
                return None, f"character constant {node.value}"
            return None, f"non-integer constant {node.value}"
        if isinstance(node, c_ast.ID):
            name = node.name
            if name in self.loop_vars:
                return Poly.var(name), ""
            if self.ir_name(name) in self.local_affine:
                return self.local_affine[self.ir_name(name)], ""
            held = self.temporaries.get(self.ir_name(name))
            if held is not None and self.holds(held):
                return held.value, ""
            if self.ir_name(name) in self.local_why:
                return None, self.local_why[self.ir_name(name)]
            if name in self.uncounted:
                return None, (f"depends on '{name}', the variable of the loop at line {self.uncounted[name]}, which "
                              "c2gpu does not count")
            if name in self.written or name in self.local_depth:
                return None, f"depends on '{name}', which is assigned inside the nest"
            t = self.type_of_name(name)
            if t is None:
                origin = self.macro_origin.get(name)
                return None, f"unknown identifier '{name}'" + (f" (the value of {origin}: a number was meant?)"
                                                                if origin else "")
            if not t.is_integer:
                return None, f"'{name}' is not an integer"
            self.params.add(name)
            return Poly.var(name), ""
        if isinstance(node, c_ast.BinaryOp):
            if node.op in ("+", "-", "*"):
                a, ra = self.poly(node.left)
                if a is None:
                    return None, ra
                b, rb = self.poly(node.right)
                if b is None:
                    return None, rb
                result = a + b if node.op == "+" else a - b if node.op == "-" else a * b
                t = self.int_type(node)
                if is_unsigned(t) and not (self.fits(a, t) and self.fits(b, t) and self.fits(result, t)):
                    # unsigned arithmetic is modulo 2^n: the polynomial is its value only without wrap-around
                    return None, (f"'{text_of(node)}' (line {self.loc(node).line}) is {t} arithmetic that can "
                                  "wrap around (or convert a negative operand)")
                return result, ""
            if node.op == "<<":
                a, ra = self.poly(node.left)
                b, _ = self.poly(node.right)
                if a is not None and b is not None and b.is_const() and 0 <= b.const_value() < 63:
                    t = self.int_type(node)
                    if is_unsigned(t) and not self.fits(a * (2 ** int(b.const_value())), t):
                        return None, f"'{text_of(node)}' (line {self.loc(node).line}) can shift bits out"
                    return a * (2 ** int(b.const_value())), ""   # (a negative or too wide shift is undefined)
                return None, f"shift '{text_of(node)}'"
            if node.op in ("/", "%"):
                a, ra = self.poly(node.left)
                b, _ = self.poly(node.right)
                if a is not None and b is not None and a.is_const() and b.is_const() and b.const_value() != 0:
                    # constant folding with C's truncating division (macros like R = 5/2)
                    x, y = int(a.const_value()), int(b.const_value())
                    q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
                    return Poly.const(q if node.op == "/" else x - q * y), ""
                if node.op == "%":
                    return None, f"modulo '{text_of(node)}'"
                if a is not None and b is not None and b.is_const() and b.const_value() != 0:
                    q = a.scale(Fraction(1) / b.const_value())
                    if q.is_integral():
                        return q, ""
                return None, f"integer division '{text_of(node)}'"
            return None, f"operator '{node.op}' in '{text_of(node)}'"
        if isinstance(node, c_ast.UnaryOp):
            if node.op == "-":
                a, r = self.poly(node.expr)
                if a is not None and is_unsigned(self.int_type(node)) and not self.fits(-a, self.int_type(node)):
                    return None, f"'{text_of(node)}' (line {self.loc(node).line}) negates an unsigned value"
                return (-a if a is not None else None), r
            if node.op == "+":
                return self.poly(node.expr)
            return None, f"'{text_of(node)}'"
        if isinstance(node, c_ast.Cast):
            t = decl_type(node.to_type, self.typedefs)
            if not t.is_integer:
                return None, f"cast to {t.base}"
            a, why = self.poly(node.expr)
            if a is None:
                return None, why
            if a.is_const() and a.const_value().denominator == 1 and t.base in INT_RANGES:
                return Poly.const(_convert(int(a.const_value()), t.base)), ""   # (unsigned char)260 is 4
            if not self.fits(a, t.base):
                return None, (f"the conversion '{text_of(node)}' (line {self.loc(node).line}) can change the value "
                              f"(not every value of '{text_of(node.expr)}' is a value of {t.base})")
            return a, ""
        if isinstance(node, c_ast.ArrayRef):
            return None, f"indirect subscript '{text_of(node)}' (data-dependent)"
        if isinstance(node, c_ast.FuncCall):
            return None, f"call '{text_of(node.name)}' in subscript"
        return None, f"'{text_of(node)}' is not affine"

    # -- index temporaries ----------------------------------------------------
    def held_value(self, name: str, ctype: CType, value: c_ast.Node) -> tuple[Poly | None, str]:
        """The polynomial an integer variable of type `ctype` holds after `name = value`: (p, ""), or (None, "")
        when the value is no polynomial of loop variables and parameters, or (None, why) when the conversion
        to `ctype` may change it.

        The value converted to `ctype` must be the value computed: it is when `ctype` holds every value of
        the expression's type (signed overflow in the expression itself is undefined behaviour, which C
        compilers assume away, and so do we), or when the value ranges prove it fits.
        """
        p, _ = self.poly(value)
        if p is None:
            return None, ""
        src = self.int_type(value)
        if ctype.base in INT_RANGES and src in INT_RANGES and \
                INT_RANGES[ctype.base][0] <= INT_RANGES[src][0] and INT_RANGES[src][1] <= INT_RANGES[ctype.base][1]:
            return p, ""
        if self.fits(p, ctype.base):
            return p, ""
        return None, (f"'{name}' holds '{text_of(value)}' converted to {ctype.base} (line {self.loc(value).line}), "
                      "which can change its value")

    def record_temporary(self, stmt: c_ast.Assignment, guards: tuple[Guard, ...]) -> None:
        """Forward substitution of `c = i*nx + j;`: from here to the end of the body of the loop around it, `c`
        holds that polynomial, when the statement runs in every iteration of that loop (no `if` inside the
        loop around it) and no pointer or call can change `c` (a local or a parameter, not global or static,
        whose address is not taken).  The rest of the body, inner loops included, then sees this iteration's
        value: the subscripts that use `c` are the polynomial (`a[c]` is `a[i][j]`), until the next write of `c`
        (`i = 1; f[i][m] = ...; i = 2; f[i][m] = ...`: each use sees its own), and not inside a loop that writes
        `c` anywhere (forget_written_in).  Before the assignment in the body, `c` still holds the previous
        iteration's value: not substituted."""
        tgt = stmt.lvalue
        if stmt.op != "=" or not isinstance(tgt, c_ast.ID) or not self.loop_ids or tgt.name in self.loop_vars:
            return
        if self.has_goto and self.assignments[tgt.name] != 1:
            return                                  # a jump back may pass from a later write to an earlier use
        var = self.scope.lookup(tgt.name)
        if var is None or not var.ctype.is_integer or not var.ctype.is_scalar or var.storage not in ("local", "param") \
                or tgt.name in self.address_taken:
            return
        local = self.locals.get(var.ir or tgt.name)
        if local is not None and local[1].init is not None:
            return                                  # `int c = 0; ... c = i*nx + j;`: written twice
        if any(g.depth is None or g.depth >= len(self.loop_ids) for g in guards):
            return
        value, _ = self.held_value(tgt.name, var.ctype, stmt.rvalue)
        if value is not None:
            self.temporaries[var.ir or tgt.name] = Temporary(value, tuple(self.loop_ids), tuple(self.loop_vars))

    def forget(self, name: str) -> None:
        """A write of `name` that record_temporary does not follow: what it held is unknown from here."""
        self.temporaries.pop(self.ir_name(name), None)

    def forget_written_in(self, loop: c_ast.Node) -> None:
        """Entering a loop (a `for`, or a statement that may hold a `while` or `do`): a scalar written anywhere in
        it (its header included) may hold, at any point of it, a value from its previous iteration."""
        for name in filter(None, (_assigned_name(n) for n, _ in _walk(loop))):
            self.forget(name)

    def holds(self, held: "Temporary") -> bool:
        """Whether this point of the walk is in the rest of the loop body where `held` was assigned: inside
        the same loops (lids are unique), with no inner loop reusing a variable the value names."""
        n = len(held.loop_ids)
        return tuple(self.loop_ids[:n]) == held.loop_ids and tuple(self.loop_vars[:n]) == held.loop_vars \
            and not (held.value.variables & set(self.loop_vars[n:]))

    # -- types -------------------------------------------------------------
    def type_of(self, node: c_ast.Node) -> str:
        """Arithmetic type of an expression ('float', 'double', 'int', ...), '?' when unknown."""
        if isinstance(node, c_ast.Constant):
            if node.type in ("float", "double"):
                return "float" if node.value.lower().endswith("f") else "double"
            return "int" if node.type in ("int", "char") else node.type
        if isinstance(node, c_ast.ID):
            if node.name in self.loop_vars:
                return "int"
            t = self.type_of_name(node.name)
            return t.base if t and t.is_scalar else "?"
        if isinstance(node, c_ast.ArrayRef):
            base, subs = _array_chain(node)
            if isinstance(base, c_ast.ID):
                t = self.type_of_name(base.name)
                if t is not None and len(subs) >= len(t.dims) + t.pointers:
                    return t.base
            return "?"
        if isinstance(node, c_ast.StructRef) and (found := self.field_of(node)) is not None:
            return found[3]
        if isinstance(node, c_ast.UnaryOp):
            if node.op == "*":
                inner = node.expr
                while isinstance(inner, c_ast.BinaryOp):
                    inner = inner.left
                if isinstance(inner, c_ast.ID):
                    t = self.type_of_name(inner.name)
                    return t.base if t else "?"
                return "?"
            if node.op in ("!", "sizeof"):
                return "int"
            return self.type_of(node.expr)
        if isinstance(node, c_ast.BinaryOp):
            if node.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
                return "int"
            return arith_result(self.type_of(node.left), self.type_of(node.right))
        if isinstance(node, c_ast.TernaryOp):
            return arith_result(self.type_of(node.iftrue), self.type_of(node.iffalse))
        if isinstance(node, c_ast.Cast):
            return decl_type(node.to_type, self.typedefs).base
        if isinstance(node, c_ast.Assignment):
            return self.type_of(node.lvalue)
        if isinstance(node, c_ast.FuncCall):
            name = text_of(node.name)
            if self.is_math(name):
                return MATH_FUNCTIONS[name][1]
            t = self.functions.get(name)
            return t.base if t else "?"
        return "?"


def _one_scalar_type(fields: dict[str, CType]) -> str | None:
    """The type every field of a struct has, when they all have one scalar type (`dcomplex`: double), else None."""
    types = {f.base for f in fields.values() if f.is_scalar}
    if len(types) != 1 or not all(f.is_scalar for f in fields.values()) or next(iter(types)) not in SIZES:
        return None
    return next(iter(types))


def _convert(value: int, ctype: str) -> int:
    """`value` converted to the integer type `ctype`: modulo 2^n (C11 6.3.1.3; for signed types the
    implementation-defined result of gcc, clang and nvcc)."""
    if ctype == "_Bool":
        return int(value != 0)
    lo, hi = INT_RANGES[ctype]
    span = hi - lo + 1
    return (value - lo) % span + lo
