"""Porting testdata: what is ported or refused (and why), nvcc compiles every output, verify passes.

The verify runs are the tests that count: they execute the emitted kernels on
the CPU execution layer and compare every array the ported nests write with
the original program.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions
from c2gpu.codegen.nvcc import compile_cuda, parse_ptxas
from c2gpu.drivers.port import analyse_for_port, host_name_for, port_file
from c2gpu.drivers.verify import verify

from conftest import TESTDATA, requires_tool, sweep

PIPELINE = ["normalize", "dependence", "reorder", "mapping", "plan"]
POLY = str(TESTDATA / "polybench")

# file -> (defines for a quick run, mapping options)
PROGRAMS = {
    "saxpy.c": ({"N": "5000"}, {}),
    "vecadd.c": ({"N": "5000"}, {"assume_no_alias": True}),
    "dot.c": ({"N": "5000"}, {}),
    "matmul.c": ({"N": "70"}, {}),
    "matmul_ptr.c": ({"N": "70"}, {"assume_no_alias": True}),
    "transpose.c": ({"ROWS": "67", "COLS": "45"}, {}),
    "convolution.c": ({"H": "40", "W": "37"}, {}),
    "jacobi2d.c": ({"N": "50", "TSTEPS": "4"}, {}),
    "gemv.c": ({"N": "300"}, {}),
    "histogram.c": ({"N": "5000"}, {}),
    "syrk.c": ({"N": "45", "M": "33"}, {}),
    "nbody.c": ({"NBODIES": "300"}, {}),
    "decrementing.c": ({"N": "101"}, {}),
    "dist2.c": ({"N": "500", "M": "40"}, {}),
    "reductions.c": ({}, {}),
    "while_loop.c": ({"N": "50"}, {}),
    "selected.c": ({}, {}),
    "gauss_seidel.c": ({"N": "30", "TSTEPS": "2"}, {}),
    "external_call.c": ({"N": "500"}, {}),
    "prefix_sum.c": ({"N": "500"}, {}),
    "may_alias.c": ({"N": "500"}, {}),
    "polybench/gemm.c": ({"MINI_DATASET": "1"}, {"assume_no_alias": True}),
    "polybench/atax.c": ({"MINI_DATASET": "1"}, {"assume_no_alias": True}),
    "validation/gemm.c": ({"NI": "40", "NJ": "36", "NK": "30"}, {"assume_no_alias": True}),
    "validation/2mm.c": ({"NI": "30", "NJ": "26", "NK": "22", "NL": "18"}, {"assume_no_alias": True}),
    "validation/syrk.c": ({"NI": "30", "NJ": "20"}, {"assume_no_alias": True}),
    "validation/convolution-2d.c": ({"NI": "50", "NJ": "45"}, {"assume_no_alias": True}),
    "validation/jacobi-2d-imper.c": ({"N": "40", "TSTEPS": "3"}, {"assume_no_alias": True}),
    "validation/fdtd-2d.c": ({"NX": "30", "NY": "40", "TMAX": "5"}, {"assume_no_alias": True}),
    "validation/gesummv.c": ({"N": "100"}, {"assume_no_alias": True}),
}

# kernel nests (not main's init loops) and whether they are ported; refusals give (line, reason fragment)
EXPECTED = {
    "saxpy.c": {"saxpy@14": True},
    "vecadd.c": {"vecadd@15": True},
    "dot.c": {"dot@15": True},
    "matmul.c": {"matmul@16": True},
    "matmul_ptr.c": {"matmul@15": True},
    "transpose.c": {"transpose@21": True},
    "convolution.c": {"convolve@28": True},
    "jacobi2d.c": {"jacobi2d@19": True},
    "gemv.c": {"gemv@21": True},
    "histogram.c": {"histogram@20": True, "histogram@22": True},      # atomics (tests/test_scatter.py)
    "syrk.c": {"syrk@21": True},
    "nbody.c": {"accelerations@20": True},
    "dist2.c": {"recur2@24": (24, "carries a flow dependence on a: a[i - 2] (line 25) reads the element of a written "
                                  "by a[i] (line 25) 2 iterations earlier, distance 2"),
                "row_recurrence@31": True},
    "reductions.c": {"max_if@24": True, "max_fmaxf@34": True, "min_if@43": True, "count_above@62": True,
                     "gesummv_like@71": True, "product@53": (53, "reduction p *= over 'i' (line 54)")},
    "while_loop.c": {"relax@32": True, "relax@34": True},
    "gauss_seidel.c": {"gauss_seidel@20": True},           # a wavefront: fronts i + j (tests/test_wavefront.py)
    "external_call.c": {"sample_all@20": (20, "call to 'sensor_read'")},
    "prefix_sum.c": {"prefix_sum@15": (15, "carries a flow dependence on out: out[i - 1] (line 16)")},
    "may_alias.c": {"shift_add@17": (17, "pointer parameters 'dst' and 'src' may alias")},
    "polybench/gemm.c": {"kernel_gemm@92": True},
    "validation/2mm.c": {"mm2@31": True, "mm2@38": True},
    "validation/fdtd-2d.c": {"fdtd2d@26": True},
}

# what nvcc and verify check in the default run: one program per feature (scalar reductions, 2-D grid with
# per-thread accumulation, transposed access, time loop, partial port, while loops, PolyBench headers, several
# kernels in a time loop); -m slow: the others
QUICK = {"saxpy.c", "matmul.c", "transpose.c", "jacobi2d.c", "histogram.c", "reductions.c", "while_loop.c",
         "polybench/gemm.c", "validation/fdtd-2d.c"}


def _options(name):
    defines, opts = PROGRAMS[name]
    return PreprocessOptions(defines=tuple(defines.items()), include_dirs=(POLY,)), opts


def _manager(opts):
    return make_manager(PIPELINE, dict(opts))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_ported_or_refused_with_reason(name):
    options, opts = _options(name)
    _, outcomes = analyse_for_port(str(TESTDATA / name), options, _manager(opts))
    by_name = {o.nest.name: o for o in outcomes}
    for nest, want in EXPECTED[name].items():
        o = by_name[nest]
        if want is True:
            assert o.ported, f"{nest}: {o.reason}"
        else:
            line, fragment = want
            assert not o.ported
            assert f"at line {line}" in o.reason and fragment in o.reason, o.reason


@requires_tool("nvcc")
@pytest.mark.parametrize("name", sweep(sorted(PROGRAMS), QUICK))
def test_port_compiles_with_nvcc(tmp_path, name):
    options, opts = _options(name)
    out = tmp_path / (Path(name).stem + ".cu")
    res = port_file(str(TESTDATA / name), options, _manager(opts), str(out))
    out.write_text(res.text)
    nv = compile_cuda(str(out), defines=options.defines, include_dirs=options.include_dirs)
    assert nv is not None and nv.ok, nv.stderr if nv else "nvcc missing"
    names = {k.name for o in res.ported for k in o.code.kernels}
    assert names == {k.name for k in nv.kernels}          # ptxas saw every emitted kernel
    assert all(k.registers > 0 for k in nv.kernels)
    if res.host_text is not None:                          # split port: the C side compiles with cc
        host = tmp_path / Path(host_name_for(str(out))).name
        host.write_text(res.host_text)
        cc = subprocess.run(["cc", "-c", "-w", *[f"-D{k}={v}" for k, v in options.defines], f"-I{POLY}",
                             str(host), "-o", str(tmp_path / "host.o")], capture_output=True, text=True)
        assert cc.returncode == 0, cc.stderr


@requires_tool("g++")
@pytest.mark.parametrize("name", sweep(sorted(PROGRAMS), QUICK))
def test_verify_passes(name):
    options, opts = _options(name)
    res = verify(str(TESTDATA / name), options, _manager(opts))
    assert res.ok, res.message
    assert res.records > 0


def test_port_keeps_user_text_outside_nests(tmp_path):
    src = TESTDATA / "jacobi2d.c"
    out = tmp_path / "j.cu"
    res = port_file(str(src), PreprocessOptions(), _manager({}), str(out))
    text = res.text
    original = src.read_text().splitlines()
    # every line outside the ported nests appears verbatim, in order
    spans = [(o.nest.loc.line, o.nest.loc.line + 30) for o in res.ported]
    nest_lines = set()
    for o in res.ported:
        from c2gpu.frontend.source import for_span
        s = src.read_text()
        a, b = for_span(s, o.nest.loc.line, o.nest.loc.col)
        nest_lines |= set(range(s.count("\n", 0, a) + 1, s.count("\n", 0, b) + 2))
    pos = 0
    for no, line in enumerate(original, 1):
        if no in nest_lines:
            continue
        found = text.find(line, pos)
        assert found >= 0, f"line {no} of the original is missing: {line!r}"
        pos = found
    assert "#ifndef N" in text and "/* jacobi2d.c" in text       # macros and comments kept
    assert text.count("c2gpu: ported nest") == len(res.ported)


def test_refused_nest_keeps_code_with_comment(tmp_path):
    res = port_file(str(TESTDATA / "prefix_sum.c"), PreprocessOptions(), _manager({}), str(tmp_path / "p.cu"))
    assert re.search(r"/\* c2gpu: not portable: loop 'i' at line 15 cannot run in parallel: .*\*/ for \(i = 1; i < n; i\+\+\)",
                     res.text)


def test_time_loop_stays_on_host_with_data_resident(tmp_path):
    res = port_file(str(TESTDATA / "jacobi2d.c"), PreprocessOptions(), _manager({}), str(tmp_path / "j.cu"))
    (o,) = [o for o in res.ported if o.nest.name == "jacobi2d@19"]
    wrapper = o.code.wrapper
    loop_at = wrapper.index("for (t = 0; t < 20; t++)")
    # copies happen once, outside the time loop; two launches inside it
    assert wrapper.count("cudaMemcpyHostToDevice") == 2 and wrapper.index("cudaMemcpyHostToDevice") < loop_at
    assert wrapper.count("<<<") == 2 and wrapper.index("<<<") > loop_at
    assert wrapper.index("cudaMemcpyDeviceToHost") > wrapper.rindex("<<<")


def test_copies_only_what_is_read_and_written(tmp_path):
    res = port_file(str(TESTDATA / "jacobi2d.c"), PreprocessOptions(), _manager({}), str(tmp_path / "j.cu"))
    (o,) = [o for o in res.ported if o.nest.name == "jacobi2d@19"]
    arrays = {a.name: a for a in o.code.arrays}
    # A is read everywhere (rows 0..511), written only in the interior; B is written only in the interior
    assert tuple(map(str, arrays["A"].copy_in)) == ("0", "262144")
    assert tuple(map(str, arrays["A"].copy_out)) == ("513", "261118")     # rows 1..510, columns 1..510 as one flat range
    assert arrays["B"].copy_in is not None                  # its boundary must survive the copy-out


def test_x_dimension_goes_to_the_coalesced_loop(tmp_path):
    res = port_file(str(TESTDATA / "matmul.c"), PreprocessOptions(), _manager({}), str(tmp_path / "m.cu"))
    (o,) = [o for o in res.ported if o.nest.name == "matmul@16"]
    (k,) = o.plan.kernels()
    assert [(m.c_var, m.dim) for m in k.loops] == [("i", "y"), ("j", "x")]
    assert k.block == (32, 8, 1)


def test_user_overrides_map_and_block(tmp_path):
    mgr = _manager({"map": ["i"], "block": (64,)})
    res = port_file(str(TESTDATA / "matmul.c"), PreprocessOptions(), mgr, str(tmp_path / "m.cu"))
    (o,) = [o for o in res.ported if o.nest.name == "matmul@16"]
    (k,) = o.plan.kernels()
    assert [(m.c_var, m.dim) for m in k.loops] == [("i", "x")] and k.block == (64, 1, 1)
    assert "c2gpu_block(64, 1, 1)" in o.code.wrapper


def test_map_override_of_sequential_loop_is_refused(tmp_path):
    _, outcomes = analyse_for_port(str(TESTDATA / "prefix_sum.c"), PreprocessOptions(), _manager({"map": ["i"]}))
    (o,) = [o for o in outcomes if o.nest.name == "prefix_sum@15"]
    assert not o.ported and "--map asks for loop 'i' (line 15)" in o.reason


def test_cli_port_writes_file_and_reports(tmp_path):
    out = tmp_path / "dot.cu"
    r = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(TESTDATA / "dot.c"), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "reduction of sum by block tree and atomics" in r.stderr
    assert "floating-point sums across threads are reassociated" in r.stderr
    assert f"wrote {out}: 2 of 2 nests ported" in r.stderr     # main's loop too: a and b are two mallocs
    assert "atomicAdd(c2gpu_sum_result" in out.read_text()


def test_cli_verify_exit_codes(tmp_path):
    r = subprocess.run([sys.executable, "-m", "c2gpu", "verify", str(TESTDATA / "saxpy.c"), "-D", "N=1000"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("verify: PASS"), r.stdout + r.stderr
    src = tmp_path / "scan.c"
    src.write_text("float a[100];\nint main(void) {\n  for (int i = 1; i < 100; i++) a[i] += a[i - 1];\n  return 0;\n}\n")
    r = subprocess.run([sys.executable, "-m", "c2gpu", "verify", str(src)], capture_output=True, text=True)
    assert r.returncode == 3 and "nothing to verify" in r.stdout


def test_parse_ptxas():
    text = """ptxas info    : Compiling entry function '_Z18c2gpu_matmul_16_k0PKfS0_Pf' for 'sm_80'
