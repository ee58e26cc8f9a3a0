"""Calls into the file, inlined (c2gpu/frontend/inline.py): the nest is analysed and ported with the callee's body
in place of the call.  Ports are run on the CPU execution layer against the original (three thread orders,
poisoned device memory); what must not be inlined stays a call, with its reason where the loop's verdict is.
"""
from __future__ import annotations

import re

import pytest

import c2gpu
from c2gpu.frontend import PreprocessOptions, load_program

from conftest import verified_ports

BLOCKS = r"""
#include <stdio.h>
#define N 40
static double lhs[N][N][3][5][5], rhs[N][N][5];
static double ce[5][13];
static void binv(double l[5][5], double c[5][5], double r[5]) {
  double pivot;
  int m;
  pivot = 1.00 / l[0][0];
  for (m = 1; m < 5; m++) l[0][m] = l[0][m] * pivot;
  for (m = 0; m < 5; m++) c[0][m] = c[0][m] * pivot;
  r[0] = r[0] * pivot;
}
static void matvec_sub(double ablock[5][5], double avec[5], double bvec[5]) {
  int i;
  for (i = 0; i < 5; i++)
    bvec[i] = bvec[i] - ablock[i][0]*avec[0] - ablock[i][1]*avec[1] - ablock[i][4]*avec[4];
}
static void exact(double xi, double *dtemp) {
  int m;
  for (m = 0; m < 5; m++) dtemp[m] = ce[m][0] + xi * ce[m][1];
}
int main(void) {
  int i, j, k, m, n;
  for (m = 0; m < 5; m++) for (n = 0; n < 13; n++) ce[m][n] = 0.1 * m + 0.01 * n;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) {
    exact(i * 0.1 + j, rhs[i][j]);
    for (k = 0; k < 3; k++) for (m = 0; m < 5; m++) for (n = 0; n < 5; n++)
      lhs[i][j][k][m][n] = 1.0 + m + n * 0.5 + k + (i + j) * 0.01;
  }
  for (i = 1; i < N; i++)
    for (j = 0; j < N; j++) {
      matvec_sub(lhs[i][j][0], rhs[i - 1][j], rhs[i][j]);
      binv(lhs[i][j][1], lhs[i][j][2], rhs[i][j]);
    }
  double s = 0;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) for (m = 0; m < 5; m++) s += rhs[i][j][m] + lhs[i][j][2][0][m];
  printf("%.12e\n", s);
  return 0;
}
"""


def nests(tmp_path, source: str) -> dict:
    """{name: (NestReport, the IR Nest)} of the program."""
    path = tmp_path / "a.c"
    path.write_text(source)
    program = load_program(str(path), PreprocessOptions())
    return {n.name: (n, program.nest(n.name)) for n in c2gpu.analyze(str(path), run_cpu=False).nests}


def test_blocks_of_one_array_passed_to_a_function_are_told_apart(tmp_path):
    found = nests(tmp_path, BLOCKS)
    solve, ir = found["main@31"]
    # the two blocks of lhs one call reads and writes are lhs[i][j][1] and lhs[i][j][2]: no dependence between
    # rows j; rhs[i - 1][j] is read from the previous i, so i stays on the host
    assert [(lp.var, lp.status) for lp in solve.loops[:2]] == [("i", "carried"), ("j", "parallel")]
    assert ir.inlined == ("binv", "matvec_sub")
    assert "inlined binv() (1 call), matvec_sub() (1 call)" in " ".join(ir.rewrites)
    assert {"main@26", "main@31"} <= verified_ports(tmp_path, BLOCKS)


