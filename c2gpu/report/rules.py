"""The rule ids of c2gpu's findings: one table for `check`'s lines (`[c2gpu/below-min-speedup]`), its JSON and
SARIF, and `analyze --format sarif`.

`analyze` gives each nest the rule of its verdict class (`RULE_OF_CLASS`); `check` gives it the outcome of the
gate (`c2gpu/reaches-min-speedup`, `c2gpu/below-min-speedup`), or the rule of its class when there is no speedup
to compare (`c2gpu/not-portable`, `c2gpu/no-verdict`): the same fact has the same id everywhere.
"""
from __future__ import annotations
from ..records import dataclass



@dataclass(frozen=True)
class Rule:
    """A rule of c2gpu's findings: its id, SARIF name, what a result of it says and what to do about it."""
    id: str
    name: str          # SARIF's PascalCase name
    summary: str       # what a result of this rule says, one sentence
    help: str          # what to do about it


_TABLE = [
    Rule("c2gpu/port", "PortToGpu",
         "Porting pays off: the GPU is faster end to end, transfers and launches included.",
         "`c2gpu port FILE` writes the ported file; `c2gpu verify FILE` checks it computes the same."),
    Rule("c2gpu/port-if-resident", "PortIfDataStaysOnGpu",
         "The kernels beat the CPU, but only if the data stays on the GPU: the transfers eat the gain.",
         "Port the code around the nest as well, so that the arrays are copied once."),
    Rule("c2gpu/keep-on-cpu", "KeepOnCpu",
         "The GPU is slower than the CPU even without the transfers.",
         "Too little work per launch, or the kernels themselves are slower than the CPU; the break-even size, "
         "when given, says from which size porting pays."),
    Rule("c2gpu/not-portable", "NotPortable",
         "c2gpu cannot port the nest (a dependence, an unknown call, possible aliasing, ...).",
         "c2gpu did not prove the loops safe to run in parallel; the message gives the reason and the related "
         "locations the loops and accesses that block it."),
    Rule("c2gpu/no-verdict", "NoVerdict",
         "No verdict: there is no CPU time or no GPU prediction to compare (a symbolic size without a value, ...).",
         "Give what the message asks for (`--param n=VALUE`, `-D N=VALUE`, a program that runs)."),
    Rule("c2gpu/reaches-min-speedup", "ReachesMinSpeedup",
         "`c2gpu check`: the nest's predicted speedup reaches --min-speedup.",
         "Nothing to do."),
    Rule("c2gpu/below-min-speedup", "BelowMinSpeedup",
         "`c2gpu check`: the nest's predicted speedup is below --min-speedup.",
         "The verdict and the time breakdown (`c2gpu analyze FILE --gpu NAME`) say where the time goes."),
]
RULES: dict[str, Rule] = {r.id: r for r in _TABLE}

#: The rule of each verdict class (c2gpu.report.model.VERDICT_CLASSES).
RULE_OF_CLASS: dict[str, str] = {"port": "c2gpu/port", "port-if-resident": "c2gpu/port-if-resident",
                                 "keep-on-cpu": "c2gpu/keep-on-cpu", "not-portable": "c2gpu/not-portable",
                                 "no-verdict": "c2gpu/no-verdict"}


@dataclass(frozen=True)
class Finding:
    """What a report says about one nest: a rule of the table, a SARIF level ("note", "warning", "error"; an
    error fails `check`'s gate) and the message."""
    rule: str
    level: str
    message: str

    def __post_init__(self):
        assert self.rule in RULES and self.level in ("note", "warning", "error"), self
