"""Lower a pycparser AST to the loop-nest IR.

For every function we find the outermost `for` loops (honouring `#pragma scop`
regions and c2gpu's own `#pragma c2gpu port` / `#pragma c2gpu skip` markers)
and describe each nest: loops with affine bounds and trip counts, statements
with guards, array accesses with affine subscripts, scalars, reduction
candidates and operation counts.  Anything we cannot describe exactly becomes
a `Flag` with its source location; lowering never gives up on a whole file
because one nest is strange.
"""
from __future__ import annotations

import copy
import gc
import os
from collections import Counter
from dataclasses import field, replace
from typing import NamedTuple
from fractions import Fraction

from pycparser import c_ast, c_generator

from ..ir import (Access, ArrayInfo, Constraint, Flag, Guard, Loc, Loop, Nest, Program, loop_words,
                  Reduction, ScalarInfo, Statement)
from ..symbolic import Poly, Sym
from ..diagnostics import C2GPUError
from ..libc import MATH_FUNCTIONS, SETS_ERRNO
from .preprocess import INCLUDE_DIR, preprocess
from .objects import FileObjects, _constant
from .fields import invariant_elements, renamed, struct_fields
from .inline import Inliner, only_indexes
from .trees import changed_here, copy_tree, has_side_effect, swap
from .parse import parse_c, unescape as _unescape
from .functions import PureFunction, needed, pure_functions
from .run_order import run_order
from .inductions import Induction, substitute_inductions
from .ctypes import FLOAT_TYPES, INT_RANGES, SIZES, CType, arith_result, decl_type, int_result, is_unsigned, promote
from ..records import dataclass

_GEN = c_generator.CGenerator()

_MAX_NAMES = {"fmax", "fmaxf"}
_MIN_NAMES = {"fmin", "fminf"}


def text_of(node: c_ast.Node | None) -> str:
    return "" if node is None else _GEN.visit(node)


def loc_of(node: c_ast.Node, fallback: Loc) -> Loc:
    c = getattr(node, "coord", None)
    if c is None or c.line is None:
        return fallback
    return Loc(_unescape(str(c.file)), int(c.line), int(c.column or 0))


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
        self.address_taken = address_taken      # names whose address the function takes (`&x`)
        self.fallback = fallback
        self.loop_vars: list[str] = []
        self.loop_ids: list[int] = []
        self.loop_types: dict[str, str] = {}     # loop variable -> its C type
        self.renamed: dict[int, str] = {}        # id(Decl) -> IR name, for declarations whose C name is not unique
        self.locals: dict[str, tuple[Var, "c_ast.Decl"]] = {}  # IR name -> nest-local variable and its declaration
        self.next_lid = 0
        self.written: set[str] = set()          # scalars assigned anywhere in the nest
        self.local_depth: dict[str, int] = {}    # nest-local scalar -> loop depth at its declaration
        self.local_affine: dict[str, Poly] = {}  # nest-local int defined once by a polynomial (`int c = i*nx + j`)
        self.local_why: dict[str, str] = {}
        self.assignments: Counter[str] = Counter()   # C name -> assignments in the nest (`=`, `op=`, ++, --)
        self.has_goto = False                        # the function holds a goto or a label (FunctionFacts)
        self.rows_distinct = lambda base: None       # element type -> the fact that tables of it have rows of their
        #                                              own (frontend/objects.py FileObjects.rows_distinct), or None
        self.temporaries: dict[str, Temporary] = {}   # IR name -> the value an index temporary holds (see below)
        self.idiom_guard: Guard | None = None
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


def _array_chain(node: c_ast.ArrayRef) -> tuple[c_ast.Node, list[c_ast.Node]]:
    """A[i][j] -> (ID A, [i, j])."""
    subs = []
    while isinstance(node, c_ast.ArrayRef):
        subs.append(node.subscript)
        node = node.name
    return node, subs[::-1]


def _prec(t: str) -> str:
    return "fp64" if t in ("double", "long double") else "fp32"


# --------------------------------------------------------------------------- statements

class StatementBuilder:
    """Accesses, scalars, op counts and reductions of one simple statement."""

    def __init__(self, ctx: NestContext, stmt: c_ast.Node, guards: tuple[Guard, ...], idiom_guard: Guard | None = None):
        self.ctx = ctx
        self.stmt = stmt
        self.guards = guards
        self.idiom_guard = idiom_guard     # `if (e > t) t = e;` with nothing else under the `if`: a max/min
        self.accesses: list[Access] = []
        self.scalar_reads: list[str] = []
        self.scalar_writes: list[str] = []
        self.ops: Counter[str] = Counter()
        self.calls: list[str] = []
        self.when: list[tuple[Guard, bool]] = []   # the conditional expressions around the node being visited

    # -- accesses --------------------------------------------------------------
    def under(self, cond: c_ast.Node, holds: bool, node: c_ast.Node, mode: str = "read") -> None:
        """Visit `node`, which is evaluated only where `cond` holds (or does not)."""
        self.when.append((guard_of(self.ctx, cond, False), holds))
        try:
            self.visit(node, mode)
        finally:
            self.when.pop()

    def visit(self, node: c_ast.Node | None, mode: str = "read") -> None:
        """Record memory effects of `node`; mode is 'read', 'write' or 'update' (read+write)."""
        ctx = self.ctx
        if node is None:
            return
        if isinstance(node, c_ast.ArrayRef):
            base, subs = _array_chain(node)
            for s in subs:
                self.visit(s, "read")
            if isinstance(base, c_ast.ID):
                self.record_access(base.name, subs, node, mode)
            else:
                self.visit(base, "read")
                ctx.flag("unsupported-access", f"access through '{text_of(base)}' cannot be analysed", node)
            return
        if isinstance(node, c_ast.ID):
            self.record_scalar(node, mode)
            return
        if isinstance(node, c_ast.UnaryOp):
            if node.op in ("++", "--", "p++", "p--"):
                self.visit(node.expr, "update")
                return
            if node.op == "*":
                self.deref(node, mode)
                return
            if node.op == "&":
                ctx.flag("address-taken", f"address of '{text_of(node.expr)}' is taken", node)
                return
            if node.op == "sizeof":
                return
            self.visit(node.expr, "read")
            return
        if isinstance(node, c_ast.Assignment):
            self.visit(node.rvalue, "read")
            self.visit(node.lvalue, "write" if node.op == "=" else "update")
            if node is self.stmt:
                ctx.record_temporary(node, self.guards)
            return
        if isinstance(node, c_ast.FuncCall):
            name = text_of(node.name)
            self.calls.append(name)
            if not ctx.is_math(name) and name not in ctx.pure:
                why = f" (not inlined: {ctx.not_inlined[name]})" if name in ctx.not_inlined else ""
                ctx.flag("unknown-call", f"call to '{name}': c2gpu cannot see what it reads or writes{why}", node)
            for arg in (node.args.exprs if node.args else []):
                if isinstance(arg, c_ast.ID) and (t := ctx.type_of_name(arg.name)) and not t.is_scalar:
                    what = "array" if t.dims and not t.pointers else "pointer"
                    ctx.flag("array-escapes", f"{what} '{arg.name}' is passed to '{name}', which may read or write "
                             "what it points to", arg)
                self.visit(arg, "read")
            return
        if isinstance(node, c_ast.TernaryOp):
            self.visit(node.cond, "read")
            self.under(node.cond, True, node.iftrue)
            self.under(node.cond, False, node.iffalse)
            return
        if isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
            self.visit(node.left, "read")
            self.under(node.left, node.op == "&&", node.right)
            return
        if isinstance(node, c_ast.StructRef):
            found = ctx.field_of(node)
            if found is not None:
                name, subs, index, _ = found
                for s in subs:
                    self.visit(s, "read")
                self.record_access(name, subs, node, mode, field=index)
                return
            ctx.flag("unsupported-access", f"struct member access '{text_of(node)}' is not analysed", node)
            self.visit(node.name, "read")
            return
        if isinstance(node, c_ast.Decl):
            self.visit(node.init, "read")
            return
        for _, child in node.children():
            self.visit(child, "read")

    def deref(self, node: c_ast.UnaryOp, mode: str) -> None:
        """*p and *(p + e) are p[0] and p[e]."""
        inner = node.expr
        if isinstance(inner, c_ast.ID):
            self.record_access(inner.name, [c_ast.Constant("int", "0")], node, mode)
        elif isinstance(inner, c_ast.BinaryOp) and inner.op == "+" and isinstance(inner.left, c_ast.ID):
            self.visit(inner.right, "read")
            self.record_access(inner.left.name, [inner.right], node, mode)
        else:
            self.visit(inner, "read")
            self.ctx.flag("unsupported-access", f"dereference '{text_of(node)}' cannot be analysed", node)

    def record_access(self, name: str, subs: list[c_ast.Node], node: c_ast.Node, mode: str,
                      field: int | None = None) -> None:
        """An access of array `name` with subscripts `subs`; `field`: the position of the field it reads or
        writes in an array of structs seen by field (NestContext.field_of), its last subscript."""
        ctx = self.ctx
        t = ctx.type_of_name(name)
        loc = ctx.loc(node)
        if t is None:
            ctx.flag("unknown-array", f"'{name}' is not declared", node)
            return
        ctx.arrays_used.setdefault(name, loc)
        if field is not None:
            fields = ctx.structs[t.base]
            ctx.by_field[name] = tuple(fields)
            subs = list(subs) + [c_ast.Constant("int", str(field))]
            t = replace(t, base=_one_scalar_type(fields), dims=t.dims + (None,))
        polys: list[Poly | None] = []
        reasons: list[str] = []
        for s in subs:
            p, why = ctx.poly(s)
            polys.append(p)
            if p is None:
                reasons.append(why)
            elif not p.is_affine():
                reasons.append(f"subscript '{text_of(s)}' is not affine (product of variables)")
        rank = len(t.dims) + t.pointers
        if len(subs) < rank:
            reasons.append(f"'{text_of(node)}' uses {len(subs)} of {rank} subscripts")
        if t.pointer_rows and len(subs) > 1 and not ctx.rows_distinct(t.base):
            # int *rows[N] / float **a: every row is a pointer of its own, and two rows may point to the same memory
            reasons.append(f"the rows of '{name}' are pointers, which may point to the same memory")
        text = text_of(node)
        if reasons:
            ctx.flag("non-affine-subscript", f"'{text}': {reasons[0]}", node)
        linear = delinearize(polys, t, ctx) if not reasons or all("not affine (product" in r for r in reasons) else None
        if linear is not None and len(subs) == 1 and reasons:
            # i*n + j with n a parameter: affine once recovered as [i][j]
            ctx.flags = [f for f in ctx.flags if not (f.code == "non-affine-subscript" and f.loc == loc)]
            reasons = []
        for kind in (("read", "write") if mode == "update" else (mode,)):
            self.accesses.append(Access(
                array=name, kind=kind, subscripts=tuple(polys), affine=not reasons, loc=loc, text=text,
                elem_type=t.base, elem_size=t.elem_size, reason="; ".join(reasons), linearized=linear,
                when=tuple(self.when)))

    def record_scalar(self, node: c_ast.ID, mode: str) -> None:
        ctx = self.ctx
        name = node.name
        if mode != "read":
            ctx.forget(name)
        if name in ctx.loop_vars:
            if mode != "read":
                ctx.flag("loop-var-modified", f"loop variable '{name}' is modified in the loop body", node)
            return
        t = ctx.type_of_name(name)
        if t is None:
            if name not in ctx.functions:
                ctx.flag("unknown-identifier", f"'{name}' is not declared", node)
            return
        if not t.is_scalar:
            if mode != "read":
                # p++, p = q: what the pointer reaches changes between iterations, and no access through it
                # can be analysed (the write is not a scalar write the dependence pass would see)
                ctx.flag("pointer-modified", f"pointer '{name}' is assigned inside the nest, so its subscripts "
                                             "do not name the same cells in every iteration", node)
            return
        name = ctx.ir_name(name)
        ctx.scalars_used.setdefault(name, ctx.loc(node))
        if mode in ("read", "update"):
            self.scalar_reads.append(name)
        if mode in ("write", "update"):
            self.scalar_writes.append(name)

    # -- operation counts ---------------------------------------------------------
    def count(self, node: c_ast.Node | None) -> str:
        """Count arithmetic in a value expression; return its type.  Subscripts are address math, not counted."""
        ctx = self.ctx
        if node is None:
            return "?"
        if isinstance(node, c_ast.BinaryOp):
            if node.op in ("+", "-"):
                for a, b in ((node.left, node.right), (node.right, node.left)):
                    if isinstance(a, c_ast.BinaryOp) and a.op == "*":
                        ta = arith_result(self.count(a.left), self.count(a.right))
                        tb = self.count(b)
                        t = arith_result(ta, tb)
                        self._add_mul(ta, t)
                        return t
            lt, rt = self.count(node.left), self.count(node.right)
            if node.op in ("<", "<=", ">", ">=", "==", "!="):
                self.ops["compare"] += 1
                return "int"
            if node.op in ("&&", "||"):
                self.ops["int"] += 1
                return "int"
            t = arith_result(lt, rt)
            kind = {"+": "add", "-": "add", "*": "mul", "/": "div"}.get(node.op)
            self.ops[f"{_prec(t)}_{kind}" if t in FLOAT_TYPES and kind else "int"] += 1
            return t
        if isinstance(node, c_ast.UnaryOp):
            if node.op in ("++", "--", "p++", "p--"):
                t = self.count(node.expr)
                self.ops[f"{_prec(t)}_add" if t in FLOAT_TYPES else "int"] += 1
                return t
            if node.op == "sizeof":
                return "int"
            if node.op == "!":
                self.count(node.expr)
                self.ops["int"] += 1
                return "int"
            return self.count(node.expr)
        if isinstance(node, c_ast.TernaryOp):
            self.count(node.cond)
            t = arith_result(self.count(node.iftrue), self.count(node.iffalse))
            self.ops["select"] += 1
            return t
        if isinstance(node, c_ast.Cast):
            inner = self.count(node.expr)
            t = decl_type(node.to_type, ctx.typedefs).base
            if (inner in FLOAT_TYPES) != (t in FLOAT_TYPES) or (inner in FLOAT_TYPES and inner != t):
                self.ops["convert"] += 1
            return t
        if isinstance(node, c_ast.Assignment):
            rt = self.count(node.rvalue)
            lt = ctx.type_of(node.lvalue)
            if node.op != "=":
                op = node.op[:-1]
                if op in ("+", "-") and isinstance(node.rvalue, c_ast.BinaryOp) and node.rvalue.op == "*" \
                        and rt in FLOAT_TYPES and arith_result(lt, rt) == rt:
                    # x += a*b at one precision: the multiply was counted above; fuse it with the add
                    self.ops[f"{_prec(rt)}_mul"] -= 1
                    self.ops[f"{_prec(rt)}_fma"] += 1
                else:
                    t = arith_result(lt, rt)
                    kind = {"+": "add", "-": "add", "*": "mul", "/": "div"}.get(op)
                    self.ops[f"{_prec(t)}_{kind}" if t in FLOAT_TYPES and kind else "int"] += 1
            elif (lt in FLOAT_TYPES) != (rt in FLOAT_TYPES) and rt != "?" and lt != "?" \
                    and not isinstance(node.rvalue, c_ast.Constant):  # constants convert at compile time
                self.ops["convert"] += 1
            return lt
        if isinstance(node, c_ast.FuncCall):
            name = text_of(node.name)
            arg_types = [self.count(a) for a in (node.args.exprs if node.args else [])]
            if ctx.is_math(name):
                kind, t = MATH_FUNCTIONS[name]
                if kind == "int":
                    self.ops["int"] += 1
                elif kind == "minmax":
                    self.ops["compare"] += 1
                    self.ops["select"] += 1
                else:
                    self.ops[f"{_prec(t)}_{kind}"] += 1
                return t
            self.ops["unknown_call"] += 1
            t = ctx.functions.get(name)
            return t.base if t else (arg_types[0] if arg_types else "?")
        if isinstance(node, c_ast.Decl):
            return self.count(node.init) if node.init is not None else "?"
        if isinstance(node, c_ast.ExprList):
            t = "?"
            for e in node.exprs:
                t = self.count(e)
            return t
        return ctx.type_of(node)

    def count_statements(self, node: c_ast.Node | None) -> None:
        """Count the arithmetic of a statement with statements inside (a loop run whole): each expression once."""
        if node is None:
            return
        if isinstance(node, c_ast.Compound):
            for item in node.block_items or []:
                self.count_statements(item)
        elif isinstance(node, c_ast.For):
            for part in (node.init, node.cond, node.next):
                self.count(part) if not isinstance(part, c_ast.DeclList) else [self.count(d) for d in part.decls]
            self.count_statements(node.stmt)
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            self.count(node.cond)
            self.count_statements(node.stmt)
        elif isinstance(node, c_ast.If):
            self.count(node.cond)
            self.count_statements(node.iftrue)
            self.count_statements(node.iffalse)
        elif isinstance(node, c_ast.Switch):
            self.count(node.cond)
            self.count_statements(node.stmt)
        elif isinstance(node, (c_ast.Case, c_ast.Default)):
            for item in node.stmts or []:
                self.count_statements(item)
        elif not isinstance(node, (c_ast.Break, c_ast.Continue, c_ast.EmptyStatement, c_ast.Pragma)):
            self.count(node)

    def _add_mul(self, mul_type: str, sum_type: str) -> None:
        """Count `a*b + c`: one fused multiply-add when both have the same floating type, else a mul and an add."""
        if sum_type in FLOAT_TYPES and mul_type == sum_type:
            self.ops[f"{_prec(sum_type)}_fma"] += 1
            return
        self.ops[f"{_prec(mul_type)}_mul" if mul_type in FLOAT_TYPES else "int"] += 1
        self.ops[f"{_prec(sum_type)}_add" if sum_type in FLOAT_TYPES else "int"] += 1

    # -- reductions ----------------------------------------------------------------
    def reductions(self, loops: tuple[str, ...]) -> list[Reduction]:
        stmt = self.stmt
        via_guard = None
        if isinstance(stmt, c_ast.UnaryOp) and stmt.op in ("++", "--", "p++", "p--") \
                and isinstance(stmt.expr, (c_ast.ID, c_ast.ArrayRef)):
            target, op, rhs_other, value_type, order = stmt.expr, "+", None, "int", None   # count++ is count += 1
        elif isinstance(stmt, c_ast.Assignment):
            target, op, rhs_other, value_type, via_guard, order = _reduction_form(self.ctx, stmt, self.idiom_guard)
        else:
            return []
        if target is None:
            return []
        ctx = self.ctx
        acc_type = ctx.type_of(target)
        if not _associative(op, acc_type, value_type):
            return []
        if isinstance(target, c_ast.ID):
            name = target.name
            if name in ctx.loop_vars or _mentions(rhs_other, name):
                return []
            ir = ctx.ir_name(name)
            local = ctx.locals.get(ir)
            depth = len(local[0].decl_lids or ()) if local is not None else 0
            over = loops[depth:]
            if not over:
                return []
            return [Reduction(ir, op, ctx.loc(stmt), tuple(over), guard=via_guard, **_order_fields(order))]
        base, subs = _array_chain(target)
        if not isinstance(base, c_ast.ID) or _mentions_besides_elements(rhs_other, base.name, text_of(target)):
            return []
        used = set()
        for s in subs:
            p, _ = ctx.poly(s)
            if p is None:
                return []
            used |= p.variables
        over = tuple(v for v in loops if v not in used)
        if not over:
            return []
        acc = next((a for a in self.accesses if a.kind == "write" and a.array == base.name), None)
        return [Reduction(text_of(target), op, ctx.loc(stmt), over, acc, **_order_fields(order))]


