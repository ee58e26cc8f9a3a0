"""Scalar replacement: array elements a thread keeps in a register across an in-thread loop.

matmul's thread accumulates into `C[i][j]` inside its `k` loop.  Written as in C, every iteration loads the
element from global memory, adds, and stores it back, and the next iteration's load waits for that store.
A CUDA programmer loads the element once into a register before the loop, updates the register, and stores
it once after.  `promotions(nest, kernel)` decides, once per kernel, which elements get that treatment; code
generation (codegen/kernel.py, codegen/tiled.py) prints the register, its load and its store from the
decision, and the performance model (perf/accesses.py) counts one load and one store per execution of the
loop instead of one per iteration.

An element `A[s]` is promoted across an in-thread loop L when:
- its subscripts `s` do not depend on L or on any loop inside it (only on the loops around L and on sizes);
- every other access to `A` inside L provably never touches it (isl: no iteration of L where the other
  subscripts equal `s`); other arrays are other objects: the mapped loops around L are proven parallel, and
  the dependence analysis proves no loop whose body writes one of two arrays that may alias
  (c2gpu/passes/dependence.py), so two arrays of a mapped kernel are distinct objects; the pure functions a nest
  may call touch no memory;
- no access to it inside L is under a condition inside L that may change between L's iterations (a conditional
  update: C would store only when the condition holds); a condition that reads only the loops around L and
  sizes (`if (i + 1 < ni)` inside `for k`: a thread's second row of a coarsened kernel, transform/coarsen.py)
  holds in every iteration of L or in none, so the load and the store run under it too (`guards`); every
  access to the element inside L is under the same such conditions; none is a reduction across threads or a
  scatter (atomics), none is in a loop header;
- whenever L runs at least once, the C code touches the element at least once (isl, exact): the load and the
  store then never touch an element the original does not, so they add no race and no out-of-bounds access.
The register is loaded before L when some access reads it and the first statement of L's body that touches
it does not simply assign it; it is stored after L when some access writes it.  Both happen only when L runs
at least one iteration (`runs`), so a loop with zero trips stores nothing.
"""
from __future__ import annotations

import re
from dataclasses import field, replace

import islpy as isl

from ..analysis import isl_sets as ph
from ..syntax_tree import Assign, Index, Member, Name, Unary, children, index_chain
from ..ir import Access, Constraint, Guard, Loop, Nest, Statement
from ..pipeline import memo
from ..symbolic import Poly
from ..records import dataclass


@dataclass(frozen=True)
class Promotion:
    """One array element kept in a register across one in-thread loop of a kernel."""
    array: str
    subscripts: tuple[Poly, ...]     # the element, as the accesses write it (over the loops around `loop_lid`)
    text: str                        # the access as written, "C[i][j]"
    loop_lid: int                    # the loop across which it lives in the register
    loop_var: str                    # that loop's variable as the C code names it (for the reports)
    accesses: tuple[Access, ...]     # the accesses inside that loop that the register replaces
    load: bool                       # loaded before the loop
    store: bool                      # stored after the loop
    ctype: str
    register: str                    # its C name in the kernel
    runs: Poly | None                # the loop runs at least once iff runs >= 0 (over the loops around it and
    #                                  the sizes); None: it always does where its header runs
    guards: tuple[Constraint, ...]   # the conditions inside the loop, over the loops around it and the sizes, that
    #                                  every access to the element is under: the load and the store are too
    nodes: tuple = field(default=(), compare=False, repr=False)   # the accesses' nodes in their statements' trees
    #                                  (c2gpu.syntax_tree, by identity), which code generation prints as the register


def promotions(nest: Nest, kernel) -> tuple[Promotion, ...]:
    """The elements `kernel` keeps in registers (`nest`: the kernel's view of the nest, `kernel.view or nest`).

    Kept per nest and kernel (pipeline.memo): code generation and every KernelAnalysis of the block-size search
    ask again.
    """
    key = replace(kernel, block=(0, 0, 0))
    try:
        hash(key)
    except TypeError:
        return _promotions(nest, kernel)
    table = memo(nest, "promotions")
    if key not in table:
        table[key] = _promotions(nest, kernel)
    return table[key]


