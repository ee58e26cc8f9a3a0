"""Tiled kernels: stage the chosen shared-memory tiles (c2gpu/passes/shared_memory.py) and compute from them.

The kernel keeps the plain kernel's parameters, thread indices and locals
(codegen.kernel_code) and changes its body:
- threads outside the iteration space no longer return early: they help load
  tiles and reach every __syncthreads(); their statements are skipped;
- the block loads each tile cooperatively (consecutive threads, consecutive
  elements: coalesced), only elements inside the array's accessed region, then
  synchronizes before use and again before the next chunk overwrites it;
- the tiled loop (matmul's k) runs in chunks of TILE iterations;
- reads served by a tile become `c2gpu_sh_A[...][...]` with the tile's base
  subtracted; every other access is printed as in the plain kernel.
Tile extents are compile-time constants (block shape, TILE, constant trip
counts), so tiles are static __shared__ arrays.
"""
from __future__ import annotations

from dataclasses import replace


from ..analysis import isl_sets as ph
from .arrays import ArrayPlan, _c, _clamp, _declared_bounds
from .kernel import CodegenError, KernelCode, KernelPrinter, _flat, register_maps, wide_index
from .precompiled import templates
from ..syntax_tree import Assign, Block, Decl
from ..intexpr import CInt
from ..ir import Nest
from ..planning.promotion import access_nodes
from ..planning.shared_tiles import tile_region
from ..symbolic import Poly
from ..records import dataclass


@dataclass
class TileCode:
    """The code of one shared-memory tile in a tiled kernel: its base indices and the cooperative load (for
    a store tile, its mask and the cooperative store)."""
    name: str                 # shared array name
    ctype: str
    shape: tuple[int, ...]
    bases: list[str]          # "const int c2gpu_A_b0 = ...;" lines
    load: list[str]           # the cooperative load loop (for a store tile: clearing its mask)
    chunked: bool
    store: list[str] = None   # for a store tile: the cooperative store at the end of the kernel
    mask: str = ""            # for a store tile: "unsigned char c2gpu_mask_A[8][32]" marking written elements


def _element_indices(extents: list[int]) -> tuple[list[str], list[str]]:
    """Names and declarations of the tile coordinates of element c2gpu_e (row-major)."""
    names = [f"c2gpu_t{d}" for d in range(len(extents))]
    decls, rest = [], "c2gpu_e"
    for d in range(len(extents) - 1, 0, -1):
        decls.insert(0, f"const int {names[d]} = {rest} % {extents[d]};")
        rest = f"({rest} / {extents[d]})"
    decls.insert(0, f"const int {names[0]} = {rest};")
    return names, decls


def _tile_geometry(nest: Nest, o):
    """(array's inner extents as C, tile elements, tile coordinate names, their declarations, global coordinates)."""
    extents = ph.access_shape(nest, o.accesses[0])[1]
    n_elems = 1
    for d in o.dims:
        n_elems *= d.extent
    idx, decls = _element_indices([d.extent for d in o.dims])
    g = [CInt(f"(c2gpu_{o.tile_name}_b{d} + {idx[d]})", Poly.var(f"c2gpu_{o.tile_name}_b{d}") + Poly.var(idx[d]))
         for d in range(len(o.dims))]
    return tuple(CInt.of_poly(e) for e in extents), n_elems, idx, decls, g


def _mapped_lo(kernel, var: str) -> str | None:
    for m in kernel.loops:
        if m.var == var:
            return f"(int)(blockIdx.{m.dim} * blockDim.{m.dim})"
    return None


def _base_expr(tdim, kernel, tiled_var: str | None, covered: dict[str, int], block: dict[str, int], tile: int) -> str:
    """Smallest subscript value over the block's threads, the chunk and the covered loops."""
    parts = []
    for v, c in tdim.coeffs:
        lo = _mapped_lo(kernel, v)
        if lo is not None:
            hi = f"({lo} + {block[v] - 1})"
        elif v == tiled_var:
            lo, hi = "c2gpu_k0", f"(c2gpu_k0 + {tile - 1})"
        else:
            lo, hi = "0", str(covered[v] - 1)
        at = lo if c > 0 else hi
        if at != "0":
            parts.append(at if c == 1 else f"{c} * {at}")
    if tdim.params.terms:
        parts.append(f"({tdim.params.to_c()})")
    if tdim.const or not parts:
        parts.append(str(tdim.const))
    return " + ".join(parts).replace("+ -", "- ")


