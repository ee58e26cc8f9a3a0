"""The HTML report (`c2gpu analyze FILE --gpu NAME --html report.html`): one self-contained file.

No network: the CSS is inline, the charts are inline SVG drawn here, the code is highlighted here (a small
regex highlighter for C and CUDA), and there are no scripts or external fonts.  Per nest:

- the verdict, colour-coded, with the end-to-end and kernel-only speedups, the reason and the break-even size;
- the time breakdown: CPU time against the GPU's transfers + launches + kernels, to scale, and the GPU time's
  composition;
- GPUPerf's benefit chart (seed 000, Figure 4): memory cost on x, computation cost on y, the kernel's point A
  (T_mem, T_comp) and A' shifted by T_overlap, the diagonal between the compute- and memory-bound zones, the
  ideal costs T_fp and T_mem_min, and what each benefit metric would move (B_serial, B_itilp, B_fp lower the
  computation cost, B_memlp the memory cost);
- the roofline (log-log): the GPU's DRAM bandwidth slope and peak compute, and the kernel at its arithmetic
  intensity (flops per DRAM byte) and the performance its predicted time gives;
- where the time goes (seed 002): a stacked bar for the nest (communicate, launches, the kernels' categories)
  and one per kernel, with a legend and each kernel's limiter;
- the recommendations, the loops with the dependence verdicts, the block-size table, the shared-memory
  decisions, and the original nest and the emitted CUDA, highlighted.
"""
from __future__ import annotations

import html
import math
from typing import Iterable

import jinja2
from markupsafe import Markup
from pygments.lexers import CudaLexer
from pygments.token import Comment, Keyword, Name, Number, String

from .. import __version__, units
from ..drivers.cache import template_bytecode_cache
from ..perf.categories import CATEGORIES, MEANING
from .model import VERDICT_LABELS, NestReport, Report
from .program_view import share_text

# --------------------------------------------------------------------------- styles

VERDICT_STYLE = {   # class -> (label, colour, pale background); the labels are every report's (VERDICT_LABELS)
    cls: (VERDICT_LABELS[cls], colour, pale) for cls, colour, pale in (
        ("port", "#1a7f37", "#dafbe1"), ("port-if-resident", "#9a6700", "#fff8c5"),
        ("keep-on-cpu", "#cf222e", "#ffebe9"), ("not-portable", "#6e7781", "#eaeef2"),
        ("no-verdict", "#6e7781", "#eaeef2"))}
SEGMENT_COLOURS = {"transfers": "#d4a72c", "launches": "#8250df", "kernels": "#0969da", "context": "#6e7781",
                   "cpu": "#57606a"}


def _e(s) -> str:
    return html.escape(str(s), quote=True)


# --------------------------------------------------------------------------- syntax highlighting

def _css_class(kind, text: str) -> str:
    """The page's class of a Pygments token: keywords, types, CUDA's own words, numbers, strings, comments,
    preprocessor lines ("" for the rest)."""
    if kind in Comment.Preproc or kind in Comment.PreprocFile:
        return "t-pp"
    if kind in Comment:
        return "t-cm"
    if kind in Keyword.Reserved or kind in Name.Builtin or (kind in Name and text.startswith(("__", "cuda"))):
        return "t-cu"                       # __global__, threadIdx, cudaMemcpy
    if kind in Keyword.Type:
        return "t-ty"
    if kind in Keyword:
        return "t-kw"
    if kind in String:
        return "t-st"
    if kind in Number:
        return "t-nu"
    return ""


def highlight_c(code: str, first_line: int = 1, marked: Iterable[int] = ()) -> Markup:
    """C/CUDA source as HTML: one `<span class="line">` per line, tokens in `<span class="t-...">`
    (keywords, types, CUDA built-ins, numbers, strings, comments, preprocessor lines, launches); the lines
    numbered in `marked` get the class `blocks` too (the lines that block a port).  The source is lexed by
    Pygments' CUDA lexer."""
    marked = set(marked)
    pieces: list[list[str]] = []       # [css class or "", text], runs of one class merged
    for kind, text in CudaLexer(stripnl=False, ensurenl=False).get_tokens(code):
        cls = _css_class(kind, text)
        if text in ("<", ">") and pieces and pieces[-1][1] in (text, text * 2):
            pieces[-1][1] += text           # the lexer's < < < of a launch, one piece
            pieces[-1][0] = "t-cu" if len(pieces[-1][1]) == 3 else ""
            continue
        pieces.append([cls, text])
    # blanks between two pieces of one class belong to it (`#include <x.h>` is one preprocessor line)
    for k in range(1, len(pieces) - 1):
        if not pieces[k][0] and not pieces[k][1].strip(" \t") and pieces[k - 1][0] and pieces[k - 1][0] == pieces[k + 1][0]:
            pieces[k][0] = pieces[k - 1][0]
    merged: list[list[str]] = []
    for cls, text in pieces:
        if merged and merged[-1][0] == cls:
            merged[-1][1] += text
        else:
            merged.append([cls, text])
    lines: list[list[str]] = [[]]
    for cls, text in merged:
        for k, part in enumerate(text.split("\n")):
            if k:
                lines.append([])
            if part:
                lines[-1].append(f'<span class="{cls}">{_e(part)}</span>' if cls else _e(part))
    if lines and not lines[-1]:
        lines.pop()
    width = len(str(len(lines) + first_line - 1))
    return Markup("".join(f'<span class="line{" blocks" if k + first_line in marked else ""}"><span class="ln">'
                          f'{k + first_line:>{width}}</span>{"".join(parts)}</span>\n' for k, parts in enumerate(lines)))


