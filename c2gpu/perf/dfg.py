"""Three-address code and data-flow graphs of a kernel's statements (for eq. 6.1, Alg. 6.3, Alg. 6.4).

Each statement's C expression (the pycparser AST the IR keeps) is flattened
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

from pycparser import c_ast

from ..algorithms.ilp import build_dfg
from ..algorithms.intensity import IntensityResult, classify
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

    def array_base(self, node) -> str | None:
        while isinstance(node, c_ast.ArrayRef):
            node = node.name
        return node.name if isinstance(node, c_ast.ID) else None

    def expr(self, node) -> str | None:
        if node is None or isinstance(node, c_ast.Constant):
            return None
        if isinstance(node, c_ast.ID):
            return self.scalar(node.name)
        if isinstance(node, c_ast.ArrayRef):
            base = self.array_base(node)
            if base is not None:
                self.arrays.add(base)
            return self.emit("ld", (base,))
        if isinstance(node, c_ast.BinaryOp):
            a, b = self.expr(node.left), self.expr(node.right)
            return self.emit(node.op, (a, b))
        if isinstance(node, c_ast.UnaryOp):
            if node.op in ("p++", "p--", "++", "--"):
                return self.assign(node.expr, "+=", None)
            if node.op == "sizeof":
                return None
            a = self.expr(node.expr)
            return a if node.op == "+" else self.emit(node.op, (a,))
        if isinstance(node, c_ast.Cast):
            a = self.expr(node.expr)
            return self.emit("cvt", (a,))
        if isinstance(node, c_ast.TernaryOp):
            c, a, b = self.expr(node.cond), self.expr(node.iftrue), self.expr(node.iffalse)
            return self.emit("select", (c, a, b))
        if isinstance(node, c_ast.FuncCall):
            args = [self.expr(a) for a in (node.args.exprs if node.args else [])]
            name = node.name.name if isinstance(node.name, c_ast.ID) else "call"
            return self.emit(name, args)
        if isinstance(node, c_ast.Assignment):
            return self.assign(node.lvalue, node.op, node.rvalue)
        if isinstance(node, c_ast.ExprList):
            out = None
            for e in node.exprs:
                out = self.expr(e)
            return out
        return None

    def assign(self, lvalue, op: str, rvalue) -> str | None:
        value = self.expr(rvalue) if rvalue is not None else None
        if op != "=":
            old = self.expr(lvalue)
            value = self.emit(op.rstrip("=") or "+", (old, value))
        if isinstance(lvalue, c_ast.ArrayRef):
            base = self.array_base(lvalue)
            if base is not None:
                self.arrays.add(base)
            self.emit("st", (value, base), dest=False)
        elif isinstance(lvalue, c_ast.ID):
            self.define(lvalue.name, value)
        return value

    def statement(self, node) -> None:
        if isinstance(node, c_ast.Decl):
            if node.init is not None and not isinstance(node.init, c_ast.InitList):
                self.define(node.name, self.expr(node.init))
        elif node is not None:
            self.expr(node)


def three_address(statement_asts, loop_vars: set[str]) -> TAC:
    """TAC of a sequence of statement ASTs (one straight-line region, e.g. a loop body)."""
    b = _Builder(set(loop_vars))
    for node in statement_asts:
        b.statement(node)
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
