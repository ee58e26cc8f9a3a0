"""Wavefronts: two nested loops that both carry dependences, run as a sequence of parallel fronts.

seidel-2d's `for i { for j { A[i][j] = f(A[i-1][j-1], ..., A[i+1][j+1]) } }` carries dependences on both
loops, so neither maps to threads.  But every dependence goes from an iteration (i, j) to one with a larger
`2*i + j`: the iterations of one front `w = 2*i + j` are independent, and running the fronts in order keeps
every dependence.  PPCG finds such schedules with isl's scheduler (skewing, then a parallel band); c2gpu
looks for the one schedule a CUDA programmer writes by hand: a host loop over the fronts, one launch per
front with a thread per `i`, and `j = w - k*i` in each thread (seidel-2d k = 2, floyd-warshall and
nussinov k = 1).

Legality (`find`): with the loops normalized (both run from 0 by 1), the front of iteration (i, j) is
k*i + j.  For every dependence either loop carries, isl's set of distances (d_i, d_j) must lie in
k*d_i + d_j >= 1, i.e. the sink's front is later than the source's; the smallest k from 1 to MAX_FACTOR
that holds is taken.  Dependences carried by the loops around them stay with the host loops, those inside
one iteration (carried by inner loops, or loop-independent) stay in its thread, in order.

The rewrite (`rewritten`) is a syntax tree, built node by node (transform/syntax.py): the nest becomes

    for (int c2gpu_wave = 0; c2gpu_wave < WAVES; c2gpu_wave++)
      for (i ...as written...) {
        int j = START_J + STEP_J * (c2gpu_wave - k * I_N);
        if (c2gpu_wave - k * I_N >= 0 && COND_J)
          BODY
      }

and described again by the frontend, so the dependence analysis proves the `i` loop parallel (or not) on the
C that is ported, as for any nest; the port is checked against the original C like any other.
"""
from __future__ import annotations

from dataclasses import replace

import islpy as isl
from typing import Any

from ..analysis import isl_sets as ph
from ..ir import Loop, Nest
from ..syntax_tree import Assign, Binary, Block, Decl, Decls, Empty, For, If, Name, Unary
from .normalize import normalize_nest
from .syntax import declaration, integer, isl_expr, placed, replace_node
from ..records import dataclass

MAX_FACTOR = 4
DEPENDENCES = ("flow", "anti", "output")      # reasons a loop is sequential that a wavefront can respect
WAVE = "c2gpu_wave"


@dataclass(frozen=True)
class Wavefront:
    """A wavefront schedule for two nested loops: the front of iteration (i, j) is factor*i + j."""
    outer: Loop          # i (normalized)
    inner: Loop          # j: the whole body of i
    factor: int          # k: the front of iteration (i, j) is k*i + j, in normalized iterations
    waves: Any           # the number of fronts, over the nest's parameters (a syntax tree)
    depth: int           # loops around `outer`


def _only_child(lp: Loop) -> Loop | None:
    if lp.perfect and len(lp.body) == 1 and isinstance(lp.body[0], Loop) and lp.body[0].header_stmt is None:
        return lp.body[0]
    return None


def _later(deltas: isl.Set, depth: int, k: int) -> bool:
    """Whether every distance in `deltas` puts the sink on a later front: k*d[depth] + d[depth+1] >= 1."""
    n = deltas.dim(isl.dim_type.set)
    xs = [f"x{m}" for m in range(n)]
    return deltas.is_subset(isl.Set(f"{{ [{', '.join(xs)}] : {k}*x{depth} + x{depth + 1} >= 1 }}"))


def find(nest: Nest, deps) -> Wavefront | None:
    """The innermost pair of perfectly nested loops that both carry dependences and run as fronts, or None.

    Only nests whose dependences are all known qualify: no flag (call, aliasing, non-affine access), every
    reason the two loops are sequential a proven dependence with its distances."""
    if nest.all_flags():
        return None
    found = None

    def walk(lp: Loop, path: list[Loop]) -> None:
        nonlocal found
        inner = _only_child(lp)
        if inner is not None and _candidate(lp, inner, deps, nest):
            wf = _factor(nest, deps, path, lp, inner)
            if wf is not None:
                found = wf if found is None or wf.depth >= found.depth else found
        for n in lp.body:
            if isinstance(n, Loop):
                walk(n, path + [lp])
    walk(nest.root, [])
    return found


def _candidate(outer: Loop, inner: Loop, deps, nest: Nest) -> bool:
    for lp in (outer, inner):
        v = deps.verdicts.get(lp.lid)
        if v is None or v.status != "carried" or any(r.kind not in DEPENDENCES for r in v.reasons):
            return False
        if not lp.normalized or lp.trip_count is None or lp.lower_pieces or lp.upper_pieces or lp.syntax is None:
            return False
    # the rewrite declares j in the body and runs i once per front: C's values of them after the nest change
    names = {lp.source_var for lp in (outer, inner)}
    return not names & set(nest.live_after)


