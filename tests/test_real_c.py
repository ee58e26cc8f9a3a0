"""The C that is out there: common system headers, missing headers in port, K&R definitions, c2gpu pragmas
on any loop (issue "Real programs", item 5)."""
import re
import subprocess
import sys

import pytest

from c2gpu.diagnostics import C2GPUError
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program, load_program_recovering
from c2gpu.frontend.preprocess import INCLUDE_DIR
from c2gpu.drivers.port import PIPELINE, analyse_for_port, port_file
from c2gpu.drivers.verify import verify

from conftest import requires_tool, write_c


def _port(path, warnings=None):
    return analyse_for_port(str(path), PreprocessOptions(), make_manager(PIPELINE),
                            warn=(warnings.append if warnings is not None else lambda w: None))


def _by_line(outcomes):
    return {o.nest.loc.line: o for o in outcomes}


# ---------------------------------------------------------------------------------------------- headers

HEADERS = """#include <omp.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <ctype.h>
#include <malloc.h>
#include <getopt.h>
#include <signal.h>
#include <setjmp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <math.h>
#include <time.h>
jmp_buf env;
volatile sig_atomic_t stop;
static struct option opts[] = {{"size", required_argument, 0, 's'}, {0, 0, 0, 0}};
int setup(const char *path)
{
  struct stat st; struct rusage ru; omp_lock_t lock; mode_t m = S_IRUSR | S_IWUSR; uid_t u = 0;
  int fd = open(path, O_RDONLY);
  omp_init_lock(&lock);
  getrusage(RUSAGE_SELF, &ru);
  sched_yield();
  signal(SIGINT, SIG_IGN);
  return fd + isdigit(path[0]) + fstat(fd, &st) + (int)m + (int)u + omp_get_max_threads() + (int)omp_get_wtime();
}
void scale(int n, double *restrict a, const double *restrict b)
{
#pragma omp parallel for
  for (int i = 0; i < n; i++)
    a[i] = 2.0 * b[i];
}
"""


def test_common_system_headers_parse_and_the_nest_is_proven(tmp_path):
    """omp.h, sys/types.h, sys/stat.h, fcntl.h, ctype.h, malloc.h, getopt.h, signal.h, setjmp.h, ... together
    (each typedef is declared once), with their types and constants used; the OpenMP loop is ported."""
    src = write_c(tmp_path, HEADERS)
    _, outcomes = _port(src)
    assert [(o.nest.loc.line, o.ported) for o in outcomes] == [(36, True)], [o.reason for o in outcomes]


def test_every_c2gpu_header_parses_alone(tmp_path):
    """Each header stands alone (its own includes suffice); in one file, so one preprocessor run."""
    names = sorted(str(p.relative_to(INCLUDE_DIR)) for p in INCLUDE_DIR.rglob("*.h") if not p.name.startswith("_"))
    assert {"omp.h", "ctype.h", "fcntl.h", "getopt.h", "malloc.h", "setjmp.h", "signal.h", "sys/stat.h",
            "sys/types.h"} <= set(names)
    text = "".join(f"#include <{n}>\n" for n in names) + "void f(int n, int *restrict a) { for (int i = 0; i < n; i++) a[i] = i; }\n"
    program = load_program(str(write_c(tmp_path, text)))
    assert len(program.nests) == 1


# -------------------------------------------------------------------------------------- missing headers

MISSING = """#include <stdio.h>
#include "mylib.h"

void scale(int n, float *restrict a, const float *restrict b)
{
  for (int i = 0; i < n; i++)
    a[i] = 2.0f * b[i];
}

void with_macro(int n, float *restrict a, const float *restrict b)
{
  for (int i = 0; i < n; i++)
    a[i] = SCALE * b[i];
}

void with_call(int n, float *restrict a, const float *restrict b)
{
  for (int i = 0; i < n; i++)
    a[i] = my_op(b[i]);
}
"""


