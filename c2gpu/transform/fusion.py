"""Fusion: adjacent loop nests in a host loop's body run as one nest, so that they are one kernel per launch.

PolyBench's fdtd-2d updates three arrays per time step in four loop nests; three of them (the first row of
`ey`, the rest of `ey`, then `ex`) read only `hz` and write disjoint elements, so one thread per element
`(i, j)` can run all three: one launch where there were three.  The fourth reads `ex[i][j+1]` and `ey[i+1][j]`,
which other threads of a fused kernel would write, and stays apart.

A run of sibling loop nests (each a perfect nest, in one loop's body) is fused level by level: their loops
at the same depth from the innermost become one loop over the union of their ranges, each statement guarded
by its own (a shallower nest stands at 0 on the outer levels), and the statements run in their order as
written at each point.  isl builds the new loops (the loops are named after the original variables where
those agree) and checks two things exactly, with the memory-based dependences of all statement instances:
- the new order keeps every dependence, so the nest computes what the C computes;
- no dependence joins two different iterations of the fused loops within one iteration of the loops around
  them, so the fused loops are as parallel as the ones they replace.
Nests are fused greedily from the first: a run grows while both hold.  The rewritten nest is C again, analysed
from the start; the reorder pass keeps it when it maps to fewer kernels (c2gpu/passes/reorder.py), and the
port is checked against the original C like any other.
"""
from __future__ import annotations

from dataclasses import replace

import islpy as isl

from ..analysis import isl_sets as ph
from ..ir import Loop, Nest, Statement
from ..symbolic import Poly
from ..syntax_tree import Block, Decl, For, Name, rebuilt, walk, with_children
from .normalize import normalize_nest
from .schedule import (ITERATOR, ast_tree, instances, iterator_name, keeps_order, placeholder_sid, qualifies,
                       statement_placeholder, statements_in)
from .syntax import declaration, placed, renamed_decl


PLACEHOLDER = 1_000_000      # the placeholder statements' numbers (above any statement's sid)


def _chain(lp: Loop) -> list[Loop] | None:
    """The loops of a perfect nest from `lp` in, or None when a body holds a loop beside something else."""
    out = [lp]
    while True:
        loops = [n for n in out[-1].body if isinstance(n, Loop)]
        if not loops:
            return out
        if len(out[-1].body) != 1:
            return None
        out.append(loops[0])




def _value(lp: Loop, names: dict[str, str]) -> str:
    """The loop variable's value as written (start + step * normalized), as an isl term."""
    if lp.origin is None:
        return names[lp.var]
    return ph.poly_to_isl(lp.origin.lower + Poly.var(lp.var) * lp.origin.step, names)


