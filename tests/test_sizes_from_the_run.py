"""A nest whose sizes the file does not show (a function called with several sizes, a size main computes) gets
its verdict from the sizes the measured run entered it with: the plan `port` emits priced at each size, weighted
by the executions at that size.  And the whole-program view with the data kept on the device chooses the nests
that win once their copies are shared."""
import json
import re
import subprocess
import sys

import jsonschema
import pytest

import c2gpu
from c2gpu.cpu import measure_file
from c2gpu.frontend import PreprocessOptions
from conftest import ROOT, requires_tool

SCALE = """#define N 1000
static double a[N * N], b[N * N];

void scale(int n, double *restrict x, double *restrict y)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      y[i * n + j] = 2.0 * x[i * n + j];
}

int main(void)
{
  for (int k = 0; k < N * N; k++)
    a[k] = k;
  scale(1000, a, b);
  scale(500, a, b);
  scale(500, a, b);
  return (int)b[7] & 1;
}
"""


def analyze(*args, cwd):
    return subprocess.run([sys.executable, "-m", "c2gpu", "analyze", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


@pytest.fixture
def scale_c(tmp_path, monkeypatch):
    monkeypatch.setenv("C2GPU_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "scale.c"
    src.write_text(SCALE)
    return src


@requires_tool("cc")
def test_the_run_records_each_tuple_of_sizes_with_its_executions(scale_c):
    t = measure_file(str(scale_c), PreprocessOptions(), ["scale@6"], repeats=2, use_cache=False)["scale@6"]
    assert t.observed_params == {"n": (500, 1000)}
    got = {a.values: a.executions for a in t.sizes}
    assert got == {(("n", 1000),): 1.0, (("n", 500),): 2.0}
    assert sum(a.total_s for a in t.sizes) == pytest.approx(t.total_median_s, rel=0.5)
    assert t.sizes[0].total_s >= t.sizes[1].total_s           # largest CPU time first


@requires_tool("cc")
def test_a_nest_sized_by_its_calls_is_priced_at_each_size_it_ran(scale_c, tmp_path):
    report = c2gpu.analyze(scale_c, gpu="h100-sxm")
    nest = {n.name: n for n in report.nests}["scale@6"]
    assert nest.verdict_class in ("port", "port-if-resident", "keep-on-cpu"), nest.reason
    v = nest.data["verdict"]
    sizes = {tuple(sorted(s["values"].items())): s for s in v["at_sizes"]}
    assert set(sizes) == {(("n", 1000),), (("n", 500),)}
    assert [s["executions_per_run"] for s in v["at_sizes"]] == [1.0, 2.0]
    # the verdict's times are the averages over a run's executions of the per-size times
    runs = sum(s["executions_per_run"] for s in v["at_sizes"])
    assert v["gpu_seconds"]["total"] * runs == pytest.approx(sum(s["gpu_s_per_run"] for s in v["at_sizes"]))
    assert v["cpu_seconds"] * runs == pytest.approx(sum(s["cpu_s_per_run"] for s in v["at_sizes"]))
    # one truth: the kernels priced at n = 1000 are those the performance pass predicts when n = 1000 is given
    # with the plan's own mapping and block
    (kernel,) = nest.kernels
    bx, by = kernel.block[:2]
    doc = json.loads(analyze(scale_c, "--gpu", "h100-sxm", "--no-run", "--param", "n=1000", "--map", "i,j",
                             "--block", f"{bx}x{by}", "--shared-memory", "off", "--format", "json",
                             cwd=tmp_path).stdout)
    alone = doc["files"][0]["nests"][0]["verdict"]["gpu_seconds"]["total"]
    assert sizes[(("n", 1000),)]["gpu_s_per_run"] == pytest.approx(alone, rel=1e-9)
    # the whole program counts every execution at its own size
    share = {r.name: r for r in report.program.shares}["scale@6"]
    assert share.gpu_s == pytest.approx(sum(s["gpu_s_per_run"] for s in v["at_sizes"]))


@requires_tool("cc")
def test_the_report_shows_each_size_and_asks_for_none(scale_c, tmp_path):
    r = analyze(scale_c, "--gpu", "h100-sxm", "--runs", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    table = r.stdout.split("\nscale@6  ")[1]
    assert re.search(r"^  sizes +n = 1,000: 1 per run, CPU \S+ \S+ -> GPU \S+ \S+ per run\n +n = 500: 2 per run",
                     table, re.M), table
    assert "kernel time   c2gpu_scale_6_k0" in table and "per launch at n = 1,000" in table
    assert "need values" not in table and "--param" not in table
    doc = json.loads(analyze(scale_c, "--gpu", "h100-sxm", "--runs", "1", "--format", "json", cwd=tmp_path).stdout)
    jsonschema.validate(doc, json.loads((ROOT / "c2gpu" / "schemas" / "analysis.schema.json").read_text()))


def test_without_a_run_the_sizes_are_still_asked_for(scale_c, tmp_path):
    r = analyze(scale_c, "--gpu", "h100-sxm", "--no-run", cwd=tmp_path)
    assert re.search(r"NO VERDICT: give n a value \(--param n=VALUE\)", r.stdout), r.stdout
    assert "  sizes " not in r.stdout


def test_data_kept_on_the_device_adds_the_nests_whose_copies_it_shares():
    from c2gpu.perf.predict import Transfer
    from c2gpu.report.program_view import _resident_choice

    time_of = lambda nbytes: nbytes / 100   # noqa: E731 - a transfer-time function easy to add up by hand
    pieces = {"a": [(0.1, 1, [Transfer("x", "out", 80.0, 0.8, offset=0.0)])],          # a writes x
              "b": [(0.1, 1, [Transfer("x", "in", 80.0, 0.8, offset=0.0), Transfer("y", "out", 8.0, 0.08,
                                                                                offset=0.0)])]}  # b reads x
    arrays = {"a": {"x"}, "b": {"x", "y"}}
    cpu = {"a": 1.0, "b": 1.0}
    # alone, a saves 0.1 and b 0.02; together x stays on the device: 2 - (0.2 + 0.8 + 0.08)
    chosen, after, copies = _resident_choice([], ["a", "b"], pieces, arrays, cpu, 10.0, time_of)
    assert chosen == ("a", "b") and after == pytest.approx(10.0 - 2.0 + 0.2 + 0.8 + 0.08)
    # the copies then: x goes out after a, its last writer, y after b; nothing goes in
    assert {(c.array, c.direction, c.nest, c.each_execution) for c in copies} == {
        ("x", "out", "a", False), ("y", "out", "b", False)}
    # a nest left on the CPU that touches x keeps every copy of x: only a's small gain is left... and b's
    chosen, after, copies = _resident_choice([], ["a", "b"], pieces, {**arrays, "c": {"x"}}, cpu, 10.0, time_of)
    assert after == pytest.approx(10.0 - 2.0 + 0.2 + 0.8 + 0.8 + 0.08)
    assert {(c.array, c.direction, c.nest, c.each_execution) for c in copies} == {
        ("x", "out", "a", True), ("x", "in", "b", True), ("y", "out", "b", False)}
    # nothing that wins: nothing chosen
    assert _resident_choice([], ["a"], pieces, arrays, {"a": 0.5}, 10.0, time_of) == ((), None, [])