def _factor(nest: Nest, deps, path: list[Loop], outer: Loop, inner: Loop) -> Wavefront | None:
    carried = [d for d in deps.dependences if d.loop in (outer.lid, inner.lid)]
    if not carried or any(d.deltas is None for d in carried):
        return None
    depth = len(path)
    k = next((k for k in range(1, MAX_FACTOR + 1) if all(_later(d.deltas, depth, k) for d in carried)), None)
    if k is None:
        return None
    waves = _waves(nest, path + [outer, inner], k)
    return None if waves is None else Wavefront(outer, inner, k, waves, depth)


def _waves(nest: Nest, loops: list[Loop], k: int):
    """1 + the largest front k*i + j over the whole domain, as C over the parameters (None: not one affine
    expression where the nest runs at all)."""
    names = {lp.var: ph.dim(lp.lid) for lp in loops}
    dims = [names[lp.var] for lp in loops]
    cons = ph.domain_constraints(loops, names)
    i, j = dims[-2], dims[-1]
    s = isl.Set(f"[{', '.join(nest.params)}] -> {{ [{', '.join(dims)}, c2gpu_w] : c2gpu_w = {k}*{i} + {j} and "
                f"{' and '.join(cons)} }}")
    top = s.dim_max(len(dims)).gist_params(s.params())
    pieces = top.get_pieces()
    if len(pieces) != 1:
        return None
    front = ph.ast_expr(isl.PwAff.from_aff(pieces[0][1]), list(nest.params))
    return Binary("+", isl_expr(front), integer(1))


# --------------------------------------------------------------------------- the rewrite

def _start(node: For):
    """The start value of a for loop's variable (`i = 1` or `int i = 1`)."""
    match node.init:
        case Assign("=", _, value):
            return value
        case Decls((Decl(_, _, init),)):
            return init
    return None


def rewritten(nest: Nest, wf: Wavefront, describe_again) -> Nest | None:
    """The nest with `wf`'s loops run as fronts (module docstring), described again (`describe_again`: the
    frontend's FileLowerer.describe_again) and normalized; None when
    the C cannot be written (an unusual loop header) or described."""
    f1, f2 = wf.outer.syntax, wf.inner.syntax
    start1, start2 = _start(f1), _start(f2)
    if start1 is None or start2 is None or f2.cond is None:
        return None
    i_c = wf.outer.source_var
    j_c = wf.inner.source_var
    step1 = wf.outer.origin.step if wf.outer.origin else 1
    step2 = wf.inner.origin.step if wf.inner.origin else 1
    used = {lp.var for lp in nest.loops()} | {s.source_name for s in nest.scalars} | set(nest.params)
    if WAVE in used:
        return None

    def front():
        """c2gpu_wave - k * (the iteration of i, counted from 0)"""
        i_n = Binary("-", Name(i_c), start1) if step1 == 1 else \
            Binary("-", start1, Name(i_c)) if step1 == -1 else \
            Binary("/", Binary("-", Name(i_c), start1), integer(step1))
        return Binary("-", Name(WAVE), Binary("*", integer(wf.factor), i_n))

    #   for (int c2gpu_wave = 0; c2gpu_wave < WAVES; c2gpu_wave++)
    #     for (i ...as written...) { T j = START_J + STEP_J * FRONT; if (FRONT >= 0 && COND_J) BODY }
    # (what c2gpu writes stands where the loops are written: the wave loop and i's body at i, j's value and
    # condition at j)
    decl = placed(declaration(j_c, wf.inner.c_type, Binary("+", start2, Binary("*", integer(step2), front()))),
                  f2.at)
    cond = placed(If(Binary("&&", Binary(">=", front(), integer(0)), f2.cond), Empty(), None), f2.at)
    for_i = For(f1.init, f1.cond, f1.next, Block((decl, replace(cond, then=f2.body)), f1.at), f1.at)
    waves = placed(For(Decls((declaration(WAVE, "int", integer(0)),)), Binary("<", Name(WAVE), wf.waves),
                       Unary("p++", Name(WAVE)), Empty()), f1.at)
    root = replace_node(nest.root.syntax, f1, replace(waves, body=for_i))
    try:
        new = describe_again(nest, root)
    except Exception:                # the frontend refuses what it cannot describe: then no wavefront
        return None
    lines = f"lines {f1.at.line}-{f2.at.line}" if f1.at.line != f2.at.line else f"line {f1.at.line}"
    front_text = f"{wf.factor} x (iteration of '{i_c}') + (iteration of '{j_c}')" if wf.factor > 1 else \
        f"(iteration of '{i_c}') + (iteration of '{j_c}')"
    note = (f"wavefront: loops '{i_c}' and '{j_c}' ({lines}) both carry dependences, but every one of them goes to "
            f"a later front, front = {front_text}, iterations counted from 0: the fronts run one after another "
            f"({WAVE} on the host, a launch each), the iterations of a front in parallel ('{i_c}' on threads, "
            f"'{j_c}' computed from the front)")
    return replace(normalize_nest(new), name=nest.name, rewrites=nest.rewrites + (note,))
