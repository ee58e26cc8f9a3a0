"""Determinism: the same input and options give byte-identical output (reproducible builds, diffable review).

Each command runs twice as separate processes with different PYTHONHASHSEED values, so any output that
depends on set or dict-of-set iteration order (hash randomisation of str) shows up as a difference.
"""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import TESTDATA

FILES = sorted(TESTDATA.rglob("*.c"))
INCLUDE = ["-I", str(TESTDATA / "polybench")]
SEEDS = ("1", "4242")


def _run(args, seed, cwd=None):
    env = dict(os.environ, PYTHONHASHSEED=seed)
    return subprocess.run([sys.executable, "-m", "c2gpu", *map(str, args)], capture_output=True, cwd=cwd,
                          env=env, timeout=600)


def _differ(a: bytes, b: bytes) -> str:
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for k, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {k + 1}:\n  {x}\n  {y}"
    return f"lengths {len(la)} and {len(lb)} lines"


def test_analyze_json_is_byte_identical_across_hash_seeds():
    runs = [_run(["analyze", "--format", "json", *INCLUDE, *FILES], seed) for seed in SEEDS]
    for r in runs:
        assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    assert runs[0].stdout == runs[1].stdout, _differ(runs[0].stdout, runs[1].stdout)
    assert runs[0].stderr == runs[1].stderr


def test_analyze_with_the_port_pipeline_is_byte_identical():
    args = ["analyze", "--format", "json", "--passes", "normalize,dependence,mapping", *INCLUDE, *FILES]
    a, b = (_run(args, seed) for seed in SEEDS)
    assert a.returncode == b.returncode == 0, a.stderr.decode(errors="replace")[-2000:]
    assert a.stdout == b.stdout, _differ(a.stdout, b.stdout)


def _port_twice(src: Path, out_dir: Path):
    rel = src.relative_to(TESTDATA)
    out = out_dir / (str(rel).replace("/", "__")[:-2] + ".cu")
    host = out.with_name(out.name[:-3] + ".host.c")
    results = []
    for seed in SEEDS:
        for p in (out, host):
            if p.exists():
                p.unlink()
        r = _run(["port", src, "-o", out, *INCLUDE], seed)
        results.append((r.returncode, r.stdout, r.stderr, out.read_bytes() if out.exists() else None,
                        host.read_bytes() if host.exists() else None))
    return rel, results


def test_port_is_byte_identical_across_hash_seeds(tmp_path):
    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2))) as pool:
        done = list(pool.map(lambda f: _port_twice(f, tmp_path), FILES))
    problems = []
    for rel, (a, b) in done:
        assert a[0] == 0, f"{rel}: port failed: {a[2].decode(errors='replace')[-2000:]}"
        assert a[3] is not None, f"{rel}: no output written"
        for what, x, y in (("exit status", a[0], b[0]), ("stdout", a[1], b[1]), ("stderr", a[2], b[2]),
                           (".cu", a[3], b[3]), (".host.c", a[4], b[4])):
            if x != y:
                problems.append(f"{rel}: {what} differs: " + (_differ(x, y) if isinstance(x, bytes) else f"{x} != {y}"))
    assert not problems, "\n".join(problems)
    assert len(done) == len(FILES) >= 30
