"""isl's scheduler: the statements of a nest in a new loop order that puts parallel loops outermost.

PolyBench's lu is written row by row (`for i { for j < i { for k < j ... } for j >= i { for k < i ... } }`):
the only parallelism is inside a row, behind a sequential triangular solve.  The order a CUDA programmer
writes, right-looking LU (`for k { scale column k; update the rest }`), is the same computation with its
statement instances reordered.  PPCG finds it with isl's scheduler; so does c2gpu here:

1. every statement instance, its accesses and its place in the original order as isl sets and maps; the
   memory-based dependences (flow, anti, output) between the instances, exact for affine accesses;
2. isl's scheduler (its own algorithm, not Feautrier's, with outer coincidence: the options PPCG uses to look
   for parallel loops first) computes a schedule that respects every dependence (validity) and prefers
   loops that carry none (coincidence) and short reuse distances (proximity);
3. isl's code generator builds the new loops; each statement runs where isl puts it, with its loop
   variables computed from the new ones, as a syntax tree (built node by node, transform/syntax.py); the
   frontend describes that tree, and the dependence analysis proves on it which loops are parallel, as for
   any nest.

Only nests whose every dependence is known qualify: affine accesses and bounds, no aliasing doubt, call,
guard, scalar written, or loop variable read after the nest.  The port is checked against the original C
like any other (tests/test_schedule.py, the PolyBench corpus).
"""
from __future__ import annotations

import os
import re
import select
import time
from dataclasses import replace

import islpy as isl

from ..analysis import isl_sets as ph
from ..ir import Loop, Nest, Statement
from ..frontend.libc import MATH_FUNCTIONS
from .normalize import normalize_nest
from ..symbolic import Poly
from ..syntax_tree import Assign, Binary, Block, Const, Decls, For, If, Name, Placeholder, Unary, rebuilt, walk
from .syntax import declaration, integer, isl_expr, placed

MAX_STATEMENTS = 12
SCHEDULE_SECONDS = 10.0    # isl finds lu's order in milliseconds; past this, the order as written is kept
KNOWN = ("flow", "anti", "output", "reduction")       # reasons a loop is sequential that the scheduler sees
ITERATOR = "c2gpu_c"


def qualifies(nest: Nest, deps) -> bool:
    stmts = nest.statements()
    if nest.all_flags() or not stmts or len(stmts) > MAX_STATEMENTS:
        return False
    if len(stmts) == 1 and len(nest.loops()) == 1:
        return False        # one statement in one loop that carries a dependence: no order has a parallel loop
    if any(r.kind not in KNOWN for v in deps.verdicts.values() for r in v.reasons):
        return False
    loops = nest.loops()
    if any(not lp.normalized or lp.trip_count is None or lp.lower_pieces or lp.upper_pieces or lp.guards
           or lp.header_stmt is not None or lp.syntax is None for lp in loops):
        return False
    pure = {f.name for f in nest.functions} | set(MATH_FUNCTIONS)      # calls without side effects
    if any(s.guards or s.decl or s.scalar_writes or s.kind != "assign" or s.syntax is None or set(s.calls) - pure
           or any(not a.affine or any(p is None for p in a.subscripts) for a in s.accesses) for s in stmts):
        return False
    names = {lp.source_var for lp in loops}
    if names & set(nest.live_after) or any(ITERATOR in n or re.fullmatch(r"c\d+", n) for n in names | set(nest.params)):
        return False
    # a statement after a loop may read the value its variable was left with: the new order computes each
    # statement's own loop variables only
    for s in stmts:
        own = {lp.source_var for lp in ph.loop_path(nest, s)}
        if any(isinstance(n, Name) and n.name in names - own for n in walk(s.syntax)):
            return False
    return True


