"""The IR as JSON, following the versioned schema in `c2gpu/schemas/analysis.schema.json`.

Keys are emitted in a fixed order and lists in source order, so the same input
always gives the same bytes (no timestamps, no set iteration).
"""
from __future__ import annotations

from typing import Any

from ..analysis.counting import enclosing_loops, instances
from ..ir import Access, ArrayInfo, Flag, Guard, Loc, Loop, Nest, Program, Reduction, Statement
from ..symbolic import Poly, Sym

SCHEMA_VERSION = 1


def loc(l: Loc | None) -> dict | None:
    return None if l is None else {"file": l.file, "line": l.line, "col": l.col}


def expr(p: Poly | Sym | None) -> str | None:
    return None if p is None else p.to_c()


def flag(f: Flag) -> dict:
    out = {"code": f.code, "message": f.message, "location": loc(f.loc)}
    if f.level != "note":
        out["level"] = f.level
    if f.fix is not None:
        out["fix"] = {"title": f.fix.title, "edits": [
            {"file": e.span.file, "line": e.span.line, "col": e.span.col, "end_line": e.span.end_line,
             "end_col": e.span.end_col, "replacement": e.text} for e in f.fix.edits]}
        if f.fix.asserts:
            out["fix"]["asserts"] = f.fix.asserts
    return out


def guard(g: Guard) -> dict:
    return {"text": g.text, "affine": g.constraints is not None,
            "constraints": None if g.constraints is None else [str(c) for c in g.constraints],
            "location": loc(g.loc)}


def access(a: Access) -> dict:
    return {"array": a.array, "kind": a.kind, "text": a.text, "subscripts": [expr(s) for s in a.subscripts],
            "affine": a.affine, "reason": a.reason or None,
            "delinearized": None if a.linearized is None else [expr(s) for s in a.linearized],
            "element_type": a.elem_type, "element_size": a.elem_size, "location": loc(a.loc)}


def reduction(r: Reduction) -> dict:
    return {"target": r.target, "op": r.op, "over_loops": list(r.loops), "location": loc(r.loc)}


def statement(s: Statement, nest: Nest) -> dict:
    inst = instances(enclosing_loops(nest, s))
    return {"id": s.sid, "text": s.text, "location": loc(s.loc), "loops": list(s.loops),
            "guards": [guard(g) for g in s.guards], "instances": expr(inst),
            "accesses": [access(a) for a in s.accesses],
            "scalar_reads": list(s.scalar_reads), "scalar_writes": list(s.scalar_writes),
            "ops": dict(s.ops), "calls": list(s.calls), "reductions": [reduction(r) for r in s.reductions]}


def loop(lp: Loop, parent: str | None, depth: int) -> dict:
    o = lp.origin
    lower, upper = lp.bound_texts()        # (a bound written as a min or max of pieces: "min(a, b)")
    return {"var": lp.var, "parent": parent, "depth": depth, "header": lp.header, "location": loc(lp.loc),
            "lower": lower, "upper": upper, "step": lp.step, "trip_count": expr(lp.trip_count),
            "affine": lp.affine,
            "original": None if o is None else {"var": o.var, "lower": expr(o.lower), "upper": expr(o.upper),
                                                "step": o.step, "expression": f"{o.var} = {expr(o.lower + Poly.var(lp.var) * o.step)}"},
            "guards": [guard(g) for g in lp.guards], "flags": [flag(f) for f in lp.flags]}


def loops(root: Loop) -> list[dict]:
    out: list[dict] = []

    def walk(lp: Loop, parent: str | None, depth: int) -> None:
        out.append(loop(lp, parent, depth))
        for n in lp.body:
            if isinstance(n, Loop):
                walk(n, lp.var, depth + 1)
    walk(root, None, 0)
    return out


def array(a: ArrayInfo) -> dict:
    return {"name": a.name, "element_type": a.elem_type, "element_size": a.elem_size,
            "dims": [expr(d) for d in a.dims], "storage": a.storage, "restrict": a.restrict, "const": a.const,
            "location": loc(a.loc)}


def op_totals(nest: Nest) -> dict[str, str]:
    """Total operations of the nest per class, symbolically (guards ignored)."""
    totals: dict[str, Poly] = {}
    for s in nest.statements():
        inst = instances(enclosing_loops(nest, s))
        if inst is None:
            continue
        for cls, n in s.ops:
            totals[cls] = totals.get(cls, Poly()) + inst * n
    return {k: expr(v) for k, v in sorted(totals.items())}


def nest(n: Nest, flags: list[Flag]) -> dict:
    """The nest's entry; `flags` are all its diagnostics (IR flags, findings, refusals: see driver.diagnostics)."""
    return {"name": n.name, "function": n.function, "location": loc(n.loc), "region": n.region,
            "params": list(n.params), "loops": loops(n.root),
            "sizes": [{"name": name, "value": value, "source": source} for name, value, source in n.sizes],
            "statements": [statement(s, n) for s in n.statements()],
            "arrays": [array(a) for a in n.arrays],
            "scalars": [{"name": s.name, "type": s.ctype, "role": s.role, "location": loc(s.loc)} for s in n.scalars],
            "reductions": [reduction(r) for r in n.reductions()],
            "op_totals": op_totals(n),
            "flags": [flag(f) for f in flags],
            **({"rewrites": list(n.rewrites)} if n.rewrites else {}),
            **({"inductions": [{"name": i.name, "type": i.ctype, "step": i.step, "line": i.line}
                               for i in n.inductions]} if n.inductions else {})}


def program(p: Program, flags: dict[str, list[Flag]]) -> dict:
    """The file's entry; `flags` maps each nest's name to its diagnostics."""
    return {"path": p.path, "defines": {k: v for k, v in p.defines},
            "nests": [nest(n, flags[n.name]) for n in p.nests],
            "notes": [flag(f) for f in p.diagnostics]}


def document(files: list[dict], errors: list[dict]) -> dict:
    return {"tool": "c2gpu", "schema_version": SCHEMA_VERSION, "files": files, "errors": errors}