def promoted_accesses(proms: tuple[Promotion, ...]) -> dict[int, Promotion]:
    """id of every access a register replaces -> its promotion."""
    return {id(a): p for p in proms for a in p.accesses}


def _promotions(nest: Nest, kernel) -> tuple[Promotion, ...]:
    if kernel.serial or not kernel.loops:
        return ()          # a one-thread kernel: no proof that its arrays are distinct objects
    by_id = {lp.lid: lp for lp in nest.loops()}
    paths = {lp.lid: path for lp, path in _loop_paths(nest.root, [])}
    # arrays of the nest's memory: one declared inside the nest is a new object in every iteration
    end = nest.end_loc.line if nest.end_loc is not None else None
    known = {a.name for a in nest.arrays if not (a.storage == "local" and end is not None and a.loc.file == nest.loc.file
                                                  and nest.loc.line <= a.loc.line <= end)}
    loop_vars = {q.var for q in nest.loops()}
    body_depth = len(paths[kernel.body_lid])
    excluded = {r.array_access.array for r in kernel.reductions if r.array_access is not None}
    excluded |= {s.scatter for s in kernel.statements(by_id) if s.scatter}
    done: set[int] = set()             # ids of accesses already promoted across an outer loop
    out: list[Promotion] = []
    for lp in kernel.inner_loops(by_id):
        stmts = list(lp.statements())
        path = paths[lp.lid]
        outer_vars = {p.var for p in path[:-1]}
        # the kernel defines the sizes, the normalized variables of the host and mapped loops, and the C variable
        # of an in-thread loop: the normalized variable of an in-thread loop written otherwise is not in the code
        unprintable = {q.var for q in path[body_depth:-1] if q.origin is not None}
        groups: dict[tuple, list[tuple[Access, Statement]]] = {}
        for s in stmts:
            for a in s.accesses:
                if id(a) in done or a.array in excluded or a.array not in known:
                    continue
                if not a.affine or any(x is None for x in a.subscripts):
                    continue
                if any(v in loop_vars and v not in outer_vars for x in a.subscripts for v in x.variables):
                    continue       # moves with L or a loop inside it
                if any(v in unprintable or not v.isidentifier() for x in a.subscripts for v in x.variables):
                    continue       # the load and the store could not name it ("t#2" is the IR's second t)
                groups.setdefault((a.array, a.subscripts), []).append((a, s))
        for (array, subs), members in groups.items():
            p = _promote(nest, lp, path, stmts, array, subs, members, unprintable, len(out))
            if p is not None:
                out.append(p)
                done.update(id(a) for a in p.accesses)
    return tuple(out)


def _loop_paths(lp: Loop, above: list[Loop]):
    path = above + [lp]
    yield lp, path
    for n in lp.body:
        if isinstance(n, Loop):
            yield from _loop_paths(n, path)


def access_nodes(stmt: Statement, a: Access) -> list:
    """The nodes of `stmt`'s tree (Statement.syntax) that are access `a` (its array, at its source position):
    elements, and the dereferences `*p` the frontend reads as p[0].

    By node, not by position alone: a nest rewritten by isl's scheduler repeats a statement, with its
    positions, in several places (c2gpu/transform/schedule.py)."""
    if stmt.syntax is None:
        return []
    return list(_access_index(stmt.syntax).get((a.loc.line, a.loc.col, a.array), ()))


def _access_index(tree) -> dict[tuple[int, int, str], list]:
    """(line, column, array) -> the outermost element (or `*p`) nodes of `tree` there (A[i][j] is two nested
    Index nodes at one position: the outer one is the access).  One walk per tree, whatever the number of
    accesses: a statement of 5,000 terms has 5,000 accesses (kept per tree: pipeline.memo)."""
    table = memo(tree, "access index")
    if "index" not in table:
        table["index"] = _index_accesses(tree)
    return table["index"]


