"""The import structure of c2gpu/ (issue 10): nothing imports the command line, no import circle, and the core
does not reach into the plugin package c2gpu.passes (the registry aside).

Read with `ast`: module-level and function-level imports alike, relative imports resolved."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "c2gpu"

# the registry finds the built-in passes; no other core module may import the plugin package
PASSES_IMPORTERS_ALLOWED = {"c2gpu.registry"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """The modules `name` imports anywhere in its body (a `from X import y` names X.y when y is a module), except
    under `if TYPE_CHECKING:`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
                   for stmt in block.body for n in ast.walk(stmt)}      # for annotations only: never run
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[:len(base) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            subs = {f"{target}.{a.name}" for a in node.names}
            found = subs & set(MODULES)
            out.update(found or {target})
            if found != subs:            # some names are not modules: the package's own names
                out.add(target)
    return out


def _is_ancestor(package: str, module: str) -> bool:
    return module.startswith(package + ".")


# an ancestor package is initialized before its modules, so importing from it (`from .. import __version__`)
# cannot start a circle: those edges are left out
GRAPH = {name: {d for d in _imports(name, path) if not _is_ancestor(d, name)} for name, path in MODULES.items()}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_imports(name):
    if name == "c2gpu.__main__":
        return                                   # running it is the command line
    importlib.import_module(name)


def test_every_import_of_c2gpu_names_a_module():
    """Function-level imports run late: one naming a module that does not exist fails only when called."""
    missing = {(m, d) for m, deps in GRAPH.items() for d in deps
               if d.startswith("c2gpu.") and d not in MODULES}
    assert not missing, sorted(missing)


def test_nothing_imports_the_command_line():
    importers = {m for m, deps in GRAPH.items() if "c2gpu.drivers.cli" in deps}
    assert importers <= {"c2gpu.__main__"}       # the entry point of `python -m c2gpu`


def test_the_core_does_not_import_the_plugin_package():
    importers = {m for m, deps in GRAPH.items() if not _is_ancestor("c2gpu.passes", m)
                 and any(d == "c2gpu.passes" or _is_ancestor("c2gpu.passes", d) for d in deps)}
    assert importers <= PASSES_IMPORTERS_ALLOWED, sorted(importers - PASSES_IMPORTERS_ALLOWED)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of `graph` (restricted to its own modules), or None."""
    state: dict[str, int] = {}                    # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m):
        state[m] = 1
        path.append(m)
        for d in sorted(graph[m]):
            if d not in graph or state.get(d) == 2:
                continue
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            found = visit(d)
            if found:
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_circle():
    assert _cycle(GRAPH) is None


def test_every_package_is_installed():
    """pyproject.toml lists the packages a wheel (a plain `pip install .`) contains: a package missing there
    works in the editable install the tests use and is missing for a user (c2gpu.codegen was)."""
    import tomllib
    root = PACKAGE.parent
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    present = {_module_name(p.parent / "__init__.py") for p in PACKAGE.rglob("__init__.py")}
    assert present == listed, (sorted(present - listed), sorted(listed - present))