def test_port_goes_on_past_a_missing_header(tmp_path):
    src = write_c(tmp_path, MISSING)
    warnings = []
    _, outcomes = _port(src, warnings)
    assert len(warnings) == 1 and "mylib.h" in warnings[0].message and warnings[0].loc.line == 2
    by_line = _by_line(outcomes)
    assert by_line[6].ported, by_line[6].reason
    # a name declared nowhere in the file may come from the missing header: that nest is refused, saying so
    assert not by_line[12].ported and "'SCALE' is not declared (line 13)" in by_line[12].reason
    assert "'mylib.h'" in by_line[12].reason
    assert not by_line[18].ported and "'my_op' is not declared (called at line 19)" in by_line[18].reason
    # the user's #include lines stay as written (nvcc will have the real header)
    result = port_file(str(src), PreprocessOptions(), make_manager(PIPELINE), str(tmp_path / "t.cu"))
    assert '#include "mylib.h"' in result.text and [w.loc.line for w in result.warnings] == [2]


def test_cli_port_warns_about_the_missing_header(tmp_path):
    src = write_c(tmp_path, MISSING)
    r = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(src), "-o", str(tmp_path / "t.cu")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{src}:2:10: warning: mylib.h: No such file or directory" in r.stderr
    assert "1 of 3 nests ported" in r.stderr and "Traceback" not in r.stderr


def test_a_type_from_the_missing_header_is_an_error_that_names_it(tmp_path):
    src = write_c(tmp_path, '#include "types.h"\nvoid f(int n, real *a) { for (int i = 0; i < n; i++) a[i] = 0; }\n')
    with pytest.raises(C2GPUError) as e:
        _port(src)
    assert e.value.loc.line == 2 and "'types.h' could not be found" in e.value.message


# ------------------------------------------------------------------------------------------------- K&R

KNR = """#include <stdio.h>
#include <stdlib.h>

static void scale(n, a, b)
int n; float *restrict a; float *restrict b;
{
  int i;
  for (i = 0; i < n; i++)
    a[i] = 2.0f * b[i];
}

int count(n, a)
int *restrict a;
{
  int i;
  for (i = 0; i < n; i++)
    a[i] = a[i] + 1;
  return n;
}

int main(void)
{
  int i;
  float *a = malloc(100 * sizeof(float)), *b = malloc(100 * sizeof(float));
  int *c = malloc(100 * sizeof(int));
  for (i = 0; i < 100; i++) { b[i] = i; c[i] = i; }
  scale(100, a, b);
  count(100, c);
  printf("%f %d\\n", a[99], c[99]);
  return 0;
}
"""


def test_knr_definitions_get_their_declared_parameters(tmp_path):
    src = write_c(tmp_path, KNR)
    program, outcomes = _port(src)
    by_line = _by_line(outcomes)
    assert by_line[8].ported and by_line[16].ported, [o.reason for o in outcomes]
    scale = by_line[8].nest
    assert scale.params == ("n",)
    assert {(a.name, a.elem_type, a.storage, a.restrict) for a in scale.arrays} == \
        {("a", "float", "param-pointer", True), ("b", "float", "param-pointer", True)}
    # `n` of count() is declared by no declaration: an int, as in C89
    assert {s.name: s.ctype for s in by_line[16].nest.scalars}["n"] == "int"
    # C++ cannot compile a K&R definition: the port is split into .cu + .c
    result = port_file(str(src), PreprocessOptions(), make_manager(PIPELINE), str(tmp_path / "t.cu"))
    assert result.host_text is not None and any("K&R" in r and "scale()" in r for r in result.split_reasons)


def test_knr_definition_survives_a_syntax_error_elsewhere(tmp_path):
    """Error recovery splits the file at each declaration's `;`: a K&R parameter declaration is not one."""
    src = write_c(tmp_path, "int broken(;\n" + KNR)
    program, errors = load_program_recovering(str(src))
    assert [e.loc.line for e in errors] == [1]
    assert {n.function for n in program.nests} == {"scale", "count", "main"}
    assert next(n for n in program.nests if n.function == "scale").params == ("n",)


