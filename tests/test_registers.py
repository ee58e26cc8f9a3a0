"""ptxas's register counts: one nvcc call for all the kernels of a file, counts equal to one call per kernel."""
import io
import contextlib

import pytest

import c2gpu.codegen.nvcc as nvcc
from c2gpu.drivers.cli import main
from c2gpu.codegen.nvcc import parse_ptxas, scoped_name
from c2gpu.perf import registers

from conftest import TESTDATA, requires_tool


def test_scoped_names_of_mangled_entries():
    assert scoped_name("_Z18c2gpu_matmul_16_k0PKfS0_Pf") == ["c2gpu_matmul_16_k0"]
    assert scoped_name("_ZN14c2gpu_batch_1218c2gpu_matmul_16_k0EPKfS1_Pf") == ["c2gpu_batch_12", "c2gpu_matmul_16_k0"]
    assert scoped_name("kernel") == ["kernel"]                 # extern "C": not mangled


def test_an_entry_ptxas_refuses_carries_the_error_and_the_others_their_counts():
    # ptxas prints the refusal before it reports the refused entry (nvcc 13, a 64 KiB static tile)
    text = """ptxas error   : Entry function '_ZN13c2gpu_batch_03bigEPd' uses too much shared data (0x10000 bytes, 0xc000 max)
ptxas info    : Compiling entry function '_ZN13c2gpu_batch_15smallEPd' for 'sm_90'
ptxas info    : Used 12 registers
ptxas info    : Compiling entry function '_ZN13c2gpu_batch_03bigEPd' for 'sm_90'
ptxas info    : Used 36 registers, used 1 barriers, 65536 bytes smem
"""
    big, small = parse_ptxas(text)
    assert (big.name, big.error, big.registers) == ("big", "uses too much shared data (0x10000 bytes, 0xc000 max)", 36)
    assert (small.name, small.error, small.registers, small.reported) == ("small", "", 12, True)


KERNEL = """__global__ void k0(const float *a, float *b, int n)
{{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  {body}
}}
"""


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("C2GPU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(registers, "_memory_cache", {})
    calls = []
    compile_cuda = nvcc.compile_cuda

    def counted(*args, **kwargs):
        calls.append(args[0])
        return compile_cuda(*args, **kwargs)
    monkeypatch.setattr(nvcc, "compile_cuda", counted)
    return calls


@requires_tool("nvcc")
def test_one_call_compiles_kernels_of_the_same_name_and_counts_them_as_alone(fresh_cache):
    texts = [KERNEL.format(body="if (i < n) b[i] = a[i] * 2.0f;"),
             KERNEL.format(body="float s = 0; for (int k = 0; k < n; k++) s += a[k * n + i] * a[i * n + k];"
                                " if (i < n) b[i] = s;"),
             # more static shared memory than a block may declare: ptxas refuses this one entry
             KERNEL.format(body="__shared__ float t[16384]; t[threadIdx.x] = a[i]; __syncthreads();"
                                " b[i] = t[(threadIdx.x + 1) % 16384];")]
    assert registers.compile_batch([("sm_80", "k0", t) for t in texts]) == 3
    assert len(fresh_cache) == 1
    batched = [registers.ptxas_registers(t, "k0", "sm_80") for t in texts]
    assert len(fresh_cache) == 1                                   # all three answered from the cache
    registers._memory_cache.clear()
    alone = []
    for t in texts:
        registers._cache_file("sm_80", "k0", t).unlink()
        alone.append(registers.ptxas_registers(t, "k0", "sm_80"))
    assert len(fresh_cache) == 4
    assert batched == alone and batched[2] is None and batched[0][0] > 0 and batched[1][0] > batched[0][0]


def _json(argv) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(argv)
    return out.getvalue()


@requires_tool("nvcc")
def test_a_file_s_kernels_are_counted_in_one_nvcc_call(fresh_cache):
    argv = ["analyze", str(TESTDATA / "matmul.c"), "--gpu", "h100-sxm", "--no-run", "--format", "json"]
    cold = _json(argv)
    assert len(fresh_cache) == 1       # 3 nests, every candidate kernel (each structure, with and without tiles)
    assert len(list((registers._cache_file("sm_90", "x", "y").parent).iterdir())) >= 4
    assert '"source": "ptxas (sm_90)"' in cold and '"source": "estimate' not in cold
    registers._memory_cache.clear()
    assert _json(argv) == cold and len(fresh_cache) == 1       # from the disk cache: the same report


def _entries(res):
    return sorted((k.mangled, k.registers, k.spill_stores, k.spill_loads, k.shared_bytes, k.error) for k in res.kernels)


@requires_tool("nvcc")
def test_the_slim_runtime_header_gives_the_counts_of_cuda_s_own(fresh_cache, monkeypatch):
    # every candidate kernel of matmul.c: plain, register-promoted, shared-memory tiles with barriers, a double
    # atomicAdd (the reduction nest), a host loop's index as a parameter
    units = []
    compile_kernels = registers._compile_kernels
    monkeypatch.setattr(registers, "_compile_kernels", lambda kernels, arch, timeout: units.append((kernels, arch)))
    _json(["analyze", str(TESTDATA / "matmul.c"), "--gpu", "a100", "--no-run", "--format", "json"])
    units = list(dict.fromkeys(units))      # the batches of the rounds (nothing was compiled: each asks again)
    assert {arch for _, arch in units} == {"sm_80"}
    text = "".join(unit for unit, _ in units)
    assert "atomicAdd" in text and "__syncthreads" in text and "__shared__" in text
    kernels = 0
    for unit, arch in units:
        slim = compile_kernels(unit, arch, timeout=300)
        assert len(fresh_cache) == 1                                # it compiled with the slim header
        own = compile_kernels(unit, arch, timeout=300, slim=False)
        assert slim.ok and own.ok and _entries(slim) == _entries(own)
        kernels += len(slim.kernels)
        fresh_cache.clear()
    assert kernels >= 8


@requires_tool("nvcc")
def test_kernels_the_slim_header_cannot_compile_are_counted_with_cuda_s_own(fresh_cache):
    texts = [KERNEL.format(body="if (i < n) b[i] = sqrtf(a[i]) + INFINITY;"),
             KERNEL.format(body="if (i < n) b[i] = a[i] * 2.0f;")]
    assert registers.compile_batch([("sm_80", "k0", t) for t in texts]) == 2
    assert len(fresh_cache) == 2                                    # the slim header, then CUDA's own
    counts = [registers.ptxas_registers(t, "k0", "sm_80") for t in texts]
    assert all(c is not None and c[0] > 0 for c in counts)


@requires_tool("nvcc")
def test_a_cuda_runtime_h_in_the_working_directory_does_not_shadow_cuda_s(tmp_path, monkeypatch):
    (tmp_path / "cuda_runtime.h").write_text('#error "not CUDA\'s header"\n')
    (tmp_path / "k.cu").write_text(KERNEL.format(body="if (i < n) b[i] = a[i];"))
    monkeypatch.chdir(tmp_path)
    res = nvcc.compile_cuda("k.cu", extra=("-cubin",))
    assert res.ok and [k.name for k in res.kernels] == ["k0"], res.stderr
