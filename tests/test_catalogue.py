"""The catalogue of diagnostic codes (c2gpu/report/catalogue.py, `c2gpu codes --explain CODE`): every code has its
explanation, and every example is true: c2gpu reports the code on the `before` C and not on the `after` C."""
from __future__ import annotations

import subprocess
import sys

import pytest

import c2gpu
from c2gpu.diagnostics import CODES
from c2gpu.report.catalogue import CATALOGUE, explain

EXAMPLES = sorted(code for code, e in CATALOGUE.items() if e.before)


def codes_reported(source: str) -> set[str]:
    """Every diagnostic code the analysis of the first nest of `source` carries (its flags, notes and refusal)."""
    found: set[str] = set()

    def walk(d):
        if isinstance(d, dict):
            for k, v in d.items():
                if k == "code" and isinstance(v, str):
                    found.add(v)
                walk(v)
        elif isinstance(d, list):
            for v in d:
                walk(v)
    walk(c2gpu.analyze(source, run_cpu=False, name="example.c").nests[0].data)
    return found


def test_every_code_is_explained():
    assert set(CATALOGUE) == set(CODES)
    assert all(e.why and e.fix and bool(e.before) == bool(e.after) for e in CATALOGUE.values())
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("code", EXAMPLES)
def test_the_example_is_true(code):
    e = CATALOGUE[code]
    assert code in codes_reported(e.before)
    assert code not in codes_reported(e.after)


def test_explain_on_the_command_line():
    out = subprocess.run([sys.executable, "-m", "c2gpu", "codes", "--explain", "pointer-modified"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == explain("pointer-modified")
    assert "Before (c2gpu reports it):" in out.stdout and "p++;" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "c2gpu", "codes", "--explain", "no-such-code"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown diagnostic code 'no-such-code'" in bad.stderr
    assert "Traceback" not in bad.stderr
