"""SARIF 2.1.0 output (`c2gpu analyze --gpu NAME --format sarif`), for editors and code-scanning tools.

One result per loop nest, at the nest's `for`, one per finding on its OpenMP directives (`c2gpu/omp-race`,
`c2gpu/omp-missing-clause` with the directive as it should read as a fix, `c2gpu/omp-unneeded-clause`), and one
per edit that would unblock a nest's port (`c2gpu/unblocking-edit`, the edit as a fix); these rules' text is the
catalogue's.  A nest's result: the rule is the verdict class's (`c2gpu/port`,
`c2gpu/port-if-resident`, `c2gpu/keep-on-cpu`, `c2gpu/not-portable`, `c2gpu/no-verdict`; the table is
c2gpu/report/rules.py), or for `check` the gate's outcome (`c2gpu/below-min-speedup`, ...), the message gives the
verdict with the speedup and the time breakdown, the related locations point at the memory hotspots of the
kernels (or, for a nest c2gpu cannot port, at the loops and accesses that block it), and the result's
properties carry the numbers.  Input errors become tool execution notifications.

Levels (analyze): `note` for every verdict, except `warning` for a nest marked `#pragma c2gpu port` whose
verdict is not "port" (the user asked for this nest on the GPU and c2gpu advises against it, or cannot do it).
`check` gives its own levels: `error` for a nest that fails the gate.
Validated against the OASIS SARIF 2.1.0 schema in tests/test_reports.py.
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from .. import __version__, units
from .model import NestReport, Report
from ..analysis.openmp import OPENMP_CODES
from ..diagnostics import CODES
from .catalogue import CATALOGUE
from .rules import RULE_OF_CLASS, RULES, Finding

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

RULE_IDS = tuple(RULES)


def _rules() -> list[dict]:
    verdicts = [{"id": r.id, "name": r.name, "shortDescription": {"text": r.summary},
                 "fullDescription": {"text": f"{r.summary} {r.help}"}, "help": {"text": r.help},
                 "defaultConfiguration": {"level": "note"},
                 "properties": {"tags": ["performance", "gpu", "cuda"]}} for r in RULES.values()]
    # the OpenMP checks (c2gpu/analysis/openmp.py): their text is the catalogue's (`c2gpu codes --explain CODE`)
    openmp = [{"id": f"c2gpu/{code}", "name": "".join(w.capitalize() for w in code.split("-")),
               "shortDescription": {"text": CODES[code].summary},
               "fullDescription": {"text": CATALOGUE[code].why}, "help": {"text": CATALOGUE[code].fix},
               "defaultConfiguration": {"level": level},
               "properties": {"tags": ["openmp", "correctness"]}}
              for code, level in zip(OPENMP_CODES, ("error", "warning", "note"))]
    unblocking = [{"id": "c2gpu/unblocking-edit", "name": "UnblockingEdit",
                   "shortDescription": {"text": CODES["unblocking-edit"].summary},
                   "fullDescription": {"text": CATALOGUE["unblocking-edit"].why},
                   "help": {"text": CATALOGUE["unblocking-edit"].fix}, "defaultConfiguration": {"level": "note"},
                   "properties": {"tags": ["performance", "gpu", "refactoring"]}}]
    return verdicts + openmp + unblocking


# the nest's diagnostics that are results of their own (with their fixes): the OpenMP checks, the unblocking edits
RESULT_CODES = (*OPENMP_CODES, "unblocking-edit")


def _finding_results(n: NestReport, rule_index: dict[str, int], base: str | None) -> list[dict]:
    """The nest's diagnostics of RESULT_CODES, a result each, with its fix when it has one."""
    out = []
    for f in n.data.get("flags", ()):
        if f["code"] not in RESULT_CODES:
            continue
        where = f["location"]
        rule = f"c2gpu/{f['code']}"
        result = {"ruleId": rule, "ruleIndex": rule_index[rule], "level": f.get("level", "note"),
                  "message": {"text": f["message"]},
                  "locations": [_location(where["file"], where["line"], where.get("col") or 0, None, base)]}
        if "fix" in f:
            changes: dict[str, list[dict]] = {}
            for e in f["fix"]["edits"]:
                changes.setdefault(e["file"], []).append({
                    "deletedRegion": {"startLine": e["line"], "startColumn": e["col"], "endLine": e["end_line"],
                                      "endColumn": e["end_col"]},
                    "insertedContent": {"text": e["replacement"]}})
            result["fixes"] = [{"description": {"text": f["fix"]["title"] + (
                f" (it asserts what the code does not show: {f['fix']['asserts']})" if f["fix"].get("asserts") else "")},
                "artifactChanges": [{"artifactLocation": _artifact(file, base), "replacements": replacements}
                                    for file, replacements in changes.items()]}]
        out.append(result)
    return out


