"""`c2gpu annotate --openmp` (c2gpu/drivers/annotate.py) against oracles nobody here wrote: the program as written.

Each PolyBench/C kernel is annotated, built with `gcc -fopenmp` and run with 4 threads: it must print the dump the
sequential program prints (PolyBench's dumps, compared as tests/polybench_corpus.py compares a port's: integers
exactly, floating point to one unit of the last printed digit).  Each NAS Parallel Benchmark, as its authors wrote it
before their OpenMP (tests/npb_recall.py), is annotated, built the same way and run with 4 threads: it must pass NPB's
own verification.  Small programs check the clauses, and that a loop whose OpenMP form would compute something else
gets no directive."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from c2gpu.drivers.annotate import annotate_file
from c2gpu.drivers.options import Options
from c2gpu.frontend import PreprocessOptions

import npb_recall
from conftest import requires_tool, sweep
from polybench_corpus import UTILITIES, _cflags, compare_dumps, kernels, parse_dump, run_original
from test_npb_ports import VERIFIED, common_sources

GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None and not os.environ.get("CI"), reason="gcc is not on PATH")
KERNELS = {k.stem: k for k in kernels()}
# one of each kind: matrix products, a reduction over a matrix, stencils with a time loop, a triangular solver, a
# dynamic program, a data-mining kernel with scalar temporaries, a kernel whose scalar is written before read
DEFAULT = ("gemm", "atax", "jacobi-2d", "fdtd-2d", "lu", "floyd-warshall", "correlation", "durbin", "gramschmidt")


def _options(*include_dirs, **kw) -> Options:
    return Options(include_dirs=tuple(str(d) for d in include_dirs), defines=(("MINI_DATASET", "1"),), **kw)


def annotated(tmp_path: Path, code: str, **kw):
    src = tmp_path / "a.c"
    src.write_text(code)
    return annotate_file(str(src), Options(**kw))


def run_openmp(source: Path, tmp: Path, threads: int = 4, extra=()) -> subprocess.CompletedProcess:
    exe = tmp / (source.stem + ".omp")
    subprocess.run([GCC, "-fopenmp", "-O1", "-w", *extra, str(source), "-o", str(exe), "-lm"], check=True,
                   capture_output=True, text=True, timeout=120)
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OMP_NUM_THREADS": str(threads)})


# gcc's flag for each dialect: without an offloading compiler, target regions and OpenACC's compute regions run
# on the host (gcc's host fallback), so the directives' clauses are checked, not their copies to a device
FLAG = {"openmp": "-fopenmp", "openmp-target": "-fopenmp", "openacc": "-fopenacc"}


def _differences(name: str, tmp_path: Path, expected, exact_fp: bool, dialect: str) -> tuple[list[str], list]:
    """(what differs from the sequential dump with 4 and with 3 threads, the directives written)."""
    kernel = KERNELS[name]
    result = annotate_file(str(kernel), _options(UTILITIES, kernel.parent, exact_fp=exact_fp), dialect)
    out = tmp_path / f"{name}.omp.c"
    out.write_text(result.source)
    exe = tmp_path / f"{name}.omp"
    subprocess.run([GCC, FLAG[dialect], *_cflags(kernel), str(UTILITIES / "polybench.c"), str(out), "-o", str(exe),
                    "-lm"], check=True, capture_output=True, text=True, timeout=120)
    found = []
    for threads in (4, 3):
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "OMP_NUM_THREADS": str(threads)})
        assert r.returncode == 0, r.stderr[-2000:]
        diff = compare_dumps(expected, parse_dump(r.stderr))
        if diff is not None:
            found.append(f"{name} with {threads} threads: {diff}\n" + "\n".join(d.text for d in result.directives))
    return found, result.directives


def check_kernel(name: str, tmp_path: Path, dialect: str = "openmp") -> int:
    """The number of loops annotated.  A floating-point reduction adds in another order than C: in an
    ill-conditioned kernel (gramschmidt at MINI size) that alone changes the printed values, as for a port
    (tests/polybench_corpus.py `check`); such a kernel is annotated again with --exact-fp (sums stay in one
    thread), which must then print the sequential dump."""
    expected = run_original(KERNELS[name], tmp_path)
    found, directives = _differences(name, tmp_path, expected, False, dialect)
    if found and any("reduction(+" in d.text or "reduction(*" in d.text for d in directives):
        found, directives = _differences(name, tmp_path, expected, True, dialect)
    assert not found, found
    return len(directives)


@needs_gcc
@pytest.mark.parametrize("name", DEFAULT)
def test_polybench_annotated_prints_what_the_sequential_program_prints(name, tmp_path):
    # floyd-warshall's i and j both carry dependences: only a wavefront (c2gpu port's rewrite) runs it in parallel
    assert check_kernel(name, tmp_path) >= (0 if name == "floyd-warshall" else 1)


@needs_gcc
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(KERNELS) - set(DEFAULT)))
def test_polybench_annotated_rest(name, tmp_path):
    check_kernel(name, tmp_path)


@needs_gcc
@pytest.mark.parametrize("dialect", ["openmp-target", "openacc"])
@pytest.mark.parametrize("name", sweep(sorted(KERNELS), default=DEFAULT))
def test_polybench_with_device_directives_prints_what_the_sequential_program_prints(name, dialect, tmp_path):
    """--openmp-target and --openacc, built with gcc's host fallback: the same dumps as the sequential program;
    every directive copies what its loop reads and writes (map / copyin / copy clauses)."""
    count = check_kernel(name, tmp_path, dialect)
    assert count >= (1 if name in DEFAULT and name != "floyd-warshall" else 0)


def test_the_clauses_are_the_analysis_findings(tmp_path):
    r = annotated(tmp_path, """
