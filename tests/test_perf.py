"""c2gpu.perf: static kernel analyses wired to the IR and mapping, nest predictions, block-size search."""
from __future__ import annotations

import functools
import math
import pytest

from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.frontend.preprocess import parse_define
from c2gpu.model.gpu import list_gpus, load_gpu
from c2gpu.model.inputs import geometry
from c2gpu.model.occupancy import occupancy
from c2gpu.perf.machine import machine_params
from c2gpu.perf.predict import kernel_items, predict_nest
from c2gpu.perf.profile import KernelAnalysis, PerfError
from c2gpu.pipeline import PassManager
from c2gpu.codegen import build_nest_code
from c2gpu.planning.plan import NestPlan, SharedMemoryPlan
from c2gpu.registry import available_passes
from c2gpu.symbolic import Poly

from conftest import TESTDATA, sweep, write_c

A100 = load_gpu("a100")


def _plan(nest, mapping) -> NestPlan:
    """The plan of a mapping with its default blocks and no shared-memory tiles."""
    return NestPlan(nest.name, mapping, SharedMemoryPlan())


def mapped(path, defines=(), options=None, include=()):
    opts = {"assume_no_alias": True, "shared_memory": "off", **(options or {})}
    mgr = PassManager(available_passes(), ["normalize", "dependence", "mapping"], opts)
    prog = mgr.run(load_program(str(path), PreprocessOptions(defines=tuple(parse_define(d) for d in defines),
                                                             include_dirs=tuple(include))))
    return prog, mgr


def analysis(path, nest_index=0, kernel_index=0, gpu=A100, env=None, defines=(), options=None):
    prog, mgr = mapped(path, defines, options)
    nest = prog.nests[nest_index]
    kernel, host = kernel_items(mgr.result("mapping", nest))[kernel_index]
    return KernelAnalysis(nest, kernel, gpu, env or {}, host_lids=host, registers="estimate"), kernel


def by_text(mem, text, kind="read"):
    return next(c for c in mem.accesses if c.text == text and c.kind == kind)


# --------------------------------------------------------------------------- machine

def test_machine_params_come_from_the_catalog():
    for g in list_gpus():
        m = machine_params(g)
        assert m.sm_count == g.sm_count and m.clock_ghz == g.core_clock_ghz
        assert m.dram_bw_gbs == g.dram_bandwidth_gbs and m.dram_latency_cycles == g.dram_latency_cycles
        assert m.launch_overhead_s == pytest.approx(g.launch_sync_us * 1e-6)     # R LAUNCH: a timed empty kernel
        assert m.max_mem_parallelism == g.memory_max_parallelism
        assert m.inst["fp32_fma"].throughput == g.instruction("fp32_fma").throughput
        assert m.peak_flops == pytest.approx(g.peak_fp32_gflops * 1e9)
        assert m.transaction_bytes == (128 if g.cc[0] == 2 else 32)
    # the seed's GTX 460: Table 3.1 madd and eq. 4.8's numbers survive the translation
    m = machine_params(load_gpu("gtx460"))
    assert m.inst["int_mad"].latency == 22 and m.inst["int_mad"].throughput == 16
    assert m.bw_bytes_per_cycle == pytest.approx(64.0)


# --------------------------------------------------------------------------- coalescing

COALESCE = """
#define N 1024
float A[N][N], B[N][N], C[N][N], x[N], y[N];
void rows(void) { int i, j;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) B[i][j] = A[j][i] + C[i][j]; }
void unit(void) { int i; for (i = 0; i < N; i++) y[i] = x[i] * 2.0f; }
void stride2(void) { int i; for (i = 0; i < N / 2; i++) y[i] = x[2 * i]; }
"""


def test_stride_one_float_is_4_sectors_1_line(tmp_path):
    ka, k = analysis(write_c(tmp_path, COALESCE), nest_index=1)
    mem = ka.memory((256, 1, 1))
    c = by_text(mem, "x[i]")
    assert (c.sectors, c.lines, c.unknown) == (4, 1, False)
    assert by_text(mem, "y[i]", "write").sectors == 4


