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

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from pycparser import c_ast, c_generator

from ..ir import (Access, ArrayInfo, Constraint, Flag, Guard, Loc, Loop, Nest, Program,
                  Reduction, ScalarInfo, Statement)
from ..poly import Poly, Sym
from .ctypes import FLOAT_TYPES, CType, arith_result, decl_type

_GEN = c_generator.CGenerator()

# Math library calls the model recognizes: name -> (op kind, result type or None = "same as the f/no-f form").
_SPECIAL = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sin", "cos", "tan",
            "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
            "erf", "erfc", "tgamma", "lgamma", "cbrt", "hypot")
_CHEAP = ("fabs", "floor", "ceil", "round", "trunc", "copysign", "rint", "nearbyint")
_MINMAX = ("fmin", "fmax")
MATH_FUNCTIONS: dict[str, tuple[str, str]] = {}
for _name in _SPECIAL + _CHEAP + _MINMAX + ("sqrt", "rsqrt", "fma", "fmod", "ldexp"):
    _kind = ("sqrt" if _name in ("sqrt", "rsqrt") else "special" if _name in _SPECIAL
             else "minmax" if _name in _MINMAX else "fma" if _name == "fma"
             else "div" if _name == "fmod" else "add")
    MATH_FUNCTIONS[_name] = (_kind, "double")
    MATH_FUNCTIONS[_name + "f"] = (_kind, "float")
for _name in ("abs", "labs", "llabs", "min", "max"):
    MATH_FUNCTIONS[_name] = ("int", "int")

_MAX_NAMES = {"fmax", "fmaxf", "max"}
_MIN_NAMES = {"fmin", "fminf", "min"}


def text_of(node: c_ast.Node | None) -> str:
    return "" if node is None else _GEN.visit(node)


def loc_of(node: c_ast.Node, fallback: Loc) -> Loc:
    c = getattr(node, "coord", None)
    if c is None or c.line is None:
        return fallback
    return Loc(_unescape(str(c.file)), int(c.line), int(c.column or 0))


def _unescape(name: str) -> str:
    """Line markers quote file names C-style (`"my \\"q\\".c"`); pycparser keeps the escapes."""
    if "\\" not in name:
        return name
    out, i = [], 0
    while i < len(name):
        if name[i] == "\\" and i + 1 < len(name):
            out.append(name[i + 1])
            i += 2
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


# --------------------------------------------------------------------------- scopes

@dataclass
class Scope:
    """Variables visible at a point: name -> (CType, storage kind, declaring Loc)."""
    vars: dict[str, tuple[CType, str, Loc]] = field(default_factory=dict)
    parent: "Scope | None" = None

    def lookup(self, name: str) -> tuple[CType, str, Loc] | None:
        s: Scope | None = self
        while s is not None:
            if name in s.vars:
                return s.vars[name]
            s = s.parent
        return None

    def child(self) -> "Scope":
        return Scope({}, self)


# --------------------------------------------------------------------------- expressions

