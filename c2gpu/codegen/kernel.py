"""CUDA code generation: kernels and host wrappers for mapped nests.

Every decision (launch shapes, index expressions, what each kernel declares;
what to copy: codegen.arrays) is computed here into plain strings and lists; the jinja2
templates in `c2gpu/templates/` only print them.

Kernel bodies are the user's own statements, printed from the IR's syntax tree
(c2gpu.syntax_tree, `Loop.syntax`) of the innermost mapped loop's body, with two changes: multi-dimensional
array accesses become flat ones (`A[i][j]` -> `A[(i) * (M) + (j)]`, because
CUDA C++ has no variable-length array types), and scalar reduction targets
become per-thread partial results.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any

import islpy as isl
from ..analysis import isl_sets as ph
from ..frontend.ctypes import SIZES
from ..syntax_tree import (Assign, Binary, Block, Const, Decl, For, Index, Member, Name, Printer, Unary, index_chain,
                    to_c)
from ..intexpr import CInt, op
from ..ir import Loop, Nest, ordered_reduction, reduction_type
from ..planning.plan import WHOLE_BLOCK
from ..planning.promotion import Promotion, promotions
from ..symbolic import Poly
from ..records import dataclass

if TYPE_CHECKING:    # for annotations only: codegen.arrays imports this module's C helpers
    from .arrays import ArrayPlan

FLOAT_TYPES = ("float", "double")


class CodegenError(Exception):
    """The plan cannot be turned into code; the message says why (shown to the user)."""


ONE = CInt.const(1)

def flat_index(per_dim: "list[CInt | str]", extents: "tuple[CInt, ...]") -> "CInt | str":
    """Row-major flat index from per-dimension indices: a CInt when every index is one (spelt as one polynomial
    when it is one), else C.  An index given as a string is C whose value c2gpu does not know."""
    text = f"({per_dim[0]})"
    for k, e in enumerate(extents):
        text = f"({text} * ({e}) + ({per_dim[k + 1]}))"
    if not all(isinstance(x, CInt) for x in per_dim):
        return text
    expr = per_dim[0].expr
    for k, e in enumerate(extents):
        expr = op("+", op("*", expr, e.expr), per_dim[k + 1].expr)
    return CInt.folded(text, expr)


def _flat(per_dim: "list[CInt | str]", extents: "tuple[CInt, ...]", wide: bool = False) -> str:
    """flat_index as the kernel prints it.

    wide: compute it in 64 bits.  C indexes `A[i][j]` by pointer arithmetic, which does not overflow
    where `i * M + j` in int would (an array of more than 2^31 elements with int subscripts).
    """
    if wide and extents:
        return "(" + " + ".join([f"(long long)({per_dim[0]})" + "".join(f" * ({e})" for e in extents)] +
                                [f"(long long)({d})" + "".join(f" * ({e})" for e in extents[k + 1:])
                                 for k, d in enumerate(per_dim[1:])]) + ")"
    return str(flat_index(per_dim, extents))


def _name(text: str) -> Poly | None:
    return Poly.var(text) if text.isidentifier() else None


# --------------------------------------------------------------------------- kernel bodies

# storage classes a thread's local drops: it is automatic anyway, and CUDA's C++ reads `auto` as a type placeholder
# (`auto double w` does not compile) and has no `register` since C++17
C_ONLY_STORAGE = ("auto", "register")


class KernelPrinter(Printer):
    """Prints user statements for a kernel: flat array indexing, reduction targets renamed."""

    def __init__(self, arrays: dict[str, ArrayPlan], renames: dict[str, str], atomics: dict[int, str] | None = None,
                 registers: dict[int, str] | None = None,
                 around: dict[int, tuple[list[str], list[str]]] | None = None,
                 ordered: dict[int, "Ordered"] | None = None, hoisted: frozenset[str] = frozenset(),
                 scratch: frozenset[str] = frozenset()):
        super().__init__()
        self.hoisted = hoisted | scratch  # arrays declared inside the nest that the kernel declares per thread, flat
        self.scratch = scratch           # private arrays in device memory (Kernel.scratch_arrays)
        self.arrays = arrays
        self.renames = renames
        self.atomics = atomics or {}     # id of a scatter statement's tree (Statement.syntax) -> its element's C type
        self.ordered = ordered or {}     # id of a floating-point max/min statement's tree -> how it is kept
        self.registers = registers or {}   # id of a promoted access's node -> its register (promotion.py)
        self.around = around or {}       # id of a loop's tree (Loop.syntax) -> (lines before it, lines after it):
        #                                  the loads and stores of the registers promoted across it

    def _atomic(self, n, target, value: str) -> str:
        return atomic_call("+", self.atomics[id(n)], "&" + self.visit(target), value)

    def visit_Assign(self, n: Assign) -> str:
        if id(n) in self.atomics:       # a scatter: a[e] += v as one atomic update
            value = self.visit(n.value)
            return self._atomic(n, n.target, value if n.op == "+=" else f"-({value})")
        if id(n) in self.ordered:       # the thread's partial max/min, with the iteration that set it
            o = self.ordered[id(n)]
            ranks = " ".join(f"{v} = {c};" for v, c in zip(o.rank_vars, o.rank))
            return (f"{{ {o.ctype} c2gpu_v = {self.visit(o.value)}; if ({o.keeps('c2gpu_v', o.part)}) "
                    f"{{ {o.part} = c2gpu_v; {ranks} }} }}")
        return super().visit_Assign(n)

    def visit_Unary(self, n: Unary) -> str:
        if id(n) in self.atomics:       # a[e]++ and a[e]-- (their value unused: a statement)
            return self._atomic(n, n.operand, "1" if n.op in ("++", "p++") else "-1")
        return super().visit_Unary(n)

    def visit_Index(self, n: Index) -> str:
        base, subs = index_chain(n)
        if isinstance(base, Name) and base.name in self.scratch:
            plan = self.arrays[base.name]
            idx = _flat([self.index(s) for s in subs], plan.extents, wide_index(plan)) if len(subs) > 1 \
                else self.visit(subs[0])
            return f"c2gpu_scratch_{base.name}[(long long)({idx}) * c2gpu_threads + c2gpu_gtid]"
        if isinstance(base, Name) and base.name in self.arrays and len(subs) > 1:
            plan = self.arrays[base.name]
            idx = _flat([self.index(s) for s in subs], plan.extents, wide_index(plan))
            return f"{base.name}[{idx}]"
        return super().visit_Index(n)

    def visit_Name(self, n: Name) -> str:
        return self.renames.get(n.name, n.name)

    def visit_Decl(self, n: Decl, no_type: bool = False) -> str:
        if n.name in self.hoisted:
            return ""       # declared once at the top of the thread (its values do not outlive an iteration)
        return super().visit_Decl(replace(n, storage=tuple(s for s in n.storage if s not in C_ONLY_STORAGE)), no_type)

    def visit_Member(self, n: Member) -> str:
        # a field of an array of structs seen by field: the device array holds the fields' type, the field
        # its last dimension (`u[k][j].imag` is u[(k * ny + j) * 2 + 1])
        if n.op == "." and isinstance(n.base, Index):
            base, subs = index_chain(n.base)
            plan = self.arrays.get(base.name) if isinstance(base, Name) else None
            if plan is not None and plan.fields and n.name in plan.fields:
                per_dim = [self.index(s) for s in subs] + [CInt.const(plan.fields.index(n.name))]
                return f"{base.name}[{_flat(per_dim, plan.extents, wide_index(plan))}]"
        return super().visit_Member(n)

    def index(self, node) -> "CInt | str":
        """A subscript as this kernel prints it, with its polynomial when it is one."""
        p = self._poly(node)
        text = self.visit(node)
        return CInt(text, p) if p is not None else text

    def _poly(self, node) -> Poly | None:
        """The polynomial of what `visit` prints for `node`, over the names it prints (None for anything but
        integers, names, + - * and negation: a call, an array element, a cast, a division)."""
        if self.registers and (reg := self.registers.get(id(node))):
            return _name(reg)
        if isinstance(node, Index) and self.renames and (name := self.renames.get(to_c(node))):
            return _name(name)
        match node:
            case Name():
                return _name(self.visit(node))
            case Const("int", v):
                return Poly.const(int(v)) if v.isdigit() and (v == "0" or v[0] != "0") else None
            case Unary("-", operand):
                a = self._poly(operand)
                return None if a is None else -a
            case Binary("+" | "-" | "*", left, right):
                a, b = self._poly(left), self._poly(right)
                return None if a is None or b is None else a + b if node.op == "+" else a - b if node.op == "-" \
                    else a * b
        return None

    def visit(self, node):
        if self.registers and (reg := self.registers.get(id(node))):
            return reg
        # an array element that is a reduction's target ("y[i]") prints as the thread's partial result
        if isinstance(node, Index) and self.renames and (name := self.renames.get(to_c(node))):
            return name
        return super().visit(node)

    def visit_For(self, n: For) -> str:
        text = super().visit_For(n)
        if id(n) not in self.around:
            return text
        before, after = self.around[id(n)]
        text = text.rstrip("\n")
        inner = self._make_indent() + "  "
        # a block of its own: the loop may be the only statement of an `if` or of another loop
        return "{\n" + "".join(inner + line + "\n" for line in before) + inner + text.replace("\n", "\n  ") + \
            "\n" + "".join(inner + line + "\n" for line in after) + self._make_indent() + "}"


def register_lines(p: Promotion, plan: ArrayPlan) -> tuple[list[str], list[str]]:
    """The load of a promoted element before its loop and its store after it (promotion.py), only when the loop
    runs at least once: C touches the element then, and only then."""
    subs = [CInt.of_poly(x) for x in p.subscripts]
    element = f"{p.array}[{subs[0] if len(subs) == 1 else _flat(subs, plan.extents, wide_index(plan))}]"
    conditions = ([] if p.runs is None else [f"({p.runs.to_c()}) >= 0"]) + \
        [f"({c.expr.to_c()}) {'>=' if c.kind == 'ge' else '=='} 0" for c in p.guards]
    when = f"if ({' && '.join(conditions)}) " if conditions else ""
    load = [f"{when}{p.register} = {element};"] if p.load else []
    store = [f"{when}{element} = {p.register};"] if p.store else []
    return load, store


def register_maps(proms, arrays: dict[str, ArrayPlan], by_id: dict[int, Loop]):
    """What KernelPrinter needs to print promoted elements: id of each promoted access's syntax tree -> its
    register, and id of each loop's syntax tree -> (loads before it, stores after it)."""
    registers, around = {}, {}
    for p in proms:
        registers.update({id(n): p.register for n in p.nodes})
        load, store = register_lines(p, arrays[p.array])
        before, after = around.setdefault(id(by_id[p.loop_lid].syntax), ([], []))
        before.extend(load)
        after[:0] = store
    return registers, around