def _order_fields(order: Order | None) -> dict:
    return {} if order is None else {"ties": order.ties, "nan_init": order.nan_init, "value": order.value}


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


def _same(a: c_ast.Node, b: c_ast.Node) -> bool:
    return text_of(a) == text_of(b)


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
        cond = idiom_guard.ast
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


# --------------------------------------------------------------------------- guards

def guard_of(ctx: NestContext, cond: c_ast.Node, negated: bool, stmt_sid: int | None = None) -> Guard:
    cons = _constraints(ctx, cond)
    alternatives = None
    if negated and cons is not None:
        # not (e >= 0) is -e - 1 >= 0, not (e == 0) is e - 1 >= 0 or -e - 1 >= 0: a negated conjunction is a
        # disjunction, kept as alternatives
        alternatives = tuple(alt for c in cons for alt in (((Constraint(-c.expr - 1),),) if c.kind == "ge" else
                                                           ((Constraint(c.expr - 1),), (Constraint(-c.expr - 1),))))
        cons = alternatives[0] if len(alternatives) == 1 else None
        alternatives = None if cons is not None else alternatives
    reads = tuple(sorted({n.name if n.name in ctx.loop_vars else ctx.ir_name(n.name) for n in _ids(cond)}))
    return Guard(("!(" + text_of(cond) + ")") if negated else text_of(cond), cons, ctx.loc(cond), negated, ast=cond,
                 reads=reads, depth=len(ctx.loop_ids), stmt_sid=stmt_sid, alternatives=alternatives)


def _ids(node: c_ast.Node | None) -> list[c_ast.ID]:
    """Every identifier an expression mentions (function names of calls excluded)."""
    out, stack = [], [node] if node is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.ID):
            out.append(n)
        elif isinstance(n, c_ast.FuncCall):
            stack.extend(c for name, c in n.children() if name != "name")
        elif not isinstance(n, c_ast.StructRef):
            stack.extend(c for _, c in n.children())
        else:
            stack.append(n.name)      # s.field: only `s` is a variable
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


# --------------------------------------------------------------------------- loops

@dataclass
class Header:
    """What a `for` loop's header says: its variable, bounds and step, or the problem that keeps them unknown."""
    var: str | None = None
    lower: Poly | None = None
    upper: Poly | None = None
    step: int | None = None
    problem: str = ""
    bound: c_ast.Node | None = None      # the expression the condition compares the variable with
    lower_pieces: tuple[Poly, ...] = ()  # a start that is a max (step > 0) or min (step < 0) of several values
    upper_pieces: tuple[Poly, ...] = ()  # an exclusive end that is a min (step > 0) or max (step < 0) of several
    piece_bounds: tuple[c_ast.Node, ...] = ()   # per upper piece, the expression whose type the condition sees


# `a OP b ? a : b` is the min or max of a and b (`a OP b ? b : a` the other one)
_MINMAX_OF_OP = {"<": "min", "<=": "min", ">": "max", ">=": "max"}


def _minmax_pieces(ctx: NestContext, node: c_ast.Node, kind: str,
                   type_node: c_ast.Node | None = None) -> tuple[list[tuple[Poly, c_ast.Node]], str, str]:
    """`node` as the `kind` ("min" or "max") of polynomials, as polyhedral code generators write bounds:
    `a < b ? a : b`, nested to any depth, possibly under casts.

    Returns (pieces, the expression's C type after the integer promotions, "") where each piece comes with
    the expression whose type a comparison with the whole sees (the outermost cast, or the piece itself),
    or ([], "?", why not).  Each piece is converted by `ctx.poly` (its own conversion rules); a comparison
    or conversion made in an unsigned type must keep every value of the pieces, else the ternary is not
    the min or max of their values (`-1 < 0u` is false).
    """
    def fail(why: str):
        return [], "?", why
    if isinstance(node, c_ast.Cast) and isinstance(node.expr, (c_ast.TernaryOp, c_ast.Cast)):
        t = decl_type(node.to_type, ctx.typedefs)
        if not t.is_integer or t.base not in INT_RANGES:
            return fail(f"cast to {t.base}")
        pieces, _, why = _minmax_pieces(ctx, node.expr, kind, type_node or node)
        if why:
            return fail(why)
        if not all(ctx.fits(p, t.base) for p, _ in pieces):
            return fail(f"the conversion '{text_of(node)}' (line {ctx.loc(node).line}) can change the value")
        return pieces, promote(t.base), ""
    if not isinstance(node, c_ast.TernaryOp):
        p, why = ctx.poly(node)
        return ([(p, type_node or node)], ctx.int_type(node), "") if p is not None else fail(why)
    cond, where = node.cond, f"'{text_of(node)}' (line {ctx.loc(node).line})"
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in _MINMAX_OF_OP):
        return fail(f"{where} is not a min or max: its condition is not a comparison")
    if _same(node.iftrue, cond.left) and _same(node.iffalse, cond.right):
        form = _MINMAX_OF_OP[cond.op]
    elif _same(node.iftrue, cond.right) and _same(node.iffalse, cond.left):
        form = "max" if _MINMAX_OF_OP[cond.op] == "min" else "min"
    else:
        return fail(f"{where} is not a min or max: its branches are not the two sides of its comparison")
    if form != kind:
        return fail(f"{where} is a {form} where this bound of the loop needs a {kind}")
    left, tl, why = _minmax_pieces(ctx, cond.left, kind, type_node)
    if why:
        return fail(why)
    right, tr, why = _minmax_pieces(ctx, cond.right, kind, type_node)
    if why:
        return fail(why)
    common = int_result(tl, tr)
    if common is None:
        return fail(f"{where}: the type of its comparison is unknown")
    if is_unsigned(common) and not all(ctx.fits(p, common) for p, _ in left + right):
        return fail(f"{where} compares in {common}, where a negative value would become a large one")
    pieces = {}
    for p, n in left + right:
        pieces.setdefault(p, n)
    return list(pieces.items()), common, ""


def _tightest(ctx: NestContext, pieces, direction: int) -> Poly | None:
    """Of the pieces of a bound, the one whose values are the largest (`direction` > 0: every piece is a lower
    bound of the max they form) or the smallest (< 0); the first when their ranges are unknown."""
    if len(pieces) <= 1 or not direction:
        return pieces[0] if pieces else None
    ranges = [(r, p) for p in pieces if (r := ctx.value_range(p)) is not None]
    if not ranges:
        return pieces[0]
    return min(ranges, key=lambda rp: -rp[0][0] if direction > 0 else rp[0][1])[1]


def _is_conditional(node: c_ast.Node) -> bool:
    """Whether `node` is a `?:` expression, possibly under casts."""
    while isinstance(node, c_ast.Cast):
        node = node.expr
    return isinstance(node, c_ast.TernaryOp)