double a[100][100], b[100], s;
void f(int n) {
  int i, j; double t;
  for (i = 0; i < n; i++) {
    t = 2.0 * b[i];
    for (j = 0; j < n; j++)
      a[i][j] = t + j;
  }
  for (i = 0; i < n; i++)
    s += b[i];
}""")
    assert [d.text for d in r.directives] == ["#pragma omp parallel for private(j, t)",
                                              "#pragma omp parallel for reduction(+:s)"]
    assert "    #pragma omp parallel for private(j, t)\n    for (i = 0; i < n; i++) {" in r.source.replace("  ", "    ")


def test_a_loop_whose_openmp_form_would_differ_gets_no_directive(tmp_path):
    r = annotated(tmp_path, """
double a[100], b[100];
int f(int n) {
  int i, j, last = 0;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      a[j] = b[j] + i;
  for (i = 0; i < n; i++)
    if (b[i] > 0) last = i;
  return j + last;
}""")
    # the first nest: i carries a[j]'s output dependence; j is parallel, but j is read after the loops
    # (`return j`): a private j would leave it unspecified.  The second: the iterations write `last` in turn.
    assert r.directives == []
    assert [(a.line, a.var) for a in r.left] == [(6, "j")] and "'j' is used at line 10" in r.left[0].why


def test_existing_directives_are_kept_and_not_doubled(tmp_path):
    r = annotated(tmp_path, """
double a[100];
void f(int n) {
  int i;
  #pragma omp parallel for
  for (i = 0; i < n; i++)
    a[i] = i;
}""")
    assert r.directives == [] and r.source.count("#pragma omp") == 1


@needs_gcc
def test_a_float_max_is_left_to_one_thread_and_an_integer_max_is_a_reduction(tmp_path):
    src = tmp_path / "m.c"
    src.write_text("""#include <stdio.h>
int v[1000]; double w[1000];
int main(void) {
  int i, m = 0; double x = 0;
  for (i = 0; i < 1000; i++) { v[i] = (i * 7919) % 1009; w[i] = v[i] * 0.5; }
  for (i = 0; i < 1000; i++)
    if (v[i] > m) m = v[i];
  for (i = 0; i < 1000; i++)
    if (w[i] > x) x = w[i];
  printf("%d %g\\n", m, x);
  return 0;
}""")
    r = annotate_file(str(src), Options())
    assert [d.text for d in r.directives] == ["#pragma omp parallel for", "#pragma omp parallel for reduction(max:m)"]
    assert any("floating point" in a.why for a in r.left)
    out = tmp_path / "m.omp.c"
    out.write_text(r.source)
    assert run_openmp(out, tmp_path).stdout == "1008 504\n"


def test_a_loop_left_by_break_or_return_gets_no_directive(tmp_path):
    r = annotated(tmp_path, """
double a[100];
int f(int n) {
  int i;
  for (i = 0; i < n; i++) {
    if (a[i] < 0) return i;
    a[i] = 2 * a[i];
  }
  return -1;
}""")
    assert r.directives == []


@requires_tool("gcc")
def test_a_loop_ended_by_a_conjunction_of_bounds_gets_no_directive(tmp_path):
    """c2gpu reads `ii < i0 + 32 && ii < n` as a min and proves the loop; OpenMP's canonical loop form has one
    comparison, so gcc would reject the directive."""
    r = annotated(tmp_path, """
void f(int n, int i0, float *restrict a, const float *restrict b) {
  for (int ii = i0; ii < i0 + 32 && ii < n; ii++)
    a[ii] = 2 * b[ii];
}""")
    assert r.directives == []
    assert ["canonical form" in x.why for x in r.left] == [True]


@requires_tool("gcc")
def test_a_reduction_into_array_elements_is_an_array_section(tmp_path):
    r = annotated(tmp_path, """
