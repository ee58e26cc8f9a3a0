"""The loop-nest IR: immutable dataclasses with source coordinates on everything.

One `Program` holds the `Nest`s found in a file.  A nest is a tree of `Loop`s and
`Statement`s (`Loop.body`); every statement also records its enclosing loops
and guards, so analyses can work on the flat, polyhedral view
(`Nest.statements()`) without walking the tree.

Bounds are kept as the loop was written (`lower` inclusive, `upper` exclusive,
`step` signed) until the normalization pass rewrites the nest so every loop
runs from 0 with unit step; `Loop.origin` then expresses the original induction
variable in terms of the new one.
"""
from __future__ import annotations

import os

from dataclasses import field, replace
from typing import TYPE_CHECKING, Any, Iterator

from .syntax_tree import EXPRESSIONS, Decl
from .symbolic import Poly, Sym
from .records import dataclass

if TYPE_CHECKING:    # for annotations only: intexpr's evaluation needs numpy, which `c2gpu --help` should not load
    from .syntax_tree import Expr, For, Stmt
    from .intexpr import IntExpr

_EXPRESSION_OR_DECL = EXPRESSIONS + (Decl,)


@dataclass(frozen=True, order=True)
class Loc:
    """A place in a source file: file, line and, when known, column."""
    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.col else f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Span:
    """A region of the user's file, 1-based: from `line`:`col` to `end_line`:`end_col`, the end exclusive."""
    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    @property
    def loc(self) -> Loc:
        return Loc(self.file, self.line, self.col)


@dataclass(frozen=True)
class Edit:
    """`span` of the user's file replaced by `text` (an empty span: `text` inserted there)."""
    span: Span
    text: str


@dataclass(frozen=True)
class Fix:
    """A fix-it: edits of the user's file, applied together.  Made once, where the finding is made; every printer
    (terminal, JSON, SARIF, `c2gpu fix`, the language server) prints these edits.  `asserts`: what the edit
    promises that the code does not show (`restrict`: no two of these pointers overlap), for the user to check;
    empty when the edit keeps the program's meaning."""
    title: str                  # what the edit does, in a few words ("add reduction(+:sum)")
    edits: tuple[Edit, ...]
    asserts: str = ""

    @property
    def span(self) -> Span:
        """Where the fix starts (its first edit's region)."""
        return self.edits[0].span


def line_of(loc: Loc, home: str = "") -> str:
    """A line as a message names it: "line N", or "FILE:N" (the file's base name) when it is in another file
    than `home`, the nest's own: code inlined from another file of the program (NPB's vranlc, c_randdp.c)."""
    if home and loc.file and loc.file != home:
        return f"{os.path.basename(loc.file)}:{loc.line}"
    return f"line {loc.line}"


@dataclass(frozen=True)
class Flag:
    """Something that limits what c2gpu can prove about a nest, with where and why.

    `code` is stable (tests and users can filter on it): e.g. non-affine-subscript,
    non-affine-bound, unknown-call, unsupported-statement, pointer-alias.
    """
    code: str
    message: str
    loc: Loc
    loop_ids: tuple[int, ...] | None = None   # lids of the loops around it (None: unknown or the whole nest)
    level: str = "note"                       # "note", "warning" (a likely bug) or "error" (a bug: OpenMP races)
    fix: Fix | None = None                    # the edit that resolves it (a fix-it), when there is one


@dataclass(frozen=True)
class Constraint:
    """An affine constraint `expr >= 0` (kind "ge") or `expr == 0` (kind "eq")."""
    expr: Poly
    kind: str = "ge"

    def __str__(self) -> str:
        return f"{self.expr.to_c()} {'>=' if self.kind == 'ge' else '=='} 0"


@dataclass(frozen=True)
class Guard:
    """An `if` condition enclosing a statement or loop.

    `constraints` is the affine form when the condition is a conjunction of
    affine comparisons (negated for the else branch when that is still a
    conjunction); otherwise it is None and `text` is all we know.
    """
    text: str
    constraints: tuple[Constraint, ...] | None
    loc: Loc
    negated: bool = False
    # the `if` (or conditional expression) it comes from, numbered by the lowering: the guards of an `if`'s two
    # branches share it, and two copies of one `if` (a function inlined twice) do not
    site: int = field(default=0, compare=False, repr=False, hash=False)
    reads: tuple[str, ...] = ()         # scalars (and loop variables) the condition reads
    depth: int | None = None            # how many loops of the nest enclose the `if` (None: unknown)
    stmt_sid: int | None = None         # the statement that holds the condition's own accesses, when kept
    why: str = ""                       # why `constraints` is None (e.g. a conversion that changes values)
    # An else branch of an affine conjunction that is not one: its condition as a disjunction of conjunctions
    # (!(i == 0) is i >= 1 or i <= -1), so that the elements a nest touches are known exactly
    alternatives: tuple[tuple[Constraint, ...], ...] | None = None
    # The condition as an integer expression over the loop variables and sizes as the C spells them, when it is
    # one (`i % 2 == 0`, `i * i < n`; not `a[i] > 0`): what the performance model evaluates per thread
    value: "IntExpr | None" = field(default=None, compare=False, repr=False, hash=False)