def parse_header(ctx: NestContext, node: c_ast.For) -> Header:
    h = Header()
    init = node.init
    init_expr = None
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        h.var, init_expr = init.decls[0].name, init.decls[0].init
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        h.var, init_expr = init.lvalue.name, init.rvalue
    else:
        h.problem = "the loop header does not initialise a single induction variable" if init is None \
            else f"initialisation '{text_of(init)}' is not 'var = expr'"
        h.var = _var_of_next(node.next)
        return h
    if init_expr is None:
        h.problem = f"'{h.var}' has no initial value in the loop header"
        return h
    h.lower, why = ctx.poly(init_expr)
    if h.lower is None:
        h.problem = f"start '{text_of(init_expr)}': {why}"
    # step
    nxt = node.next
    step = None
    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++", "--", "p--") and _is_id(nxt.expr, h.var):
        step = 1 if "++" in nxt.op else -1
    elif isinstance(nxt, c_ast.Assignment) and _is_id(nxt.lvalue, h.var):
        if nxt.op in ("+=", "-="):
            p, _ = ctx.poly(nxt.rvalue)
            if p is not None and p.is_const():
                step = int(p.const_value()) * (1 if nxt.op == "+=" else -1)
        elif nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op in ("+", "-") \
                and _is_id(nxt.rvalue.left, h.var):
            p, _ = ctx.poly(nxt.rvalue.right)
            if p is not None and p.is_const():
                step = int(p.const_value()) * (1 if nxt.rvalue.op == "+" else -1)
    if not step:
        h.problem = h.problem or f"increment '{text_of(nxt)}' is not a constant step"
        return h
    h.step = step
    if h.lower is None and _is_conditional(init_expr):
        # the start of a loop generated by CLooG or PLUTO: the max of affine values (counting down, the min)
        pieces, _, why = _minmax_pieces(ctx, init_expr, "max" if step > 0 else "min")
        if len(pieces) == 1:
            h.lower, h.problem = pieces[0][0], ""
        elif pieces:
            h.lower_pieces, h.problem = tuple(p for p, _ in pieces), ""
        else:
            h.problem = f"start '{text_of(init_expr)}': {why}"
    # condition
    cond = node.cond
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=", "!=")):
        h.problem = h.problem or f"condition '{text_of(cond)}' is not a comparison of '{h.var}' with a bound"
        return h
    op, bound = cond.op, cond.right
    if not _is_id(cond.left, h.var):
        if _is_id(cond.right, h.var):
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}[op]
            bound = cond.left
        else:
            h.problem = h.problem or f"condition '{text_of(cond)}' does not compare '{h.var}' with a bound"
            return h
    h.bound = bound
    b, why = ctx.poly(bound)
    if b is None:
        # the end of a loop generated by CLooG or PLUTO: the min of affine values (counting down, the max)
        kind = "min" if step > 0 and op in ("<", "<=") else "max" if step < 0 and op in (">", ">=") else None
        pieces = []
        if kind and _is_conditional(bound):
            pieces, _, why = _minmax_pieces(ctx, bound, kind)
        if not pieces:
            h.problem = h.problem or f"bound '{text_of(bound)}': {why}"
            return h
        shift = {"<": 0, "<=": 1, ">": 0, ">=": -1}[op]     # to the exclusive end
        h.upper_pieces = tuple(p + shift for p, _ in pieces)
        h.piece_bounds = tuple(n for _, n in pieces)
        if len(pieces) == 1:
            h.upper, h.bound, h.upper_pieces, h.piece_bounds = h.upper_pieces[0], pieces[0][1], (), ()
        return h
    if op == "!=":
        op = "<" if step > 0 else ">"
        if abs(step) != 1:
            h.problem = h.problem or f"'{text_of(cond)}' with step {step} may never terminate"
            return h
    if step > 0 and op in ("<", "<="):
        h.upper = b if op == "<" else b + 1
    elif step < 0 and op in (">", ">="):
        h.upper = b if op == ">" else b - 1
    else:
        h.problem = h.problem or f"condition '{text_of(cond)}' does not bound a loop stepping by {step}"
    return h


def switch_as_if(sw: c_ast.Switch) -> c_ast.Node | None:
    """`switch (e) { case a: case b: S; break; case c: T; break; default: U; }` as the equivalent
    `if (e == a || e == b) { S } else if (e == c) { T } else { U }`, or None when it is not one: `e` has a side
    effect (it would be evaluated more than once), a statement comes before the first label, a case falls
    through into the next one's statements, or a `break` leaves a case early.  The kernels print the switch as
    written (its statements are the same syntax trees); the analyses see the conditions."""
    if has_side_effect(sw.cond):
        return None
    items = sw.stmt.block_items if isinstance(sw.stmt, c_ast.Compound) else None
    if not items or not all(isinstance(it, (c_ast.Case, c_ast.Default)) for it in items):
        return None
    groups, labels = [], []
    for k, it in enumerate(items):
        labels.append(it.expr if isinstance(it, c_ast.Case) else None)
        stmts = list(it.stmts or [])
        if not stmts:
            continue                                   # `case a: case b:` share the statements that follow
        if isinstance(stmts[-1], c_ast.Break):
            stmts = stmts[:-1]
        elif k != len(items) - 1:
            return None                                # falls through into the next case
        if any("break" in _jumps_out(st) for st in stmts):
            return None
        groups.append((labels, stmts))
        labels = []
    chain, default = [], None
    for labels, stmts in groups:
        if None in labels:
            default = stmts                            # the other labels of its group run it too, as default
        else:
            chain.append((labels, stmts))
    node = c_ast.Compound(default, sw.coord) if default is not None else None
    for labels, stmts in reversed(chain):
        tests = [c_ast.BinaryOp("==", copy.deepcopy(sw.cond), lab, sw.coord) for lab in labels]
        cond = tests[0]
        for t in tests[1:]:
            cond = c_ast.BinaryOp("||", cond, t, sw.coord)
        node = c_ast.If(cond, c_ast.Compound(stmts, sw.coord), node, sw.coord)
    return node if node is not None else c_ast.EmptyStatement(sw.coord)


def _inner_array_refusal(ctx: NestContext, node: c_ast.Decl, t: CType, ir: str) -> tuple[str, tuple[Poly, ...]]:
    """Why an array declared inside the nest is not taken as a new object of each iteration of the loops around
    its declaration (": ..."), or "" and its extents when it is: a plain array of scalars of constant extents,
    automatic, not initialized (an initializer would have to run in each thread), with a name of its own."""
    if t.pointers or t.pointer_rows or t.base not in SIZES:
        return ": only arrays of scalars are analysed", ()
    if {"static", "extern"} & set(node.storage or ()):
        return f": it is {' '.join(node.storage)}, one array every iteration shares", ()
    if node.init is not None:
        return ": its initializer is not analysed", ()
    if ir != node.name:
        return ": another variable of the nest has its name", ()
    dims = tuple(ctx.poly(d)[0] if d is not None else None for d in t.dims)
    if any(p is None or not p.is_const() for p in dims):
        return ": its extents are not constants", ()
    return "", tuple(Poly.const(int(p.const_value())) for p in dims)


def _one_scalar_type(fields: dict[str, CType]) -> str | None:
    """The type every field of a struct has, when they all have one scalar type (`dcomplex`: double), else None."""
    types = {f.base for f in fields.values() if f.is_scalar}
    if len(types) != 1 or not all(f.is_scalar for f in fields.values()) or next(iter(types)) not in SIZES:
        return None
    return next(iter(types))


def _uncountable(ctx: NestContext, node: c_ast.For) -> bool:
    """Whether a `for` is no loop the analyses can count: its header is not `var = start; var < end; var += step`
    with start and end polynomials of loop variables and parameters (they read memory, or a variable the nest
    assigns), or a `break` or `continue` of its own ends it or an iteration early.  (A polynomial that is not
    affine, `j < i * i`, keeps the loop: its inner loops can still be judged.)"""
    if _jumps_out(node.stmt):              # (the loop's body: its own break and continue leave it)
        return True
    saved = set(ctx.params)
    try:
        h = parse_header(ctx, node)
    finally:
        ctx.params = saved
    return bool(h.problem)


def _jumps_out(node: c_ast.Node | None) -> set[str]:
    """How control can leave the statement `node` other than by finishing it: "return", "goto" (a label counts:
    a `goto` from outside may enter there), "break" and "continue" of a loop or switch around it (those of a loop
    or switch inside `node`, `node` itself included, stay inside)."""
    out: set[str] = set()
    stack = [(node, False, False)] if node is not None else []
    while stack:
        n, in_loop, in_switch = stack.pop()
        if isinstance(n, c_ast.Return):
            out.add("return")
        elif isinstance(n, (c_ast.Goto, c_ast.Label)):
            out.add("goto")
        elif isinstance(n, c_ast.Break) and not in_switch:
            out.add("break")
        elif isinstance(n, c_ast.Continue) and not in_loop:
            out.add("continue")
        is_loop = isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile))
        stack.extend((c, in_loop or is_loop, in_switch or is_loop or isinstance(n, c_ast.Switch))
                     for _, c in n.children())
    return out


def _assigned_name(n: c_ast.Node) -> str | None:
    """The variable `n` assigns by name (`x = ...`, `x op= ...`, `x++`, `--x`), or None."""
    if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
        return n.lvalue.name
    if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and isinstance(n.expr, c_ast.ID):
        return n.expr.name
    return None


def _walk(node: c_ast.Node):
    """Every node under `node` with its parent, depth first."""
    stack = [(node, None)]
    while stack:
        n, up = stack.pop()
        yield n, up
        stack.extend((c, n) for _, c in n.children())


def _convert(value: int, ctype: str) -> int:
    """`value` converted to the integer type `ctype`: modulo 2^n (C11 6.3.1.3; for signed types the
    implementation-defined result of gcc, clang and nvcc)."""
    if ctype == "_Bool":
        return int(value != 0)
    lo, hi = INT_RANGES[ctype]
    span = hi - lo + 1
    return (value - lo) % span + lo


def _loop_conversion(ctx: NestContext, h: Header, var_type: str) -> str:
    """Why the loop's affine bounds are not what C computes, from its types ("" when they are).

    The variable must hold every value from its start to its exit value (an `unsigned char` counting to
    300, or an unsigned counting down to `>= 0`, wraps and never stops), and a comparison made in an
    unsigned type must not see a negative side (`int i = -1; i < u` is false at once).
    """
    if var_type not in INT_RANGES:
        return ""
    s = abs(h.step)
    first, exit_value = (h.lower, h.upper + (s - 1)) if h.step > 0 else (h.lower, h.upper - (s - 1))
    wraps = is_unsigned(var_type) or promote(var_type) != var_type   # (signed int and wider: overflow is undefined)
    for v in (first, exit_value) if wraps else ():
        if not ctx.fits(v, var_type):
            return (f"it cannot hold every value from {first.to_c()} to its exit value {exit_value.to_c()}, "
                    "so it may wrap around instead of stopping")
    common = int_result(var_type, ctx.int_type(h.bound)) if h.bound is not None else None
    if common is not None and is_unsigned(common):
        for v in (first, exit_value, h.upper):
            if not ctx.fits(v, common):
                return f"its condition compares in {common}, where a negative value would become a large one"
    return ""


def _is_id(node: c_ast.Node | None, name: str | None) -> bool:
    return isinstance(node, c_ast.ID) and node.name == name


def _var_of_next(nxt: c_ast.Node | None) -> str | None:
    if isinstance(nxt, c_ast.UnaryOp) and isinstance(nxt.expr, c_ast.ID):
        return nxt.expr.name
    if isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID):
        return nxt.lvalue.name
    return None


