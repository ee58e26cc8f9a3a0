"""One truth: what the commands print agree with each other and with what they write.

`port` without flags emits exactly the kernels whose times `analyze` printed (the same default GPU, the same
search): every kernel's name, block shape and shared-memory tiles, for every testdata program and every PolyBench
kernel, through the command line as a user runs it.
"""
import json
import re

import pytest

from c2gpu.drivers.cli import main
from conftest import TESTDATA, project_programs, requires_tool

POLYBENCH = TESTDATA / "corpora" / "polybench-c-4.2.1"
FILES = [(p.relative_to(TESTDATA).as_posix(), ()) for p in project_programs()] + [
    (f"corpora/polybench-c-4.2.1/{line}", ("-I", str(POLYBENCH / "utilities")))
    for line in (POLYBENCH / "utilities" / "benchmark_list").read_text().split() if line.endswith(".c")]


def _tiles(texts) -> list[str]:
    """'A [16][32]' of each 'A [16][32] (reuse, 2048 B, ...)'."""
    return sorted(t.split(" (")[0] for t in texts)


@pytest.mark.parametrize("path,flags", FILES, ids=[f for f, _ in FILES])
def test_port_emits_the_kernels_analyze_predicted(path, flags, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("C2GPU_GPU", "")           # the default GPU, as a new user gets it
    monkeypatch.chdir(tmp_path)                   # no c2gpu.toml above the working directory
    src = str(TESTDATA / path)
    main(["analyze", src, *flags, "--no-run", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    predicted = {}
    for nest in doc["files"][0]["nests"]:
        perf = nest.get("performance")
        if perf and perf.get("kernels"):
            predicted[nest["name"]] = [(k["name"], tuple(k["block"]), _tiles(k.get("shared_memory_tiles") or ()))
                                       for k in perf["kernels"]]
    main(["port", src, *flags, "-o", str(tmp_path / "out.cu")])
    log = capsys.readouterr().err
    emitted, current = {}, None
    for line in log.splitlines():
        if m := re.match(r"\S+: note: ported nest (\S+): ", line):
            current = emitted.setdefault(m[1], [])
        elif m := re.match(r"\S+: note: not portable: ", line):
            current = None
        elif current is not None and (m := re.match(r"    (c2gpu_\S+): block (\d+)x(\d+)x(\d+);", line)):
            current.append([m[1], tuple(map(int, m.groups()[1:])), []])
        elif current is not None and (m := re.match(r"    shared memory KEPT: (\S+ \S+) in (\S+) \(", line)):
            next(k for k in current if k[0] == m[2])[2].append(m[1])
    emitted = {n: [(k[0], k[1], sorted(k[2])) for k in ks] for n, ks in emitted.items()}
    predicted = {n: ks for n, ks in predicted.items() if n in emitted}
    assert set(predicted) == set(emitted), (set(predicted) ^ set(emitted), log)
    assert predicted == emitted



# --------------------------------------------------------------------------- no command writes over its input

@pytest.mark.parametrize("argv", [["analyze", "{src}", "-o", "{src}"], ["analyze", "{src}", "--html", "{src}"],
                                  ["check", "{src}", "-o", "{src}"], ["port", "{src}", "-o", "{src}"],
                                  ["emit", "{src}", "-o", "{src}"]])
def test_no_command_overwrites_its_input(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("C2GPU_GPU", "")
    src = tmp_path / "m.c"
    src.write_text((TESTDATA / "saxpy.c").read_text())
    before = src.read_bytes()
    status = main([a.format(src=src) for a in argv] + (["--no-run"] if argv[0] in ("analyze", "check") else []))
    assert status == 2 and src.read_bytes() == before
    assert f"the output '{src}' would overwrite the input file" in capsys.readouterr().err


# --------------------------------------------------------------------------- conditional expressions

FDTD = r"""
float ex[64][64], ey[64][64], hz[64][64], fict[10];
void step(void) {
  for (int t = 0; t < 10; t++) {
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 64; j++)
        ey[i][j] = (i == 0) ? fict[t] : ey[i][j] - 0.5f * (hz[i][j] - hz[i-1][j]);
    for (int i = 0; i < 63; i++)
      for (int j = 0; j < 63; j++)
        hz[i][j] = hz[i][j] - 0.7f * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]);
  }
}
"""


def test_an_access_in_a_branch_of_a_conditional_expression_is_checked_where_it_is_read(tmp_path):
    # fdtd-2d as testdata/validation's measured CUDA program writes it: hz[i-1][j] is read only where i != 0
    import c2gpu
    nest = c2gpu.analyze(FDTD, name=str(tmp_path / "f.c")).nests[0]
    assert [(lp.var, lp.status) for lp in nest.loops] == [("t", "carried"), ("i", "parallel"), ("j", "parallel"),
                                                          ("i", "parallel"), ("j", "parallel")], nest.loops
    assert nest.ported, nest.refusal
    # and where the read is not guarded, it is still found
    worse = c2gpu.analyze(FDTD.replace("(i == 0) ?", "(j == 0) ?"), name=str(tmp_path / "g.c")).nests[0]
    assert "hz[i - 1][j] (line 7): subscript 1 can be -1, outside [0, 64)" in worse.loops[1].reason


# --------------------------------------------------------------------------- the headline says what it knows

POLYBENCH_ATAX = POLYBENCH / "linear-algebra" / "kernels" / "atax" / "atax.c"


def test_a_program_that_does_not_link_is_said_so_and_extra_source_times_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("C2GPU_GPU", "")
    monkeypatch.setenv("C2GPU_CACHE_DIR", str(tmp_path / "cache"))
    flags = ["-I", str(POLYBENCH / "utilities"), "--runs", "1"]
    assert main(["analyze", str(POLYBENCH_ATAX), *flags]) == 0
    out = capsys.readouterr().out
    head = out.splitlines()[1]
    # the real cause, not --no-run, and no linker output with temporary paths
    assert "static estimate: the program could not be timed: it does not link: undefined reference to " \
           "polybench_alloc_data" in head and "--no-run" not in head, head
    assert "c2gpu_cpu_" not in out and "nest_timing" not in out and not re.search(r"/cc\w+\.o\b", out)
    assert main(["analyze", str(POLYBENCH_ATAX), *flags, "--extra-source",
                 str(POLYBENCH / "utilities" / "polybench.c")]) == 0
    head = capsys.readouterr().out.splitlines()[1]
    assert head.startswith("whole program: ") and "of CPU time per run (measured)" in head, head


def test_the_headline_counts_the_cuda_context_and_cannot_tell_without_times(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("C2GPU_GPU", "")
    assert main(["analyze", str(TESTDATA / "matmul.c"), "--no-run"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "creates the CUDA context once" in x)
    m = re.search(r"once, 150 ms: a single run takes (\S+) (\S+), (\S+)x against", line)
    assert m, line
    # no nest with a CPU time (a size the file does not fix): no figure, and why
    src = tmp_path / "f.c"
    src.write_text("void f(int n, float *restrict a) { for (int i = 0; i < n; i++) a[i] = 2 * a[i]; }\n")
    assert main(["analyze", str(src), "--no-run"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == "whole program: cannot tell what porting would do: no nest has a CPU time " \
                                  "(--no-run given)", out
    assert "no nest is worth porting" not in out


def test_clear_errors_for_a_map_of_no_loop_and_a_size_that_is_no_number(tmp_path, capsys):
    assert main(["analyze", str(TESTDATA / "matmul.c"), "--gpu", "none", "--map", "q,j"]) == 1
    assert "error: --map names 'q', which no loop nest of" in capsys.readouterr().err
    assert main(["analyze", str(TESTDATA / "matmul.c"), "--gpu", "none", "-D", "N=abc"]) == 0
    assert "unknown identifier 'abc' (the value of -D N=abc: a number was meant?)" in capsys.readouterr().out
    assert main(["analyze", str(TESTDATA / "matmul.c"), "--runs", "0", "--no-run"]) == 2
    assert "--runs 0: the CPU baseline needs at least one run" in capsys.readouterr().err


def test_reports_use_no_internal_words(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("C2GPU_GPU", "")
    src = tmp_path / "q.c"
    src.write_text("int a[100];\nint main(void) { int i = 0; for (; i < 100; ) { a[i] = i; i++; } return a[3]; }\n")
    main(["analyze", str(src), "--no-run"])
    out = capsys.readouterr().out
    assert "?2" not in out and "the for loop without a loop variable" in out
    assert "NOT PORTABLE" in out and "NOT PORTED" not in out
    main(["analyze", str(POLYBENCH / "stencils" / "seidel-2d" / "seidel-2d.c"), "-I", str(POLYBENCH / "utilities"),
          "--no-run"])
    out = capsys.readouterr().out
    # one line per array for its uncoalesced accesses, and GPUPerf's metric after a plain sentence
    assert "9 reads and 1 write of A (lines 71-73) are uncoalesced" in out and out.count("is read uncoalesced") == 0
    assert "GPUPerf's B_" not in out and "GPUPerf's benefit metric B_memlp" in out


@requires_tool("g++")
def test_verify_says_which_kind_of_difference_a_reassociated_sum_makes(capsys, monkeypatch):
    # gramschmidt's norms of a rank-deficient matrix cancel: the tree-ordered sum differs completely from C's,
    # and the port with C's order (--exact-fp) matches exactly
    monkeypatch.setenv("C2GPU_GPU", "")
    src = POLYBENCH / "linear-algebra" / "solvers" / "gramschmidt" / "gramschmidt.c"
    status = main(["verify", str(src), "-I", str(POLYBENCH / "utilities"), "-DMINI_DATASET",
                   "--extra-source", str(POLYBENCH / "utilities" / "polybench.c")])
    out = capsys.readouterr().out
    assert status == 3 and "verify: FAIL: " in out
    assert "with the floating-point sums of kernel_gramschmidt@89 in C's order (--exact-fp) the port matches the " \
           "original" in out and "the difference is the order of the additions" in out, out


def test_coalescing_is_judged_by_bytes(capsys, monkeypatch):
    # atax's second nest maps i to x and reads A[i][j] across rows: the bytes, not the count of accesses, say so
    # (c2gpu's rules; with a GPU the search splits those rows across threads instead: test_split_reductions.py)
    monkeypatch.setenv("C2GPU_GPU", "")
    main(["port", str(POLYBENCH_ATAX), "-I", str(POLYBENCH / "utilities"), "--gpu", "none", "-o", "/dev/null"])
    log = capsys.readouterr().err
    k0 = next(line for line in log.splitlines() if "c2gpu_kernel_atax_76_k0:" in line)
    assert "x is 'i', but a warp's accesses to A[i][j] (50% of the bytes) are not coalesced" in k0, k0
    k1 = next(line for line in log.splitlines() if "c2gpu_kernel_atax_76_k1:" in line)
    assert "x is 'j', the fastest-varying subscript of the accesses that move most bytes" in k1, k1


@pytest.mark.parametrize("kernel,expected", [
    # four loops named i, each with its own role
    ("linear-algebra/solvers/gramschmidt/gramschmidt.c",
     [("k", "host loop"), ("i", "grid x"), ("i", "grid x"), ("j", "grid x"), ("i", "in each thread"),
      ("i", "in each thread")]),
    # isl's schedule writes three loops named c2gpu_c1 at one place: each its own role, said once
    ("linear-algebra/solvers/lu/lu.c",
     [("c2gpu_c0", "host loop"), ("c2gpu_c1", "grid x"), ("c2gpu_c1", "grid y"), ("c2gpu_c2", "grid x"),
      ("c2gpu_c1", "grid y"), ("c2gpu_c2", "grid x")]),
    # atax's rows split across threads (tests/test_split_reductions.py): i is a grid dimension in k0 and k1 and
    # shared by 32 threads in k2, whose grid is j
    ("linear-algebra/kernels/atax/atax.c", [("i", "grid x"),
                                            ("i", "grid x in k0, grid y in k1, split across 32 threads along y in k2"),
                                            ("j", "split across 32 threads along x"), ("j", "grid x")]),
])
def test_each_loop_gets_its_own_role(kernel, expected, monkeypatch):
    import c2gpu
    report = c2gpu.analyze(POLYBENCH / kernel, include_dirs=[POLYBENCH / "utilities"], gpu="h100-sxm", run_cpu=False)
    assert [(lp.var, lp.role) for n in report.nests for lp in n.loops] == expected


def test_a_pointer_passed_to_a_function_is_not_called_an_array(tmp_path, capsys):
    src = tmp_path / "fp.c"
    src.write_text('#include <stdio.h>\nfloat a[10];\nint main(void) { FILE *f = stdout;\n'
                   '  for (int i = 0; i < 10; i++) { a[i] = i; fprintf(f, "%f", a[i]); } return 0; }\n')
    main(["analyze", str(src), "--gpu", "none"])
    out = capsys.readouterr().out
    assert "pointer 'f' is passed to 'fprintf'" in out and "array 'f'" not in out


def test_a_column_walk_in_one_thread_costs_a_few_hundred_cycles_a_load(tmp_path):
    # PolyBench/GPU gramschmidt's first kernel: one thread sums a column (2048 strided loads); its footprint is
    # the sectors it touches, not the 16 MB between them, so a load costs an L2 or DRAM latency, not 16,000 cycles
    from c2gpu.frontend import PreprocessOptions, load_program
    from c2gpu.model.gpu import load_gpu
    from c2gpu.perf.predict import SYNC_EACH_LAUNCH, predict_nest
    from c2gpu.pipeline import PassManager
    from c2gpu.codegen import build_nest_code
    from c2gpu.planning.plan import NestPlan, SharedMemoryPlan
    from c2gpu.registry import available_passes
    src = tmp_path / "g.c"
    src.write_text("""#include <math.h>
void gramschmidt(float *a, float *r, float *q) {
  for (int k = 0; k < 2048; k++) {
    float nrm = 0.0f;
    for (int i = 0; i < 2048; i++) nrm += a[i * 2048 + k] * a[i * 2048 + k];
    r[k * 2048 + k] = sqrtf(nrm);
    for (int i = 0; i < 2048; i++) q[i * 2048 + k] = a[i * 2048 + k] / r[k * 2048 + k];
    for (int j = k + 1; j < 2048; j++) {
      r[k * 2048 + j] = 0.0f;
      for (int i = 0; i < 2048; i++) r[k * 2048 + j] += q[i * 2048 + k] * a[i * 2048 + j];
      for (int i = 0; i < 2048; i++) a[i * 2048 + j] = a[i * 2048 + j] - q[i * 2048 + k] * r[k * 2048 + j];
    }
  }
}
""")
    opts = {"assume_no_alias": True, "shared_memory": "off", "params": {}}
    mgr = PassManager(available_passes(), ["normalize", "dependence", "mapping"], opts)
    nest = mgr.run(load_program(str(src), PreprocessOptions())).nests[0]
    plan = NestPlan(nest.name, mgr.result("mapping", nest), SharedMemoryPlan(), scalar_replacement=False)
    gpu = load_gpu("h100-sxm")
    perf = predict_nest(nest, plan, gpu, {}, code=build_nest_code(nest, plan), options=opts, search=False,
                        registers="estimate", synchronize=SYNC_EACH_LAUNCH)
    kernel = perf.kernels[0]
    assert kernel.block == (1, 1, 1) and kernel.launches == 2048       # the norm, in one thread, once per k
    for model in ("gpuperf", "resios"):
        cycles = kernel.predictions[model].time_s * gpu.core_clock_ghz * 1e9
        assert 100 < cycles / 4096 < 1000, (model, cycles / 4096)       # 4096 loads per launch