class NestContext:
    """What lowering one nest needs to know while it walks the loops."""

    def __init__(self, scope: Scope, typedefs: dict[str, CType], functions: dict[str, CType], fallback: Loc):
        self.scope = scope
        self.typedefs = typedefs
        self.functions = functions
        self.fallback = fallback
        self.loop_vars: list[str] = []
        self.loop_ids: list[int] = []
        self.next_lid = 0
        self.written: set[str] = set()          # scalars assigned anywhere in the nest
        self.local_depth: dict[str, int] = {}    # nest-local scalar -> loop depth at its declaration
        self.local_affine: dict[str, Poly] = {}  # nest-local int defined once by an affine expression
        self.flags: list[Flag] = []
        self.arrays_used: dict[str, Loc] = {}
        self.scalars_used: dict[str, Loc] = {}
        self.params: set[str] = set()
        self.sid = 0

    def loc(self, node: c_ast.Node) -> Loc:
        return loc_of(node, self.fallback)

    def flag(self, code: str, message: str, node: c_ast.Node) -> None:
        f = Flag(code, message, self.loc(node))
        if f not in self.flags:
            self.flags.append(f)

    def type_of_name(self, name: str) -> CType | None:
        found = self.scope.lookup(name)
        return found[0] if found else None

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
            if name in self.local_affine:
                return self.local_affine[name], ""
            if name in self.written or name in self.local_depth:
                return None, f"depends on '{name}', which is assigned inside the nest"
            t = self.type_of_name(name)
            if t is None:
                return None, f"unknown identifier '{name}'"
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
                return (a + b if node.op == "+" else a - b if node.op == "-" else a * b), ""
            if node.op == "<<":
                a, ra = self.poly(node.left)
                b, _ = self.poly(node.right)
                if a is not None and b is not None and b.is_const() and 0 <= b.const_value() < 63:
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
                return (-a if a is not None else None), r
            if node.op == "+":
                return self.poly(node.expr)
            return None, f"'{text_of(node)}'"
        if isinstance(node, c_ast.Cast):
            t = decl_type(node.to_type, self.typedefs)
            if t.is_integer:
                return self.poly(node.expr)
            return None, f"cast to {t.base}"
        if isinstance(node, c_ast.ArrayRef):
            return None, f"indirect subscript '{text_of(node)}' (data-dependent)"
        if isinstance(node, c_ast.FuncCall):
            return None, f"call '{text_of(node.name)}' in subscript"
        return None, f"'{text_of(node)}' is not affine"

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
            if name in MATH_FUNCTIONS:
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

    def __init__(self, ctx: NestContext, stmt: c_ast.Node, guards: tuple[Guard, ...]):
        self.ctx = ctx
        self.stmt = stmt
        self.guards = guards
        self.accesses: list[Access] = []
        self.scalar_reads: list[str] = []
        self.scalar_writes: list[str] = []
        self.ops: Counter[str] = Counter()
        self.calls: list[str] = []

    # -- accesses --------------------------------------------------------------
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
            return
        if isinstance(node, c_ast.FuncCall):
            name = text_of(node.name)
            self.calls.append(name)
            if name not in MATH_FUNCTIONS:
                ctx.flag("unknown-call", f"call to '{name}': c2gpu cannot see what it reads or writes", node)
            for arg in (node.args.exprs if node.args else []):
                if isinstance(arg, c_ast.ID) and (t := ctx.type_of_name(arg.name)) and not t.is_scalar:
                    ctx.flag("array-escapes", f"array '{arg.name}' is passed to '{name}'", arg)
                self.visit(arg, "read")
            return
        if isinstance(node, c_ast.StructRef):
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

    def record_access(self, name: str, subs: list[c_ast.Node], node: c_ast.Node, mode: str) -> None:
        ctx = self.ctx
        t = ctx.type_of_name(name)
        loc = ctx.loc(node)
        if t is None:
            ctx.flag("unknown-array", f"'{name}' is not declared", node)
            return
        ctx.arrays_used.setdefault(name, loc)
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
                elem_type=t.base, elem_size=t.elem_size, reason="; ".join(reasons), linearized=linear))

    def record_scalar(self, node: c_ast.ID, mode: str) -> None:
        ctx = self.ctx
        name = node.name
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
            if mode != "read" and t.pointers and not t.dims:
                # p++, p = q: what the pointer reaches changes between iterations, and no access through it
                # can be analysed (the write is not a scalar write the dependence pass would see)
                ctx.flag("pointer-modified", f"pointer '{name}' is assigned inside the nest", node)
            return
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
            if name in MATH_FUNCTIONS:
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
        if isinstance(stmt, c_ast.UnaryOp) and stmt.op in ("++", "--", "p++", "p--") \
                and isinstance(stmt.expr, (c_ast.ID, c_ast.ArrayRef)):
            target, op, rhs_other = stmt.expr, "+", None   # count++ is count += 1
        elif isinstance(stmt, c_ast.Assignment):
            target, op, rhs_other = _reduction_form(stmt, self.guards)
        else:
            return []
        if target is None:
            return []
        ctx = self.ctx
        if isinstance(target, c_ast.ID):
            name = target.name
            if name in ctx.loop_vars or _mentions(rhs_other, name):
                return []
            depth = ctx.local_depth.get(name, 0)
            over = loops[depth:]
            if not over:
                return []
            return [Reduction(name, op, ctx.loc(stmt), tuple(over))]
        base, subs = _array_chain(target)
        if not isinstance(base, c_ast.ID) or _mentions(rhs_other, base.name):
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
        return [Reduction(text_of(target), op, ctx.loc(stmt), over, acc)]


