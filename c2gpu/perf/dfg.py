"""Three-address code and data-flow graphs of a kernel's statements (for eq. 6.1, Alg. 6.3, Alg. 6.4).

Each statement's expression tree (`Statement.expr`, c2gpu.syntax_tree) is flattened
into (dest, op, sources) triples, the format of c2gpu.algorithms.ilp:

- an array element read is `ld` with the array name as its operand (Alg. 6.3
  needs to know it touches global memory); a write is `st` (no result);
- scalars are renamed on every assignment (SSA, as the seed's IR): `s +=`
  reads the previous value and its result becomes s (no copy instruction);
- address arithmetic is not emitted: the compiler strength-reduces it inside
  loops and it is counted separately as integer instructions;
- constants and loop variables are free operands (no instruction, no edge).

The graphs are small DAGs whose edges always go from an earlier instruction to
a later one (an operand's last definition comes before its use), so the
instruction order is a topological order: eq. 6.1's longest path, the chains of
dependent loads and Alg. 6.3's generations are computed here in plain Python in
one pass over that order, with the same results as c2gpu.algorithms' networkx
versions (TAC.dfg()) and without importing networkx (~0.2 s) on every run.
"""
from __future__ import annotations

from functools import cached_property

from ..algorithms.ilp import build_dfg
from ..algorithms.intensity import IntensityResult, classify
from ..syntax_tree import Assign, Binary, Call, Cast, Comma, Decl, Index, InitList, Name, Ternary, Unary
from ..records import dataclass

MEM_OPS = frozenset({"ld", "st"})


@dataclass
class TAC:
    """The three-address code of a kernel's statements: (dest, op, sources) instructions in order, and the
    arrays they read or write."""
    instrs: list[tuple[str | None, str, tuple[str, ...]]]
    arrays: set[str]           # arrays read or written (Alg. 6.3's inouts)
    scalar_outs: set[str] = None  # values the named scalars hold at the end (live after the region)

    def dfg(self):
        """The networkx DiGraph of c2gpu.algorithms.ilp.build_dfg (what the functions below compute from)."""
        return build_dfg(self.instrs)

    @cached_property
    def preds(self) -> list[set[int]]:
        """Per instruction, the instructions defining its operands (build_dfg's edges j -> i, j < i)."""
        out, last_def = [], {}
        for dest, _op, srcs in self.instrs:
            out.append({last_def[x] for x in srcs if x in last_def})
            if dest is not None:
                last_def[dest] = len(out) - 1
        return out

    def ilp(self) -> float:
        """Eq. 6.1 as c2gpu.algorithms.ilp.ilp(self.dfg()): instructions / longest path (0 when empty)."""
        if not self.instrs:
            return 0.0
        finish: list[int] = []
        for p in self.preds:
            finish.append(1 + max((finish[u] for u in p), default=0))
        return len(self.instrs) / max(finish)

    def intensity(self, shared, inouts) -> IntensityResult:
        """Alg. 6.3 as c2gpu.algorithms.intensity.arithmetic_intensity(self.dfg(), ...): nodes visited by
        generation (networkx's topological_generations: 1 + the latest generation of an operand), ties by
        repr of the node id."""
        gen: list[int] = []
        for p in self.preds:
            gen.append(1 + max((gen[u] for u in p), default=-1))
        order = sorted(range(len(self.instrs)), key=lambda i: (gen[i], repr(i)))
        return classify([(i, {"dest": self.instrs[i][0], "op": self.instrs[i][1], "srcs": tuple(self.instrs[i][2])})
                         for i in order], shared, inouts)


class _Builder:
    def __init__(self, loop_vars: set[str]):
        self.instrs: list[tuple[str | None, str, tuple[str, ...]]] = []
        self.current: dict[str, str] = {}
        self.loop_vars = loop_vars
        self.arrays: set[str] = set()
        self.n = 0

    def tmp(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def emit(self, op: str, srcs, dest: bool = True) -> str | None:
        d = self.tmp() if dest else None
        self.instrs.append((d, op, tuple(s for s in srcs if s is not None)))
        return d

    def scalar(self, name: str) -> str | None:
        if name in self.loop_vars:
            return None
        return self.current.get(name, name)     # the value it was last assigned, else a live-in

    def define(self, name: str, value: str | None) -> None:
        if value is None:                        # a constant: materialized by one move
            value = self.emit("mov", ())
        self.current[name] = value               # SSA renaming: no copy instruction

    def array_base(self, e) -> str | None:
        while isinstance(e, Index):
            e = e.base
        return e.name if isinstance(e, Name) else None

    def expr(self, e) -> str | None:
        match e:
            case Name(name):
                return self.scalar(name)
            case Index():
                base = self.array_base(e)
                if base is not None:
                    self.arrays.add(base)
                return self.emit("ld", (base,))
            case Binary(op, left, right):
                a, b = self.expr(left), self.expr(right)
                return self.emit(op, (a, b))
            case Unary("p++" | "p--" | "++" | "--", operand):
                return self.assign(operand, "+=", None)
            case Unary("sizeof", _):
                return None
            case Unary(op, operand):
                a = self.expr(operand)
                return a if op == "+" else self.emit(op, (a,))
            case Cast(_, operand):
                return self.emit("cvt", (self.expr(operand),))
            case Ternary(c, a, b):
                c, a, b = self.expr(c), self.expr(a), self.expr(b)
                return self.emit("select", (c, a, b))
            case Call(_, args):
                srcs = [self.expr(a) for a in args]
                return self.emit(e.callee or "call", srcs)
            case Assign(op, target, value):
                return self.assign(target, op, value)
            case Comma(items):
                out = None
                for x in items:
                    out = self.expr(x)
                return out
        return None      # constants (free operands), members, initializer lists, what the IR keeps as text

    def assign(self, target, op: str, value) -> str | None:
        result = self.expr(value) if value is not None else None
        if op != "=":
            old = self.expr(target)
            result = self.emit(op.rstrip("=") or "+", (old, result))
        if isinstance(target, Index):
            base = self.array_base(target)
            if base is not None:
                self.arrays.add(base)
            self.emit("st", (result, base), dest=False)
        elif isinstance(target, Name):
            self.define(target.name, result)
        return result

    def statement(self, e) -> None:
        if isinstance(e, Decl):
            if e.init is not None and not isinstance(e.init, InitList):
                self.define(e.name, self.expr(e.init))
        elif e is not None:
            self.expr(e)


def three_address(statements, loop_vars: set[str]) -> TAC:
    """TAC of a sequence of statements (their `Statement.expr`: one straight-line region, e.g. a loop body)."""
    b = _Builder(set(loop_vars))
    for e in statements:
        b.statement(e)
    return TAC(b.instrs, b.arrays, set(b.current.values()))


def memory_parallelism(tac: TAC) -> float:
    """Independent loads per thread (MLP): loads / longest chain of dependent loads, eq. 6.1 applied
    to the memory instructions only (1 when there are none)."""
    loads = [i for i, (_d, op, _s) in enumerate(tac.instrs) if op == "ld"]
    if not loads:
        return 1.0
    depth: list[int] = []
    for (_d, op, _s), p in zip(tac.instrs, tac.preds):
        depth.append((1 if op == "ld" else 0) + max((depth[u] for u in p), default=0))
    return len(loads) / max(1, max(depth[v] for v in loads))