def trip_count(lower: Poly, upper: Poly, step: int) -> Sym:
    """Iterations of a loop from `lower` stepping by `step` towards exclusive `upper`."""
    span = (upper - lower) if step > 0 else (lower - upper)
    s = abs(step)
    if s == 1:
        return Sym.of(span)
    if span.is_const():
        return Sym.of(Poly.const(-(-int(span.const_value()) // s)))
    return Sym(span + (s - 1), s)


# --------------------------------------------------------------------------- delinearization

def delinearize(polys: list[Poly | None], t: CType, ctx: NestContext) -> tuple[Poly, ...] | None:
    """a[i*W + j] on a pointer -> (i, j) when j provably stays in [0, W); the first subscript of an array of
    rows likewise, y[i*W + k][j] -> (i, k, j) (FT's fftz2: y[i*lj + lk + k][j] with k < lk and lj = 2*lk),
    each pair (i, k) one element as the flat subscript is.

    W may be a parameter (then the subscript has degree 2 and is not affine as written) or a constant.  We
    accept the common, provable shape: the inner part is one loop variable, whose loop runs within [0, W),
    plus a constant, or plus parameters when its loop's range moved by them provably stays in [0, W) (with the
    values the nest's parameters have at its entry: NestContext.entry_values).
    """
    if not polys or polys[0] is None:
        return None
    if len(polys) != 1 or t.dims or t.pointers != 1:
        # an array of rows: only a first subscript that is not affine, the others affine
        if polys[0].is_affine() or any(p is None or not p.is_affine() for p in polys[1:]):
            return None
    p = polys[0]
    loops = set(ctx.loop_vars)
    env = ctx.entry_values
    # where the access runs, every loop around it runs: lo <= var < hi, so hi - lo - 1 >= 0 (k < lk: lk >= 1);
    # only the loops around it (a sibling loop lowered before may not run where this access does)
    around = [ctx.loop_ranges.get(v) for v in ctx.loop_vars]
    runs = [(r[1] - r[0] - 1).substitute(env) for r in around if r is not None and None not in r]

    def within(col: Poly, lo: Poly, hi: Poly, width: Poly) -> bool:
        """col = var + c stays in [0, width) for var in [lo, hi)."""
        shift = col - Poly.var(var)
        return _nonneg((lo + shift).substitute(env), runs) and \
            _nonneg((width - hi - shift).substitute(env), runs)
    for var in ctx.loop_vars[::-1]:
        if p.coeff(var) != 1:
            continue
        rng = ctx.loop_ranges.get(var)
        if rng is None or rng[0] is None or rng[1] is None:
            continue
        lo, hi = rng
        rest = p - Poly.var(var)
        offset = rest.const_value()
        width = _common_factor(rest - offset, loops)
        if width is not None:
            if width.is_const():
                # a constant offset may fold a row step: 4096*i + 4095 + j is row i+1, column j-1
                w = int(width.const_value())
                c = int(offset) % w
                c = c - w if c > w // 2 else c
            else:
                c = int(offset)
            if lo.is_const() and within(Poly.var(var) + c, lo, hi, width):
                q = _divide(rest - c, width)
                if q is not None and q.is_affine():
                    return (q, Poly.var(var) + c, *polys[1:])
        # a column moved by parameters: the terms of `rest` without a loop variable
        moved = Poly._make({m: c for m, c in rest.terms if m and not {v for v, _ in m} & loops})
        width = _common_factor(rest - moved - offset, loops)
        if not moved.terms or width is None or width.is_const():
            continue
        col = Poly.var(var) + moved + offset
        if within(col, lo, hi, width):
            q = _divide(rest - moved - offset, width)
            if q is not None and q.is_affine():
                return (q, col, *polys[1:])
    return None


def _nonneg(e: Poly, facts: list[Poly]) -> bool:
    """Whether e >= 0: a constant that is, or a constant that is plus a nonnegative multiple of one of `facts`
    (polynomials known to be >= 0)."""
    if e.is_const():
        return e.const_value() >= 0
    for f in facts:
        for m, c in f.terms:
            if m:
                k = e.as_dict().get(m, Fraction(0)) / c
                rest = e - f.scale(k)
                if k >= 0 and rest.is_const() and rest.const_value() >= 0:
                    return True
                break
    return False


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


def _main_statics(ast: c_ast.FileAST) -> frozenset[str]:
    """The file's `static` arrays (no other file can name them) that nothing but the function main names, in a
    file that never calls main: main runs once, so what it leaves in them after its last use is never read."""
    statics = {ext.name for ext in ast.ext if isinstance(ext, c_ast.Decl) and "static" in (ext.storage or ())
               and isinstance(ext.type, c_ast.ArrayDecl)}
    mains = [ext for ext in ast.ext if isinstance(ext, c_ast.FuncDef) and ext.decl.name == "main"]
    if not statics or len(mains) != 1:
        return frozenset()
    elsewhere: set[str] = set()
    for ext in ast.ext:
        if ext is mains[0]:
            continue
        part = ext.init if isinstance(ext, c_ast.Decl) else ext
        for n, _ in _walk(part) if part is not None else ():
            if isinstance(n, c_ast.ID):
                elsewhere.add(n.name)
    called = any(isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name == "main"
                 for n, _ in _walk(ast))
    return frozenset() if called else frozenset(statics - elsewhere)


def _place(n: c_ast.Node) -> tuple:
    """Where a node is in the source (a copy of the tree keeps it)."""
    c = n.coord
    return (c.file, c.line, c.column) if c is not None else (None, id(n))


def _entry_values(ctx: NestContext, nest: c_ast.Node, facts: "FunctionFacts") -> dict[str, Poly]:
    """The integer locals that hold a polynomial of other integer locals at the nest's entry: `lj = 2 * lk;`
    among the statements just before the nest in its block, when no statement between it and the nest (nor
    the nest) writes either, and the function never takes their address.  Only relations between the nest's
    parameters: delinearize uses them to prove a column stays in its row."""
    parent = facts.parent.get(id(nest))
    if not isinstance(parent, c_ast.Compound) or facts.has_goto:
        return {}
    items = parent.block_items or []
    ids = [id(i) for i in items]
    if id(nest) not in ids:
        return {}

    def plain_int(name: str) -> bool:
        var = ctx.scope.lookup(name)
        return var is not None and var.storage in ("local", "param") and var.ctype.is_integer and \
            var.ctype.is_scalar and name not in facts.address_taken
    killed = set(ctx.written)
    out: dict[str, Poly] = {}
    for item in reversed(items[:ids.index(id(nest))]):
        if isinstance(item, c_ast.Assignment) and item.op == "=" and isinstance(item.lvalue, c_ast.ID):
            name = item.lvalue.name
            reads = {n.name for n in _ids(item.rvalue)}
            if name not in killed and plain_int(name) and reads and all(plain_int(r) for r in reads) \
                    and not reads & killed and not has_side_effect(item.rvalue) and name not in reads:
                saved = set(ctx.params)
                value, _ = ctx.poly(item.rvalue)
                ctx.params = saved
                if value is not None and value.variables == frozenset(reads):
                    out[name] = value
        # (a call cannot change them: their address is never taken, and they are not globals)
        killed |= {n.name for n, up in _walk(item) if isinstance(n, c_ast.ID) and changed_here(n, up)} | \
            {n.name for n, _ in _walk(item) if isinstance(n, c_ast.Decl) and n.name}
    return out


def _common_factor(p: Poly, loop_vars: set[str]) -> Poly | None:
    """The row width W with p = q*W: a single parameter all terms share, or the gcd of constant coefficients."""
    if not p.terms:
        return None
    shared: set[str] | None = None
    for m, _ in p.terms:
        names = {v for v, _ in m}
        shared = names if shared is None else shared & names
    params = sorted(v for v in (shared or set()) if v not in loop_vars)
    if len(params) == 1:
        return Poly.var(params[0])
    from math import gcd
    g = 0
    for _, c in p.terms:
        if c.denominator != 1:
            return None
        g = gcd(g, int(c))
    return Poly.const(g) if g > 1 else None


def _divide(p: Poly, w: Poly) -> Poly | None:
    if w.is_const():
        q = p.scale(Fraction(1) / w.const_value())
        return q if q.is_integral() else None
    (name,) = w.variables
    q, r = p.split_by(name)
    return q if not r.terms else None


def _leq(a: Poly, b: Poly) -> bool:
    d = b - a
    return d.is_const() and d.const_value() >= 0


# --------------------------------------------------------------------------- nest lowering

class NestLowerer:
    def __init__(self, ctx: NestContext):
        self.ctx = ctx
        ctx.loop_ranges = {}

    def prepass(self, node: c_ast.Node, depth: int = 0) -> None:
        """Find scalars written in the nest and nest-local declarations (needed before subscripts are converted)."""
        ctx = self.ctx
        decls: list[c_ast.Decl] = []
        stack = [(node, depth)]
        while stack:
            n, d = stack.pop()
            if (name := _assigned_name(n)) is not None:
                ctx.written.add(name)
                ctx.assignments[name] += 1
            elif isinstance(n, c_ast.Decl) and not isinstance(n.type, c_ast.FuncDecl) and n.name:
                ctx.local_depth.setdefault(n.name, d)
                decls.append(n)
            if isinstance(n, c_ast.For):
                # loop variables of nested loops are not "written scalars"
                for _, c in n.children():
                    stack.append((c, d + 1))
                continue
            for _, c in n.children():
                stack.append((c, d))
        # A variable declared in the nest keeps its C name as IR name unless another variable of the nest (or one
        # visible around it) has that name: then each declaration gets its own, "t#1", "t#2", in source order.
        # (Loop variables declared in `for` headers are told apart by their loop, not by name.)
        headers = {id(n.init.decls[0]) for n, _ in _walk(node) if isinstance(n, c_ast.For)
                   and isinstance(n.init, c_ast.DeclList) and n.init.decls}
        named: dict[str, list[c_ast.Decl]] = {}
        for n in decls:
            if id(n) not in headers:
                named.setdefault(n.name, []).append(n)
        for name, group in named.items():
            if len(group) > 1 or ctx.scope.lookup(name) is not None:
                group.sort(key=lambda n: (n.coord.line, n.coord.column) if n.coord else (0, 0))
                for k, n in enumerate(group, 1):
                    ctx.renamed[id(n)] = f"{name}#{k}"

    def lower_loop(self, node: c_ast.For, guards: tuple[Guard, ...], scope: Scope, pragmas: tuple[str, ...] = ()) -> Loop:
        ctx = self.ctx
        ctx.forget_written_in(node)        # before the header: its condition is evaluated in every iteration
        h = parse_header(ctx, node)
        loc = ctx.loc(node)
        flags: list[Flag] = []
        var = h.var or f"?{loc.line}"
        in_header = isinstance(node.init, c_ast.DeclList)
        declared = decl_type(node.init.decls[0], ctx.typedefs) if in_header else \
            (scope.lookup(var).ctype if scope.lookup(var) is not None else None)
        c_type = declared.base if declared is not None and declared.is_scalar else "int"
        if h.problem:
            flags.append(Flag("non-affine-bound", f"{loop_words(var)}: {h.problem}", loc))
        if in_header and var in ctx.loop_vars:
            # `for (int i ...) for (int i ...)`: the analyses tell the two apart by name, so a subscript `i` in
            # the inner body would be read as the outer loop's (DataRaceBench DRB162): neither loop is proven
            flags.append(Flag("shadows-loop-variable", f"{loop_words(var)} declares its own '{var}', which hides the "
                                                       "loop variable of that name around it (c2gpu tells loops apart "
                                                       "by name: rename one)", loc))
        trip = None
        lowers = h.lower_pieces or ((h.lower,) if h.lower is not None else ())
        uppers = h.upper_pieces or ((h.upper,) if h.upper is not None else ())
        if lowers and uppers and h.step:
            # each pair of pieces is checked as a loop of its own: the start and the end are among them
            pairs = [Header(var, lo, up, h.step, bound=b) for lo in lowers
                     for up, b in zip(uppers, h.piece_bounds or (h.bound,))]
            if not all(p.is_affine() for p in lowers + uppers):
                flags.append(Flag("non-affine-bound", f"{loop_words(var)}: bounds are not affine", loc))
            elif len(lowers) > 1 and abs(h.step) > 1:
                flags.append(Flag("non-affine-bound", f"{loop_words(var)}: its start is a {'max' if h.step > 0 else 'min'}"
                                  f" of several values and its step is {h.step}, so its iterations are not an "
                                  "affine set", loc))
            elif why := next(filter(None, (_loop_conversion(ctx, pair, c_type) for pair in pairs)), ""):
                flags.append(Flag("non-affine-bound", f"{loop_words(var)} ({c_type}): {why}", loc))
                h.upper = None          # the affine bound is not what C computes: nothing may use it
                h.upper_pieces = uppers = ()
        if h.lower is not None and h.upper is not None and h.step:
            trip = trip_count(h.lower, h.upper, h.step)
        if var in ctx.address_taken:
            flags.append(Flag("address-taken", f"the address of loop variable '{var}' is taken in "
                                               "the function: a write through a pointer may change it", loc))
        header_stmt = self.header_statement(node, var, in_header, guards) if ctx.loop_ids else None
        inner_scope = scope.child()
        if in_header:
            d = node.init.decls[0]
            inner_scope.vars[d.name] = Var(declared, "local", ctx.loc(d), d.name, tuple(ctx.loop_ids))
        # (of several pieces, any one bounds the variable: the one with the tightest range of values)
        first, end = _tightest(ctx, lowers, h.step or 0), _tightest(ctx, uppers, -(h.step or 0))
        lo = first if (h.step or 0) > 0 else (end + 1 if end is not None else None)
        hi = end if (h.step or 0) > 0 else (first + 1 if first is not None else None)
        ctx.loop_ranges[var] = (lo, hi)
        lid = ctx.next_lid
        ctx.next_lid += 1
        ctx.loop_vars.append(var)
        ctx.loop_ids.append(lid)
        saved_type = ctx.loop_types.get(var)
        ctx.loop_types[var] = c_type
        saved_scope, ctx.scope = ctx.scope, inner_scope
        try:
            body = self.lower_body(node.stmt, guards, inner_scope)
        finally:
            ctx.scope = saved_scope
            ctx.loop_vars.pop()
            ctx.loop_ids.pop()
            if saved_type is not None:
                ctx.loop_types[var] = saved_type
        header = f"for ({text_of(node.init)}; {text_of(node.cond)}; {text_of(node.next)})"
        items = node.stmt.block_items or [] if isinstance(node.stmt, c_ast.Compound) else [node.stmt]
        perfect = bool(items) and all(isinstance(i, (c_ast.For, c_ast.Pragma, c_ast.EmptyStatement)) for i in items)
        return Loop(lid=lid, var=var, lower=h.lower, upper=h.upper, step=h.step or 0, trip_count=trip, loc=loc,
                    end_loc=None, header=header, body=tuple(body), guards=guards, flags=tuple(flags),
                    c_type=c_type, declared_in_header=in_header, perfect=perfect, pragmas=pragmas,
                    declared=tuple(dict.fromkeys(ctx.loop_decls.pop(lid, ()))),
                    header_stmt=header_stmt, ast=node, lower_pieces=h.lower_pieces, upper_pieces=h.upper_pieces)

    def header_statement(self, node: c_ast.For, var: str, in_header: bool, guards: tuple[Guard, ...]) -> Statement | None:
        """What an inner loop's header does that the enclosing loop can see, as a statement just before the loop.

        A loop variable declared outside its `for` outlives the loop: the header writes it (every iteration of
        the enclosing loop sets it, and a read after the inner loop sees its exit value); arrays read in the
        bounds are reads of the enclosing loop too.  The variable's reads inside its own loop are the loop's.
        """
        ctx = self.ctx
        saved = dict(ctx.scalars_used), list(ctx.flags)
        b = StatementBuilder(ctx, node, guards)
        init = node.init
        if isinstance(init, c_ast.DeclList):
            for d in init.decls:
                b.visit(d.init)
        else:
            b.visit(init)
        b.visit(node.cond)
        b.visit(node.next)
        ir = ctx.ir_name(var)
        # the variable's exit value matters to the enclosing loop only if the nest reads it after this loop
        # (its value after the nest is restored by the port from the bounds)
        outlives = not in_header and ctx.live_in_nest(node, var)
        b.scalar_reads = [n for n in b.scalar_reads if n != ir]
        b.scalar_writes = [n for n in b.scalar_writes if n != ir] + ([ir] if outlives else [])
        if not (b.accesses or b.scalar_writes or b.calls):
            ctx.scalars_used, ctx.flags = saved      # the header only counts its own loop: nothing to record
            return None
        if not outlives and ir not in saved[0]:
            ctx.scalars_used.pop(ir, None)
        return self.make_statement(node, guards, b, text=f"header of {loop_words(var)} (line {ctx.loc(node).line})",
                                   kind="header")

    def lower_body(self, node: c_ast.Node | None, guards: tuple[Guard, ...], scope: Scope) -> list:
        ctx = self.ctx
        out: list = []
        if node is None:
            return out
        if isinstance(node, c_ast.Compound):
            inner = scope.child()
            saved, ctx.scope = ctx.scope, inner
            pragmas: list[str] = []
            try:
                for item in node.block_items or []:
                    if isinstance(item, c_ast.Pragma):
                        pragmas.append(item.string.strip())
                        continue
                    if isinstance(item, c_ast.For):
                        out.extend(self.lower_for(item, guards, inner, tuple(pragmas)))
                    else:
                        out.extend(self.lower_body(item, guards, inner))
                    pragmas = []
            finally:
                ctx.scope = saved
            return out
        if isinstance(node, c_ast.For):
            return self.lower_for(node, guards, scope)
        if isinstance(node, c_ast.If):
            pre = StatementBuilder(ctx, node.cond, guards)
            pre.visit(node.cond)
            pre.count(node.cond)
            sid = None
            if pre.accesses or pre.scalar_writes or pre.calls or \
                    (pre.scalar_reads and _constraints(ctx, node.cond) is None):
                # reads and writes in the condition are work of the iteration: keep them as a statement
                cond = self.make_statement(node.cond, guards, pre, text=f"if ({text_of(node.cond)})", kind="cond")
                out.append(cond)
                sid = cond.sid
            g = guard_of(ctx, node.cond, False, sid)
            then = node.iftrue.block_items if isinstance(node.iftrue, c_ast.Compound) else [node.iftrue]
            alone = node.iffalse is None and len(then or []) == 1 and isinstance(then[0], c_ast.Assignment)
            saved_idiom, ctx.idiom_guard = ctx.idiom_guard, (g if alone else None)
            try:
                out.extend(self.lower_body(node.iftrue, guards + (g,), scope))
            finally:
                ctx.idiom_guard = saved_idiom
            if node.iffalse is not None:
                out.extend(self.lower_body(node.iffalse, guards + (guard_of(ctx, node.cond, True, sid),), scope))
            return out
        if isinstance(node, (c_ast.Assignment, c_ast.UnaryOp, c_ast.FuncCall, c_ast.ExprList, c_ast.Decl)):
            if isinstance(node, c_ast.Decl):
                t = decl_type(node, ctx.typedefs)
                ir = ctx.renamed.get(id(node), node.name)
                var = Var(t, "local", ctx.loc(node), ir, tuple(ctx.loop_ids))
                scope.vars[node.name] = var
                ctx.locals[ir] = (var, node)
                if ctx.loop_ids:
                    ctx.loop_decls.setdefault(ctx.loop_ids[-1], []).append(node.name)
                if node.name in ctx.loop_vars:
                    # `{ int i = 3; a[i] = ...; }` in a loop over i: the subscripts below name the new i
                    ctx.flag("shadows-loop-variable", f"'{node.name}' declared inside the nest hides the loop "
                                                      "variable of the same name", node)
                if {"static", "extern"} & set(node.storage or ()):
                    # not a per-iteration temporary: one variable that every iteration shares
                    ctx.flag("static-local", f"'{node.name}' is declared {' '.join(node.storage)} inside the nest: "
                                             "one variable shared by every iteration", node)
                if not t.is_scalar:
                    why, dims = _inner_array_refusal(ctx, node, t, ir)
                    if why:
                        ctx.flag("local-array", f"array '{node.name}' is declared inside the nest{why}", node)
                    else:
                        ctx.inner_arrays[ir] = (t, node, tuple(ctx.loop_ids), dims)
                if node.init is None:
                    return out
                if t.is_integer and t.is_scalar and node.name not in ctx.written:
                    p, why = ctx.held_value(node.name, t, node.init)
                    if p is not None:
                        ctx.local_affine[ir] = p
                    elif why:
                        ctx.local_why[ir] = why
            idiom = ctx.idiom_guard if guards and guards[-1] is ctx.idiom_guard else None
            b = StatementBuilder(ctx, node, guards, idiom)
            if isinstance(node, c_ast.Decl):
                b.visit(node.init)
                b.scalar_writes.append(ir)
                ctx.scalars_used.setdefault(ir, ctx.loc(node))
            else:
                b.visit(node)
            b.count(node)
            kind = "decl" if isinstance(node, c_ast.Decl) else "assign" if isinstance(node, c_ast.Assignment) \
                else "call" if isinstance(node, c_ast.FuncCall) else "expr"
            return [self.make_statement(node, guards, b, kind=kind)]
        if isinstance(node, c_ast.EmptyStatement) or isinstance(node, c_ast.Pragma):
            return out
        chain = switch_as_if(node) if isinstance(node, c_ast.Switch) else None
        if chain is not None:       # the same statements under the conditions that select them
            return self.lower_body(chain, guards, scope)
        if isinstance(node, (c_ast.While, c_ast.DoWhile)) and (whole := self.runs_whole(node, guards, scope)):
            return whole
        kind = type(node).__name__
        what = {"While": "while loop", "DoWhile": "do-while loop", "Break": "break", "Continue": "continue",
                "Return": "return", "Goto": "goto", "Label": "label", "Switch": "switch"}.get(kind, kind)
        ctx.flag("unsupported-statement", f"{what} inside the nest: its control flow cannot be analysed", node)
        # still account for what it touches, so dependence analysis cannot miss it (a while loop repeats: what
        # it writes holds no one value in it)
        ctx.forget_written_in(node)
        b = StatementBuilder(ctx, node, guards)
        b.visit(node)
        if b.accesses or b.scalar_writes or b.calls or b.scalar_reads:
            out.append(self.make_statement(node, guards, b, text=f"{what} at line {ctx.loc(node).line}"))
        return out

    def lower_for(self, node: c_ast.For, guards: tuple[Guard, ...], scope: Scope, pragmas: tuple[str, ...] = ()) -> list:
        """An inner `for` as a loop of the nest, or, when its iterations cannot be modelled (bounds read from
        memory, a `break` of its own), as one statement that each iteration of the loops around it runs whole."""
        if self.ctx.loop_ids and _uncountable(self.ctx, node) and (whole := self.runs_whole(node, guards, scope)):
            return whole
        return [self.lower_loop(node, guards, scope, pragmas)]

    def runs_whole(self, node: c_ast.Node, guards: tuple[Guard, ...], scope: Scope) -> list | None:
        """A loop inside the nest that c2gpu does not count (`for (k = rowstr[j]; k < rowstr[j+1]; k++)`, a `while`
        or `do`), as one statement of the loop around it, or None when it cannot be one.

        Each iteration of the enclosing loops runs it whole, in order, as C does: only the loops around it may be
        mapped to threads.  Its accesses are what it may touch in any number of its own iterations: a subscript
        that reads a variable it assigns (its counter) is data-dependent, so the dependence pass treats the
        access as touching any element (sound: an array it writes that way keeps the loops around it
        sequential).  It may not leave itself (no `return`, `goto`, nor a `break` or `continue` of an enclosing
        loop), and the variables it declares must be new scalars (each iteration of the loops around it has its
        own)."""
        ctx = self.ctx
        if _jumps_out(node):
            return None
        inner = scope.child()
        decls = [n for n, _ in _walk(node) if isinstance(n, c_ast.Decl)]
        # a loop that cannot be a loop of the nest at all (a break or continue of its own, a while or do) may
        # share one scalar between blocks that declare the same name; one that could (a step c2gpu cannot count,
        # `jj += fftblock`) stays a loop then, so that the loops inside it are still judged
        lone = isinstance(node, (c_ast.While, c_ast.DoWhile)) or bool(_jumps_out(getattr(node, "stmt", None)))
        for d in decls:
            t = decl_type(d, ctx.typedefs)
            if isinstance(d.type, c_ast.FuncDecl) or not d.name or not t.is_scalar or set(d.storage or ()) \
                    or scope.lookup(d.name) is not None or d.name in ctx.loop_vars or d.name in ctx.address_taken:
                return None
            if d.name in inner.vars:
                # two blocks of it declare the same name (a function inlined twice): one private scalar of the
                # thread stands for both when they have one type, as each block writes it before reading it
                if inner.vars[d.name].ctype != t or not lone:
                    return None
                continue
            # (named "t#2" when another part of the nest declares a `t` too)
            inner.vars[d.name] = Var(t, "local", ctx.loc(d), ctx.renamed.get(id(d), d.name), tuple(ctx.loop_ids))
        ctx.forget_written_in(node)
        saved, ctx.scope = ctx.scope, inner
        try:
            for d in {d.name: d for d in reversed(decls)}.values():       # (the first of a name)
                ctx.locals[inner.vars[d.name].ir] = (inner.vars[d.name], d)
                ctx.loop_decls.setdefault(ctx.loop_ids[-1], []).append(d.name)
            b = StatementBuilder(ctx, node, guards)
            b.visit(node)       # (its declarations are its own: locals of the nest, not writes the loops around see)
            for d in decls:
                ctx.scalars_used.setdefault(inner.vars[d.name].ir, ctx.loc(d))
            b.count_statements(node)
        finally:
            ctx.scope = saved
        what = {"For": "loop", "While": "while loop", "DoWhile": "do-while loop"}[type(node).__name__]
        line = ctx.loc(node).line
        ctx.flag("runs-in-thread", f"the {what} at line {line} runs whole in each iteration of the loops around it "
                 "(its iterations are not counted: the estimates count one per run of it)", node)
        return [self.make_statement(node, guards, b, text=f"{what} at line {line}", kind="loop")]

    def make_statement(self, node, guards, b: StatementBuilder, text: str | None = None, kind: str = "expr") -> Statement:
        ctx = self.ctx
        ctx.sid += 1
        loops = tuple(ctx.loop_vars)
        ops = tuple(sorted((k, v) for k, v in b.ops.items() if v))
        decl = ctx.renamed.get(id(node), node.name) if isinstance(node, c_ast.Decl) else None
        return Statement(sid=ctx.sid, text=text or text_of(node).strip(), loc=ctx.loc(node), loops=loops,
                         loop_ids=tuple(ctx.loop_ids),
                         guards=guards, accesses=tuple(b.accesses), scalar_reads=tuple(dict.fromkeys(b.scalar_reads)),
                         scalar_writes=tuple(dict.fromkeys(b.scalar_writes)), ops=ops,
                         reductions=tuple(b.reductions(loops)), calls=tuple(dict.fromkeys(b.calls)), decl=decl,
                         kind=kind, assign_op=node.op if isinstance(node, c_ast.Assignment) else None, ast=node,
                         scatter=_scatter(node, b.accesses))


def _scatter(node: c_ast.Node, accesses: list[Access]) -> str | None:
    """The array of a scatter statement (`a[e] += v`, `a[e] -= v`, `a[e]++`, `a[e]--` with `e` not affine and
    `v` not reading `a`; see Statement.scatter), else None."""
    if isinstance(node, c_ast.Assignment) and node.op in ("+=", "-="):
        target, value = node.lvalue, node.rvalue
    elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
        target, value = node.expr, None
    else:
        return None
    if not isinstance(target, c_ast.ArrayRef):
        return None
    base, _ = _array_chain(target)
    if not isinstance(base, c_ast.ID):
        return None
    mine = [a for a in accesses if a.array == base.name]
    # the statement touches the array only through its target (one read and one write of it), not affinely
    if len(mine) != 2 or {a.kind for a in mine} != {"read", "write"} or any(a.affine for a in mine) \
            or any(a.text != mine[0].text for a in mine) or (value is not None and _mentions(value, base.name)):
        return None
    return base.name


# --------------------------------------------------------------------------- discovery

@dataclass
class Candidate:
    """An outermost `for` loop found in a function, to be described as a nest: its scope, how it was
    selected (pragma, scop region or automatically) and the pragmas before it."""
    node: c_ast.For
    scope: Scope
    region: str
    outer: str = ""   # "while" when the for sits inside a while loop
    pragmas: tuple[str, ...] = ()
    stands_for: c_ast.Node | None = None   # a rewrite of the nest: the for-statement in the function it replaces
    fields: tuple[tuple[str, str], ...] = ()   # struct fields renamed in it: (variable, the C expression it is)
    inductions: tuple[Induction, ...] = ()     # counters substituted in it (frontend/inductions.py)
    aliases: tuple[str, ...] = ()              # what was rewritten in it, for the reports: pointers replaced by
    #                                            the array they always are (aliases_resolved), calls inlined
    inlined: tuple[str, ...] = ()              # the functions whose calls were inlined in it (calls_inlined)
    not_inlined: tuple[tuple[str, str], ...] = ()   # (function, why its calls in it were not inlined)
    passed: frozenset[tuple] = frozenset()     # where the arguments of the inlined calls name a variable (Coord
    #                                            places): those uses pass no pointer anywhere (FunctionFacts.escapes)


class FileLowerer:
    def __init__(self, ast: c_ast.FileAST, path: str, defines=(), foreign: dict[str, c_ast.FuncDef] | None = None):
        self.ast = ast
        self.path = path
        self.foreign = foreign or {}    # functions the program's other files define (program_functions)
        self.main_statics: frozenset[str] = frozenset()   # static arrays of the file that only main names
        # an identifier given as a -D value (`-D N=abc`): named in the messages of what it breaks
        self.macro_origin = {v: f"-D {n}={v}" for n, v in defines if v and v.isidentifier()}
        self.typedefs: dict[str, CType] = {}
        self.functions: dict[str, CType] = {}
        self.globals = Scope()
        self.user_functions: set[str] = set()      # defined, or declared outside c2gpu's own headers
        self.notes: list[Flag] = []
        self.has_scop = False
        self.has_port_marker = False
        self.objects: FileObjects | None = None
        self.pure: dict[str, PureFunction] = {}
        self.inlinable: dict[str, c_ast.FuncDef] = {}
        self.structs: dict[str, dict[str, CType]] = {}

    def run(self) -> list[Nest]:
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.Typedef):
                t = decl_type(ext.type, self.typedefs)
                # `typedef struct {...} vec;`: the struct is known by its typedef's name (fields.struct_fields)
                self.typedefs[ext.name] = replace(t, base=f"struct {ext.name}") if t.base == "struct ?" else t
        self.structs = struct_fields(self.ast, self.typedefs)
        self.main_statics = _main_statics(self.ast)
        self.scan_pragmas(self.ast)
        try:
            self.objects = FileObjects(self.ast, self.path, self.typedefs, lambda n: loc_of(n, Loc(self.path, 0)))
        except RecursionError:       # an expression too deep to walk: no pointer is known to be distinct
            self.objects = None
        self.pure = pure_functions(self.ast, self.typedefs, lambda n: loc_of(n, Loc(self.path, 0)))
        # the functions whose calls a nest may inline (frontend/inline.py): defined here, and not pure (a pure
        # function ports as a __device__ copy instead)
        self.inlinable = {ext.decl.name: ext for ext in self.ast.ext if isinstance(ext, c_ast.FuncDef)
                          and ext.decl.name not in self.pure}
        # and those of the program's other files, which its calls reach when the program is linked (NPB's randlc,
        # in c_randdp.c)
        defined = {ext.decl.name for ext in self.ast.ext if isinstance(ext, c_ast.FuncDef)}
        self.inlinable.update({name: fn for name, fn in self.foreign.items() if name not in defined})
        self.errno_read = _errno_read(self.ast, Loc(self.path, 0))
        nests: list[Nest] = []
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.Typedef):
                continue
            if isinstance(ext, c_ast.Decl):
                if isinstance(ext.type, c_ast.FuncDecl):
                    self.functions[ext.name] = decl_type(ext.type.type, self.typedefs)
                    if not _from_c2gpu_headers(ext):
                        self.user_functions.add(ext.name)
                elif ext.name:
                    self.globals.vars[ext.name] = Var(decl_type(ext, self.typedefs), "global",
                                                      loc_of(ext, Loc(self.path, 0)), ext.name)
            elif isinstance(ext, c_ast.FuncDef):
                self.functions[ext.decl.name] = decl_type(ext.decl.type.type, self.typedefs)
                self.user_functions.add(ext.decl.name)
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.FuncDef):
                nests.extend(self.lower_function(ext))
        return _unique_names(nests)

    def scan_pragmas(self, node: c_ast.Node) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, c_ast.Pragma):
                words = n.string.split()
                if words[:1] == ["scop"]:
                    self.has_scop = True
                if words[:2] == ["c2gpu", "port"]:
                    self.has_port_marker = True
            stack.extend(c for _, c in n.children())

    def lower_function(self, fn: c_ast.FuncDef) -> list[Nest]:
        scope = self.globals.child()
        fdecl = fn.decl.type
        for p in (fdecl.args.params if fdecl.args else []):
            if isinstance(p, c_ast.Decl) and p.name:
                t = decl_type(p, self.typedefs)
                storage = "param-array" if t.dims else "param-pointer" if t.pointers else "param"
                scope.vars[p.name] = Var(t, storage, loc_of(p, Loc(self.path, 0)), p.name)
        cands: list[Candidate] = []
        self.find(fn.body, scope, cands, state={"scop": False, "marker": None, "pragmas": []}, outer="")
        facts = FunctionFacts(fn, self.user_functions, self.inlinable)
        nests = []
        for index, cand in enumerate(cands, 1):
            try:
                nests.append(self.lower_nest(fn.decl.name, cand, facts))
            except RecursionError:
                loc = loc_of(cand.node, Loc(self.path, 0))
                self.notes.append(Flag("not-analysed", f"nest at line {loc.line} is nested too deeply to describe", loc))
            except Exception as e:  # a bug in lowering one nest must cost that nest, not the file
                loc = loc_of(cand.node, Loc(self.path, 0))
                self.notes.append(Flag("not-analysed", f"internal error while describing the nest at line {loc.line}: "
                                                       f"{type(e).__name__}: {e}", loc))
        return nests

    def find(self, node, scope: Scope, out: list[Candidate], state: dict, outer: str) -> None:
        """Collect outermost for loops in statement order, tracking pragmas."""
        if node is None:
            return
        if isinstance(node, c_ast.Compound):
            inner = scope.child()
            for item in node.block_items or []:
                if isinstance(item, c_ast.Pragma):
                    state["pragmas"].append(item.string.strip())
                    words = item.string.split()
                    if words[:1] == ["scop"]:
                        state["scop"] = True
                    elif words[:1] == ["endscop"]:
                        state["scop"] = False
                    elif words[:1] == ["c2gpu"]:
                        if words[1:2] in (["port"], ["skip"]):
                            state["marker"] = (words[1], loc_of(item, Loc(self.path, 0)))
                        else:
                            self.notes.append(Flag("unknown-pragma", f"unknown c2gpu pragma '{item.string}' "
                                                   "(known: 'c2gpu port', 'c2gpu skip')", loc_of(item, Loc(self.path, 0))))
                    continue
                if isinstance(item, c_ast.Decl) and item.name:
                    # (an `extern` declaration names a global: it outlives the function like a static)
                    storage = "static" if {"static", "extern"} & set(item.storage or ()) else "local"
                    inner.vars[item.name] = Var(decl_type(item, self.typedefs), storage,
                                                loc_of(item, Loc(self.path, 0)), item.name)
                self._marker_without_for(state, item)
                self.find(item, inner, out, state, outer)
                state["marker"] = None
                state["pragmas"] = []
            self._marker_without_for(state, None)
            state["marker"] = None
            return
        if isinstance(node, c_ast.For):
            marker = state.get("marker")
            marked = bool(marker) and marker[0] == "port"
            loc = loc_of(node, Loc(self.path, 0))
            why_not = ("skipped by '#pragma c2gpu skip'" if marker and marker[0] == "skip"
                       else "not marked '#pragma c2gpu port'" if self.has_port_marker and not marked
                       else "is outside '#pragma scop' regions" if self.has_scop and not state["scop"] and not marked
                       else None)
            if why_not is None and not (state.get("host") and not marked):
                region = "pragma" if marker else "scop" if state["scop"] else "auto"
                out.append(Candidate(node, scope, region, outer, tuple(state["pragmas"])))
                self._pragmas_inside_nest(node.stmt, loc)
                return
            if why_not is not None and not state.get("host"):
                self.notes.append(Flag("skipped", f"nest at line {loc.line} {why_not}", loc))
            # the loop stays on the host as written: a loop inside it marked '#pragma c2gpu port' is a nest
            inner = scope.child()
            for d in (node.init.decls if isinstance(node.init, c_ast.DeclList) else []):
                if d.name:
                    inner.vars[d.name] = Var(decl_type(d, self.typedefs), "local", loc_of(d, Loc(self.path, 0)), d.name)
            host = state.get("host")
            state.update(host=True, marker=None, pragmas=[])
            self.find(node.stmt, inner, out, state, outer)
            state["host"] = host
            return
        if isinstance(node, c_ast.If):
            self.find(node.iftrue, scope, out, state, outer)
            self.find(node.iffalse, scope, out, state, outer)
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            self.find(node.stmt, scope, out, state, "while")
        elif isinstance(node, (c_ast.Switch, c_ast.Case, c_ast.Default, c_ast.Label)):
            for _, c in node.children():
                self.find(c, scope, out, state, outer)

    def _marker_without_for(self, state: dict, item: c_ast.Node | None) -> None:
        """A '#pragma c2gpu port/skip' selects the `for` right after it: before anything else (or nothing), say so."""
        marker = state.get("marker")
        if marker and not isinstance(item, c_ast.For):
            what = (f"the statement at line {loc_of(item, marker[1]).line}" if item is not None
                    else "the end of the block")
            self.notes.append(Flag("unknown-pragma", f"'#pragma c2gpu {marker[0]}' is followed by {what}, not by a "
                                   "for loop: it selects nothing", marker[1]))
            state["marker"] = None

    def _pragmas_inside_nest(self, body: c_ast.Node | None, nest_loc: Loc) -> None:
        """c2gpu pragmas inside a nest taken as a whole select nothing: never ignore one silently."""
        for n, _ in _walk(body) if body is not None else ():
            if isinstance(n, c_ast.Pragma) and n.string.split()[:1] == ["c2gpu"]:
                loc = loc_of(n, Loc(self.path, 0))
                self.notes.append(Flag("unknown-pragma", f"'#pragma {n.string.strip()}' is inside the nest at line "
                                       f"{nest_loc.line}, which is analysed as a whole: the pragma is ignored", loc))

    def _inner_array(self, ctx: NestContext, name: str, facts: "FunctionFacts", root: Loop) -> ArrayInfo:
        """The ArrayInfo of an array declared inside the nest (NestContext.inner_arrays): a new object in every
        iteration of the loops around its declaration (ArrayInfo.declared_in), so nothing it holds passes from one
        iteration of them to another, and nothing reads it after the nest.  Its address must not be taken (then
        a pointer may reach it from elsewhere): flagged local-array."""
        t, node, lids, dims = ctx.inner_arrays[name]
        loc = ctx.loc(node)
        if facts.escapes(name):
            ctx.flags.append(Flag("local-array", f"array '{name}' is declared inside the nest and its address is "
                                  "taken", loc, lids))
            return ArrayInfo(name, t.base, t.elem_size, dims, "local", False, t.const, loc)
        by_lid = {lp.lid: lp for lp in root.loops()}
        where = f"the loop at line {by_lid[lids[-1]].loc.line}" if lids and lids[-1] in by_lid else "the nest"
        return ArrayInfo(name, t.base, t.elem_size, dims, "local", False, t.const, loc, unreachable=True,
                         dead_after=f"declared inside {where}: a new array in every iteration", declared_in=lids)

    def lower_nest(self, function: str, cand: Candidate, facts: "FunctionFacts") -> Nest:
        cand = self.dead_branches_removed(cand, facts)
        cand = self.calls_inlined(cand, facts)
        cand, stands_for = self.fields_renamed(cand, facts)
        cand = self.inductions_substituted(cand, facts)
        cand = self.aliases_resolved(cand, facts)
        loc = loc_of(cand.node, Loc(self.path, 0))
        ctx = NestContext(cand.scope, self.typedefs, self.functions, loc, frozenset(self.user_functions),
                          facts.address_taken)
        ctx.live_in_nest = lambda loop, name: facts.read_later(loop, name, stop=cand.node)
        ctx.has_goto = facts.has_goto
        ctx.rows_distinct = self.objects.rows_distinct if self.objects is not None else lambda base: None
        ctx.macro_origin = self.macro_origin
        ctx.pure = self.pure
        ctx.structs = self.structs
        ctx.not_inlined = dict(cand.not_inlined)
        lowerer = NestLowerer(ctx)
        lowerer.prepass(cand.node)
        ctx.entry_values = _entry_values(ctx, cand.stands_for or cand.node, facts)
        root = lowerer.lower_loop(cand.node, (), cand.scope, cand.pragmas)
        if any(ind.trip is None for ind in cand.inductions):       # the loop they count, as first described
            cand = replace(cand, inductions=tuple(ind if ind.trip is not None else replace(ind, trip=root.trip_count)
                                                  for ind in cand.inductions))
        stmts = list(root.statements())
        arrays = []
        for name in sorted(ctx.arrays_used):
            found = cand.scope.lookup(name)
            if name in ctx.inner_arrays:
                arrays.append(self._inner_array(ctx, name, facts, root))
                continue
            if found is None:
                continue
            t, storage, dloc = found.ctype, found.storage, found.loc
            dims: list[Poly | None] = []
            for d in t.dims:
                if d is None:
                    dims.append(None)
                    continue
                saved = set(ctx.params)
                p, _ = ctx.poly(d)
                ctx.params = saved | (p.variables if p is not None else set())
                dims.append(p)
            # `int *u[2]` is two pointers (rows of unknown extent); `int (*p)[N]` one pointer to rows of N
            dims = dims + [None] * t.pointers if t.pointer_rows and t.dims else [None] * t.pointers + dims
            target = self.objects.target(dloc) if self.objects is not None else None
            # a pointer parameter passed arrays of one constant extent at every call: it reaches that many elements
            known = self.objects.extent(dloc) if self.objects is not None and dims == [None] \
                and storage.startswith("param") else None
            if known is not None:
                dims = [Poly.const(known[0])]
            if name in ctx.by_field:        # seen by field: an array of the fields' type, one dimension more
                t = replace(t, base=_one_scalar_type(ctx.structs[t.base]))
                dims.append(Poly.const(len(ctx.by_field[name])))
                whole = next((a for st in stmts for a in st.accesses
                              if a.array == name and len(a.subscripts) != len(dims)), None)
                if whole is not None:       # `y[i] = x[i]` beside `y[i].re`: one access, several fields
                    ctx.flags.append(Flag("unsupported-access", f"'{whole.text}' reads or writes a whole struct of "
                                          f"'{name}', which the nest also accesses by field", whole.loc))
            # an array of this function that is only ever indexed: no pointer can point into it (a static array of
            # the file that only main names, main being called once, is as good as one of main's own: EP's x)
            own = storage in ("local", "static") or storage == "global" and function == "main" and \
                name in self.main_statics
            unreachable = own and not t.pointers and bool(t.dims) and not facts.escapes(name, cand.passed)
            # (a parameter: its callers do not read it after the calls either)
            # (a parameter the function only indexes: no copy of it outlives the call)
            callers = self.objects.dead_after_calls(dloc) if storage.startswith("param") and self.objects is not None \
                and not facts.escapes(name, cand.passed) else None
            dead_after = "" if not (storage in ("local", "global") and unreachable or callers) \
                or facts.read_later(cand.stands_for or cand.node, name, stop=None) \
                else "not read after the nest" + (f", and {callers}" if callers else "")
            arrays.append(ArrayInfo(name, t.base, t.elem_size, tuple(dims), "local" if storage == "static" else storage,
                                    t.restrict, t.const, dloc, assigned=name in facts.assigned, unreachable=unreachable,
                                    dead_after=dead_after,
                                    rows_source=(self.objects.rows_distinct(t.base) or "") if t.pointer_rows
                                    and self.objects is not None else "",
                                    target=target.labels if target is not None else None,
                                    target_source=target.source if target is not None else "",
                                    extent_source=known[1] if known is not None else "",
                                    fields=ctx.by_field.get(name, ())))
        red_targets = {r.target for s in stmts for r in s.reductions}
        scalars = []
        for name in sorted(ctx.scalars_used):
            local = ctx.locals.get(name)
            var = local[0] if local is not None else cand.scope.lookup(name)
            writers = [s for s in stmts if name in s.scalar_writes]
            if local is not None:
                role = "local"
            elif not writers:
                role = "invariant"
            elif name in red_targets and all(any(r.target == name for r in s.reductions) for s in writers):
                role = "reduction"
            else:
                role = "written"
            c_name = local[1].name if local is not None else name
            exposed = var is not None and (var.storage in ("global", "static") or c_name in facts.address_taken)
            scalars.append(ScalarInfo(name, var.ctype.base if var is not None else "?", role, ctx.scalars_used[name],
                                      exposed=exposed, declared_in=var.decl_lids if local is not None else None,
                                      c_name=c_name if c_name != name else ""))
        for name in sorted(ctx.params - set(ctx.scalars_used)):
            found = cand.scope.lookup(name)
            if found is not None and found.ctype.is_scalar:
                # symbolic sizes used only in bounds or subscripts are invariant scalars of the nest too
                exposed = found.storage in ("global", "static") or name in facts.address_taken
                scalars.append(ScalarInfo(name, found.ctype.base, "invariant", found.loc, exposed=exposed))
        scalars.sort(key=lambda s: s.name)
        flags = list(ctx.flags) + _exposed_loop_variables(root, cand.scope, arrays) + self.host_only(cand, stmts)
        if cand.outer == "while":
            flags.append(Flag("inside-while", "this nest sits inside a while loop, so it runs an unknown number of times", loc))
        loop_vars = {lp.var for lp in root.loops()}
        params = sorted(ctx.params - loop_vars)
        outside = {lp.var for lp in root.loops() if not lp.declared_in_header} | \
            {sc.name for sc in scalars if sc.declared_in is None} | {ind.name for ind in cand.inductions}
        live = facts.live_after(cand.stands_for or cand.node, cand.scope)
        sizes = []
        for name in params:
            found = cand.scope.lookup(name)
            known = self.objects.value(found.loc) if found is not None and self.objects is not None else None
            if known is not None:
                sizes.append((name, known[0], known[1]))
        return Nest(name=f"{function}@{loc.line}", function=function, loc=loc, end_loc=None, root=root,
                    arrays=tuple(arrays), scalars=tuple(scalars), params=tuple(params), flags=tuple(flags),
                    region=cand.region, sizes=tuple(sizes), live_after=tuple(sorted(outside & live)),
                    functions=needed(self.pure, {c for s in stmts for c in s.calls}),
                    stands_for=stands_for, inductions=cand.inductions, inlined=cand.inlined,
                    rewrites=tuple(ind.note(root.var, root.loc.line) for ind in cand.inductions) + cand.aliases,
                    relower=lambda node: self.relower(function, cand, facts, node))

    def inductions_substituted(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate with the counters its outer loop steps once per iteration substituted
        (frontend/inductions.py); a rewritten candidate keeps those found before."""
        def volatile(name: str) -> bool:
            return any(isinstance(n, c_ast.Decl) and n.name == name and "volatile" in (n.quals or ())
                       for n, _ in _walk(facts.fn))
        node, found = substitute_inductions(cand.node, cand.scope.lookup, facts.address_taken, volatile)
        if not found:
            return cand
        self._adopt(cand.node, node, facts)
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node,
                       inductions=cand.inductions + tuple(found))

    def dead_branches_removed(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate without the branches of its `if`s whose condition is a constant (`if (TIMERS_ENABLED ==
        TRUE) timer_start(3);` with both macros numbers, `if (DEBUG) printf(...)`): they never run, so what they
        call or touch neither blocks a proof nor goes into a kernel."""
        dead = [n for n, _ in _walk(cand.node) if isinstance(n, c_ast.If) and _truth(n.cond) is not None]
        if not dead:
            return cand
        node = copy_tree(cand.node)
        lines = []
        for n, up in list(_walk(node)):
            if not isinstance(n, c_ast.If) or up is None or (value := _truth(n.cond)) is None:
                continue
            kept = n.iftrue if value else n.iffalse
            swap(up, n, kept if kept is not None else c_ast.EmptyStatement(coord=n.coord))
            lines.append(str(loc_of(n, Loc(self.path, 0)).line))
        if not lines:
            return cand
        self._adopt(cand.node, node, facts)
        lines = sorted(set(lines), key=int)
        many = len(lines) > 1
        note = f"{'ifs' if many else 'an if'} whose condition is a constant (line{'s' if many else ''} " \
               f"{', '.join(lines)}): the branch{'es' if many else ''} that never run{'' if many else 's'} left out"
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node, aliases=cand.aliases + (note,))

    def calls_inlined(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate with the calls of the file's void functions it can see into inlined (frontend/inline.py),
        with a note naming them."""
        inliner = Inliner(self.inlinable, self.typedefs, cand.scope.lookup, self.globals.vars.get,
                          set(facts.address_taken), foreign=frozenset(self.foreign))
        node = inliner.nest(cand.node)
        if node is cand.node:
            return replace(cand, not_inlined=tuple(sorted(inliner.why_not.items())))
        self._adopt(cand.node, node, facts)
        counts = Counter(inliner.inlined)
        note = "inlined " + ", ".join(f"{name}() ({k} call{'s' if k > 1 else ''})" for name, k in sorted(counts.items())) + \
            ": the nest is analysed and ported with the functions' bodies in place of the calls"
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node, aliases=cand.aliases + (note,),
                       inlined=tuple(sorted(counts)), not_inlined=tuple(sorted(inliner.why_not.items())),
                       passed=frozenset(_place(n) for n in inliner.passed))

    def host_only(self, cand: Candidate, stmts: list[Statement]) -> list[Flag]:
        """What keeps a nest on the CPU although its loops may be parallel: C that CUDA's device code computes
        differently.  `long double` (nvcc makes it `double`: 8 bytes where the host copies 16, another
        rounding), and math calls whose errno the file reads (device math never sets errno)."""
        pure = needed(self.pure, {c for s in stmts for c in s.calls})
        flags = []
        bodies = [(cand.node, cand.scope)] + [(f.ast, None) for f in pure]
        for body, scope in bodies:
            found = _long_double_use(body, scope, self.typedefs)
            if found is not None:
                node, what = found
                where = loc_of(node, Loc(self.path, 0))
                flags.append(Flag("long-double", f"{what} (line {where.line}) is long double, which CUDA's device code does not have (nvcc "
                                  "computes it as double, in 8 bytes where the host has 16)", where))
                break
        if self.errno_read is not None:
            calls = [(c, s.loc) for s in stmts for c in s.calls if c in SETS_ERRNO and c not in self.user_functions]
            calls += [(n.name.name, loc_of(n, Loc(self.path, 0))) for f in pure for n, _ in _walk(f.ast)
                      if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in SETS_ERRNO
                      and n.name.name not in self.user_functions]
            if calls:
                name, where = calls[0]
                flags.append(Flag("errno-read", f"{name}() (line {where.line}) sets errno on the CPU and never on the GPU, and the file "
                                  f"reads errno (line {self.errno_read.line})", where))
        return flags

    def aliases_resolved(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate with every pointer that the file shows is always a declared array at a constant offset
        (FileObjects.alias: `float *xx = flat;`) replaced by that array, `xx[e]` by `flat[e + k]`: one object,
        one name, so its dependences are exact and the port copies it once.  Only where the nest sees the
        array's declaration, uses the pointer for nothing but subscripts and never assigns it."""
        if self.objects is None:
            return cand
        names = {n.name for n, _ in _walk(cand.node) if isinstance(n, c_ast.ID)}
        declared = {n.name for n, _ in _walk(cand.node) if isinstance(n, c_ast.Decl)}
        chosen = {}
        for name in sorted(names - declared):
            var = cand.scope.lookup(name)
            alias = self.objects.alias(var.loc) if var is not None and var.ctype.pointers == 1 else None
            if alias is None:
                continue
            seen = cand.scope.lookup(alias.array)
            if seen is None or seen.loc != alias.array_loc or alias.array in declared:
                continue
            chosen[name] = alias
        if not chosen:
            return cand
        for n, up in _walk(cand.node):       # the pointer only as the base of a subscript (so never assigned)
            if isinstance(n, c_ast.ID) and n.name in chosen and not (isinstance(up, c_ast.ArrayRef) and up.name is n):
                chosen.pop(n.name)
        if not chosen:
            return cand
        node = copy_tree(cand.node)
        for ref, _ in list(_walk(node)):
            if isinstance(ref, c_ast.ArrayRef) and isinstance(ref.name, c_ast.ID) and ref.name.name in chosen:
                alias = chosen[ref.name.name]
                ref.name = c_ast.ID(alias.array, coord=ref.name.coord)
                if alias.offset:
                    ref.subscript = c_ast.BinaryOp("+" if alias.offset > 0 else "-", ref.subscript,
                                                   c_ast.Constant("int", str(abs(alias.offset))), coord=ref.subscript.coord)
        self._adopt(cand.node, node, facts)
        notes = tuple(f"'{name}' is always the array '{a.array}' ({a.source}): one object under two names, so the "
                      f"nest reads {name}[...] as {a.array}[...{f' + {a.offset}' if a.offset > 0 else f' - {-a.offset}' if a.offset < 0 else ''}] "
                      f"and the port copies {a.array} once" for name, a in sorted(chosen.items()))
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node, aliases=cand.aliases + notes)

    def fields_renamed(self, cand: Candidate, facts: "FunctionFacts") -> tuple[Candidate, tuple[tuple[str, str], ...]]:
        """The candidate with its struct field accesses renamed to variables of their own (fields.renamed), in a
        scope that declares them, and what each stands for."""
        taken = {n.name for n, _ in _walk(facts.fn)  if isinstance(n, c_ast.ID)} | set(self.functions)
        s: Scope | None = cand.scope
        while s is not None:
            taken |= set(s.vars)
            s = s.parent

        def lookup(name: str):
            var = cand.scope.lookup(name)
            return var.ctype if var is not None else None

        def own_struct(name: str) -> bool:
            var = cand.scope.lookup(name)
            return var is not None and var.storage == "local" and var.decl_lids is None and \
                name not in facts.address_taken and not facts.read_later(cand.stands_for or cand.node, name, stop=None)
        node, found = renamed(cand.node, lookup, self.structs, taken, own_struct)

        def lookup_after(name: str):        # the fields just renamed are variables too
            return found[name][0] if name in found else lookup(name)
        node, elements = invariant_elements(node, lookup_after, taken)
        found = {**found, **{name: (*v, False) for name, v in elements.items()}}
        if not found:
            return cand, cand.fields
        scope = cand.scope.child()
        for name, (ctype, _, ref, written) in found.items():
            # a scalar field is memory a pointer may reach, like a global, but one of the function's own structs
            # (written by the nest: see fields.renamed) is a local; a pointer or array field is a pointer
            storage = "local" if written else "global" if ctype.is_scalar else "param-pointer"
            scope.vars[name] = Var(ctype, storage, loc_of(ref, Loc(self.path, 0)), name)
        self._adopt(cand.node, node, facts)
        fields = cand.fields + tuple((name, text) for name, (_, text, _, _) in sorted(found.items()))
        return replace(cand, node=node, scope=scope, stands_for=cand.stands_for or cand.node, fields=fields), fields

    @staticmethod
    def _adopt(old: c_ast.Node, new: c_ast.Node, facts: "FunctionFacts") -> None:
        """Record `new`, a rewrite of `old`, in the function's parent map at `old`'s place (liveness scans)."""
        parent = facts.parent.get(id(old))
        if parent is not None:
            facts.parent[id(new)] = parent
        for n, up in _walk(new):
            if up is not None:
                facts.parent[id(n)] = up

    def relower(self, function: str, cand: Candidate, facts: "FunctionFacts", node: c_ast.For) -> Nest:
        """The nest that `node`, a rewrite of the candidate's for-statement, would be in its place (same
        scope, same function, same code after it): the rewritten nodes' parents are recorded for the
        liveness scans, the candidate's own position stands for the new root's."""
        self._adopt(cand.stands_for or cand.node, node, facts)
        return self.lower_nest(function, replace(cand, node=node, stands_for=cand.stands_for or cand.node), facts)


