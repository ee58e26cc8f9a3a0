"""The common result type of every model."""

from __future__ import annotations

from dataclasses import field
from typing import Mapping, Tuple
from ..records import dataclass


@dataclass(frozen=True)
class Prediction:
    """What one model predicts for a kernel: its execution time, the host-side overhead, and the model's
    own figures."""
    model: str                      # registry name ("resios", "gpuperf", ...)
    time_s: float                   # predicted kernel execution time, seconds
    breakdown: Mapping[str, float] = field(default_factory=dict)  # named parts, seconds
    overhead_s: float = 0.0         # host side: transfers + context + launch (R eq 4.3);
                                    # 0 for models that predict the kernel only
    notes: Tuple[str, ...] = ()
    # Model-specific numbers.  gpuperf: MWP, CWP, ITILP, ... (times in seconds,
    # the rest dimensionless or with a unit suffix such as AMAT_cycles).
    extras: Mapping[str, object] = field(default_factory=dict)
    # resios: memory access id -> seconds the compute units sat idle while that
    # access was the only work in flight (R 5.2.1 / 5.3 "memory hotspots"),
    # sorted by decreasing idle time.
    hotspots: Mapping[str, float] = field(default_factory=dict)

    @property
    def total_s(self) -> float:
        """R eq 4.1: TIME = OVERHEAD + EXECUTION."""
        return self.time_s + self.overhead_s