@dataclass(frozen=True)
class Ordered:
    """A floating-point max/min reduced across threads.  Equal values can differ (-0.0 and 0.0), and which one C
    keeps depends on the order it saw them in (Reduction.ties), so the threads reduce (value, iteration) pairs:
    the iteration is the tuple of the reduction's loop variables in the kernel, outermost first, compared
    lexicographically (a loop counting down is negated).  A thread keeps its pair as C does, a block tree and
    then the last block to finish keep the pair C would; that pair replaces the running total (the value before
    the launch, the earliest of all) as C's own comparison says."""
    target: str
    ctype: str
    op: str                      # "max" or "min"
    ties: str                    # Reduction.ties
    nan_init: bool               # Reduction.nan_init
    value: Any                   # the syntax of the value compared (Reduction.value)
    part: str                    # the thread's partial value
    rank: tuple[str, ...]        # C expressions of the iteration, outermost loop first
    rank_vars: tuple[str, ...]   # the thread's variables holding the iteration of its partial value

    @property
    def none(self) -> str:
        """The iteration of a partial that holds no value: it loses every tie."""
        return "LLONG_MAX" if self.ties == "first" else "LLONG_MIN"

    def keeps(self, v: str, m: str) -> str:
        """C's own test: the value v, seen after m, replaces it."""
        cmp = ("<" if self.op == "min" else ">") + ("" if self.ties == "first" else "=")
        test = f"{v} {cmp} {m}"
        return f"({test} || ({m} != {m} && {v} == {v}))" if self.nan_init else test

    def beats(self, v: str, vr: list[str], w: str, wr: list[str]) -> str:
        """The pair (v, vr) is kept over (w, wr), whichever came first: the better value, or between equal ones
        the earlier (ties "first") or later iteration.  Neither value is NaN (a partial never takes one)."""
        lt = "<" if self.ties == "first" else ">"
        order = f"{vr[-1]} {lt} {wr[-1]}"
        for a, b in zip(reversed(vr[:-1]), reversed(wr[:-1])):
            order = f"{a} {lt} {b} || ({a} == {b} && ({order}))"
        better = "<" if self.op == "min" else ">"
        return f"{v} {better} {w} || ({v} == {w} && ({order}))"


