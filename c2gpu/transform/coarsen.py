"""Thread coarsening: each thread of a kernel computes several consecutive iterations of one mapped loop.

gemm's kernel maps `i` and `j` and runs `k` in each thread: `C[i][j] += alpha * A[i][k] * B[k][j]`.  A CUDA
programmer (and PPCG, 2 rows per thread) gives each thread two rows, `i` and `i + 1`, and runs both inside one
`k` loop (unroll-and-jam), so that `B[k][j]` is read once for two results and each thread has two independent
accumulators in flight:

    for (i = 0; i < ni; i += 2)            // the grid's loop: one thread per pair of rows
      for (j = 0; j < nj; j++)
        for (k = 0; k < nk; k++) {
          C[i][j] += alpha * A[i][k] * B[k][j];
          if (i + 1 < ni)                  // the last thread's second row, when ni is odd
            C[i + 1][j] += alpha * A[i + 1][k] * B[k][j];
        }

That is the kernel's view of the nest (transform/reorder.py) rewritten as a syntax tree and described again by
the frontend, so that the shared-memory tiles (a block's rows of A are twice as many), the registers (each row's
accumulator; planning/promotion.py keeps one under the invariant condition), the models and the printer read it
as any nest: this module is the only place that knows about coarsening.  It is a candidate structure of the
search (passes/mapping.py structures), kept when the model predicts it faster.

Legal because the loop is mapped: the dependence analysis proved that no iteration of it depends on another, so
running two of them in one thread, interleaved statement by statement, computes what the C computes.  The
rewritten view is analysed again all the same, and the candidate is dropped unless every mapped loop of it is
proven parallel.  A scalar the thread writes gets a copy per row (`sum`, `c2gpu_sum_1`, ...); one declared
outside the nest takes the last row's value at the end of each thread's body, so that it leaves the nest with
the value C leaves.  Only plain kernels qualify: assignments (no call but the math library's, no condition; each
scalar declared in the body or assigned before anything reads it), a loop in each thread (the reuse this is
for), and no loop inside the coarsened one whose bounds depend on it or on a scalar the thread writes.  The
coarsened loop is the grid's y (x stays one element per thread, so that a warp's accesses stay coalesced)."""
from __future__ import annotations

from dataclasses import replace

from ..frontend.libc import MATH_FUNCTIONS
from ..ir import Loop, Nest
from ..planning.plan import Kernel, Mapping
from ..syntax_tree import Assign, Binary, Block, Decl, For, If, Name, rebuilt, walk
from .normalize import normalize_nest
from .syntax import declaration, integer, placed, replace_node

FACTORS = (2, 4)            # consecutive iterations per thread the search compares (PPCG's default for gemm: 2)
SIGNED = ("int", "long", "long int", "long long", "long long int", "short", "signed", "signed int")


