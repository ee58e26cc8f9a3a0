"""A kernel's own view of a nest after loop distribution and interchange.

The mapping (c2gpu/passes/mapping.py) may split a loop's body into groups that run as separate kernels
(distribution), and may move a parallel loop outside a sequential one so that it can become a thread
dimension (interchange: gemm's `for k { for j ... }` becomes `for j { for k ... }` with j mapped).  The
mapping proves each step legal from the dependences; this module only builds the result: a `Nest` whose
root is the kernel's chain of loops in their new order (the mapped loops first, then the loops that stay in
each thread) around the innermost body, or the part of it the kernel runs.  Loops and statements are
copies with new loop ids and the syntax trees of the chain are rebuilt in the new order, so code
generation and the models read the view as they read any nest.
"""
from __future__ import annotations

from dataclasses import replace

from ..syntax_tree import Block
from ..ir import Loop, Nest, Statement


def kernel_view(nest: Nest, chain: list[Loop], body_of: Loop, items: tuple[int, ...] | None = None,
                sunk: tuple[Statement, ...] = ()) -> Nest:
    """The nest as one kernel sees it.

    chain:   every loop from the nest's root down to `body_of`, in their new order (outermost first).
    body_of: the deepest of them in the original nesting: its body runs innermost.
    items:   the positions of the body items the kernel runs (None: all of them).
    sunk:    statements of the chain's loops' bodies, before the loop inside, that each thread runs before the
             body (c2gpu/passes/mapping.py Mapper.sinkable: `xi = i * dx;` between `for i` and `for j`).
    """
    body = list(sunk) + ([body_of.body[k] for k in items] if items is not None else list(body_of.body))
    chain_lids = {lp.lid for lp in chain}
    new_ids = {lp.lid: k for k, lp in enumerate(chain)}

    def number(lp: Loop) -> None:               # loops inside the body keep their pre-order
        new_ids[lp.lid] = len(new_ids)
        for n in lp.body:
            if isinstance(n, Loop):
                number(n)
    for n in body:
        if isinstance(n, Loop):
            number(n)
    chain_ids = tuple(new_ids[lp.lid] for lp in chain)
    chain_vars = tuple(lp.var for lp in chain)

    def fix_stmt(s: Statement) -> Statement:
        below = [(lid, v) for lid, v in zip(s.loop_ids, s.loops) if lid not in chain_lids]
        return replace(s, loop_ids=chain_ids + tuple(new_ids[lid] for lid, _ in below),
                       loops=chain_vars + tuple(v for _, v in below))

    def fix(n):
        if isinstance(n, Loop):
            return replace(n, lid=new_ids[n.lid], body=tuple(fix(x) for x in n.body),
                           header_stmt=None if n.header_stmt is None else fix_stmt(n.header_stmt))
        return fix_stmt(n)

    root = None
    # the chain's loops around the body, in the IR's trees (which code generation prints and the transforms
    # rewrite)
    syntax = Block(tuple(n.syntax for n in body)) if items is not None else body_of.syntax.body
    if sunk and items is None:
        inner = body_of.syntax.body
        syntax = Block(tuple(n.syntax for n in sunk) + (inner.items if isinstance(inner, Block) else (inner,)))
    for lp in reversed(chain):
        loop_syntax = replace(lp.syntax, body=syntax)
        if root is None:
            root = replace(lp, lid=new_ids[lp.lid], body=tuple(fix(n) for n in body), syntax=loop_syntax,
                           header_stmt=None, perfect=bool(body) and all(isinstance(n, Loop) for n in body))
        else:
            root = replace(lp, lid=new_ids[lp.lid], body=(root,), syntax=loop_syntax, header_stmt=None, perfect=True)
        syntax = loop_syntax
    return replace(nest, root=root, flags=())