@pytest.mark.parametrize("callee,call,why", [
    # the callee steps its pointer parameter: p[0] is another element in each iteration of its loop
    ("static void f(double *p, int n) { for (int k = 0; k < n; k++) { *p = 0; p++; } }", "f(a[i], 4);",
     "not inlined: it assigns its parameter 'p' or takes its address"),
    # a return before the end
    ("static void f(double *p, int n) { if (n < 0) return; p[0] = n; }", "f(a[i], 4);",
     "not inlined: it returns before its end"),
    # the callee uses the global `g`, which the caller hides behind a local of the same name
    ("static void f(double *p, int n) { p[0] = g * n; }", "{ double g = 2; f(a[i], 4); a[i][1] = g; }",
     "not inlined: the caller has a variable of its own named 'g', a global the function uses"),
    # the argument's subscript reads a global the callee changes: the call's argument is fixed at the call
    ("static void f(double *p, int n) { p[0] = n; ix = ix + 1; }", "f(a[ix], 4);",
     "not inlined: the argument for 'p' is indexed by 'ix', which the function may change"),
    # it calls itself
    ("static void f(double *p, int n) { if (n > 0) f(p, n - 1); p[0] = n; }", "f(a[i], 4);",
     "not inlined: it calls itself"),
])
def test_calls_that_cannot_be_inlined_stay_calls(tmp_path, callee, call, why):
    found = nests(tmp_path, f"""
double a[100][8]; double g; int ix;
{callee}
void h(void) {{ for (int i = 0; i < 100; i++) {call} }}""")
    ((nest, ir),) = [n for n in found.values() if n[0].name.startswith("h@")]
    assert nest.loops[0].status != "parallel"
    assert why in nest.loops[0].reason
    assert ir.inlined == ()


FIRST_ELEMENTS = r"""
#include <stdio.h>
#define N 30
static double u[N][N][N][5], face[2][3][5];
static double ce[5][3];
int nz = N;
static void exact(int i, int j, int k, double dtemp[5]) {     /* NPB's exact: fills one point's 5 values */
  for (int m = 0; m < 5; m++) dtemp[m] = ce[m][0] + i * ce[m][1] + j * ce[m][2] + k;
}
int main(void) {
  int i, j;
  for (int m = 0; m < 5; m++) for (int n = 0; n < 3; n++) ce[m][n] = 0.1 * m + 0.01 * n;
  for (i = 0; i < N; i++)                   /* LU's setbv: the address of a point's first value; nz a global */
    for (j = 0; j < N; j++) {
      exact(i, j, 0, &u[i][j][0][0]);
      exact(i, j, nz - 1, &u[i][j][nz - 1][0]);
    }
  for (i = 0; i < 2; i++)                   /* BT's initialize: &(face[i][0][0]) */
    exact(i, 0, 0, &(face[i][0][0]));
  double s = 0;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) for (int m = 0; m < 5; m++) s += u[i][j][0][m] + 2 * u[i][j][N - 1][m];
  for (i = 0; i < 2; i++) for (int m = 0; m < 5; m++) s += face[i][0][m];
  printf("%.12e\n", s);
  return 0;
}
"""


def test_the_address_of_a_first_element_is_the_array_it_starts(tmp_path):
    """`&u[i][j][0][0]` passed for `double dtemp[5]` is `u[i][j][0]`, the same pointer: the call is inlined; and
    `nz`, a global the callee never changes, may index the argument."""
    found = nests(tmp_path, FIRST_ELEMENTS)
    setbv, ir = found["main@13"]
    assert ir.inlined == ("exact",) and "exact() (2 calls)" in ir.rewrites[0]
    assert [(lp.var, lp.status) for lp in setbv.loops[:2]] == [("i", "parallel"), ("j", "parallel")]
    assert found["main@18"][1].inlined == ("exact",)
    assert {"main@13", "main@18"} <= verified_ports(tmp_path, FIRST_ELEMENTS)


# an inlined function whose loop becomes the grid with the caller's loop: the values the call passed are declared
# (`int c2gpu_exact_i = i;`) between the two mapped loops, and each thread computes them
SUNK_DECLARATIONS = r"""
#include <stdio.h>
static double face[40][20];
static double ce[20][3];
static void exact(int i, int j, double dtemp[20]) {
  for (int m = 0; m < 20; m++) dtemp[m] = ce[m][0] + i * ce[m][1] + j * ce[m][2];
}
int main(void) {
  int i;
  for (int m = 0; m < 20; m++) for (int n = 0; n < 3; n++) ce[m][n] = 0.1 * m + 0.01 * n;
  for (i = 0; i < 40; i++)
    exact(i, 0, &(face[i][0]));
  double s = 0;
  for (i = 0; i < 40; i++) for (int m = 0; m < 20; m++) s += face[i][m];
  printf("%.12e\n", s);
  return 0;
}
"""


