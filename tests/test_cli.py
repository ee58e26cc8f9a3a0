"""CLI behaviour: exit codes, compiler-style messages without tracebacks, JSON schema."""
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, TESTDATA, project_programs, write_c

SCHEMA = json.loads((ROOT / "c2gpu" / "schemas" / "analysis.schema.json").read_text())


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "c2gpu", *args], capture_output=True, text=True, cwd=cwd)


def test_analyze_matmul_text():
    r = run("analyze", str(TESTDATA / "matmul.c"), "-D", "N=64", "--details")
    assert r.returncode == 0, r.stderr
    assert "matmul@16" in r.stdout
    assert "for (k = 0; k < 64; k++)  trip 64" in r.stdout
    assert "reduction candidates: C[i][j] + over k (line 20)" in r.stdout


def test_the_files_own_diagnostics_are_printed_by_analyze_and_port(tmp_path):
    """A pragma c2gpu does not understand (like a nest it could not describe) is said where the nests are, by
    analyze and by port: no nest disappears without a word."""
    src = write_c(tmp_path, "void f(int n, double *a) {\n#pragma c2gpu frobnicate\n  for (int i = 0; i < n; i++) a[i] = 0;\n}\n")
    note = f"{src}:2:9: note: unknown c2gpu pragma 'c2gpu frobnicate'"
    r = run("analyze", str(src), "--no-run")
    assert r.returncode == 0 and note in r.stdout, r.stdout
    r = run("port", str(src), "-o", str(tmp_path / "t.cu"))
    assert r.returncode == 0 and note in r.stderr, r.stderr


def test_syntax_error_is_compiler_style(tmp_path):
    src = write_c(tmp_path, "void f(int n, float *a) {\n  for (int i = 0; i < n; i++)\n    a[i] = ;\n}\n")
    r = run("analyze", str(src))
    assert r.returncode == 1
    assert r.stderr.startswith(f"{src}:3:12: error: invalid expression before ';'")
    assert "Traceback" not in r.stderr