@dataclass(frozen=True)
class ArrayInfo:
    """An array (or pointer used as one) that a nest accesses: element type, declared extents, storage and
    qualifiers, and the object it points into when the file shows it."""
    name: str
    elem_type: str          # C spelling: "float", "double", "int", "unsigned char", ...
    elem_size: int          # bytes
    dims: tuple[Poly | None, ...]   # declared extents, outermost first; None = unknown
    storage: str            # "global", "local", "param-array", "param-pointer"
    restrict: bool
    const: bool
    loc: Loc
    assigned: bool = False  # a pointer the function assigns (`p = q`, `p++`): it points where the code says,
    #                         so no assumption (--assume-no-alias) may be made about it
    target: tuple[str, ...] | None = None   # the object it is or points into, as the whole file shows it
    #                         (frontend/objects.py): one label per call of the function for a parameter, one
    #                         for anything else; None when the file does not show it
    target_source: str = ""  # where that fact comes from, for the report
    unreachable: bool = False  # an array declared in the function whose every use is an element access: its
    #                            address never leaves it, so no pointer points into it
    fields: tuple[str, ...] = ()  # an array of structs accessed by field (`u[i].re`): the struct's fields, in order;
    #                            the array is seen as one of the fields' type with the field as last dimension
    rows_source: str = ""      # a table of row pointers (`double ***u`) whose rows the file shows are objects of their
    #                            own (frontend/objects.py rows_distinct): the fact, for the report; "" otherwise
    dead_after: str = ""       # why nothing reads its values when the nest ends (an automatic array of the function,
    #                            not static, unreachable, that nothing after the nest reads; or a parameter no caller
    #                            reads after the call): per-iteration copies of it lose nothing
    #                            (c2gpu/passes/dependence.py array_private); "" otherwise
    declared_in: tuple[int, ...] | None = None  # an array declared inside the nest: the lids of the loops around
    #                            its declaration, each of whose iterations has a new array (None: declared outside)
    extent_source: str = ""    # a pointer parameter's first extent (`dims[0]`) taken from the arrays every call
    #                            passes (frontend/objects.py FileObjects.extent): where from, for the report


@dataclass(frozen=True)
class Access:
    """One array access in a statement, read or written, with its subscripts and whether they are affine."""
    array: str
    kind: str                              # "read" or "write"
    subscripts: tuple[Poly | None, ...]    # one per dimension as used in the source
    affine: bool
    loc: Loc
    text: str                              # the access as written, e.g. "A[i][k]"
    elem_type: str
    elem_size: int
    reason: str = ""                       # why it is not affine
    linearized: tuple[Poly, ...] | None = None  # 2-D form recovered from a[i*n + j]
    # the conditions of the statement's own conditional expressions under which the access is evaluated, as
    # (condition, whether it holds): `c ? a[i] : b[i-1]` reads b[i-1] only where c does not hold; `c && a[i]`
    when: tuple[tuple["Guard", bool], ...] = field(default=(), compare=False, repr=False, hash=False)


@dataclass(frozen=True)
class Reduction:
    """A candidate reduction: `target op= expr` where target is a scalar or an array element."""
    target: str            # scalar name or access text ("y[i]")
    op: str                # "+", "*", "max", "min"
    loc: Loc
    loops: tuple[str, ...]  # the loops it accumulates over (their variables do not index the target)
    array_access: Access | None = None
    guard: Guard | None = None   # the condition of `if (e > t) t = e;` when the max/min was matched through it
    # a max/min as C wrote it (frontend/reductions.py Order): which of equal values it keeps ("first": `x < m`, "last":
    # `x <= m`), whether a NaN accumulator takes the next value (fmin/fmax), and the value compared (c2gpu.syntax_tree)
    ties: str = ""
    nan_init: bool = False
    value: Any = field(default=None, compare=False, repr=False, hash=False)