# --------------------------------------------------------------------------- SVG helpers

def _svg_open(w: int, h: int, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
            f'role="img" aria-label="{_e(label)}">')


# The font size of each class of chart text (px), set on every <text>: the label placement below estimates a
# text's box from it, so the size lives here rather than in the page's CSS.
SVG_FONT_PX = {"tick": 10.5, "axis": 12, "small": 11, "zone": 12, "pt": 14, "pt2": 12, "blab": 11.5, "blabel": 12.5,
               "bval": 12.5, "inbar": 11.5}


def _text(x, y, s, cls="", anchor="start", extra="") -> str:
    c = f' class="{cls}" font-size="{SVG_FONT_PX[cls]:g}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{c}{extra}>{_e(s)}</text>'


def text_box(x: float, y: float, s: str, cls: str, anchor: str = "start") -> tuple[float, float, float, float]:
    """The box a chart text covers (x0, top, x1, bottom): 0.6 x the font size per character, from 0.8 x the size
    above the baseline to 0.2 x below (a generous estimate for the page's sans-serif fonts)."""
    f = SVG_FONT_PX[cls]
    w = 0.6 * f * len(s)
    x0 = x - w if anchor == "end" else x - w / 2 if anchor == "middle" else x
    return (x0, y - 0.8 * f, x0 + w, y + 0.2 * f)


def _overlap(a, b, pad: float = 1.0) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > -pad and min(a[3], b[3]) - max(a[1], b[1]) > -pad


class _Labels:
    """The texts of one chart, none over another: `fixed` texts go where asked (ticks, axis titles); `place`
    puts a label at the first of its candidate spots that is inside the chart and covers no text or mark
    already there, and leaves it out when none is free (every value is also in the table under the chart)."""

    def __init__(self, width: float, height: float):
        self.width, self.height = width, height
        self.busy: list[tuple[float, float, float, float]] = []

    def mark(self, x0, y0, x1, y1) -> None:
        """A drawn mark (a point, an arrow) labels must not cover."""
        self.busy.append((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)))

    def fixed(self, x, y, s, cls, anchor="start", extra="") -> str:
        self.busy.append(text_box(x, y, s, cls, anchor))
        return _text(x, y, s, cls, anchor, extra)

    def place(self, spots, s, cls, extra="") -> str:
        for x, y, anchor in spots:
            b = text_box(x, y, s, cls, anchor)
            inside = b[0] >= 2 and b[1] >= 2 and b[2] <= self.width - 2 and b[3] <= self.height - 2
            if inside and not any(_overlap(b, o) for o in self.busy):
                self.busy.append(b)
                return _text(x, y, s, cls, anchor, extra)
        return ""


def _around(x: float, y: float, first: list | None = None) -> list[tuple[float, float, str]]:
    """Candidate spots (x, baseline, anchor) for a label of the point (x, y): `first`, then rings around it."""
    spots = list(first or [])
    for r in (8, 18, 30, 44, 60):
        spots += [(x + r, y + 4, "start"), (x - r, y + 4, "end"), (x + r, y - r, "start"), (x - r, y - r, "end"),
                  (x + r, y + r + 8, "start"), (x - r, y + r + 8, "end"), (x, y - r, "middle"), (x, y + r + 10, "middle")]
    return spots


def _arrow_defs(colours: Iterable[str]) -> str:
    out = ["<defs>"]
    for c in colours:
        out.append(f'<marker id="ah-{c.strip("#")}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                   f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>')
    out.append("</defs>")
    return "".join(out)


def _arrow(x1, y1, x2, y2, colour, width=2.2, dash="") -> str:
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" stroke-width="{width}"'
            f'{d} marker-end="url(#ah-{colour.strip("#")})"/>')


def _si(v: float) -> str:
    """1e12 -> "1 T", 1e8 -> "100 M": tick labels of a log axis."""
    for unit, f in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= f:
            return f"{v / f:g} {unit}"
    return f"{v:g}"


def _nice_ticks(vmax: float, n: int = 4) -> list[float]:
    if vmax <= 0:
        return [0.0]
    raw = vmax / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=10 * mag)
    return [k * step for k in range(0, int(vmax / step) + 1)]


# --------------------------------------------------------------------------- GPUPerf benefit chart

BENEFIT_COLOURS = {"B_serial": "#bf3989", "B_itilp": "#8250df", "B_fp": "#0969da", "B_memlp": "#1a7f37",
                   "T_overlap": "#57606a"}
BENEFIT_MEANING = {
    "B_serial": "remove serialization (barriers, divergence, bank conflicts, SFU contention)",
    "B_itilp": "more inter-thread instruction-level parallelism (more warps, independent work)",
    "B_fp": "fewer non-floating-point instructions (address arithmetic, conversions)",
    "B_memlp": "more memory-level parallelism (coalescing, independent loads per thread)",
}


