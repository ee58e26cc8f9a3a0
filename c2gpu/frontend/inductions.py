"""Induction variables: a counter the nest's outer loop steps once per iteration, `j++`, read as what it is.

    for (i = 0; i < len; i++) {          for (i = 0; i < len; i++) {
      c[j] += a[i] * b[i];        ->        c[j + (i - 0)] += a[i] * b[i];
      j++;                                }
    }                                    /* after the nest: j += the trip count */

Left as it is, `j++` is a write of a scalar in every iteration: the loop carries a dependence on j and is not
parallel (DataRaceBench's DRB112 marks it `linear(j)`).  In iteration t of the loop (t = i - lo counting up,
lo - i counting down), j holds j0 + t before the increment and j0 + t + 1 after it, j0 being its value when
the nest starts, which the rewritten nest never changes.  The nest is then described from the rewritten C, and
the port restores j after it (Nest.inductions; c2gpu/codegen/wrapper.py).

Only what is exact in C is rewritten:
- the loop header is `i = lo` (or `int i = lo`) and steps i by one (`i++`, `++i`, `i += 1`, `i--`, ...), and
  the body neither writes nor declares i or anything lo reads, and lo reads no memory;
- the counter is stepped by one (`j++`, `--j`, `j += 1`, `j = j - 1`, ...) once, directly in the loop's body,
  so that it runs in every iteration: in a statement of its own, or as `j++`/`++j` inside an assignment
  (`out[j++] = x;`, not under `&&`, `||` or `?:`) that reads j nowhere else; the body has no break, continue,
  return or goto;
- the counter is a local variable or parameter of an integer type at least as wide as int (a narrower one
  wraps on conversion), not volatile, whose address is never taken, written nowhere else in the nest and not
  read in the loop header; no declaration in the loop hides it.
Signed arithmetic stays exact: j0 + t and j0 + t + 1 are values the counter itself takes in the original run
(a signed overflow there is already undefined).  Unsigned counters wrap the same way in both forms.
"""
from __future__ import annotations

import copy
from dataclasses import field
from typing import Any

from pycparser import c_ast

from ..records import dataclass

# integer types at least as wide as int, after typedefs (frontend/ctypes.py spellings)
WIDE_INTEGERS = frozenset({"int", "unsigned int", "long", "unsigned long", "long long", "unsigned long long"})
_JUMPS = (c_ast.Break, c_ast.Continue, c_ast.Return, c_ast.Goto, c_ast.Label)


@dataclass(frozen=True)
class Induction:
    """A counter stepped once per iteration of the nest's outer loop, substituted in the nest's C."""
    name: str
    ctype: str          # its type (after typedefs)
    step: int           # +1 or -1 per iteration
    line: int           # the statement that steps it
    trip: Any = field(default=None, compare=False)   # the loop's trip count as first described (a wavefront
    #                                                  or a reordering changes the nest's outer loop, not this)

    def note(self, loop_var: str, loop_line: int) -> str:
        sign = "+" if self.step > 0 else "-"
        return (f"'{self.name}' counts the iterations of loop '{loop_var}' (line {loop_line}): the nest reads "
                f"{self.name} {sign} the iteration number where it read {self.name}, and the statement that steps it "
                f"(line {self.line}) is gone; after the nest the port steps {self.name} by the trip count")