def _errno_read(ast: c_ast.FileAST, fallback: Loc) -> Loc | None:
    """Where the file first reads `errno` (anything but `errno = ...`), or None."""
    for n, up in _walk(ast):
        if isinstance(n, c_ast.ID) and n.name == "errno" and not (
                isinstance(up, c_ast.Assignment) and up.op == "=" and up.lvalue is n):
            return loc_of(n, fallback)
    return None


def _long_double_use(body: c_ast.Node, scope: Scope | None, typedefs: dict[str, CType]):
    """(the node, what it is) of the first long double value in `body`: a variable declared long double (in
    `body` or, with `scope`, around it), a constant with an L suffix, a cast to long double; None if there is
    none.  A function's parameters and return type count too."""
    for n, _ in sorted(_walk(body), key=lambda nu: (getattr(nu[0].coord, "line", 0), getattr(nu[0].coord, "column", 0))):
        if isinstance(n, c_ast.Decl) and not isinstance(n.type, c_ast.FuncDecl) and n.name \
                and decl_type(n, typedefs).base == "long double":
            return n, f"'{n.name}'"
        if isinstance(n, c_ast.FuncDef) and decl_type(n.decl.type.type, typedefs).base == "long double":
            return n, f"the value {n.decl.name}() returns"
        if isinstance(n, c_ast.ID) and scope is not None:
            var = scope.lookup(n.name)
            if var is not None and var.ctype.base == "long double":
                return n, f"'{n.name}'"
        if isinstance(n, c_ast.Constant) and n.type == "long double":
            return n, f"the constant {n.value}"
        if isinstance(n, c_ast.Cast) and decl_type(n.to_type, typedefs).base == "long double":
            return n, "a cast to long double"
    return None