def _index_accesses(tree) -> dict[tuple[int, int, str], list]:
    index: dict[tuple[int, int, str], list] = {}
    stack: list[tuple[object, frozenset]] = [(tree, frozenset())]
    while stack:
        n, inside = stack.pop()
        if isinstance(n, Member) and isinstance(n.base, Index):
            # `u[i].re`: the field of an array of structs is the access (frontend NestContext.field_of), which no
            # element prints alone: none is indexed, so nothing replaces it by a register or a tile
            stack.extend((c, inside) for c in children(n.base))
            continue
        if isinstance(n, Unary) and n.op == "*" and isinstance(n.operand, Name) and n.at is not None:
            base = n.operand        # `*alpha`: the element alpha[0] (frontend: the access of a dereference)
        elif isinstance(n, Index) and n.at is not None:
            base = index_chain(n)[0]
        else:
            base = None
        if isinstance(base, Name):
            key = (n.at.line, n.at.col, base.name)
            if key not in inside:
                index.setdefault(key, []).append(n)
                inside = inside | {key}
        stack.extend((c, inside) for c in children(n))
    return index


def certain_write(stmt: Statement, a: Access) -> bool:
    """Is write `a` the target of its statement's assignment (`a[i] = ...`, `a[i] += ...`), so that it happens
    whenever the statement runs? A write inside an expression (a conditional, `&&`) may not."""
    if not isinstance(stmt.expr, Assign):
        return False
    target = stmt.expr.target
    base = target.operand if isinstance(target, Unary) and target.op == "*" else target   # `*p`: p[0]
    while isinstance(base, Index):
        base = base.base
    return isinstance(target, (Index, Unary)) and base == Name(a.array) and target.at == a.loc


def _promote(nest: Nest, lp: Loop, path: list[Loop], stmts: list[Statement], array: str, subs, members,
             unprintable: set[str], index: int) -> Promotion | None:
    depth = len(path)                  # guards with this depth or more are inside L
    mine = {id(a) for a, _ in members}
    nodes = []
    inside = {tuple(g for g in s.guards if g.depth is None or g.depth >= depth) for _, s in members}
    if len(inside) != 1:
        return None                    # accesses under different conditions inside L
    guards = next(iter(inside))
    outer = {q.var for q in path[:-1]}
    spelt = outer | {q.origin.var for q in path[:-1] if q.origin is not None}    # as the condition reads them
    if not all(_invariant(g, outer, spelt, set(nest.params), unprintable) for g in guards):
        return None                    # a condition that may change between L's iterations
    for a, s in members:
        if s.kind == "header":
            return None
        found = access_nodes(s, a)
        if not found:
            return None                # nothing to print as the register: the access would stay in memory
        nodes.extend(found)
    for s in stmts:
        for a in s.accesses:
            if a.array != array or id(a) in mine:
                continue
            if s.kind == "header" or not _never_equal(nest, s, a, subs):
                return None
    try:
        runs = _runs(nest, lp, path, [s for _, s in members], unprintable, guards)
    except (ValueError, isl.Error):
        return None
    if runs is False:
        return None
    a0 = members[0][0]
    reads = any(a.kind == "read" for a, _ in members)
    writes = any(a.kind == "write" for a, _ in members)
    first = _first_toucher(lp, mine)
    # the first statement that touches it assigns it, certainly and without reading it: nothing to load
    assigned_first = (isinstance(first, Statement) and first.kind == "assign" and first.assign_op == "="
                      and all(a.kind == "write" and certain_write(first, a) for a in first.accesses if id(a) in mine))
    name = "c2gpu_reg_" + re.sub(r"\W", "_", array) + f"_{index}"
    return Promotion(array, tuple(subs), a0.text, lp.lid, lp.source_var,
                     tuple(a for a, _ in members), reads and not assigned_first, writes, a0.elem_type, name, runs,
                     tuple(c for g in guards for c in g.constraints), tuple({id(n): n for n in nodes}.values()))


def _invariant(g: Guard, outer: set[str], spelt: set[str], params: set[str], unprintable: set[str]) -> bool:
    """Whether condition `g` is a conjunction of affine constraints over the loops around L (`outer`; `spelt`: their
    variables as the C names them too) and sizes only, printable in the kernel: then it holds in every iteration
    of L or in none."""
    if g.depth is None or g.constraints is None or g.alternatives is not None or not set(g.reads) <= spelt | params:
        return False
    names = {v for c in g.constraints for v in c.expr.variables}
    return names <= outer | params and not names & unprintable and all(v.isidentifier() for v in names)