def _mentions(node: c_ast.Node | None, name: str) -> bool:
    if node is None:
        return False
    if isinstance(node, c_ast.ID):
        return node.name == name
    if isinstance(node, c_ast.ArrayRef):
        base, subs = _array_chain(node)
        return _mentions(base, name) or any(_mentions(s, name) for s in subs)
    return any(_mentions(c, name) for _, c in node.children())


def _same(a: c_ast.Node, b: c_ast.Node) -> bool:
    return text_of(a) == text_of(b)


def _reduction_form(stmt: c_ast.Assignment, guards: tuple[Guard, ...]):
    """Match `t op= e`, `t = t op e`, `t = max(t, e)`, `t = t > e ? t : e`, `if (e > t) t = e`.

    Returns (target node, op, the other operand) or (None, None, None).
    """
    lv, rv = stmt.lvalue, stmt.rvalue
    if not isinstance(lv, (c_ast.ID, c_ast.ArrayRef)):
        return None, None, None
    if stmt.op in ("+=", "-=", "*="):
        return lv, "*" if stmt.op == "*=" else "+", rv
    if stmt.op != "=":
        return None, None, None
    if isinstance(rv, c_ast.BinaryOp) and rv.op in ("+", "*", "-"):
        if _same(rv.left, lv):
            return lv, "*" if rv.op == "*" else "+", rv.right
        if _same(rv.right, lv) and rv.op != "-":
            return lv, rv.op, rv.left
    if isinstance(rv, c_ast.FuncCall) and rv.args and len(rv.args.exprs) == 2:
        name = text_of(rv.name)
        a, b = rv.args.exprs
        if name in _MAX_NAMES | _MIN_NAMES:
            op = "max" if name in _MAX_NAMES else "min"
            if _same(a, lv):
                return lv, op, b
            if _same(b, lv):
                return lv, op, a
    if isinstance(rv, c_ast.TernaryOp) and isinstance(rv.cond, c_ast.BinaryOp) and rv.cond.op in ("<", "<=", ">", ">="):
        c = rv.cond
        if {text_of(c.left), text_of(c.right)} == {text_of(rv.iftrue), text_of(rv.iffalse)} and text_of(lv) in (text_of(c.left), text_of(c.right)):
            # (l > r) ? l : r is max(l, r)
            picks_larger = (c.op in (">", ">=")) == _same(rv.iftrue, c.left)
            other = c.right if _same(c.left, lv) else c.left
            return lv, "max" if picks_larger else "min", other
    if guards and guards[-1].constraints is None and not guards[-1].negated:
        cond = guards[-1].ast
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">="):
            # if (e > t) t = e;  -> max ;  if (e < t) t = e;  -> min
            if _same(cond.left, rv) and _same(cond.right, lv):
                return lv, "max" if cond.op in (">", ">=") else "min", rv
            if _same(cond.right, rv) and _same(cond.left, lv):
                return lv, "max" if cond.op in ("<", "<=") else "min", rv
    return None, None, None


# --------------------------------------------------------------------------- guards