def _positions(nest: Nest) -> dict[int, list]:
    """Each statement's place in the original order: [position, loop, position, loop, ..., position]."""
    out: dict[int, list] = {}

    def walk(lp: Loop, prefix: list) -> None:
        for pos, node in enumerate(lp.body):
            if isinstance(node, Loop):
                walk(node, prefix + [pos, ph.dim(node.lid)])
            else:
                out[node.sid] = prefix + [pos]
    walk(nest.root, [0, ph.dim(nest.root.lid)])
    width = max(len(v) for v in out.values())
    return {sid: v + [0] * (width - len(v)) for sid, v in out.items()}


def instances(nest: Nest) -> tuple[isl.UnionSet, isl.UnionMap, isl.UnionMap, dict[int, Statement]]:
    """The nest's statement instances as isl objects: their domain (S<sid>[loops]), the original order
    (a schedule), the memory-based dependences between them (flow, anti and output: pairs of instances that
    touch one element, one of them writing, in their original order) and the statements by sid."""
    params = ", ".join(nest.params)
    stmts = {s.sid: s for s in nest.statements()}
    order = _positions(nest)
    domains, sched, reads, writes = [], [], [], []
    for sid, s in stmts.items():
        dom, names = ph.statement_domain(nest, s)
        dims = [names[lp.var] for lp in ph.loop_path(nest, s)]
        cons = ph.domain_constraints(ph.loop_path(nest, s), names, s.guards)
        inst = f"S{sid}[{', '.join(dims)}]"
        domains.append(f"{inst} : {' and '.join(cons) or 'true'}")
        sched.append(f"{inst} -> [{', '.join(str(x) for x in order[sid])}]")
        for a in s.accesses:
            subs = ", ".join(ph.poly_to_isl(p, names) for p in a.subscripts)
            (writes if a.kind == "write" else reads).append(f"{inst} -> {a.array}[{subs}]")
    domain = isl.UnionSet(f"[{params}] -> {{ {'; '.join(domains)} }}")
    original = isl.UnionMap(f"[{params}] -> {{ {'; '.join(sched)} }}").intersect_domain(domain)
    R = isl.UnionMap(f"[{params}] -> {{ {'; '.join(reads)} }}").intersect_domain(domain) if reads else \
        isl.UnionMap.empty(domain.get_space())
    W = isl.UnionMap(f"[{params}] -> {{ {'; '.join(writes)} }}").intersect_domain(domain)
    before = original.lex_lt_union_map(original)
    validity = (W.apply_range(R.reverse()).union(R.apply_range(W.reverse())).union(W.apply_range(W.reverse()))
                ).intersect(before)
    return domain, original, validity, stmts


def keeps_order(schedule: isl.UnionMap, validity: isl.UnionMap) -> bool:
    """Whether a new order runs the source of every dependence before its target."""
    return validity.is_subset(schedule.lex_lt_union_map(schedule))


def _isl_schedule(nest: Nest) -> tuple[isl.Schedule, dict[int, Statement]] | None:
    domain, _original, validity, stmts = instances(nest)
    ctx = domain.get_ctx()
    saved = (ctx.get_schedule_outer_coincidence(), ctx.get_schedule_maximize_coincidence(),
             ctx.get_schedule_whole_component(), ctx.get_schedule_algorithm())
    try:
        # PPCG's choice: look for coincident (parallel) loops from the outside in, component by component
        ctx.set_schedule_outer_coincidence(1)
        ctx.set_schedule_maximize_coincidence(1)
        ctx.set_schedule_whole_component(0)
        ctx.set_schedule_algorithm(0)          # ISL_SCHEDULE_ALGORITHM_ISL
        sc = (isl.ScheduleConstraints.on_domain(domain).set_validity(validity).set_proximity(validity)
              .set_coincidence(validity))
        schedule = _bounded_schedule(sc)
    finally:
        ctx.set_schedule_outer_coincidence(saved[0])
        ctx.set_schedule_maximize_coincidence(saved[1])
        ctx.set_schedule_whole_component(saved[2])
        ctx.set_schedule_algorithm(saved[3])
    if schedule is None:
        return None
    # the new order must keep every dependence: isl guarantees it; checking costs little and guards the rewrite
    if not keeps_order(schedule.get_map().intersect_domain(domain), validity):
        return None
    return schedule, stmts


