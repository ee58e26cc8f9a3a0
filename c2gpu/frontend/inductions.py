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

A pointer walked through an array (`*dst++ = 2 * *src++;`, or `p += m;` for the next row) is such a counter
too: in iteration t it holds p0 + t (p0 + t * m), so `*dst++` is `*(dst + t)` and `p[j]` is `p[t * m + j]`.  The
step may then be any expression of local variables and parameters that reads no memory and nothing the nest
writes (a row length).  The pointer
must be a local variable or parameter, one level deep, whose address is never taken, and its value after the
nest must be dead (no final value is restored for a pointer: the port would need its address as a host
pointer).  Pointer arithmetic is exact in C only within one object, as it is in the original run.

A counter stepped in the body of an inner loop (`for (i ...) for (j ...) out[k++] = in[i][j];`) counts the
iterations of every loop on the way: k0 + (t_i * T_j + t_j), T_j the inner loop's trip count, when each of
those loops sits directly in the body of the one around it (run once per iteration), steps by one with a bound
(`<`, `<=`, `>`, `>=`) that reads nothing the nest writes and no loop variable around it (rectangular), and the
counter is read nowhere in the nest outside the inner body.  After the nest it gains the product of the trip
counts.  With a symbolic T_j the subscripts are products of variables, which the dependence analysis does not
prove (the rewrite is still exact); with constant sizes the loops are parallel.
"""
from __future__ import annotations

import copy
from dataclasses import field
from typing import Any

from pycparser import c_ast, c_generator

from ..records import dataclass
from .syntax import nodes as _nodes

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
    trip: Any = field(default=None, compare=False)   # the outer loop's trip count as first described (a
    #                                                  wavefront or a reordering changes the nest's outer loop)
    inner_trips: tuple[str, ...] = ()   # C trip counts of the inner loops on the way, when an inner loop steps it
    loops: tuple[str, ...] = ()         # the loops it counts the iterations of, outermost first
    stride: str = ""                    # a pointer's step per iteration as C, when it is not one element

    def note(self, loop_var: str, loop_line: int) -> str:
        sign = "+" if self.step > 0 else "-"
        if self.ctype.endswith("*"):
            moves = f"{self.stride} elements" if self.stride else "one element"
            by = f" times {self.stride}" if self.stride else ""
            return (f"pointer '{self.name}' moves {moves} {'forward' if self.step > 0 else 'back'} per iteration of "
                    f"loop '{loop_var}' (line {self.line}): the nest reads {self.name} {sign} the iteration number{by}, "
                    f"and the step is gone (its value after the nest is never read)")
        if len(self.loops) > 1:
            names = ", ".join(f"'{v}'" for v in self.loops)
            return (f"'{self.name}' counts the iterations of loops {names} together (stepped at line {self.line}): "
                    f"the nest reads {self.name} {sign} the number of iterations before, and the step is gone; after "
                    f"the nest the port steps {self.name} by the product of their trip counts")
        return (f"'{self.name}' counts the iterations of loop '{loop_var}' (line {loop_line}): the nest reads "
                f"{self.name} {sign} the iteration number where it read {self.name}, and the statement that steps it "
                f"(line {self.line}) is gone; after the nest the port steps {self.name} by the trip count")


def substitute_inductions(loop: c_ast.For, lookup, address_taken, volatile,
                          live_after=lambda name: True) -> tuple[c_ast.For, list[Induction]]:
    """`loop` with its induction counters substituted (a new tree), and the counters; `loop` itself and no
    counter when there is none.  lookup(name) -> the frontend's Var or None; address_taken: names whose
    address the function takes; volatile(name) -> whether a declaration of that name is volatile;
    live_after(name) -> whether the code after the nest may read the variable's value."""
    if not _counters(loop, lookup, address_taken, volatile, live_after):
        return loop, []
    new = copy.deepcopy(loop)
    found = _counters(new, lookup, address_taken, volatile, live_after)   # the same counters, on the copy's nodes
    drops: dict[int, tuple[c_ast.For, set[int]]] = {}
    for c in found:
        owner = c.owner
        if not isinstance(owner.stmt, c_ast.Compound):
            owner.stmt = c_ast.Compound([owner.stmt], owner.stmt.coord)
        items = owner.stmt.block_items
        if c.how is None:
            drops.setdefault(id(owner), (owner, set()))[1].add(c.k)
        else:                             # the step's own value: the old one after `j++`, the new one after `++j`
            step_node = next(n for n in _nodes(items[c.k]) if _writes(n, c.induction.name))
            items[c.k] = _node_replaced(items[c.k], step_node, c.value(c.how == "pre"))
        for j, item in enumerate(items):
            if j != c.k:
                items[j] = _replaced(item, c.induction.name, c.value(j > c.k))
    for owner, drop in drops.values():
        owner.stmt.block_items = [item for j, item in enumerate(owner.stmt.block_items) if j not in drop]
    if any(c.pointer for c in found):
        _subscripts_moved(new, {c.induction.name for c in found if c.pointer})
    return new, [c.induction for c in found]