@dataclass(frozen=True)
class ScalarInfo:
    """A scalar variable a nest uses (loop variables excluded).

    role: "local" (declared inside the nest: a per-iteration temporary),
    "invariant" (read, never written in the nest), "reduction" (only updated by
    candidate reductions), or "written" (assigned in the nest, declared outside).
    """
    name: str               # unique in the nest: a second variable of the same C name is "t#2" (see c_name)
    ctype: str
    role: str
    loc: Loc
    exposed: bool = False   # global, static or address-taken: a pointer (or a call) may read or write it
    declared_in: tuple[int, ...] | None = None  # lids of the loops around its declaration; None: outside the nest
    c_name: str = ""        # the name in the C source ("" = name)

    @property
    def source_name(self) -> str:
        return self.c_name or self.name


@dataclass(frozen=True)
class Statement:
    """A statement of a nest: the loops and guards around it, the arrays and scalars it reads and writes,
    its operations and reductions."""
    sid: int
    text: str
    loc: Loc
    loops: tuple[str, ...]          # enclosing loop variables, outermost first
    loop_ids: tuple[int, ...]       # the same loops by `Loop.lid` (sibling loops may share a variable name)
    guards: tuple[Guard, ...]
    accesses: tuple[Access, ...]
    scalar_reads: tuple[str, ...]
    scalar_writes: tuple[str, ...]
    ops: tuple[tuple[str, int], ...]   # op class -> count per statement instance
    reductions: tuple[Reduction, ...] = ()
    calls: tuple[str, ...] = ()
    decl: str | None = None             # name declared by this statement (loop-local temporaries)
    kind: str = "expr"                  # "assign" (its `assign_op`), "decl", "call", "cond", "header", "expr"
    assign_op: str | None = None        # "=", "+=", ... for an assignment statement
    scatter: str | None = None          # `a[e] += v` (or -=, ++, --) with the element chosen by data (e not affine)
    #                                     and v not reading a: the array named; every iteration's update commutes
    #                                     with the others', so they may run in any order, each one atomic
    # the statement as written (c2gpu.syntax_tree), the very node of its loop's `syntax`: what the passes, the models,
    # code generation and the transforms read
    syntax: "Stmt | None" = field(default=None, compare=False, repr=False, hash=False)

    def op_count(self, cls: str) -> int:
        return dict(self.ops).get(cls, 0)

    @property
    def expr(self) -> "Expr | Decl | None":
        """The statement as an expression or a declaration of one name (None for a loop or `if` kept whole)."""
        return self.syntax if isinstance(self.syntax, _EXPRESSION_OR_DECL) else None


@dataclass(frozen=True)
class Origin:
    """The loop as written before normalization: var = start + step * new_var."""
    var: str
    lower: Poly | None
    upper: Poly | None
    step: int
    text: str