class _Fuser:
    """The nest's statement instances in the loop variables' values as written (so that loops with different
    starts align) and their dependences; the orders with runs of sibling nests fused."""

    def __init__(self, nest: Nest) -> None:
        self.nest = nest
        self.params = ", ".join(nest.params)
        domain, _original, validity, self.stmts = instances(nest)
        written = self._as_written()
        self.domain = domain.apply(written)
        self.validity = validity.apply_domain(written).apply_range(written)

    def _as_written(self) -> isl.UnionMap:
        parts = []
        for sid, s in self.stmts.items():
            _dom, names = ph.statement_domain(self.nest, s)
            path = ph.loop_path(self.nest, s)
            parts.append(f"S{sid}[{', '.join(names[lp.var] for lp in path)}] -> "
                         f"S{sid}[{', '.join(_value(lp, names) for lp in path)}]")
        return isl.UnionMap(f"[{self.params}] -> {{ {'; '.join(parts)} }}")

    def vectors(self, groups: list[tuple[Loop, list[int]]]) -> tuple[dict[int, list], dict[int, int]]:
        """Each statement's place in the order with the groups fused (a group: a loop and the positions in its
        body of the nests it fuses), as in the original order's vectors [position, loop, position, ...]: an
        entry is an integer or ('loop', lid), the value of that loop's variable; all of one width.  With them,
        where each group's position is in the vectors, by the lid of the loop around it."""
        fused_at = {(parent.lid, pos): (k, positions) for parent, positions in groups
                    for k, pos in enumerate(positions)}
        out: dict[int, list] = {}
        at: dict[int, int] = {}

        def walk(lp: Loop, prefix: list) -> None:
            for pos, node in enumerate(lp.body):
                hit = fused_at.get((lp.lid, pos))
                if hit is not None:
                    k, positions = hit
                    at[lp.lid] = len(prefix)
                    chain = _chain(node)
                    depth = max(len(_chain(lp.body[p])) for p in positions)
                    loops = [0] * (depth - len(chain)) + [("loop", c.lid) for c in chain]
                    for place, s in enumerate(chain[-1].body):
                        out[s.sid] = prefix + [positions[0]] + loops + [k, place]
                elif isinstance(node, Loop):
                    walk(node, prefix + [pos, ("loop", node.lid)])
                else:
                    out[node.sid] = prefix + [pos]
        walk(self.nest.root, [0, ("loop", self.nest.root.lid)])
        width = max(len(v) for v in out.values())
        return {sid: v + [0] * (width - len(v)) for sid, v in out.items()}, at

    def order(self, vectors: dict[int, list]) -> isl.UnionMap:
        parts = []
        for sid, v in vectors.items():
            dims = ", ".join(f"x{lp.lid}" for lp in ph.loop_path(self.nest, self.stmts[sid]))
            terms = ", ".join(str(x) if isinstance(x, int) else f"x{x[1]}" for x in v)
            parts.append(f"S{sid}[{dims}] -> [{terms}]")
        return isl.UnionMap(f"[{self.params}] -> {{ {'; '.join(parts)} }}").intersect_domain(self.domain)

    def fusable(self, groups: list[tuple[Loop, list[int]]]) -> bool:
        """Whether the order with the groups fused keeps every dependence, and no dependence between the
        statements of the last group joins two iterations of its fused loops (within one iteration of the
        loops around them)."""
        vectors, ats = self.vectors(groups)
        order = self.order(vectors)
        if not keeps_order(order, self.validity):
            return False
        parent, positions = groups[-1]
        sids = [s.sid for p in positions for s in _chain(parent.body[p])[-1].body]
        at = ats[parent.lid]
        depth = max(len(_chain(parent.body[p])) for p in positions)
        tree = self.tree(groups)
        if not _plain_bounds(tree) or not _one_nest(tree, sids, range(at + 1, at + 1 + depth)):
            return False
        mine = self._of(sids)
        pairs = self.validity.intersect_domain(mine).intersect_range(mine).apply_domain(order).apply_range(order)
        if pairs.is_empty():
            return True
        width = len(vectors[sids[0]])
        xs, ys = [f"a{k}" for k in range(width)], [f"b{k}" for k in range(width)]

        def equal(n: int) -> isl.UnionMap:
            same = " and ".join(f"{x} = {y}" for x, y in zip(xs[:n], ys[:n])) or "true"
            return isl.UnionMap(f"[{self.params}] -> {{ [{', '.join(xs)}] -> [{', '.join(ys)}] : {same} }}")
        return pairs.intersect(equal(at + 1)).is_subset(equal(at + 1 + depth))

    def tree(self, groups: list[tuple[Loop, list[int]]]):
        """isl's AST of the order with the groups fused (its loops named c<entry>).  isl bounds a loop by the
        exact union of what runs in it (fdtd-2d's two nests from i = 1 and from j = 1 leave out the corner
        i = j = 0, and the loops would start at a max); a placeholder statement over the union's simple hull,
        which does nothing, makes the loops run over the hull, each statement under its guard."""
        vectors, ats = self.vectors(groups)
        order = self.order(vectors)
        width = len(next(iter(vectors.values())))
        for n, (parent, positions) in enumerate(groups):
            keep = ats[parent.lid] + 1 + max(len(_chain(parent.body[p])) for p in positions)
            mine = self._of([s.sid for p in positions for s in _chain(parent.body[p])[-1].body])
            hull = isl.Set.from_union_set(mine.apply(order)).project_out(isl.dim_type.set, keep, width - keep) \
                .simple_hull()
            xs, name = [f"a{k}" for k in range(keep)], f"P{PLACEHOLDER + n}"
            place = isl.UnionMap(f"{{ {name}[{', '.join(xs)}] -> [{', '.join(xs + ['0'] * (width - keep))}] }}")
            order = order.union(place.intersect_domain(isl.UnionSet.from_set(
                isl.Set.from_basic_set(hull).set_tuple_name(name))))
        build = isl.AstBuild.from_context(isl.Set(f"[{self.params}] -> {{ : }}"))
        atomic = isl.UnionMap(f"{{ [{', '.join(f'a{k}' for k in range(width))}] -> atomic[x] }}")
        return build.set_options(atomic).node_from_schedule_map(order)

    def _of(self, sids) -> isl.UnionSet:
        return self.domain.intersect(isl.UnionSet(
            f"[{self.params}] -> {{ {'; '.join(f'S{s}[{self._dims(s)}]' for s in sids)} }}"))

    def _dims(self, sid: int) -> str:
        return ", ".join(f"x{lp.lid}" for lp in ph.loop_path(self.nest, self.stmts[sid]))


