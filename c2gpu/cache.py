"""Where c2gpu keeps what it may reuse between runs: $C2GPU_CACHE_DIR, else ~/.cache/c2gpu.

Two things live there: the CPU baseline's measurements (c2gpu/cpu/harness.py, keyed by source, compiler and
flags) and jinja2's compiled templates (keyed by each template's source, so an edited template is compiled
again).  An unusable directory only means no caching.
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir(given: str | os.PathLike | None = None) -> Path | None:
    """`given`, else $C2GPU_CACHE_DIR, else ~/.cache/c2gpu; None when there is no home directory."""
    d = given or os.environ.get("C2GPU_CACHE_DIR")
    if not d:
        try:
            d = Path.home() / ".cache" / "c2gpu"
        except (RuntimeError, KeyError):   # no home directory: no cache
            return None
    return Path(d)


def template_bytecode_cache():
    """jinja2's compiled templates on disk (compiling the CUDA templates is a tenth of a second per process),
    or None when the cache directory cannot be made."""
    import jinja2
    d = cache_dir()
    if d is None:
        return None
    try:
        (d / "templates").mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(d / "templates"))