def guard_of(ctx: NestContext, cond: c_ast.Node, negated: bool) -> Guard:
    cons = _constraints(ctx, cond)
    if negated and cons is not None:
        # not (e >= 0) is -e - 1 >= 0; a negated conjunction of several is a disjunction
        cons = (Constraint(-cons[0].expr - 1),) if len(cons) == 1 and cons[0].kind == "ge" else None
    return Guard(("!(" + text_of(cond) + ")") if negated else text_of(cond), cons, ctx.loc(cond), negated, ast=cond)


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
        d = a - b
        return ({"<": (Constraint(-d - 1),), "<=": (Constraint(-d),), ">": (Constraint(d - 1),),
                 ">=": (Constraint(d),), "==": (Constraint(d, "eq"),)})[cond.op]
    return None


# --------------------------------------------------------------------------- loops

@dataclass
class Header:
    var: str | None = None
    lower: Poly | None = None
    upper: Poly | None = None
    step: int | None = None
    problem: str = ""


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
    b, why = ctx.poly(bound)
    if b is None:
        h.problem = h.problem or f"bound '{text_of(bound)}': {why}"
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
    """a[i*W + j] on a pointer -> (i, j) when j provably stays in [0, W).

    W may be a parameter (then the subscript has degree 2 and is not affine as
    written) or a constant.  We accept the common, provable shape: the inner
    part is one loop variable whose loop runs within [0, W).
    """
    if len(polys) != 1 or polys[0] is None or t.dims or t.pointers != 1:
        return None
    p = polys[0]
    for var in ctx.loop_vars[::-1]:
        if p.coeff(var) != 1:
            continue
        rest = p - Poly.var(var)
        offset = rest.const_value()
        width = _common_factor(rest - offset, set(ctx.loop_vars))
        if width is None:
            continue
        if width.is_const():
            # a constant offset may fold a row step: 4096*i + 4095 + j is row i+1, column j-1
            w = int(width.const_value())
            c = int(offset) % w
            c = c - w if c > w // 2 else c
        else:
            c = int(offset)
        rng = ctx.loop_ranges.get(var)
        if rng is None or rng[0] is None or rng[1] is None:
            continue
        lo, hi = rng
        # the column var + c must stay in [0, width): lo + c >= 0 and hi + c <= width
        if lo.is_const() and lo.const_value() + c >= 0 and _leq(hi + c, width):
            q = _divide(rest - c, width)
            if q is not None and q.is_affine():
                return (q, Poly.var(var) + c)
    return None


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
        stack = [(node, depth)]
        while stack:
            n, d = stack.pop()
            if isinstance(n, c_ast.Assignment):
                tgt = n.lvalue
                if isinstance(tgt, c_ast.ID):
                    ctx.written.add(tgt.name)
            elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and isinstance(n.expr, c_ast.ID):
                ctx.written.add(n.expr.name)
            elif isinstance(n, c_ast.Decl) and not isinstance(n.type, c_ast.FuncDecl):
                ctx.local_depth.setdefault(n.name, d)
            if isinstance(n, c_ast.For):
                # loop variables of nested loops are not "written scalars"
                for _, c in n.children():
                    stack.append((c, d + 1))
                continue
            for _, c in n.children():
                stack.append((c, d))

    def lower_loop(self, node: c_ast.For, guards: tuple[Guard, ...], scope: Scope) -> Loop:
        ctx = self.ctx
        h = parse_header(ctx, node)
        loc = ctx.loc(node)
        flags: list[Flag] = []
        var = h.var or f"?{loc.line}"
        if h.problem:
            flags.append(Flag("non-affine-bound", f"loop '{var}': {h.problem}", loc))
        trip = None
        if h.lower is not None and h.upper is not None and h.step:
            if not (h.lower.is_affine() and h.upper.is_affine()):
                flags.append(Flag("non-affine-bound", f"loop '{var}': bounds are not affine", loc))
            trip = trip_count(h.lower, h.upper, h.step)
        inner_scope = scope.child()
        if isinstance(node.init, c_ast.DeclList):
            d = node.init.decls[0]
            inner_scope.vars[d.name] = (decl_type(d, ctx.typedefs), "local", ctx.loc(d))
        lo = h.lower if (h.step or 0) > 0 else (h.upper + 1 if h.upper is not None else None)
        hi = h.upper if (h.step or 0) > 0 else (h.lower + 1 if h.lower is not None else None)
        ctx.loop_ranges[var] = (lo, hi)
        lid = ctx.next_lid
        ctx.next_lid += 1
        ctx.loop_vars.append(var)
        ctx.loop_ids.append(lid)
        saved_scope, ctx.scope = ctx.scope, inner_scope
        try:
            body = self.lower_body(node.stmt, guards, inner_scope)
        finally:
            ctx.scope = saved_scope
            ctx.loop_vars.pop()
            ctx.loop_ids.pop()
        header = f"for ({text_of(node.init)}; {text_of(node.cond)}; {text_of(node.next)})"
        in_header = isinstance(node.init, c_ast.DeclList)
        declared = inner_scope.lookup(var)
        c_type = declared[0].base if declared is not None and declared[0].is_scalar else "int"
        return Loop(lid=lid, var=var, lower=h.lower, upper=h.upper, step=h.step or 0, trip_count=trip, loc=loc,
                    end_loc=None, header=header, body=tuple(body), guards=guards, flags=tuple(flags),
                    c_type=c_type, declared_in_header=in_header, ast=node)

    def lower_body(self, node: c_ast.Node | None, guards: tuple[Guard, ...], scope: Scope) -> list:
        ctx = self.ctx
        out: list = []
        if node is None:
            return out
        if isinstance(node, c_ast.Compound):
            inner = scope.child()
            saved, ctx.scope = ctx.scope, inner
            try:
                for item in node.block_items or []:
                    out.extend(self.lower_body(item, guards, inner))
            finally:
                ctx.scope = saved
            return out
        if isinstance(node, c_ast.For):
            return [self.lower_loop(node, guards, scope)]
        if isinstance(node, c_ast.If):
            g = guard_of(ctx, node.cond, False)
            pre = StatementBuilder(ctx, node.cond, guards)
            pre.visit(node.cond)
            pre.count(node.cond)
            if pre.accesses or (pre.scalar_reads and g.constraints is None):
                # reads in the condition are work of the iteration: keep them as a statement
                out.append(self.make_statement(node.cond, guards, pre, text=f"if ({text_of(node.cond)})"))
            out.extend(self.lower_body(node.iftrue, guards + (g,), scope))
            if node.iffalse is not None:
                out.extend(self.lower_body(node.iffalse, guards + (guard_of(ctx, node.cond, True),), scope))
            return out
        if isinstance(node, (c_ast.Assignment, c_ast.UnaryOp, c_ast.FuncCall, c_ast.ExprList, c_ast.Decl)):
            if isinstance(node, c_ast.Decl):
                t = decl_type(node, ctx.typedefs)
                scope.vars[node.name] = (t, "local", ctx.loc(node))
                if node.name in ctx.loop_vars:
                    # `{ int i = 3; a[i] = ...; }` in a loop over i: the subscripts below name the new i
                    ctx.flag("shadows-loop-variable", f"'{node.name}' declared inside the nest hides the loop "
                                                      "variable of the same name", node)
                if {"static", "extern"} & set(node.storage or ()):
                    # not a per-iteration temporary: one variable that every iteration shares
                    ctx.flag("static-local", f"'{node.name}' is declared {' '.join(node.storage)} inside the nest: "
                                             "one variable shared by every iteration", node)
                if not t.is_scalar:
                    ctx.flag("local-array", f"array '{node.name}' is declared inside the nest", node)
                if node.init is None:
                    return out
                if t.is_integer:
                    p, _ = ctx.poly(node.init)
                    if p is not None and p.is_affine() and node.name not in ctx.written:
                        ctx.local_affine[node.name] = p
            b = StatementBuilder(ctx, node, guards)
            if isinstance(node, c_ast.Decl):
                b.visit(node.init)
                b.scalar_writes.append(node.name)
                ctx.scalars_used.setdefault(node.name, ctx.loc(node))
            else:
                b.visit(node)
            b.count(node)
            return [self.make_statement(node, guards, b)]
        if isinstance(node, c_ast.EmptyStatement) or isinstance(node, c_ast.Pragma):
            return out
        kind = type(node).__name__
        what = {"While": "while loop", "DoWhile": "do-while loop", "Break": "break", "Continue": "continue",
                "Return": "return", "Goto": "goto", "Label": "label", "Switch": "switch"}.get(kind, kind)
        ctx.flag("unsupported-statement", f"{what} inside the nest: its control flow cannot be analysed", node)
        # still account for what it touches, so dependence analysis cannot miss it
        b = StatementBuilder(ctx, node, guards)
        b.visit(node)
        if b.accesses or b.scalar_writes or b.calls:
            out.append(self.make_statement(node, guards, b, text=f"{what} at line {ctx.loc(node).line}"))
        return out

    def make_statement(self, node, guards, b: StatementBuilder, text: str | None = None) -> Statement:
        ctx = self.ctx
        ctx.sid += 1
        loops = tuple(ctx.loop_vars)
        ops = tuple(sorted((k, v) for k, v in b.ops.items() if v))
        decl = node.name if isinstance(node, c_ast.Decl) else None
        return Statement(sid=ctx.sid, text=text or text_of(node).strip(), loc=ctx.loc(node), loops=loops,
                         loop_ids=tuple(ctx.loop_ids),
                         guards=guards, accesses=tuple(b.accesses), scalar_reads=tuple(dict.fromkeys(b.scalar_reads)),
                         scalar_writes=tuple(dict.fromkeys(b.scalar_writes)), ops=ops,
                         reductions=tuple(b.reductions(loops)), calls=tuple(dict.fromkeys(b.calls)), decl=decl, ast=node)