def benefit_chart(b: dict, kernel: str) -> Markup:
    """Seed 000, Figure 4, for one kernel: x = memory cost, y = computation cost (seconds per launch)."""
    t_comp, t_mem = b.get("T_comp") or 0.0, b.get("T_mem") or 0.0
    t_ov = b.get("T_overlap") or 0.0
    t_fp, t_mm = b.get("T_fp") or 0.0, b.get("T_mem_min") or 0.0
    W, L, R, T, B = 470, 70, 24, 22, 52
    H = T + B + (W - L - R)             # a square plot: both costs on one scale, the diagonal at 45 degrees
    pw, ph = W - L - R, H - T - B
    vmax = max(t_comp, t_mem, t_fp, t_mm, 1e-15) * 1.18
    ticks = _nice_ticks(vmax)
    vmax = max(vmax, ticks[-1])

    def X(v):
        return L + pw * v / vmax

    def Y(v):
        return T + ph * (1 - v / vmax)

    out = [_svg_open(W, H, f"GPUPerf benefit chart of {kernel}"), _arrow_defs(BENEFIT_COLOURS.values())]
    labels = _Labels(W, H)
    # zones: above the diagonal y = x computation dominates
    out.append(f'<polygon points="{X(0):.1f},{Y(0):.1f} {X(0):.1f},{Y(vmax):.1f} {X(vmax):.1f},{Y(vmax):.1f}" '
               f'fill="#fff1e5"/>')
    out.append(f'<polygon points="{X(0):.1f},{Y(0):.1f} {X(vmax):.1f},{Y(0):.1f} {X(vmax):.1f},{Y(vmax):.1f}" '
               f'fill="#eaf5ff"/>')
    for t in ticks:
        out.append(f'<line x1="{X(t):.1f}" y1="{Y(0):.1f}" x2="{X(t):.1f}" y2="{Y(vmax):.1f}" class="grid"/>')
        out.append(f'<line x1="{X(0):.1f}" y1="{Y(t):.1f}" x2="{X(vmax):.1f}" y2="{Y(t):.1f}" class="grid"/>')
        out.append(labels.fixed(X(t), Y(0) + 16, units.seconds(t), "tick", "middle"))
        out.append(labels.fixed(X(0) - 6, Y(t) + 4, units.seconds(t), "tick", "end"))
    out.append(f'<line x1="{X(0):.1f}" y1="{Y(0):.1f}" x2="{X(vmax):.1f}" y2="{Y(vmax):.1f}" class="diag"/>')
    out.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" class="frame"/>')
    out.append(labels.fixed(L + pw / 2, H - 12, "memory cost T_mem (per launch)", "axis", "middle"))
    labels.mark(0, 0, L - 4, H)         # the rotated y-axis title and the y ticks' column
    if t_fp > 0:     # the ideal costs
        out.append(f'<line x1="{X(0):.1f}" y1="{Y(t_fp):.1f}" x2="{X(vmax):.1f}" y2="{Y(t_fp):.1f}" class="ideal"/>')
    if t_mm > 0:
        out.append(f'<line x1="{X(t_mm):.1f}" y1="{Y(0):.1f}" x2="{X(t_mm):.1f}" y2="{Y(vmax):.1f}" class="ideal"/>')
    ax, ay = X(t_mem), Y(t_comp)
    a2x = X(max(t_mem - t_ov, 0.0))
    labels.mark(ax - 6, ay - 6, ax + 6, ay + 6)
    labels.mark(a2x - 6, ay - 6, a2x + 6, ay + 6)
    # the arrows first (their boxes are marks), then the labels, the points' names first
    texts = []
    bm = b.get("B_memlp") or 0.0        # B_memlp lowers the memory cost: from T_mem towards T_mem_min
    if bm > 0:
        y = ay + 16
        xe = X(max(t_mem - bm, 0.0))
        out.append(_arrow(ax, y, xe, y, BENEFIT_COLOURS["B_memlp"]))
        labels.mark(xe, y - 4, ax, y + 4)
        texts.append((_around((ax + xe) / 2, y, [((ax + xe) / 2, y + 15, "middle")]), f"B_memlp {units.seconds(bm)}",
                      "blab", BENEFIT_COLOURS["B_memlp"]))
    if t_ov > 0 and ax - a2x > 3:       # T_overlap shifts A to A'
        out.append(_arrow(ax, ay, a2x + 5, ay, BENEFIT_COLOURS["T_overlap"], 1.6, "4 3"))
        labels.mark(a2x, ay - 3, ax, ay + 3)
        texts.append((_around((ax + a2x) / 2, ay, [((ax + a2x) / 2, ay - 8, "middle")]),
                      f"T_overlap {units.seconds(t_ov)}", "small", None))
    y0 = t_comp                         # B_serial, B_itilp, B_fp lower the computation cost, from A' towards T_fp
    for k, name in enumerate(("B_serial", "B_itilp", "B_fp")):
        v = max(b.get(name) or 0.0, 0.0)
        if v <= 0:
            continue
        x = a2x + 12 + 14 * k
        y1 = max(y0 - v, 0.0)
        if Y(y1) - Y(y0) >= 2:
            out.append(_arrow(x, Y(y0), x, Y(y1), BENEFIT_COLOURS[name]))
            labels.mark(x - 6, Y(y0), x + 6, Y(y1))
            texts.append((_around(x, (Y(y0) + Y(y1)) / 2), f"{name} {units.seconds(v)}", "blab", BENEFIT_COLOURS[name]))
        y0 = y1
    out.append(f'<circle cx="{ax:.1f}" cy="{ay:.1f}" r="5.5" fill="#fff" stroke="#24292f" stroke-width="2"/>')
    out.append(f'<circle cx="{a2x:.1f}" cy="{ay:.1f}" r="5.5" fill="#24292f"/>')
    out.append(labels.place(_around(ax, ay, [(ax + 8, ay - 8, "start")]), "A", "pt"))
    if a2x != ax:
        out.append(labels.place(_around(a2x, ay, [(a2x - 8, ay - 8, "end")]), "A′", "pt"))
    # the labels of the ideal lines, then of the arrows, then of the zones, each where it hides nothing
    if t_fp > 0:
        s_fp = f"T_fp {units.seconds(t_fp)}: ideal computation"
        along = [(X(vmax * f) + 6, "start") for f in (0, 0.25, 0.5)] + [(X(vmax) - 6, "end")]
        out.append(labels.place([(x, Y(t_fp) + dy, anchor) for dy in (-7, 16) for x, anchor in along], s_fp, "small"))
    if t_mm > 0:
        s_mm = f"T_mem_min {units.seconds(t_mm)}: ideal memory"
        out.append(labels.place([(X(t_mm) + 5, Y(vmax * f) + 14, "start") for f in (1, 0.5, 0.25)]
                                + [(X(t_mm) - 5, Y(vmax * f) + 14, "end") for f in (1, 0.5, 0.25)], s_mm, "small"))
    for spots, text, cls, colour in texts:      # the arrows' labels have the most room to move: last but the zones
        out.append(labels.place(spots, text, cls, f' fill="{colour}"' if colour else ""))
    out.append(labels.place([(X(0) + 8, Y(vmax) + 32, "start"), (X(0) + 8, Y(vmax * 0.80), "start"),
                             (X(0) + 8, Y(vmax * 0.62), "start"), (X(vmax * 0.25), Y(vmax * 0.95), "start"),
                             (X(vmax * 0.05), Y(vmax * 0.45), "start")], "compute-bound zone", "zone"))
    out.append(labels.place([(X(vmax) - 6, Y(0) - 9, "end"), (X(vmax) - 6, Y(vmax * 0.12), "end"),
                             (X(vmax) - 6, Y(vmax * 0.3), "end"), (X(vmax) - 6, Y(vmax * 0.55), "end"),
                             (X(vmax * 0.45), Y(vmax * 0.08), "start")], "memory-bound zone", "zone"))
    out.append(labels.place([(X(vmax * f) + 8, Y(vmax * f) + 12, "start") for f in (0.9, 0.7, 0.5)], "y = x", "small"))
    out.append(f'<text transform="translate(16,{T + ph / 2:.1f}) rotate(-90)" text-anchor="middle" class="axis" '
               f'font-size="{SVG_FONT_PX["axis"]:g}">computation cost T_comp (per launch)</text>')
    out.append("</svg>")
    return Markup("".join(out))


