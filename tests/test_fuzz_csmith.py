"""Fuzzing with csmith: random valid C (pointers, structs, unions, bit-fields, goto, casts, globals, deep
expressions) never crashes c2gpu.

A fixed-seed batch of csmith programs goes through the real CLI (subprocesses): `c2gpu analyze` on every
program and `c2gpu port` on a subset.  c2gpu may refuse nests, with a reason per nest, but it never prints
a traceback or an internal error, and it exits 0 (these are valid C programs: no file-level error either).
The closing statistics (programs, nests, refusals and their top reasons) are printed (`pytest -s`).

csmith comes from Debian's `csmith` and `libcsmith-dev` packages (.ci/run installs them); its programs
include "csmith.h" from /usr/include/csmith, which needs <stdint.h>, <limits.h>, <string.h>, <float.h>,
<math.h>, <assert.h> and <stdio.h>: c2gpu's own minimal headers provide them.

Default run: 3 programs analysed, 1 ported (tests/test_csmith_differential.py ports and runs 20 more, with
fewer C features).  `pytest -m slow`: 1000 and 100.  A crash found here becomes a
small program in tests/regressions/ (see test_robustness.py::test_regression).
"""
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest


SEED0 = 20240601            # the batch is seeds SEED0, SEED0 + 1, ...
JOBS = max(2, os.cpu_count() or 2)


def csmith_include() -> Path | None:
    """Where csmith.h lives: Debian puts it in /usr/include/csmith (package libcsmith-dev)."""
    exe = shutil.which("csmith")
    bases = [Path("/usr/include"), Path("/usr/local/include")]
    if exe:
        bases.append(Path(exe).resolve().parent.parent / "include")
    for base in bases:
        for d in sorted(base.glob("csmith*")):
            if (d / "csmith.h").is_file():
                return d
    return None


def requires_csmith(test):
    """csmith and its header (Debian: csmith and libcsmith-dev, which .ci/run installs): outside CI a test skips,
    saying what is missing; in CI (CI=true) their absence is a failure."""
    if os.environ.get("CI") == "true":
        return test
    if shutil.which("csmith") is None:
        return pytest.mark.skip(reason="csmith not on PATH (Debian: apt-get install csmith libcsmith-dev)")(test)
    if csmith_include() is None:
        return pytest.mark.skip(reason="csmith.h not found (Debian: apt-get install libcsmith-dev)")(test)
    return test


def _options(k: int) -> list[str]:
    # some variety beyond the defaults: floating point, and raw arithmetic instead of the safe_* wrappers
    return {0: [], 1: ["--float"], 2: ["--no-safe-math"]}[k % 3]


def generate(out_dir: Path, count: int) -> list[tuple[int, Path]]:
    out_dir.mkdir(parents=True, exist_ok=True)

    def one(k):
        seed = SEED0 + k
        p = out_dir / f"csmith_{seed}.c"
        # cwd: csmith writes platform.info into the current directory, one per run (runs in parallel would race
        # on a shared one)
        cwd = out_dir / f"run_{seed}"
        cwd.mkdir(exist_ok=True)
        r = subprocess.run(["csmith", "--seed", str(seed), *_options(k), "-o", str(p)], cwd=cwd,
                           capture_output=True, timeout=120)
        return (seed, p) if r.returncode == 0 and p.is_file() and p.stat().st_size else None

    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        made = [x for x in pool.map(one, range(count)) if x is not None]
    assert len(made) >= count * 0.95, f"csmith produced only {len(made)} of {count} programs"
    return made


def cli(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "c2gpu", *map(str, args)], capture_output=True, text=True,
                          errors="replace", timeout=timeout)


def _crash_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "Traceback" in ln or "internal error" in ln]


# with a GPU, as a user runs it: the performance analysis and the CPU time estimate see every nest too (a crash
# there, an array a refused nest leaves undescribed, was missed while the batch ran without one); --no-run: the
# programs are not built and timed
ANALYZE = ("--gpu", "h100-sxm", "--no-run")
BATCH = 25   # programs per analyze process: its JSON (megabytes per program) is summarised, then dropped


def analyze_batch(files: list[Path], inc: Path) -> tuple[int, Counter, list[str]]:
    """One analyze process for the batch: (nests, flag codes counted once per nest, problems).

    On a crash, each file runs alone to name the culprit."""
    r = cli("analyze", "--format", "json", *ANALYZE, "-I", inc, *files)
    problems: list[str] = []
    if r.returncode not in (0, 1) or _crash_lines(r.stderr):
        for f in files:
            one = cli("analyze", "--format", "json", *ANALYZE, "-I", inc, f)
            if one.returncode not in (0, 1) or _crash_lines(one.stderr):
                problems.append(f"{f.name}: analyze exit {one.returncode}: {(_crash_lines(one.stderr) or [one.stderr[-300:]])[0]}")
        return 0, Counter(), problems or [f"batch crashed: exit {r.returncode}: {r.stderr[-500:]}"]
    doc = json.loads(r.stdout)
    del r
    nests, codes = 0, Counter()
    for e in doc["errors"]:
        problems.append(f"{Path(e['path']).name}: rejected a valid csmith program: {e['message']} at {e['location']}")
    for fd in doc["files"]:
        for n in fd["nests"]:
            nests += 1
            codes.update({fl["code"] for fl in n["flags"]} or {"(none)"})
            for fl in n["flags"]:
                if "internal error" in fl["message"]:
                    problems.append(f"{Path(fd['path']).name}: {n['name']}: {fl['message']}")
        for fl in fd["notes"]:
            if "internal error" in fl["message"]:
                problems.append(f"{Path(fd['path']).name}: {fl['message']}")
    return nests, codes, problems