def _staged_index(opp, access, shape_subs, renames_for_covered: dict[str, Poly]) -> list[str]:
    subs = []
    for d, sub in enumerate(shape_subs):
        # an inner covered loop's start may use an outer one's normalized variable: substitute to a fixpoint
        for _ in range(len(renames_for_covered) + 1):
            if not sub.variables & set(renames_for_covered):
                break
            sub = sub.substitute(renames_for_covered)
        subs.append(f"({sub.to_c()}) - c2gpu_{opp.tile_name}_b{d}")
    return subs


class TiledPrinter(KernelPrinter):
    """KernelPrinter that serves the staged reads from their tiles.  `staged` and `stores` are keyed by the
    syntax-tree node (id) of the access: a nest rewritten by isl's scheduler repeats a statement, with its source
    positions, in several places, and each copy must print its own tile index (promotion.access_nodes)."""

    def __init__(self, arrays, renames, staged: dict[int, str], stores: dict[int, tuple[str, str]] | None = None,
                 atomics: dict[int, str] | None = None, registers=None, around=None, hoisted=frozenset(),
                 scratch=frozenset()):
        super().__init__(arrays, renames, atomics, registers, around, hoisted=hoisted, scratch=scratch)
        self.staged = staged
        self.stores = stores or {}

    def visit_Assign(self, n: Assign) -> str:
        key = id(n.target)
        if n.op == "=" and key in self.stores and key not in self.registers:   # a register: no tile store
            data, mask = self.stores[key]
            return f"({mask} = 1, {data} = ({self.visit(n.value)}))"
        return super().visit_Assign(n)

    def visit(self, node) -> str:
        if id(node) in self.staged:          # an element or a `*p` read from its tile
            return self.staged[id(node)]
        return super().visit(node)


def _access_nodes(nest: Nest, a) -> list:
    """The syntax-tree nodes that print access `a` (of its own statement); an error when there are none, as the
    tile would then be loaded and never read (or a store never reach its tile)."""
    for s in nest.statements():
        if any(x is a for x in s.accesses):
            nodes = access_nodes(s, a)
            if nodes:
                return nodes
            break
    raise CodegenError(f"cannot find the access of '{a.array}' at line {a.loc.line} in its statement")


def _store_tile(nest: Nest, kernel, o, arrays: dict[str, ArrayPlan], block: dict[str, int],
                stores: dict) -> TileCode:
    """A store tile: threads write their results into it, the block stores it to global memory row by row."""
    plan_a = arrays[o.array]
    bases = [f"const int c2gpu_{o.tile_name}_b{d} = {_base_expr(t, kernel, None, {}, block, 1)};"
             for d, t in enumerate(o.dims)]
    ext_c, n_elems, idx, decomp, g = _tile_geometry(nest, o)
    sh = "".join(f"[{i}]" for i in idx)
    clear = [f"for (int c2gpu_e = c2gpu_tid; c2gpu_e < {n_elems}; c2gpu_e += c2gpu_nthreads) {{",
             *["  " + line for line in decomp], f"  c2gpu_mask_{o.tile_name}{sh} = 0;", "}"]
    store = [f"for (int c2gpu_e = c2gpu_tid; c2gpu_e < {n_elems}; c2gpu_e += c2gpu_nthreads) {{",
             *["  " + line for line in decomp],
             f"  if (c2gpu_mask_{o.tile_name}{sh})",
             f"    {o.array}[{_flat(g, ext_c, wide_index(arrays[o.array]))}] = c2gpu_sh_{o.tile_name}{sh};", "}"]
    subs, _ = ph.access_shape(nest, o.accesses[0])
    index = "".join(f"[({s.to_c()}) - c2gpu_{o.tile_name}_b{d}]" for d, s in enumerate(subs))
    a = o.accesses[0]
    for node in _access_nodes(nest, a):
        stores[id(node)] = (f"c2gpu_sh_{o.tile_name}{index}", f"c2gpu_mask_{o.tile_name}{index}")
    mask_shape = "".join(f"[{d.extent}]" for d in o.dims)
    return TileCode(f"c2gpu_sh_{o.tile_name}", plan_a.ctype, o.shape, bases, clear, False, store,
                    f"unsigned char c2gpu_mask_{o.tile_name}{mask_shape}")


