"""Tests for c2gpu.emulate: the CUDA-on-CPU execution layer.

The programs under tests/cuda_samples/ are complete CUDA programs (they also
compile with nvcc) that check their own results and print "OK".  Each is
compiled once with compile_for_cpu() and run under several schedules of the
emulator (worker count, thread order), because a correct kernel must give the
same answer under all of them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from c2gpu.emulate import (
    CompilerNotFoundError,
    compile_for_cpu,
    header_path,
    mask_comments_and_strings,
    rewrite_launches,
    rewrite_source,
)

SAMPLES = Path(__file__).parent / "cuda_samples"
HAVE_GXX = shutil.which("g++") is not None

SCHEDULES = {
    "default": {},
    "serial-reverse": {"C2GPU_EMU_THREADS": "1", "C2GPU_EMU_ORDER": "reverse"},
    "3-workers": {"C2GPU_EMU_THREADS": "3"},
}


@pytest.fixture(scope="module")
def exes(tmp_path_factory):
    """Compile every sample once (in parallel); name -> CompileResult."""
    if not HAVE_GXX:
        pytest.skip("g++ is not installed")
    out = tmp_path_factory.mktemp("emu")

    def build(cu: Path):
        return cu.stem, compile_for_cpu(cu, out / cu.stem)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(build, sorted(SAMPLES.glob("*.cu"))))


def run(exes, name: str, *args: str, env: dict | None = None, timeout: float = 60):
    res = exes[name]
    assert res.ok, f"{name}.cu did not compile:\n{res.stderr}"
    return subprocess.run(
        [str(res.exe_path), *args],
        capture_output=True,
        text=True,
        timeout=timeout,  # a deadlock fails the test instead of hanging it
        env={**os.environ, **(env or {})},
    )


# ---------------------------------------------------------------------------
# Whole programs
# ---------------------------------------------------------------------------

SELF_CHECKING = {
    "vector_add": "(a) grid-stride vector add, n % block != 0, guard element untouched",
    "matmul_naive": "(b) 2-D dim3(32, 8) blocks vs CPU reference",
    "reduce_shared": "(c) static __shared__ tree reduction + atomicAdd(float), __syncthreads_count/and/or",
    "early_return": "(d) threads return before __syncthreads, barriers in a loop",
    "tiled_matmul_dyn": "(e) extern __shared__ sized at launch, partial tiles, file-scope extern __shared__",
    "histogram_atomics": "(f) atomicAdd int/unsigned histograms, Max/Min/Inc/Sub/CAS/Exch/double/ull",
    "errors": "(g) memcpy round trips, invalid launch configurations, error API, __constant__",
    "two_kernels": "(h) data kept on device over 51 launches on a stream, events",
    "warp_shuffle": "warp shuffles, ballot/any/all, partial masks, warp+block reduction",
    "features": "3-D grids, template kernel, NULL arg, vector types, min/max, intrinsics",
    "emitted_style": "c2gpu template shapes: C-as-C++ shims, reduction + CAS-loop float max",
}


@pytest.mark.parametrize("schedule", list(SCHEDULES))
@pytest.mark.parametrize("sample", list(SELF_CHECKING))
def test_sample_program(exes, sample, schedule):
    proc = run(exes, sample, env=SCHEDULES[schedule])
    assert proc.returncode == 0, f"{SELF_CHECKING[sample]}\n{proc.stdout}{proc.stderr}"
    assert proc.stdout.strip().splitlines()[-1] == "OK"


@pytest.mark.skipif(not HAVE_GXX, reason="g++ is not installed")
def test_portable_context_switch(tmp_path):
    """The ucontext fallback (used off x86-64, under ASan or CET shadow
    stacks) runs the barrier-heavy samples correctly too."""
    names = ["early_return", "reduce_shared", "warp_shuffle"]

    def build(name):
        return compile_for_cpu(
            SAMPLES / f"{name}.cu", tmp_path / name, extra_flags=["-DC2GPU_EMU_FAST_SWITCH=0"]
        )

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(build, names))
    for name, res in zip(names, results):
        assert res.ok, res.stderr
        proc = subprocess.run([str(res.exe_path)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and proc.stdout.strip() == "OK", (name, proc.stdout, proc.stderr)


def test_device_printf_runs_once(exes):
    proc = run(exes, "features")
    assert proc.stdout.count("hello from block 0 thread 0\n") == 1
    assert "hello from block 0 thread 1" not in proc.stdout  # only thread 0 prints


def test_missing_syncthreads_is_exposed(exes):
    """The same reduction without barriers must go wrong under at least one
    thread order (intra-block races are not hidden by the emulator)."""
    sums = []
    for env in ({}, {"C2GPU_EMU_ORDER": "reverse"}):
        proc = run(exes, "reduce_shared", "racy", env=env)
        assert proc.returncode == 0, proc.stderr
        got, expect = proc.stdout.split()
        sums.append(float(got))
    assert any(s != float(expect) for s in sums), (sums, expect)


def test_impossible_barrier_aborts_instead_of_hanging(exes):
    proc = run(exes, "deadlock", timeout=20)
    assert proc.returncode != 0
    assert "deadlock in block (0,0,0)" in proc.stderr
    assert "returned" not in proc.stdout


def test_big_grid_timing(exes):
    """(j) 4096 blocks x 256 threads of a trivial kernel; reported, loosely bounded."""
    t0 = time.perf_counter()
    proc = run(exes, "big_grid", timeout=120)
    wall = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = re.fullmatch(r"OK ([0-9.]+) ms", proc.stdout.strip())
    assert m, proc.stdout
    print(f"\n4096x256 trivial kernel: {float(m.group(1)):.1f} ms kernel, {wall:.2f} s process")
    assert wall < 30


# ---------------------------------------------------------------------------
# Source rewriting
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src, expected",
    [
        ("k<<<g, b>>>(x, y);", "c2gpu_launch(k, g, b, 0, x, y);"),
        ("k<<<g, b, 64>>>(x);", "c2gpu_launch(k, g, b, 64, x);"),
        ("k<<<g, b, sm, stream>>>(x);", "c2gpu_launch(k, g, b, sm, x);"),
        ("k<<<1, 1>>>();", "c2gpu_launch(k, 1, 1, 0);"),
        (
            "mm<<<dim3((n+31)/32, (m+7)/8), dim3(32, 8)>>>(a, f(b, c), n);",
            "c2gpu_launch(mm, dim3((n+31)/32, (m+7)/8), dim3(32, 8), 0, a, f(b, c), n);",
        ),
        ("k<float><<<g, b>>>(p);", "c2gpu_launch(k<float>, g, b, 0, p);"),
        ("ns::k<A<int>, 4> <<< g , b >>> ( p );", "c2gpu_launch(ns::k<A<int>, 4>, g, b, 0, p);"),
        ("::k<<<g, b>>>(p);", "c2gpu_launch(::k, g, b, 0, p);"),
        ("k<<<g, b>>>(s[i], \"a,b)\", ')');", "c2gpu_launch(k, g, b, 0, s[i], \"a,b)\", ')');"),
        ("k<<<n >> 8, 256>>>(p);", "c2gpu_launch(k, n >> 8, 256, 0, p);"),
        ("k<<<std::max<int>(1, n), 32>>>(p);", "c2gpu_launch(k, std::max<int>(1, n), 32, 0, p);"),
        ("a<<<1, 2>>>(x); b<<<3, 4>>>(y);", "c2gpu_launch(a, 1, 2, 0, x); c2gpu_launch(b, 3, 4, 0, y);"),
    ],
)
def test_rewrite_launches(src, expected):
    assert rewrite_launches(src) == expected


@pytest.mark.parametrize(
    "src",
    [
        "// k<<<1, 1>>>(x);\n",
        "/* k<<<1, 1>>>(x);\n   more */\n",
        'puts("k<<<1, 1>>>(x)");\n',
        'auto s = R"raw(k<<<1, 1>>>(")raw");\n',
        "int x = 1'000'000; char c = '<';\n",
    ],
)
def test_rewrite_leaves_comments_and_literals_alone(src):
    assert rewrite_launches(src) == src


def test_rewrite_after_tricky_literals():
    src = "char q = '\"'; int n = 0x1'0; k<<<1, 2>>>(q); // k<<<3, 4>>>(q)\n"
    assert rewrite_launches(src) == (
        "char q = '\"'; int n = 0x1'0; c2gpu_launch(k, 1, 2, 0, q); // k<<<3, 4>>>(q)\n"
    )


def test_rewrite_keeps_line_numbers():
    src = "k<<<n,\n  256, 0,\n  s>>>\n  (a,\n   b);\nint after;\n"
    out = rewrite_launches(src)
    assert out.count("\n") == src.count("\n")
    assert out.splitlines()[-1] == "int after;"
    assert " ".join(out.split()) == "c2gpu_launch(k, n, 256, 0, a, b) ; int after;"


def test_rewrite_inside_multiline_macro():
    src = "#define LAUNCH(p) \\\n  k<<<grid, \\\n      256>>> \\\n   (p)\nint after;\n"
    out = rewrite_launches(src)
    lines = out.splitlines()
    assert len(lines) == 5 and lines[-1] == "int after;"
    assert all(line.endswith("\\") for line in lines[:3])  # still one macro
    assert " ".join(out.replace("\\\n", " ").split()) == (
        "#define LAUNCH(p) c2gpu_launch(k, grid, 256, 0, p) int after;"
    )


@pytest.mark.parametrize("bad", ["k<<<1>>>(x);", "k<<<1, 2>>>;", "<<<1, 2>>>(x);", "k<<<1, 2(x);"])
def test_rewrite_rejects_malformed_launches(bad):
    with pytest.raises(ValueError):
        rewrite_launches(bad)


def test_rewrite_extern_shared():
    src = (
        "extern __shared__ float tile[];\n"
        "__global__ void f() {\n"
        "  extern __shared__ __align__(sizeof(double)) unsigned char raw[];\n"
        "  extern volatile __shared__ int v[];\n"
        "  extern int not_shared[];\n"
        "  // extern __shared__ float in_comment[];\n"
        "}\n"
    )
    out = rewrite_source(src).splitlines()
    assert out[0] == (
        "static thread_local float* const tile = "
        "reinterpret_cast<float*>(c2gpu::dynamic_shared_memory());"
    )
    assert out[2].strip() == (
        "static thread_local unsigned char* const raw = "
        "reinterpret_cast<unsigned char*>(c2gpu::dynamic_shared_memory());"
    )
    assert out[3].strip().startswith("static thread_local volatile int* const v = ")
    assert out[4].strip() == "extern int not_shared[];"
    assert out[5].strip() == "// extern __shared__ float in_comment[];"


def test_mask_keeps_offsets_and_newlines():
    src = 'a /* x\ny */ "s\\"t" // c\nb'
    masked = mask_comments_and_strings(src)
    assert len(masked) == len(src)
    assert masked.count("\n") == src.count("\n")
    assert masked.split() == ["a", '"', '"', "b"]


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------


def test_header_path_is_the_emulation_header():
    path = header_path()
    assert path.name == "cuda_emu.h"
    text = path.read_text()
    assert "c2gpu_launch" in text and "__syncthreads" in text


@pytest.mark.skipif(not HAVE_GXX, reason="g++ is not installed")
def test_compile_error_points_at_the_cu_file(tmp_path):
    cu = tmp_path / "broken.cu"
    cu.write_text("#include <cuda_runtime.h>\n__global__ void k(int* p) {\n  p[0] = undefined_name;\n}\n")
    res = compile_for_cpu(cu, tmp_path / "broken")
    assert not res.ok
    assert res.returncode != 0
    assert "broken.cu:3" in res.stderr  # original file name and line
    assert res.command[0].endswith("g++") and "-include" in res.command
    assert not (tmp_path / "broken").exists()


@pytest.mark.skipif(not HAVE_GXX, reason="g++ is not installed")
def test_compile_result_carries_rewritten_source(tmp_path):
    cu = tmp_path / "tiny.cu"
    cu.write_text(
        "#include <cstdio>\n__global__ void k(int* p) { p[threadIdx.x] = 7; }\n"
        "int main() { int* d; cudaMalloc(&d, 4 * sizeof(int)); k<<<1, 4>>>(d);\n"
        "  int h[4]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
        "  printf(\"%d\\n\", h[0] + h[1] + h[2] + h[3]); }\n"
    )
    res = compile_for_cpu(cu, tmp_path / "tiny")
    assert res.ok, res.stderr
    assert "c2gpu_launch(k, 1, 4, 0, d);" in res.cpp_source
    proc = subprocess.run([str(res.exe_path)], capture_output=True, text=True, timeout=30)
    assert proc.stdout.strip() == "28"


OVERRUNS = r"""
#include <cstdio>
#include <cstring>
__global__ void global_overrun(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) a[i] = 1.0f;  // off by one
}
__global__ void shared_overrun(float* out) {
  extern __shared__ float buf[];  // launched with one float too few
  buf[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}
int main(int argc, char** argv) {
  float* d;
  cudaMalloc(&d, 1000 * sizeof(float));
  if (std::strcmp(argv[1], "global") == 0) global_overrun<<<4, 256>>>(d, 1000);
  else shared_overrun<<<1, 64, 63 * sizeof(float)>>>(d);
  cudaDeviceSynchronize();
  std::printf("finished\n");
}
"""


@pytest.mark.skipif(not HAVE_GXX, reason="g++ is not installed")
def test_address_sanitizer_catches_kernel_overruns(tmp_path):
    """Device allocations are exact-size heap blocks and the dynamic shared
    buffer is poisoned past the launch's size, so -fsanitize=address reports
    both kinds of overrun at the kernel's source line."""
    cu = tmp_path / "overrun.cu"
    cu.write_text(OVERRUNS)
    res = compile_for_cpu(cu, tmp_path / "overrun", extra_flags=["-fsanitize=address", "-g"])
    if not res.ok and "asan" in res.stderr.lower():
        pytest.skip("libasan is not available")
    assert res.ok, res.stderr
    for mode, line in (("global", 6), ("shared", 10)):
        proc = subprocess.run([str(res.exe_path), mode], capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0, mode
        assert "ERROR: AddressSanitizer" in proc.stderr
        assert f"overrun.cu:{line}" in proc.stderr
        assert "finished" not in proc.stdout


HOST_POINTER = r"""
#include <cstdio>
__global__ void set(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 5;
}
int main() {
  static int host[64];                       // plain host memory: a GPU would fault
  set<<<1, 64>>>(host, 64);
  cudaError_t e1 = cudaGetLastError();
  int* pinned;                               // pinned host memory is device-accessible
  cudaMallocHost(&pinned, 64 * sizeof(int));
  set<<<1, 64>>>(pinned, 64);
  cudaError_t e2 = cudaGetLastError();
  int* dev;
  cudaMalloc(&dev, 64 * sizeof(int));
  set<<<1, 64>>>(dev + 64, 0);               // end pointer, not dereferenced
  cudaError_t e3 = cudaGetLastError();
  std::printf("%d %d %d %d %d\n", (int)e1, host[0], (int)e2, pinned[63], (int)e3);
  cudaFreeHost(pinned);
  cudaFree(dev);
}
"""


@pytest.mark.skipif(not HAVE_GXX, reason="g++ is not installed")
def test_host_pointer_kernel_argument_is_reported(tmp_path):
    cu = tmp_path / "hostptr.cu"
    cu.write_text(HOST_POINTER)
    res = compile_for_cpu(cu, tmp_path / "hostptr")
    assert res.ok, res.stderr
    proc = subprocess.run([str(res.exe_path)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    # cudaErrorIllegalAddress (700), host array untouched, pinned/end pointers fine
    assert proc.stdout.split() == ["700", "0", "0", "5", "0"]
    assert "kernel argument 1 is not device memory" in proc.stderr


@pytest.mark.skipif(not HAVE_GXX, reason="g++ is not installed")
def test_malformed_launch_is_a_failed_compile(tmp_path):
    cu = tmp_path / "bad_launch.cu"
    cu.write_text("__global__ void k(int* p) {}\nint main() {\n  k<<<1>>>(0);\n}\n")
    res = compile_for_cpu(cu, tmp_path / "bad_launch")
    assert not res.ok and res.returncode is None
    assert "line 3" in res.stderr and "2 to 4 values" in res.stderr


def test_missing_compiler_is_a_clear_error(tmp_path):
    cu = tmp_path / "x.cu"
    cu.write_text("int main() { return 0; }\n")
    with pytest.raises(CompilerNotFoundError, match="no-such-cxx-c2gpu"):
        compile_for_cpu(cu, tmp_path / "x", cxx="no-such-cxx-c2gpu")
