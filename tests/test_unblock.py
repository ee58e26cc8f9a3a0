"""Fix-its that unblock a port (c2gpu/drivers/unblock.py): an edit is offered only when the nest, analysed again
with the edit in the text, is ported; one that asserts what the code does not show says so, and `c2gpu fix`
applies it only with --assert.  The fixed programs are built with gcc and their ports run on the CPU execution
layer against the original (three thread orders, poisoned memory)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import c2gpu
from conftest import requires_tool, verified_ports, write_c

LIBRARY = """\
#include <stdio.h>
void scale(int n, float *dst, const float * src, float k)
{
  for (int i = 0; i < n; i++)
    dst[i] = k * src[i];
}
void add(int n, int m, double a[][64], double b[])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      a[i][j] += b[j];
}
void prefix(int n, float *dst, const float *src)
{
  for (int i = 1; i < n; i++)
    dst[i] = dst[i - 1] + src[i];
}
"""

MAIN = """
static float x[4096], y[4096];
static double a[100][64], b[64];
int main(void) {
  for (int i = 0; i < 4096; i++) x[i] = (i % 7) * 0.5f;
  for (int i = 0; i < 100; i++) for (int j = 0; j < 64; j++) a[i][j] = i - j;
  for (int j = 0; j < 64; j++) b[j] = j * 0.25;
  float *bufs[2] = {x, y};             /* pointers the file does not follow: it cannot show them apart */
  double *rows[1] = {b};
  scale(4096, bufs[1], bufs[0], 3.0f);
  add(100, 64, a, rows[0]);
  prefix(4096, y, x);
  double s = 0;
  for (int i = 0; i < 4096; i++) s += y[i];
  for (int i = 0; i < 100; i++) for (int j = 0; j < 64; j++) s += a[i][j];
  printf("%.6e\\n", s);
  return 0;
}
"""


def c2gpu_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "c2gpu", *args], capture_output=True, text=True, cwd=cwd)


def unblocking(report) -> dict[str, dict]:
    return {n.name: f for n in report.nests for f in n.data["flags"] if f["code"] == "unblocking-edit"}


def test_restrict_is_offered_where_it_unblocks_and_says_what_it_asserts(tmp_path):
    path = write_c(tmp_path, LIBRARY, "lib.c")
    report = c2gpu.analyze(str(path), gpu="h100-sxm", run_cpu=False, params={"n": 4096, "m": 64})
    found = unblocking(report)
    # prefix carries a dependence whatever the pointers: restrict does not unblock it, so it is not offered
    assert set(found) == {"scale@4", "add@9"}
    scale = found["scale@4"]
    assert scale["fix"]["title"] == "declare 'dst' and 'src' restrict"
    assert scale["fix"]["asserts"] == ("no call of scale() passes 'dst' and 'src' pointing into one object while "
                                       "one of them is written through")
    assert [(e["line"], e["col"], e["replacement"]) for e in scale["fix"]["edits"]] == [
        (2, 26, "restrict "), (2, 45, "restrict ")]
    # what the port would then give, predicted on the GPU (the CPU time a static estimate)
    assert "the nest can be ported; then: port:" in scale["message"] or \
        "the nest can be ported; then: keep on the CPU:" in scale["message"]
    add = found["add@9"]
    assert add["fix"]["title"] == "declare 'a' and 'b' restrict"
    assert [(e["line"], e["replacement"]) for e in add["fix"]["edits"]] == [(7, "restrict"), (7, "restrict")]
    assert {n.name: n.verdict_class for n in report.nests}["prefix@15"] == "not-portable"


def test_not_offered_when_the_file_shows_the_pointers_overlap(testdata):
    """may_alias.c calls shift_add with overlapping pointers: restrict would be false, and is not offered."""
    report = c2gpu.analyze(str(testdata / "may_alias.c"), gpu="h100-sxm", run_cpu=False)
    assert unblocking(report) == {}
    assert {n.name: n.verdict_class for n in report.nests}["shift_add@17"] == "not-portable"


@requires_tool("gcc")
def test_fix_applies_what_it_asserts_only_when_asked_and_the_result_is_ported(tmp_path):
    write_c(tmp_path, LIBRARY + MAIN, "prog.c")
    plain = c2gpu_cli("fix", "--gpu", "h100-sxm", "prog.c", cwd=tmp_path)
    assert plain.returncode == 0 and plain.stdout == ""
    assert "fix-it left out, --assert applies it: declare 'dst' and 'src' restrict" in plain.stderr
    diff = c2gpu_cli("fix", "--gpu", "h100-sxm", "--assert", "prog.c", cwd=tmp_path)
    assert "+void scale(int n, float *restrict dst, const float * restrict src, float k)" in diff.stdout
    assert "+void add(int n, int m, double a[restrict][64], double b[restrict])" in diff.stdout
    assert (tmp_path / "prog.c").read_text() == LIBRARY + MAIN
    assert c2gpu_cli("fix", "--gpu", "h100-sxm", "--assert", "--apply", "prog.c", cwd=tmp_path).returncode == 0
    fixed = (tmp_path / "prog.c").read_text()
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", "-o", "prog", "prog.c"], cwd=tmp_path, check=True)
    # main's calls pass distinct arrays, as the edit asserts: the ports compute what the original computes
    assert {"scale@4", "add@9"} <= verified_ports(tmp_path, fixed)


def test_the_fix_in_sarif_and_json(tmp_path):
    import jsonschema
    from test_reports import SARIF_SCHEMA_PATH
    write_c(tmp_path, LIBRARY, "lib.c")
    doc = json.loads(c2gpu_cli("analyze", "--gpu", "h100-sxm", "--no-run", "--format", "sarif", "lib.c",
                               cwd=tmp_path).stdout)
    assert not list(jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA_PATH.read_text())).iter_errors(doc))
    results = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "c2gpu/unblocking-edit"]
    assert len(results) == 2
    fix, = results[0]["fixes"]
    assert "it asserts what the code does not show" in fix["description"]["text"]
    change, = fix["artifactChanges"]
    assert [r["insertedContent"]["text"] for r in change["replacements"]] == ["restrict ", "restrict "]
    text = c2gpu_cli("analyze", "--gpu", "h100-sxm", "--no-run", "lib.c", cwd=tmp_path).stdout
    assert 'fix-it:"lib.c":{2:26-2:26}:"restrict "' in text and 'fix-it:"lib.c":{2:45-2:45}:"restrict "' in text


@pytest.mark.parametrize("declaration,edited", [
    ("float *p", "float *restrict p"),
    ("float * const p", None),                # a const pointer: the qualifier list is the user's to order
    ("float **p", "float **restrict p"),
    ("float p[]", "float p[restrict]"),
    ("float p[][8]", "float p[restrict][8]"),
    ("float p[16]", "float p[restrict 16]"),
    ("float (*p)[8]", "float (*restrict p)[8]"),
])
def test_the_restrict_edit_of_each_declarator(declaration, edited):
    from c2gpu.drivers.unblock import _restrict_edit
    line = f"void f(int n, {declaration}, int k)"
    col = line.index(declaration) + declaration.index("p") + 1
    edit = _restrict_edit("p", "f.c", 1, col, [line])
    if edited is None:
        assert edit is None
        return
    s = edit.span
    assert line[:s.col - 1] + edit.text + line[s.end_col - 1:] == f"void f(int n, {edited}, int k)"


PRINTS = r"""
#include <stdio.h>
#include <math.h>
double x[3000], y[3000], z[3000];
int main(void) {
  int n = 3000, count;
  double scale = 0.5;
  for (int i = 0; i < n; i++) x[i] = 0.001 * (i % 101);
  for (int i = 0; i < n; i++) {
    y[i] = sqrt(x[i]) * 2.0;
    printf("%d %.6f %g\n", i, y[i], scale);
    puts("row done");
  }
  return 0;
}
"""
WRITE = "    y[i] = sqrt(x[i]) * 2.0;\n"


@requires_tool("gcc")
def test_prints_move_into_a_loop_of_their_own_and_the_output_is_the_same(tmp_path):
    path = write_c(tmp_path, PRINTS, "prog.c")
    found = unblocking(c2gpu.analyze(str(path), gpu="h100-sxm", run_cpu=False))
    fix = found["main@9"]["fix"]
    assert fix["title"] == "move the 'printf' and 'puts' calls out of the loop, into a loop of their own after it"
    assert not fix.get("asserts")                  # it keeps the meaning: applied without --assert
    assert c2gpu_cli("fix", "--gpu", "h100-sxm", "--apply", "prog.c", cwd=tmp_path).returncode == 0
    fixed = path.read_text()
    assert WRITE + "  }\n  for (int i = 0; i < n; i++) {\n    printf(" in fixed, fixed
    outputs = []
    for name, text in (("before.c", PRINTS), ("after.c", fixed)):
        write_c(tmp_path, text, name)
        subprocess.run(["gcc", "-std=c99", "-Wall", "-o", name[:-2], name, "-lm"], cwd=tmp_path, check=True)
        outputs.append(subprocess.run([f"./{name[:-2]}"], cwd=tmp_path, capture_output=True, text=True).stdout)
    assert outputs[0] == outputs[1] and outputs[0].count("row done") == 3000
    assert "main@9" in verified_ports(tmp_path, fixed)


@pytest.mark.parametrize("edits", [
    # what a call prints would change after it: a sum so far, an element the call reads before the iteration
    # writes it, another element than the one written, an element written again below it, one element that the
    # last iteration writes and every iteration prints
    [(WRITE, WRITE + "    scale += y[i];\n")],
    [(WRITE, '    printf("%.6f\\n", y[i]);\n' + WRITE)],
    [("i, y[i], scale);", "i, y[i > 0 ? i - 1 : 0], scale);")],
    [('    puts("row done");\n', '    puts("row done");\n    y[i] = 0;\n')],
    [(WRITE, WRITE + "    if (i == n - 1) z[0] = 1.0;\n"), ("i, y[i], scale);", "i, z[0], scale);")],
    # a string the loop writes, read by %s and by puts through the pointer (a longer prefix in each iteration)
    [("double x[3000]", "char line[3001]; double x[3000]"), (WRITE, WRITE + "    line[i] = 'a';\n"),
     ("i, y[i], scale);", "i, y[i], line);"), ("%g", "%s")],
    [("double x[3000]", "char line[3001]; double x[3000]"), (WRITE, WRITE + "    line[i] = 'a';\n"),
     ('puts("row done")', "puts(line)")],
    # %n writes; a call under a condition is not at the top of the body
    [("i, y[i], scale);", "i, y[i], scale, &count);"), ('"%d %.6f %g\\n"', '"%d %.6f %g%n\\n"')],
    [('    puts("row done");', '    if (i % 2) puts("row done");')],
])
def test_prints_stay_when_moving_them_would_change_what_they_print(tmp_path, edits):
    src = PRINTS
    for old, new in edits:
        assert old in src
        src = src.replace(old, new, 1)
    report = c2gpu.analyze(str(write_c(tmp_path, src, "prog.c")), gpu="h100-sxm", run_cpu=False)
    assert "main@9" not in unblocking(report)
    assert report.nest("main@9").verdict_class == "not-portable"


def test_prints_stay_when_what_they_print_may_share_memory_with_what_the_loop_writes(tmp_path):
    # w is y + 1: in iteration i the call prints y[i + 1] before the loop writes it; after the move, after
    src = r"""