def test_column_access_with_32x8_blocks_is_32_transactions(tmp_path):
    ka, k = analysis(write_c(tmp_path, COALESCE))
    assert {m.var: m.dim for m in k.loops} == {"i": "y", "j": "x"}
    mem = ka.memory((32, 8, 1))
    col = by_text(mem, "A[j][i]")
    assert col.sectors == 32 and col.lines == 32
    row = by_text(mem, "C[i][j]")
    assert row.sectors == 4 and row.lines == 1


def test_stride_two_touches_8_sectors(tmp_path):
    ka, _ = analysis(write_c(tmp_path, COALESCE), nest_index=2)
    assert by_text(ka.memory((256, 1, 1)), "x[2 * i]").sectors == 8


def test_broadcast_row_of_matmul_is_one_sector_and_shared_in_l1():
    ka, k = analysis(TESTDATA / "matmul.c", defines=("N=256",))
    mem = ka.memory(tuple(k.block))
    a, b = by_text(mem, "A[i][k]"), by_text(mem, "B[k][j]")
    assert a.sectors == 1 and a.lines == 1                 # every thread of the warp reads A[i][k]
    assert b.sectors == 4 and b.lines == 1                 # 32 consecutive floats
    # L1: A's sector serves 8 iterations of k; B's row is fetched once for the block's 8 warps
    assert a.l2_sectors == pytest.approx(1 / 8)
    assert b.l2_sectors == pytest.approx(4 / 8)
    # the accumulator is loaded and stored every iteration (no restrict in the emitted kernel): L2 traffic
    assert by_text(mem, "C[i][j]", "write").l2_sectors == 4


def test_unknown_stride_counts_32_and_is_flagged(tmp_path):
    src = """
    void gather(int n, const int *restrict idx, const float *restrict x, float *restrict y) {
      int i; for (i = 0; i < n; i++) y[i] = x[idx[i]]; }
    """
    ka, _ = analysis(write_c(tmp_path, src), env={"n": 4096})
    mem = ka.memory((256, 1, 1))
    c = next(c for c in mem.accesses if c.text == "x[idx[i]]")
    assert c.unknown and c.sectors == 32 and c.lines == 32
    assert any("unknown stride" in f for f in mem.flags)


# --------------------------------------------------------------------------- ILP, occupancy, registers

def test_ilp_of_a_small_statement(tmp_path):
    src = """
    #define N 4096
    float a[N], b[N], c[N], d[N], y[N];
    void f(void) { int i; for (i = 0; i < N; i++) y[i] = (a[i] + b[i]) * (c[i] + d[i]); }
    """
    ka, _ = analysis(write_c(tmp_path, src))
    # ld a, ld b, +, ld c, ld d, +, *, st: 8 instructions, longest chain ld -> + -> * -> st = 4
    assert ka.ilp == pytest.approx(2.0)
    assert ka.mlp == pytest.approx(4.0)          # four independent loads
    assert ka.hot_region[1] == "straight-line kernel body"


def test_matmul_inner_loop_counts_per_thread():
    ka, k = analysis(TESTDATA / "matmul.c", defines=("N=256",))
    ic = ka.instructions(tuple(k.block))
    assert ic.per_ir_class == {"fp32_fma": 256}
    # C = 0, then A and B per k; C[i][j] lives in a register across k: loaded once before it, stored once after
    assert ic.memory == pytest.approx(1 + 2 * 256 + 2)
    assert ic.loop_overhead == pytest.approx(2 * 256)
    assert ka.ilp == pytest.approx(6 / 4)                 # ld A, ld B, *, ld C, +, st; chain ld * + st


def test_triangular_nest_uses_the_average_trip_count():
    ka, k = analysis(TESTDATA / "syrk.c", defines=("N=256", "M=64"))
    execs = sorted(i.executions for i in ka.executions.values())
    assert execs[-1] == pytest.approx(64)                 # k loop per (i, j) thread
    assert ka.threads == pytest.approx(256 * 257 / 2)