# ------------------------------------------------------------------------------------------- pragmas

INNER = """#include <stdio.h>
#include <stdlib.h>

int main(void)
{
  int n = 20, m = 64;
  float *a = malloc(m * sizeof(float)), *b = malloc(m * sizeof(float));
  float s = 0.0f;
  for (int i = 0; i < m; i++) { a[i] = i; b[i] = 1.0f; }
  for (int t = 0; t < n; t++) {
    a[0] = a[0] + 1.0f;
    s += b[t % m];
#pragma c2gpu port
    for (int i = 1; i < m; i++)
      b[i] = 0.5f * b[i] + a[0] + a[i] * t;
  }
  printf("%f %f\\n", b[m - 1], s);
  return 0;
}
"""


def test_port_pragma_on_an_inner_loop_selects_it(tmp_path):
    src = write_c(tmp_path, INNER)
    _, outcomes = _port(src)
    assert [(o.nest.loc.line, o.nest.region, o.ported) for o in outcomes] == [(14, "pragma", True)]
    assert "t" in {s.name for s in outcomes[0].nest.scalars}    # the host loop's variable, read by the nest
    text = port_file(str(src), PreprocessOptions(), make_manager(PIPELINE), str(tmp_path / "t.cu")).text
    host_loop = text.index("for (int t = 0; t < n; t++) {")
    call = text.index("{ c2gpu_main_14(")
    assert host_loop < text.index("s += b[t % m];") < call < text.index('printf("%f %f')


def test_c2gpu_pragmas_that_select_nothing_are_reported(tmp_path):
    src = write_c(tmp_path, """void f(int n, float *restrict a, float *restrict b)
{
#pragma c2gpu frobnicate
  for (int i = 0; i < n; i++) a[i] = 0;
#pragma c2gpu port
  b[0] = 1;
  {
#pragma c2gpu port
  }
}
""")
    program = load_program(str(src))
    notes = {(d.loc.line, d.code): d.message for d in program.diagnostics}
    assert "unknown c2gpu pragma 'c2gpu frobnicate'" in notes[(3, "unknown-pragma")]
    assert "followed by the statement at line 6, not by a for loop" in notes[(5, "unknown-pragma")]
    assert "followed by the end of the block" in notes[(8, "unknown-pragma")]


def test_c2gpu_pragma_inside_a_nest_taken_whole_is_reported(tmp_path):
    src = write_c(tmp_path, """void f(int n, float *restrict b)
{
  for (int i = 0; i < n; i++) {
#pragma c2gpu skip
    for (int j = 0; j < n; j++) b[i * n + j] = 0;
  }
}
""")
    program = load_program(str(src))
    assert [n.loc.line for n in program.nests] == [3]
    [note] = [d for d in program.diagnostics if d.code == "unknown-pragma"]
    assert note.loc.line == 4 and "inside the nest at line 3, which is analysed as a whole" in note.message


def test_skip_on_an_outer_loop_keeps_its_unmarked_loops_out(tmp_path):
    src = write_c(tmp_path, """void f(int n, float *restrict a, float *restrict b)
{
#pragma c2gpu skip
  for (int t = 0; t < n; t++)
    for (int i = 0; i < n; i++) a[i] += b[i];
  for (int t = 0; t < n; t++)
    for (int i = 0; i < n; i++) b[i] = 0;
}
""")
    program = load_program(str(src))
    assert [n.loc.line for n in program.nests] == [6]


@pytest.mark.slow
@requires_tool("g++")
@requires_tool("cc")
@pytest.mark.parametrize("text", [KNR, INNER], ids=["knr", "inner-pragma"])
def test_verify_knr_and_inner_pragma_ports(tmp_path, text):
    src = write_c(tmp_path, text)
    res = verify(str(src), PreprocessOptions(), make_manager(PIPELINE))
    assert res.ok, res.message