def coarsened(nest: Nest, kernel: Kernel, factor: int, describe_again, proven_parallel) -> Kernel | None:
    """`kernel` with each thread running `factor` consecutive iterations of its grid's y loop, jammed into the
    loops inside; None when it does not qualify (module doc).

    describe_again:  the frontend's FileLowerer.describe_again (the view rewritten as C, described again).
    proven_parallel: (nest, lids) -> whether the dependence analysis proves those loops of `nest` parallel."""
    view = kernel.view or nest
    by_id = {lp.lid: lp for lp in view.loops()}
    target = next((m for m in kernel.loops if m.dim == "y"), None)
    if target is None or not _plain(kernel, by_id):
        return None
    loop = by_id[target.lid]
    var = loop.source_var
    step = loop.origin.step if loop.origin else loop.step
    head, body_of = loop.syntax, by_id[kernel.body_lid].syntax
    if step != 1 or loop.c_type not in SIGNED or not isinstance(head, For) or head.cond is None:
        return None
    inside = [lp for lp in loop.loops() if lp is not loop]
    if any(_names(lp.syntax.init, lp.syntax.cond, lp.syntax.next) & {var} for lp in inside):
        return None                     # a loop whose bounds move with the coarsened one (syrk's j <= i)
    if not any(a.affine and all(x is not None and loop.var not in x.variables for x in a.subscripts)
               for s in kernel.statements(by_id) for a in s.accesses):
        return None                     # nothing the iterations share: fewer threads, no reuse
    scalars = _private_scalars(kernel, view, by_id)
    if scalars is None or any(_names(lp.syntax.init, lp.syntax.cond, lp.syntax.next) & {v for v, _ in scalars}
                              for lp in inside):
        return None                     # a loop whose bounds a row's own scalar sets: one header cannot serve all
    under_root = {id(n) for n in walk(view.root.syntax)}
    if not isinstance(body_of, For) or id(head) not in under_root or id(body_of) not in under_root:
        return None                     # the loops' syntax is not the view's tree
    jam = _Jam(var, head.cond, factor, {v for v, _ in scalars}, body_of)
    # the copies of a scalar declared outside the nest are declared where each thread's body starts; where it
    # ends, the scalar takes the value of the last copy that ran, the last row's as in C (the port stores the
    # value C leaves in it, c2gpu/codegen/kernel.py)
    outside = [v for v, ctype in scalars if ctype]
    jam.declare = [placed(declaration(jam.renamed(v, c), ctype, None), head.at) for v, ctype in scalars if ctype
                   for c in range(1, factor)]
    jam.finish = [placed(If(jam.copy(head.cond, c), Assign("=", Name(v), Name(jam.renamed(v, c))), None), head.at)
                  for c in range(1, factor) for v in outside]
    try:
        new_head = replace(head, next=placed(Assign("+=", Name(var), integer(factor)), head.at),
                           body=jam.body(head.body, head is jam.decl_at))
    except _NotPlain:
        return None
    root = replace_node(view.root.syntax, head, new_head)
    try:
        described = normalize_nest(describe_again(nest, root))
    except Exception:                   # noqa: BLE001 - C the frontend cannot describe: not a candidate
        return None
    new_loops = {lp.lid: lp for lp in described.loops()}
    if set(new_loops) != set(by_id) or any(new_loops[lid].source_var != lp.source_var for lid, lp in by_id.items()):
        return None                     # not the same loops in the same places
    if not proven_parallel(described, [m.lid for m in kernel.loops]):
        return None
    mapped_lids = {m.lid for m in kernel.loops}
    jammed = ", ".join(repr(lp.source_var) for lp in inside if lp.lid not in mapped_lids)
    why = (f"; each thread computes {factor} consecutive iterations of '{var}' (thread coarsening"
           f"{', jammed into loop ' + jammed if jammed else ''}: what one reads for all of them it reads once)")
    mapped = tuple(replace(m, var=new_loops[m.lid].var, trip=new_loops[m.lid].trip_count,
                           origin=new_loops[m.lid].origin, coarsened=factor if m is target else 1)
                   for m in kernel.loops)
    return replace(kernel, loops=mapped, view=described, why=kernel.why + why)


def coarsened_mappings(nest: Nest, mapping: Mapping, describe_again, proven_parallel, resident: int,
                       env: dict) -> tuple[Mapping, ...]:
    """`mapping` with every kernel that qualifies coarsened, once per factor of FACTORS (none: no kernel does).

    A kernel is coarsened by a factor only when it has at least that many times `resident` threads (the threads
    the GPU runs at once: SMs x threads per SM) for the sizes `env`: coarsening trades threads for reuse, which
    pays once the GPU is full, and every candidate costs the search a prediction (a bound on the search, as
    MAX_HOST_LOOPS is in passes/mapping.py; a grid whose size the sizes do not fix is not coarsened)."""
    out = []
    for factor in FACTORS:
        changed = False

        def fix(item):
            nonlocal changed
            if isinstance(item, Kernel):
                new = coarsened(nest, item, factor, describe_again, proven_parallel) \
                    if _threads(item, env) >= factor * resident else None
                changed = changed or new is not None
                return new or item
            return replace(item, body=tuple(fix(x) for x in item.body))
        items = tuple(fix(x) for x in mapping.items)
        if not changed:
            break                       # no kernel qualifies, for any factor
        out.append(replace(mapping, items=items, alternatives=()))
    return tuple(out)


def _threads(kernel: Kernel, env: dict) -> float:
    """The kernel's threads for the sizes `env` (0 when they do not fix its grid)."""
    n = 1.0
    for m in kernel.loops:
        if m.trip is None or not m.trip.variables <= env.keys():
            return 0.0
        n *= m.trip.evaluate(env)
    return n


class _NotPlain(Exception):
    """A body the jam does not rewrite."""