#include <stdio.h>
void f(int n, double *restrict y, const double *restrict x, const double *w) {
  for (int i = 0; i < n; i++) {
    y[i] = 2 * x[i];
    printf("%f\n", w[i]);
  }
}
double a[101], b[101];
int main(void) { f(100, a, b, a + 1); return 0; }
"""
    report = c2gpu.analyze(str(write_c(tmp_path, src, "prog.c")), gpu="h100-sxm", run_cpu=False)
    assert "f@4" not in unblocking(report)
    assert unblocking(c2gpu.analyze(str(write_c(tmp_path, src.replace("a + 1", "b"), "other.c")), gpu="h100-sxm",
                                    run_cpu=False))["f@4"]["fix"]["edits"]


STRINGS = r"""
#include <stdio.h>
#include <string.h>
void mask(const char *restrict s, char *restrict out, char key)
{
  for (int i = 0; i < strlen(s); i++)
    out[i] = s[i] ^ key;
}
char text[2000], coded[2000];
int main(void) {
  for (int i = 0; i < 1999; i++) text[i] = 'a' + i % 26;
  mask(text, coded, 3);
  long sum = 0;
  for (int i = 0; i < 1999; i++) sum += coded[i] * (i % 7);
  printf("%ld\n", sum);
  return 0;
}
"""


@requires_tool("gcc")
def test_a_string_length_bound_is_computed_once_before_the_loop(tmp_path):
    path = write_c(tmp_path, STRINGS, "prog.c")
    fix = unblocking(c2gpu.analyze(str(path), gpu="h100-sxm", run_cpu=False))["mask@6"]["fix"]
    assert fix["title"] == "compute 'strlen(s)' once, before the loop" and not fix.get("asserts")
    assert c2gpu_cli("fix", "--gpu", "h100-sxm", "--apply", "prog.c", cwd=tmp_path).returncode == 0
    fixed = path.read_text()
    assert "{\n  const size_t i_end = strlen(s);\n  for (int i = 0; i < i_end; i++)\n" in fixed, fixed
    outputs = []
    for name, text in (("before.c", STRINGS), ("after.c", fixed)):
        write_c(tmp_path, text, name)
        subprocess.run(["gcc", "-std=c99", "-o", name[:-2], name], cwd=tmp_path, check=True)
        outputs.append(subprocess.run([f"./{name[:-2]}"], cwd=tmp_path, capture_output=True, text=True).stdout)
    assert outputs[0] == outputs[1]
    assert "mask@7" in verified_ports(tmp_path, fixed)         # (one line down: the declaration above it)


@pytest.mark.parametrize("old,new", [
    # the loop writes the string: a character made 0 ends the loop as written, not once the length is computed
    ("const char *restrict s, char *restrict out, char key)\n{\n  for (int i = 0; i < strlen(s); i++)\n"
     "    out[i] = s[i] ^ key;", "char *s, char *restrict out, char key)\n{\n  for (int i = 0; i < strlen(s); i++)\n"
     "    s[i] = s[i] == key ? 0 : s[i];"),
    ("{\n  for (int i", "{\n  if (key)\n  for (int i"),             # the body of an if
    ("{\n  for (int i", "{\n#pragma GCC ivdep\n  for (int i"),      # a directive's loop
])
def test_a_string_length_bound_stays_where_computing_it_once_may_change_the_program(tmp_path, old, new):
    assert old in STRINGS
    report = c2gpu.analyze(str(write_c(tmp_path, STRINGS.replace(old, new), "prog.c")), gpu="h100-sxm",
                           run_cpu=False)
    assert not [f for f in unblocking(report).values() if "strlen" in f["fix"]["title"]]


def test_the_hoisted_bound_takes_a_name_the_file_does_not_use(tmp_path):
    src = STRINGS.replace("long sum = 0;", "long sum = 0, i_end = 0;")
    fix = unblocking(c2gpu.analyze(str(write_c(tmp_path, src, "prog.c")), gpu="h100-sxm", run_cpu=False))
    assert [e["replacement"] for e in fix["mask@6"]["fix"]["edits"]] == [
        "  const size_t i_end_ = strlen(s);\n", "i_end_"]


@pytest.mark.slow
def test_every_fix_it_offered_on_npb_makes_its_nest_ported(tmp_path):
    """NPB (class S): each unblocking edit c2gpu offers, applied to the file, makes its nest ported when the
    file is analysed again as a whole (not only the nest alone, as the search did); prints how many of the
    nests not ported have one."""
    import npb_recall
    from c2gpu.frontend.source import apply_fixes
    from c2gpu.ir import Edit, Fix, Span
    tree = npb_recall.prepare(tmp_path)
    blocked = offered = 0
    for name in npb_recall.BENCHMARKS:
        src = tree / name / f"{name.lower()}.c"
        includes = [str(tree / "common"), str(tree / name)]
        report = c2gpu.analyze(str(src), include_dirs=includes, gpu="h100-sxm", run_cpu=False)
        blocked += sum(n.verdict_class == "not-portable" for n in report.nests)
        for nest, flag in ((n, f) for n in report.nests for f in n.data["flags"] if f["code"] == "unblocking-edit"):
            offered += 1
            fix = Fix(flag["fix"]["title"], tuple(Edit(Span(e["file"], e["line"], e["col"], e["end_line"],
                                                            e["end_col"]), e["replacement"])
                                                  for e in flag["fix"]["edits"]))
            text, applied, _ = apply_fixes(src.read_text(), str(src), [fix])
            assert applied
            again = c2gpu.analyze(text, name=str(src), include_dirs=includes, gpu="h100-sxm", run_cpu=False)
            assert again.nest(nest.name).verdict_class != "not-portable", (name, nest.name, flag["message"])
    print(f"\nNPB: {blocked} nests not ported, {offered} with an unblocking edit proven to port them")