def reduction_key(r) -> str:
    """A C identifier for a reduction's target: the scalar's name, or the element's text made one (y_i_).  A text
    with operators gets a digest of itself too: `U[OFF + i - 1]` and `U[OFF + i + 1]` would both read U____i____1
    (two reductions of one kernel declared one name: a port that compiled nowhere, differential seed 247)."""
    if r.array_access is None:
        return r.target
    key = "elem_" + re.sub(r"[^A-Za-z0-9_]", "_", r.target)
    if re.search(r"[^A-Za-z0-9_\[\] ]", r.target):
        key += "_" + hashlib.md5(r.target.encode()).hexdigest()[:8]
    return key


def device_function(f, name: str, renames: dict[str, str]) -> str:
    """The __device__ copy of a pure function of the file (frontend/functions.py), named `name`; `renames`
    gives the copies of the pure functions it calls."""
    before, after = f.declaration
    printer = KernelPrinter({}, renames)
    return f"/* {f.name} ({f.loc}): a pure function of its arguments */\nstatic __device__ {before}{name}{after}\n" \
           f"{printer.visit(f.body)}\n"


def atomic_call(op: str, ctype: str, ptr: str, value: str) -> str:
    """The atomic that folds one block's partial result into the total, for the types CUDA supports.

    CUDA has atomicAdd for int, unsigned, unsigned long long, float and double (sm_60+), and
    atomicMax/Min for 32- and 64-bit integers; 64-bit `long` goes through the long long forms,
    floating-point max/min through the compare-and-swap helpers of the prelude.
    """
    if op == "+":
        if ctype in ("float", "double", "int", "unsigned int"):
            return f"atomicAdd({ptr}, {value})"
        if ctype in ("long", "long long", "unsigned long", "unsigned long long"):
            # two's complement: adding as unsigned 64-bit gives the signed sum too
            return f"atomicAdd((unsigned long long *)({ptr}), (unsigned long long)({value}))"
    else:
        name = "atomicMax" if op == "max" else "atomicMin"
        if ctype in FLOAT_TYPES:
            return f"c2gpu_atomic_{op}({ptr}, {value})"
        if ctype in ("int", "unsigned int"):
            return f"{name}({ptr}, {value})"
        if ctype in ("long", "long long"):
            return f"{name}((long long *)({ptr}), (long long)({value}))"
        if ctype in ("unsigned long", "unsigned long long"):
            return f"{name}((unsigned long long *)({ptr}), (unsigned long long)({value}))"
    raise CodegenError(f"a {op} reduction on {ctype} has no CUDA atomic")


IDENTITY = {"+": "0", "max": "-INFINITY", "min": "INFINITY"}
INT_IDENTITY = {"+": "0", "max": "INT_MIN", "min": "INT_MAX"}
INT_LIMITS = {"long": ("LONG_MIN", "LONG_MAX"), "long long": ("LLONG_MIN", "LLONG_MAX"),
              "unsigned int": ("0", "UINT_MAX"), "unsigned long": ("0", "ULONG_MAX"),
              "unsigned long long": ("0", "ULLONG_MAX")}


@dataclass
class KernelCode:
    """The parts of one generated CUDA kernel (parameters, thread indices, guards, body, launch shape) and
    its rendered text."""
    name: str
    params: list[str]            # "const float *A", "int n"
    args: list[str]              # matching launch arguments in the wrapper
    index_lines: list[str]       # thread index computations
    guards: list[str]            # conditions for an active thread
    locals: list[str]            # declarations at the top of the active region
    body: str | None             # None: not printed (a candidate's layout, wrapper.nest_layout)
    block: tuple[int, int, int]
    grid: tuple[CInt, CInt, CInt]      # blocks per dimension
    extents: tuple[CInt, CInt, CInt]   # threads needed per dimension (the largest trip count of its loop)
    launch_if: str               # condition for a non-empty grid ("" when it is always non-empty)
    reductions: list[dict] = field(default_factory=list)
    why: str = ""
    shared_bytes: int = 0        # static shared memory of the tiles (tiling.py)
    text: str | None = ""        # the rendered kernel (None in a layout, wrapper.nest_layout)
    epilogue: list[str] = field(default_factory=list)      # run by every active thread after the body
    last_values: list[tuple[str, str]] = field(default_factory=list)  # (scalar, C type) the last iteration stores
    device_writes: list[tuple[str, str]] = field(default_factory=list)  # (scalar, C type) a one-thread kernel
    #                                                                     updates where it lives, on the device
    renames: dict[str, str] = field(default_factory=dict)   # C name -> its name in the kernel (KernelPrinter)
    atomics: dict[int, str] = field(default_factory=dict)   # scatter statements' syntax trees (by id) -> element
    #                                                         type: printed as atomics (KernelPrinter)
    prelude: str = ""            # what the kernel text needs before it to compile alone (__device__ functions)
    promotions: tuple[Promotion, ...] = ()   # array elements kept in registers across an in-thread loop
    scratch: list[str] = field(default_factory=list)   # host lines before each launch (c2gpu_grid known): the
    #                                                    device memory an ordered max/min keeps between launches
    tree: dict = field(default_factory=dict)     # a tree per row of the block (Kernel.tree_dims): {"dim" it folds
    #                                              along, "half": its first step, "stride": between neighbours
    #                                              along it, in thread ids}; {} for a tree over the whole block
    row_leader: str = ""         # a tree per row's: the thread that adds its row's total into the element (the
    #                              first along the tree's dimension, in a row whose element exists)


def _loops_by_id(nest: Nest) -> dict[int, Loop]:
    return {lp.lid: lp for lp in nest.loops()}


