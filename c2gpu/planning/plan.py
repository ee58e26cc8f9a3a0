"""The plan of a ported nest: what runs where on the GPU, as data.

The mapping pass decides which loops become the CUDA grid (`Kernel`, `MappedLoop`) and which stay on the
host (`HostLoop`); the shared-memory pass finds the tiles worth staging (`SharedOpportunity`) and picks them
by greedy knapsack (`KernelSharedPlan`); the plan pass (c2gpu/passes/finalize_plan.py) then makes the last decisions, the
block shape of every kernel and the shared-memory budget (by predicted time when a GPU is given), and hands
on one `NestPlan`.  Code generation, the port and the reports accept only a `NestPlan` (`require_plan`),
so none of them re-derives a decision.  Sizes are polynomials (`Sym`) and integers, never C text.
"""
from __future__ import annotations

import math
from dataclasses import field, replace

from ..ir import Access, Loc, Loop, Nest, Origin, Reduction, Statement
from ..symbolic import Poly, Sym
from ..records import dataclass


@dataclass(frozen=True)
class MappedLoop:
    """A loop of the nest mapped to one dimension (x, y or z) of a kernel's grid of threads."""
    lid: int
    var: str              # normalized variable (thread index)
    dim: str              # "x", "y" or "z"
    trip: Sym
    origin: Origin | None  # the C loop variable in terms of `var`, when normalization rewrote the loop
    c_var: str            # the loop variable as the C code names it
    loc: Loc
    coarsened: int = 1    # consecutive iterations of the C loop each thread runs (transform/coarsen.py): the view's
    #                       loop counts groups of them
    turns: int = 0        # how the loop's iterations are spread over the threads along `dim`.  0: one per thread,
    #                       the grid's blocks along `dim` covering the loop.  n > 0: one block along `dim`, whose n
    #                       threads take turns over them (var = threadIdx + k * n; cyclic, so that a warp's reads
    #                       along the loop coalesce); the block then has n threads along `dim`


def power_of_two_needed(block) -> bool:
    """Whether a reduction tree cannot fold `block`: its thread count is not a power of two."""
    threads = block[0] * block[1] * block[2]
    return bool(threads & (threads - 1))


def fixed_threads(loops: tuple[MappedLoop, ...]) -> dict[str, int]:
    """The block dimensions whose thread count a loop taking turns fixes (MappedLoop.turns): dim -> threads."""
    return {m.dim: m.turns for m in loops if m.turns}


@dataclass(frozen=True)
class ElementRange:
    """An array reduction whose element the loops inside the thread choose (`rms[m] += ...` over the grid, m from
    0 to 4): each thread keeps a partial result per iteration of those loops, and the block folds each one into
    the element it updates (a tree per partial, then one atomic each)."""
    target: str                               # the reduction's target as written ("rms[m]")
    loops: tuple[tuple[str, int, str, int, int], ...]   # per loop indexing it, outermost first: (normalized
    #                                           variable, its first value, C variable, its first value, iterations)

    @property
    def count(self) -> int:
        return math.prod(trips for *_, trips in self.loops)

    def points(self) -> list[dict[str, int]]:
        """The normalized variables' values of each partial, in the order of the thread's array of partials."""
        out: list[dict[str, int]] = [{}]
        for var, first, _c_var, _c_first, trips in self.loops:
            out = [{**p, var: first + t} for p in out for t in range(trips)]
        return out

    def index_c(self) -> str:
        """The partial a thread updates, as C over the loops' C variables (row-major over the loops)."""
        index = ""
        for _var, _first, c_var, c_first, trips in self.loops:
            term = f"({c_var} - {c_first})" if c_first else c_var
            index = term if not index else f"({index}) * {trips} + {term}"
        return index


# threads taking turns over a split reduction's loop (MappedLoop.turns): a warp per row, as a CUDA programmer
# splits a matrix-vector product's rows (the row's reads of A[i][j] then coalesce, and the tree runs within the warp)
SPLIT_THREADS = 32
# or a block per row, when the rows are too few for a warp each to fill the GPU (a segmented reduction: a block
# folds each segment, as CUB's BlockReduce per segment); the search compares both
ROW_BLOCK_THREADS = 256
WHOLE_BLOCK = "xyz"