def test_the_values_an_inlined_call_passes_are_computed_by_each_thread_of_the_grid_they_sit_in(tmp_path):
    """Before, code generation looked for the declaration of c2gpu_exact_i among the statements of the loops as
    written, not of the kernel's own view (where it sits between the mapped loops), and refused the nest: 'is
    declared in the body of a loop that stays on the host'."""
    found = nests(tmp_path, SUNK_DECLARATIONS)
    report, _ = found["main@11"]
    assert [lp.var for lp in report.loops] == ["i", "c2gpu_exact_m"], report.loops
    assert all(lp.role.startswith("grid") for lp in report.loops), (report.loops, report.refusal)
    assert "main@11" in verified_ports(tmp_path, SUNK_DECLARATIONS)


@pytest.mark.parametrize("callee,why", [
    # it changes the global the argument is indexed by, through a function it calls
    ("static void g(void) { nz = nz - 1; }\nstatic void f(double *p, int n) { p[0] = n; g(); }",
     "the argument for 'p' is indexed by 'nz', which the function may change"),
    # it writes through an int pointer, which may point to nz
    ("static void f(double *p, int n) { p[0] = n; *q = 1; }",
     "the argument for 'p' is indexed by 'nz', which the function may change"),
    # it calls a function whose body c2gpu cannot see
    ("void opaque(void);\nstatic void f(double *p, int n) { p[0] = n; opaque(); }",
     "the argument for 'p' is indexed by 'nz', which the function may change"),
])
def test_a_global_index_the_callee_may_change_keeps_the_call(tmp_path, callee, why):
    found = nests(tmp_path, f"""
double a[200][8]; int nz = 7; int *q;
{callee}
void h(void) {{ for (int i = 0; i < 100; i++) f(&a[i + nz][0], 4); }}""")
    ((nest, ir),) = [n for n in found.values() if n[0].name.startswith("h@")]
    assert nest.loops[0].status != "parallel" and why in nest.loops[0].reason
    assert ir.inlined == ()


SEEDS = r"""
#include <stdio.h>
#define N 256
#define M 64
double out[N], seeds[N];
static double rng(double *seed, double a) {   /* NPB's randlc: steps its seed through the pointer, returns a value */
  double t = a * (*seed);
  *seed = t - (int)t;
  return *seed * 0.5;
}
static void fill(int n, double *seed, double y[]) {   /* NPB's vranlc: y[1..n], called with x - 1 */
  int i;
  double s = *seed;
  for (i = 1; i <= n; i++) { s = s * 3.7 - (int)(s * 3.7); y[i] = s; }
  *seed = s;
}
void run(int n) {
  int k, i;
  double t1, t3, local[M];
  for (k = 0; k < n; k++) {
    t1 = 0.1 + k * 0.001;
    t3 = rng(&t1, 3.9);
    fill(M, &t1, local - 1);
    double s = t3;
    for (i = 0; i < M; i++) s += local[i];
    out[k] = s;
    seeds[k] = t1;
  }
}
int main(void) { run(N); printf("%.15f %.15f\n", out[17], seeds[200]); return 0; }
"""


def test_values_addresses_and_moved_arrays_are_inlined(tmp_path):
    """`t3 = rng(&t1, 3.9)` (the returned value assigned after the body, *seed is t1) and `fill(M, &t1, local - 1)`
    (y[i] is local[i - 1]): each iteration of k has its own t1 and its own local, written before they are read."""
    found = nests(tmp_path, SEEDS)
    nest, ir = found["run@20"]
    assert nest.loops[0].status == "parallel", nest.loops[0].reason
    assert ir.inlined == ("fill", "rng")
    assert "run@20" in verified_ports(tmp_path, SEEDS)