def test_the_command_ends_without_teardown_but_with_exit_handlers_and_all_output(tmp_path):
    """c2gpu.drivers.cli.run ends the process at once (os._exit): the exit status is main's, output written to a pipe
    arrives whole, and handlers registered with atexit (a coverage tool's) still run."""
    marker = tmp_path / "handler-ran"
    code = ("import atexit, pathlib, sys\n"
            f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('yes'))\n"
            "from c2gpu.drivers.cli import run\n"
            "sys.argv = ['c2gpu'] + sys.argv[1:]\n"
            "run()\n")
    ok = subprocess.run([sys.executable, "-c", code, "analyze", str(TESTDATA / "matmul.c"), "--no-run",
                         "--format", "json"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert len(json.loads(ok.stdout)["files"][0]["nests"]) == 3       # the whole document, parsed
    assert marker.read_text() == "yes"
    marker.unlink()
    bad = subprocess.run([sys.executable, "-c", code, "analyze", "no/such/file.c"], capture_output=True, text=True)
    assert (bad.returncode, bad.stderr.strip()) == (1, "error: no such file: 'no/such/file.c'")
    assert marker.read_text() == "yes"


def test_missing_file_one_line():
    r = run("analyze", "no/such/file.c")
    assert r.returncode == 1
    assert r.stderr.strip() == "error: no such file: 'no/such/file.c'"


def test_directory_rejected(tmp_path):
    r = run("analyze", str(tmp_path))
    assert r.returncode == 1 and "is a directory" in r.stderr and "Traceback" not in r.stderr


def test_missing_include_points_at_line(tmp_path):
    src = write_c(tmp_path, "int x;\n#include \"nothere.h\"\n")
    r = run("analyze", str(src))
    assert r.returncode == 1
    assert f"{src}:2:10: error: nothere.h: No such file or directory" in r.stderr


def test_bad_define_is_usage_error():
    r = run("analyze", str(TESTDATA / "saxpy.c"), "-D", "=3")
    assert r.returncode == 2 and "invalid -D definition" in r.stderr


def test_unknown_pass_is_usage_error():
    r = run("analyze", str(TESTDATA / "saxpy.c"), "--passes", "normalize,bogus")
    assert r.returncode == 2 and "unknown pass 'bogus'" in r.stderr


def test_good_files_still_analysed_when_one_fails(tmp_path):
    bad = write_c(tmp_path, "void f( {", "bad.c")
    r = run("analyze", str(bad), str(TESTDATA / "saxpy.c"), "--format", "json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == [str(TESTDATA / "saxpy.c")]
    assert doc["errors"][0]["path"] == str(bad) and doc["errors"][0]["location"]["line"] == 1


def test_unsupported_construct_reported_per_nest(tmp_path):
    src = write_c(tmp_path, """
void f(int n, float *restrict a, float *restrict b) {
  for (int i = 0; i < n; i++) {
    if (a[i] < 0) break;
    a[i] = 2.0f * a[i];
  }
  for (int i = 0; i < n; i++)
    b[i] = a[i] + 1.0f;
}
""")
    r = run("analyze", str(src), "--format", "json")
    assert r.returncode == 0
    nests = json.loads(r.stdout)["files"][0]["nests"]
    assert len(nests) == 2
    assert [(f["code"], f["location"]["line"]) for f in nests[0]["flags"]] == [("unsupported-statement", 4)]
    assert nests[1]["flags"] == []


def test_json_validates_against_schema_for_all_testdata():
    files = sorted(str(p) for p in project_programs())
    r = run("analyze", *files, "-I", str(TESTDATA / "polybench"), "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["schema_version"] == 1 and len(doc["files"]) == len(files)


def test_print_after_and_timings():
    r = run("analyze", str(TESTDATA / "decrementing.c"), "--print-after", "normalize", "--timings")
    assert r.returncode == 0
    assert "--- shapes_1d@19 after normalize ---" in r.stderr
    assert "i = -i_n + 999" in r.stderr
    assert "pass normalize" in r.stderr


def test_passes_lists_builtin():
    r = run("passes")
    assert r.returncode == 0
    assert "normalize  (transform, from c2gpu[normalize])" in r.stdout
    # what each pass reads: required analyses, and those it uses when the pipeline computes them
    plan = r.stdout[r.stdout.index("plan  (analysis"):].split("\n")
    assert plan[2:5] == ["    requires: mapping", "    uses: shared-memory, performance", "    provides: plan"]


def test_port_timings_and_print_after(tmp_path):
    """--timings and --print-after work on every command that runs passes, as on analyze (stderr)."""
    out = tmp_path / "saxpy.cu"
    r = run("port", str(TESTDATA / "saxpy.c"), "-o", str(out), "--timings")
    assert r.returncode == 0, r.stderr
    timed = re.findall(r"^pass (\S+) +(\d+) runs +[\d.]+ ms$", r.stderr, re.M)
    assert {name for name, _ in timed} >= {"normalize", "dependence", "mapping", "shared-memory", "plan"}
    assert all(int(runs) >= 1 for _, runs in timed)
    r = run("port", str(TESTDATA / "saxpy.c"), "-o", str(out), "--print-after", "mapping")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^--- saxpy@\d+ after mapping ---$", r.stderr, re.M)
    assert "after dependence" not in r.stderr
    r = run("emit", str(TESTDATA / "saxpy.c"), "--print-after", "no-such-pass")
    assert r.returncode == 2 and "--print-after: unknown pass 'no-such-pass'" in r.stderr


def test_check_timings(tmp_path):
    r = run("check", str(TESTDATA / "saxpy.c"), "--gpu", "a100", "--no-run", "--timings")
    assert r.returncode in (0, 3), r.stderr
    assert re.search(r"^pass performance +3 runs +[\d.]+ ms$", r.stderr, re.M)     # once per nest of saxpy.c
    # the work around the passes too: loading the file, the CPU baseline, the reports
    phases = set(re.findall(r"^phase (\S.*?) +\d+ runs", r.stderr, re.M))
    assert phases >= {"load", "cpu baseline", "reports"}, r.stderr


def test_refusal_points_at_the_blocking_access_with_its_code_and_can_be_silenced():
    """A refusal is reported at the access that blocks (not the nest's first line), with a stable code a user
    can silence; an unknown code is a usage error."""
    args = ("analyze", str(TESTDATA / "may_alias.c"), "--passes", "normalize,dependence,mapping")
    r = run(*args)
    assert r.returncode == 0, r.stderr
    refusal = [line.strip() for line in r.stdout.splitlines() if line.strip().endswith("[not-proven-parallel]")]
    assert refusal and refusal[0].startswith(f"{TESTDATA / 'may_alias.c'}:18:18: note: loop 'i' at line 17 is not "
                                             "proven parallel: pointer parameters 'dst' and 'src' may alias")
    r = run(*args, "--silence", "not-proven-parallel")
    assert r.returncode == 0 and "[not-proven-parallel]" not in r.stdout and "may_alias.c" in r.stdout
    r = run(*args, "--silence", "no-such-code")
    assert r.returncode == 2 and "--silence no-such-code: not a diagnostic code" in r.stderr


def test_codes_lists_every_diagnostic_code():
    from c2gpu.diagnostics import CODES
    r = run("codes")
    assert r.returncode == 0
    listed = [line.split()[0] for line in r.stdout.splitlines()]
    assert listed == sorted(CODES) and "unknown-call" in listed


@pytest.mark.parametrize("argv", [
    ["analyze", "a.c", "--gpu", "a10", "-D", "N=4", "--format", "json", "--no-run"],
    ["--debug", "check", "a.c", "--min-speedup", "2", "-v"],
    ["port", "a.c", "-o", "x.cu", "--block", "32x8", "--shared", "A"],
    ["emit", "a.c"], ["verify", "a.c", "--rtol", "1e-3"], ["gpus", "--format", "json"], ["passes"], ["codes"],
])
def test_the_parser_of_one_subcommand_parses_as_the_whole_one(argv):
    """main declares only the subcommand argv names: the same namespace as with every subcommand declared."""
    from c2gpu.drivers.cli import _command_in, build_parser
    assert _command_in(argv) == next(a for a in argv if not a.startswith("-"))
    assert vars(build_parser(_command_in(argv)).parse_args(argv)) == vars(build_parser().parse_args(argv))
