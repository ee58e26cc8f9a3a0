"""`CpuTiming`: the CPU time of one loop nest, measured or estimated, with how it was obtained."""
from __future__ import annotations

from dataclasses import asdict, field
from typing import Any
from ..records import dataclass


@dataclass(frozen=True)
class AtSize:
    """The executions of a nest at one tuple of its parameters' values (measured): per program run."""
    values: tuple[tuple[str, int], ...]      # (parameter, value at the nest's entry)
    executions: float                        # per run (averaged over the runs)
    total_s: float                           # the CPU time of those executions, per run

    @property
    def env(self) -> dict[str, int]:
        return dict(self.values)

    def text(self) -> str:
        """'n1 = n2 = n3 = 34' (equal values grouped, in order)."""
        groups: dict[int, list[str]] = {}
        for name, value in self.values:
            groups.setdefault(value, []).append(name)
        return ", ".join(" = ".join(names) + f" = {value:,}" for value, names in groups.items())


@dataclass(frozen=True)
class CpuTiming:
    """Sequential CPU time of one nest.

    Times are seconds for ONE execution of the nest (a nest inside a function
    called several times, or inside a `while`, executes several times per
    program run).  `median_s` is None when there is no number: the nest never
    ran with the program's inputs, or the static estimate lacks a parameter value;
    `note` then says why.
    """
    nest: str
    source: str                              # "measured" or "static estimate"
    median_s: float | None                   # per execution
    min_s: float | None = None
    max_s: float | None = None
    executions: int | None = None            # executions of the nest per program run (measured)
    runs: int = 0                            # program runs the numbers come from (measured)
    total_median_s: float | None = None      # median over runs of the nest's summed time per run
    program_median_s: float | None = None    # median over runs of the whole program's CPU time (measured)
    scaled: str = ""                         # how a measured time was scaled to the size given (--param), if it was
    compiler: tuple[str, ...] = ()           # the command that built the timing harness
    compiler_version: str = ""               # first line of `cc --version`
    flags: tuple[str, ...] = ()              # cflags, then -D/-I as given to the compiler
    note: str = ""                           # assumptions, fallback reason, caveats
    observed_params: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (min, max) seen at nest entry
    sizes: tuple[AtSize, ...] = ()            # measured: the nest's parameter tuples, largest time first (() unknown)
    details: dict[str, Any] = field(default_factory=dict)  # static: the model's terms; measured: per-run numbers
    cached: bool = False                     # taken from the result cache (nothing was built or run)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["compiler"] = list(self.compiler)
        d["flags"] = list(self.flags)
        d["observed_params"] = {k: list(v) for k, v in sorted(self.observed_params.items())}
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "CpuTiming":
        d = dict(d)
        d["compiler"] = tuple(d.get("compiler", ()))
        d["flags"] = tuple(d.get("flags", ()))
        d["observed_params"] = {k: (int(v[0]), int(v[1])) for k, v in d.get("observed_params", {}).items()}
        d["sizes"] = tuple(AtSize(tuple((str(n), int(v)) for n, v in a["values"]), a["executions"], a["total_s"])
                           for a in d.get("sizes", ()))
        return CpuTiming(**d)