# --------------------------------------------------------------------------- discovery

@dataclass
class Candidate:
    node: c_ast.For
    scope: Scope
    region: str
    outer: str = ""   # "while" when the for sits inside a while loop


class FileLowerer:
    def __init__(self, ast: c_ast.FileAST, path: str):
        self.ast = ast
        self.path = path
        self.typedefs: dict[str, CType] = {}
        self.functions: dict[str, CType] = {}
        self.globals = Scope()
        self.notes: list[Flag] = []
        self.has_scop = False
        self.has_port_marker = False

    def run(self) -> list[Nest]:
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.Typedef):
                self.typedefs[ext.name] = decl_type(ext.type, self.typedefs)
        self.scan_pragmas(self.ast)
        nests: list[Nest] = []
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.Typedef):
                continue
            if isinstance(ext, c_ast.Decl):
                if isinstance(ext.type, c_ast.FuncDecl):
                    self.functions[ext.name] = decl_type(ext.type.type, self.typedefs)
                elif ext.name:
                    self.globals.vars[ext.name] = (decl_type(ext, self.typedefs), "global", loc_of(ext, Loc(self.path, 0)))
            elif isinstance(ext, c_ast.FuncDef):
                self.functions[ext.decl.name] = decl_type(ext.decl.type.type, self.typedefs)
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
                scope.vars[p.name] = (t, storage, loc_of(p, Loc(self.path, 0)))
        cands: list[Candidate] = []
        self.find(fn.body, scope, cands, state={"scop": False, "marker": None}, outer="")
        nests = []
        for index, cand in enumerate(cands, 1):
            try:
                nests.append(self.lower_nest(fn.decl.name, cand))
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
                if isinstance(item, c_ast.Decl):
                    inner.vars[item.name] = (decl_type(item, self.typedefs), "local", loc_of(item, Loc(self.path, 0)))
                self.find(item, inner, out, state, outer)
                state["marker"] = None
            return
        if isinstance(node, c_ast.For):
            marker = state.get("marker")
            loc = loc_of(node, Loc(self.path, 0))
            if marker and marker[0] == "skip":
                self.notes.append(Flag("skipped", f"nest at line {loc.line} skipped by '#pragma c2gpu skip'", loc))
            elif self.has_port_marker and not (marker and marker[0] == "port"):
                self.notes.append(Flag("skipped", f"nest at line {loc.line} not marked '#pragma c2gpu port'", loc))
            elif self.has_scop and not state["scop"] and not (marker and marker[0] == "port"):
                self.notes.append(Flag("skipped", f"nest at line {loc.line} is outside '#pragma scop' regions", loc))
            else:
                region = "pragma" if marker else "scop" if state["scop"] else "auto"
                out.append(Candidate(node, scope, region, outer))
            return
        if isinstance(node, c_ast.If):
            self.find(node.iftrue, scope, out, state, outer)
            self.find(node.iffalse, scope, out, state, outer)
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            self.find(node.stmt, scope, out, state, "while")
        elif isinstance(node, (c_ast.Switch, c_ast.Case, c_ast.Default, c_ast.Label)):
            for _, c in node.children():
                self.find(c, scope, out, state, outer)

    def lower_nest(self, function: str, cand: Candidate) -> Nest:
        loc = loc_of(cand.node, Loc(self.path, 0))
        ctx = NestContext(cand.scope, self.typedefs, self.functions, loc)
        lowerer = NestLowerer(ctx)
        lowerer.prepass(cand.node)
        root = lowerer.lower_loop(cand.node, (), cand.scope)
        stmts = list(root.statements())
        arrays = []
        for name in sorted(ctx.arrays_used):
            t, storage, dloc = cand.scope.lookup(name) or (None, "?", loc)
            if t is None:
                continue
            dims: list[Poly | None] = []
            for d in t.dims:
                if d is None:
                    dims.append(None)
                    continue
                saved = set(ctx.params)
                p, _ = ctx.poly(d)
                ctx.params = saved | (p.variables if p is not None else set())
                dims.append(p)
            dims = [None] * t.pointers + dims
            arrays.append(ArrayInfo(name, t.base, t.elem_size, tuple(dims), storage if storage != "local" else "local",
                                    t.restrict, t.const, dloc))
        red_targets = {r.target for s in stmts for r in s.reductions}
        scalars = []
        for name in sorted(ctx.scalars_used):
            found = cand.scope.lookup(name)
            t = found[0] if found else None
            writers = [s for s in stmts if name in s.scalar_writes]
            if name in ctx.local_depth:
                role = "local"
            elif not writers:
                role = "invariant"
            elif name in red_targets and all(any(r.target == name for r in s.reductions) for s in writers):
                role = "reduction"
            else:
                role = "written"
            ctype = t.base if t else _local_type(root, name)
            scalars.append(ScalarInfo(name, ctype, role, ctx.scalars_used[name]))
        for name in sorted(ctx.params - set(ctx.scalars_used)):
            found = cand.scope.lookup(name)
            if found is not None and found[0].is_scalar:
                # symbolic sizes used only in bounds or subscripts are invariant scalars of the nest too
                scalars.append(ScalarInfo(name, found[0].base, "invariant", found[2]))
        scalars.sort(key=lambda s: s.name)
        flags = list(ctx.flags)
        if cand.outer == "while":
            flags.append(Flag("inside-while", "this nest sits inside a while loop, so it runs an unknown number of times", loc))
        loop_vars = {lp.var for lp in root.loops()}
        params = sorted(ctx.params - loop_vars)
        return Nest(name=f"{function}@{loc.line}", function=function, loc=loc, end_loc=None, root=root,
                    arrays=tuple(arrays), scalars=tuple(scalars), params=tuple(params), flags=tuple(flags),
                    region=cand.region)


def _local_type(root: Loop, name: str) -> str:
    for s in root.statements():
        if s.decl == name and isinstance(s.ast, c_ast.Decl):
            return decl_type(s.ast, {}).base
    return "?"


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


def lower_program(ast: c_ast.FileAST, path: str, options=None, original_source: str | None = None) -> Program:
    fl = FileLowerer(ast, path)
    nests = fl.run()
    defines = tuple(options.defines) if options is not None else ()
    return Program(path=path, nests=tuple(nests), diagnostics=tuple(fl.notes), defines=defines, ast=ast)