def artifact_uri(path: str, base: str | None = None) -> tuple[str, bool]:
    """(URI, relative?): relative to `base` (the working directory) when the file is under it, else a file URI."""
    base = os.path.abspath(base or os.getcwd())
    full = os.path.abspath(path)
    try:
        rel = os.path.relpath(full, base)
    except ValueError:          # another drive (Windows)
        rel = None
    if rel is not None and not rel.startswith(os.pardir + os.sep) and rel != os.pardir:
        return quote(Path(rel).as_posix()), True
    return Path(full).as_uri(), False


def _artifact(path: str, base: str | None) -> dict:
    """The artifactLocation of a file: its URI, relative to SRCROOT when it is under the working directory."""
    uri, relative = artifact_uri(path, base)
    return {"uri": uri, **({"uriBaseId": "SRCROOT"} if relative else {})}


def _location(path: str, line: int, col: int = 0, message: str | None = None, base: str | None = None,
              ident: int | None = None) -> dict:
    art = _artifact(path, base)
    region = {"startLine": max(1, int(line))}
    if col and col > 0:
        region["startColumn"] = int(col)
    out: dict = {}
    if ident is not None:
        out["id"] = ident
    out["physicalLocation"] = {"artifactLocation": art, "region": region}
    if message:
        out["message"] = {"text": message}
    return out


def message_text(n: NestReport, gpu: str | None) -> str:
    """"port: 257x faster end to end on h100-sxm (kernels 167 µs + launches 10.5 µs + transfers 83.9 µs vs
    67.2 ms on the CPU)", and the break-even sentences."""
    on = f" on {n.gpu or gpu}" if (n.gpu or gpu) else ""
    g = n.gpu_s
    cpu = f"{units.seconds(n.cpu_s)} on the CPU" + ("" if n.cpu_source == "measured" else ", static estimate")
    parts = f"kernels {units.seconds(g.get('kernels'))} + launches {units.seconds(g.get('launches'))} + transfers " \
            f"{units.seconds(g.get('transfers'))}" if g else ""
    if g and n.data.get("performance", {}).get("context_included"):
        parts += f" + context {units.seconds(g.get('context'))}"
    c = n.verdict_class
    if c == "not-portable":
        text = f"not portable: {n.refusal}"
    elif c == "port":
        text = f"port: {units.speedup(n.speedup)} faster end to end{on} ({parts} vs {cpu})"
    elif c == "port-if-resident":
        text = (f"port only if the data stays on the GPU: the kernels are {units.speedup(n.kernel_speedup)} "
                f"faster{on}, but with the transfers the speedup is {units.speedup(n.speedup)} ({parts} vs {cpu})")
    elif c == "keep-on-cpu":
        slower = f"{units.speedup(1 / n.speedup)} slower" if n.speedup else "slower"
        text = f"keep on the CPU: the GPU is {slower} end to end{on} ({parts} vs {cpu})"
    else:
        text = f"no verdict{on}: {n.reason or 'nothing to compare'}"
    for be in n.break_even:
        text += f"; {be.sentence(n.gpu or gpu or 'the GPU')}"
    if n.recommendations and c in ("port", "port-if-resident", "keep-on-cpu"):
        text += f". Advice: {n.recommendations[0]}"
    return text


