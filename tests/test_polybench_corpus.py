"""PolyBench/C 4.2.1 as an external oracle: every port c2gpu makes of a kernel prints the original's dump.

Each kernel is built as written and as c2gpu ports it (split output, the .cu file on the CPU execution
layer, run in forward, reverse and shuffled thread orders with poisoned device memory), both with
-DMINI_DATASET -DPOLYBENCH_DUMP_ARRAYS; the arrays each prints must agree (tests/polybench_corpus.py
says how).  A mismatch is a wrong port.  A kernel where nothing is ported has nothing to compare, so
the test also requires a floor of kernels with a ported nest, measured when the test was written.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

import polybench_corpus as pc
from c2gpu.drivers.cli import main
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.pipeline import PORT
from c2gpu.planning.plan import HostLoop
from conftest import requires_tool, sweep

# Measured on 2026-11-24, per mode: (kernels with a ported nest, kernels whose main computation is
# ported), over all 30 kernels, every other kernel and every third (the default run).  A regression that
# stops porting fails here; more is fine.  Without flags c2gpu ports as much as with --assume-no-alias: the
# whole file shows that main passes each kernel distinct allocations (c2gpu/frontend/objects.py); before
# that, only atax's and bicg's `y[i] = 0` loops were ported without the flag.  lu, ludcmp, durbin and
# gramschmidt port since the code between their kernels runs in one-thread kernels (21 -> 25); atax's
# and bicg's main computations since loop distribution and interchange; cholesky and trisolv since a sum into
# one array element (x[i] -= L[i][j] * x[j] over j) is a reduction across threads: every nest of 27 kernels;
# floyd-warshall, nussinov and seidel-2d since wavefronts (c2gpu/transform/wavefront.py): every nest of all 30.
FLOOR_ALL = {"default": (30, 30), "--assume-no-alias": (30, 30)}
FLOOR_HALF = {"default": (15, 15), "--assume-no-alias": (15, 15)}
FLOOR_THIRD = {"default": (10, 10), "--assume-no-alias": (10, 10)}


def _sweep(kernels, tmp_path) -> list[pc.Outcome]:
    built: dict = {}
    outcomes = []
    for kernel in kernels:
        expected = pc.run_original(kernel, tmp_path)
        for assume_no_alias in (False, True):
            outcomes.append(pc.check(kernel, expected, assume_no_alias, tmp_path, built))
    print("\n" + pc.summary(outcomes))
    return outcomes


def _assert_sound(outcomes, floor):
    wrong = [f"{o.kernel} ({o.mode}): {m}" for o in outcomes for m in o.mismatches]
    assert not wrong, "wrong ports:\n" + "\n".join(wrong)
    broken = [f"{o.kernel} ({o.mode}): {o.error}" for o in outcomes if o.error]
    assert not broken, "ports that do not build or run:\n" + "\n".join(broken)
    for mode, (least, least_main) in floor.items():
        mine = [o for o in outcomes if o.mode == mode]
        have = sum(1 for o in mine if o.port.ported)
        assert have >= least, f"{mode}: only {have} kernels have a ported nest (at least {least} did)"
        main = sum(1 for o in mine if o.port.main_computation_ported)
        assert main >= least_main, f"{mode}: the main computation of only {main} kernels is ported (of {least_main})"


@requires_tool("cc")
@requires_tool("g++")
def test_a_third_of_polybench_ports_print_the_original_dump(tmp_path):
    """The default run: every third kernel of utilities/benchmark_list (10 kernels, about 30 s on 2 cores)."""
    _assert_sound(_sweep(pc.kernels()[::3], tmp_path), FLOOR_THIRD)


@pytest.mark.slow
@requires_tool("cc")
@requires_tool("g++")
def test_half_of_polybench_ports_print_the_original_dump(tmp_path):
    """Every other kernel of utilities/benchmark_list (a fixed half, about 45 s on 2 cores)."""
    _assert_sound(_sweep(pc.kernels()[::2], tmp_path), FLOOR_HALF)


@pytest.mark.slow
@requires_tool("cc")
@requires_tool("g++")
def test_all_polybench_ports_print_the_original_dump(tmp_path):
    _assert_sound(_sweep(pc.kernels(), tmp_path), FLOOR_ALL)


def _dump(*arrays) -> str:
    body = "".join(f"begin dump: {name}\n{' '.join(values)}\nend   dump: {name}\n" for name, values in arrays)
    return f"{pc.BEGIN}\n{body}{pc.END}\n"


def test_dump_comparison_allows_one_printed_unit_and_nothing_more():
    original = pc.parse_dump(_dump(("C", ["1.25", "-3.00", "1e+20"]), ("path", ["7", "-2"])))
    assert [a.name for a in original] == ["C", "path"] and original[0].values == ("1.25", "-3.00", "1e+20")

    def differs(c, path=("7", "-2")):
        return pc.compare_dumps(original, pc.parse_dump(_dump(("C", c), ("path", list(path)))))

    assert differs(["1.25", "-3.00", "1e+20"]) is None
    assert differs(["1.26", "-2.99", "1e+20"]) is None             # a rounding boundary: one unit of the last digit
    assert differs(["1.27", "-3.00", "1e+20"]).startswith("C[0]")  # two units: a different value
    assert differs(["1.25", "-3.00", "3e+20"]).startswith("C[2]")
    assert differs(["1.25", "-3.00", "1e+20"], ("7", "-1")).startswith("path[1]")   # integers: exactly
    assert differs(["1.25", "-3.00"]) == "C: 2 values instead of 3"
    assert "instead of" in pc.compare_dumps(original, original[:1])
    with pytest.raises(pc.BuildError):
        pc.parse_dump("the program crashed before dumping")


@requires_tool("cc")
@requires_tool("g++")
def test_the_oracle_catches_a_port_without_its_barriers(tmp_path):
    """The comparison has teeth: jacobi-2d's port with its __syncthreads() removed (threads then read
    shared-memory tiles before they are loaded) prints a different dump."""
    kernel = next(k for k in pc.kernels() if k.stem == "jacobi-2d")
    expected = pc.run_original(kernel, tmp_path)
    port = pc.port(kernel, assume_no_alias=True)
    assert "__syncthreads();" in port.cu, "the port no longer tiles jacobi-2d: choose another barrier to remove"
    port.cu = port.cu.replace("__syncthreads();", ";")
    dumps = pc.run_port(kernel, port, tmp_path)
    assert all(pc.compare_dumps(expected, actual) for actual in dumps.values())


NOT_PORTED: set[str] = set()     # every kernel ports since wavefronts (floyd-warshall, nussinov, seidel-2d)


@requires_tool("cc")
@requires_tool("g++")
@requires_tool("nvcc")
@pytest.mark.parametrize("name", sweep([k.stem for k in pc.kernels()], ("gemm", "lu", "seidel-2d", "fdtd-2d")))
def test_ports_compile_with_nvcc_and_pass_verify(tmp_path, capsys, name):
    """Each kernel's split port compiles with nvcc, and `c2gpu verify` (linking PolyBench's polybench.c into
    the original and the port with --extra-source) passes.  By default gemm (distributed, k interchanged
    into each thread), lu (rescheduled by isl), seidel-2d (a wavefront) and fdtd-2d (two nests fused); the
    rest with -m slow."""
    kernel = next(k for k in pc.kernels() if k.stem == name)
    port = pc.port(kernel, assume_no_alias=False)
    if not port.ported:
        assert name in NOT_PORTED, f"{name}: nothing ported ({next(iter(port.reasons.values()), '')})"
        return
    cu = tmp_path / f"{name}.cu"
    cu.write_text(port.cu)
    flags = [f"-I{pc.UTILITIES}", f"-I{kernel.parent}", *[f"-D{n}={v}" for n, v in pc.DEFINES]]
    r = subprocess.run([shutil.which("nvcc"), "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / f"{name}.o"), *flags],
                       capture_output=True, text=True, timeout=pc.TIMEOUT)
    assert r.returncode == 0, r.stderr[-3000:]
    command = ["verify", str(kernel), *flags, "--extra-source", str(pc.UTILITIES / "polybench.c")]
    code = main(command)
    out = capsys.readouterr().out
    if code != 0 and port.reassociates:
        # an ill-conditioned kernel (gramschmidt) differs where a sum is reassociated: in C's order it must pass
        code = main(command + ["--exact-fp"])
        out = capsys.readouterr().out
    assert code == 0 and out.startswith("verify: PASS"), out


@requires_tool("cc")
@requires_tool("g++")
@pytest.mark.parametrize("name", sweep([k.stem for k in pc.kernels()], ("atax", "correlation")))
def test_the_default_gpus_structures_pass_verify(capsys, name):
    """With a GPU (the default for a user: h100-sxm), the structure search may choose another structure than the
    rules (a host loop, rows split across threads: tests/test_split_reductions.py); what it chooses passes verify
    too.  By default atax and correlation (rows split across threads), the rest with -m slow."""
    kernel = next(k for k in pc.kernels() if k.stem == name)
    flags = [f"-I{pc.UTILITIES}", f"-I{kernel.parent}", *[f"-D{n}={v}" for n, v in pc.DEFINES]]
    command = ["verify", str(kernel), *flags, "--extra-source", str(pc.UTILITIES / "polybench.c"), "--gpu", "h100-sxm"]
    code = main(command)
    out = capsys.readouterr().out
    if code != 0 and "--exact-fp" in out:
        code = main(command + ["--exact-fp"])       # gramschmidt: ill-conditioned where a sum is reassociated
        out = capsys.readouterr().out
    assert code == 0 and out.startswith("verify: PASS"), out


def test_a_missing_extra_source_is_an_error(tmp_path, capsys):
    src = tmp_path / "t.c"
    src.write_text("double a[10];\nint main(void) {\n  for (int i = 0; i < 10; i++) a[i] = i;\n  return 0;\n}\n")
    assert main(["verify", str(src), "--extra-source", str(tmp_path / "nothere.c")]) != 0
    assert f"{tmp_path / 'nothere.c'}: no such file (--extra-source)" in capsys.readouterr().err


def _structure(items) -> list:
    out = []
    for it in items:
        if isinstance(it, HostLoop):
            out.append((it.var, _structure(it.body)))
        else:
            out.append(tuple(f"{m.c_var}->{m.dim}" for m in it.loops) or "one thread")
    return out


# the structure a CUDA programmer writes: a 2-D grid with x on the unit-stride subscript (gemm: j), two
# kernels (atax, bicg), a host loop over the pivot (lu, right-looking) or over the fronts (seidel-2d), the
# updates of ey (from row 1) and ex (from column 1) in one kernel (fdtd-2d: 3 launches per step where the C
# has 4 loop nests; the first row of ey runs even when the others do not, so it stays apart)
STRUCTURES = {
    "gemm": [("i->y", "j->x"), ("i->y", "j->x")],
    "atax": [("i->x",), ("j->x",)],
    "bicg": [("i->x",), ("j->x",), ("i->x",)],
    "lu": [("c2gpu_c0", [("c2gpu_c1->x",), ("c2gpu_c1->y", "c2gpu_c2->x"), ("c2gpu_c1->y", "c2gpu_c2->x")])],
    "seidel-2d": [("t", [("c2gpu_wave", [("i->x",)])])],
    "fdtd-2d": [("t", [("j->x",), ("i->y", "j->x"), ("i->y", "j->x")])],
}


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_main_computations_have_the_structure_a_cuda_programmer_picks(name):
    """The deepest nest of each kernel, as planned from the corpus file (its port is verified by
    test_ports_compile_with_nvcc_and_pass_verify and the dump sweeps)."""
    kernel = next(k for k in pc.kernels() if k.stem == name)
    manager = make_manager(list(PORT.passes), {})
    options = PreprocessOptions(defines=pc.DEFINES, include_dirs=(str(pc.UTILITIES), str(kernel.parent)))
    program = manager.run(load_program(str(kernel), options))
    nest = max(program.nests, key=lambda n: (pc._depth(n.root), len(n.statements())))
    plan = manager.result("plan", nest)
    assert plan is not None, manager.errors_of(nest)
    assert _structure(plan.mapping.items) == STRUCTURES[name]
