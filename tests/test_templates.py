"""The CUDA templates compiled ahead of time (c2gpu.codegen.precompiled): current with the templates, used when
current, and never used when not."""
from __future__ import annotations

import json

import jinja2

from c2gpu.codegen import precompiled
from c2gpu.codegen.precompiled import templates


def test_the_compiled_templates_are_current():
    """Fails when a template or the environment changed without `python -m c2gpu.templates`."""
    env = templates()
    on_disk = json.loads((precompiled.directory() / precompiled.MANIFEST).read_text())
    now = precompiled.manifest_of(env)
    assert on_disk["templates"] == now["templates"], "run: python -m c2gpu.templates"
    assert on_disk["environment"] == now["environment"], "run: python -m c2gpu.templates"
    if on_disk["jinja2"] == jinja2.__version__:      # another jinja2 compiles otherwise: its code may differ
        for name, text in precompiled.compiled_modules(env).items():
            module = precompiled.directory() / f"{precompiled.module_name(name)}.py"
            assert module.read_text() == text, f"{name}: run: python -m c2gpu.templates"


def test_a_current_compiled_template_is_imported():
    on_disk = json.loads((precompiled.directory() / precompiled.MANIFEST).read_text())
    template = templates().get_template("kernel.cu.j2")
    expected = "kernel_cu_j2.py" if on_disk["jinja2"] == jinja2.__version__ else "kernel.cu.j2"
    assert template.filename.endswith(expected)


def test_a_template_that_changed_is_compiled_from_its_text():
    """The manifest names kernel.cu.j2's text; a loader giving another text gets that text's template."""
    loader = precompiled.PrecompiledLoader(jinja2.DictLoader({"kernel.cu.j2": "changed {{ k }}"}))
    env = jinja2.Environment(loader=loader, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    assert env.get_template("kernel.cu.j2").render(k=1) == "changed 1"


def test_an_environment_with_other_options_compiles_from_the_text():
    """Same text, other syntax options (no trim_blocks): the compiled module would render differently."""
    source_loader = jinja2.PackageLoader("c2gpu.templates", ".")
    env = jinja2.Environment(loader=precompiled.PrecompiledLoader(source_loader), keep_trailing_newline=True)
    assert env.get_template("kernel.cu.j2").filename.endswith("kernel.cu.j2")