# --------------------------------------------------------------------------- roofline

def roofline_chart(peaks: dict, kernel: dict, model: str) -> Markup:
    """Log-log roofline: GFLOP/s against flops per DRAM byte; the GPU's roofs and the kernel's point."""
    W, H, L, R, T, B = 470, 450, 74, 22, 22, 52
    pw, ph = W - L - R, H - T - B
    bw = peaks.get("dram_gbs") or 1.0
    p32 = peaks.get("fp32_gflops") or 1.0
    p64 = peaks.get("fp64_gflops") or 0.0
    rf = kernel.get("roofline") or {}
    ai = rf.get("flops_per_dram_byte")
    flops = rf.get("flops") or 0.0
    t = ((kernel.get("predictions") or {}).get(model) or {}).get("time_s") or 0.0
    perf = flops / t / 1e9 if t > 0 and flops > 0 else None
    roof_own = flops / rf["compute_s"] / 1e9 if rf.get("compute_s") else None
    xs = [0.01, 1000.0] + ([ai] if ai else [])
    ys = [p32 * 2] + ([perf] if perf else []) + [bw * 0.01]
    x0 = 10 ** math.floor(math.log10(max(min(xs), 1e-4)))
    x1 = 10 ** math.ceil(math.log10(max(xs)))
    y1 = 10 ** math.ceil(math.log10(max(ys)))
    y0 = 10 ** math.floor(math.log10(max(min(y for y in ys if y > 0), 1e-6)))
    y0 = max(y0, y1 / 1e7)

    def X(v):
        return L + pw * (math.log10(v) - math.log10(x0)) / (math.log10(x1) - math.log10(x0))

    def Y(v):
        v = min(max(v, y0), y1)
        return T + ph * (1 - (math.log10(v) - math.log10(y0)) / (math.log10(y1) - math.log10(y0)))

    out = [_svg_open(W, H, "roofline chart"), _arrow_defs(["#0969da"])]
    labels = _Labels(W, H)
    for d in range(int(round(math.log10(x0))), int(round(math.log10(x1))) + 1):
        v = 10.0 ** d
        out.append(f'<line x1="{X(v):.1f}" y1="{T}" x2="{X(v):.1f}" y2="{T + ph}" class="grid"/>')
        out.append(labels.fixed(X(v), T + ph + 16, f"{v:g}", "tick", "middle"))
    for d in range(int(round(math.log10(y0))), int(round(math.log10(y1))) + 1):
        v = 10.0 ** d
        out.append(f'<line x1="{L}" y1="{Y(v):.1f}" x2="{L + pw}" y2="{Y(v):.1f}" class="grid"/>')
        out.append(labels.fixed(L - 6, Y(v) + 4, _si(v * 1e9), "tick", "end"))
    out.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" class="frame"/>')
    out.append(labels.fixed(L + pw / 2, H - 12, "arithmetic intensity (flops per DRAM byte)", "axis", "middle"))
    labels.mark(0, 0, L - 4, H)         # the rotated y-axis title and the y ticks' column
    roofs = [(p32, "roof", "fp32 peak", -6)] + ([(p64, "roof2", "fp64 peak", 14)] if p64 and p64 < p32 * 0.95 else [])
    for peak, cls, _, _ in roofs:
        ridge = peak / bw
        pts = [(x0, bw * x0), (ridge, peak), (x1, peak)] if ridge > x0 else [(x0, peak), (x1, peak)]
        out.append(f'<polyline points="{" ".join(f"{X(a):.1f},{Y(b):.1f}" for a, b in pts)}" class="{cls}"/>')
    # the bandwidth slope's label, along it (rotated: not placed)
    xa = 10 ** (math.log10(x0) + 0.3 * (math.log10(max(p32 / bw, x0 * 10)) - math.log10(x0)))
    ang = -math.degrees(math.atan2(Y(bw * xa * 10) - Y(bw * xa), X(xa * 10) - X(xa))) if X(xa * 10) != X(xa) else 0
    out.append(f'<text x="{X(xa) + 4:.1f}" y="{Y(bw * xa) - 8:.1f}" class="small" font-size="{SVG_FONT_PX["small"]:g}" '
               f'transform="rotate({-ang:.1f} {X(xa) + 4:.1f} {Y(bw * xa) - 8:.1f})">DRAM {bw:,.0f} GB/s</text>')
    if ai and perf:
        attainable = min(bw * ai, roof_own or p32)
        px, py = X(ai), Y(perf)
        out.append(f'<line x1="{px:.1f}" y1="{Y(attainable):.1f}" x2="{px:.1f}" y2="{py:.1f}" stroke="#0969da" '
                   f'stroke-width="1.2" stroke-dasharray="3 3"/>')
        out.append(f'<circle cx="{px:.1f}" cy="{Y(attainable):.1f}" r="4" fill="#fff" stroke="#0969da" '
                   f'stroke-width="1.5"/>')
        out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="6" fill="#0969da"/>')
        labels.mark(px - 6, py - 6, px + 6, py + 6)
        labels.mark(px - 4, Y(attainable) - 4, px + 4, Y(attainable) + 4)
        share = perf / attainable if attainable else 0
        side = "start" if px < L + pw * 0.6 else "end"
        dx = 10 if side == "start" else -10
        # the two lines of the point's label stay together: the second goes where the first went, 14 px lower
        first = f"{units.flop_rate(perf * 1e9)} at {ai:.3g} flop/B"
        second = f"{share:.0%} of the roof ({rf.get('limiter', '?')} bound)"
        for sx, sy, anchor in _around(px, py, [(px + dx, py + 4, side), (px + dx, py - 18, side)]):
            b1, b2 = text_box(sx, sy, first, "pt2", anchor), text_box(sx, sy + 14, second, "small", anchor)
            if all(b[0] >= 2 and b[2] <= W - 2 and b[1] >= 2 and b[3] <= H - 2 and
                   not any(_overlap(b, o) for o in labels.busy) for b in (b1, b2)):
                out.append(labels.fixed(sx, sy, first, "pt2", anchor))
                out.append(labels.fixed(sx, sy + 14, second, "small", anchor))
                break
    else:
        out.append(labels.fixed(L + pw / 2, T + ph / 2, "no floating-point work or no DRAM traffic: no point", "small",
                                "middle"))
    for peak, _, name, dy in roofs:     # the roofs' labels: at the right end, or next to the ridge, or below it
        s = f"{name} {units.flop_rate(peak * 1e9)}"
        ridge = X(max(peak / bw, x0))
        out.append(labels.place([(X(x1) - 6, Y(peak) + dy, "end"), (ridge - 8, Y(peak) + 4, "end"),
                                 (X(x1) - 6, Y(peak) - dy + (8 if dy < 0 else -4), "end"), (ridge + 8, Y(peak) - 6, "start"),
                                 (ridge + 8, Y(peak) + 14, "start")], s, "small"))
    out.append(f'<text transform="translate(14,{T + ph / 2:.1f}) rotate(-90)" text-anchor="middle" class="axis" '
               f'font-size="{SVG_FONT_PX["axis"]:g}">performance (FLOP/s)</text>')
    out.append("</svg>")
    return Markup("".join(out))