def substitute_inductions(loop: c_ast.For, lookup, address_taken, volatile) -> tuple[c_ast.For, list[Induction]]:
    """`loop` with its induction counters substituted (a new tree), and the counters; `loop` itself and no
    counter when there is none.  lookup(name) -> the frontend's Var or None; address_taken: names whose
    address the function takes; volatile(name) -> whether a declaration of that name is volatile."""
    header = _header(loop)
    if header is None or loop.stmt is None:
        return loop, []
    # a body without braces is a block of one statement (the rewrite gives it braces)
    body = loop.stmt if isinstance(loop.stmt, c_ast.Compound) else c_ast.Compound([loop.stmt], loop.stmt.coord)
    if not body.block_items:
        return loop, []
    var, lo, direction = header
    nodes = [n for n in _nodes(body)]
    if any(isinstance(n, _JUMPS) for n in nodes):
        return loop, []
    written = _written_names(nodes)
    if var in written or (_ids(lo) & written) or var in _ids(lo) or not _plain(lo):
        return loop, []
    declared = {n.name for n in nodes if isinstance(n, c_ast.Decl) and n.name}
    if var in declared or _ids(lo) & declared:      # the substituted i - lo would read another variable there
        return loop, []
    in_header = _ids(loop.init) | _ids(loop.cond) | _ids(loop.next)
    # counter -> [(index in the body, step, how)]: how is None for a statement of its own (`j++;`), "post" or
    # "pre" for a step inside a statement (`out[j++] = x;`, `out[++j] = x;`)
    steps: dict[str, list[tuple[int, int, str | None]]] = {}
    for k, item in enumerate(body.block_items):
        stepped = _step(item)
        if stepped is not None:
            steps.setdefault(stepped[0], []).append((k, stepped[1], None))
            continue
        for name, step, how in _embedded_steps(item):
            steps.setdefault(name, []).append((k, step, how))
    found: list[tuple[Induction, int, str | None]] = []
    for name, where in steps.items():
        v = lookup(name)
        if (len(where) != 1 or name == var or name in declared or name in in_header or name in address_taken
                or v is None or v.storage not in ("local", "param") or not v.ctype.is_scalar
                or v.ctype.pointers or v.ctype.base not in WIDE_INTEGERS or volatile(name)):
            continue
        k, step, how = where[0]
        writes = sum(1 for n in nodes if _writes(n, name))
        if writes != 1:                   # the step itself is the only write
            continue
        if how is not None and sum(1 for n in _nodes(body.block_items[k])
                                   if isinstance(n, c_ast.ID) and n.name == name) != 1:
            continue                      # read elsewhere in the statement that steps it: unsequenced in C
        found.append((Induction(name, v.ctype.base, step, body.block_items[k].coord.line
                                if body.block_items[k].coord else 0), k, how))
    if not found:
        return loop, []
    loop_type = _loop_type(loop, lookup(var))
    new = copy.deepcopy(loop)
    if not isinstance(new.stmt, c_ast.Compound):
        new.stmt = c_ast.Compound([new.stmt], new.stmt.coord)
    items = list(new.stmt.block_items)
    drop = set()
    for ind, k, how in found:
        if how is None:
            drop.add(k)
        else:                             # the step's own value: the old one after `j++`, the new one after `++j`
            step_node = next(n for n in _nodes(items[k]) if _writes(n, ind.name))
            items[k] = _node_replaced(items[k], step_node, _value(ind, var, lo, direction, how == "pre", loop_type))
        for j, item in enumerate(items):
            if j != k:
                items[j] = _replaced(item, ind.name, _value(ind, var, lo, direction, j > k, loop_type))
    new.stmt.block_items = [item for j, item in enumerate(items) if j not in drop]
    return new, [ind for ind, _, _ in found]


def _embedded_steps(item: c_ast.Node) -> list[tuple[str, int, str]]:
    """The steps by one of a variable inside an assignment statement (`out[j++] = x;`) that run whenever the
    statement does: (name, +1 or -1, "post" or "pre"); none under `&&`, `||` or `?:`, which may skip them."""
    if not isinstance(item, c_ast.Assignment):
        return []
    out = []
    stack = [item]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.TernaryOp) or (isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||")):
            if any(isinstance(m, c_ast.UnaryOp) and m.op in ("++", "p++", "--", "p--") for m in _nodes(n)):
                return []
            continue
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "p++", "--", "p--") and isinstance(n.expr, c_ast.ID):
            out.append((n.expr.name, 1 if "+" in n.op else -1, "post" if n.op.startswith("p") else "pre"))
        stack.extend(c for _, c in n.children())
    return out


def _node_replaced(root: c_ast.Node, target: c_ast.Node, value: c_ast.Node) -> c_ast.Node:
    """`root` with the node `target` (found in it by identity) replaced by `value` (in place)."""
    if root is target:
        return value
    for n in _nodes(root):
        for attr in n.__slots__:
            child = getattr(n, attr, None)
            if child is target:
                setattr(n, attr, value)
                return root
            if isinstance(child, list) and any(c is target for c in child):
                child[[id(c) for c in child].index(id(target))] = value
                return root
    return root


def _header(loop: c_ast.For):
    """(i, lo, +1 or -1) of `for (i = lo; ...; i++)` (or `int i = lo`, steps of one either way), else None."""
    init = loop.init
    if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        var, lo = init.lvalue.name, init.rvalue
    elif isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None \
            and not isinstance(init.decls[0].init, c_ast.InitList):
        var, lo = init.decls[0].name, init.decls[0].init
    else:
        return None
    stepped = _step(loop.next)
    if stepped is None or stepped[0] != var:
        return None
    return var, lo, stepped[1]


def _loop_type(loop: c_ast.For, outer) -> str | None:
    """The loop variable's type as the frontend spells it (after typedefs), when known: `outer` (its Var) for a
    variable declared before the loop, the header's own spelling for `for (int i = ...)`."""
    if isinstance(loop.init, c_ast.DeclList):
        t = loop.init.decls[0].type
        if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
            names = [n for n in t.type.names if n != "signed"] or ["int"]
            spelled = " ".join(names)
            return {"unsigned": "unsigned int", "long int": "long", "unsigned long int": "unsigned long",
                    "long long int": "long long"}.get(spelled, spelled)
        return None
    return outer.ctype.base if outer is not None and outer.ctype.is_scalar and not outer.ctype.pointers else None


