"""Statement lowering: `StatementBuilder` turns one C statement inside a nest into an IR `Statement`, with its
guards, array accesses, scalars, reduction candidates and operation counts.

Separate from nest lowering, which walks the loops and hands each statement here.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import field, replace

from pycparser import c_ast

from ..ir import Access, Guard, Reduction
from ..symbolic import Poly
from .libc import MATH_FUNCTIONS
from .ctypes import FLOAT_TYPES, arith_result, decl_type
from .context import NestContext, _one_scalar_type
from .syntax import _array_chain, text_of
from .guards import guard_of
from .delinearization import delinearize, unsplit_column
from .reductions import _associative, _mentions, _mentions_besides_elements, _order_fields, _reduction_form


def _prec(t: str) -> str:
    return "fp64" if t in ("double", "long double") else "fp32"


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
    def under(self, cond: c_ast.Node, holds: bool, node: c_ast.Node, mode: str = "read",
              site: int | None = None) -> int:
        """Visit `node`, which is evaluated only where `cond` holds (or does not); `site`: the Guard.site of the
        other branch of the same conditional.  Returns the site of the guard."""
        g = guard_of(self.ctx, cond, False, site=site)
        self.when.append((g, holds))
        try:
            self.visit(node, mode)
        finally:
            self.when.pop()
        return g.site

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
            site = self.under(node.cond, True, node.iftrue)
            self.under(node.cond, False, node.iffalse, site=site)
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
        products: list[tuple[int, Poly]] = []      # (its reason, the subscript) of each product of variables
        for s in subs:
            p, why = ctx.poly(s)
            polys.append(p)
            if p is None:
                reasons.append(why)
            elif not p.is_affine():
                products.append((len(reasons), p))
                reasons.append(f"subscript '{text_of(s)}' is not affine (product of variables)")
        rank = len(t.dims) + t.pointers
        if len(subs) < rank:
            reasons.append(f"'{text_of(node)}' uses {len(subs)} of {rank} subscripts")
        if t.pointer_rows and len(subs) > 1 and not ctx.rows_distinct(t.base):
            # int *rows[N] / float **a: every row is a pointer of its own, and two rows may point to the same memory
            reasons.append(f"the rows of '{name}' are pointers, which may point to the same memory")
        text = text_of(node)
        linear = delinearize(polys, t, ctx) if len(products) == len(reasons) else None
        if linear is not None and len(subs) == 1:
            reasons = []            # i*n + j with n a parameter: affine once recovered as [i][j]
        elif linear is None:
            for k, poly in products:
                if why := unsplit_column(poly, ctx):
                    reasons[k] += f"; {why}"
        if reasons:
            ctx.flag("non-affine-subscript", f"'{text}': {reasons[0]}", node)
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
            return [Reduction(ir, op, ctx.loc(stmt), tuple(over), guard=via_guard,
                              **_order_fields(order, ctx.trees))]
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
        return [Reduction(text_of(target), op, ctx.loc(stmt), over, acc, **_order_fields(order, ctx.trees))]