def _path_to(nest: Nest, lid: int) -> list[Loop]:
    """Loops from the root down to (and including) loop `lid`."""
    def walk(lp: Loop, path):
        path = path + [lp]
        if lp.lid == lid:
            return path
        for n in lp.body:
            if isinstance(n, Loop):
                r = walk(n, path)
                if r:
                    return r
        return None
    return walk(nest.root, []) or []


def _max_trip(nest: Nest, path: list[Loop], loop: Loop, fixed: frozenset[int] = frozenset()) -> CInt:
    """Largest trip count of `loop` over the iterations of the loops enclosing it.  `fixed`: enclosing loops
    (host loops around a kernel) whose variables stay parameters, as the wrapper names them, and whose domain
    only simplifies the answer: the largest for their current iteration."""
    outer = [lp for lp in path[:-1] if lp.lid not in fixed]
    held = [lp for lp in path[:-1] if lp.lid in fixed]
    params = list(nest.params) + [lp.var for lp in held]
    names = {lp.var: ph.dim(lp.lid) for lp in outer}
    names.update({lp.var: lp.var for lp in held})
    dims = ", ".join(names[lp.var] for lp in outer)
    cons = ph.domain_constraints(outer, names)
    trip = ph.sym_to_isl(loop.trip_count, names)
    # (prefixed set names throughout: a parameter of the nest may be called t, e or w, and isl would take a set
    # dimension of the same name for that parameter)
    s = isl.Set(f"[{', '.join(params)}] -> {{ [{dims + ', ' if dims else ''}c2gpu_trip] : c2gpu_trip = {trip}"
                f"{' and ' + ' and '.join(cons) if cons else ''} }}")
    most = s.dim_max(s.dim(isl.dim_type.set) - 1)
    if held:
        most = most.gist_params(isl.Set(f"[{', '.join(params)}] -> {{ : "
                                        f"{' and '.join(ph.domain_constraints(held, names)) or '1 = 1'} }}"))
    return ph.to_cint(most, params)


def _trip_per_launch(nest: Nest, path: list[Loop], loop: Loop, host_lids: set[int]) -> CInt | None:
    """_max_trip for the current iteration of the host loops around the kernel; None when no host loop moves the
    trip count or isl cannot say (then the largest over every iteration stands)."""
    host = frozenset(lp.lid for lp in path[:-1] if lp.lid in host_lids)
    if not host or not loop.trip_count.variables & {lp.var for lp in path[:-1]}:
        return None
    try:
        return _max_trip(nest, path, loop, host)
    except (isl.Error, ValueError):
        return None