def test_occupancy_drives_the_active_warps_of_the_profile():
    ka, k = analysis(TESTDATA / "matmul.c", defines=("N=512",))
    for block in ((32, 8, 1), (64, 16, 1), (32, 2, 1)):
        occ = occupancy(A100, block[0] * block[1], ka.registers.count, ka.shared_bytes(block))
        prof, mach = ka.profile(block)
        assert prof.active_warps_per_sm == occ.active_warps_per_sm
        g = geometry(prof, mach)
        assert g.resident_warps <= occ.active_warps_per_sm
    # more registers per thread: fewer resident warps
    heavy = KernelAnalysis(ka.nest, k, A100, {}, registers="estimate")
    heavy.__dict__["registers"] = type(ka.registers)(128, 0, 0, "test")
    prof, _ = heavy.profile((32, 8, 1))
    assert prof.active_warps_per_sm == occupancy(A100, 256, 128).active_warps_per_sm == 16


def test_registers_say_where_they_come_from():
    ka, _ = analysis(TESTDATA / "matmul.c", defines=("N=64",))
    assert ka.registers.source.startswith("estimate (Belady")
    assert 8 <= ka.registers.count <= A100.max_registers_per_thread


def test_symbolic_sizes_need_values():
    prog, mgr = mapped(TESTDATA / "matmul_ptr.c")
    nest = prog.nests[0]
    kernel, host = kernel_items(mgr.result("mapping", nest))[0]
    with pytest.raises(PerfError, match="--param n=VALUE"):
        KernelAnalysis(nest, kernel, A100, {})


def test_dram_lower_bound_is_the_unique_footprint():
    ka, k = analysis(TESTDATA / "matmul.c", defines=("N=512",))
    mem = ka.memory(tuple(k.block))
    assert mem.dram_lower_bound == 3 * 512 * 512 * 4 + 512 * 512 * 4   # A, B, C read; C written
    assert mem.dram_estimate >= mem.dram_lower_bound


# --------------------------------------------------------------------------- nest predictions

def test_block_search_picks_a_candidate_and_lists_the_strategies():
    prog, mgr = mapped(TESTDATA / "matmul.c", ("N=512",))
    nest = prog.nests[0]
    perf = predict_nest(nest, _plan(nest, mgr.result("mapping", nest)), A100, {}, search=True, registers="estimate")
    k = perf.kernels[0]
    assert k.block_choice == "search"
    blocks = {c.block: c for c in k.candidates}
    assert k.block in blocks and "best (search)" in blocks[k.block].labels
    best = min((c for c in k.candidates if c.times), key=lambda c: c.times[perf.default_model])
    assert k.predictions[perf.default_model].time_s <= best.times[perf.default_model] * 1.0101
    assert set(k.strategies) == {"even division (n_w^1)", "utilization (n_w^2)", "latency hiding (n_w^3)",
                                 "seed 5.2.1 choice min(n_w)"}
    for label, (shape, why) in k.strategies.items():
        assert label in blocks[shape].labels and why
    assert any("mapping default" in c.labels for c in k.candidates)
    for c in k.candidates:   # the search compares by the default model; every model runs on the chosen block
        if c.times:
            assert c.occupancy is not None
            assert set(c.times) == (set(perf.models) if c.block == k.block else {perf.default_model})
    assert blocks[k.block].times == {m: r.time_s for m, r in k.predictions.items()}


def test_forced_block_is_reported_as_forced():
    prog, mgr = mapped(TESTDATA / "matmul.c", ("N=256",), {"block": (64, 4)})
    nest = prog.nests[0]
    perf = predict_nest(nest, _plan(nest, mgr.result("mapping", nest)), A100, {}, options={"block": (64, 4)},
                        registers="estimate")
    k = perf.kernels[0]
    assert k.block == (64, 4, 1) and k.block_choice == "forced"
    assert "forced (--block)" in next(c for c in k.candidates if c.block == (64, 4, 1)).labels


def test_transfer_bytes_equal_the_array_plan_copies():
    prog, mgr = mapped(TESTDATA / "matmul_ptr.c")
    nest = prog.nests[0]
    mapping = mgr.result("mapping", nest)
    code = build_nest_code(nest, _plan(nest, mapping))
    env = {"n": 300}
    perf = predict_nest(nest, _plan(nest, mapping), A100, env, code=code, search=False, registers="estimate")
    expect = []
    for plan in code.arrays:
        es = nest.array(plan.name).elem_size
        for d, copy in (("in", plan.copy_in), ("out", plan.copy_out)):
            if copy:
                expect.append((plan.name, d, copy[1].evaluate(env) * es))
    got = [(t.array, t.direction, t.bytes) for t in perf.transfers]
    assert got == expect
    assert sorted(got) == sorted([("a", "in", 300 * 300 * 4), ("b", "in", 300 * 300 * 4), ("c", "out", 300 * 300 * 4)])
    assert perf.transfer_s == pytest.approx(sum(A100.transfer_time_s(b) for *_x, b in got))