_NOTE = re.compile(r"^.*?: note: (?:(?P<ported>ported nest) |not portable: (?P<reason>.*) \[(?P<nest>[^\]]+)\]$)")


def reason_key(reason: str) -> str:
    """A refusal reason without the names, lines and numbers of the program it came from."""
    reason = re.sub(r"^loop '[^']*' at line \d+ is not proven parallel: ", "", reason)
    reason = re.sub(r"^loop '[^']*' at line \d+ ", "loop ", reason)
    reason = re.sub(r"^loop '[^']*': ", "", reason)
    reason = re.sub(r"'[^']*'", "'…'", reason)
    reason = re.sub(r" \(line \d+\)", "", reason)
    reason = re.sub(r"\b\d+\b", "N", reason)
    return reason[:120]


def port_one(f: Path, inc: Path, out_dir: Path) -> tuple[int, int, list[str], list[str]]:
    """(nests ported, nests refused, refusal reasons, problems)."""
    r = cli("port", "-I", inc, f, "-o", out_dir / (f.stem + ".cu"))
    problems = []
    if r.returncode not in (0, 1) or _crash_lines(r.stderr):
        problems.append(f"{f.name}: port exit {r.returncode}: {(_crash_lines(r.stderr) or [r.stderr[-300:]])[0]}")
    if r.returncode == 1:
        problems.append(f"{f.name}: port rejected a valid csmith program: {r.stderr[-300:]}")
    ported, reasons = 0, []
    for line in r.stderr.splitlines():
        m = _NOTE.match(line)
        if m and m["ported"]:
            ported += 1
        elif m and m["reason"]:
            reasons.append(m["reason"])
    return ported, len(reasons), reasons, problems


def run_campaign(tmp: Path, n_analyze: int, n_port: int) -> None:
    inc = csmith_include()
    assert inc is not None, "csmith is installed but csmith.h was not found (Debian: apt-get install libcsmith-dev)"
    programs = generate(tmp / "programs", n_analyze)
    files = [p for _, p in programs]
    size = min(BATCH, -(-len(files) // JOBS))      # at least JOBS processes, so that every core works
    batches = [files[k:k + size] for k in range(0, len(files), size)]
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        analysed = list(pool.map(lambda b: analyze_batch(b, inc), batches))
    problems = [p for _, _, probs in analysed for p in probs]
    n_nests = sum(n for n, _, _ in analysed)
    flag_codes = sum((c for _, c, _ in analysed), Counter())
    flagged = n_nests - flag_codes.pop("(none)", 0)

    out_dir = tmp / "ported"
    out_dir.mkdir()
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        ported = list(pool.map(lambda f: port_one(f, inc, out_dir), files[:n_port]))
    problems += [p for *_, probs in ported for p in probs]
    n_ported = sum(p for p, _, _, _ in ported)
    n_refused = sum(r for _, r, _, _ in ported)
    reasons = Counter(reason_key(x) for _, _, rs, _ in ported for x in rs)

    print(f"\ncsmith campaign (seeds {SEED0}..{SEED0 + n_analyze - 1}, csmith.h from {inc}):")
    print(f"  analyze: {len(files)} programs, {n_nests} loop nests, {flagged} flagged "
          f"(what limits the analysis), {len(problems)} crashes")
    for code, k in flag_codes.most_common(8):
        print(f"    {k:6d} nests  {code}")
    print(f"  port:    {n_port} programs, {n_ported + n_refused} loop nests: {n_ported} ported, {n_refused} refused")
    for reason, k in reasons.most_common(10):
        print(f"    {k:6d}  {reason}")
    assert not problems, "c2gpu crashed or rejected valid C:\n" + "\n".join(problems[:30])
    assert n_nests > n_analyze   # the batch did reach the loop nests


@requires_csmith
def test_csmith_batch(tmp_path):
    # (3 and 1 programs: the default suite's share of its 10 minutes on 2 cores; -m slow runs 1,000 and 100)
    run_campaign(tmp_path, n_analyze=3, n_port=1)


@pytest.mark.slow
@requires_csmith
def test_csmith_batch_large(tmp_path):
    run_campaign(tmp_path, n_analyze=1000, n_port=100)


def test_reason_keys_group_refusals():
    assert reason_key("loop 'i' at line 124 is not proven parallel: call to 'crc32_byte': c2gpu cannot see what "
                      "it reads or writes (line 125)") == "call to '…': c2gpu cannot see what it reads or writes"
    assert reason_key("goto inside the nest: its control flow cannot be analysed (line 429)") == \
        "goto inside the nest: its control flow cannot be analysed"