@dataclass(frozen=True)
class Kernel:
    """A launch.  A mapped kernel runs the body of its innermost mapped loop in each thread; a one-thread
    kernel (`serial`, no mapped loop) runs some items of a host loop's body as written, so that the code
    between two parallel kernels stays on the device with the data."""
    name: str
    loops: tuple[MappedLoop, ...]     # outermost first (empty for a one-thread kernel)
    body_lid: int                     # the innermost mapped loop (one-thread kernel: the host loop around it)
    block: tuple[int, int, int]
    reductions: tuple[Reduction, ...]  # scalar reductions across threads (block tree + atomics)
    why: str
    element_ranges: tuple[ElementRange, ...] = ()   # the reductions of elements loops inside the thread choose
    tree_dims: str = WHOLE_BLOCK   # the block dimensions each reduction tree folds along: the whole block (one
    #                       tree, one atomic per block), or one of them (a split reduction, `y[i] += ...` over j
    #                       with i mapped and j's iterations taken in turns by the threads along its dimension:
    #                       a tree per row of the others, one i, each row's total one atomic on its element)
    serial: tuple[int, ...] = ()      # one-thread kernel: the positions in loop body_lid's body it runs
    private_arrays: tuple[str, ...] = ()   # arrays each thread has a copy of (the dependence pass privatized them
    #                                   for a mapped loop): declared in the kernel, never copied
    scratch_arrays: tuple[str, ...] = ()   # those of them too large for a thread's local memory: in device memory,
    #                                   element e of thread t at e * threads + t (interleaved, as local memory is)
    view: "Nest | None" = field(default=None, compare=False, repr=False)   # the nest as this kernel runs it, after
    #                                   distribution and interchange (c2gpu/transform/reorder.py); loops and body_lid are
    #                                   its loops.  None: the nest itself

    def __post_init__(self):
        if self.tree_dims != WHOLE_BLOCK and self.tree_dims not in {m.dim for m in self.loops}:
            raise ValueError(f"a reduction tree folds the whole block or one mapped dimension, not {self.tree_dims!r}")

    @property
    def fixed_threads(self) -> dict[str, int]:
        return fixed_threads(self.loops)

    def takes_block(self, block) -> bool:
        """Whether this kernel can run with block shape `block`: the thread counts its loops fix, and a power
        of two for a block with reduction trees (whole, or along a dimension: the others follow the default's
        powers of two)."""
        return all(block["xyz".index(d)] == n for d, n in self.fixed_threads.items()) and \
            not (self.reductions and power_of_two_needed(block))

    def tree_threads(self, block) -> int:
        """The threads one reduction tree folds with block shape `block`."""
        return math.prod(block["xyz".index(d)] for d in self.tree_dims)

    def element_range(self, r: Reduction) -> ElementRange | None:
        return next((e for e in self.element_ranges if e.target == r.target), None)

    def partials(self, r: Reduction) -> int:
        """How many partial results of `r` each thread keeps (one unless loops inside it choose the element)."""
        er = self.element_range(r)
        return er.count if er is not None else 1

    def nodes(self, by_id: dict[int, Loop]) -> list["Loop | Statement"]:
        """The loops and statements the kernel runs in each thread (`by_id`: the nest's loops by lid)."""
        body = by_id[self.body_lid].body
        return [body[k] for k in self.serial] if self.serial else list(body)

    def statements(self, by_id: dict[int, Loop]) -> list[Statement]:
        """Every statement the kernel runs (inner loops' headers included), in order."""
        out: list[Statement] = []
        for node in self.nodes(by_id):
            if isinstance(node, Loop):
                if node.header_stmt is not None:
                    out.append(node.header_stmt)
                out.extend(node.statements())
            else:
                out.append(node)
        return out

    def inner_loops(self, by_id: dict[int, Loop]) -> list[Loop]:
        """The loops that run inside each thread, outermost first."""
        return [lp for node in self.nodes(by_id) if isinstance(node, Loop) for lp in node.loops()]

    def rank_loops(self, r: Reduction, by_id: dict[int, Loop]) -> list[Loop]:
        """The loops of reduction `r` that run in this kernel (mapped or in each thread), in the order `r` lists
        them: an ordered max/min (codegen/kernel.py Ordered) keeps the iteration of each value over them."""
        inside = {m.lid for m in self.loops} | {lp.lid for lp in self.inner_loops(by_id)}
        by_var = {lp.var: lp for lp in by_id.values()}
        return [by_var[v] for v in r.loops if v in by_var and by_var[v].lid in inside]