def _exposed_loop_variables(root: Loop, scope: Scope, arrays: list[ArrayInfo]) -> list[Flag]:
    """A loop counting with a global or static variable, in a loop that writes through a pointer: the
    pointer may point to the counter (the loop variable is no scalar the dependence analysis compares)."""
    pointers = {a.name for a in arrays if not a.restrict and (a.storage in ("param-pointer", "param-array") or not a.dims or a.dims[0] is None)}
    out = []

    def walk(lp: Loop, path: tuple[int, ...]) -> None:
        path = path + (lp.lid,)
        var = scope.lookup(lp.var)
        if not lp.declared_in_header and var is not None and var.storage in ("global", "static"):
            write = next((a for s in lp.statements() for a in s.accesses
                          if a.kind == "write" and a.array in pointers), None)
            if write is not None:
                out.append(Flag("exposed-loop-variable", f"loop variable '{lp.var}' is a {var.storage} variable, and "
                                f"the write {write.text} (line {write.loc.line}) may change it through a pointer",
                                lp.loc, path))
        for n in lp.body:
            if isinstance(n, Loop):
                walk(n, path)
    walk(root, ())
    return out


def _from_c2gpu_headers(decl: c_ast.Node) -> bool:
    coord = getattr(decl, "coord", None)
    return coord is not None and coord.file is not None and str(coord.file).startswith(str(INCLUDE_DIR))