def _properties(n: NestReport) -> dict:
    return {
        "nest": n.name, "function": n.function, "verdict": n.verdict, "verdictClass": n.verdict_class,
        "gpu": n.gpu, "model": n.model, "speedup": n.speedup, "kernelSpeedup": n.kernel_speedup,
        "cpuSeconds": n.cpu_s, "cpuSource": n.cpu_source, "gpuSeconds": dict(n.gpu_s),
        "predictedSeconds": dict(n.predicted_s), "bottleneck": n.bottleneck,
        "breakEven": [{"param": b.param, "targetSpeedup": b.target, "value": b.value} for b in n.break_even],
        "recommendations": list(n.recommendations), "parallelLoops": n.parallel_loops,
        "marked": n.data.get("region") == "pragma",
    }


def analyze_finding(n: NestReport, gpu: str | None) -> Finding:
    """`analyze`'s result for a nest: the rule of its verdict class; a warning when the nest is marked
    `#pragma c2gpu port` and the verdict is not "port", a note otherwise."""
    marked = n.data.get("region") == "pragma"
    return Finding(RULE_OF_CLASS[n.verdict_class], "warning" if marked and n.verdict_class != "port" else "note",
                   message_text(n, gpu))


def _result(n: NestReport, finding: Finding, rule_index: dict[str, int], base: str | None) -> dict:
    related = []
    if n.verdict_class == "not-portable":
        for r in n.blocking:
            related.append(_location(r.location.file, r.location.line, r.location.col, r.message, base,
                                     len(related) + 1))
    else:
        for h in sorted(n.hotspots, key=lambda h: -h.share):
            if not h.line:
                continue
            related.append(_location(n.location.file, h.line, 0,
                                     f"memory hotspot {h.text} in {h.kernel}: {h.share:.0%} of the kernel time "
                                     f"({units.seconds(h.idle_s)} per launch with the compute units idle)", base,
                                     len(related) + 1))
            if len(related) >= 5:
                break
    out = {"ruleId": finding.rule, "ruleIndex": rule_index[finding.rule], "level": finding.level,
           "message": {"text": finding.message},
           "locations": [_location(n.location.file, n.location.line, n.location.col, None, base)]}
    if related:
        out["relatedLocations"] = related
    out["properties"] = _properties(n)
    return out


def sarif_document(reports: list[Report], errors: list[dict] | None = None, base: str | None = None,
                   findings: dict[int, Finding] | None = None) -> dict:
    """The SARIF log of `analyze`: one run, one result per nest of every report, in file and source order.
    `base` is the directory relative URIs start from (default: the working directory, as SRCROOT).
    `findings` (by `id(nest)`, `check`'s gate) replaces the rule, level and message of `analyze_finding`."""
    rules = _rules()
    index = {r["id"]: k for k, r in enumerate(rules)}
    findings = findings or {}
    results = [r for rep in reports for n in rep.nests
               for r in [_result(n, findings.get(id(n)) or analyze_finding(n, rep.gpu), index, base),
                         *_finding_results(n, index, base)]]
    notifications = []
    for e in errors or []:
        note: dict = {"level": "error", "message": {"text": e["message"]}}
        loc = e.get("location")
        if loc and loc.get("line"):
            note["locations"] = [_location(loc.get("file") or e["path"], loc["line"], loc.get("col") or 0, None, base)]
        elif e.get("path"):
            note["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(e["path"], base)}}]
        notifications.append(note)
    invocation: dict = {"executionSuccessful": not errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    root = os.path.abspath(base or os.getcwd())
    run = {
        "tool": {"driver": {"name": "c2gpu", "version": __version__, "semanticVersion": __version__,
                            "fullName": f"c2gpu {__version__}: is this C loop nest worth porting to a GPU?",
                            "rules": rules}},
        "originalUriBaseIds": {"SRCROOT": {"uri": Path(root).as_uri().rstrip("/") + "/"}},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    gpus = sorted({r.gpu for r in reports if r.gpu})
    if gpus:
        run["properties"] = {"gpus": gpus}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