def _runs(nest: Nest) -> list[tuple[Loop, list[int]]]:
    """The runs of adjacent perfect loop nests in a loop's body, at least two long, in the nest's order."""
    out = []
    for lp in nest.loops():
        run: list[int] = []
        for pos, node in enumerate(lp.body + (None,)):
            if isinstance(node, Loop) and _chain(node) is not None:
                run.append(pos)
                continue
            if len(run) > 1:
                out.append((lp, run))
            run = []
    return out


def _qualifies(nest: Nest, deps) -> bool:
    """What isl's scheduler needs (schedule.qualifies), loops that count up (the values as written keep the
    order), and statements that name no normalized loop variable (the fused loops define the variables as
    written)."""
    if not qualifies(nest, deps):
        return False
    loops = nest.loops()
    if any(lp.origin is not None and lp.origin.step <= 0 for lp in loops):
        return False
    normalized = {lp.var for lp in loops if lp.origin is not None}
    return not any(isinstance(n, Name) and n.name in normalized for s in nest.statements()
                   for n in walk(s.syntax))


def fused(nest: Nest, deps, describe_again) -> Nest | None:
    """The nest with runs of adjacent sibling loop nests fused (greedily, from the first), described again
    (`describe_again`: the frontend's FileLowerer.describe_again) and normalized; None when nothing fuses or the C cannot be written or described."""
    runs = _runs(nest)
    if not runs or not _qualifies(nest, deps):
        return None
    fuser = _Fuser(nest)
    groups: list[tuple[Loop, list[int]]] = []
    for parent, run in runs:
        k = 0
        while k < len(run):
            group = [run[k]]
            for nxt in run[k + 1:]:
                if not fuser.fusable(groups + [(parent, group + [nxt])]):
                    break
                group.append(nxt)
            if len(group) > 1:
                groups.append((parent, group))
            k += len(group)
    if not groups:
        return None
    try:
        body = ast_tree(fuser.tree(groups), _placer(nest, fuser.stmts), iterator_name)
    except ValueError:
        return None
    if len(body) != 1 or not isinstance(body[0], For):
        return None
    root = _loop_lines(placed(body[0], nest.root.syntax.at), nest, fuser.vectors(groups)[0])
    root = statements_in(_unnested(_named_as_written(root)), fuser.stmts)
    try:
        new = describe_again(nest, root)
    except Exception:
        return None
    notes = tuple(_note(parent, positions) for parent, positions in groups)
    return replace(normalize_nest(new), name=nest.name, rewrites=nest.rewrites + notes)


def _ast_nodes(node, loops: tuple = ()):
    """Every node of isl's AST `node` with the for-nodes around it, outermost first."""
    yield node, loops
    t = node.get_type()
    if t == isl.ast_node_type.block:
        children = node.block_get_children()
        for k in range(children.n_ast_node()):
            yield from _ast_nodes(children.get_at(k), loops)
    elif t == isl.ast_node_type.for_:
        yield from _ast_nodes(node.for_get_body(), loops + (node,))
    elif t == isl.ast_node_type.if_:
        yield from _ast_nodes(node.if_get_then_node(), loops)
        if node.if_has_else_node():
            yield from _ast_nodes(node.if_get_else_node(), loops)
    elif t == isl.ast_node_type.mark:
        yield from _ast_nodes(node.mark_get_node(), loops)


def _plain_bounds(tree) -> bool:
    """Whether every loop of isl's AST starts and ends at an affine value (no min, max or condition: the
    fused loops must map to a grid as the loops they replace did; a nest fused with a shallower one, which
    runs even when the others do not, ends at a max)."""
    def plain(loop) -> bool:
        cond = loop.for_get_cond()
        bounded = cond.get_type() == isl.ast_expr_type.op and cond.get_op_type().name in ("le", "lt", "ge", "gt")
        return bounded and _affine(loop.for_get_init()) and _affine(cond)
    return all(plain(n) for n, _ in _ast_nodes(tree) if n.get_type() == isl.ast_node_type.for_)


def _one_nest(tree, sids: list[int], entries: range) -> bool:
    """Whether isl put every instance of the statements `sids` in one loop per entry of `entries` (the same
    loops for all), as fusion means: it may also have built a loop for some and none for others."""
    wanted = {f"c{k}" for k in entries}
    # the loop nodes themselves are kept, so that no two of them can share an id
    paths = [tuple(lp for lp in loops if lp.for_get_iterator().get_id().get_name() in wanted)
             for n, loops in _ast_nodes(tree) if n.get_type() == isl.ast_node_type.user
             and int(n.user_get_expr().get_op_arg(0).get_id().get_name()[1:]) in sids]   # S<sid> or P<placeholder>
    seen = {tuple(map(id, path)) for path in paths}
    return len(seen) == 1 and len(paths[0]) == len(entries)


