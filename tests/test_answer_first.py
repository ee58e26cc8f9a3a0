"""The answer first: `c2gpu analyze FILE` gives the verdict and each loop's dependence verdict for a default GPU,
and never calls a nest portable that `port` refuses."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import c2gpu
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions
from c2gpu.pipeline import PORT
from c2gpu.drivers.port import analyse_for_port
from conftest import TESTDATA, project_programs

VERDICT_CLASSES_WITH_A_PORT = {"port", "port-if-resident", "keep-on-cpu", "no-verdict"}


def run(*args, cwd=None, env=None):
    e = {k: v for k, v in os.environ.items() if k != "C2GPU_GPU"}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "c2gpu", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=e, timeout=300)


# --------------------------------------------------------------------------- one truth: analyze agrees with port

@pytest.mark.parametrize("path", sorted(p.relative_to(TESTDATA).as_posix() for p in project_programs()))
def test_analyze_calls_a_nest_portable_exactly_when_port_emits_it(path):
    src = TESTDATA / path
    report = c2gpu.analyze(src, gpu="h100-sxm", run_cpu=False)
    _, outcomes = analyse_for_port(str(src), PreprocessOptions(), make_manager(list(PORT.passes)),
                                   warn=lambda w: None)
    emitted = {o.nest.name: o.ported for o in outcomes}
    assert [n.name for n in report.nests] == list(emitted)
    for nest in report.nests:
        assert nest.ported == emitted[nest.name], (nest.name, nest.refusal)
        assert (nest.verdict_class in VERDICT_CLASSES_WITH_A_PORT) == emitted[nest.name], \
            (nest.name, nest.verdict_class, nest.reason)
        if not emitted[nest.name]:
            assert nest.verdict_class == "not-portable" and nest.speedup is None


# --------------------------------------------------------------------------- the default GPU and where it comes from

def test_first_command_prints_the_verdict_and_each_loops_verdict(tmp_path):
    r = run("analyze", TESTDATA / "matmul.c", "--no-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "predicted on h100-sxm" in out and "the default GPU" in out
    table = out[out.index("\nmatmul@16  "):out.index("\nmain@29  ")]
    assert re.search(r"^  verdict +PORT: ", table, re.M)
    assert re.search(r"^  loops +i +line 16 +parallel -> grid y$", table, re.M)
    assert re.search(r"^ +j +line 17 +parallel -> grid x$", table, re.M)
    assert re.search(r"^ +k +line 19 +reduction C\[i\]\[j\] \+= over 'k' \(line 20\) -> in each thread$", table, re.M)
    assert "for (k = 0" not in out          # the IR is behind --details
    assert "for (k = 0; k < 256; k++)" in run("analyze", TESTDATA / "matmul.c", "--no-run", "--details",
                                               cwd=tmp_path).stdout


def test_gpu_from_the_environment_and_the_settings_files(tmp_path):
    assert "predicted on a100" in run("analyze", TESTDATA / "saxpy.c", "--no-run", cwd=tmp_path,
                                      env={"C2GPU_GPU": "a100"}).stdout
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.c2gpu]\ngpu = "l4"\n')
    r = run("analyze", TESTDATA / "saxpy.c", "--no-run", cwd=project / "src")
    assert f"predicted on l4 (NVIDIA L4 (AD104), from {project / 'pyproject.toml'})" in r.stdout, r.stdout[:300]
    (project / "c2gpu.toml").write_text('gpu = "v100"\n')                 # c2gpu.toml wins in one directory
    assert "predicted on v100" in run("analyze", TESTDATA / "saxpy.c", "--no-run", cwd=project / "src").stdout
    # the command line wins over both, the environment over the files
    assert "predicted on a10 " in run("analyze", TESTDATA / "saxpy.c", "--no-run", "--gpu", "a10",
                                      cwd=project, env={"C2GPU_GPU": "a100"}).stdout
    assert "predicted on a100" in run("analyze", TESTDATA / "saxpy.c", "--no-run", cwd=project,
                                      env={"C2GPU_GPU": "a100"}).stdout
    (project / "c2gpu.toml").write_text('gpu = "no-such-gpu"\n')
    r = run("analyze", TESTDATA / "saxpy.c", "--no-run", cwd=project)
    assert r.returncode == 2 and "no-such-gpu" in r.stderr and "Traceback" not in r.stderr


def test_no_gpu_still_gives_each_loops_verdict_in_text_and_json(tmp_path):
    r = run("analyze", TESTDATA / "prefix_sum.c", "--gpu", "none", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^  verdict +NOT PORTABLE: loop 'i' at line 15 cannot run in parallel", r.stdout, re.M)
    assert re.search(r"^  loops +i +line 15 +carries a flow dependence on out: out\[i - 1\] \(line 16\)", r.stdout, re.M)
    assert re.search(r"^  verdict +NO VERDICT: no GPU chosen", r.stdout, re.M)
    doc = json.loads(run("analyze", TESTDATA / "prefix_sum.c", "--gpu", "none", "--format", "json").stdout)
    loops = {n["name"]: n["loop_verdicts"] for n in doc["files"][0]["nests"]}
    assert loops["prefix_sum@15"] == [{"var": "i", "line": 15, "status": "carried", "role": "",
                                       "reason": loops["prefix_sum@15"][0]["reason"]}]
    assert "out[i - 1] (line 16)" in loops["prefix_sum@15"][0]["reason"]
    assert loops["main@33"][0]["status"] == "reduction" and loops["main@33"][0]["role"] == "grid x"
    assert "verdict" not in doc["files"][0]["nests"][0]


def test_a_missing_size_is_no_verdict_not_a_refusal(tmp_path):
    src = tmp_path / "s.c"
    src.write_text("void saxpy(int n, float a, float *restrict x, float *restrict y) {\n"
                   "  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];\n}\n")
    r = run("analyze", src, "--no-run", cwd=tmp_path)
    assert re.search(r"^  verdict +NO VERDICT: give n a value \(--param n=VALUE\)", r.stdout, re.M), r.stdout
    assert "NOT PORTABLE" not in r.stdout
    nest = c2gpu.analyze(src, gpu="h100-sxm", run_cpu=False).nests[0]
    assert nest.ported and nest.verdict_class == "no-verdict" and nest.speedup is None
    doc = json.loads(run("analyze", src, "--no-run", "--format", "json", cwd=tmp_path).stdout)
    v = doc["files"][0]["nests"][0]["verdict"]
    assert v["verdict"] == "no verdict" and v["ported"] is True and v["needs"] == ["n"]
    r = run("analyze", src, "--no-run", "--param", "n=1000000", cwd=tmp_path)
    assert re.search(r"^  verdict +(PORT|KEEP|PORT ONLY)", r.stdout, re.M), r.stdout


def test_break_even_only_on_request(tmp_path):
    base = ("analyze", TESTDATA / "saxpy.c", "--gpu", "h100-sxm", "--no-run")
    assert "break-even" not in run(*base, cwd=tmp_path).stdout
    r = run(*base, "--break-even", cwd=tmp_path)
    assert re.search(r"^  break-even +(worth porting when N >= [\d,]+|not worth porting) ", r.stdout, re.M), r.stdout


# --------------------------------------------------------------------------- the whole program

def test_whole_program_view_is_amdahls_law_over_the_measured_program(tmp_path):
    r = run("analyze", TESTDATA / "matmul.c", "--gpu", "h100-sxm", "--runs", "1", cwd=tmp_path,
            env={"C2GPU_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    head = r.stdout.split("\n\n")[0]
    m = re.search(r"whole program: ([\d.]+ [mµn]?s) of CPU time per run \(measured\), (\d+)% of it in the loop "
                  r"nests below", head)
    assert m, head
    shares = [float(x) for x in re.findall(r"^  \S+@\d+ +([\d.]+)% ", head, re.M)]
    assert len(shares) == 3 and 0 < sum(shares) <= 100.5
    assert abs(sum(shares) - int(m.group(2))) <= 1.5
    assert re.search(r"porting matmul@16, main@29, main@37 on h100-sxm: .* for the whole program \(Amdahl's law\)",
                     head)


SIZED_AND_NOT = """
float a[4096], b[4096];