# --------------------------------------------------------------------------- time breakdown

def breakdown_chart(n: NestReport) -> Markup:
    """CPU time against the GPU's transfers + launches + kernels, to scale; then the GPU time's composition."""
    g = n.gpu_s
    segs = [(k, g.get(k) or 0.0) for k in ("transfers", "launches", "kernels")]
    if n.data.get("performance", {}).get("context_included"):
        segs.append(("context", g.get("context") or 0.0))
    gpu_total = sum(v for _, v in segs)
    cpu = n.cpu_s or 0.0
    W, L, R = 960, 130, 150
    bw = W - L - R
    scale = max(cpu, gpu_total, 1e-15)
    H = 150
    out = [_svg_open(W, H, "time breakdown")]
    rows = [("CPU" + (" (measured)" if n.cpu_source == "measured" else " (estimate)"), [("cpu", cpu)], 14),
            (f"GPU ({n.gpu})", segs, 50)]
    for label, parts, y in rows:
        out.append(_text(L - 10, y + 17, label, "blabel", "end"))
        x = L
        total = sum(v for _, v in parts)
        for name, v in parts:
            w = bw * v / scale
            if v > 0:
                w = max(w, 1.5)
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="26" fill="{SEGMENT_COLOURS[name]}" '
                       f'rx="2"><title>{_e(name)} {_e(units.seconds(v))}</title></rect>')
            x += w
        out.append(_text(x + 8, y + 18, units.seconds(total), "bval"))
    # composition of the GPU time (100 %)
    y = 104
    out.append(_text(L - 10, y + 15, "GPU time split", "blabel", "end"))
    x = L
    for name, v in segs:
        w = bw * v / gpu_total if gpu_total else 0
        if w <= 0:
            continue
        out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="22" fill="{SEGMENT_COLOURS[name]}" '
                   f'opacity="0.85"/>')
        pct = v / gpu_total
        lab = f"{name} {pct:.0%}" if w > 110 else (f"{pct:.0%}" if w > 34 else "")
        if lab:
            out.append(_text(x + w / 2, y + 15, lab, "inbar", "middle"))
        x += w
    out.append(_text(L + bw + 8, y + 15, "= 100%", "bval"))
    out.append("</svg>")
    return Markup("".join(out))


