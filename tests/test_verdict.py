"""The porting verdict: classes, speedups, break-even sizes, recommendations."""
import json

import pytest

from c2gpu.drivers.cli import main
from c2gpu.report.verdict import KEEP, PORT, RESIDENT, BreakEven, decide, find_break_even

from conftest import TESTDATA


def test_decide_classes():
    # compute-heavy: 10 ms on the CPU, 1 ms in all on the GPU
    v = decide("n", "a100", "gpuperf", 10e-3, "measured", "", 0.2e-3, 10e-6, 0.79e-3, 0.15, False)
    assert v.verdict == PORT and v.speedup == pytest.approx(10.0) and v.bottleneck.startswith("kernel execution")
    # transfer-bound: kernels 0.1 ms beat 1 ms of CPU, transfers of 5 ms do not
    v = decide("n", "a100", "gpuperf", 1e-3, "measured", "", 5e-3, 10e-6, 0.1e-3, 0.15, False)
    assert v.verdict == RESIDENT and v.kernel_speedup > 1 > v.speedup and v.bottleneck == "host-device transfers"
    # tiny: 2 us on the CPU, a launch alone costs 10 us
    v = decide("n", "a100", "gpuperf", 2e-6, "measured", "", 1e-6, 10e-6, 1e-6, 0.15, False)
    assert v.verdict == KEEP and v.bottleneck == "kernel launches"
    # context creation counts only when asked
    v = decide("n", "a100", "gpuperf", 10e-3, "measured", "", 0, 10e-6, 1e-3, 0.15, True)
    assert v.verdict == KEEP and v.total_gpu_s == pytest.approx(0.15101)
    # a nest that ran too briefly for the clock (0 once its reads are taken off; NPB IS's rank@385 under load):
    # kept on the CPU, with no speedup figure; an unmeasured one has no verdict
    v = decide("n", "a100", "gpuperf", 0.0, "measured", "", 1e-6, 10e-6, 1e-6, 0.15, False)
    assert v.verdict == KEEP and v.speedup is None and "too briefly on the CPU for the clock" in v.reason
    assert decide("n", "a100", "gpuperf", None, "none", "", 1e-6, 10e-6, 1e-6, 0.15, False).verdict != KEEP


def test_reasons_write_times_and_speedups_like_every_report():
    v = decide("n", "a100", "gpuperf", 10e-3, "measured", "", 0.2e-3, 10e-6, 0.79e-3, 0.15, False)
    assert v.reason.startswith("the GPU takes 1 ms in all against 10 ms on the CPU (10x faster end to end;")
    v = decide("n", "a100", "gpuperf", 1e-3, "measured", "", 5e-3, 10e-6, 0.1e-3, 0.15, False)
    assert v.reason == ("the kernels take 110 µs against 1 ms on the CPU, but moving the data costs 5 ms "
                        "(98% of the GPU time)")
    v = decide("n", "a100", "gpuperf", 10e-3, "measured", "", 0, 10e-6, 1e-3, 0.15, True)
    assert v.reason == ("creating the CUDA context (150 ms) costs more than the whole CPU time (10 ms); in a "
                        "program that already uses the GPU the kernels would be 9.9x faster")
    assert BreakEven("N", 12.5, 1000, (2, 65536)).sentence("a100") == "12.5x faster on the GPU when N >= 1,000 on a100"


def test_break_even_bisection_on_a_monotone_model():
    # GPU: 20 us + n ns; CPU: n^2 ns  -> speedup n^2 / (20000 + n), crosses 1 between 141 and 142
    def ev(n):
        return 20e-6 + n * 1e-9, n * n * 1e-9
    be = find_break_even(ev, "N", 1024)
    assert be.value == 142
    assert be.below == (141, pytest.approx(141 ** 2 / (20000 + 141)))
    assert be.at[1] >= 1.0 > be.below[1]
    # n^2 / (20000 + n) >= 10  <=>  n >= (10 + sqrt(100 + 800000)) / 2 = 452.3
    assert find_break_even(ev, "N", 1024, target=10.0).value == 453
    assert be.sentence("a100") == "worth porting when N >= 142 on a100"