def _subscripts_moved(root: c_ast.Node, pointers: set[str]) -> None:
    """`(p + e)[s]` as `p[e + s]`, `(p - e)[s]` as `p[s - e]`, `*(p + e)` as `p[e]` and `*(p - e)` as `p[-(e)]`
    (the same element, in place), for the pointers substituted: the form the frontend reads as an access of p."""
    def moved(node) -> bool:
        return isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-") and isinstance(node.left, c_ast.ID) \
            and node.left.name in pointers
    for n in list(_nodes(root)):
        if isinstance(n, c_ast.ArrayRef) and moved(n.name):
            by = n.name
            n.name = by.left
            n.subscript = c_ast.BinaryOp(by.op, n.subscript, by.right) if by.op == "-" else \
                c_ast.BinaryOp("+", by.right, n.subscript)
        for attr in n.__slots__:
            child = getattr(n, attr, None)
            if isinstance(child, c_ast.UnaryOp) and child.op == "*" and moved(child.expr):
                by = child.expr
                setattr(n, attr, c_ast.ArrayRef(by.left, by.right if by.op == "+" else c_ast.UnaryOp("-", by.right),
                                                coord=child.coord))
            elif isinstance(child, list):
                for k, c in enumerate(child):
                    if isinstance(c, c_ast.UnaryOp) and c.op == "*" and moved(c.expr):
                        by = c.expr
                        child[k] = c_ast.ArrayRef(by.left, by.right if by.op == "+" else c_ast.UnaryOp("-", by.right),
                                                  coord=c.coord)


class _Counter:
    """A counter found in `loop` (or its copy): the loop whose body steps it, the step's place, and how to
    write its value there."""

    def __init__(self, induction: Induction, owner: c_ast.For, k: int, how: str | None, chain, ctype: str,
                 pointer: bool = False, stride: c_ast.Node | None = None):
        self.induction, self.owner, self.k, self.how = induction, owner, k, how
        self.chain, self.ctype = chain, ctype
        self.pointer, self.stride = pointer, stride

    def value(self, after: bool) -> c_ast.Node:
        """j0 +/- n, n the number of steps before this point: t0 in the outer loop's body (t = i - lo, or lo - i
        counting down); in the body of an inner loop, ((t0 * T1 + t1) * T2 + t2)..., each T the trip count of
        an inner loop on the way, which no iteration changes.  Computed in the counter's type (cast first)
        when a loop variable's type differs or is not known: with an unsigned i and an int j, j + t would be
        unsigned, and p[j + t] would not be p[-2] where j is -2."""
        count = None
        for var, lo, direction, trip, _ in self.chain:
            i = c_ast.ID(var)
            t = c_ast.BinaryOp("-", i, copy.deepcopy(lo)) if direction > 0 else c_ast.BinaryOp("-", copy.deepcopy(lo), i)
            count = t if count is None else c_ast.BinaryOp("+", c_ast.BinaryOp("*", count, copy.deepcopy(trip)), t)
        if after:
            count = c_ast.BinaryOp("+", count, c_ast.Constant("int", "1"))
        if self.stride is not None:
            count = c_ast.BinaryOp("*", count, copy.deepcopy(self.stride))
        if self.pointer:            # pointer + integer: the count stays in the loop variables' type
            return c_ast.BinaryOp("+" if self.induction.step > 0 else "-", c_ast.ID(self.induction.name), count)
        if any(loop_type != self.ctype for *_, loop_type in self.chain):
            count = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None,
                                                                             c_ast.IdentifierType(self.ctype.split()))),
                               count)
        return c_ast.BinaryOp("+" if self.induction.step > 0 else "-", c_ast.ID(self.induction.name), count)


