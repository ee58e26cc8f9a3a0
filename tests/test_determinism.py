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

from conftest import TESTDATA, project_programs

FILES = sorted(project_programs())
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


# ports every file in one process per seed (process start-up dominated the test), with each command's exit
# status, stdout and stderr kept per file, as the command line gives them
PORT_ALL = """
import contextlib, io, sys
from pathlib import Path
from c2gpu.drivers.cli import main
out_dir, include, files = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
for f in files:
    stem = out_dir / Path(f).name[:-2]
    stem.parent.mkdir(parents=True, exist_ok=True)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["port", f, "-o", str(stem) + ".cu", "-I", include])
    stem.with_suffix(".log").write_text(f"{status}\\n{out.getvalue()}\\n{err.getvalue()}")
"""


def _port_all(seed: str, out_dir: Path) -> dict[str, bytes]:
    names = [str(f.relative_to(TESTDATA)).replace("/", "__") for f in FILES]
    links = out_dir / "src"
    links.mkdir(parents=True)
    for f, name in zip(FILES, names):
        (links / name).symlink_to(f)       # one flat directory: output names cannot collide
    env = dict(os.environ, PYTHONHASHSEED=seed)
    # paths relative to each seed's directory, so that the two runs name the same files
    r = subprocess.run([sys.executable, "-c", PORT_ALL, "out", str(TESTDATA / "polybench"),
                        *(f"src/{n}" for n in names)], capture_output=True, env=env, timeout=900, cwd=out_dir)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    return {p.name: p.read_bytes() for p in sorted((out_dir / "out").iterdir())}


def test_port_is_byte_identical_across_hash_seeds(tmp_path):
    with ThreadPoolExecutor(max_workers=2) as pool:
        a, b = pool.map(lambda seed: _port_all(seed, tmp_path / seed), SEEDS)
    logs = [name for name in a if name.endswith(".log")]
    assert len(logs) == len(FILES) >= 30
    for name in logs:
        assert a[name].startswith(b"0\n"), f"{name}: port failed: {a[name].decode(errors='replace')[-2000:]}"
        assert name[:-4] + ".cu" in a, f"{name}: no output written"
    problems = [f"{name}: differs: " + _differ(a[name], b.get(name, b"")) for name in sorted(set(a) | set(b))
                if a.get(name) != b.get(name)]
    assert not problems, "\n".join(problems)


def test_a_poly_s_kept_hash_does_not_travel_to_another_process():
    # string hashes differ between processes: a pickled Poly (--jobs workers, caches) must hash anew there
    import pickle
    from c2gpu.symbolic import Poly
    p = Poly.var("n") * Poly.var("m") + Poly.const(3)
    assert hash(p) == hash(Poly.var("n") * Poly.var("m") + Poly.const(3))
    q = pickle.loads(pickle.dumps(p))
    assert q == p and "_hash" not in vars(q)


FIELDS = """#define N 1000
struct cpx { double re, im; };
double x[N], y[N];
struct cpx u[N];

void rotate(void)
{
  struct cpx u1;
  int i;
  for (i = 0; i < N; i++) {
    u1.re = u[i].re;
    u1.im = -u[i].im;
    y[i] = u1.re * x[i] - u1.im;
  }
}
"""


def test_annotate_names_the_same_reason_across_hash_seeds(tmp_path):
    """A loop left without a directive for two reasons of one kind (two fields of `u1`, each c2gpu's own scalar)
    names the same one in every run (NPB FT's fftz2 named u1.real or u1.imag by the hash seed)."""
    src = tmp_path / "fields.c"
    src.write_text(FIELDS)
    a, b = (_run(["annotate", "--openmp", src], seed) for seed in ("1", "2"))
    assert a.returncode == b.returncode == 0, a.stderr.decode(errors="replace")[-2000:]
    assert b"'u1__im' is not a variable of the C code" in a.stderr
    assert (a.stdout, a.stderr) == (b.stdout, b.stderr), _differ(a.stderr, b.stderr)