void fill(void)
{
    for (int i = 0; i < 4096; i++)
        a[i] = 2.0f * i;
}

void scale(int n)
{
    for (int i = 0; i < n; i++)
        b[i] = 0.5f * a[i];
}
"""


def test_without_a_measured_program_nests_without_a_time_are_said_to_be_left_out(tmp_path):
    """With --no-run, a nest whose sizes have no value has no time: the whole-program figures are of the other
    nests only, and the view says so instead of "the whole program stays as fast as it is" (NPB BT said that of
    13 nests timed out of 69, its solvers among those left out)."""
    (tmp_path / "two.c").write_text(SIZED_AND_NOT)
    r = run("analyze", "two.c", "--gpu", "h100-sxm", "--no-run", "--html", "two.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    head = r.stdout.split("\n\n")[0]
    assert "whole program: 1 of the 2 loop nests take" in head, head
    assert "the other one has no time and is left out of every figure here (scale@12: give n a value" in head, head
    assert "stays as fast as it is" not in head and "no nest timed is worth porting on its own" in head, head
    page = (tmp_path / "two.html").read_text()
    assert "No loop nest timed is worth porting on its own; the 1 without a time may be." in page
    assert "the other 1 has no time" in page
    # a nest not ported and without a time says why it has none
    r = run("analyze", TESTDATA / "may_alias.c", "--gpu", "h100-sxm", "--no-run", cwd=tmp_path)
    assert "the other one has no time and is left out of every figure here (shift_add@17: static estimate " \
           "impossible: needs a value for n" in r.stdout.split("\n\n")[0], r.stdout[:1500]
    # given the size, both are timed and the view is of the whole program again
    r = run("analyze", "two.c", "--gpu", "h100-sxm", "--no-run", "--param", "n=4096", cwd=tmp_path)
    head = r.stdout.split("\n\n")[0]
    assert "whole program: the loop nests take" in head and "left out" not in head, head


def test_whole_program_arithmetic():
    from c2gpu.report.program_view import WholeProgram, _resident_gpu_s

    def gpu_s(pieces, host, transfer_time_s):
        return _resident_gpu_s([(f"n{k}", *p) for k, p in enumerate(pieces)], host, transfer_time_s)[0]
    from c2gpu.perf.predict import Transfer

    compute = 0.1 + 0.01            # kernel + launches of one execution
    v1 = v2 = compute
    time_of = lambda nbytes: nbytes / 100   # noqa: E731 - a transfer-time function easy to add up by hand
    shared = [Transfer("x", "in", 8.0, 0.1), Transfer("y", "out", 8.0, 0.1)]
    # two nests copying the same arrays: x copied in once; y written by both, out once
    assert gpu_s([(v1, 1, shared), (v2, 1, shared)], set(), time_of) == pytest.approx(
        2 * compute + 0.1 + time_of(8.0))
    # a producer and its consumer: what the first wrote is on the device, the second copies nothing in
    produce = [Transfer("x", "out", 80.0, 0.5)]
    consume = [Transfer("x", "in", 40.0, 0.3, offset=40.0), Transfer("y", "out", 8.0, 0.1)]
    assert gpu_s([(v1, 1, produce), (v2, 3, consume)], set(), time_of) == pytest.approx(
        compute + 3 * compute + time_of(80.0) + time_of(8.0))
    # the consumer reading past what was written: copied in
    wider = [Transfer("x", "in", 40.0, 0.3, offset=60.0)]
    assert gpu_s([(v1, 1, produce), (v2, 1, wider)], set(), time_of) == pytest.approx(
        2 * compute + 0.3 + time_of(80.0))
    # in run order only: the consumer first must copy in
    assert gpu_s([(v2, 1, consume), (v1, 1, produce)], set(), time_of) == pytest.approx(
        2 * compute + 0.3 + time_of(80.0) + time_of(8.0))
    # two writers of disjoint halves: one copy-out of both halves; an unknown start is always copied
    halves = [Transfer("x", "out", 40.0, 0.2, offset=0.0)], [Transfer("x", "out", 40.0, 0.2, offset=40.0)]
    unknown = [Transfer("x", "in", 40.0, 0.3, offset=None)]
    assert gpu_s([(v1, 1, halves[0]), (v1, 1, halves[1]), (v2, 1, unknown)], set(), time_of) == \
        pytest.approx(3 * compute + 0.3 + time_of(80.0))
    # an array a nest left on the CPU touches: every copy, every execution
    assert gpu_s([(v1, 1, produce), (v2, 3, consume)], {"x"}, time_of) == pytest.approx(
        4 * compute + 0.5 + 3 * 0.3 + time_of(8.0))
    # a range whose start is not known: copied at every execution
    assert gpu_s([(v2, 3, unknown)], set(), time_of) == pytest.approx(3 * compute + 3 * 0.3)
    view = WholeProgram(program_s=4.0, nests_s=2.0, after_s=1.0)
    assert view.speedup(view.after_s) == 4.0


def test_run_order_follows_calls_not_the_source(tmp_path):
    from c2gpu.frontend import load_program
    src = tmp_path / "order.c"
    src.write_text("#define N 64\nfloat a[N], b[N], c[N];\n"
                   "void late(void) { for (int i = 0; i < N; i++) c[i] = 3 * b[i]; }\n"       # line 3
                   "void early(void) { for (int i = 0; i < N; i++) b[i] = 2 * a[i]; late(); }\n"  # line 4
                   "void never(void) { for (int i = 0; i < N; i++) a[i] = 0; }\n"          # line 5
                   "int rec(int d) { if (d) rec(d - 1); for (int i = 0; i < N; i++) a[i] += d; return 0; }\n"
                   "int main(void) {\n"
                   "  for (int i = 0; i < N; i++) a[i] = i;\n"                                  # line 8
                   "  early(); rec(2); early();\n"
                   "  return 0;\n}\n")
    program = load_program(str(src))
    assert [n.loc.line for n in program.in_run_order(program.nests)] == [8, 4, 3, 6, 5]
    assert [n.loc.line for n in program.nests] == [3, 4, 5, 6, 8]


def test_whole_program_keeps_matmul_data_on_the_device(tmp_path):
    """matmul.c: main fills A and B (line 29), matmul reads them and writes C (16), main sums C (37).  Kept on
    the device, nothing is copied in: each array goes out once."""
    from c2gpu.model.gpu import load_gpu
    report = c2gpu.analyze(TESTDATA / "matmul.c", gpu="h100-sxm", run_cpu=False)
    w, gpu = report.program, load_gpu("h100-sxm")
    assert set(w.ported) == {"matmul@16", "main@29", "main@37"}
    nests = {n.name: n for n in report.nests}
    seconds = [n.data["verdict"]["gpu_seconds"] for n in nests.values()]
    compute = sum(s["kernels"] + s["launches"] for s in seconds)
    reduction = 2 * gpu.transfer_time_s(8)          # main@37's double sum, in and out
    one_array = gpu.transfer_time_s(256 * 256 * 4)
    ported_cpu = sum(r.cpu_s for r in w.shares)
    assert w.resident_s == pytest.approx(w.base_s - ported_cpu + compute + 3 * one_array + reduction)
    assert w.after_s - w.resident_s == pytest.approx(3 * one_array)      # A and B into matmul, C into main@37
    doc = json.loads(run("analyze", TESTDATA / "matmul.c", "--gpu", "h100-sxm", "--no-run", "--format", "json",
                         cwd=tmp_path).stdout)
    jw = doc["files"][0]["whole_program"]
    assert (jw["after_s"], jw["resident_s"], jw["base_s"]) == pytest.approx((w.after_s, w.resident_s, w.base_s))
    assert [r["name"] for r in jw["nests"]] == [r.name for r in w.shares] and set(jw["ported"]) == set(w.ported)
    assert jw["resident_speedup"] == pytest.approx(w.base_s / w.resident_s)
    # where the copies are: what main@29 fills and matmul writes goes out once, after its last writer
    assert {(c["array"], c["direction"], c["nest"]) for c in jw["resident_copies"]} == {
        ("A", "out", "main@29"), ("B", "out", "main@29"), ("C", "out", "matmul@16"), ("sum", "in", "main@37"),
        ("sum", "out", "main@37")}
    assert sum(c["seconds"] for c in jw["resident_copies"]) == pytest.approx(3 * one_array + reduction)


def test_html_report_leads_with_the_whole_program(tmp_path):
    from c2gpu.report.html import render_html
    report = c2gpu.analyze(TESTDATA / "matmul.c", gpu="h100-sxm", run_cpu=False)
    w = report.program
    port = [n.name for n in report.nests if n.verdict_class == "port"]
    assert "matmul@16" in port and set(w.ported) == set(port)
    ported = [r for r in w.shares if r.name in port]
    assert w.after_s == pytest.approx(w.base_s - sum(r.cpu_s for r in ported) + sum(r.gpu_s for r in ported))
    page = render_html([report])
    assert page.index("Whole program") < page.index("Summary") < page.index('id="nest-0"')
    from c2gpu import units
    assert (f"<b>{units.seconds(w.base_s)} → {units.seconds(w.after_s)}</b> per run, "
            f"<b>{units.speedup(w.speedup(w.after_s))}</b> for the whole program") in page
    # the two bars to one scale: the ported bar's segments add up to the new time's share of the old
    bars = re.findall(r'<div class="wtrack">(.*?)</div></div>', page)
    widths = [sum(float(x) for x in re.findall(r"width:([\d.]+)%", b)) for b in bars]
    assert widths[0] == pytest.approx(100, abs=0.01)
    assert widths[1] == pytest.approx(100 * w.after_s / w.base_s, abs=0.01)


def test_cpu_time_is_taken_at_the_size_the_gpu_is_predicted_for(tmp_path):
    """The program runs saxpy at n = 20,000; --param n=2,000,000 predicts the GPU there, so the measured CPU time
    is scaled to that size (by the static estimate's growth), and the report says how."""
    src = tmp_path / "s.c"
    src.write_text("#include <stdlib.h>\n"
                   "void saxpy(int n, float a, float *restrict x, float *restrict y) {\n"
                   "  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];\n}\n"
                   "int main(void) { int n = 20000; float *x = calloc(n, 4), *y = calloc(n, 4);\n"
                   "  for (int r = 0; r < 5; r++) saxpy(n, 2.0f, x, y); return (int)y[3]; }\n")
    env = {"C2GPU_CACHE_DIR": str(tmp_path / "cache")}
    own = run("analyze", src, "--gpu", "h100-sxm", "--runs", "1", cwd=tmp_path, env=env).stdout
    assert "scaled" not in own and re.search(r"5 executions per run", own), own
    big = run("analyze", src, "--gpu", "h100-sxm", "--runs", "1", "--param", "n=2000000", cwd=tmp_path, env=env)
    m = re.search(r"measured at n = 20,000 \(the program's own size\) and scaled to n = 2,000,000 by the static "
                  r"estimate's growth \(x([\d.]+)\)", big.stdout)
    assert m, big.stdout
    assert 50 < float(m.group(1)) < 1000           # 100 times the elements, cache levels aside


def test_jobs_with_a_gpu_give_the_same_report(tmp_path):
    """Worker processes receive the GPU description (pickled): the report is the same as in one process."""
    files = [TESTDATA / "saxpy.c", TESTDATA / "vecadd.c"]
    one = run("analyze", *files, "--no-run", "--jobs", "1", cwd=tmp_path)
    two = run("analyze", *files, "--no-run", "--jobs", "2", cwd=tmp_path)
    assert one.returncode == two.returncode == 0, two.stderr
    assert one.stdout == two.stdout and "predicted on h100-sxm" in two.stdout


def test_port_worth_ports_exactly_the_nests_analyze_recommends(tmp_path):
    # transpose.c: main@31 and main@38 are PORT; transpose@21 wins only with its data kept on the GPU: --worth
    # leaves it C, with its verdict as the reason
    report = c2gpu.analyze(TESTDATA / "transpose.c", gpu="h100-sxm", run_cpu=False)
    recommended = {n.name for n in report.nests if n.verdict_class == "port"}
    assert recommended == {"main@31", "main@38"}
    out = tmp_path / "t.cu"
    r = run("port", TESTDATA / "transpose.c", "--gpu", "h100-sxm", "--worth", "--no-run", "-o", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ported = set(re.findall(r"note: ported nest (\S+):", r.stderr))
    assert ported == recommended
    assert re.search(r"transpose\.c:21:5: note: left on the CPU \(--worth\): port only if the data stays on the GPU: "
                     r"the kernels take .* \[transpose@21\]", r.stderr), r.stderr
    assert "c2gpu_transpose_21" not in out.read_text() and "c2gpu_main_31_k0" in out.read_text()
    r = run("port", TESTDATA / "transpose.c", "--gpu", "none", "--worth", "-o", out, cwd=tmp_path)
    assert r.returncode == 2 and "--worth needs a GPU" in r.stderr