def _counters(loop: c_ast.For, lookup, address_taken, volatile, live_after=lambda name: True) -> list[_Counter]:
    header = _header(loop)
    if header is None or loop.stmt is None:
        return []
    body = _block(loop)
    if not body:
        return []
    var, lo, direction = header
    nodes = [n for n in _nodes(loop.stmt)]
    if any(isinstance(n, _JUMPS) for n in nodes):
        return []
    written = _written_names(nodes)
    if var in written or (_ids(lo) & written) or var in _ids(lo) or not _plain(lo):
        return []
    declared = {n.name for n in nodes if isinstance(n, c_ast.Decl) and n.name}
    if var in declared or _ids(lo) & declared:      # the substituted i - lo would read another variable there
        return []
    in_header = _ids(loop.init) | _ids(loop.cond) | _ids(loop.next)
    # the loops whose bodies run once per iteration of the loop around them, outermost first: the outer loop,
    # then each inner loop directly in such a body, stepping by one, whose trip count nothing in the nest changes
    chains = [(loop, [(var, lo, direction, None, _loop_type(loop, lookup(var)))])]
    for owner, chain in chains:
        for item in _block(owner):
            inner = _header(item) if isinstance(item, c_ast.For) else None
            trip = _trip(item, inner) if inner is not None else None
            if trip is None:
                continue
            v, start, down = inner
            fixed = _ids(trip) | _ids(start)
            # rectangular: the bounds read no loop variable around (`q < i` changes the trip count every time)
            if (v in declared or fixed & (written | declared | {entry[0] for entry in chain}) or not _plain(trip)
                    or not _plain(start)
                    or v in _written_names(list(_nodes(item.stmt)))):
                continue
            chains.append((item, chain + [(v, start, down, trip, _loop_type(item, lookup(v)))]))
    # counter -> [(loop whose body steps it, its chain, index in that body, step, how)]: how is None for a
    # statement of its own (`j++;`), "post" or "pre" for a step inside a statement (`out[j++] = x;`)
    steps: dict[str, list] = {}
    for owner, chain in chains:
        for k, item in enumerate(_block(owner)):
            stepped = _step(item)
            if stepped is not None:
                steps.setdefault(stepped[0], []).append((owner, chain, k, stepped[1], None, None))
                continue
            strided = _strided(item)
            if strided is not None and not (_ids(strided[2]) & (written | declared)) and _plain(strided[2]):
                steps.setdefault(strided[0], []).append((owner, chain, k, strided[1], None, strided[2]))
                continue
            for name, step, how in _embedded_steps(item):
                steps.setdefault(name, []).append((owner, chain, k, step, how, None))
    loop_vars = {entry[0] for _, chain in chains for entry in chain}
    found: list[_Counter] = []
    for name, where in steps.items():
        v = lookup(name)
        if (len(where) != 1 or name in loop_vars or name in declared or name in in_header or name in address_taken
                or v is None or v.storage not in ("local", "param", "param-pointer") or volatile(name)):
            continue
        t = v.ctype
        pointer = t.pointers == 1 and not t.dims and not t.pointer_rows
        if not (pointer and not live_after(name)) and \
                not (t.is_scalar and t.base in WIDE_INTEGERS and where[0][5] is None):
            continue
        owner, chain, k, step, how, stride = where[0]
        if stride is not None and not all((s := lookup(n)) is not None and s.storage in ("local", "param")
                                          and n not in address_taken for n in _ids(stride)):
            continue                      # a global (or a variable a pointer reaches) a call could change
        if sum(1 for n in nodes if _writes(n, name)) != 1:      # the step itself is the only write
            continue
        item = _block(owner)[k]
        if how is not None and sum(1 for n in _nodes(item) if isinstance(n, c_ast.ID) and n.name == name) != 1:
            continue                      # read elsewhere in the statement that steps it: unsequenced in C
        if owner is not loop and _mentions(loop.stmt, name) != _mentions(owner.stmt, name):
            continue                      # read outside the inner loop's body, where no formula above holds
        trips = tuple(_text(entry[3]) for entry in chain[1:])
        ctype = f"{'const ' if t.const else ''}{t.base} *" if pointer else t.base
        found.append(_Counter(Induction(name, ctype, step, item.coord.line if item.coord else 0,
                                        inner_trips=trips, loops=tuple(entry[0] for entry in chain),
                                        stride=_text(stride) if stride is not None else ""),
                              owner, k, how, chain, t.base, pointer, stride))
    return found


