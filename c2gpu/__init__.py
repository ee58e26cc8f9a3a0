"""c2gpu: is this sequential C loop nest worth porting to a GPU, and what would the kernel look like?

The Python API (c2gpu/drivers/api.py): ``c2gpu.analyze(path_or_source, gpu="a100", ...) -> c2gpu.Report``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = ["__version__", "analyze", "Report", "NestReport", "LoopReport", "KernelReport", "SharedMemoryDecision",
           "Location", "RelatedLocation", "Hotspot"]

if TYPE_CHECKING:   # pragma: no cover
    from .drivers.api import (Hotspot, KernelReport, Location, LoopReport, NestReport, RelatedLocation, Report,
                              SharedMemoryDecision, analyze)


def __getattr__(name: str):
    # start-up: the API is imported on first use, so that `import c2gpu` (and the command line) stays light: it
    # imports the analysis stack, ~200 ms
    if name in __all__ and name != "__version__":
        from .drivers import api
        return getattr(api, name)
    raise AttributeError(f"module 'c2gpu' has no attribute '{name}'")