@dataclass(frozen=True)
class HostLoop:
    """A loop that stays on the host around kernels (and other host loops), with why it is not mapped."""
    lid: int
    var: str
    header: str
    body: tuple["HostLoop | Kernel", ...]
    why: str


def kernels_in(items) -> list[Kernel]:
    """The kernels of plan items (kernels and host loops around more), in launch order."""
    return [k for it in items for k in ([it] if isinstance(it, Kernel) else kernels_in(it.body))]


@dataclass(frozen=True)
class Mapping:
    """The mapping pass's result for a nest: which loops become kernels' grids and which stay on the host,
    with the other legal structures for the performance pass to compare."""
    nest: str
    items: tuple["HostLoop | Kernel", ...]
    notes: tuple[str, ...]
    reassociates: bool = False      # a floating-point sum is added across threads, in another order than C's
    # the other legal structures of the nest (c2gpu/passes/mapping.py structures()), for the performance pass to
    # compare when a GPU is given; empty when there is none or no GPU decides
    alternatives: tuple["Mapping", ...] = field(default=(), compare=False, repr=False)

    @property
    def structure(self) -> str:
        """The structure in words: "host r; grid q, p" (loops in C's names, host loops outermost first)."""
        host: list[str] = []
        grid: list[str] = []
        coarse: list[str] = []

        def walk(items):
            for it in items:
                if isinstance(it, Kernel):
                    split = [m.c_var if not m.turns else f"{m.c_var} (split)" if m.turns == SPLIT_THREADS
                             else f"{m.c_var} (split, {m.turns} threads)" for m in it.loops]
                    grid.extend(v for v in split if v not in grid)
                    coarse.extend(v for v in (f"{m.coarsened} iterations of {m.c_var} per thread" for m in it.loops
                                              if m.coarsened > 1) if v not in coarse)
                else:
                    host.append(it.var)
                    walk(it.body)
        walk(self.items)
        return "; ".join(part for part in (f"host {', '.join(host)}" if host else "",
                                           f"grid {', '.join(grid)}" if grid else "one thread", ", ".join(coarse))
                         if part)

    def kernels(self) -> list[Kernel]:
        return kernels_in(self.items)


@dataclass(frozen=True)
class TileDim:
    """One dimension of a shared-memory tile: the subscript it follows and its extent in elements."""
    coeffs: tuple[tuple[str, int], ...]   # (normalized variable, coefficient) of the subscript
    const: int                             # constant part of the subscript (without parameters)
    params: Poly                           # the parameter part (0 when none)
    extent: int                            # elements of the tile in this dimension


@dataclass(frozen=True)
class SharedOpportunity:
    """An array region a kernel could stage in a shared-memory tile: its shape, bank conflicts, and the
    global memory traffic per block it would save."""
    array: str
    elem_type: str
    elem_size: int
    accesses: tuple[Access, ...]           # the reads served from the tile
    tiled_lid: int | None                  # loop split into chunks (None: one tile for the whole kernel)
    covered_lids: tuple[int, ...]
    dims: tuple[TileDim, ...]
    pad: int                               # extra elements per row against bank conflicts
    conflicts: int                         # bank-conflict degree of the shared reads (with the padding)
    conflicts_unpadded: int
    loads_saved_per_block: float           # global loads per block (all chunks) the tile replaces, minus its loads
    tile_loads_per_block: float            # (for a store tile: global memory transactions saved per block)
    kind: str                              # "reuse", "halo", "small array", "store"
    tile_name: str = ""                    # name of the shared array (c2gpu_sh_<tile_name>)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(d.extent for d in self.dims[:-1]) + (self.dims[-1].extent + self.pad,)

    @property
    def size_bytes(self) -> int:
        n = 1
        for e in self.shape:
            n *= e
        return n * self.elem_size

    @property
    def name(self) -> str:
        return self.array

    @property
    def value(self) -> float:
        return self.loads_saved_per_block / self.size_bytes


