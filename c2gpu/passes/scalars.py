"""Scalars in a loop: which are reductions over it, which can be privatized, and whose value outlives it.

Each variable has its own IR name (lowering renames a second variable of the
same C name), so the references to one name here are the references to one
variable.  A scalar declared in a loop's body is private to that loop (the
caller checks `ScalarInfo.declared_in`); one declared outside is a reduction
over the loop (every write a candidate reduction with one operator, nothing
else reads it), or privatizable (every read of an iteration preceded, in that
iteration, by a write that certainly runs, at any loop depth, and its value
not used after the loop unless the loop's own body writes it), or its
dependences count.  The references are the dependence pass's `_Ref`s: name,
kind ("read"/"write") and site (statement, enclosing loops, guard for a
condition).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from c2gpu.syntax_tree import (Assign, Binary, Block, Decl, Decls, For, Jump, Name, Ternary, Unary, children, int_constant,
                        walk)
from c2gpu.frontend.guards import _TRUTH_OPS
from c2gpu.ir import Loop, Nest, ScalarInfo, Statement
from c2gpu.records import dataclass

if TYPE_CHECKING:
    from .references import _Ref


def guard_depth(g, chain) -> int:
    """How many loops of `chain` enclose the `if` of `g` (unknown: all of them, which is sound)."""
    return len(chain) if g.depth is None else min(g.depth, len(chain))


def scalar_reduction(s: str, lp: Loop, refs: list[_Ref]) -> list[tuple[Statement, str]] | None:
    """Every write of `s` in `lp` is a candidate reduction over `lp` with one operator, and nothing else reads `s`."""
    writers: dict[int, Statement] = {r.site.stmt.sid: r.site.stmt for r in refs if r.kind == "write"}
    found, ops, guards = [], set(), []
    for w in writers.values():
        red = next((r for r in w.reductions if r.target == s and lp.var in r.loops and r.array_access is None), None)
        op = red.op if red is not None else None
        if op is None or w.decl == s:
            return None
        ops.add(op)
        found.append((w, op))
        if red.guard is not None:
            guards.append(red.guard)
    if len(ops) != 1:
        return None
    for r in refs:
        if r.kind != "read":
            continue
        if r.site.guard is None and r.site.stmt.sid in writers:
            continue                          # the reduction statement itself
        if r.site.guard is not None and r.site.guard in guards:
            continue                          # the condition of `if (e > s) s = e;`
        if r.site.guard is None and any(g.stmt_sid == r.site.stmt.sid for g in guards):
            continue                          # the same condition, kept as a statement because it reads an array
        return None
    return found


@dataclass(frozen=True)
class Privatization:
    """Why a scalar can have a private copy per iteration of a loop.

    `write`: the first write that certainly runs (the line a note points at).
    `every_iteration`: one such write sits directly in the loop's body, so every iteration writes the
    scalar and the last iteration leaves the value C leaves after the loop (lastprivate); when all of
    them sit in inner loops, which may run zero times, the last iteration may leave no value at all.
    `all_or_none`: not every iteration, but one such write runs in every iteration of the nest or in none
    (see all_or_none): the last iteration leaves C's value when its copy starts from the value at the nest's
    entry (the port's kernels do so).
    """
    write: Statement
    every_iteration: bool
    all_or_none: bool = False


def surely_assigns(node, name: str) -> bool:
    """Whether evaluating the statement `node` (its tree, Statement.syntax) always assigns the variable `name`
    (C name).

    An assignment in a part of an expression that may not be evaluated (the right operand of `&&` and
    `||`, the branches of `?:`, the operand of `sizeof`) does not count; nor does anything in a `for`
    statement but its first clause (the header of an inner loop: the statement the IR keeps for it).
    """
    if isinstance(node, For):
        node = node.init
    var = Name(name)
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, Assign) and n.target == var:
            return True
        if isinstance(n, Unary) and n.op in ("++", "--", "p++", "p--") and n.operand == var:
            return True
        if isinstance(n, Binary) and n.op in ("&&", "||"):
            stack.append(n.left)
        elif isinstance(n, Ternary):
            stack.append(n.cond)
        elif not (isinstance(n, Unary) and n.op == "sizeof"):
            stack.extend(children(n))
    return False


def certain_writes(s: str, c_name: str, refs: list[_Ref]) -> list[_Ref]:
    """The writes of `s` (`c_name` in the source) that run in every iteration of the loop directly around
    them (in no part of an expression that may be skipped), without reading `s` first (`t = t + 1` passes the
    previous value on): under no `if` inside that loop, or one in each branch of such an `if` (`if (c) t = a;
    else t = b;`, through `else if` chains), which counts as one write where the later of them is."""
    out, branched = [], []
    for inside, r in _unread_writes(s, c_name, refs):
        (branched if inside else out).append((inside, r))
    return [r for _, r in out] + _both_branches(branched)


def _unread_writes(s: str, c_name: str, refs: list[_Ref]) -> list[tuple[tuple, _Ref]]:
    """The writes of `s` that surely assign it when their statement runs, without reading it first, each with
    the guards inside its loop that hold it (outermost first; () when none does)."""
    out = []
    for r in refs:
        w = r.site.stmt
        if r.kind != "write" or r.site.guard is not None or not w.loop_ids:
            continue
        # (`for (k = rowstr[j]; ...)` run whole assigns k first, whatever the rest of it reads)
        if not _starts_loop(w, c_name) and (s in w.scalar_reads or not surely_assigns(w.syntax, c_name)):
            continue                          # `x[i] = a[i] > 0 && (t = a[i]);`
        # guards of `if`s around the innermost loop are fixed for all its iterations; one inside it makes the
        # write conditional
        inside = tuple(g for g in w.guards if guard_depth(g, r.site.chain) == len(r.site.chain))
        out.append((inside, r))
    return out


def _in_its_branch(guards: tuple, w: _Ref, x: _Ref) -> bool:
    """Whether the write `w`, under `guards` inside its loop, runs before the read `x` whenever `x` runs: `x` sits
    in the same loop or in a loop inside it, later, under the same branches of the same `if`s in that loop (EP's
    `if (t1 <= 1.0) { l = ...; qq[l] += 1.0; }`; LU's setiv: `if (jglob != 0 && ...) { eta = ...; for (i ...)
    ... eta ... }`): one evaluation of each condition decides both."""
    depth = len(w.site.chain)
    if [l.lid for l in x.site.chain[:depth]] != [l.lid for l in w.site.chain] or not _before(w.site.stmt, x.site.order):
        return False
    held = x.site.stmt.guards if x.site.guard is None else x.site.guards
    mine = [g for g in held if guard_depth(g, x.site.chain) == depth]
    return len(mine) >= len(guards) and all(_same_branch(a, b) for a, b in zip(guards, mine))


def _same_branch(a, b) -> bool:
    """Whether two guards are one branch of one `if` (Guard.site: not two copies of it, which may decide
    differently)."""
    return a.site == b.site and a.negated == b.negated


def _both_branches(writes: list[tuple[tuple, _Ref]]) -> list[_Ref]:
    """The writes among `writes` (each with the guards inside its loop that hold it, outermost first) that
    together run in every iteration of their loop: two writes in the same loop whose guards differ only in the
    last, the same `if`'s condition taken one way and the other, stand for one write under the guards they
    share, where the later of them is; repeated until no pair is left."""
    pending = list(writes)
    certain: list[_Ref] = []
    merged = True
    while merged and pending:
        merged = False
        for a in range(len(pending)):
            for b in range(a + 1, len(pending)):
                (ga, ra), (gb, rb) = pending[a], pending[b]
                if len(ga) != len(gb) or ra.site.stmt.loop_ids[-1] != rb.site.stmt.loop_ids[-1] \
                        or not all(_same_branch(x, y) for x, y in zip(ga[:-1], gb[:-1])) \
                        or ga[-1].site != gb[-1].site or ga[-1].negated == gb[-1].negated:
                    continue
                later = max(ra, rb, key=lambda r: r.site.stmt.sid)
                pending = [x for k, x in enumerate(pending) if k not in (a, b)]
                if ga[:-1]:
                    pending.append((ga[:-1], later))
                else:
                    certain.append(later)
                merged = True
                break
            if merged:
                break
    return certain


def _starts_loop(w: Statement, c_name: str) -> bool:
    """Whether `w` is a `for` loop run whole (Statement kind "loop") whose first clause assigns `c_name` from
    values that do not include it, or that runs its body at least once and whose body assigns it first
    (`for (i = 1; i <= 100; i++) { ik = kk / 2; ... break; ... }`): before anything else of the loop reads it."""
    loop = w.syntax
    if w.kind != "loop" or not isinstance(loop, For):
        return False
    var = Name(c_name)
    if not surely_assigns(loop.init, c_name):
        header = [n for part in (loop.init, loop.cond, loop.next) for n in walk(part)]
        return _runs_once(loop) and var not in header and _assigned_first(loop.body, c_name)
    return var not in walk(loop.init.value if isinstance(loop.init, Assign) else loop.init)


def _runs_once(loop: For) -> bool:
    """Whether the `for` surely runs its body once: `var = c1` first, and the condition compares var with a
    constant and holds for c1 (NPB EP's `for (i = 1; i <= 100; i++)`)."""
    match loop.init:
        case Decls((Decl(name, _, value),)):
            var, first = name, int_constant(value)
        case Assign("=", Name(name), value):
            var, first = name, int_constant(value)
        case _:
            return False
    cond = loop.cond
    if first is None or not (isinstance(cond, Binary) and cond.left == Name(var)):
        return False
    bound = int_constant(cond.right)
    return bound is not None and cond.op in ("<", "<=", ">", ">=", "!=") and _TRUTH_OPS[cond.op](first, bound)


def _assigned_first(body, c_name: str) -> bool:
    """Whether the statements of `body`, in order, surely assign `c_name` (from values without it) before
    anything mentions it, with nothing before that may leave the body (break, continue, return, goto)."""
    var = Name(c_name)
    for item in body.items if isinstance(body, Block) else (body,):
        if isinstance(item, Assign) and item.target == var and item.op == "=":
            return var not in walk(item.value)
        if any(isinstance(n, Jump) or n == var for n in walk(item)):
            return False
    return False


def _before(w: Statement, order: float) -> bool:
    """Whether the write `w` runs before a read at `order` in the same iteration: an earlier statement, or the
    first clause of a loop run whole, before the rest of that loop (`_starts_loop`)."""
    return w.sid < order or (w.sid == order and w.kind == "loop")


def privatizable(s: str, c_name: str, lp: Loop, refs: list[_Ref]) -> Privatization | None:
    """How every read of `s` inside `lp` sees a value written earlier in the same iteration of `lp`, or None.

    A read is covered by a certain write (see `certain_writes`) that sits directly in the body of a loop M
    (M is `lp` or inside it) whose body also holds the read, earlier in the text: in the iteration of M
    that runs the read, the write ran before it.  A write in an inner loop that does not hold the read
    covers nothing (that loop may run zero times).  Reads in conditions count (`refs` has them).
    """
    writes = certain_writes(s, c_name, refs)
    guarded = [(g, w) for g, w in _unread_writes(s, c_name, refs) if g]
    if not writes and not guarded:
        return None
    for x in refs:
        if x.kind != "read":
            continue
        held_by = {l.lid for l in x.site.chain}
        if not any(w.site.stmt.loop_ids[-1] in held_by and _before(w.site.stmt, x.site.order) for w in writes) \
                and not any(_in_its_branch(g, w, x) for g, w in guarded):
            return None
    first = min((w.site.stmt for w in writes + [w for _, w in guarded]), key=lambda st: st.sid)
    every = any(w.site.stmt.loop_ids[-1] == lp.lid for w in writes)
    return Privatization(first, every, not every and any(all_or_none(lp, w) for w in writes))


def all_or_none(lp: Loop, w: _Ref) -> bool:
    """Whether the write `w`, in a loop inside `lp`, runs in every iteration of the nest or in none: each loop
    between `lp` and it runs a number of times that depends on the nest's parameters alone (no loop variable),
    and no `if` inside `lp` holds it or them (BT's `tmp1 = 1.0/u[i][j][k][0]` in k, privatized for i)."""
    chain = w.site.chain
    k = next((n for n, l in enumerate(chain) if l.lid == lp.lid), None)
    if k is None:
        return False
    loop_vars = {l.var for l in chain}
    for inner in chain[k + 1:]:
        if inner.trip_count is None or inner.trip_count.variables & loop_vars:
            return False
        if any(guard_depth(g, chain) > k for g in inner.guards):
            return False
    return not any(guard_depth(g, chain) > k for g in (*w.site.stmt.guards, *w.site.guards))


def live_after(s: str, c_name: str, lp: Loop, refs: list[_Ref], around: set[int]) -> str:
    """Why the value `s` has after `lp` is needed inside the nest ("" when it is not), which privatizing
    would lose: a read outside the loop (in the enclosing loops) that may see the last iteration's value.

    A read outside `lp` does not when it is covered (see `privatizable`) by a certain write in the body of a
    loop M that holds the read but not `lp` (`around`: the lids of `lp` and the loops around it): each
    iteration of M runs wholly before or after `lp`, and writes `s` before that read (ludcmp's `w = A[i][j]`
    before `w -= ...` in the j loop before the one being judged).  A write in the body of a loop around `lp`
    covers the reads after it when it comes after `lp` in the text: in that iteration `lp` has run, then the
    write (SP's z_solve: `k1 = k + 1` in the k loop, privatized for i and j, then `k1 = n - 1;` after the i
    loop, before the reads of the last rows)."""
    last = max((st.sid for st in lp.statements()), default=-1)
    writes = [w for w in certain_writes(s, c_name, refs)
              if w.site.stmt.loop_ids[-1] not in around or w.site.stmt.sid > last]
    for r in refs:
        if r.kind == "read" and lp.lid not in (l.lid for l in r.site.chain):
            held_by = {l.lid for l in r.site.chain}
            if not any(w.site.stmt.loop_ids[-1] in held_by and _before(w.site.stmt, r.site.order) for w in writes):
                return f"{r.describe()} reads it outside the loop"
    return ""


def outlives_nest(s: str, info: ScalarInfo | None, nest: Nest) -> bool:
    """Whether the code after the nest may read `s`: then a private copy's last value must be kept
    (lastprivate: the port stores the last iteration's value; a loop variable's exit value it computes
    from the bounds)."""
    if info is not None and info.declared_in is not None:
        return False
    if any(l.source_var == s and not l.declared_in_header for l in nest.loops()):
        return False
    return info is None or info.exposed or s in nest.live_after