class _Jam:
    """The rewrite of the coarsened loop's body: each statement followed by its copies for var + 1, ...,
    var + factor - 1, each under the loop's condition for that value, with the scalars the body writes renamed
    in each copy (`sum` -> `c2gpu_sum_1`); loops (whose bounds do not read var) keep one header around their
    copies."""

    def __init__(self, var: str, cond, factor: int, scalars: set[str], decl_at: For):
        self.var, self.cond, self.factor, self.scalars, self.decl_at = var, cond, factor, scalars, decl_at
        self.declare: list[Decl] = []     # at the start of the thread's body (decl_at's)
        self.finish: list = []            # at its end

    @staticmethod
    def renamed(name: str, c: int) -> str:
        return f"c2gpu_{name}_{c}"

    def body(self, node, declare: bool = False) -> Block:
        items = list(self.declare) if declare else []
        for item in node.items if isinstance(node, Block) else (node,):
            items.extend(self.item(item))
        return Block(tuple(items + (list(self.finish) if declare else [])), node.at)

    def item(self, item) -> list:
        if isinstance(item, For):
            return [replace(item, body=self.body(item.body, item is self.decl_at))]
        if isinstance(item, Block):
            return [self.body(item)]
        if isinstance(item, Decl):
            # a scalar's declaration (`double t = ...`, as its statement says: its declarator is its name)
            if item.name not in self.scalars or not item.head.endswith(" " + item.name):
                raise _NotPlain
            out = [item]
            for c in range(1, self.factor):
                name = self.renamed(item.name, c)
                head = item.assignable or item.head        # (declared here, assigned below)
                out.append(Decl(name, head[:-len(item.name)] + name, None, item.at, like=item))
                if item.init is not None:
                    set_it = Assign("=", Name(item.name), item.init, item.at)
                    out.append(If(self.copy(self.cond, c), self.copy(set_it, c), None, item.at))
            return out
        if not isinstance(item, Assign):
            raise _NotPlain
        return [item] + [If(self.copy(self.cond, c), self.copy(item, c), None, item.at)
                         for c in range(1, self.factor)]

    def copy(self, node, c: int):
        """A copy of `node` for var + c: every use of var replaced by `var + c`, every scalar renamed."""
        def shifted(n):
            if not isinstance(n, Name):
                return n
            if n.name == self.var:
                return placed(Binary("+", Name(self.var), integer(c)), n.at)
            return Name(self.renamed(n.name, c), n.at) if n.name in self.scalars else n
        return rebuilt(node, shifted)


def _plain(kernel: Kernel, by_id: dict[int, Loop]) -> bool:
    """Assignments only (to arrays and to the thread's own scalars), with a loop inside each thread, nothing the
    threads share."""
    if (kernel.reductions or kernel.element_ranges or kernel.fixed_threads or kernel.serial or kernel.private_arrays
            or kernel.scratch_arrays or len(kernel.loops) < 2 or not kernel.inner_loops(by_id)):
        return False
    loops = kernel.inner_loops(by_id) + [by_id[m.lid] for m in kernel.loops]
    if any(lp.guards or lp.header_stmt is not None or lp.lower_pieces or lp.upper_pieces or lp.syntax is None
           for lp in loops):
        return False
    return all(s.kind in ("assign", "decl") and s.syntax is not None and not s.guards and not s.scatter
               and set(s.calls) <= set(MATH_FUNCTIONS) for s in kernel.statements(by_id))


def _private_scalars(kernel: Kernel, view: Nest, by_id: dict[int, Loop]) -> list[tuple[str, str]] | None:
    """The scalars the thread's body writes, as (C name, C type to declare a copy with: "" for one the body
    declares itself), when each is the thread's own: declared in the body, or assigned with `=` before anything
    reads it, at the body's top level (not in a loop inside it; the value C leaves in it after the nest is the last
    row's: coarsened() copies it back).  None when one is not."""
    stmts = kernel.statements(by_id)
    depth = min((len(s.loop_ids) for s in stmts), default=0)
    top = {s.sid for s in stmts if len(s.loop_ids) == depth}
    infos = {sc.name: sc for sc in view.scalars}
    out = []
    for name in dict.fromkeys(v for s in stmts for v in s.scalar_writes):
        info = infos.get(name)
        if info is None or info.exposed or not info.source_name.isidentifier():
            return None
        if any(s.decl == name for s in stmts):
            out.append((info.source_name, ""))
            continue
        first = next(s for s in stmts if name in s.scalar_writes or name in s.scalar_reads)
        if first.sid not in top or first.assign_op != "=" or name in first.scalar_reads:
            return None                 # its value may come from before the thread's iteration
        out.append((info.source_name, info.ctype))
    if len({name for name, _ in out}) != len(out):
        return None                     # two scalars of one C name (in different scopes)
    return out


def _names(*trees) -> set[str]:
    return {n.name for t in trees if t is not None for n in walk(t) if isinstance(n, Name)}