# --------------------------------------------------------------------------- where the time goes (seed 002)

# seed 002's categories (c2gpu/perf/categories.py) and the nest's own parts; communicate and launches keep the
# colours of the time breakdown's transfers and launches
CATEGORY_COLOURS = {"communicate": SEGMENT_COLOURS["transfers"], "launches": SEGMENT_COLOURS["launches"],
                    "compute": "#0550ae", "global_read": "#1a7f37", "global_write": "#bc4c00",
                    "explicit_sync": "#bf3989", "divergence": "#cf222e", "idle": "#8c959f"}


def categories_chart(rows: list[tuple[str, str, list[tuple[str, str, float]]]]) -> Markup:
    """One stacked bar per row, each to 100% of its own time: rows are (label, total text, [(category, its
    words, seconds)]); the nest's row first (communicate, launches and the kernels' categories), then a row per
    kernel (its categories per launch)."""
    W, L, R, bar, gap = 960, 200, 140, 24, 12
    bw = W - L - R
    H = 8 + len(rows) * (bar + gap)
    out = [_svg_open(W, H, "where the GPU time goes (seed 002 categories)")]
    y = 8
    for label, total_text, segs in rows:
        shown = label if len(label) <= 25 else label[:24] + "…"      # 25 characters fit the left column
        out.append(_text(L - 10, y + 16, shown, "blabel", "end"))
        total = sum(v for _, _, v in segs)
        x = L
        for cat, words, v in segs:
            w = bw * v / total if total > 0 else 0.0
            if w <= 0:
                continue
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{max(w, 1.0):.1f}" height="{bar}" '
                       f'fill="{CATEGORY_COLOURS[cat]}"><title>{_e(words)} {_e(units.seconds(v))} '
                       f'({v / total:.0%})</title></rect>')
            pct = v / total
            lab = f"{words} {pct:.0%}" if w > 0.6 * SVG_FONT_PX["inbar"] * (len(words) + 5) + 8 else \
                (f"{pct:.0%}" if w > 34 else "")
            if lab:
                out.append(_text(x + w / 2, y + 16, lab, "inbar", "middle"))
            x += w
        out.append(_text(L + bw + 8, y + 16, total_text, "bval"))
        y += bar + gap
    out.append("</svg>")
    return Markup("".join(out))


def _categories_view(perf: dict, model: str) -> dict | None:
    """The "where the time goes" block of a nest: the chart, the legend (with the nest's seconds per part) and
    each kernel's limiter, from the JSON's time_categories (computed once, in c2gpu.perf.categories)."""
    nest = (perf.get("time_categories") or {}).get(model)
    if nest is None:
        return None
    own = {"communicate": ("communicate", nest["communicate_s"]), "launches": ("launches", nest["launches_s"])}
    nest_segs = [(c, words, s) for c, (words, s) in own.items()] + \
        [(c, CATEGORIES[c], nest["kernels_s"][c]) for c in CATEGORIES]
    rows = [("nest (all launches)", units.seconds(nest["total_s"]), nest_segs)]
    kernels = []
    for kk in perf.get("kernels") or []:
        tc = (kk.get("time_categories") or {}).get(model)
        if tc is None:
            continue
        t = sum(tc["per_launch_s"].values())
        launches = kk.get("launches", 1)
        rows.append((kk["name"], units.seconds(t) + (" /launch" if launches != 1 else ""),
                     [(c, CATEGORIES[c], tc["per_launch_s"][c]) for c in CATEGORIES]))
        kernels.append({"name": kk["name"], "per_launch": units.seconds(t), "launches": launches,
                        "limiter": tc["limiter_text"]})
    total = nest["total_s"] or 0.0
    legend = [(CATEGORY_COLOURS[c], words, MEANING[c], units.seconds(s), f"{s / total:.0%}" if total else "")
              for c, words, s in nest_segs]
    return {"chart": categories_chart(rows), "legend": legend, "kernels": kernels,
            "launches": nest["launches"], "context": units.seconds(nest["context_s"]) if nest["context_s"] else ""}


# --------------------------------------------------------------------------- the page

def _dominant_kernel(perf: dict, model: str) -> dict | None:
    ks = perf.get("kernels") or []
    if not ks:
        return None
    return max(ks, key=lambda k: ((k.get("predictions") or {}).get(model) or {}).get("time_s", 0) * k.get("launches", 1))