def kernel_code(nest: Nest, kernel, arrays: dict[str, ArrayPlan], host_vars: list[tuple[str, str]],
                device_scalars: frozenset[str] = frozenset(), functions: dict[str, str] | None = None,
                promote: bool = True, printed: bool = True) -> KernelCode:
    """The kernel of a mapped loop chain.

    device_scalars: reduction results of other kernels of the nest; their current value is on the device
    (`d_<name>`, updated by every launch of a host time loop), so a kernel that reads one loads it from there.
    functions: the file's pure functions the nest calls -> the name of their __device__ copy.
    promote: keep array elements invariant across an in-thread loop in registers (promotion.py).
    printed: print the body; without it (the search's layout of a candidate) `body` is None, and every refusal
    is made as when it is printed.
    """
    nest = kernel.view or nest          # the kernel's own order of the loops, after distribution or interchange
    by_id = _loops_by_id(nest)
    innermost = by_id[kernel.body_lid]
    path = _path_to(nest, kernel.body_lid)
    mapped_ids = {m.lid for m in kernel.loops}
    stmts = kernel.statements(by_id)
    used_arrays = sorted({a.array for s in stmts for a in s.accesses} - set(kernel.private_arrays))
    written = {a.array for s in stmts for a in s.accesses if a.kind == "write"}
    red_targets = {r.target: r for r in kernel.reductions}
    scalar_types = {s.name: s.ctype for s in nest.scalars}
    roles = {s.name: s.role for s in nest.scalars}
    declared_in_body = {s.decl for s in stmts if s.decl}
    inner_loops = kernel.inner_loops(by_id)

    # scalars the body reads that come from outside: parameters of the kernel
    read_scalars = sorted({v for s in stmts for v in s.scalar_reads} | set(nest.params))
    host_names = {name for name, _ in host_vars}
    params, args = [], []
    for a in used_arrays:
        plan = arrays[a]
        params.append(f"{'' if a in written else 'const '}{plan.ctype} *{a}")
        args.append(f"d_{a}")
    # a one-thread kernel updates the scalars it writes where they live between launches: on the device
    serial_writes = sorted({v for s in stmts for v in s.scalar_writes if v in scalar_types
                            and v not in declared_in_body and v not in host_names}) if kernel.serial else []
    kernel_writes = {v for s in stmts for v in s.scalar_writes}
    value_params = []
    for v in read_scalars:
        if v in declared_in_body or v in red_targets or roles.get(v) in ("local",) or v in serial_writes:
            continue
        if roles.get(v) in ("written",) and v in kernel_writes and not kernel.serial:
            continue  # privatised below
        if v in scalar_types:
            value_params.append((v, scalar_types[v]))
    # the enclosing host loops' variables (time step t, ...), as C names them and normalized: the body
    # text uses the former, trip counts and guards the latter
    value_params.extend(host_vars)
    seen = set()
    device_reads = []
    for v, t in value_params:
        if v in seen:
            continue
        seen.add(v)
        if v in device_scalars:
            params.append(f"const {t} *c2gpu_{v}_now")
            args.append(f"d_{v}")
            device_reads.append(f"const {t} {v} = *c2gpu_{v}_now;")
        else:
            params.append(f"{t} {v}")
            args.append(v)
    for r in kernel.reductions:
        if r.array_access is None:          # an array element's total goes straight into the array
            params.append(f"{scalar_types[r.target]} *c2gpu_{r.target}_result")
            args.append(f"d_{r.target}")
    for v in serial_writes:
        params.append(f"{scalar_types[v]} *c2gpu_{v}_now")
        args.append(f"d_{v}")
        device_reads.append(f"{scalar_types[v]} {v} = *c2gpu_{v}_now;")

    # thread indices, guards, original loop variables
    index_lines, guards, locals_ = [], [], list(device_reads)
    grid, extents, per_launch = [ONE] * 3, [ONE] * 3, [ONE] * 3
    block = kernel.block
    host_lids = {lp.lid for lp in path if lp.lid not in mapped_ids}
    for m in kernel.loops:
        k = "xyz".index(m.dim)
        extents[k] = _max_trip(nest, _path_to(nest, m.lid), by_id[m.lid])
        # the grid of each launch covers the iterations of that launch: a loop whose bounds move with a host loop
        # (lu's i, j > k) launches fewer blocks as its domain shrinks (the model prices it so: Geometry)
        per_launch[k] = _trip_per_launch(nest, _path_to(nest, m.lid), by_id[m.lid], host_lids) or extents[k]
        grid[k] = blocks_for(per_launch[k], block[k]) if not m.turns else ONE
    # the loops whose iterations the threads along their dimension take in turns (MappedLoop.turns): one block
    # along it, each thread running its iterations in a loop around the body
    turn_loops = []
    for m in kernel.loops:
        ext = extents["xyz".index(m.dim)].constant()
        itype = _index_type(m, by_id[m.lid], ext)
        if m.turns:
            turn_loops.append(f"for ({itype} {m.var} = threadIdx.{m.dim}; {m.var} < {m.trip.to_c()}; "
                              f"{m.var} += blockDim.{m.dim})")
            continue
        cast = "" if itype == "int" else f"({itype})"
        index_lines.append(f"const {itype} {m.var} = {cast}blockIdx.{m.dim} * blockDim.{m.dim} + threadIdx.{m.dim};")
        if itype == "int" and ext is None:
            guards.append(f"{m.var} >= 0")   # the last block's spare threads may pass INT_MAX and wrap
    for m in kernel.loops:
        if not m.turns:
            guards.append(f"{m.var} < {m.trip.to_c()}")
    # a tree per row (Kernel.tree_dims one dimension): the first thread along it of each row whose element exists
    # updates the element
    rows = kernel.tree_dims if kernel.reductions and kernel.tree_dims != WHOLE_BLOCK else ""
    row_leader = " && ".join([f"threadIdx.{rows} == 0"] + guards) if rows else ""
    tree = {"dim": rows, "half": block["xyz".index(rows)] // 2,
            "stride": ("1", "blockDim.x", "blockDim.x * blockDim.y")["xyz".index(rows)]} if rows else {}
    if kernel.serial:
        guards = ["blockIdx.x == 0", "threadIdx.x == 0"]      # launched as one block of one thread
    # a block dimension no loop is mapped to (`--block 32x8` for a 1-D nest): its threads would all run the
    # same iterations again, so only its first thread is active
    mapped_dims = {m.dim for m in kernel.loops} | ({"x"} if kernel.serial else set())
    guards += [f"threadIdx.{d} == 0" for k, d in enumerate("xyz") if d not in mapped_dims and block[k] > 1]
    turn_locals = []
    for m in kernel.loops:
        lp = by_id[m.lid]
        if m.origin is not None:
            expr = (m.origin.lower + Poly.var(m.var) * m.origin.step).to_c()
            (turn_locals if m.turns else locals_).append(f"const {lp.c_type} {m.c_var} = {expr};")
    # each thread's own copy of a privatized array, in the kernel's indexing (flat, as the plan's extents say);
    # one too large for local memory in device memory, element e of thread t at e * threads + t
    scratch_buffers = []
    for a in kernel.private_arrays:
        info = nest.array(a)
        total = 1
        for d in info.dims:
            total *= d.const_value()
        if a in kernel.scratch_arrays:
            params.append(f"{arrays[a].ctype} *c2gpu_scratch_{a}")
            args.append(f"d_{kernel.name}_scratch_{a}")
            scratch_buffers.append((f"d_{kernel.name}_scratch_{a}", arrays[a].ctype, block[0] * block[1] * block[2] * int(total)))
            continue
        locals_.append(f"{arrays[a].ctype} {a}[{total}];")
    if scratch_buffers:
        locals_ += ["const long long c2gpu_threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * "
                    "blockDim.y * blockDim.z;",
                    "const long long c2gpu_gtid = ((long long)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + "
                    "blockIdx.x) * (blockDim.x * blockDim.y * blockDim.z) + (threadIdx.z * blockDim.y + threadIdx.y) "
                    "* blockDim.x + threadIdx.x;"]
    # loops inside the thread whose variables were declared outside the nest
    for lp in inner_loops:
        if not lp.declared_in_header:
            name = lp.source_var
            decl = f"{lp.c_type} {name};"
            if decl not in locals_:
                locals_.append(decl)
    # scalars written in the body but declared outside it: private per thread (the dependence pass proved
    # that every iteration writes them before reading them); C leaves the last iteration's value in them,
    # which the thread running that iteration stores for the host
    private: list[str] = []
    # (a variable declared in the thread's body, initialized or not, is declared there by the body's own text)
    in_thread = {sc.name for sc in nest.scalars if sc.declared_in and kernel.body_lid in sc.declared_in}
    for s in stmts if not kernel.serial else ():
        for v in s.scalar_writes:
            if v in declared_in_body or v in in_thread or v in red_targets or v in mapped_ids or v not in scalar_types:
                continue
            decl = f"{scalar_types[v]} {v};"
            if decl not in locals_:
                locals_.append(decl)
                private.append(v)
    epilogue = []
    if private:
        last = _last_iteration(nest, kernel, [name for name, _ in host_vars])
        innermost_lid = kernel.loops[-1].lid
        for v in private:
            # a scalar that lives on the device (a one-thread kernel writes it too) gets the last value where
            # it lives, so that the next kernel and the host see the value C would leave
            where = "now" if v in device_scalars else "last"
            params.append(f"{scalar_types[v]} *c2gpu_{v}_{where}")
            args.append(f"d_{v}" if v in device_scalars else f"d_last_{v}")
            if not any(v in st.scalar_writes and st.loop_ids[-1] == innermost_lid for st in stmts):
                # written only in loops inside the thread, which run in every iteration or in none (the dependence
                # pass's all_or_none): when in none, C leaves the value the scalar had at the nest's entry
                locals_.append(f"if ({last}) {v} = *c2gpu_{v}_{where};")
            epilogue.append(f"if ({last})\n  *c2gpu_{v}_{where} = {v};")
    epilogue.extend(f"*c2gpu_{v}_now = {v};" for v in serial_writes)
    # a reduction's target prints as the thread's partial result; an element the loops inside the thread choose
    # (Kernel.element_ranges) as its entry in the thread's array of partials
    renames = {**(functions or {}), **{r.target: f"c2gpu_{reduction_key(r)}_part" + (
        f"[{er.index_c()}]" if (er := kernel.element_range(r)) else "") for r in kernel.reductions}}
    # scatters (Statement.scatter) update their element with an atomic wherever threads run them; a one-thread
    # kernel needs none
    atomics = {} if kernel.serial else {id(s.syntax): arrays[s.scatter].ctype for s in stmts if s.scatter}
    # array elements kept in registers across an in-thread loop: declared here, loaded before the loop and
    # stored after it (promotion.py decides which)
    proms = promotions(nest, kernel) if promote else ()
    locals_.extend(f"{p.ctype} {p.register};" for p in proms)
    registers, around = register_maps(proms, arrays, by_id)
    ordered = {r.target: _ordered(nest, kernel, r, renames[r.target], by_id) for r in kernel.reductions
               if ordered_reduction(nest, r)}
    by_stmt = {id(s.syntax): ordered[r.target] for s in stmts for r in s.reductions if r.target in ordered}
    for ctype in atomics.values():      # (the printer's atomic for a scatter; refused here, printed or not)
        atomic_call("+", ctype, "", "")
    printer = KernelPrinter(arrays, renames, atomics, registers, around, by_stmt,
                            frozenset(a for a in kernel.private_arrays if nest.array(a).declared_in is not None),
                            scratch=frozenset(kernel.scratch_arrays))
    if not printed:
        body = None
    elif kernel.serial:
        body = "{\n" + "".join(printer._generate_stmt(n.syntax) for n in kernel.nodes(by_id)) + "}"
    else:
        body = printer.visit(innermost.syntax.body)
        if not isinstance(innermost.syntax.body, Block):
            body = "{\n" + body + ";\n}" if not body.rstrip().endswith(("}", ";")) else "{\n" + body + "\n}"
    if turn_loops and body is not None:   # (the body is a compound statement: its braces become the loops')
        inner = body.strip()[1:-1].strip("\n").splitlines()
        body = "".join(f"{'  ' * k}{head} {{\n" for k, head in enumerate(turn_loops)) + \
            "".join(f"{'  ' * len(turn_loops)}{line}\n" for line in turn_locals + inner) + \
            "".join(f"{'  ' * k}}}\n" for k in reversed(range(len(turn_loops))))
    reductions = []
    for r in kernel.reductions:
        t = reduction_type(nest, r)
        key = reduction_key(r)
        ident = (IDENTITY if t in FLOAT_TYPES else INT_IDENTITY)[r.op]
        if t in INT_LIMITS and r.op != "+":
            ident = INT_LIMITS[t][0 if r.op == "max" else 1]
        combine = {"+": "{a} + {b}", "max": "fmax({a}, {b})" if t in FLOAT_TYPES else "max({a}, {b})",
                   "min": "fmin({a}, {b})" if t in FLOAT_TYPES else "min({a}, {b})"}[r.op]
        er = kernel.element_range(r)
        part = f"c2gpu_{key}_part"
        # one fold per partial result: a thread's only one, or each of its element range's (rms[m]: m = 0..4)
        folds = [(part, f"c2gpu_red_{key}", r.array_access.subscripts if r.array_access else ())] if er is None else \
            [(f"{part}[{e}]", f"c2gpu_red_{key}_{e}", [p.substitute(point) for p in r.array_access.subscripts])
             for e, point in enumerate(er.points())]
        for n, (partial, red, subscripts) in enumerate(folds):
            if r.array_access is None:
                result = f"c2gpu_{key}_result"
            else:                           # &y[i]: the element, indexed as the kernel indexes the array
                plan = arrays[r.array_access.array]
                result = f"&{r.array_access.array}[" + _flat([CInt.of_poly(p) for p in subscripts],
                                                              plan.extents, wide_index(plan)) + "]"
            decls = [] if n else [f"{t} {part} = {ident};" if er is None else
                                  f"{t} {part}[{er.count}] = {{{', '.join([ident] * er.count)}}};"]
            entry = {"target": key if er is None else f"{key}_{n}", "type": t, "identity": ident, "part": partial,
                     "result": result, "element": r.array_access is not None, "helper": False, "ordered": None,
                     "decls": decls,
                     "shared": [f"__shared__ {t} {red}[{block[0] * block[1] * block[2]}];",
                                f"{red}[c2gpu_tid] = {partial};"]}
            o = ordered.get(r.target)
            if o is None:
                entry["combine"] = f"{red}[c2gpu_tid] = " + combine.format(a=f"{red}[c2gpu_tid]", b=f"{red}[c2gpu_tid + c2gpu_s]") + ";"
                entry["row_combine"] = f"{red}[c2gpu_tid] = " + combine.format(a=f"{red}[c2gpu_tid]", b=f"{red}[c2gpu_tid + c2gpu_o]") + ";"
                entry["atomic"] = atomic_call(r.op, t, result, f"{red}[0]")
                entry["row_atomic"] = atomic_call(r.op, t, result, f"{red}[c2gpu_tid]")   # a tree per row's
                entry["helper"] = r.op != "+" and t in FLOAT_TYPES
            else:
                entry.update(_ordered_code(o, red, result, block))
                params.extend([f"{t} *c2gpu_{key}_pv", f"long long *c2gpu_{key}_pr"])
                args.extend([f"d_{kernel.name}_{key}_pv", f"d_{kernel.name}_{key}_pr"])
            reductions.append(entry)
    scratch = _buffer_lines(scratch_buffers)
    if ordered:
        params.append("unsigned int *c2gpu_done")
        args.append(f"d_{kernel.name}_done")
        scratch = _scratch_lines(kernel.name, scratch_buffers +
                                 [(f"d_{kernel.name}_{reduction_key(r)}_pv", o.ctype, 1) for r in
                                  kernel.reductions if (o := ordered.get(r.target))] +
                                 [(f"d_{kernel.name}_{reduction_key(r)}_pr", "long long", len(o.rank)) for r in
                                  kernel.reductions if (o := ordered.get(r.target))])
    _check_index_range(kernel, extents, grid, {a: arrays[a] for a in used_arrays}, by_id)
    dynamic = [e for e in per_launch if not ((n := e.constant()) is not None and n > 0)]
    launch_if = " && ".join(dict.fromkeys(f"({e}) > 0" for e in dynamic))
    if body is not None:
        body = "\n".join(line.rstrip() for line in body.strip().splitlines() if line.strip())
    tree_bytes = sum(block[0] * block[1] * block[2] * (SIZES.get(r["type"], 8) + 8 * len(r["ordered"] or ()))
                     for r in reductions)
    return KernelCode(kernel.name, params, args, index_lines, guards, locals_, body, block, tuple(grid),
                      tuple(extents), launch_if, reductions, kernel.why, shared_bytes=tree_bytes,
                      epilogue=epilogue, last_values=[(v, scalar_types[v]) for v in private if v not in device_scalars],
                      device_writes=[(v, scalar_types[v]) for v in serial_writes], renames=renames, atomics=atomics,
                      promotions=proms, scratch=scratch, tree=tree, row_leader=row_leader)