ptxas info    : Function properties for _Z18c2gpu_matmul_16_k0PKfS0_Pf
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, 2048 bytes smem, 376 bytes cmem[0]
"""
    (k,) = parse_ptxas(text)
    assert (k.name, k.registers, k.spill_stores, k.spill_loads, k.shared_bytes) == ("c2gpu_matmul_16_k0", 40, 4, 12, 2048)


# --------------------------------------------------------------------------- emit: kernels C code links with

EMIT_CALLER = """#include "kernels.h"
float A[256][256], B[256][256], C[256][256];
int main(void)
{
    int i, j, k;
    c2gpu_matmul_16(&C[0][0], &A[0][0], &B[0][0], &i, &j, &k);
    return 0;
}
"""


def _emit(tmp_path, capsys):
    from c2gpu.drivers.cli import main
    assert main(["emit", str(TESTDATA / "matmul.c"), "-D", "N=256", "-o", str(tmp_path / "kernels.cu")]) == 0
    capsys.readouterr()
    return (tmp_path / "kernels.cu").read_text(), (tmp_path / "kernels.h").read_text()


def test_emit_writes_a_c_header_of_extern_c_wrappers(tmp_path, capsys):
    cu, h = _emit(tmp_path, capsys)
    defined = re.findall(r'^extern "C" (void c2gpu_\w+\(.*\))$', cu, re.M)
    declared = re.findall(r"^(void c2gpu_\w+\(.*\));$", h, re.M)
    assert len(defined) == 3 and declared == defined          # every wrapper, as defined
    assert '#include "kernels.h"' in cu                         # nvcc checks the header against the definitions
    assert h.index("#ifndef C2GPU_KERNELS_H_") < h.index("#define C2GPU_KERNELS_H_") < h.index('extern "C" {')
    assert h.count("#ifdef __cplusplus") == 2 and h.rstrip().endswith("#endif /* C2GPU_KERNELS_H_ */")
    (tmp_path / "main.c").write_text(EMIT_CALLER)
    cc = subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-c", "main.c", "-o", "main.o"], cwd=tmp_path,
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr


@requires_tool("nvcc")
def test_emit_output_links_from_c(tmp_path, capsys):
    """emit's .cu compiled by nvcc and a C file that includes its header compiled by cc link into a program
    (linking needs no GPU)."""
    _emit(tmp_path, capsys)
    (tmp_path / "main.c").write_text(EMIT_CALLER)
    steps = [["cc", "-std=c99", "-c", "main.c", "-o", "main.o"],
             ["nvcc", "-arch=sm_80", "-c", "kernels.cu", "-o", "kernels.o"],
             ["nvcc", "main.o", "kernels.o", "-o", "prog"]]
    for argv in steps:
        r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, f"{' '.join(argv)}: {r.stderr}"
    assert (tmp_path / "prog").exists()