@dataclass(frozen=True)
class Loop:
    """A `for` loop of a nest: its variable, bounds, step and trip count, its body, and what limits the
    analysis of it."""
    lid: int                    # unique in its nest: pre-order position, 0 = the outermost loop
    var: str
    lower: Poly | None          # inclusive
    upper: Poly | None          # exclusive when step > 0; for step < 0, `lower` is the start and
    step: int                   #   `upper` the exclusive end below it (iterates lower, lower+step, ... > upper).
                                # After normalization upper is the trip count, or None when that is a
                                # floor division (then `trip_count` is the bound)
    trip_count: Sym | None
    loc: Loc
    end_loc: Loc | None
    header: str                  # "for (i = 0; i < N; i++)" as written
    body: tuple["Loop | Statement", ...]
    guards: tuple[Guard, ...] = ()
    flags: tuple[Flag, ...] = ()
    origin: Origin | None = None        # set by normalization when it rewrote the loop
    c_type: str = "int"                  # declared type of the C loop variable
    declared_in_header: bool = False     # `for (int i = ...)` rather than a variable declared earlier
    perfect: bool = False                # the body holds nothing but `for` loops (pragmas and `;` aside)
    pragmas: tuple[str, ...] = ()        # the `#pragma` lines right before the loop ("omp parallel for private(j)")
    pragma_spans: tuple[Span, ...] = ()  # where each is (its whole directive)
    declared: tuple[str, ...] = ()       # C names of the variables its body declares (outside inner loops),
    #                                      initialized or not: each iteration has its own
    header_stmt: "Statement | None" = None   # what the header does to variables that outlive the loop: the
    #                                          write of a variable declared outside it, reads of arrays in bounds
    #                                          (in the enclosing loop, just before this one: see `statements`)
    lower_pieces: tuple[Poly, ...] = ()  # a start written as a max (step > 0; a min for step < 0) of several values,
    #                                      e.g. `i = (a > b ? a : b)`: the values, and `lower` is None
    upper_pieces: tuple[Poly, ...] = ()  # an exclusive end that is a min (step > 0; a max for step < 0) of several
    #                                      values (`i <= (a < b ? a : b)` gives a + 1, b + 1): them, `upper` is None
    syntax: "For | None" = field(default=None, compare=False, repr=False, hash=False)   # as written (c2gpu.syntax_tree)

    @property
    def source_var(self) -> str:
        """The loop variable as the C code names it (`var` is the normalized one when normalization rewrote it)."""
        return self.origin.var if self.origin else self.var

    @property
    def lowers(self) -> tuple[Poly, ...]:
        """The start as pieces: the tightest of them is the start (one piece: `lower`; none: unknown)."""
        return self.lower_pieces or ((self.lower,) if self.lower is not None else ())

    @property
    def uppers(self) -> tuple[Poly, ...]:
        """The exclusive end as pieces: the tightest of them is the end (one piece: `upper`; none: unknown)."""
        return self.upper_pieces or ((self.upper,) if self.upper is not None else ())

    def bound_texts(self) -> tuple[str | None, str | None]:
        """The start and the exclusive end for reports: one piece as C, several as `max(a, b)` and `min(a, b)`
        (counting down, the start is their min and the end their max); None when unknown."""
        def text(pieces: tuple[Poly, ...], fn: str) -> str | None:
            if len(pieces) <= 1:
                return pieces[0].to_c() if pieces else None
            return f"{fn}({', '.join(p.to_c() for p in pieces)})"
        down = self.step < 0
        return text(self.lowers, "min" if down else "max"), text(self.uppers, "max" if down else "min")

    @property
    def affine(self) -> bool:
        if self.normalized and self.trip_count is not None:
            # 0 <= var < trip, where trip may be floor(affine / step): quasi-affine, exact for isl
            return self.trip_count.num.is_affine()
        return bool(self.lowers and self.uppers) and all(p.is_affine() for p in self.lowers + self.uppers)

    @property
    def polyhedral(self) -> bool:
        """Whether isl can state its iterations exactly: a constant step and affine bounds (each piece of a min
        or max bound), with a single start when the step is not 1 or -1 (a stride from a max is not affine)."""
        if not self.step:
            return False
        if self.normalized and self.trip_count is not None and self.trip_count.num.is_affine():
            return True
        return self.affine and (len(self.lowers) == 1 or abs(self.step) == 1)

    @property
    def normalized(self) -> bool:
        return self.lower == Poly.const(0) and self.step == 1

    def loops(self) -> Iterator["Loop"]:
        """This loop and every loop inside it, outermost first (pre-order)."""
        yield self
        for node in self.body:
            if isinstance(node, Loop):
                yield from node.loops()

    def statements(self) -> Iterator[Statement]:
        for node in self.body:
            if isinstance(node, Loop):
                if node.header_stmt is not None:
                    yield node.header_stmt
                yield from node.statements()
            else:
                yield node


