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
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
from pycparser import c_ast

from ..algorithms.ilp import build_dfg

MEM_OPS = frozenset({"ld", "st"})


@dataclass
class TAC:
    instrs: list[tuple[str | None, str, tuple[str, ...]]]
    arrays: set[str]           # arrays read or written (Alg. 6.3's inouts)
    scalar_outs: set[str] = None  # values the named scalars hold at the end (live after the region)

    def dfg(self) -> nx.DiGraph:
        return build_dfg(self.instrs)


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
    g = tac.dfg()
    loads = [v for v, d in g.nodes(data=True) if d["op"] == "ld"]
    if not loads:
        return 1.0
    depth = {}
    for v in nx.topological_sort(g):
        here = 1 if g.nodes[v]["op"] == "ld" else 0
        depth[v] = here + max((depth[u] for u in g.predecessors(v)), default=0)
    return len(loads) / max(1, max(depth[v] for v in loads))