def _block(loop: c_ast.For) -> list:
    """The statements of a loop's body (one, for a body without braces)."""
    body = loop.stmt
    if isinstance(body, c_ast.Compound):
        return body.block_items or []
    return [body] if body is not None else []


def _trip(loop: c_ast.For, header) -> c_ast.Node | None:
    """The trip count of `for (v = lo; v < hi; v++)` as C, where it runs at least once: hi - lo (hi - lo + 1
    for <=; lo - hi counting down with >, lo - hi + 1 with >=); None for any other condition."""
    var, lo, direction = header
    cond = loop.cond
    if not (isinstance(cond, c_ast.BinaryOp) and isinstance(cond.left, c_ast.ID) and cond.left.name == var):
        return None
    ops = ("<", "<=") if direction > 0 else (">", ">=")
    if cond.op not in ops:
        return None
    span = c_ast.BinaryOp("-", copy.deepcopy(cond.right), copy.deepcopy(lo)) if direction > 0 else \
        c_ast.BinaryOp("-", copy.deepcopy(lo), copy.deepcopy(cond.right))
    return c_ast.BinaryOp("+", span, c_ast.Constant("int", "1")) if cond.op in ("<=", ">=") else span


def _mentions(node, name: str) -> int:
    return sum(1 for n in _nodes(node) if isinstance(n, c_ast.ID) and n.name == name)


def _text(node: c_ast.Node) -> str:
    return c_generator.CGenerator().visit(node)


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


def _strided(node) -> tuple[str, int, c_ast.Node] | None:
    """(name, +1 or -1, step) when `node` moves a variable by an expression other than one: `p += m`, `p -= m`,
    `p = p + m`, `p = p - m` (whether that is allowed is the caller's to say: pointers only)."""
    if not isinstance(node, c_ast.Assignment) or not isinstance(node.lvalue, c_ast.ID):
        return None
    name, value = node.lvalue.name, node.rvalue
    if node.op in ("+=", "-=") and not _is_one(value):
        step = value
        sign = 1 if node.op == "+=" else -1
    elif node.op == "=" and isinstance(value, c_ast.BinaryOp) and value.op in ("+", "-") and \
            isinstance(value.left, c_ast.ID) and value.left.name == name and not _is_one(value.right):
        step, sign = value.right, 1 if value.op == "+" else -1
    else:
        return None
    return (name, sign, step) if name not in _ids(step) else None


def _plain(expr) -> bool:
    """Whether `expr` (the loop's start) reads only variables and constants, with no side effect or memory
    access: evaluated again in the body, it gives the value it had when the loop started."""
    return all(isinstance(n, (c_ast.ID, c_ast.Constant, c_ast.BinaryOp, c_ast.Cast, c_ast.Typename, c_ast.TypeDecl,
                              c_ast.IdentifierType)) or (isinstance(n, c_ast.UnaryOp) and n.op in ("-", "+", "~"))
               for n in _nodes(expr))


def _is_one(node) -> bool:
    return isinstance(node, c_ast.Constant) and node.type == "int" and node.value.rstrip("uUlL") == "1"



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
