"""Where c2gpu keeps what it may reuse between runs: $C2GPU_CACHE_DIR, else the platform's user cache directory
(platformdirs: $XDG_CACHE_HOME/c2gpu or ~/.cache/c2gpu on Linux, ~/Library/Caches/c2gpu on macOS, the local
application data folder on Windows).

Three things live there: the CPU baseline's measurements (c2gpu/cpu/harness.py, keyed by source, compiler and
flags), ptxas's register counts (c2gpu/perf/registers.py, keyed by architecture and kernel text) and jinja2's
compiled templates (keyed by each template's source, so an edited template is compiled
again).  An unusable directory only means no caching.
"""
from __future__ import annotations

import os
from pathlib import Path

import jinja2
import platformdirs


def cache_dir(given: str | os.PathLike | None = None) -> Path | None:
    """`given`, else $C2GPU_CACHE_DIR, else the platform's user cache directory for c2gpu; None when there is no
    home directory to put it in."""
    d = given or os.environ.get("C2GPU_CACHE_DIR")
    if d:
        return Path(d)
    try:
        home = Path.home()
    except (RuntimeError, KeyError):   # no home directory: no cache
        return None
    if str(home) in ("", "/") and not os.environ.get("XDG_CACHE_HOME"):
        return None
    return Path(platformdirs.user_cache_dir("c2gpu", appauthor=False))


def template_bytecode_cache():
    """jinja2's compiled templates on disk (compiling the CUDA templates is a tenth of a second per process),
    or None when the cache directory cannot be made."""
    d = cache_dir()
    if d is None:
        return None
    try:
        (d / "templates").mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(d / "templates"))