@dataclass(frozen=True)
class SharedDecision:
    """Whether the knapsack took one shared-memory opportunity, and why."""
    opportunity: SharedOpportunity
    taken: bool
    reason: str


@dataclass(frozen=True)
class KernelSharedPlan:
    """The shared-memory choice for one kernel: each opportunity under the per-block budget, taken or
    not, and why."""
    kernel: str
    budget: int
    decisions: tuple[SharedDecision, ...]
    tile: int
    greedy_gap: float                      # (exact - greedy) / exact on this kernel's opportunities

    @property
    def chosen(self) -> list[SharedOpportunity]:
        return [d.opportunity for d in self.decisions if d.taken]


@dataclass(frozen=True)
class SharedMemoryPlan:
    """The shared-memory tiles of a mapped nest, by kernel name (kernels with nothing to stage are absent)."""
    kernels: dict[str, KernelSharedPlan] = field(default_factory=dict)



@dataclass(frozen=True)
class BudgetTrial:
    """One shared-memory budget the model compared (None: no shared memory), with the predicted times."""
    budget: int | None
    why: str
    total_s: float
    kernel_s: float


@dataclass(frozen=True)
class StructureTrial:
    """One legal structure of a nest the model compared, with its prediction (with the shared-memory tiles that make
    it fastest, or none)."""
    structure: str               # Mapping.structure
    kernels: int                 # kernels of the structure
    launches: float              # launches in all (host loops launch their kernels once per iteration)
    total_s: float               # predicted kernels + launches + transfers, default model
    chosen: bool
    bound: str = ""              # not predicted: total_s is a lower bound, and why
    not_generated: str = ""      # code generation cannot emit it (its reason): never chosen while another can be


@dataclass(frozen=True)
class NestPlan:
    """Every decision about how one nest runs on the GPU, made once by the plan pass.

    mapping:   the kernels (with their final block shapes) and the host loops around them.
    tiles:     the shared-memory tiles each kernel stages (no entry: none).
    decisions: every shared-memory opportunity found, per kernel, with what was decided and why (the reports).
    structures: the legal kernel structures the model compared, when a GPU decided among several (else empty).
    trials:    the shared-memory budgets the model compared, when a GPU decided them (else empty).
    budget:    the budget that won (None: no shared memory, or no GPU decided).
    scalar_replacement: array elements invariant across an in-thread loop live in registers (c2gpu/planning/promotion.py);
               False models and emits every access where C makes it (the naive CUDA of testdata/validation/naive_cuda_measured.tsv).
    """
    nest: str
    mapping: Mapping
    tiles: SharedMemoryPlan
    decisions: tuple[tuple[str, SharedDecision], ...] = ()
    structures: tuple[StructureTrial, ...] = ()
    trials: tuple[BudgetTrial, ...] = ()
    budget: int | None = None
    scalar_replacement: bool = True

    def kernels(self) -> list[Kernel]:
        return self.mapping.kernels()

    def tiles_of(self, kernel: str) -> KernelSharedPlan | None:
        return self.tiles.kernels.get(kernel)


class PlanError(TypeError):
    """Something other than a finalized NestPlan was handed to code generation, a model or a report."""


def require_plan(obj, who: str) -> NestPlan:
    """`obj` if it is a finalized NestPlan; otherwise a PlanError saying what is missing."""
    if isinstance(obj, NestPlan):
        return obj
    got = type(obj).__name__
    raise PlanError(f"{who} needs a finalized NestPlan (the result of the 'plan' pass: mapping, block shapes and "
                    f"shared-memory tiles decided), not a {got}; run a pipeline that ends with the 'plan' pass")


def with_blocks(mapping: Mapping, blocks: dict[str, tuple[int, int, int]]) -> Mapping:
    """The mapping with the given kernels' block shapes (a block-tree reduction keeps a power-of-two block)."""
    def fix(item):
        if isinstance(item, Kernel):
            b = tuple(blocks.get(item.name, item.block))
            if not item.takes_block(b):
                return item
            return replace(item, block=b)
        return replace(item, body=tuple(fix(x) for x in item.body))
    return replace(mapping, items=tuple(fix(x) for x in mapping.items))