def _nest_view(n: NestReport, report: Report, index: int) -> dict:
    label, colour, pale = VERDICT_STYLE.get(n.verdict_class, VERDICT_STYLE["no-verdict"])
    perf = n.data.get("performance") or {}
    model = n.model or perf.get("default_model") or "gpuperf"
    view: dict = {"n": n, "anchor": f"nest-{index}", "label": label, "colour": colour, "pale": pale,
                  "model": model, "kernel_tables": [], "notes": [], "benefit": None, "roofline": None,
                  "kernel_name": "", "kernel_share": "", "kernel_count": 0, "benefits": [], "gpuperf_terms": [],
                  "gpuperf_case": "", "roofline_facts": {}}
    view["speedup"] = units.speedup(n.speedup)
    view["kernel_speedup"] = units.speedup(n.kernel_speedup)
    view["gpu_total"] = units.seconds(n.gpu_s.get("total") if n.gpu_s else None)
    view["cpu"] = units.seconds(n.cpu_s)
    view["cpu_how"] = ("measured" if n.cpu_source == "measured" else "static estimate") if n.cpu_source else ""
    view["breakdown"] = breakdown_chart(n) if n.gpu_s and n.cpu_s else None
    view["parts"] = [(k, units.seconds(n.gpu_s.get(k)), SEGMENT_COLOURS[k])
                     for k in ("transfers", "launches", "kernels") if n.gpu_s]
    view["categories"] = _categories_view(perf, model) if perf.get("kernels") else None
    k = _dominant_kernel(perf, model) if perf and "kernels" in perf else None
    if k is not None:
        b = k.get("gpuperf_benefits_s") or {}
        total_k = sum(((kk.get("predictions") or {}).get(model) or {}).get("time_s", 0) * kk.get("launches", 1)
                      for kk in perf["kernels"])
        mine = ((k.get("predictions") or {}).get(model) or {}).get("time_s", 0) * k.get("launches", 1)
        view["kernel_name"] = k["name"]
        view["kernel_share"] = f"{mine / total_k:.0%}" if total_k else ""
        view["kernel_count"] = len(perf["kernels"])
        if b.get("T_comp") is not None and b.get("T_mem") is not None:
            view["benefit"] = benefit_chart(b, k["name"])
            view["benefits"] = [(name, units.seconds(b.get(name)), BENEFIT_COLOURS[name], BENEFIT_MEANING[name],
                                 f"{100 * (b.get(name) or 0) / mine * k.get('launches', 1):.0f}%" if mine else "")
                                for name in ("B_serial", "B_itilp", "B_fp", "B_memlp")]
            view["gpuperf_terms"] = [(name, units.seconds(b.get(name))) for name in
                                     ("T_comp", "T_mem", "T_overlap", "T_fp", "T_mem_min")]
            view["gpuperf_case"] = (k.get("gpuperf_case") or "").replace("_", " ")
        if report.gpu_peaks:
            view["roofline"] = roofline_chart(report.gpu_peaks, k, model)
            rf = k.get("roofline") or {}
            view["roofline_facts"] = {"flops": rf.get("flops"),
                                      "bytes": units.byte_size(rf.get("dram_lower_bound_bytes")),
                                      "ai": rf.get("flops_per_dram_byte"), "limiter": rf.get("limiter"),
                                      "bound": units.seconds(rf.get("bound_s"))}
    for kk in (perf.get("kernels") or []):
        models = perf.get("models") or [model]
        rows = []
        # fastest first (the default model's time per launch), blocks that cannot launch last
        cands = sorted(kk.get("block_candidates") or [],
                       key=lambda c: ((c.get("time_s") or {}).get(model) is None, (c.get("time_s") or {}).get(model) or 0))
        for c in cands:
            chosen = list(c["block"]) == list(kk["block"])
            rows.append({"block": "×".join(str(x) for x in c["block"]),
                         "threads": c["block"][0] * c["block"][1] * c["block"][2],
                         "warps": c.get("active_warps_per_sm"),
                         "occ": f"{c['occupancy']:.0%}" if c.get("occupancy") is not None else "–",
                         "times": [units.seconds((c.get("time_s") or {}).get(m)) for m in models],
                         "labels": ", ".join(c.get("labels") or []) or (c.get("error") or ""),
                         "chosen": chosen})
        occ = kk.get("occupancy") or {}
        view["kernel_tables"].append({
            "name": kk["name"], "models": models, "rows": rows,
            "block": "×".join(str(x) for x in kk["block"]), "grid": "×".join(str(x) for x in kk["grid"]),
            "launches": kk.get("launches"), "choice": kk.get("block_choice"),
            "regs": (kk.get("registers") or {}).get("per_thread"), "regs_src": (kk.get("registers") or {}).get("source"),
            "occ": f"{occ['occupancy']:.0%}" if occ.get("occupancy") is not None else "–",
            "limit": occ.get("limiting_factor", "–"),
            "times": [(m, units.seconds(((kk.get("predictions") or {}).get(m) or {}).get("time_s"))) for m in models]})
    view["structures"] = [{"structure": t["structure"], "kernels": t["kernels"], "launches": f"{t['launches']:,.0f}",
                           "total": ("at least " if t["bound"] else "") + units.seconds(t["total_s"]),
                           "note": "its launches alone" if t["bound"] else "", "chosen": t["chosen"]}
                          for t in perf.get("structure_decision") or []]
    smd = perf.get("shared_memory_decision")
    view["shared_trials"] = [{"budget": "none" if t["budget_bytes"] is None else units.byte_size(t["budget_bytes"]),
                              "why": t["why"], "total": units.seconds(t["total_s"]),
                              "kernel": units.seconds(t["kernel_s"]),
                              "chosen": t["budget_bytes"] == smd.get("budget_bytes")}
                             for t in (smd or {}).get("trials", [])]
    view["shared"] = [{"kernel": d.kernel, "array": d.array, "kind": d.kind,
                       "shape": "[" + "][".join(str(x) for x in d.shape) + "]", "size": units.byte_size(d.size_bytes),
                       "value": units.significant(d.value) + " loads/B", "saved": f"{d.loads_saved_per_block:,.0f}",
                       "conflicts": f"{d.bank_conflicts}-way" + (" (padded)" if d.padded else ""),
                       "taken": d.taken, "reason": d.reason} for d in n.shared_memory]
    view["cuda"] = highlight_c(n.cuda) if n.cuda else None
    # the lines that block a refused nest, marked in its listing (only those of the nest's own file)
    view["blocked_lines"] = sorted({b.location.line for b in n.blocking if b.location.file == n.location.file})
    view["source"] = highlight_c(n.source, n.location.line, view["blocked_lines"]) if n.source else None
    # what blocks the port, each line's message without the sentence the verdict's reason already says
    view["blocking"] = [(b.location, _without_refusal(b.message, n.refusal)) for b in n.blocking]
    view["transfers"] = [(t["array"], t["direction"], units.byte_size(t["bytes"]), units.seconds(t["time_s"]))
                         for t in perf.get("transfers") or []]
    view["break_even"] = [b.sentence(n.gpu or report.gpu or "the GPU") for b in n.break_even]
    if perf.get("error") and perf["error"] not in n.reason:    # a refused nest's error is its reason, said above
        view["notes"].append(perf["error"])
    return view