def _affine(e) -> bool:
    if e.get_type() != isl.ast_expr_type.op:
        return True
    if e.get_op_type().name not in ("add", "sub", "mul", "minus", "le", "lt", "ge", "gt", "eq"):
        return False
    return all(_affine(e.get_op_arg(k)) for k in range(e.get_op_n_arg()))


def _placer(nest: Nest, stmts: dict[int, Statement]):
    """At each statement instance: the statement's loop variables as written (each the value of a new loop's
    variable, or a constant), then the statement."""
    def place(sid: int, values: list) -> list:
        if sid >= PLACEHOLDER:
            return []
        items = tuple(declaration(lp.source_var, lp.c_type, value, const=True)
                      for lp, value in zip(ph.loop_path(nest, stmts[sid]), values))
        return [Block(items + (statement_placeholder(sid),))]
    return place


def _loop_lines(root: For, nest: Nest, vectors: dict[int, list]) -> For:
    """Each new loop placed where the first loop it runs is written (the reports name loops by line), but the
    root, which stands where the nest is (a time loop that runs once has no loop of its own: the root is then a
    fused loop, and the nest still starts at the time loop)."""
    by_lid = {lp.lid: lp for lp in nest.loops()}

    def place(n):
        if not isinstance(n, For):
            return n
        k = _entry(n)
        runs = [by_lid[vectors[sid][k][1]] for sid in sorted(_placed(n), key=lambda sid: _in_order(vectors[sid]))
                if isinstance(vectors[sid][k], tuple)]
        if not runs or runs[0].syntax is None:
            return n
        at = runs[0].syntax.at
        return replace(n, init=placed(n.init, at), cond=placed(n.cond, at), next=placed(n.next, at), at=at)
    return replace(root, body=rebuilt(root.body, place))


def _entry(loop: For) -> int:
    """A new loop's entry in the order's vectors (its variable is c2gpu_c<entry>)."""
    return int(loop.init.items[0].name[len(ITERATOR):])


def _placed(node) -> list[int]:
    """The statements placed under `node` (schedule.statement_placeholder)."""
    return [sid for sid in map(placeholder_sid, walk(node)) if sid is not None]


def _in_order(vector: list) -> list[int]:
    return [x if isinstance(x, int) else -1 for x in vector]


def _named_as_written(node):
    """A new loop whose statements all take the same variable from it (`const int i = c2gpu_c3;`) is named
    after that variable, the declarations dropped, where nothing else under it declares the name (loops from
    the outside in: an inner loop sees the outer one's names)."""
    if isinstance(node, For):
        node = _named(node)
    return with_children(node, _named_as_written)


def _named(loop: For) -> For:
    it = loop.init.items[0].name
    decls = [n for n in walk(loop.body) if isinstance(n, Decl)]

    def takes_it(d) -> bool:
        return isinstance(d, Decl) and isinstance(d.init, Name) and d.init.name == it
    taken = {d.name for d in decls if takes_it(d)}
    if len(taken) != 1:
        return loop
    var = next(iter(taken))
    if any(d.name == var and not takes_it(d) for d in decls) or \
            any(isinstance(n, Name) and n.name == var for n in walk(loop)):
        return loop

    def dropped(n):
        if isinstance(n, Block) and n.items:
            return replace(n, items=tuple(d for d in n.items if not (takes_it(d) and d.name == var)))
        return n

    def renamed(n):
        if isinstance(n, Name) and n.name == it:
            return replace(n, name=var)
        if isinstance(n, Decl) and n.name == it:
            return renamed_decl(n, var)
        return n
    return rebuilt(rebuilt(loop, dropped), renamed)


def _unnested(root):
    """A block inside a block, declaring nothing (a statement's place once its declarations are gone), is
    written as its statements."""
    def flat(n):
        if not isinstance(n, Block) or not n.items:
            return n
        items = []
        for item in n.items:
            inner = isinstance(item, Block) and not any(isinstance(d, Decl) for d in item.items)
            items.extend(item.items if inner else [item])
        return replace(n, items=tuple(items))
    return rebuilt(root, flat)


def _note(parent: Loop, positions: list[int]) -> str:
    lines = [parent.body[p].loc.line for p in positions]
    where = ", ".join(str(x) for x in lines[:-1]) + f" and {lines[-1]}"
    return (f"fused: the loop nests at lines {where} run as one (one kernel), each statement under its own "
            "bounds; isl checked that the new order keeps every dependence and that none joins two iterations "
            "of the fused loops")
