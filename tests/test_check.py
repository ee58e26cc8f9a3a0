"""Workflow: `c2gpu check` for CI, `analyze DIR --jobs N`, the progress display, the pre-commit hook (issue 6)."""
from __future__ import annotations

import io
import json
import re
import shlex
import shutil
from pathlib import Path

import jsonschema
import pytest

from c2gpu.drivers.cli import _expand_inputs, _Progress, main

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
FAST = ["--gpu", "h100-sxm", "--no-run", "-D", "N=64"]
LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<level>note|warning|error): nest (?P<nest>\S+): "
                  r"(?P<msg>.*) \[(?P<rule>c2gpu/[a-z-]+)\]$")


def _check(capsys, *argv):
    status = main(["check", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


# --------------------------------------------------------------------------- check

def test_check_passes_and_fails_on_the_threshold(capsys):
    """selected.c marks one nest (scale_rows): only it is checked. Its speedup passes a tiny threshold and
    fails a huge one; the exit status says which."""
    f = str(TESTDATA / "selected.c")
    status, out, _ = _check(capsys, f, *FAST, "--min-speedup", "1e-6", "-v")
    lines = out.splitlines()
    m = LINE.match(lines[0])
    assert m and m["nest"] == "scale_rows@21" and m["level"] == "note" and (m["line"], m["col"]) == ("21", "5")
    assert m["rule"] == "c2gpu/reaches-min-speedup"
    shown = re.search(r"speedup ([\d.,]+)x \(>= min 1e-06x\)", m["msg"]).group(1)
    speedup = float(shown.replace(",", ""))
    assert status == 0 and len(lines) == 2 and lines[1] == "c2gpu check: 1 of 1 nest reaches 1e-06x on h100-sxm"

    status, out, _ = _check(capsys, f, *FAST, "--min-speedup", "1e9")
    m = LINE.match(out.splitlines()[0])
    assert status == 3 and m["level"] == "error" and f"speedup {shown}x (< min 1e+09x)" in m["msg"]
    assert m["rule"] == "c2gpu/below-min-speedup"
    assert out.splitlines()[-1] == "c2gpu check: 0 of 1 nest reaches 1e+09x on h100-sxm; 1 below"

    # just above and just below the nest's own speedup
    assert main(["check", f, *FAST, "--min-speedup", str(speedup * 0.99)]) == 0
    assert main(["check", f, *FAST, "--min-speedup", str(speedup * 1.01)]) == 3


def test_check_kernel_only(capsys):
    f = str(TESTDATA / "selected.c")
    status, out, _ = _check(capsys, f, *FAST, "--min-speedup", "1e-6", "--kernel-only", "-v")
    assert status == 0 and "kernel speedup" in out and out.rstrip().endswith("(kernels only)")


def test_check_refused_nest_fails(capsys):
    status, out, _ = _check(capsys, str(TESTDATA / "prefix_sum.c"), *FAST, "--min-speedup", "1e-6")
    assert status == 3
    refused = [m for m in map(LINE.match, out.splitlines()) if m and m["nest"] == "prefix_sum@15"]
    assert refused and refused[0]["level"] == "error" and refused[0]["rule"] == "c2gpu/not-portable"
    assert refused[0]["msg"].startswith("cannot be ported: loop 'i' at line 15 cannot run in parallel")
    assert out.splitlines()[-1].endswith("; 1 cannot be ported")


def test_check_exit_codes_for_input_and_usage_errors(capsys, tmp_path):
    assert main(["check", str(tmp_path / "missing.c"), *FAST]) == 1
    assert main(["check", str(TESTDATA / "selected.c"), "--no-run"]) == 2          # C2GPU_GPU=none (conftest)
    assert main(["check", str(TESTDATA / "selected.c"), *FAST, "--min-speedup", "0"]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["check", str(empty), *FAST]) == 1                                   # a directory without C files
    err = capsys.readouterr().err
    assert "missing.c" in err and "needs a GPU: --gpu none" in err and "is a directory with no C files" in err


def test_check_file_without_nests(capsys, tmp_path):
    p = tmp_path / "none.c"
    p.write_text("int f(int x) { return x + 1; }\n")
    # a gate that checked nothing has not passed (a CI job pointed at the wrong file must not go green)
    status, out, err = _check(capsys, str(p), *FAST, "-v")
    assert status == 1 and f"{p}: note: no loop nests to check" in out
    assert "c2gpu check: error: no loop nests in the files given: nothing was checked" in err
    status, out, _ = _check(capsys, str(p), *FAST)
    assert status == 1 and out == "c2gpu check: 0 of 0 nests reach 1x on h100-sxm\n"


SYMBOLIC = """void scale(int n, float *restrict a, const float *restrict b)
{
    for (int i = 0; i < n; i++)
        a[i] = 2.0f * b[i];
}
"""
MARKED_REFUSED = """float a[1000];
void f(void)
{
#pragma c2gpu port
    for (int i = 1; i < 1000; i++)
        a[i] = a[i - 1] + 1.0f;
}
"""


def test_cannot_assess_is_a_warning_unless_strict(capsys, tmp_path):
    """A symbolic size without --param: no verdict. The nest is reported as cannot-assess, apart from the nests
    below the bar, and fails the gate only with --strict."""
    p = tmp_path / "sym.c"
    p.write_text(SYMBOLIC)
    status, out, _ = _check(capsys, str(p), *FAST)
    line, summary = out.splitlines()
    m = LINE.match(line)
    assert status == 0 and m["level"] == "warning" and m["rule"] == "c2gpu/no-verdict"
    assert m["msg"].startswith("no verdict: ") and "--param n=VALUE" in m["msg"]
    assert summary == "c2gpu check: 0 of 1 nest reaches 1x on h100-sxm; 1 have no verdict"
    status, out, _ = _check(capsys, str(p), *FAST, "--strict")
    assert status == 3 and LINE.match(out.splitlines()[0])["level"] == "error"
    assert main(["check", str(p), *FAST, "--param", "n=100000", "--min-speedup", "1e-9"]) == 0   # now assessed


def test_marked_refused_nest_fails_and_counts_apart(capsys, tmp_path):
    p = tmp_path / "marked.c"
    p.write_text(MARKED_REFUSED)
    q = tmp_path / "sym.c"
    q.write_text(SYMBOLIC)
    status, out, _ = _check(capsys, str(p), str(q), str(TESTDATA / "selected.c"), *FAST, "--min-speedup", "1e9")
    rules = [LINE.match(x)["rule"] for x in out.splitlines()[:-1]]
    assert status == 3 and rules == ["c2gpu/not-portable", "c2gpu/no-verdict", "c2gpu/below-min-speedup"]
    assert out.splitlines()[-1] == ("c2gpu check: 0 of 3 nests reach 1e+09x on h100-sxm; 1 below, "
                                    "1 cannot be ported, 1 have no verdict")


def test_exit_zero_reports_but_does_not_fail(capsys, tmp_path):
    f = str(TESTDATA / "selected.c")
    status, out, _ = _check(capsys, f, *FAST, "--min-speedup", "1e9", "--exit-zero")
    assert status == 0 and LINE.match(out.splitlines()[0])["rule"] == "c2gpu/below-min-speedup"
    assert out.splitlines()[-1].endswith("; 1 below; the gate fails (--exit-zero)")
    # unreadable input and a bad command line keep their codes
    assert main(["check", str(tmp_path / "missing.c"), *FAST, "--exit-zero"]) == 1
    assert main(["check", f, *FAST, "--exit-zero", "--min-speedup", "0"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["check", f, *FAST, "--exit-zero", "--format", "xml"])
    assert e.value.code == 2


SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
CHECK_SCHEMA = json.loads((ROOT / "c2gpu" / "schemas" / "check.schema.json").read_text())


def test_sarif_file_and_gate_in_one_run(capsys, tmp_path, monkeypatch):
    """`--format sarif -o FILE`: the SARIF log (valid against the OASIS schema) with the same rule ids and levels
    as the lines, the lines and the summary on stdout, and exit status 3 since the gate fails."""
    monkeypatch.chdir(ROOT)
    (tmp_path / "marked.c").write_text(MARKED_REFUSED)
    out_file = tmp_path / "c2gpu.sarif"
    status, out, err = _check(capsys, "testdata/selected.c", str(tmp_path / "marked.c"), *FAST,
                              "--min-speedup", "1e9", "--format", "sarif", "-o", str(out_file))
    assert status == 3
    doc = json.loads(out_file.read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)
    lines = [LINE.match(x) for x in out.splitlines()[:-1]]
    results = doc["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [(m["rule"], m["level"]) for m in lines] == \
        [("c2gpu/below-min-speedup", "error"), ("c2gpu/not-portable", "error")]
    assert results[0]["message"]["text"] == lines[0]["msg"]
    assert results[1]["relatedLocations"]            # the lines that block the refused nest
    ids = [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
    assert all(ids[r["ruleIndex"]] == r["ruleId"] for r in results)
    assert out.splitlines()[-1].startswith("c2gpu check: 0 of 2 nests") and err == ""


def test_json_to_stdout_moves_the_text_to_stderr(capsys):
    status, out, err = _check(capsys, str(TESTDATA / "selected.c"), *FAST, "--min-speedup", "1e-6",
                              "--format", "json")
    doc = json.loads(out)
    jsonschema.Draft202012Validator(CHECK_SCHEMA).validate(doc)
    (nest,) = doc["nests"]
    assert status == 0 and doc["passed"] and nest["passed"] and nest["rule"] == "c2gpu/reaches-min-speedup"
    assert nest["nest"] == "scale_rows@21" and nest["location"]["line"] == 21 and nest["speedup"] > 0
    assert err == "c2gpu check: 1 of 1 nest reaches 1e-06x on h100-sxm\n"      # quiet: the summary only


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
    status = main(argv + ["-v"])
    first, summary = capsys.readouterr().out.splitlines()
    m = LINE.match(first)
    assert m and m["nest"] == "scale_rows@21"
    assert status == {"note": 0, "error": 3}[m["level"]]
    assert summary.startswith("c2gpu check: ") and " reaches 1x on a100" in summary


def test_console_script_is_installed():
    assert shutil.which("c2gpu") is not None, "pip install -e . provides the c2gpu command the hook runs"