def _ordered(nest: Nest, kernel, r, part: str, by_id: dict[int, Loop]) -> Ordered:
    """The Ordered of a floating-point max/min reduction across the kernel's threads: its iteration is the
    reduction's loops that run in the kernel (loops on the host run in order, launch after launch), as C names
    them."""
    rank = []
    for lp in kernel.rank_loops(r, by_id):
        c_var = lp.source_var
        rank.append(f"-(long long)({c_var})" if lp.origin is not None and lp.origin.step < 0 else f"(long long)({c_var})")
    if not rank:
        raise CodegenError(f"the {r.op} of {r.target} runs across threads but none of its loops is in {kernel.name}")
    key = reduction_key(r)
    return Ordered(r.target, reduction_type(nest, r), r.op, r.ties or "first", r.nan_init, r.value, part, tuple(rank),
                   tuple(f"c2gpu_{key}_r{k}" for k in range(len(rank))))


def _ordered_code(o: Ordered, red: str, result: str, block) -> dict:
    """The template's lines of an ordered max/min (see Ordered): declarations, the tree, and what the last block
    does with the blocks' pairs."""
    d, threads = len(o.rank), block[0] * block[1] * block[2]
    key = red[len("c2gpu_red_"):]
    ranks = [f"{red}_r{k}" for k in range(d)]
    here, there = [f"{x}[c2gpu_tid]" for x in ranks], [f"{x}[c2gpu_tid + c2gpu_s]" for x in ranks]
    copy = " ".join(f"{a} = {b};" for a, b in zip([f"{red}[c2gpu_tid]"] + here, [f"{red}[c2gpu_tid + c2gpu_s]"] + there))
    mine = [f"c2gpu_{key}_q{k}" for k in range(d)]
    seen = [f"c2gpu_{key}_w{k}" for k in range(d)]
    return {
        "ordered": ranks,
        "decls": [f"{o.ctype} {o.part} = {IDENTITY[o.op]};"] +
                 [f"long long {v} = {o.none if k == 0 else '0'};" for k, v in enumerate(o.rank_vars)],
        "shared": [f"__shared__ {o.ctype} {red}[{threads}];", f"{red}[c2gpu_tid] = {o.part};"] +
                  [f"__shared__ long long {x}[{threads}];" for x in ranks] +
                  [f"{x}[c2gpu_tid] = {v};" for x, v in zip(ranks, o.rank_vars)],
        "combine": f"if ({o.beats(f'{red}[c2gpu_tid + c2gpu_s]', there, f'{red}[c2gpu_tid]', here)}) {{ {copy} }}",
        # every block leaves its pair in global memory; the last block to finish reduces them
        "publish": [f"c2gpu_{key}_pv[c2gpu_bid] = {red}[0];"] +
                   [f"c2gpu_{key}_pr[c2gpu_bid * {d} + {k}] = {x}[0];" for k, x in enumerate(ranks)],
        "gather": [f"{o.ctype} c2gpu_{key}_v = {IDENTITY[o.op]};"] +
                  [f"long long {q} = {o.none if k == 0 else '0'};" for k, q in enumerate(mine)] +
                  ["for (unsigned int c2gpu_b = c2gpu_tid; c2gpu_b < c2gpu_blocks; c2gpu_b += "
                   f"{threads}) {{",
                   f"  const {o.ctype} c2gpu_{key}_w = ((volatile {o.ctype} *)c2gpu_{key}_pv)[c2gpu_b];"] +
                  [f"  const long long {w} = ((volatile long long *)c2gpu_{key}_pr)[c2gpu_b * {d} + {k}];"
                   for k, w in enumerate(seen)] +
                  [f"  if ({o.beats(f'c2gpu_{key}_w', seen, f'c2gpu_{key}_v', mine)}) {{ "
                   + " ".join(f"{a} = {b};" for a, b in zip([f"c2gpu_{key}_v"] + mine, [f"c2gpu_{key}_w"] + seen))
                   + " }", "}",
                   f"{red}[c2gpu_tid] = c2gpu_{key}_v;"] +
                  [f"{x}[c2gpu_tid] = {q};" for x, q in zip(ranks, mine)],
        # the total so far (before this launch: the earliest of all) is replaced only as C's comparison says
        "finish": [f"if ({ranks[0]}[0] != {o.none} && {o.keeps(f'{red}[0]', f'*{result}')})",
                   f"  *{result} = {red}[0];"],
    }


