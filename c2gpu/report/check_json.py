"""`c2gpu check --format json`: the gate's outcome per nest, following c2gpu/schemas/check.schema.json."""
from __future__ import annotations

from .model import NestReport, Report
from .rules import Finding

CHECK_SCHEMA_VERSION = 1


def _nest(n: NestReport, f: Finding) -> dict:
    loc = n.location
    return {"location": {"file": loc.file, "line": loc.line, "col": loc.col}, "nest": n.name,
            "rule": f.rule, "level": f.level, "passed": f.level != "error", "verdict_class": n.verdict_class,
            "speedup": n.speedup, "kernel_speedup": n.kernel_speedup, "message": f.message}


def check_document(reports: list[Report], findings: dict[int, Finding], errors: list[dict], *, gpu: str,
                   min_speedup: float, kernel_only: bool, strict: bool) -> dict:
    """`findings` by `id(nest)`, as `c2gpu check` decided them; `errors` the inputs that could not be read."""
    nests = [_nest(n, findings[id(n)]) for rep in reports for n in rep.nests]
    return {"tool": "c2gpu", "command": "check", "schema_version": CHECK_SCHEMA_VERSION, "gpu": gpu,
            "min_speedup": min_speedup, "kernel_only": kernel_only, "strict": strict,
            "passed": all(x["passed"] for x in nests) and not errors,
            "nests": nests, "errors": list(errors)}