@pytest.mark.parametrize("change, why", [
    # the pointer compared or indexed: not just the variable it points to; a return before the end
    (("  *seed = t - (int)t;", "  *seed = t - (int)t; if (seed == 0) t = 1;"), "it uses its parameter 'seed' other than as *p"),
    (("  *seed = t - (int)t;", "  *seed = t - (int)t; if (t > 1) return 0;"), "it returns before its end"),
    (("double s = *seed;", "double s = seed[1];"), "it uses its parameter 'seed' other than as *p"),
    # an array moved by a global the callee could change
    (("fill(M, &t1, local - 1);", "fill(M, &t1, local - g);"), "the argument for 'y' is moved by 'g'"),
    # the address of a global: another name for memory the function may reach
    (("t3 = rng(&t1, 3.9);", "t3 = rng(&g2, 3.9);"), "not the address of a local double variable"),
])
def test_values_and_addresses_that_cannot_be_inlined(tmp_path, change, why):
    src = SEEDS.replace("double out[N], seeds[N];", "double out[N], seeds[N], g2; int g;").replace(*change)
    assert change[0] in SEEDS
    nest, ir = nests(tmp_path, src)["run@20"]
    assert nest.loops[0].status != "parallel" and why in nest.loops[0].reason, nest.loops[0].reason


SEED_SEARCH = r"""
#include <stdio.h>
#define N 256
double out[N];
static double rng(double *seed, double a) {
  double t = a * (*seed);
  *seed = t - (int)t;
  return *seed * 0.5;
}
void run(int n) {
  int k, i, kk, ik;
  double t1, t2, t3;
  for (k = 0; k < n; k++) {
    kk = k + 3;
    t1 = 0.3; t2 = 0.7; t3 = 0;
    for (i = 1; i <= 100; i++) {      /* NPB EP: the seed of the k-th batch, by halving kk */
      ik = kk / 2;
      if (2 * ik != kk) t3 = rng(&t1, t2);
      if (ik == 0) break;
      t3 = rng(&t2, t2);
      kk = ik;
    }
    out[k] = t1 + t3;
  }
}
int main(void) { run(N); printf("%.15f %.15f\n", out[17], out[200]); return 0; }
"""


def test_a_function_inlined_twice_in_a_loop_run_whole(tmp_path):
    """The loop with a break runs whole in each thread; rng's locals, declared by both of its inlined bodies, are
    one private scalar of the thread each."""
    nest, ir = nests(tmp_path, SEED_SEARCH)["run@13"]
    assert nest.loops[0].status == "parallel", nest.loops[0].reason
    assert "run@13" in verified_ports(tmp_path, SEED_SEARCH)


RANDOM_C = r"""
#define R23 (0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5*0.5)
static double scale = 2.0;
double randlc(double *x, double a) {
  double t = a * (*x) * R23;
  *x = t - (int)t;
  return *x;
}
double scaled(double *x) {        /* a global of its own file: 'scale' here would be another variable */
  *x = *x * scale;
  return *x;
}
"""

MAIN_C = r"""
#include <stdio.h>
#define N 300
#define M 128
double randlc(double *x, double a);
double scaled(double *x);
static double work[M];            /* only main names it, and main runs once: one per thread of k */
double out[N], scale = 3.0;
int main(void) {
  int k, i;
  double seed, t;
  for (k = 0; k < N; k++) {
    seed = 0.5 + k * 0.001;
    for (i = 0; i < M; i++) work[i] = randlc(&seed, 1234567.0);
    t = 0;
    for (i = 0; i < M; i++) t += work[i];
    out[k] = t;
  }
  for (k = 0; k < N; k++) { seed = k; t = scaled(&seed); out[k] += t; }
  printf("%.15f %.15f\n", out[3], out[299]);
  return 0;
}
"""


