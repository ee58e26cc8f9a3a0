"""A third-party pass registered through the `c2gpu.passes` entry-point group shows up and runs."""
import json
import os
import subprocess
import sys
import textwrap

from conftest import TESTDATA


def _install_plugin(tmp_path):
    pkg = tmp_path / "src"
    (pkg / "c2gpu_countstmts").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "c2gpu-countstmts"
        version = "1.0"
        [project.entry-points."c2gpu.passes"]
        countstmts = "c2gpu_countstmts:CountStatements"
        broken = "c2gpu_countstmts:DoesNotExist"
    """))
    (pkg / "c2gpu_countstmts" / "__init__.py").write_text(textwrap.dedent("""
        from c2gpu.pipeline import Pass

        class CountStatements(Pass):
            name = "countstmts"
            description = "count statements (test plugin)"
            requires = ()
            provides = ("statement-count",)

            def run(self, nest, ctx):
                print(f"{nest.name}: {len(nest.statements())} statements")
                return len(nest.statements())
    """))
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--target", str(site), str(pkg)], check=True, capture_output=True)
    return site


def test_third_party_pass_listed_and_runs(tmp_path):
    site = _install_plugin(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(site))
    r = subprocess.run([sys.executable, "-m", "c2gpu", "passes"], capture_output=True, text=True, env=env)
    assert "countstmts  (analysis, from c2gpu-countstmts[countstmts])" in r.stdout
    assert "provides: statement-count" in r.stdout
    # a broken plugin is named, not a crash
    assert "c2gpu-countstmts[broken]: failed to load: AttributeError" in r.stdout
    assert r.returncode == 1
    r = subprocess.run([sys.executable, "-m", "c2gpu", "analyze", str(TESTDATA / "saxpy.c"),
                        "--passes", "normalize,countstmts", "--format", "json"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "saxpy@14: 1 statements" in r.stdout.splitlines()[0]
    assert "pass c2gpu-countstmts[broken] failed to load" in r.stderr
