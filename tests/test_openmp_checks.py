"""`analyze` checks OpenMP directives against its dependence analysis (c2gpu/analysis/openmp.py): a race is an
error naming the accesses, a missing clause a warning with the directive as a clang-style fix-it, a private
variable the loop never uses a note.  DataRaceBench is the external judge (tests/test_dataracebench.py
test_openmp_directives_checked and the fix-its built with gcc -fopenmp); these are the forms."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import write_c

SOURCE = """\
float g(int n, float *restrict a, const float *restrict b) {
  float sum = 0, t;
  int j;
  #pragma omp parallel for private(t, q)
  for (int i = 0; i < n; i++) {
    t = b[i] * 2;
    for (j = 0; j < 4; j++)
      sum += t + j;
  }
  #pragma omp parallel for
  for (int i = 1; i < n; i++)
    a[i] = a[i - 1] + 1;
  return sum;
}
"""


def c2gpu(*args, cwd):
    return subprocess.run([sys.executable, "-m", "c2gpu", *args], capture_output=True, text=True, cwd=cwd)


def test_findings_in_the_terminal(tmp_path):
    write_c(tmp_path, SOURCE, "omp.c")
    out = c2gpu("analyze", "--gpu", "none", "omp.c", cwd=tmp_path).stdout
    lines = [line.strip() for line in out.splitlines()]
    fix = "#pragma omp parallel for private(t, q) reduction(+:sum) private(j)"
    assert ("omp.c:4:3: warning: the OpenMP pragma at line 4 has no reduction(+:sum) clause, but sum is a reduction "
            "over the loop: the threads update one variable (a data race) [omp-missing-clause]") in lines
    assert f'fix-it:"omp.c":{{4:3-4:41}}:"{fix}"' in lines          # the whole directive, from its '#'
    assert any(line.startswith("omp.c:4:3: warning: the OpenMP pragma at line 4 has no private(j) clause")
               for line in lines)
    assert ("omp.c:4:3: note: the OpenMP pragma at line 4 lists q as private, but the loop at line 5 never uses it "
            "[omp-unneeded-clause]") in lines
    assert any(line.startswith("omp.c:10:3: error: the OpenMP loop 'i' at line 11 races: carries a flow dependence on "
                               "a: a[i - 1] (line 12) reads the element of a written by a[i] (line 12)")
               and line.endswith("[omp-race]") for line in lines)


def test_findings_in_json(tmp_path):
    write_c(tmp_path, SOURCE, "omp.c")
    doc = json.loads(c2gpu("analyze", "--gpu", "none", "--format", "json", "omp.c", cwd=tmp_path).stdout)
    notes = [n for f in doc["files"] for nest in f["nests"] for n in nest["flags"]]
    by_code = {}
    for n in notes:
        by_code.setdefault(n["code"], []).append(n)
    assert {n["level"] for n in by_code["omp-missing-clause"]} == {"warning"}
    assert by_code["omp-missing-clause"][0]["fix"] == {"title": "add reduction(+:sum) private(j)", "edits": [
        {"file": "omp.c", "line": 4, "col": 3, "end_line": 4, "end_col": 41,
         "replacement": "#pragma omp parallel for private(t, q) reduction(+:sum) private(j)"}]}
    assert by_code["omp-race"][0]["level"] == "error" and "fix" not in by_code["omp-race"][0]
    assert "level" not in by_code["omp-unneeded-clause"][0]       # a note


def test_findings_in_sarif_with_fixes(tmp_path):
    """A result per finding, its rule's text the catalogue's, a missing clause with a SARIF fix: the directive's
    line replaced; the whole log valid against the OASIS SARIF 2.1.0 schema."""
    import jsonschema
    from test_reports import SARIF_SCHEMA_PATH
    write_c(tmp_path, SOURCE, "omp.c")
    doc = json.loads(c2gpu("analyze", "--gpu", "h100-sxm", "--no-run", "--format", "sarif", "omp.c", cwd=tmp_path).stdout)
    assert not list(jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA_PATH.read_text())).iter_errors(doc))
    run = doc["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["c2gpu/omp-race"]["defaultConfiguration"]["level"] == "error"
    results = [r for r in run["results"] if r["ruleId"].startswith("c2gpu/omp-")]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("c2gpu/omp-missing-clause", "warning"), ("c2gpu/omp-missing-clause", "warning"),
        ("c2gpu/omp-unneeded-clause", "note"), ("c2gpu/omp-race", "error")]
    change = results[0]["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "omp.c"
    assert change["replacements"] == [{"deletedRegion": {"startLine": 4, "startColumn": 3, "endLine": 4,
                                                           "endColumn": 41},
                                       "insertedContent": {"text": "#pragma omp parallel for private(t, q) "
                                                                   "reduction(+:sum) private(j)"}}]
    assert "fixes" not in results[3]


CONTINUED = SOURCE.replace("#pragma omp parallel for private(t, q)\n", "#pragma omp parallel for \\\n      private(t, q)\n")


def test_a_directive_continued_on_the_next_line_is_replaced_whole(tmp_path):
    """The fix-it's region is the whole directive, from its '#' to the end of its last continued line."""
    write_c(tmp_path, CONTINUED, "omp.c")
    out = c2gpu("analyze", "--gpu", "none", "omp.c", cwd=tmp_path).stdout
    assert ('fix-it:"omp.c":{4:3-5:20}:"#pragma omp parallel for private(t, q) reduction(+:sum) private(j)"'
            in [line.strip() for line in out.splitlines()])