def _bounded_schedule(sc: isl.ScheduleConstraints) -> isl.Schedule | None:
    """isl's schedule for `sc`, or None when isl does not find one within SCHEDULE_SECONDS.  Its scheduler
    solves integer programs whose size grows with the parametric offsets: a two-statement nest of
    tests/random_nests.py ran for over 30 minutes, and isl's max_operations does not bound that search.  So
    the search runs in a forked child, killed at the limit, and the schedule comes back as isl's text; where
    the platform has no fork, in this process, unbounded."""
    if not hasattr(os, "fork"):
        return sc.compute_schedule()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # the child: compute, write, leave without cleanup
        try:
            os.close(read_end)
            data = sc.compute_schedule().to_str().encode()
            while data:
                data = data[os.write(write_end, data):]
        finally:
            os._exit(0)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + SCHEDULE_SECONDS
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, 9)                    # over the limit: the order as written stays
                return None
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    text = b"".join(chunks).decode()
    return isl.Schedule.read_from_str(sc.get_ctx(), text) if text else None


# --------------------------------------------------------------------------- isl's AST as syntax trees

def iterator_name(ident: str) -> str:
    """isl's name of a new loop's variable (c<n>) as the C spells it (c2gpu_c<n>: no clash with the C's names)."""
    return re.sub(r"^c(\d+)$", ITERATOR + r"\1", ident)


def ast_tree(node, place, name=lambda n: n) -> list:
    """isl's AST `node` as C statements: its loops and conditions, and at each statement instance what
    `place(sid, values)` gives (values: the instance's coordinates as C, from the new loops' variables);
    `name` spells isl's identifiers."""
    t = node.get_type()
    if t == isl.ast_node_type.block:
        children = node.block_get_children()
        return [s for k in range(children.n_ast_node()) for s in ast_tree(children.get_at(k), place, name)]
    if t == isl.ast_node_type.for_:
        v = name(node.for_get_iterator().get_id().get_name())
        return [For(Decls((declaration(v, "int", isl_expr(node.for_get_init(), name)),)),
                    isl_expr(node.for_get_cond(), name),
                    Assign("+=", Name(v), isl_expr(node.for_get_inc(), name)),
                    Block(tuple(ast_tree(node.for_get_body(), place, name))))]
    if t == isl.ast_node_type.if_:
        other = Block(tuple(ast_tree(node.if_get_else_node(), place, name))) if node.if_has_else_node() else None
        return [If(isl_expr(node.if_get_cond(), name), Block(tuple(ast_tree(node.if_get_then_node(), place, name))),
                   other)]
    if t == isl.ast_node_type.mark:
        return ast_tree(node.mark_get_node(), place, name)
    if t == isl.ast_node_type.user:
        call = node.user_get_expr()
        sid = int(call.get_op_arg(0).get_id().get_name()[1:])
        return place(sid, [isl_expr(call.get_op_arg(k), name) for k in range(1, call.get_op_n_arg())])
    raise ValueError("isl AST node with no C form here")


def _placer(stmts: dict[int, Statement], nest: Nest, runs: dict):
    """At each statement instance: the statement's loop variables computed from the new ones, then the
    statement (`runs` gathers which new loop runs which of the nest's loops, for the report)."""
    def place(sid: int, values: list) -> list:
        items: list = []
        for lp, value in zip(ph.loop_path(nest, stmts[sid]), values):
            if isinstance(value, Name) and value.name.startswith(ITERATOR):
                # the new loop runs this original loop, for this statement
                runs.setdefault(value.name, {}).setdefault(lp.source_var, set()).add(
                    stmts[sid].loc.line)
            items.append(declaration(lp.var, lp.c_type, value, const=True))
            if lp.origin is not None:
                o = lp.origin
                items.append(declaration(o.var, lp.c_type, _poly(o.lower + Poly.var(lp.var) * o.step), const=True))
        return [Block(tuple(items) + (statement_placeholder(sid),))]
    return place