def _buffer_lines(buffers: list[tuple[str, str, int]]) -> list[str]:
    """Host lines before a launch: each (name, C type, elements per block) buffer, kept between calls and launches
    (static) and grown when a launch has more blocks."""
    if not buffers:
        return []
    lines = ["const size_t c2gpu_blocks = (size_t)c2gpu_grid.x * c2gpu_grid.y * c2gpu_grid.z;"]
    for name, ctype, per_block in buffers:
        lines += [f"static {ctype} *{name} = NULL;", f"static size_t {name}_blocks = 0;",
                  f"if (c2gpu_blocks > {name}_blocks) {{",
                  f"  if ({name}) C2GPU_CHECK(cudaFree({name}));",
                  f"  C2GPU_CHECK(cudaMalloc((void **)&{name}, c2gpu_blocks * {per_block} * sizeof({ctype})));",
                  f"  {name}_blocks = c2gpu_blocks;", "}"]
    return lines


def _scratch_lines(kernel: str, buffers: list[tuple[str, str, int]]) -> list[str]:
    """Host lines before a launch: each (name, C type, elements per block) buffer, kept between calls and launches
    (static) and grown when a launch has more blocks, and the kernel's counter of finished blocks (zeroed once;
    the last block zeroes it again)."""
    lines = _buffer_lines(buffers) or ["const size_t c2gpu_blocks = (size_t)c2gpu_grid.x * c2gpu_grid.y * c2gpu_grid.z;"]
    done = f"d_{kernel}_done"
    lines += [f"static unsigned int *{done} = NULL;", f"if (!{done}) {{",
              f"  C2GPU_CHECK(cudaMalloc((void **)&{done}, sizeof(unsigned int)));",
              f"  C2GPU_CHECK(cudaMemset({done}, 0, sizeof(unsigned int)));", "}"]
    return lines


