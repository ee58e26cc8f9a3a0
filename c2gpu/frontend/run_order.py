"""The order in which a run of the program first reaches its loop nests, as far as the text shows it.

Source order is not run order: matmul.c defines `matmul` (its nest at line 16) above `main`, whose first nest
(line 29) fills the arrays `matmul` then reads.  The whole-program view (c2gpu/report/program_view.py) needs
run order to say which arrays a ported nest finds already on the GPU.

The walk: `main`'s statements in order, a call to a function the file defines entering that function's body
(at its first call only: later calls and recursion reach no nest for the first time), then the functions no
walk from `main` reached, in the file's order, the same way.  Conditions are not evaluated and calls through
pointers are not followed: both branches of an `if` count, in text order.
"""
from __future__ import annotations

from pycparser import c_ast

Position = tuple[str, int, int]          # (file, line, column) of a nest's outermost `for`, as Nest.loc has it


def run_order(ast: c_ast.FileAST, nests: set[Position], position) -> tuple[Position, ...]:
    """The positions of `nests` in the order a run first reaches them; `position(node)` is a node's Position
    (the frontend's, so that it matches Nest.loc).  Nests no walk reaches (not in a function body) are left
    out: callers put them last."""
    bodies = {e.decl.name: e.body for e in ast.ext if isinstance(e, c_ast.FuncDef)}
    order: list[Position] = []
    found: set[Position] = set()
    entered: set[str] = set()
    starts = (["main"] if "main" in bodies else []) + [n for n in bodies if n != "main"]
    for name in starts:
        if name in entered:
            continue
        entered.add(name)
        stack: list[c_ast.Node] = [bodies[name]]
        while stack:                 # an explicit stack: generated C nests deeper than Python's recursion limit
            node = stack.pop()
            if isinstance(node, c_ast.For):
                pos = position(node)
                if pos in nests and pos not in found:
                    found.add(pos)
                    order.append(pos)
            if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) \
                    and node.name.name in bodies and node.name.name not in entered:
                entered.add(node.name.name)
                stack.append(bodies[node.name.name])        # popped after the arguments: they run first
            stack.extend(child for _, child in reversed(node.children()))
    return tuple(order)