class FunctionFacts:
    """What the rest of a function tells about a nest's variables: which have their address taken, which
    pointers are reassigned, and which values are still read after the nest (a backward liveness scan)."""

    def __init__(self, fn: c_ast.FuncDef, user_functions: set[str], functions: dict[str, c_ast.FuncDef] | None = None):
        self.fn = fn
        self.functions = functions or {}    # the program's functions c2gpu reads (FileLowerer.inlinable): an
        #                                     array passed where one only indexes its parameter does not escape
        taken, assigned = set(), set()
        self.parent: dict[int, c_ast.Node] = {}
        self.has_goto = False
        for n, up in _walk(fn.body):
            if up is not None:
                self.parent[id(n)] = up
            if isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID):
                call = up if isinstance(up, c_ast.ExprList) else None
                call = self.parent.get(id(call)) if call is not None else None
                library = isinstance(call, c_ast.FuncCall) and text_of(call.name) not in user_functions
                if not library:       # a library call (scanf("%d", &n)) does not keep the pointer
                    taken.add(n.expr.name)
            elif _assigned_name(n) is not None:
                assigned.add(_assigned_name(n))
            elif isinstance(n, (c_ast.Goto, c_ast.Label)):
                self.has_goto = True
        self.address_taken = frozenset(taken)
        self.assigned = frozenset(assigned)
        self.values = frozenset(n.name for n, _ in _walk(fn.body) if isinstance(n, c_ast.ID) and not self._element(n))
        self.value_places: dict[str, set[tuple]] = {}     # name -> where it is used other than by element
        for n, _ in _walk(fn.body):
            if isinstance(n, c_ast.ID) and n.name in self.values and not self._element(n) and not self._indexed_by(n):
                self.value_places.setdefault(n.name, set()).add(_place(n))

    def _indexed_by(self, name: c_ast.ID) -> bool:
        """Whether this use passes the array to a function of the program that only indexes its parameter
        (`vranlc(0, &t1, A, x)`, or `x - 1`): the call keeps no pointer to it."""
        arg, up = name, self.parent.get(id(name))
        if isinstance(up, c_ast.BinaryOp) and up.op in ("+", "-") and up.left is name:
            arg, up = up, self.parent.get(id(up))
        call = self.parent.get(id(up)) if isinstance(up, c_ast.ExprList) else None
        if not isinstance(call, c_ast.FuncCall) or not isinstance(call.name, c_ast.ID) \
                or call.name.name not in self.functions:
            return False
        position = next((k for k, e in enumerate(up.exprs) if e is arg), None)
        return position is not None and only_indexes(self.functions[call.name.name], position)

    def escapes(self, name: str, passed: frozenset[tuple] = frozenset()) -> bool:
        """Whether the function uses `name` other than by element (`&a[i]`, `a`, `a + 1`: a pointer to it may
        be kept), leaving out the arguments `passed` of calls the nest inlines (there they are only indexed)."""
        return bool(self.value_places.get(name, set()) - passed)

    def _element(self, name: c_ast.ID) -> bool:
        """Whether this use of a name only reads or writes an element (`a[i][j]`, not `&a[i]`, `a`, `a + 1`)."""
        node, up = name, self.parent.get(id(name))
        while isinstance(up, c_ast.ArrayRef) and up.name is node:
            node, up = up, self.parent.get(id(up))
        return node is not name and not (isinstance(up, c_ast.UnaryOp) and up.op == "&")

    def live_after(self, nest: c_ast.For, scope: Scope | None, stop: c_ast.Node | None = None) -> set[str]:
        """Names whose value may be read after the loop `nest` ends (before being overwritten), by the C name
        the nest uses: globals, statics and address-taken variables always.  With `stop` (an enclosing
        loop), only the reads up to the end of `stop` count."""
        always = set() if stop is not None else {name for name in self.address_taken}
        s: Scope | None = scope
        while s is not None:
            always |= {n for n, v in s.vars.items() if v.storage in ("global", "static")}
            s = s.parent
        if self.has_goto:
            return always | {n.name for n in _ids(self.fn.body)}
        live: set[str] = set()
        killed: set[str] = set()
        child, node = nest, self.parent.get(id(nest))
        while node is not None:
            if isinstance(node, c_ast.Compound):
                items = node.block_items or []
                after = items[[id(i) for i in items].index(id(child)) + 1:]
                declared = set()
                for item in after:
                    reads, kills = _uses(item, killed | declared)
                    live |= reads
                    killed |= kills
                    if isinstance(item, c_ast.Decl) and item.name:
                        declared.add(item.name)      # from here on the name is another variable
            elif isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)):
                # the next iteration: the step and the condition, then the body from its start
                heads = [node.cond] + ([node.next] if isinstance(node, c_ast.For) else [])
                live |= {n.name for h in heads for n in _ids(h)} - killed
                live |= _uses(node.stmt, killed)[0]
                if node is stop:
                    break
            child, node = node, self.parent.get(id(node))
        return live | always

    def read_later(self, loop: c_ast.For, name: str, stop: c_ast.Node) -> bool:
        """Whether `name` may be read after `loop` ends and before it is overwritten, up to the end of
        the enclosing loop `stop` (the nest): one name, so the scan stops at the first answer."""
        if self.has_goto:
            return True
        child, node = loop, self.parent.get(id(loop))
        while node is not None:
            if isinstance(node, c_ast.Compound):
                items = node.block_items or []
                for item in items[[id(i) for i in items].index(id(child)) + 1:]:
                    if isinstance(item, c_ast.Decl) and item.name == name:
                        break                             # hidden for the rest of this block
                    r = _first_use(item, name)
                    if r is not None:
                        return r == "read"
            elif isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)):
                # the next iteration (step, condition, body from its start) may read it; a write at the start of
                # the body does not settle it, for the loop may also exit to the code after it
                heads = [node.cond] + ([node.next] if isinstance(node, c_ast.For) else [])
                if any(i.name == name for h in heads for i in _ids(h)) or _first_use(node.stmt, name) == "read":
                    return True
                if node is stop:
                    return False
            child, node = node, self.parent.get(id(node))
        return False