def _last_iteration(nest: Nest, kernel, host_vars: list[str]) -> str:
    """C condition true in the one thread that runs the kernel's last iteration (isl's lexicographic maximum
    of its mapped loops, for the current values of the host loops around it)."""
    by_id = _loops_by_id(nest)
    loops = [by_id[m.lid] for m in kernel.loops]
    bad = next((g for lp in loops for g in lp.guards if g.constraints is None), None)
    if bad is not None:
        raise CodegenError(f"the last iteration of {kernel.name} depends on the condition '{bad.text}' "
                           f"(line {bad.loc.line}): c2gpu cannot tell which thread leaves its private scalars' values")
    params = list(nest.params) + [v for v in host_vars if v not in nest.params]
    names = {lp.var: lp.var for lp in loops}
    cons = ph.domain_constraints(loops, names)
    domain = isl.Set(f"[{', '.join(params)}] -> {{ [{', '.join(names)}] : {' and '.join(cons)} }}")
    last = domain.lexmax()
    return " && ".join(f"{m.var} == {ph.to_c(last.dim_max(k).coalesce(), params)}"
                       for k, m in enumerate(kernel.loops))


INT_MAX = 2 ** 31 - 1
GRID_LIMITS = {"x": 2 ** 31 - 1, "y": 65535, "z": 65535}   # blocks per grid dimension (compute capability >= 3.0)


WIDE_INTS = ("long", "long int", "long long", "long long int", "unsigned long", "unsigned long int",
             "unsigned long long", "unsigned long long int", "size_t", "ptrdiff_t", "int64_t", "uint64_t")


def _index_type(m, loop: Loop, trip: int | None) -> str:
    """The C type of a mapped loop's thread index.

    A known trip count below 2^31 fits an int.  A symbolic one may not: the normalized index (a variable
    c2gpu introduced) is then 64-bit; when the index is the C loop variable itself (the loop already ran
    from 0 by 1), it keeps the variable's own type, whose range bounds the trip count in C as well.
    """
    if trip is not None and trip <= INT_MAX:
        return "int"
    if m.origin is None:
        return loop.c_type if loop.c_type in WIDE_INTS else "int"
    return "long long"


def wide_index(plan: ArrayPlan) -> bool:
    """Does the kernel index this array in 64 bits? When its size is symbolic: it may pass 2^31 elements.

    64-bit index math (rather than a run-time refusal in the wrapper) because large sizes are exactly
    the case worth a GPU; it costs a few integer instructions per access.  Known sizes past 32 bits are
    refused by _check_index_range.
    """
    return plan.ndims > 1 and plan.alloc.constant() is None


def _check_index_range(kernel, extents, grid, arrays: dict[str, ArrayPlan], by_id) -> None:
    """Refuse when the sizes (known constants, e.g. from -D) overflow the kernel's 32-bit indices or the grid.

    Thread indices, flattened subscripts (`A[(i) * (M) + (j)]`) and the C loop variables recomputed from
    them are `int` in the emitted code: past 2147483647 they would silently wrap.
    """
    for m in kernel.loops:
        k = "xyz".index(m.dim)
        ext = extents[k].constant()
        if ext is not None and ext > INT_MAX:
            raise CodegenError(f"loop '{m.c_var}' runs {ext} iterations: more than a 32-bit thread index counts "
                               f"(at most {INT_MAX}); c2gpu emits int indices, so it does not port this nest")
        blocks = grid[k].constant()
        if blocks is not None and blocks > GRID_LIMITS[m.dim]:
            raise CodegenError(f"loop '{m.c_var}' needs {blocks} thread blocks in grid dimension {m.dim}: "
                               f"CUDA allows at most {GRID_LIMITS[m.dim]}")
        o = m.origin
        if o is not None:
            lp = by_id.get(m.lid)
            for bound in (o.lower, o.upper, lp.lower if lp is not None else None):
                if bound is not None and bound.is_const() and abs(int(bound.const_value())) > INT_MAX:
                    raise CodegenError(f"loop '{m.c_var}' reaches {int(bound.const_value())}: beyond the 32-bit "
                                       f"(int) index arithmetic of the emitted kernel")
    for name, plan in sorted(arrays.items()):
        n = plan.alloc.constant()
        if n is not None and n - 1 > INT_MAX:
            raise CodegenError(f"array '{name}' spans {n} elements: its indices overflow the kernel's 32-bit "
                               f"(int) index arithmetic (at most {INT_MAX}); c2gpu does not port this nest")


def blocks_for(threads: CInt, b: int) -> CInt:
    """Blocks of `b` threads needed for `threads` threads: ceil(threads / b), folded when it is a constant.  (The
    emitted C converts to unsigned, as dim3 holds it; a launch runs only where `threads` > 0: `launch_if`.)"""
    n = threads.constant()
    if n is not None:
        return CInt.const(max(0, -(-n // b)))
    return CInt(f"(unsigned)((({threads}) + {b - 1}) / {b})",
                op("/", op("+", threads.expr, Poly.const(b - 1)), Poly.const(b)))