def _first_toucher(lp: Loop, ids: set[int]):
    """The first item of the loop's body (a statement or a loop) that accesses one of `ids`."""
    for node in lp.body:
        if isinstance(node, Loop):
            inner = ([node.header_stmt] if node.header_stmt is not None else []) + list(node.statements())
            if any(id(a) in ids for s in inner for a in s.accesses):
                return node
        elif any(id(a) in ids for a in node.accesses):
            return node
    return None


def _never_equal(nest: Nest, s: Statement, a: Access, subs) -> bool:
    """Whether access `a` of statement `s` never touches the element `subs` (over the loops around the
    promotion's loop, which enclose `s` too) in any iteration: isl, exact for affine subscripts."""
    if not a.affine or len(a.subscripts) != len(subs) or any(x is None for x in a.subscripts):
        return False
    if any(x.is_const() and y.is_const() and x != y for x, y in zip(a.subscripts, subs)):
        return True                     # two different constants in one dimension (a 5x5 block's cells)
    try:
        loops = ph.loop_path(nest, s)
        names = {q.var: ph.dim(q.lid) for q in loops}
        if any(v not in names and v not in nest.params for x in subs for v in x.variables):
            return False
        cons = ph.domain_constraints(loops, names, s.guards)
        cons += [f"{ph.poly_to_isl(x, names)} = {ph.poly_to_isl(y, names)}" for x, y in zip(a.subscripts, subs)]
        dims = ", ".join(names[q.var] for q in loops)
        return isl.Set(f"[{', '.join(nest.params)}] -> {{ [{dims}] : {' and '.join(cons)} }}").is_empty()
    except (ValueError, isl.Error):
        return False


def _runs(nest: Nest, lp: Loop, path: list[Loop], touching: list[Statement], unprintable: set[str],
          guards: tuple[Guard, ...] = ()) -> Poly | None | bool:
    """When the load and the store may run, besides `guards` (the conditions inside the loop every access to the
    element is under, over the loops around it): None (whenever the loop's header runs), a Poly (where it is >= 0:
    the loop has at least one iteration), or False (the C code may run the loop, with the guards holding, without
    touching the element, or the condition cannot be printed)."""
    params = ", ".join(nest.params)
    outer = path[:-1]
    names = {q.var: ph.dim(q.lid) for q in path}
    k = len(outer)
    dims = ", ".join(names[q.var] for q in path)
    iterations = isl.Set(f"[{params}] -> {{ [{dims}] : {' and '.join(ph.domain_constraints(path, names)) or 'true'} }}")
    runs = iterations.project_out(isl.dim_type.set, k, 1)           # outer iterations where L runs >= once
    touched = None
    for s in touching:
        dom, _ = ph.statement_domain(nest, s)
        t = dom.project_out(isl.dim_type.set, k, dom.dim(isl.dim_type.set) - k)
        touched = t if touched is None else touched.union(t)
    # where the conditions hold (they read the loops around L and sizes only): the load and the store run there
    held = isl.Set(f"[{params}] -> {{ [{', '.join(names[q.var] for q in outer)}] : "
                   f"{' and '.join(ph.domain_constraints([], names, guards)) or 'true'} }}")
    runs = runs.intersect(held)
    if touched is None or not runs.is_subset(touched):
        return False
    headers = isl.Set(f"[{params}] -> {{ [{', '.join(names[q.var] for q in outer)}] : "
                      f"{' and '.join(ph.domain_constraints(outer, names, lp.guards)) or 'true'} }}").intersect(held)
    if headers.is_subset(runs):
        return None
    trip = lp.trip_count
    if trip is None or not lp.normalized or not trip.num.is_affine():
        return False
    cond = trip.num - Poly.const(trip.den)                             # floor(num/den) >= 1  <=>  num >= den
    if cond.variables & unprintable:
        return False
    return cond
