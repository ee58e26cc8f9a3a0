"""A `for` loop's header: its variable, bounds (a min or max of pieces included), step and trip count, whether it
is countable at all, and the C conversion its variable goes through.

Separate from nest lowering: it reads the header only, never the body's statements.
"""
from __future__ import annotations

from pycparser import c_ast

from ..symbolic import Poly, Sym
from .ctypes import INT_RANGES, decl_type, int_result, is_unsigned, promote
from ..records import dataclass
from .context import NestContext
from .syntax import _same, nodes, text_of


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


def _memory_why(bound: c_ast.Node, why: str) -> str:
    """Why a start or bound that reads memory or calls a function is no count c2gpu knows, else `why` (the
    polynomial's own reason: a modulo, a product with a non-integer, ...).  The frontend has already made a
    variable of every element read at a fixed place that the nest never writes (fields.invariant_elements):
    what is left changes with the iterations, or the nest may change it."""
    for n in nodes(bound):
        if isinstance(n, c_ast.FuncCall):
            return f"it calls '{text_of(n.name)}' each time the loop tests it (c2gpu counts loops whose bounds " \
                   "are sizes, not results of calls)"
        if isinstance(n, (c_ast.ArrayRef, c_ast.StructRef)) or isinstance(n, c_ast.UnaryOp) and n.op == "*":
            return f"it reads '{text_of(n)}' from memory (c2gpu counts loops whose bounds read only elements at " \
                   "fixed places that the nest never writes)"
    return why


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
        h.problem = f"start '{text_of(init_expr)}': {_memory_why(init_expr, why)}"
    # step
    nxt = node.next
    step = None
    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++", "--", "p--") and is_id(nxt.expr, h.var):
        step = 1 if "++" in nxt.op else -1
    elif isinstance(nxt, c_ast.Assignment) and is_id(nxt.lvalue, h.var):
        if nxt.op in ("+=", "-="):
            p, _ = ctx.poly(nxt.rvalue)
            if p is not None and p.is_const():
                step = int(p.const_value()) * (1 if nxt.op == "+=" else -1)
        elif nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op in ("+", "-") \
                and is_id(nxt.rvalue.left, h.var):
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
            h.problem = f"start '{text_of(init_expr)}': {_memory_why(init_expr, why)}"
    # condition
    cond = node.cond
    if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
        return _conjunction(ctx, h, cond)
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=", "!=")):
        h.problem = h.problem or f"condition '{text_of(cond)}' is not a comparison of '{h.var}' with a bound"
        return h
    op, bound = cond.op, cond.right
    if not is_id(cond.left, h.var):
        if is_id(cond.right, h.var):
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
            h.problem = h.problem or f"bound '{text_of(bound)}': {_memory_why(bound, why)}"
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


def _conjunction(ctx: NestContext, h: Header, cond: c_ast.BinaryOp) -> Header:
    """A condition that is a conjunction of bounds on the variable (hand-tiled code's `ii < i + T && ii < n`):
    the loop ends at the first bound it reaches, the min of the ends (counting down, the max), as if written
    `ii < min(i + T, n)`.  Each conjunct compares the variable with a bound (a polynomial, or a min or max
    written as `?:`); the comparisons have no side effects, so evaluating all of them changes nothing."""
    conjuncts, todo = [], [cond]
    while todo:
        c = todo.pop(0)
        if isinstance(c, c_ast.BinaryOp) and c.op == "&&":
            todo[:0] = [c.left, c.right]
        else:
            conjuncts.append(c)
    pieces: dict[Poly, c_ast.Node] = {}
    for c in conjuncts:
        if not (isinstance(c, c_ast.BinaryOp) and c.op in ("<", "<=", ">", ">=")):
            h.problem = h.problem or f"condition '{text_of(cond)}': '{text_of(c)}' is not a comparison of " \
                                     f"'{h.var}' with a bound"
            return h
        op, bound = c.op, c.right
        if not is_id(c.left, h.var):
            if not is_id(c.right, h.var):
                h.problem = h.problem or f"condition '{text_of(cond)}': '{text_of(c)}' does not compare " \
                                         f"'{h.var}' with a bound"
                return h
            op, bound = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op], c.left
        kind = "min" if h.step > 0 and op in ("<", "<=") else "max" if h.step < 0 and op in (">", ">=") else None
        if kind is None:
            h.problem = h.problem or f"condition '{text_of(c)}' does not bound a loop stepping by {h.step}"
            return h
        b, why = ctx.poly(bound)
        got = [(b, bound)] if b is not None else []
        if b is None and _is_conditional(bound):
            got, _, why = _minmax_pieces(ctx, bound, kind)
        if not got:
            h.problem = h.problem or f"bound '{text_of(bound)}': {_memory_why(bound, why)}"
            return h
        shift = {"<": 0, "<=": 1, ">": 0, ">=": -1}[op]     # to the exclusive end
        for p, n in got:
            pieces.setdefault(p + shift, n)
    h.upper_pieces, h.piece_bounds = tuple(pieces), tuple(pieces.values())
    h.bound = h.piece_bounds[0]
    if len(pieces) == 1:
        h.upper, h.upper_pieces, h.piece_bounds = h.upper_pieces[0], (), ()
    return h


def loop_counter(node: c_ast.For) -> str | None:
    """The variable a `for` initialises (`i = 0`, `int i = 0`), or None."""
    init = node.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        return init.decls[0].name
    if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        return init.lvalue.name
    return None


def _uncountable(ctx: NestContext, node: c_ast.For) -> str:
    """Why a `for` is no loop the analyses can count ("" when it is one): its header is not `var = start; var <
    end; var += step` with start and end polynomials of loop variables and parameters (they read memory, or a
    variable the nest assigns), or a `break` or `continue` of its own ends it or an iteration early.  (A
    polynomial that is not affine, `j < i * i`, keeps the loop: its inner loops can still be judged.)"""
    jumps = _jumps_out(node.stmt)          # (the loop's body: its own break and continue leave it)
    if jumps:
        return f"a {' or '.join(sorted(jumps))} of its own may end it early"
    saved = set(ctx.params)
    try:
        h = parse_header(ctx, node)
    finally:
        ctx.params = saved
    return h.problem


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


def is_id(node: c_ast.Node | None, name: str | None) -> bool:
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
