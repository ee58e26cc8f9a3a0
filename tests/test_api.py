"""The Python API: c2gpu.analyze(path_or_source, ...) -> Report (issue 6)."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import jsonschema
import pytest

import c2gpu
from c2gpu.drivers.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "c2gpu" / "schemas" / "analysis.schema.json").read_text())

SOURCE = """
#ifndef N
#define N 1000
#endif
float a[N], b[N];
void f(void)
{
    int i;
    for (i = 1; i < N; i++)
        a[i] = a[i - 1] + b[i];
    for (i = 0; i < N; i++)
        b[i] = 2.0f * a[i];
}
"""


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.chdir(ROOT)
    try:
        return c2gpu.analyze("testdata/matmul.c", defines={"N": 64}, gpu="h100-sxm", run_cpu=False, break_even=False)
    finally:
        mp.undo()


def test_exports():
    assert {"analyze", "Report", "NestReport"} <= set(c2gpu.__all__)
    assert c2gpu.Report is c2gpu.drivers.api.Report and callable(c2gpu.analyze)
    with pytest.raises(AttributeError):
        c2gpu.no_such_thing


def test_report_of_a_file(matmul):
    r = matmul
    assert isinstance(r, c2gpu.Report) and r.path == "testdata/matmul.c"
    assert r.gpu == "h100-sxm" and r.gpu_name.startswith("NVIDIA H100")
    assert r.gpu_peaks["dram_gbs"] == pytest.approx(3350) and r.gpu_peaks["fp32_gflops"] > 50_000
    assert [n.name for n in r.nests] == ["matmul@16", "main@29", "main@37"]
    n = r.nest("matmul@16")
    assert r.nest("matmul") is n
    assert (n.location.file, n.location.line, n.location.col) == ("testdata/matmul.c", 16, 5)
    assert str(n.location) == "testdata/matmul.c:16:5"
    assert [(lp.var, lp.status, lp.trip_count, lp.location.line) for lp in n.loops] == \
        [("i", "parallel", "64", 16), ("j", "parallel", "64", 17), ("k", "reduction", "64", 19)]
    assert "C[i][j] += over 'k'" in n.loops[2].reason
    assert n.parallel_loops == ["i", "j", "k"]
    assert n.ported and n.refusal == "" and n.blocking == []
    (k,) = n.kernels
    assert k.name == "c2gpu_matmul_16_k0" and k.grid_loops == {"i": "y", "j": "x"}
    assert "i -> y, j -> x" in n.mapping
    assert set(k.predicted_s) == {"gpuperf", "resios"} and all(t > 0 for t in k.predicted_s.values())
    assert set(n.predicted_s) == {"gpuperf", "resios"}


def test_verdict_numbers_are_consistent(matmul):
    for n in matmul.nests:
        assert n.model == "gpuperf" and n.cpu_source == "static estimate" and n.cpu_s > 0
        g = n.gpu_s
        assert g["total"] == pytest.approx(g["kernels"] + g["launches"] + g["transfers"])
        assert g["total"] == pytest.approx(n.predicted_s["gpuperf"])
        assert n.speedup == pytest.approx(n.cpu_s / g["total"])
        assert n.kernel_speedup == pytest.approx(n.cpu_s / (g["kernels"] + g["launches"]))
        expected = "port" if n.speedup > 1 else "port-if-resident" if n.kernel_speedup > 1 else "keep-on-cpu"
        assert n.verdict_class == expected and n.verdict == n.data["verdict"]["verdict"]
        assert n.reason and n.recommendations == n.data["verdict"]["recommendations"]
        assert n.break_even == []          # break_even=False


def test_cuda_and_shared_memory(matmul):
    n = matmul.nest("matmul@16")
    assert "__global__ void c2gpu_matmul_16_k0(const float *A, const float *B, float *C)" in n.cuda
    assert "static void c2gpu_matmul_16(" in n.cuda          # the host wrapper
    arrays = {d.array for d in n.shared_memory}
    assert arrays <= {"A", "B", "C"} and arrays
    for d in n.shared_memory:
        assert d.size_bytes > 0 and d.kind in ("reuse", "halo", "small array", "store") and d.reason
    # the code is the one the prediction is about: tiles in it exactly when a decision kept one
    assert ("__shared__" in n.cuda) == any(d.taken for d in n.shared_memory)
    assert n.source.splitlines()[0].strip() == "for (i = 0; i < N; i++)"
    assert n.hotspots and all(h.kernel == "c2gpu_matmul_16_k0" for h in n.hotspots)


def test_to_json_is_the_command_line_document(matmul, monkeypatch):
    doc = json.loads(matmul.to_json())
    jsonschema.validate(doc, SCHEMA)
    monkeypatch.chdir(ROOT)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["analyze", "testdata/matmul.c", "-D", "N=64", "--gpu", "h100-sxm", "--no-run", "--no-break-even",
                     "--passes", "normalize,dependence,mapping,shared-memory", "--format", "json"]) == 0
    assert json.loads(buf.getvalue()) == doc


def test_repr(matmul):
    text = repr(matmul)
    assert text.startswith("<Report testdata/matmul.c on h100-sxm: 3 nests (matmul@16: ")
    assert repr(matmul.nests[0]).startswith("<NestReport matmul@16 at testdata/matmul.c:16:5: ")


def test_source_text_and_refused_nest():
    r = c2gpu.analyze(SOURCE, gpu="a100", run_cpu=False, break_even=False)
    assert r.path == "<source>"
    first, second = r.nests
    assert first.name == "f@9" and first.location == c2gpu.Location("<source>", 9, 5)
    assert not first.ported and first.verdict_class == "not-portable" and first.cuda is None
    assert "carries a flow dependence on a" in first.refusal
    assert first.loops[0].status == "carried" and not first.loops[0].parallel
    lines = [b.location.line for b in first.blocking]
    assert lines[0] == 9 and 10 in lines                    # the loop, then the access a[i - 1] on line 10
    assert all(b.location.file == "<source>" for b in first.blocking)
    assert second.ported and second.verdict_class in ("port", "port-if-resident", "keep-on-cpu")
    assert second.loops[0].status == "parallel"
    assert second.source.splitlines()[0].strip() == "for (i = 0; i < N; i++)"    # the nest's lines, from the text
    text = r.to_json()
    assert "c2gpu-api-" not in text and "source.c" not in text   # no temporary file name leaks
    jsonschema.validate(json.loads(text), SCHEMA)


def test_path_and_source_text_give_the_same_report(monkeypatch):
    """Source text is analysed as given (no temporary file), its locations named by `name`."""
    import tempfile

    def no_temp_file(*args, **kwargs):
        raise AssertionError("source text must not be written to a temporary file")
    monkeypatch.chdir(ROOT)
    options = dict(defines={"N": 64}, gpu="a100", run_cpu=False, break_even=False)
    by_path = c2gpu.analyze("testdata/matmul.c", **options)
    for what in ("mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryDirectory"):
        monkeypatch.setattr(tempfile, what, no_temp_file)
    by_text = c2gpu.analyze((ROOT / "testdata" / "matmul.c").read_text(), name="testdata/matmul.c", **options)
    assert by_text.path == "testdata/matmul.c" and by_text.to_json() == by_path.to_json()
    assert [(n.source, n.cuda, n.mapping) for n in by_text.nests] == [(n.source, n.cuda, n.mapping)
                                                                      for n in by_path.nests]
    assert by_text.nests[0].source.splitlines()[0].strip() == "for (i = 0; i < N; i++)"


def test_source_text_is_timed_on_the_cpu():
    """The CPU baseline builds the text it was given (the compiler's own temporary directory), so source text
    gets a measured time, not the static estimate's "cannot read '<source>'"."""
    r = c2gpu.analyze(SOURCE + "int main(void) { f(); return 0; }\n", gpu="a100", run_cpu=True, break_even=False)
    second = r.nests[1]
    assert second.cpu_source == "measured" and second.cpu_s is not None and second.cpu_s > 0


def test_without_a_gpu_loops_mapping_and_cuda_only():
    r = c2gpu.analyze(SOURCE)
    assert r.gpu is None
    first, second = r.nests
    assert first.verdict_class == "not-portable" and second.verdict is None and second.verdict_class == "no-verdict"
    assert second.predicted_s == {} and second.speedup is None and second.gpu_s == {}
    assert "__global__" in second.cuda and second.kernels[0].grid_loops == {"i": "x"}


def test_defines_as_a_list_and_params(tmp_path):
    r = c2gpu.analyze(ROOT / "testdata" / "matmul_ptr.c", params={"n": 256}, gpu="h100-sxm", run_cpu=False,
                      break_even=False, assume_no_alias=True)
    n = r.nests[0]
    assert n.ported and n.data["performance"]["sizes"] == {"n": 256}
    r2 = c2gpu.analyze(SOURCE, defines=["N=64"])
    assert r2.nests[1].loops[0].trip_count == "64"


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="gpu"):
        c2gpu.analyze(SOURCE, gpu="no-such-gpu")
    with pytest.raises(FileNotFoundError):
        c2gpu.analyze("no/such/file.c")
    with pytest.raises(c2gpu.drivers.api.C2GPUError):
        c2gpu.analyze(tmp_path)          # a directory exists but is not a C file
