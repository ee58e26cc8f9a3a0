"""Functions of the file that a kernel may call: pure functions of scalars.

A call to a function c2gpu cannot see into blocks every loop around it (it may read or write anything).
Real code calls small helpers of its own (`static inline double sq(double x) { return x * x; }`), and those
can be seen whole: a function is *pure* when it computes a scalar from scalar parameters and nothing else.
Its body may declare and assign scalar locals, branch, loop and return, and may call math-library functions
or other pure functions of the file.  It may not:
- touch memory or anything outside itself: arrays, pointers, `&`, `*`, struct members, globals, static
  locals;
- call a function that is not pure, or call itself (directly or through other functions);
- use goto, switch or variadic parameters.

A pure call then reads its arguments and nothing else, so it is no obstacle to parallelism.  It ports as a
`__device__` copy of the function, emitted with the kernels (codegen/wrapper.py).
"""
from __future__ import annotations

import copy
from dataclasses import field
from typing import Any

from pycparser import c_ast

from ..ir import Loc
from .libc import MATH_FUNCTIONS
from .ctypes import SIZES, CType, decl_type
from .syntax import Trees, text_of
from .syntax import nodes as _nodes
from ..records import dataclass

# statement and expression nodes a pure body may hold (their children are checked too)
_ALLOWED = (c_ast.Compound, c_ast.Decl, c_ast.DeclList, c_ast.Assignment, c_ast.UnaryOp, c_ast.BinaryOp,
            c_ast.TernaryOp, c_ast.Cast, c_ast.Constant, c_ast.ID, c_ast.FuncCall, c_ast.ExprList, c_ast.If,
            c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Return, c_ast.Break, c_ast.Continue,
            c_ast.EmptyStatement, c_ast.Typename, c_ast.TypeDecl, c_ast.IdentifierType)


@dataclass(frozen=True)
class PureFunction:
    """A pure function of the file (a scalar from scalar parameters), which a kernel may call as a
    `__device__` copy."""
    name: str
    loc: Loc
    calls: tuple[str, ...]       # the pure functions of the file it calls (their copies come first)
    # its declaration as written, without storage class and `inline`, split where its name stands (so that a
    # copy can take another name: "double ", "(double x, int n)"), and its body (c2gpu.syntax_tree)
    declaration: tuple[str, str] = ("", "")
    body: Any = field(default=None, compare=False, repr=False, hash=False)


def _arithmetic(t: CType) -> bool:
    return t.is_scalar and t.base in SIZES


def _why_not(fn: c_ast.FuncDef, typedefs: dict[str, CType], defined: set[str]) -> tuple[str, set[str]]:
    """Why `fn` is not pure on its own ("" when it may be), and the functions of the file it calls."""
    ftype = fn.decl.type
    if fn.param_decls:
        return "a K&R definition", set()
    if not _arithmetic(decl_type(ftype.type, typedefs)):
        return "it does not return a number", set()
    names: set[str] = set()
    for p in (ftype.args.params if ftype.args is not None else []):
        if isinstance(p, c_ast.EllipsisParam):
            return "variadic", set()
        if isinstance(p, c_ast.Typename):        # (void)
            continue
        if not isinstance(p, c_ast.Decl) or not p.name or not _arithmetic(decl_type(p, typedefs)):
            return "a parameter is not a number", set()
        names.add(p.name)
    for node in _nodes(fn.body):
        if isinstance(node, c_ast.Decl):
            if "static" in (node.storage or ()) or not _arithmetic(decl_type(node, typedefs)):
                return f"it declares '{node.name}', which is not a plain number", set()
            names.add(node.name)
    calls: set[str] = set()
    stack: list[c_ast.Node] = [fn.body]
    while stack:
        node = stack.pop()
        if not isinstance(node, _ALLOWED):
            return f"it uses {type(node).__name__}", set()
        if isinstance(node, c_ast.UnaryOp) and node.op in ("&", "*"):
            return "it takes an address or goes through a pointer", set()
        elif isinstance(node, c_ast.FuncCall):
            if not isinstance(node.name, c_ast.ID):
                return "it calls through a pointer", set()
            callee = node.name.name
            if callee in defined:
                calls.add(callee)
            elif callee not in MATH_FUNCTIONS:
                return f"it calls '{callee}'", set()
            stack.extend(node.args.exprs if node.args is not None else [])
            continue
        elif isinstance(node, c_ast.ID) and node.name not in names:
            return f"it reads '{node.name}', which is not its own", set()
        stack.extend(child for _, child in node.children())
    return "", calls



def pure_functions(ast: c_ast.FileAST, typedefs: dict[str, CType], loc_of) -> dict[str, PureFunction]:
    """The pure functions defined in the file, by name."""
    defs = {ext.decl.name: ext for ext in ast.ext if isinstance(ext, c_ast.FuncDef)}
    local: dict[str, set[str]] = {}
    for name, fn in defs.items():
        why, calls = _why_not(fn, typedefs, set(defs))
        if not why:
            local[name] = calls
    # pure: its callees are pure and it does not reach itself
    pure: dict[str, PureFunction] = {}

    def reaches(start: str) -> set[str]:
        seen, todo = set(), list(local.get(start, ()))
        while todo:
            f = todo.pop()
            if f not in seen:
                seen.add(f)
                todo.extend(local.get(f, ()))
        return seen
    for name, calls in local.items():
        reach = reaches(name)
        if name not in reach and reach <= set(local):
            pure[name] = PureFunction(name, loc_of(defs[name]), tuple(sorted(calls)), _declaration(defs[name]),
                                      Trees()(defs[name].body))
    return pure


def _declaration(fn: c_ast.FuncDef) -> tuple[str, str]:
    """PureFunction.declaration of `fn`."""
    slot = "c2gpu_function_name"            # (a name the user's C cannot hold: c2gpu_ names are c2gpu's)
    decl = copy.deepcopy(fn.decl)
    decl.name, decl.storage, decl.funcspec = slot, [], []
    inner = decl.type.type
    while not isinstance(inner, c_ast.TypeDecl):
        inner = inner.type
    inner.declname = slot
    before, after = text_of(decl).split(slot, 1)
    return before, after


def needed(pure: dict[str, PureFunction], called: set[str]) -> tuple[PureFunction, ...]:
    """The pure functions `called` and those they call, callees first (the order their copies are emitted)."""
    out: list[PureFunction] = []

    def add(name: str) -> None:
        f = pure[name]
        if f in out:
            return
        for c in f.calls:
            add(c)
        out.append(f)
    for name in sorted(called & set(pure)):
        add(name)
    return tuple(out)
