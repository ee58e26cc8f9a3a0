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
    assert ("omp.c:4:9: warning: the OpenMP pragma at line 4 has no reduction(+:sum) clause, but sum is a reduction "
            "over the loop: the threads update one variable (a data race) [omp-missing-clause]") in lines
    assert f'fix-it:"omp.c":{{4:3-4:41}}:"{fix}"' in lines          # the whole directive, from its '#'
    assert any(line.startswith("omp.c:4:9: warning: the OpenMP pragma at line 4 has no private(j) clause")
               for line in lines)
    assert ("omp.c:4:9: note: the OpenMP pragma at line 4 lists q as private, but the loop at line 5 never uses it "
            "[omp-unneeded-clause]") in lines
    assert any(line.startswith("omp.c:10:9: error: the OpenMP loop 'i' at line 11 races: carries a flow dependence on "
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
    assert by_code["omp-missing-clause"][0]["fix"] == {
        "line": 4, "replacement": "#pragma omp parallel for private(t, q) reduction(+:sum) private(j)"}
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
    assert change["replacements"] == [{"deletedRegion": {"startLine": 4, "startColumn": 3, "endColumn": 41},
                                       "insertedContent": {"text": "#pragma omp parallel for private(t, q) "
                                                                   "reduction(+:sum) private(j)"}}]
    assert "fixes" not in results[3]
