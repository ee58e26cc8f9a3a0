"""Nest lowering: `NestLowerer` walks one candidate nest's loops, blocks, `if`s and `switch`es and builds its
`Loop` tree, each statement built by StatementBuilder.

Separate from lower.py, which finds the nests in a file and prepares them (inlining, inductions, aliases)
before they are lowered here.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ..ir import Access, Flag, Guard, Loc, Loop, loop_words, Span, Statement
from ..symbolic import Poly
from .ctypes import SIZES, CType, decl_type
from .context import NestContext, Scope, Var
from .syntax import _array_chain, _assigned_name, _walk, has_side_effect, text_of
from .initializers import MAX_ELEMENTS
from .guards import _constraints, guard_of
from .loops import Header, _jumps_out, _loop_conversion, _tightest, _uncountable, loop_counter, parse_header, trip_count
from .reductions import _mentions
from .statements import StatementBuilder


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
    if node.init is not None:       # (one frontend/initializers.py could not read as assignments)
        return (f": its initializer is not analysed (c2gpu reads one as the assignment of each element for at most "
                f"{MAX_ELEMENTS} elements, from a brace list of values without side effects)"), ()
    if ir != node.name:
        return ": another variable of the nest has its name", ()
    dims = tuple(ctx.poly(d)[0] if d is not None else None for d in t.dims)
    if any(p is None or not p.is_const() for p in dims):
        return ": its extents are not constants", ()
    return "", tuple(Poly.const(int(p.const_value())) for p in dims)


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

    def lower_loop(self, node: c_ast.For, guards: tuple[Guard, ...], scope: Scope, pragmas: tuple[str, ...] = (),
                   pragma_spans: tuple[Span, ...] = ()) -> Loop:
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
                    c_type=c_type, declared_in_header=in_header, perfect=perfect, pragmas=pragmas, pragma_spans=pragma_spans,
                    declared=tuple(dict.fromkeys(ctx.loop_decls.pop(lid, ()))),
                    header_stmt=header_stmt, syntax=ctx.trees(node), lower_pieces=h.lower_pieces,
                    upper_pieces=h.upper_pieces)

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
            spans: list[Span] = []
            try:
                for item in node.block_items or []:
                    if isinstance(item, c_ast.Pragma):
                        pragmas.append(item.string.strip())
                        spans.append(ctx.directive_span(ctx.loc(item)))
                        continue
                    if isinstance(item, c_ast.For):
                        out.extend(self.lower_for(item, guards, inner, tuple(pragmas), tuple(spans)))
                    else:
                        out.extend(self.lower_body(item, guards, inner))
                    pragmas, spans = [], []
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
                out.extend(self.lower_body(node.iffalse, guards + (guard_of(ctx, node.cond, True, sid, g.site),),
                                           scope))
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
        if isinstance(node, (c_ast.While, c_ast.DoWhile)) and (whole := self.runs_whole(node, guards, scope, "")):
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

    def lower_for(self, node: c_ast.For, guards: tuple[Guard, ...], scope: Scope, pragmas: tuple[str, ...] = (),
                  pragma_spans: tuple[Span, ...] = ()) -> list:
        """An inner `for` as a loop of the nest, or, when its iterations cannot be modelled (bounds read from
        memory, a `break` of its own), as one statement that each iteration of the loops around it runs whole."""
        if self.ctx.loop_ids and (why := _uncountable(self.ctx, node)) \
                and (whole := self.runs_whole(node, guards, scope, why)):
            return whole
        return [self.lower_loop(node, guards, scope, pragmas, pragma_spans)]

    def runs_whole(self, node: c_ast.Node, guards: tuple[Guard, ...], scope: Scope, why: str) -> list | None:
        """A loop inside the nest that c2gpu does not count (`for (k = rowstr[j]; k < rowstr[j+1]; k++)`, a `while`
        or `do`), as one statement of the loop around it, or None when it cannot be one.

        Each iteration of the enclosing loops runs it whole, in order, as C does: only the loops around it may be
        mapped to threads.  Its accesses are what it may touch in any number of its own iterations: a subscript
        that reads a variable it assigns (its counter) is data-dependent, so the dependence pass treats the
        access as touching any element (sound: an array it writes that way keeps the loops around it
        sequential).  It may not leave itself (no `return`, `goto`, nor a `break` or `continue` of an enclosing
        loop), and the variables it declares must be new scalars (each iteration of the loops around it has its
        own).  `why`: why c2gpu does not count it, for the note."""
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
        if isinstance(node, c_ast.For) and (var := loop_counter(node)):
            ctx.uncounted.setdefault(var, ctx.loc(node).line)
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
                 f"({why + '; ' if why else ''}its iterations are not counted: the estimates count one per run of "
                 "it)", node)
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
                         kind=kind, assign_op=node.op if isinstance(node, c_ast.Assignment) else None,
                         syntax=ctx.trees(node),
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
