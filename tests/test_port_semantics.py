"""Ports keep C's meaning after the nest: live-out state, pointer offsets, 64-bit sizes, C-only names.

Each program is ported with `c2gpu port`, the original is built with cc and the port with the CPU
execution layer for CUDA, and both run: what the program prints after its nests must be the same.
Every test also checks that the nests it is about were ported (a refused nest proves nothing).
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from c2gpu.emulate.build import compile_for_cpu
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.codegen.nvcc import compile_cuda

from conftest import requires_tool, write_c


def port(tmp_path: Path, source: str, *args: str) -> tuple[Path, str]:
    """`c2gpu port` on the source: (the .cu path, what the command printed)."""
    src = write_c(tmp_path, source)
    cu = tmp_path / "t.cu"
    r = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(src), "-o", str(cu), *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return cu, r.stdout + r.stderr


def run_both(tmp_path: Path, cu: Path) -> tuple[str, str]:
    """(stdout of the original program, stdout of the port run on the CPU execution layer)."""
    subprocess.run(["cc", "-O1", "-w", str(tmp_path / "t.c"), "-o", str(tmp_path / "orig"), "-lm"], check=True)
    host = tmp_path / "t.host.c"
    if host.exists():   # split port: the user's C calls the extern "C" wrappers of the .cu
        subprocess.run(["cc", "-O1", "-w", "-c", str(host), "-o", str(tmp_path / "host.o")], check=True)
        built = compile_for_cpu(cu, tmp_path / "kernels.o", extra_flags=["-c", "-w"])
        assert built.ok, built.stderr[-3000:]
        subprocess.run(["g++", str(tmp_path / "host.o"), str(tmp_path / "kernels.o"), "-o", str(tmp_path / "port"),
                        "-pthread", "-lm"], check=True)
    else:
        built = compile_for_cpu(cu, tmp_path / "port", extra_flags=["-w", "-lm"])
        assert built.ok, built.stderr[-3000:]
    outs = [subprocess.run([str(tmp_path / exe)], capture_output=True, text=True, timeout=60) for exe in ("orig", "port")]
    assert all(o.returncode == 0 for o in outs), [o.stderr[-2000:] for o in outs]
    return outs[0].stdout, outs[1].stdout


def assert_nvcc_compiles(cu: Path) -> None:
    """`nvcc -arch=sm_80 -c` accepts the .cu (the port's kernels and wrappers, or the whole file)."""
    nv = compile_cuda(str(cu))
    assert nv is not None and nv.ok, nv.stderr if nv else "nvcc missing"


def ported(log: str) -> set[str]:
    return set(re.findall(r"note: ported nest (\S+):", log))


def code_only(cu_text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", cu_text, flags=re.S)


# --------------------------------------------------------------------------- live-out loop variables

LOOP_VARIABLES = r"""
#include <stdio.h>
float a[100][40], b[100];
void f(int n, int m) {
  int i = -7, j = -7, k = -7, t = -7, d = -7;
  for (i = 0; i < n; i++)                 /* i = max(0, n); j = m from the last i, or its old value */
    for (j = 0; j < m; j++)
      a[i][j] = i + j;
  printf("rect %d %d\n", i, j);
  i = j = -7;
  for (i = 2; i < n; i += 3)              /* non-unit step, triangular inner loop */
    for (k = i; k < m; k += 2)
      a[i][k] = 1;
  printf("tri %d %d\n", i, k);
  for (d = n - 1; d >= 4; d--)            /* decreasing */
    b[d] = 2 * d;
  printf("down %d\n", d);
  for (t = 0; t < 3; t++) {               /* host time loop around two kernels; i ends in the second */
    for (i = 1; i < n; i++)
      for (j = 0; j < m; j++)
        a[i][j] = b[i] + t + j;
    for (i = 2; i < n - 1; i++)
      b[i] = a[i][1] * 0.5f;
  }
  printf("time %d %d %d %f\n", t, i, j, b[5]);
  for (i = 0; i < n; i++) {               /* q is declared in the nest: gone after it */
    int q;
    for (q = 0; q < m; q++)
      a[i][q] = 3;
  }
  printf("inner %d\n", i);
}
int main(void) {
  f(100, 40); f(0, 5); f(5, 0); f(3, 2); f(-4, 9);
  return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_loop_variables_declared_outside_keep_their_final_values(tmp_path):
    cu, log = port(tmp_path, LOOP_VARIABLES)
    assert ported(log) == {"f@6", "f@11", "f@15", "f@18", "f@26"}, log
    assert_nvcc_compiles(cu)
    original, port_run = run_both(tmp_path, cu)
    assert "rect 100 40" in original and "tri 101 98" in original   # the program checks something non-trivial
    assert port_run == original
    # computed on the host from the bounds (never by running the loops), stored through a pointer
    assert "*c2gpu_final_k =" in cu.read_text()


GUARDED_INNER = r"""
#include <stdio.h>
float a[50][20], x[50];
int main(void) {
  int i, j = -1, q = -1;
  for (i = 0; i < 50; i++) x[i] = (i % 7) - 3;
  for (i = 0; i < 50; i++)
    if (x[i] > 0)
      for (j = 0; j < 20; j++)
        a[i][j] = x[i] * j;
  for (i = 0; i < 50; i++)
    if (i >= 45)
      for (q = i - 40; q < 20; q++)
        a[i][q] += 1;
  printf("%d %d %d %f\n", i, j, q, a[47][13]);
  return 0;
}
"""


@requires_tool("g++")
def test_inner_loop_under_a_data_dependent_guard_is_refused_and_affine_guard_is_exact(tmp_path):
    cu, log = port(tmp_path, GUARDED_INNER)
    # which instance of j's loop runs last depends on the data: refused, naming the variable and its line
    assert re.search(r"t\.c:7:\d+: note: not portable: loop variable 'j' \(line 9\) keeps a value after the nest that "
                     r"depends on the condition 'x\[i\] > 0' \(line 8\)", log), log
    assert {"main@6", "main@11"} <= ported(log)      # an affine guard is part of the isl domain
    original, port_run = run_both(tmp_path, cu)
    assert port_run == original


# --------------------------------------------------------------------------- reductions read by later kernels

REDUCTION_IN_TIME_LOOP = r"""
#include <stdio.h>
float a[64], b[64];
int main(void) {
  int t, i;
  float s = 1.0f;
  for (i = 0; i < 64; i++) a[i] = i % 7;
  for (t = 0; t < 3; t++) {
    for (i = 0; i < 64; i++)
      s += a[i];
    for (i = 0; i < 64; i++)
      b[i] = a[i] / s;
  }
  printf("%d %d %.6f %.6f %.6f\n", t, i, s, b[3], b[10]);
  return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_reduction_result_read_by_a_later_kernel_stays_on_the_device(tmp_path):
    cu, log = port(tmp_path, REDUCTION_IN_TIME_LOOP)
    assert "main@8" in ported(log), log
    text = cu.read_text()
    # the second kernel loads s from the device copy the first one accumulates into
    assert re.search(r"c2gpu_main_8_k1<<<[^;]*\bd_s\b", text), text
    assert_nvcc_compiles(cu)           # today's port passes the host pointer where a float is expected
    original, port_run = run_both(tmp_path, cu)
    assert port_run == original


# --------------------------------------------------------------------------- pointers indexed below their start

NEGATIVE_OFFSET = r"""
#include <stdio.h>
#define N 50
float buf[N + 2], out[N];
void shift(float *restrict q, const float *restrict p, int n) {
  int i;
  for (i = 0; i < n; i++)
    q[i] = p[i - 1] + p[i + 1];
}
int main(void) {
  int i;
  for (i = 0; i < N + 2; i++) buf[i] = 1000.0f + i;
  shift(out, buf + 1, N);
  shift(out + 10, buf + 6, 20);
  printf("%.1f %.1f %.1f %.1f\n", out[0], out[1], out[10], out[N - 1]);
  return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_pointer_indexed_below_its_start_copies_that_element(tmp_path):
    cu, log = port(tmp_path, NEGATIVE_OFFSET)
    assert "shift@7" in ported(log), log
    text = cu.read_text()
    # the device copy of p starts one element before p (p[-1] is buf[0]) and is freed from its real start
    assert "cudaMemcpy(d_p + -1, p + -1, (size_t)(n + 2)" in text
    assert "cudaFree(d_p_mem)" in text
    assert_nvcc_compiles(cu)
    original, port_run = run_both(tmp_path, cu)
    assert original.startswith("2002.0 2004.0")
    assert port_run == original


# --------------------------------------------------------------------------- 64-bit index arithmetic

SYMBOLIC_SIZES = r"""
#include <stdio.h>
#include <stdlib.h>
void fill(int n, int m, float A[n][m], const float *x) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      A[i][j] = x[i] + j;
}
void scale(long n, float *y) {
  for (long k = 0; k < n; k++)
    y[k] = 3 * y[k];
}
int main(void) {
  int n = 70, m = 33;
  float (*A)[33] = malloc(sizeof(float) * n * m);
  float *x = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) x[i] = i;
  fill(n, m, A, x);
  scale(n, x);
  printf("%f %f %f\n", A[3][4], A[69][32], x[5]);
  return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_symbolic_sizes_get_64_bit_index_arithmetic(tmp_path):
    cu, log = port(tmp_path, SYMBOLIC_SIZES, "--assume-no-alias", "--shared-memory", "off")
    assert {"fill@6", "scale@11"} <= ported(log), log
    text = cu.read_text()
    # n * m elements may pass 2^31 although n and m are ints: flat subscripts and wrapper sizes in 64 bits
    assert "A[((long long)(i) * (m) + (long long)(j))]" in text
    assert "const long long n = c2gpu_arg_n;" in text and "const long long m = c2gpu_arg_m;" in text
    # a long loop variable stays long as the thread index; int ones keep int (their range bounds the loop)
    assert "const long k = (long)blockIdx.x * blockDim.x + threadIdx.x;" in text
    assert "const int i = blockIdx.y * blockDim.y + threadIdx.y;" in text
    assert_nvcc_compiles(cu)
    original, port_run = run_both(tmp_path, cu)
    assert port_run == original


# --------------------------------------------------------------------------- C that is not C++

CXX_NAMES = r"""
#include <stdio.h>
#include <stdlib.h>
#define N 100
static void *get_buffer(int n) { return malloc(n * sizeof(float)); }
static void twice(float *restrict new, const float *restrict class, int n) {
  int i;
  for (i = 0; i < n; i++) new[i] = class[i] * 2;
}
int main(void) {
  float *new = get_buffer(N);
  float class[N];
  int i;
  for (i = 0; i < N; i++) class[i] = i * 0.5f;
  twice(new, class, N);
  printf("%d %f %f\n", i, new[7], class[99]);
  free(new);
  return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_cxx_keywords_as_names_split_the_port_and_are_renamed_in_the_kernels(tmp_path):
    cu, log = port(tmp_path, CXX_NAMES)
    assert ported(log) == {"twice@8", "main@14"}, log
    assert "split because 'new' (line 6) is a C++ keyword" in log
    assert (tmp_path / "t.host.c").exists()
    code = code_only(cu.read_text())
    assert not re.search(r"\b(new|class)\b", code)
    assert "new_[i] = class_[i] * 2;" in code
    assert_nvcc_compiles(cu)
    original, port_run = run_both(tmp_path, cu)
    assert port_run == original


def _reasons(tmp_path, source):
    return list(load_program(str(write_c(tmp_path, source)), PreprocessOptions()).c_only)


def test_c_only_constructs_name_what_cxx_rejects(tmp_path):
    assert _reasons(tmp_path, "void f(float *a, int n) { int i; for (i = 0; i < n; i++) a[i] = 0; }") == []
    r = _reasons(tmp_path, "void *g(void); void f(void) { int *p = g(); p[0] = 1; }")
    assert r == ["'p' (line 1) is initialized from a void * without a cast"]
    r = _reasons(tmp_path, "void f(void *v) { float *q; q = v; q[0] = 1; }")
    assert r == ["a void * is assigned without a cast (line 1)"]
    # malloc's void * is converted by the prelude's shim; an explicit cast is C++ too
    assert _reasons(tmp_path, "#include <stdlib.h>\nvoid f(void *v) { int *p = malloc(4); float *q = (float *)v; }") == []
    assert _reasons(tmp_path, "struct P { int x, y; };\nstruct P p = { .y = 2 };") == ["a designated initializer (line 2)"]
    assert _reasons(tmp_path, "int f(int this) { return this; }") == ["'this' (line 1) is a C++ keyword"]
    # a function of the user's named like one CUDA defines (min, max) would clash with it
    assert _reasons(tmp_path, "static int max(int a, int b) { return a > b ? a : b; }") == \
        ["max() (line 1) has the name of a CUDA function"]


def test_keyword_renaming_avoids_taken_names_and_leaves_comments():
    from c2gpu.codegen import rename_cxx_keywords
    text = "/* copies in and out */ float *new = x; int new_ = 1; y = \"new\"; template[0] = 2;"
    assert rename_cxx_keywords(text) == \
        "/* copies in and out */ float *new__ = x; int new_ = 1; y = \"new\"; template_[0] = 2;"


# --------------------------------------------------------------------------- privatized scalars

PRIVATE_TEMP = r"""
#include <stdio.h>
float a[100][8], b[100];
void f(float *restrict x, int n) {
  float t = -1;
  int i, j;
  for (i = 0; i < n; i++) {
    t = 2 * b[i];
    for (j = 0; j < 8; j++)
      a[i][j] = t * j + x[j];
  }
}
int main(void) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int i = 0; i < 100; i++) b[i] = i;
  f(x, 100);
  f(x, 0);
  f(x, 37);
  printf("%f\n", a[7][3]);
  return 0;
}
"""


@requires_tool("nvcc")
@requires_tool("g++")
def test_private_scalar_keeps_the_last_iterations_value(tmp_path):
    from c2gpu.drivers.driver import make_manager
    from c2gpu.drivers.verify import verify
    src = write_c(tmp_path, PRIVATE_TEMP)
    cu, log = port(tmp_path, PRIVATE_TEMP)
    assert "f@7" in ported(log), log
    # each thread has its own t; the thread of the last iteration stores it for the host
    assert re.search(r"if \(i == n - 1\)\s*\*c2gpu_t_last = t;", cu.read_text()), cu.read_text()
    assert_nvcc_compiles(cu)
    res = verify(str(src), PreprocessOptions(), make_manager(["normalize", "dependence", "mapping", "plan"], {}))
    assert res.ok, res.message          # verify compares t (and i, j) after every call