def _first_use(node: c_ast.Node | None, name: str) -> str | None:
    """Whether statement `node`, run from its start, first reads `name` ("read"), surely overwrites it
    first ("write"), or neither (None).  Conservative like `_uses`: any other mention is a read."""
    if node is None:
        return None
    if isinstance(node, c_ast.Compound):
        for item in node.block_items or []:
            if isinstance(item, c_ast.Decl) and item.name == name:
                return "read" if any(n.name == name for n in _ids(item.init)) else None   # hidden from here on
            r = _first_use(item, name)
            if r is not None:
                return r
        return None
    mentions = lambda n: any(i.name == name for i in _ids(n))  # noqa: E731
    if isinstance(node, c_ast.Assignment) and node.op == "=" and isinstance(node.lvalue, c_ast.ID) \
            and node.lvalue.name == name:
        return "read" if mentions(node.rvalue) else "write"
    if isinstance(node, c_ast.For):
        if isinstance(node.init, c_ast.DeclList):
            if any(mentions(d.init) for d in node.init.decls):
                return "read"
            if any(d.name == name for d in node.init.decls):
                return None                                   # the loop's own variable hides it
        else:
            r = _first_use(node.init, name)
            if r is not None:
                return r
        if mentions(node.cond) or mentions(node.next) or _first_use(node.stmt, name) == "read":
            return "read"
        return None
    if isinstance(node, c_ast.If):
        if mentions(node.cond):
            return "read"
        r1, r2 = _first_use(node.iftrue, name), _first_use(node.iffalse, name)
        if "read" in (r1, r2):
            return "read"
        return "write" if r1 == r2 == "write" else None
    return "read" if mentions(node) else None


def _uses(node: c_ast.Node | None, killed: set[str]) -> tuple[set[str], set[str]]:
    """(names `node` may read before writing them, names it surely writes), for a statement in sequence.

    Conservative: any mention counts as a read unless a write that surely runs comes first (`x = e;`, a `for`
    header's `x = e`, both branches of an `if`); writes inside loop bodies may not run.
    """
    if node is None:
        return set(), set()
    if isinstance(node, c_ast.Compound):
        reads, kills, declared = set(), set(), set()
        for item in node.block_items or []:
            r, k = _uses(item, killed | kills | declared)
            reads |= r
            kills |= k
            if isinstance(item, c_ast.Decl) and item.name:
                declared.add(item.name)
        return reads, kills - declared
    if isinstance(node, c_ast.Assignment) and node.op == "=" and isinstance(node.lvalue, c_ast.ID):
        reads = {n.name for n in _ids(node.rvalue)} - killed
        return reads, {node.lvalue.name}
    if isinstance(node, c_ast.Decl):
        return {n.name for n in _ids(node.init)} - killed, set()
    if isinstance(node, c_ast.For):
        reads, kills = _uses(node.init, killed) if not isinstance(node.init, c_ast.DeclList) else \
            ({n.name for d in node.init.decls for n in _ids(d.init)} - killed, set())
        inner = killed | kills
        if isinstance(node.init, c_ast.DeclList):
            inner |= {d.name for d in node.init.decls}
        reads |= {n.name for n in _ids(node.cond)} - inner
        reads |= {n.name for n in _ids(node.next)} - inner
        reads |= _uses(node.stmt, inner)[0]
        return reads, kills
    if isinstance(node, c_ast.If):
        reads = {n.name for n in _ids(node.cond)} - killed
        r1, k1 = _uses(node.iftrue, killed)
        r2, k2 = _uses(node.iffalse, killed)
        return reads | r1 | r2, (k1 & k2) if node.iffalse is not None else set()
    return {n.name for n in _ids(node)} - killed, set()


def _unique_names(nests: list[Nest]) -> list[Nest]:
    """Nest names key every analysis and name the generated kernels: two nests on one line
    (`for (...) a[i] = 1; for (...) b[i] = a[i];`) must not share one.  The first keeps
    `function@line`, the others get `function@line_column`."""
    from dataclasses import replace
    seen: set[str] = set()
    out = []
    for n in nests:
        if n.name in seen:
            n = replace(n, name=f"{n.function}@{n.loc.line}_{n.loc.col}")
        seen.add(n.name)
        out.append(n)
    return out


def program_functions(path: str, options) -> tuple[dict[str, c_ast.FuncDef], list[Flag]]:
    """The functions defined in the program's other files (PreprocessOptions.program_files), each preprocessed
    as cc would with the same options, by name; a file that cannot be read is a note, its functions unknown."""
    found: dict[str, c_ast.FuncDef] = {}
    notes: list[Flag] = []
    for other in getattr(options, "program_files", ()) or ():
        if os.path.abspath(other) == os.path.abspath(path):
            continue
        try:
            tree = parse_c(preprocess(other, replace(options, program_files=())), other)
        except C2GPUError as e:
            notes.append(Flag("not-analysed", f"the program's file {other} could not be read ({e.message}): "
                              "calls to its functions stay calls c2gpu cannot see into", Loc(path, 0)))
            continue
        for ext in tree.ext:
            if isinstance(ext, c_ast.FuncDef):
                found.setdefault(ext.decl.name, ext)
    return found, notes


def lower_program(ast: c_ast.FileAST, path: str, options=None, original_source: str | None = None) -> Program:
    foreign, notes = program_functions(path, options) if options is not None else ({}, [])
    fl = FileLowerer(ast, path, tuple(options.defines) if options is not None else (), foreign)
    fl.notes.extend(notes)
    # Lowering allocates many small objects and frees none of them while the AST is alive: the cyclic garbage
    # collector would rescan the whole AST again and again (it doubled lowering time on a 50,000-line file).
    gc.freeze()
    try:
        nests = fl.run()
    finally:
        gc.unfreeze()
    defines = tuple(options.defines) if options is not None else ()
    def position(node: c_ast.Node) -> tuple[str, int, int]:
        loc = loc_of(node, Loc("", 0, 0))
        return loc.file, loc.line, loc.col
    order = run_order(ast, {(n.loc.file, n.loc.line, n.loc.col) for n in nests}, position)
    return Program(path=path, nests=tuple(nests), diagnostics=tuple(fl.notes), defines=defines, ast=ast,
                   run_order=order)