def _without_refusal(message: str, refusal: str) -> str:
    """"loop 'i' carries a dependence: <the refusal's own words>" -> "loop 'i' carries a dependence"."""
    head, sep, tail = message.partition(": ")
    return head if sep and refusal and tail in refusal else message


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("c2gpu.templates", "."), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
                             bytecode_cache=template_bytecode_cache())
    env.filters["s"] = units.seconds
    env.filters["x"] = units.speedup
    return env


REST_COLOUR = "#d0d7de"      # the program's time outside its loop nests


def _program_view(rep: Report, anchors: dict[str, str]) -> dict | None:
    """The whole-program view of one file (report.program_view.WholeProgram) for the page's first card: two
    bars to one scale (the program now, and with the recommended nests ported), and one row per nest."""
    w = rep.program
    if w is None or not w.shares or not w.base_s:
        return None
    base = w.base_s
    ported = set(w.ported)

    def seg(name, t, colour, what):
        return {"name": name, "pct": f"{100 * t / base:.3f}", "colour": colour,
                "title": f"{name}: {units.seconds(t)} {what}"}
    now, after = [], []
    for r in w.shares:
        if not r.cpu_s:
            continue
        colour = VERDICT_STYLE.get(r.verdict, VERDICT_STYLE["no-verdict"])[1]
        now.append(seg(r.name, r.cpu_s, colour, "on the CPU"))
        after.append(seg(r.name, r.gpu_s, SEGMENT_COLOURS["kernels"], "on the GPU") if r.name in ported
                     else seg(r.name, r.cpu_s, colour, "on the CPU"))
    rest = base - w.nests_s if w.program_s is not None else 0.0
    if rest > 0:
        now.append(seg("outside the loop nests", rest, REST_COLOUR, "on the CPU"))
        after.append(seg("outside the loop nests", rest, REST_COLOUR, "on the CPU"))
    rows = [{"name": r.name, "anchor": anchors.get(r.name, ""), "share": share_text(r.share),
             "cpu": units.seconds(r.cpu_s), "gpu": units.seconds(r.gpu_s),
             "label": VERDICT_STYLE.get(r.verdict, VERDICT_STYLE["no-verdict"])[0],
             "colour": VERDICT_STYLE.get(r.verdict, VERDICT_STYLE["no-verdict"])[1], "why": r.why,
             "saves": units.seconds(r.cpu_s - r.gpu_s) if r.name in ported else ""} for r in w.shares]
    top_port = sorted((r for r in w.shares if r.name in ported), key=lambda r: -(r.cpu_s - r.gpu_s))[:3]
    top_keep = [r for r in w.shares if r.name not in ported and r.cpu_s][:3]
    return {"path": rep.path, "gpu": rep.gpu, "measured": w.program_s is not None, "base": units.seconds(base),
            "after": units.seconds(w.after_s), "speedup": units.speedup(w.speedup(w.after_s)),
            "resident": units.seconds(w.resident_s), "resident_speedup": units.speedup(w.speedup(w.resident_s)),
            "in_nests": f"{100 * w.nests_s / base:.0f}%", "now": now, "after_bar": after,
            "ported": list(w.ported), "rows": rows, "untimed": len(w.untimed), "timed": len(w.shares) - len(w.untimed),
            "top_port": [(r.name, anchors.get(r.name, ""), units.seconds(r.cpu_s - r.gpu_s)) for r in top_port],
            "top_keep": [(r.name, anchors.get(r.name, ""), r.why) for r in top_keep]}


def render_html(reports: list[Report], errors: list[dict] | None = None, title: str | None = None) -> str:
    """The whole report: the whole-program view of each file, a summary of every nest, then one section per
    nest."""
    nests, programs = [], []
    for rep in reports:
        anchors = {}
        for n in rep.nests:
            view = _nest_view(n, rep, len(nests))
            anchors[n.name] = view["anchor"]
            nests.append(view)
        program = _program_view(rep, anchors)
        if program is not None:
            programs.append(program)
    gpus = sorted({(r.gpu, r.gpu_name) for r in reports if r.gpu})
    files = [r.path for r in reports]
    title = title or ("c2gpu report: " + ", ".join(files[:3]) + (" …" if len(files) > 3 else ""))
    return _environment().get_template("report.html.j2").render(
        title=title, nests=nests, programs=programs, gpus=gpus, files=files, errors=errors or [], version=__version__,
        styles=VERDICT_STYLE)
