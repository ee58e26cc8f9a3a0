"""Workflow: `c2gpu check` for CI, `analyze DIR --jobs N`, the progress display, the pre-commit hook (issue 6)."""
from __future__ import annotations

import io
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from c2gpu.cli import _expand_inputs, _Progress, main

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
FAST = ["--gpu", "h100-sxm", "--no-run", "-D", "N=64"]
LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<level>note|error): nest (?P<nest>\S+): (?P<msg>.*)$")


def _check(capsys, *argv):
    status = main(["check", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


# --------------------------------------------------------------------------- check

def test_check_passes_and_fails_on_the_threshold(capsys):
    """selected.c marks one nest (scale_rows): only it is checked. Its speedup passes a tiny threshold and
    fails a huge one; the exit status says which."""
    f = str(TESTDATA / "selected.c")
    status, out, _ = _check(capsys, f, *FAST, "--min-speedup", "1e-6")
    lines = out.splitlines()
    m = LINE.match(lines[0])
    assert m and m["nest"] == "scale_rows@21" and m["level"] == "note" and (m["line"], m["col"]) == ("21", "5")
    shown = re.search(r"speedup ([\d.,]+)x \(>= min 1e-06x\)", m["msg"]).group(1)
    speedup = float(shown.replace(",", ""))
    assert status == 0 and len(lines) == 2 and lines[1] == "c2gpu check: 1 of 1 nest reaches 1e-06x on h100-sxm"

    status, out, _ = _check(capsys, f, *FAST, "--min-speedup", "1e9")
    m = LINE.match(out.splitlines()[0])
    assert status == 3 and m["level"] == "error" and f"speedup {shown}x (< min 1e+09x)" in m["msg"]
    assert out.splitlines()[-1] == "c2gpu check: 0 of 1 nest reaches 1e+09x on h100-sxm"

    # just above and just below the nest's own speedup
    assert main(["check", f, *FAST, "--min-speedup", str(speedup * 0.99)]) == 0
    assert main(["check", f, *FAST, "--min-speedup", str(speedup * 1.01)]) == 3


def test_check_kernel_only(capsys):
    f = str(TESTDATA / "selected.c")
    status, out, _ = _check(capsys, f, *FAST, "--min-speedup", "1e-6", "--kernel-only")
    assert status == 0 and "kernel speedup" in out and out.rstrip().endswith("(kernels only)")


def test_check_refused_nest_fails(capsys):
    status, out, _ = _check(capsys, str(TESTDATA / "prefix_sum.c"), *FAST, "--min-speedup", "1e-6")
    assert status == 3
    refused = [m for m in map(LINE.match, out.splitlines()) if m and m["nest"] == "prefix_sum@15"]
    assert refused and refused[0]["level"] == "error" and "cannot run in parallel" in refused[0]["msg"]


def test_check_exit_codes_for_input_and_usage_errors(capsys, tmp_path):
    assert main(["check", str(tmp_path / "missing.c"), *FAST]) == 1
    assert main(["check", str(TESTDATA / "selected.c"), "--no-run"]) == 2          # no --gpu
    assert main(["check", str(TESTDATA / "selected.c"), *FAST, "--min-speedup", "0"]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["check", str(empty), *FAST]) == 1                                   # a directory without C files
    err = capsys.readouterr().err
    assert "missing.c" in err and "needs --gpu" in err and "is a directory with no C files" in err


def test_check_file_without_nests(capsys, tmp_path):
    p = tmp_path / "none.c"
    p.write_text("int f(int x) { return x + 1; }\n")
    status, out, _ = _check(capsys, str(p), *FAST)
    assert status == 0 and f"{p}: note: no loop nests to check" in out


# --------------------------------------------------------------------------- many files

REFUSED = """float a[100];
int main(void) {
    int i;
    for (i = 1; i < 100; i++) a[i] = a[i - 1] + 1.0f;
    return 0;
}
"""
PARALLEL = """float a[100];
int main(void) {
    int i;
    for (i = 0; i < 100; i++) a[i] = 2.0f * a[i];
    return 0;
}
"""


def test_directories_expand_to_sorted_c_files(tmp_path):
    (tmp_path / "b").mkdir()
    for name in ("z.c", "b/y.c", "a.c", "b/notes.txt", "b/h.h"):
        (tmp_path / name).write_text(PARALLEL)
    paths, errors = _expand_inputs([str(tmp_path), str(TESTDATA / "vecadd.c")])
    assert errors == []
    assert [Path(p).relative_to(tmp_path).as_posix() if str(p).startswith(str(tmp_path)) else p for p in paths] == \
        ["a.c", "b/y.c", "z.c", str(TESTDATA / "vecadd.c")]


def test_jobs_gives_the_same_output_and_files_do_not_share_state(tmp_path, capsys):
    """Two files with a nest of the same name (main@4): one refused, one parallel. Each file's answer is its
    own, in file order, with one process or a pool of two."""
    (tmp_path / "a_refused.c").write_text(REFUSED)
    (tmp_path / "b_parallel.c").write_text(PARALLEL)
    out = {}
    for jobs in ("1", "2"):
        assert main(["analyze", str(tmp_path), "--passes", "normalize,dependence,mapping", "--format", "json",
                     "--jobs", jobs]) == 0
        out[jobs] = capsys.readouterr().out
    assert out["1"] == out["2"]
    doc = json.loads(out["1"])
    assert [Path(f["path"]).name for f in doc["files"]] == ["a_refused.c", "b_parallel.c"]
    (refused,), (parallel,) = (f["nests"] for f in doc["files"])
    assert refused["name"] == parallel["name"] == "main@4"
    assert any("cannot run in parallel" in fl["message"] for fl in refused["flags"])
    assert parallel["flags"] == []           # not the other file's refusal


def test_progress_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        p = _Progress(2, stream)
        p.show("a.c")
        p.step("a.c")
        p.step("b.c")
        p.clear()
    assert pipe.getvalue() == ""
    assert tty.getvalue() == "\r\033[K[0/2] a.c\r\033[K[1/2] a.c\r\033[K[2/2] b.c\r\033[K"
    one = Tty()
    _Progress(1, one).step("a.c")
    assert one.getvalue() == ""              # a single file needs no progress


# --------------------------------------------------------------------------- pre-commit

def test_pre_commit_hook_definition(capsys):
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    yaml = pytest.importorskip("yaml")
    (hook,) = yaml.safe_load(text)
    assert hook["id"] == "c2gpu-check" and hook["language"] == "python"
    assert hook["types"] == ["c"] and hook["pass_filenames"] is True
    assert hook["entry"] == "c2gpu check" and "--gpu" in hook["args"]
    # what pre-commit runs: entry, args, then the staged file names
    argv = shlex.split(hook["entry"])[1:] + hook["args"] + [str(TESTDATA / "selected.c")]
    status = main(argv)
    first, summary = capsys.readouterr().out.splitlines()
    m = LINE.match(first)
    assert m and m["nest"] == "scale_rows@21"
    assert status == {"note": 0, "error": 3}[m["level"]]
    assert summary.startswith("c2gpu check: ") and summary.endswith(" reaches 1x on a100")


def test_console_script_is_installed():
    assert shutil.which("c2gpu") is not None, "pip install -e . provides the c2gpu command the hook runs"