def statement_placeholder(sid: int) -> Placeholder:
    """Where statement `sid` goes: statements_in puts it there once the new nodes have their line."""
    return Placeholder(sid)


def placeholder_sid(n) -> int | None:
    """The statement a statement_placeholder stands for (None: `n` is none)."""
    return n.sid if isinstance(n, Placeholder) else None


def _poly(p: Poly):
    """A polynomial with integer coefficients as C, as Poly.to_c writes it."""
    den, terms = p.printed_terms()
    if den != 1:
        raise ValueError("a rational loop bound")
    out = None
    for sign, factors in terms:
        leaves = [Const("int", f) if f.isdigit() else Name(f) for f in factors]
        if out is None and sign == "-":
            leaves[0] = Unary("-", leaves[0])        # (C's unary minus binds to the first factor)
        term = leaves[0]
        for leaf in leaves[1:]:
            term = Binary("*", term, leaf)
        out = term if out is None else Binary(sign, out, term)
    return out if out is not None else integer(0)


def _loops_text(runs: dict[str, dict[str, set[int]]]) -> str:
    """'c2gpu_c0 runs k (lines 93, 97) and j (line 95); c2gpu_c1 runs i' for the report."""
    def lines(ls: set[int]) -> str:
        return f"line{'s' if len(ls) > 1 else ''} {', '.join(str(x) for x in sorted(ls))}"
    parts = []
    for it in sorted(runs, key=lambda v: int(v[len(ITERATOR):])):
        loops = runs[it]
        if len(loops) == 1:
            parts.append(f"{it} runs {next(iter(loops))}")
        else:
            parts.append(f"{it} runs " + " and ".join(f"{v} ({lines(ls)})" for v, ls in sorted(loops.items())))
    return "; ".join(parts)


def statements_in(node, stmts: dict[int, Statement]):
    """`node` with each statement_placeholder replaced by that statement's own syntax tree (isl
    may place one statement in several branches: the frontend describes each place as a node of its own)."""
    def put(n):
        sid = placeholder_sid(n)
        return n if sid is None else stmts[sid].syntax
    return rebuilt(node, put)


def rescheduled(nest: Nest, deps, describe_again) -> Nest | None:
    """The nest in the order isl's scheduler finds, described again (`describe_again`: the frontend's
    FileLowerer.describe_again) and normalized; None when it does not
    qualify, isl keeps the original order, or the C cannot be written or described."""
    if not qualifies(nest, deps):
        return None
    got = _isl_schedule(nest)
    if got is None:
        return None
    schedule, stmts = got
    ctx_set = isl.Set(f"[{', '.join(nest.params)}] -> {{ : }}")
    tree = isl.AstBuild.from_context(ctx_set).node_from_schedule(schedule)
    runs: dict[str, dict[str, set[int]]] = {}
    try:
        body = ast_tree(tree, _placer(stmts, nest, runs), iterator_name)
    except ValueError:
        return None
    if len(body) != 1 or not isinstance(body[0], For):
        return None                      # not one loop nest (several, or none): not a nest's replacement
    root = statements_in(placed(body[0], nest.root.syntax.at), stmts)
    try:
        new = describe_again(nest, root)
    except Exception:
        return None
    note = ("rescheduled with isl's scheduler (as PPCG does): the statements run in a new loop order that keeps "
            "every dependence (isl checked the order against each), with the loops that carry none outermost "
            f"where possible: {_loops_text(runs)}")
    return replace(normalize_nest(new), name=nest.name, rewrites=nest.rewrites + (note,))