def test_the_programs_other_files_are_read_where_the_file_calls_them(tmp_path):
    """--extra-source names the program's other files: a call to a function defined there is inlined like one
    of the file's own (NPB EP's randlc, in common/c_randdp.c), with that file's macros; one that uses a global
    of its file is not (the file's own 'scale' is another object).  The static array only main names is
    private to each k.  The port links the other file and verifies."""
    main_c, random_c = tmp_path / "main.c", tmp_path / "random.c"
    main_c.write_text(MAIN_C)
    random_c.write_text(RANDOM_C)
    opts = PreprocessOptions(program_files=(str(random_c),))
    program = load_program(str(main_c), opts)
    first, second = program.nest("main@12"), program.nest("main@19")
    assert first.inlined == ("randlc",) and second.inlined == ()
    assert any("not inlined: it is defined in another file and uses 'scale', a global of that file" in f.message
               for f in second.all_flags()), [f.message for f in second.all_flags()]
    from c2gpu.drivers.driver import make_manager
    from c2gpu.drivers.port import PIPELINE
    manager = make_manager(PIPELINE, {})
    program = manager.run(program)
    assert manager.result("dependence", program.nest("main@12")).loop("k").status == "parallel"
    # without the other file, the call is one c2gpu cannot see into
    assert load_program(str(main_c), PreprocessOptions()).nest("main@12").inlined == ()
    from c2gpu.drivers.cli import main as cli
    assert cli(["verify", str(main_c), "--extra-source", str(random_c)]) == 0


def test_a_nest_that_calls_whole_phases_stays_a_nest_of_calls(tmp_path):
    # inlining would add more than MAX_GROWTH nodes: nothing is inlined (and the callee's own nest is analysed)
    body = "\n".join(f"  p[{k}] = p[{k}] * 1.5 + q[{k}];" for k in range(700))
    found = nests(tmp_path, f"""
double a[100][700], b[100][700];
static void phase(double *p, double *q) {{
{body}
}}
void h(void) {{ for (int i = 0; i < 100; i++) phase(a[i], b[i]); }}""")
    ((nest, ir),) = [n for n in found.values() if n[0].name.startswith("h@")]
    assert "call to 'phase'" in nest.loops[0].reason and ir.inlined == ()
    assert "not inlined: inlining the nest's calls would add more than 6000 syntax-tree nodes" in nest.loops[0].reason


def test_lines_of_a_function_inlined_from_another_file_name_that_file(tmp_path, capsys):
    """A dependence inside code inlined from another file of the program (--extra-source) is reported at that
    file's line, `lib.c:5`, not at "line 5", which in the nest's file is another statement."""
    from c2gpu.drivers.cli import main
    (tmp_path / "lib.c").write_text("void fill(double *t, int k)\n{\n  int i;\n  for (i = 0; i < 4; i++)\n"
                                    "    t[i] = k * i;\n}\n")
    (tmp_path / "main.c").write_text("#include <stdio.h>\nvoid fill(double *t, int k);\n"
                                     "static double t[4], out[100];\nint main(void)\n{\n  int k;\n"
                                     "  for (k = 0; k < 100; k++) {\n    fill(t, k);\n    out[k] = t[0] + t[3];\n  }\n"
                                     "  printf(\"%g %g\\n\", out[99], t[1]);\n  return 0;\n}\n")
    assert main(["analyze", str(tmp_path / "main.c"), "--extra-source", str(tmp_path / "lib.c"), "--no-run",
                 "--gpu", "none"]) == 0
    out = capsys.readouterr().out
    assert "carries an output dependence on t: t[c2gpu_fill_i] (lib.c:5) overwrites the element of t written by " \
           "t[c2gpu_fill_i] (lib.c:5)" in out, out
    assert re.search(r"c2gpu_fill_i +lib\.c:4 +parallel", out), out          # the loop's own row
    assert "(line 5)" not in out, out


def test_two_inlined_calls_reading_a_small_array_share_one_tile(tmp_path):
    """Both calls of exact() read ce[m][*] in loops of their own: one shared-memory copy of ce, loaded once,
    serves both (c2gpu/planning/shared_tiles.py _one_tile_per_region), and the port still computes what the
    original computes (test_the_address_of_a_first_element_is_the_array_it_starts verifies it)."""
    path = tmp_path / "a.c"
    path.write_text(FIRST_ELEMENTS)
    report = c2gpu.analyze(str(path), gpu="h100-sxm", run_cpu=False)
    cuda = report.nest("main@13").cuda
    assert cuda.count("__shared__ double c2gpu_sh_ce") == 1, cuda
    assert cuda.count("c2gpu_sh_ce[") >= 3          # its load and the two calls' reads