def checked_tiles(nest: Nest, kernel, plan) -> None:
    """What tiled_kernel refuses, refused without printing (the search's layout of a candidate, and the first
    thing tiled_kernel does): tiles along two loops, a tile whose region isl cannot bound, an access whose
    node is not found."""
    nest = kernel.view or nest
    if len({o.tiled_lid for o in plan.chosen if o.tiled_lid is not None}) > 1:
        raise CodegenError("tiles along two different loops")
    for o in [o for o in plan.chosen if o.kind == "store"]:
        _access_nodes(nest, o.accesses[0])
    for o in [o for o in plan.chosen if o.kind != "store"]:
        if tile_region(nest, o.array, len(o.dims)) is None:   # the shared-memory pass proposes no such tile
            raise CodegenError(f"cannot bound the region of '{o.array}' for its tile")
        for a in o.accesses:
            _access_nodes(nest, a)


def tiles_bytes(plan) -> int:
    """The static shared memory of a kernel's tiles."""
    return sum(o.size_bytes for o in plan.chosen)


def tiled_kernel(nest: Nest, kernel, plan, arrays: dict[str, ArrayPlan], base: KernelCode) -> tuple[KernelCode, str]:
    """(kernel code with tiles, rendered CUDA text)."""
    checked_tiles(nest, kernel, plan)
    nest = kernel.view or nest
    by_id = {lp.lid: lp for lp in nest.loops()}
    chosen = plan.chosen
    tiled_lids = {o.tiled_lid for o in chosen if o.tiled_lid is not None}
    tiled = by_id[tiled_lids.pop()] if tiled_lids else None
    block = {m.var: kernel.block["xyz".index(m.dim)] for m in kernel.loops}
    tile = plan.tile
    params = list(nest.params)

    # normalized variables of covered loops are not defined in the kernel (their C loops run): express
    # them through the C variable, v_n = (v - lower) / step, exact because v - lower is a multiple of step
    renames: dict[str, Poly] = {}
    for o in chosen:
        for lid in o.covered_lids:
            lp = by_id[lid]
            if lp.origin is not None:
                renames[lp.var] = (Poly.var(lp.origin.var) - lp.origin.lower).scale(
                    __import__("fractions").Fraction(1, lp.origin.step))

    tiles: list[TileCode] = []
    staged: dict[int, str] = {}
    stores: dict[int, tuple[str, str]] = {}
    for o in [o for o in chosen if o.kind == "store"]:
        tiles.append(_store_tile(nest, kernel, o, arrays, block, stores))
    for o in [o for o in chosen if o.kind != "store"]:
        covered = {by_id[l].var: by_id[l].trip_count.evaluate({}) for l in o.covered_lids}
        tiled_var = by_id[o.tiled_lid].var if o.tiled_lid is not None else None
        plan_a = arrays[o.array]
        shape = o.shape
        bases = [f"const int c2gpu_{o.tile_name}_b{d} = {_base_expr(t, kernel, tiled_var, covered, block, tile)};"
                 for d, t in enumerate(o.dims)]
        # where the tile may read: the array's exact accessed range, within its declaration
        ndims = len(o.dims)
        ranges = tile_region(nest, o.array, ndims)          # (not None: checked_tiles)
        bounds = _declared_bounds(nest.array(o.array), ndims, False)
        lows = [_clamp(_c(lo, params), low=b[0]) for (lo, _), b in zip(ranges, bounds)]
        highs = [_clamp(_c(hi, params), high=b[1]) for (_, hi), b in zip(ranges, bounds)]
        ext_c, n_elems, idx_names, decomp, g = _tile_geometry(nest, o)
        cond = " && ".join(f"{g[d]} >= ({lows[d]}) && {g[d]} <= ({highs[d]})" for d in range(ndims))
        flat = _flat(g, ext_c, wide_index(plan_a))
        sh_index = "".join(f"[{idx_names[d]}]" for d in range(ndims))
        load = [f"for (int c2gpu_e = c2gpu_tid; c2gpu_e < {n_elems}; c2gpu_e += c2gpu_nthreads) {{",
                *["  " + line for line in decomp],
                f"  if ({cond})",
                f"    c2gpu_sh_{o.tile_name}{sh_index} = {o.array}[{flat}];",
                "}"]
        tiles.append(TileCode(f"c2gpu_sh_{o.tile_name}", plan_a.ctype, shape, bases, load, o.tiled_lid is not None))
        for a in o.accesses:
            subs, _ = ph.access_shape(nest, a)
            text = f"c2gpu_sh_{o.tile_name}" + "".join(f"[{s}]" for s in _staged_index(o, a, subs, renames))
            for node in _access_nodes(nest, a):
                staged[id(node)] = text

    registers, around = register_maps(base.promotions, arrays, by_id)
    # the tiled loop itself is printed by the template, in chunks: its registers' loads and stores go just
    # before and after the chunks
    tiled_loads, tiled_stores = around.pop(id(tiled.syntax), ([], [])) if tiled is not None else ([], [])
    printer = TiledPrinter(arrays, base.renames, staged, stores, base.atomics, registers, around,
                           frozenset(a for a in kernel.private_arrays if nest.array(a).declared_in is not None),
                           frozenset(kernel.scratch_arrays))
    innermost = by_id[kernel.body_lid]
    body = innermost.syntax.body
    items = list(body.items) if isinstance(body, Block) else [body]
    split = next((k for k, it in enumerate(items) if tiled is not None and it is tiled.syntax), None)
    pre, post = (items, []) if split is None else (items[:split], items[split + 1:])

    # the variables of loops inside the thread that the kernel declares at its top (kernel_code: `int i;` for a
    # `for (i = 0; ...)` without a declaration in its header): the body's own declaration of one, hoisted beside
    # it, would declare it twice
    loop_vars = {lp.source_var
                 for lp in kernel.inner_loops(by_id) if not lp.declared_in_header}

    def block_text(nodes) -> tuple[list[str], list[str]]:
        """Statements for active threads; top-level declarations hoisted so later parts still see them."""
        decls, lines = [], []
        for node in nodes:
            if isinstance(node, Decl) and node.name in printer.hoisted:
                continue        # an array declared per thread at the top of the kernel
            if isinstance(node, Decl):
                if node.name not in loop_vars:
                    decls.append(printer.visit(replace(node, head=node.assignable or node.head, init=None)) + ";")
                if node.init is not None:
                    lines.append(f"{node.name} = {printer.visit(node.init)};")
            else:
                text = printer.visit(node)
                lines.append(text if text.rstrip().endswith(("}", ";")) else text + ";")
        return decls, lines

    pre_decls, pre_lines = block_text(pre)
    post_decls, post_lines = block_text(post)
    pre_lines += tiled_loads
    post_lines[:0] = tiled_stores
    chunk = None
    if tiled is not None:
        trip = tiled.trip_count.to_c()
        cvar = tiled.source_var
        header_var = [f"{tiled.c_type} {cvar} = {(tiled.origin.lower + Poly.var(tiled.var) * tiled.origin.step).to_c()};"] \
            if tiled.origin is not None else []
        if tiled.origin is not None and not tiled.declared_in_header:
            header_var = [f"{cvar} = {(tiled.origin.lower + Poly.var(tiled.var) * tiled.origin.step).to_c()};"]
        body = printer.visit(tiled.syntax.body)
        if not isinstance(tiled.syntax.body, Block):
            body = body if body.rstrip().endswith(("}", ";")) else body + ";"
        loop_var_decl = "int " if (tiled.declared_in_header or tiled.origin is not None) else ""
        chunk = {"trip": trip, "tile": tile, "var": tiled.var, "var_decl": loop_var_decl,
                 "header_var": header_var, "body": [line for line in body.splitlines() if line.strip()]}
    code = replace(base, body="")
    text = templates().get_template("kernel_tiled.cu.j2").render(
        k=code, tiles=tiles, pre_decls=pre_decls + post_decls, pre=pre_lines, post=post_lines, chunk=chunk,
        whole=[t for t in tiles if not t.chunked], chunked=[t for t in tiles if t.chunked],
        why=base.why + "; shared memory: " + ", ".join(
            f"{o.array} [{']['.join(str(e) for e in o.shape)}] ({o.kind})" for o in chosen))
    return replace(code, shared_bytes=tiles_bytes(plan)), text