@dataclass(frozen=True)
class Nest:
    """An outermost `for` nest (candidate region) in a function."""
    name: str                       # "kernel_gemm#1": function and index of the nest in it
    function: str
    loc: Loc
    end_loc: Loc | None
    root: Loop
    arrays: tuple[ArrayInfo, ...]
    scalars: tuple[ScalarInfo, ...]
    params: tuple[str, ...]                   # symbolic parameters the bounds/subscripts use
    flags: tuple[Flag, ...] = ()
    region: str = "auto"                      # "auto", "scop", "pragma"
    sizes: tuple[tuple[str, int, str], ...] = ()   # parameters whose value the whole file shows (name, value, where
    #                                           from: frontend/objects.py); a value the user gives wins (`param_env`)
    functions: tuple[Any, ...] = ()            # the file's pure functions the nest calls, callees first
    #                                           (frontend/functions.py PureFunction): they port as __device__ copies
    live_after: tuple[str, ...] = ()          # variables declared outside the nest (loop variables included) whose
    #                                           value after the nest may be read: mentioned elsewhere in the
    #                                           function, global, static or address-taken
    stands_for: tuple[tuple[str, str], ...] = ()   # variables that stand for struct fields (frontend/fields.py):
    #                                           (name, the C expression it is at the nest: "v->n")
    inductions: tuple[Any, ...] = ()          # counters the outer loop steps once per iteration, substituted in the
    #                                           C (frontend/inductions.py Induction); the port steps them after it
    inlined: tuple[str, ...] = ()             # the file's functions whose calls it holds inlined (frontend/inline.py)
    rewrites: tuple[str, ...] = ()            # what c2gpu rewrote in the C before analysing it again (a wavefront,
    #                                           c2gpu/transform/wavefront.py), for the reports
    as_written: "Nest | None" = field(default=None, compare=False, repr=False, hash=False)  # the nest in C's order,
    #                                           when the reorder pass runs its statements in another: the CPU runs that

    def loops(self) -> list[Loop]:
        return list(self.root.loops())

    def param_env(self, given: dict[str, int] | None = None) -> dict[str, int]:
        """Parameter values for sizing: those the file shows, overridden by those the user gives (--param)."""
        return {**{name: value for name, value, _ in self.sizes}, **(given or {})}

    def loop(self, key: str | int) -> Loop:
        """A loop by `lid`, or by variable name (the first loop with that name, pre-order)."""
        for lp in self.root.loops():
            if lp.lid == key or lp.var == key:
                return lp
        raise KeyError(key)

    def statements(self) -> list[Statement]:
        return list(self.root.statements())

    def accesses(self) -> list[Access]:
        return [a for s in self.statements() for a in s.accesses]

    def array(self, name: str) -> ArrayInfo:
        for a in self.arrays:
            if a.name == name:
                return a
        raise KeyError(name)

    def all_flags(self) -> list[Flag]:
        out = list(self.flags)
        for lp in self.root.loops():
            out.extend(lp.flags)
        return out

    def reductions(self) -> list[Reduction]:
        return [r for s in self.statements() for r in s.reductions]


@dataclass(frozen=True)
class Program:
    """A C file as the frontend describes it: its loop nests, the notes about the file and the -D macros it was
    read with."""
    path: str
    nests: tuple[Nest, ...]
    diagnostics: tuple[Flag, ...] = ()       # file-level notes (skipped nests, pragmas)
    defines: tuple[tuple[str, str], ...] = ()
    c_only: tuple[str, ...] = ()              # why the file's C cannot be compiled as C++ (frontend/cxx.py): the
    #                                           constructs and their lines, for the port's choice of one .cu file
    run_order: tuple[tuple[str, int, int], ...] = ()   # the nests' (file, line, column) in the order a run first
    #                                           reaches them (frontend/run_order.py), not always source order
    frontend: Any = field(default=None, compare=False, repr=False, hash=False)   # the lowering that described the
    #                                           nests (frontend/lower.py FileLowerer): the transforms ask it to
    #                                           describe a nest's for-statement they rewrote (a syntax tree) in its
    #                                           place (describes, describe_again); None for a program built otherwise

    def nest(self, name: str) -> Nest:
        for n in self.nests:
            if n.name == name:
                return n
        raise KeyError(name)

    def in_run_order(self, nests) -> list[Nest]:
        """`nests` in the order a run first reaches them; those the walk did not reach last, in their order."""
        rank = {pos: k for k, pos in enumerate(self.run_order)}
        last = len(rank)
        return sorted(nests, key=lambda n: rank.get((n.loc.file, n.loc.line, n.loc.col), last))


def loop_words(var: str) -> str:
    """A loop as messages name it: `loop 'i'`; a `for` whose header names no variable (its IR name is `?LINE`)
    is "the for loop without a loop variable" (its location is given with the message)."""
    return "the for loop without a loop variable" if var.startswith("?") else f"loop '{var}'"


def ordered_reduction(nest: Nest, r: Reduction) -> bool:
    """A floating-point max/min: equal values can differ (-0.0 and 0.0), so which one C keeps depends on the
    order; across threads it is reduced over (value, iteration) pairs (codegen/kernel.py)."""
    return r.op in ("max", "min") and reduction_type(nest, r) in ("float", "double")


def reduction_type(nest: Nest, r: Reduction) -> str:
    """The C type of a reduction's target: the array's element type, or the scalar's type."""
    if r.array_access is not None:
        return r.array_access.elem_type
    return next((s.ctype for s in nest.scalars if s.name == r.target), "?")


def with_nests(program: Program, nests: list[Nest]) -> Program:
    return replace(program, nests=tuple(nests))
