"""Plain-text rendering of the IR for the terminal."""
from __future__ import annotations


from ..analysis.counting import enclosing_loops, instances
from ..ir import Flag, Loop, Nest, Program
from ..symbolic import Poly


def _loop_line(lp: Loop, depth: int) -> str:
    pad = "  " * depth
    trip = lp.trip_count.to_c() if lp.trip_count is not None else "unknown"
    line = f"{pad}{lp.var:<6} {lp.header}  trip {trip}"
    if lp.lower_pieces or lp.upper_pieces:      # a min or max bound: the range it gives, in one line
        start, end = (b or "?" for b in lp.bound_texts())
        line += f"  [{lp.var} in [{start}, {end}) step {lp.step}]" if lp.step > 0 else \
            f"  [{lp.var} in ({end}, {start}] step {lp.step}]"
    if lp.origin is not None:
        o = lp.origin
        line += f"  [normalized: {o.var} = {(o.lower + Poly.var(lp.var) * o.step).to_c()}, {lp.var} in [0, {trip})]"
    return line


def nest_ir(n: Nest) -> str:
    lines = [f"{n.name}  {n.loc}  function {n.function}  region {n.region}"]
    if n.params:
        lines.append(f"  parameters: {', '.join(n.params)}")
    for name, _, source in n.sizes:
        lines.append(f"  size from the file: {source}")
    lines.append("  loops:")

    def walk(lp: Loop, depth: int) -> None:
        lines.append("    " + _loop_line(lp, depth))
        for node in lp.body:
            if isinstance(node, Loop):
                walk(node, depth + 1)
    walk(n.root, 0)
    lines.append("  statements:")
    for s in n.statements():
        inst = instances(enclosing_loops(n, s))
        guard = f" if {' && '.join(g.text for g in s.guards)}" if s.guards else ""
        lines.append(f"    S{s.sid} line {s.loc.line}: {s.text}{guard}")
        detail = []
        if inst is not None:
            detail.append(f"runs {inst.to_c()} times")
        if s.ops:
            detail.append("ops " + ", ".join(f"{k} {v}" for k, v in s.ops))
        if detail:
            lines.append("        " + "; ".join(detail))
        for a in s.accesses:
            subs = "".join(f"[{x.to_c() if x is not None else '?'}]" for x in (a.linearized or a.subscripts))
            note = "" if a.affine else f"  NOT AFFINE: {a.reason}"
            lines.append(f"        {a.kind:<5} {a.array}{subs}  ({a.elem_type}){note}")
    if n.arrays:
        lines.append("  arrays: " + ", ".join(
            f"{a.name}{''.join(f'[{d.to_c() if d is not None else chr(32)}]' for d in a.dims)} {a.elem_type} ({a.storage}{', restrict' if a.restrict else ''})"
            for a in n.arrays))
    if n.scalars:
        lines.append("  scalars: " + ", ".join(f"{s.name} ({s.ctype}, {s.role})" for s in n.scalars))
    reds = n.reductions()
    if reds:
        lines.append("  reduction candidates: " + "; ".join(
            f"{r.target} {r.op} over {', '.join(r.loops)} (line {r.loc.line})" for r in reds))
    return "\n".join(lines)


def diagnostic_lines(f: Flag) -> list[str]:
    """A diagnostic as a compiler prints it (`file:line:col: warning: message [code]`), then its fix-it as clang
    prints one for tools to apply: `fix-it:"file":{line:col-line:col}:"replacement"` (the end exclusive)."""
    out = [f"{f.loc}: {f.level}: {f.message} [{f.code}]"]
    for e in f.fix.edits if f.fix is not None else ():
        s = e.span
        out.append(f'fix-it:"{s.file}":{{{s.line}:{s.col}-{s.end_line}:{s.end_col}}}:"{_escaped(e.text)}"')
    return out


def _escaped(text: str) -> str:
    """`text` as clang writes a fix-it's replacement (llvm::raw_ostream::write_escaped): one line, with
    backslash, quote, tab and newline escaped and other control characters in octal."""
    named = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n"}
    return "".join(named.get(c) or (f"\\{ord(c):03o}" if ord(c) < 32 or ord(c) == 127 else c) for c in text)


def _flags(flags: list[Flag]) -> list[str]:
    return ["  " + line for f in flags for line in diagnostic_lines(f)]


def program(p: Program, flags: dict[str, list[Flag]], extra=None) -> str:
    """The program's IR with each nest's diagnostics (`flags` by nest name); `extra(nest)` may return more text
    to print right after each nest's IR."""
    out = [f"{p.path}: {len(p.nests)} loop nest{'s' if len(p.nests) != 1 else ''}" if p.nests else
           f"{p.path}: no loop nests: nothing to analyse or port"]
    for n in p.nests:
        out.append("")
        out.append(nest_ir(n))
        more = extra(n) if extra is not None else None
        if more:
            out.append(more)
        if flags[n.name]:
            out.append("  flags:")
            out.extend("  " + line for line in _flags(flags[n.name]))
    for f in p.diagnostics:
        out.extend(diagnostic_lines(f))
    return "\n".join(out) + "\n\n"