def _step(node) -> tuple[str, int] | None:
    """(name, +1 or -1) when `node` steps a variable by one: `v++`, `--v`, `v += 1`, `v -= 1`, `v = v + 1`,
    `v = 1 + v`, `v = v - 1`."""
    if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "p++", "--", "p--") and isinstance(node.expr, c_ast.ID):
        return node.expr.name, 1 if "+" in node.op else -1
    if not isinstance(node, c_ast.Assignment) or not isinstance(node.lvalue, c_ast.ID):
        return None
    name, value = node.lvalue.name, node.rvalue
    if node.op in ("+=", "-=") and _is_one(value):
        return name, 1 if node.op == "+=" else -1
    if node.op == "=" and isinstance(value, c_ast.BinaryOp) and value.op in ("+", "-"):
        left, right = value.left, value.right
        if isinstance(left, c_ast.ID) and left.name == name and _is_one(right):
            return name, 1 if value.op == "+" else -1
        if value.op == "+" and isinstance(right, c_ast.ID) and right.name == name and _is_one(left):
            return name, 1
    return None


def _plain(expr) -> bool:
    """Whether `expr` (the loop's start) reads only variables and constants, with no side effect or memory
    access: evaluated again in the body, it gives the value it had when the loop started."""
    return all(isinstance(n, (c_ast.ID, c_ast.Constant, c_ast.BinaryOp, c_ast.Cast, c_ast.Typename, c_ast.TypeDecl,
                              c_ast.IdentifierType)) or (isinstance(n, c_ast.UnaryOp) and n.op in ("-", "+", "~"))
               for n in _nodes(expr))


def _is_one(node) -> bool:
    return isinstance(node, c_ast.Constant) and node.type == "int" and node.value.rstrip("uUlL") == "1"


def _nodes(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for _, c in n.children())


def _ids(node) -> set[str]:
    return {n.name for n in _nodes(node) if isinstance(n, c_ast.ID)} if node is not None else set()


def _writes(node, name: str) -> bool:
    """Whether `node` assigns, steps or takes the address of the variable `name`."""
    if isinstance(node, c_ast.Assignment):
        return isinstance(node.lvalue, c_ast.ID) and node.lvalue.name == name
    if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "p++", "--", "p--", "&"):
        return isinstance(node.expr, c_ast.ID) and node.expr.name == name
    return False


def _written_names(nodes) -> set[str]:
    out = set()
    for n in nodes:
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            out.add(n.lvalue.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "p++", "--", "p--", "&") and isinstance(n.expr, c_ast.ID):
            out.add(n.expr.name)
    return out


def _value(ind: Induction, var: str, lo: c_ast.Node, direction: int, after: bool, loop_type: str | None) -> c_ast.Node:
    """The counter's value in a statement of the body: j0 +/- t, t = i - lo (lo - i counting down), plus one
    step after the statement that steps it.  t is converted to the counter's type when the loop variable's
    differs (or is not known): with an unsigned i and an int j, j + t would be computed unsigned, and p[j + t]
    would not be p[-2] where j is -2.  t is in [0, trip count]: the conversion is exact while the trip count
    fits the counter's type (an int counter over more than 2^31 iterations is the exception)."""
    i = c_ast.ID(var)
    t = c_ast.BinaryOp("-", i, copy.deepcopy(lo)) if direction > 0 else c_ast.BinaryOp("-", copy.deepcopy(lo), i)
    if after:
        t = c_ast.BinaryOp("+", t, c_ast.Constant("int", "1"))
    if loop_type != ind.ctype:
        t = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None,
                                                                     c_ast.IdentifierType(ind.ctype.split()))), t)
    return c_ast.BinaryOp("+" if ind.step > 0 else "-", c_ast.ID(ind.name), t)


def _replaced(node: c_ast.Node, name: str, value: c_ast.Node) -> c_ast.Node:
    """`node` with every read of the variable `name` replaced by a copy of `value` (in place; the root may
    itself be replaced).  Struct field names are not variables."""
    if isinstance(node, c_ast.ID):
        return copy.deepcopy(value) if node.name == name else node
    stack = [node]
    while stack:
        n = stack.pop()
        for attr in n.__slots__:
            if attr in ("coord", "__weakref__") or (isinstance(n, c_ast.StructRef) and attr == "field"):
                continue
            child = getattr(n, attr, None)
            if isinstance(child, c_ast.ID):
                if child.name == name:
                    setattr(n, attr, copy.deepcopy(value))
            elif isinstance(child, c_ast.Node):
                stack.append(child)
            elif isinstance(child, list):
                for k, c in enumerate(child):
                    if isinstance(c, c_ast.ID) and c.name == name:
                        child[k] = copy.deepcopy(value)
                    elif isinstance(c, c_ast.Node):
                        stack.append(c)
    return node