CONSTANT_CONDITIONS = r"""
#include <stdio.h>
#define DEBUG 0
#define TRUE 1
#define FALSE 0
#define TIMERS_ENABLED FALSE
#define N 100
void timer_start(int n) { printf("timer %d\n", n); }
double a[N], b[N];
int main(void) {
    for (int i = 0; i < N; i++) b[i] = i * 0.5;
    for (int i = 0; i < N; i++) {
        if (TIMERS_ENABLED == TRUE) timer_start(3);
        if (DEBUG) printf("%d\n", i);
        if (2 > 1) { double t = b[i] * 2; a[i] = t; } else a[i] = -1;
        if (!(DEBUG || 0)) a[i] += 1; else { printf("x"); }
    }
    printf("%f\n", a[7]);
    return 0;
}
"""


@requires_tool("nvcc")
def test_branches_under_a_constant_condition_that_never_run_are_left_out(tmp_path):
    """NPB's `if (TIMERS_ENABLED == TRUE) timer_start(3);`, `if (DEBUG) printf(...)`: the call never runs, so it
    neither blocks the proof nor goes into the kernel (where a host function would not compile); a branch that
    always runs stays.  The port compiles with nvcc and verifies."""
    path = write_c(tmp_path, CONSTANT_CONDITIONS)
    cu = tmp_path / "t.cu"
    r = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(path), "-o", str(cu)], capture_output=True, text=True)
    assert r.returncode == 0 and "ported nest main@12" in r.stderr, r.stderr
    assert "ifs whose condition is a constant (lines 13, 14, 15, 16): the branches that never run left out" in r.stderr
    kernel = cu.read_text().split("c2gpu_main_12_k0")[1]
    assert "timer_start" not in kernel and "printf" not in kernel and "a[i] = -1" not in kernel
    assert subprocess.run(["nvcc", "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "t.o")]).returncode == 0
    res = verify(str(path), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
    # a condition that reads a variable is no constant: the call blocks the proof
    src = CONSTANT_CONDITIONS.replace("if (DEBUG) printf", "if (N > b[0]) printf")
    (nest,) = [n for n in load_program(str(write_c(tmp_path, src)), PreprocessOptions()).nests if n.name == "main@12"]
    assert any("printf" in s.calls for s in nest.statements())


OLD_STORAGE_CLASSES = r"""
#include <stdio.h>
#define N 300
double a[N][N], b[N][N], c[N];

int main(void)
{
  for (int i = 0; i < N; i++) {
    c[i] = i % 5;
    for (int j = 0; j < N; j++)
      b[i][j] = (i * j) % 7;
  }
  for (int i = 0; i < N; i++) {
    register double r = c[i] * 2.0;
    for (int j = 0; j < N; j++) {
      auto double w = b[j][i];
      a[i][j] = w * r;
    }
  }
  printf("%g %g\n", a[3][4], a[N - 1][N - 2]);
  return 0;
}
"""


@requires_tool("nvcc")
def test_auto_and_register_locals_are_plain_locals_in_the_kernel(tmp_path):
    """C's `auto` and `register` say what a thread's local is anyway; CUDA's C++ reads `auto` as a type placeholder
    (`auto double w` does not compile) and dropped `register` in C++17: the kernel declares them without (before:
    nvcc's "invalid combination of type specifiers").  The port compiles with nvcc and verifies."""
    path = write_c(tmp_path, OLD_STORAGE_CLASSES)
    cu = tmp_path / "t.cu"
    r = subprocess.run([sys.executable, "-m", "c2gpu", "port", str(path), "-o", str(cu)], capture_output=True, text=True)
    assert r.returncode == 0 and "ported nest main@13" in r.stderr, r.stderr
    kernel = cu.read_text().split("__global__ void c2gpu_main_13_k0")[1]
    assert re.search(r"\bdouble w\b", kernel) and not re.search(r"\b(auto|register) double", kernel), kernel
    assert subprocess.run(["nvcc", "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "t.o")]).returncode == 0
    res = verify(str(path), PreprocessOptions(), make_manager(PIPELINE, {}))
    assert res.ok, res.message
