"""The target GPU when the command line names none: where the user's choice is found, in order.

1. `--gpu NAME|FILE.toml` on the command line (`--gpu none`: no GPU, the dependence verdicts only);
2. the environment variable C2GPU_GPU;
3. `gpu = "NAME"` in `c2gpu.toml`, or in the `[tool.c2gpu]` table of `pyproject.toml`, in the working
   directory or the nearest directory above it that has either file (`c2gpu.toml` wins in one directory);
   a relative description-file path there is relative to that file's directory;
4. DEFAULT_GPU.

Each answer says where it came from, so the report can tell the user how to change it.
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

from .options import OptionsError
from ..records import dataclass

# A current data-centre GPU that most readers can rent; its catalog entry names the sources of every value.
DEFAULT_GPU = "h100-sxm"
ENV_VAR = "C2GPU_GPU"
NO_GPU = "none"


@dataclass(frozen=True)
class GpuChoice:
    name: str | None          # a catalog key or a description file; None: no GPU (`none`)
    origin: str               # "--gpu", "C2GPU_GPU", the config file's path, or "default"


def choose_gpu(given: str | None, cwd: str | os.PathLike | None = None) -> GpuChoice:
    """The GPU to predict for, and where that choice was made."""
    if given:
        return _choice(given, "--gpu")
    if os.environ.get(ENV_VAR, "").strip():
        return _choice(os.environ[ENV_VAR].strip(), ENV_VAR)
    found = _config_gpu(Path(cwd or os.getcwd()))
    if found is not None:
        return found
    return GpuChoice(DEFAULT_GPU, "default")


def _choice(name: str, origin: str) -> GpuChoice:
    return GpuChoice(None if name.lower() == NO_GPU else name, origin)


def _config_gpu(start: Path) -> GpuChoice | None:
    for d in [start.resolve(), *start.resolve().parents]:
        for fname, table in (("c2gpu.toml", ()), ("pyproject.toml", ("tool", "c2gpu"))):
            path = d / fname
            if not path.is_file():
                continue
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
                raise OptionsError(f"{path}: cannot read the c2gpu settings: {e}") from None
            for key in table:
                data = data.get(key, {}) if isinstance(data, dict) else {}
            if fname == "pyproject.toml" and not data:
                continue            # a pyproject.toml without [tool.c2gpu] says nothing about c2gpu
            gpu = data.get("gpu") if isinstance(data, dict) else None
            if gpu is None:
                return None         # the nearest c2gpu settings do not choose a GPU: the default
            if not isinstance(gpu, str) or not gpu.strip():
                raise OptionsError(f"{path}: 'gpu' must be a GPU name (`c2gpu gpus` lists them) or a file")
            gpu = gpu.strip()
            if gpu.lower().endswith((".toml", ".json")) and not Path(gpu).is_absolute():
                gpu = str(d / gpu)
            return _choice(gpu, str(path))
    return None