#include <stdio.h>
double u[200][3];
int main(void) {
  double rms[3] = {0, 0, 0};
  for (int i = 0; i < 200; i++) for (int m = 0; m < 3; m++) u[i][m] = (i * 7 + m) % 11;
  for (int i = 0; i < 200; i++)
    for (int m = 0; m < 3; m++)
      rms[m] = rms[m] + u[i][m] * u[i][m];
  printf("%.1f %.1f %.1f\\n", rms[0], rms[1], rms[2]);
  return 0;
}""")
    assert [d.text for d in r.directives][-1] == "#pragma omp parallel for reduction(+:rms[0:3])"
    out = tmp_path / "a_omp.c"
    out.write_text(r.source)
    got = run_openmp(out, tmp_path)
    assert got.stdout == "6979.0 6995.0 7015.0\n", got.stdout + got.stderr     # (the sums, exact in double)


def test_a_variable_assigned_after_the_loop_before_any_use_is_dead_there(tmp_path):
    r = annotated(tmp_path, """
double a[100][100], b[100];
double f(int n) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      a[i][j] = i + j;
  j = n / 2;
  for (i = 0; i < n; i++)
    b[i] = a[i][j];
  return b[j];
}""")
    assert [(d.line, d.text) for d in r.directives] == [(5, "#pragma omp parallel for private(j)"),
                                                       (9, "#pragma omp parallel for")]


# loops annotated per benchmark (class S sources as npb_recall prepares them): a floor, so that a change that
# annotates fewer is seen
NPB_ANNOTATED = {"BT": 78, "CG": 18, "EP": 6, "FT": 15, "IS": 8, "LU": 50, "MG": 13, "SP": 104}


@pytest.fixture(scope="module")
def npb_tree(tmp_path_factory) -> Path:
    return npb_recall.prepare(tmp_path_factory.mktemp("npb"))


# --openmp-target: loops that call a function c2gpu did not inline get no directive (the device would need it)
NPB_TARGET_ANNOTATED = {"BT": 68, "CG": 16, "EP": 6, "FT": 2, "IS": 8, "LU": 45, "MG": 3, "SP": 103}


@requires_tool("gcc")
@pytest.mark.parametrize("dialect", ["openmp", "openmp-target"])
@pytest.mark.parametrize("name", sweep(npb_recall.BENCHMARKS, default=("CG", "EP", "IS", "MG")))
def test_npb_annotated_passes_its_own_verification(npb_tree, tmp_path, name, dialect):
    src = npb_tree / name / f"{name.lower()}.c"
    includes = [f"-I{npb_tree / 'common'}", f"-I{npb_tree / name}"]
    result = annotate_file(str(src), Options(include_dirs=(str(npb_tree / "common"), str(npb_tree / name))), dialect)
    floor = NPB_ANNOTATED if dialect == "openmp" else NPB_TARGET_ANNOTATED
    assert len(result.directives) >= floor[name], [d.text for d in result.directives]
    out = tmp_path / f"{name.lower()}.omp.c"
    out.write_text(result.source)
    exe = tmp_path / name
    subprocess.run([GCC, "-fopenmp", "-O2", "-w", *includes, str(out), *map(str, common_sources(npb_tree, name)),
                    "-o", str(exe), "-lm"], check=True, capture_output=True, text=True, timeout=600)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=1200, cwd=tmp_path,
                         env={**os.environ, "OMP_NUM_THREADS": "4"})
    assert run.returncode == 0 and VERIFIED.search(run.stdout), run.stdout[-3000:]


def test_the_command_says_what_it_cannot_read_and_annotates_the_rest(tmp_path):
    src = tmp_path / "bad.c"
    src.write_text("int f(int n) { int i; for (i = 0; i < n; i++) { x } return 0; }\n"
                   "void g(double *a, int n) {\n  int i;\n  for (i = 0; i < n; i++)\n    a[i] = 1;\n}\n")
    r = subprocess.run(["python", "-m", "c2gpu", "annotate", "--openmp", str(src)], capture_output=True, text=True)
    assert r.returncode == 1 and f"{src}:1:" in r.stderr and "error:" in r.stderr and "Traceback" not in r.stderr
    assert "  #pragma omp parallel for\n  for (i = 0; i < n; i++)\n    a[i] = 1;" in r.stdout
    again = subprocess.run(["python", "-m", "c2gpu", "annotate", "--openmp", str(src), "-o", str(src)],
                           capture_output=True, text=True)
    assert again.returncode == 2 and "would overwrite the input" in again.stderr