def test_time_loop_kernels_launch_every_iteration():
    prog, mgr = mapped(TESTDATA / "validation" / "jacobi-2d-imper.c", ("N=200", "TSTEPS=7"))
    nest = next(n for n in prog.nests if n.function == "jacobi2d")
    perf = predict_nest(nest, _plan(nest, mgr.result("mapping", nest)), A100, {}, search=False, registers="estimate")
    assert [k.launches for k in perf.kernels] == [7, 7]
    # the wrapper launches all 14 back to back and synchronizes once, after the last
    assert (perf.launch.launches, perf.launch.synchronizes) == (14, 1)
    assert perf.launch_overhead_s == pytest.approx(14 * A100.launch_back_to_back_us * 1e-6
                                                   + (A100.launch_sync_us - A100.launch_back_to_back_us) * 1e-6)
    m = perf.default_model
    assert perf.total_s(m) == pytest.approx(sum(k.predictions[m].time_s * 7 for k in perf.kernels)
                                            + perf.launch_overhead_s + perf.transfer_s)


def _testdata_files():
    files = sorted(TESTDATA.glob("*.c")) + sorted((TESTDATA / "polybench").glob("*.c")) + \
        sorted((TESTDATA / "validation").glob("*.c"))
    return files


SMALL = ("N=48", "M=40", "NI=48", "NJ=40", "NK=36", "NL=44", "NX=48", "NY=40", "TMAX=3", "TSTEPS=3", "H=24",
         "W=20", "ROWS=30", "COLS=20", "NBODIES=64", "BINS=16", "FILTER_SIZE=5", "MINI_DATASET")


@functools.lru_cache(maxsize=1)
def _mapped_testdata():
    """Every mapped nest of testdata at small sizes, once for all the GPUs."""
    out = []
    for path in _testdata_files():
        prog, mgr = mapped(path, SMALL, include=(str(TESTDATA / "polybench"),))
        out += [(path, nest, mgr.result("mapping", nest)) for nest in prog.nests
                if mgr.result("mapping", nest) is not None]
    return out


# the oldest, a middle and the newest generation by default (Fermi, Volta, Hopper); the rest with -m slow
@pytest.mark.parametrize("gpu_key", sweep([g.key for g in list_gpus()], ("c2050", "v100", "h100-sxm")))
def test_every_testdata_nest_on_every_gpu_is_never_below_the_roofline(gpu_key):
    gpu = load_gpu(gpu_key)
    checked = 0
    for path, nest, mapping in _mapped_testdata():
        env = {p: 37 for p in nest.params}
        env["not_a_size_of_this_nest"] = 5          # --param values for other nests are ignored
        try:
            perf = predict_nest(nest, _plan(nest, mapping), gpu, env, search=False, registers="estimate")
        except PerfError:
            continue
        for k in perf.kernels:
            for name, r in k.predictions.items():
                assert math.isfinite(r.raw_time_s) and r.raw_time_s > 0, (path.name, nest.name, gpu.key)
                assert r.raw_time_s >= k.roofline.bound_s * (1 - 1e-9), \
                    f"{path.name} {nest.name} {k.name} on {gpu.key}: {name} {r.raw_time_s:.3e} s below " \
                    f"the roofline {k.roofline.bound_s:.3e} s"
                assert not r.clamped
            checked += 1
    assert checked > 300 // len(list_gpus())


