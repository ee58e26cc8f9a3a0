"""The registry's table of built-in passes (c2gpu.registry.BUILTIN, read instead of scanning entry points when a
pipeline asks only for built-in passes) is the one pyproject.toml registers."""
import tomllib
from pathlib import Path

from c2gpu.registry import BUILTIN, discover

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_builtin_table_is_pyprojects_entry_points():
    eps = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]["c2gpu.passes"]
    assert BUILTIN == eps


def test_builtin_pipeline_loads_the_same_passes_as_a_full_scan():
    full, _ = discover()
    quick, failures = discover(["normalize", "dependence", "mapping", "performance"])
    assert not failures
    builtin = [(r.instance.name, r.origin) for r in full if r.origin.startswith("c2gpu[")]
    assert [(r.instance.name, r.origin) for r in quick] == builtin