def test_fix_prints_a_diff_that_patch_applies(tmp_path):
    """`c2gpu fix FILE`: the fix-its as a unified diff on stdout; `patch -p0` applied to a copy gives what
    `--apply` writes; the input is unchanged until --apply."""
    write_c(tmp_path, CONTINUED, "omp.c")
    run = c2gpu("fix", "omp.c", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:2] == ["--- omp.c", "+++ omp.c"]
    assert [line for line in run.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")] == [
        "-  #pragma omp parallel for \\", "-      private(t, q)",
        "+  #pragma omp parallel for private(t, q) reduction(+:sum) private(j)"]
    assert "omp.c:4:3: note: fix-it: add reduction(+:sum) private(j)" in run.stderr
    assert (tmp_path / "omp.c").read_text() == CONTINUED
    (tmp_path / "fix.diff").write_text(run.stdout)
    subprocess.run(["patch", "-s", "-p0", "-i", "fix.diff"], cwd=tmp_path, check=True)
    patched = (tmp_path / "omp.c").read_text()
    write_c(tmp_path, CONTINUED, "omp.c")
    written = c2gpu("fix", "--apply", "omp.c", cwd=tmp_path)
    assert written.returncode == 0 and "1 fix-it applied, written to omp.c" in written.stderr
    assert (tmp_path / "omp.c").read_text() == patched != CONTINUED
    # the fixed file has nothing left to fix: no warning, and an empty diff
    again = c2gpu("analyze", "--gpu", "none", "omp.c", cwd=tmp_path).stdout
    assert "omp-missing-clause" not in again and "omp-race" in again
    assert c2gpu("fix", "omp.c", cwd=tmp_path).stdout == ""


def test_fix_writes_another_file_never_its_input(tmp_path):
    write_c(tmp_path, SOURCE, "omp.c")
    run = c2gpu("fix", "omp.c", "-o", "fixed.c", cwd=tmp_path)
    assert run.returncode == 0 and (tmp_path / "omp.c").read_text() == SOURCE
    assert "reduction(+:sum) private(j)" in (tmp_path / "fixed.c").read_text()
    same = c2gpu("fix", "omp.c", "-o", "./omp.c", cwd=tmp_path)
    assert same.returncode == 2 and "would overwrite the input file" in same.stderr
    assert (tmp_path / "omp.c").read_text() == SOURCE


def test_fix_keeps_bytes_and_line_ends_it_does_not_edit(tmp_path):
    """A file with CRLF line ends, Latin-1 bytes in a comment and no final newline: only the directive changes."""
    source = ("// caf\xe9\r\n" + SOURCE.replace("\n", "\r\n")).rstrip("\r\n").encode("latin-1")
    (tmp_path / "omp.c").write_bytes(source)
    assert c2gpu("fix", "--apply", "omp.c", cwd=tmp_path).returncode == 0
    expected = source.replace(b"#pragma omp parallel for private(t, q)\r",
                              b"#pragma omp parallel for private(t, q) reduction(+:sum) private(j)\r")
    assert expected != source and (tmp_path / "omp.c").read_bytes() == expected


def test_fix_of_a_file_with_errors_fixes_the_rest(tmp_path):
    write_c(tmp_path, "int broken( {\n" + SOURCE, "omp.c")
    run = c2gpu("fix", "omp.c", cwd=tmp_path)
    assert run.returncode == 1 and "omp.c:1:" in run.stderr and "Traceback" not in run.stderr
    assert "+  #pragma omp parallel for private(t, q) reduction(+:sum) private(j)" in run.stdout