def test_a_table_of_rows_pays_for_its_gather_and_scatter_on_the_host(tmp_path):
    # the copy of a table of rows (codegen RowScan) costs its transfer plus one pass over its bytes on the host
    # (read and write once) at the CPU description's single-core DRAM bandwidth
    from c2gpu.cpu.static import load_cpu
    import test_array_privatization as tables
    path = write_c(tmp_path, tables.TABLES)
    prog, mgr = mapped(path, options={"assume_no_alias": False})
    nest = next(n for n in prog.nests if n.function == "scale")
    mapping = mgr.result("mapping", nest)
    code = build_nest_code(nest, _plan(nest, mapping))
    perf = predict_nest(nest, _plan(nest, mapping), A100, {"n": 30}, code=code, search=False, registers="estimate")
    bw = load_cpu().bandwidth_gbs["dram"] * 1e9
    moved = {(t.array, t.direction): t for t in perf.transfers}
    assert set(moved) == {("in", "in"), ("out", "in"), ("out", "out")}
    for t in moved.values():
        assert t.seconds == pytest.approx(A100.transfer_time_s(t.bytes) + 2 * t.bytes / bw)
    assert moved[("in", "in")].bytes == 30 * 30 * 30 * 8


def test_a_table_of_rows_is_priced_as_the_dense_box_the_port_gives_the_device(tmp_path):
    # the port copies the touched box of a double *** into one dense array (codegen.arrays._table_plan): the
    # model prices that layout (i mapped to x: consecutive doubles, 8 sectors per warp request), not 32
    # sectors at addresses chosen by data
    import test_array_privatization as tables
    path = write_c(tmp_path, tables.TABLES)
    prog, mgr = mapped(path, options={"assume_no_alias": False})
    nest = next(n for n in prog.nests if n.function == "scale")
    mapping = mgr.result("mapping", nest)
    (kernel,) = mapping.kernels()
    assert [(nest.loop(m.lid).var, m.dim) for m in kernel.loops] == [("k", "z"), ("j", "y"), ("i_n", "x")]
    ka = KernelAnalysis(nest, kernel, A100, {"n": 30}, registers="estimate")
    flats = {ai.access.text: ai.flat for ai in ka.access_infos}
    k, j, i = (Poly.var(v) for v in ("k", "j", "i_n"))          # i = i_n + 1
    # in: the box k, j, i in 0..29 (30 x 30 x 30); out: i in 1..29 only, so its rows hold 29 elements
    assert flats["in[k][j][i]"] == k * 900 + j * 30 + i + 1
    assert flats["in[k][j][i - 1]"] == k * 900 + j * 30 + i
    assert flats["out[k][j][i]"] == k * 870 + j * 29 + i + 1
    costs = ka.memory(tuple(kernel.block)).accesses
    assert costs and all(not c.unknown and c.sectors <= 9 for c in costs), [(c.text, c.sectors) for c in costs]


LOCAL = """#define N 256
#define M 100
double out[N][M], in[N][M];
void f(void) {
  for (int k = 0; k < N; k++) {
    double x[M], c[2];
    c[0] = k; c[1] = 2 * k;
    for (int i = 0; i < M; i++) x[i] = in[k][i] * c[0];
    for (int i = 1; i < M - 1; i++) out[k][i] = x[i - 1] + x[i + 1] + c[1];
  }
}
"""


def test_a_per_thread_array_indexed_by_data_costs_local_memory_traffic(tmp_path):
    # x (indexed by i) lives in local memory: its accesses are traffic, coalesced (the threads of a warp read one
    # element of their own copies, consecutive in local memory); c (indexed by constants) lives in registers
    path = write_c(tmp_path, LOCAL)
    prog, mgr = mapped(path)
    nest = prog.nests[0]
    (kernel,) = mgr.result("mapping", nest).kernels()
    assert [nest.loop(m.lid).var for m in kernel.loops] == ["k"]
    ka = KernelAnalysis(nest, kernel, A100, {}, registers="estimate")
    assert ka.local_arrays == {"x"} and ka.per_thread_arrays >= {"x", "c"}
    costs = ka.memory(tuple(kernel.block)).accesses
    local = [c for c in costs if c.array == "x"]
    assert len(local) == 3 and all(c.where == "local memory" and not c.unknown for c in local), local
    assert all(c.sectors <= 8 for c in local)            # 32 threads x 8 bytes: 8 sectors, coalesced
    assert not [c for c in costs if c.array == "c"]
    # the three accesses of x per i are counted: the kernel is slower than with x free
    assert ka.memory(tuple(kernel.block)).per_array["x"]["read_l2"] > 0