def test_break_even_none_when_never_reached():
    be = find_break_even(lambda n: (1.0, 1e-3), "N", 64)
    assert be.value is None and "not worth porting" in be.sentence("a100")


def _json(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def _verdicts(doc):
    return {n["name"]: n["verdict"] for f in doc["files"] for n in f["nests"]}


def test_verdict_classes_end_to_end(capsys):
    # static CPU estimate (--no-run) keeps this deterministic
    tiny = _verdicts(_json(capsys, "analyze", "--gpu", "a100", "--no-run", "--no-break-even", "--format", "json",
                           "--param", "n=64", str(TESTDATA / "saxpy.c"), "-D", "N=64"))
    assert tiny["saxpy@14"]["verdict"] == KEEP
    assert tiny["saxpy@14"]["cpu"]["source"] == "static estimate" and "--no-run" in tiny["saxpy@14"]["cpu"]["note"]
    # streaming over PCIe 3 (V100, 12 GB/s): the kernel wins, copying 3 x 64 MB loses
    big = _verdicts(_json(capsys, "analyze", "--gpu", "v100", "--no-run", "--no-break-even", "--format", "json",
                          "--param", "n=16000000", str(TESTDATA / "saxpy.c")))
    assert big["saxpy@14"]["verdict"] == RESIDENT
    assert big["saxpy@14"]["bottleneck"] == "host-device transfers"
    heavy = _verdicts(_json(capsys, "analyze", "--gpu", "a100", "--no-run", "--no-break-even", "--format", "json",
                            str(TESTDATA / "matmul.c"), "-D", "N=1024"))
    assert heavy["matmul@16"]["verdict"] == PORT and heavy["matmul@16"]["speedup"] > 10
    refused = _verdicts(_json(capsys, "analyze", "--gpu", "a100", "--no-run", "--no-break-even", "--format", "json",
                              str(TESTDATA / "prefix_sum.c")))
    assert refused["prefix_sum@15"]["ported"] is False and refused["prefix_sum@15"]["verdict"] == "not portable"
    assert "carries a flow dependence" in refused["prefix_sum@15"]["reason"]


@pytest.mark.slow   # 24 s of the default run: the advisor re-runs the pipeline at every probed size
def test_break_even_checked_on_both_sides(capsys):
    doc = _json(capsys, "analyze", "--gpu", "h100-sxm", "--no-run", "--break-even", "--format", "json",
                str(TESTDATA / "matmul.c"), "-D", "N=512")
    v = _verdicts(doc)["matmul@16"]
    (be,) = v["break_even"]
    assert be["param"] == "N" and be["target_speedup"] == 1.0 and be["value"] is not None
    below_n, below_s = be["below"]
    at_n, at_s = be["at"]
    assert below_n == be["value"] - 1 and at_n == be["value"]
    assert below_s < 1.0 <= at_s
    # the model on both sides, evaluated again independently
    for n, want_port in ((below_n, False), (at_n, True)):
        d = _verdicts(_json(capsys, "analyze", "--gpu", "h100-sxm", "--no-run", "--no-break-even", "--format", "json",
                            "--block", "32x8", str(TESTDATA / "matmul.c"), "-D", f"N={n}"))
        assert (d["matmul@16"]["speedup"] >= 1.0) == want_port, (n, d["matmul@16"]["speedup"])


def test_measured_baseline_in_report(capsys):
    v = _verdicts(_json(capsys, "analyze", "--gpu", "a100", "--no-break-even", "--runs", "1", "--format", "json",
                        str(TESTDATA / "matmul.c"), "-D", "N=128"))["matmul@16"]
    assert v["cpu"]["source"] == "measured" and v["cpu"]["seconds"] > 0
    assert v["cpu"]["flags"][0] == "-O2" and v["cpu"]["compiler_version"]


def test_terminal_table(capsys):
    code = main(["analyze", "--gpu", "a100", "--no-run", "--no-break-even", str(TESTDATA / "transpose.c")])
    out = capsys.readouterr().out
    assert code == 0
    block = out.split("transpose@21", 1)[1].split("\nmain@", 1)[0]
    for row in ("verdict", "CPU", "GPU", "speedup", "bottleneck"):
        assert f"\n  {row:<13} " in block
    assert "\033[" not in out               # no colour when stdout is not a terminal
