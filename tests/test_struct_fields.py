"""Struct fields as the scalars and arrays they are (c2gpu/frontend/fields.py): `cfg.n` bounds a loop, `j->in`
and `j->out` are arrays, and the port passes the fields where the nest ran; what the renaming cannot vouch
for (a field written, a base reassigned) stays a flagged struct access.  An array of structs whose fields share
one scalar type (`dcomplex`) is an array of that type with the field as its last dimension
(frontend/context.py NestContext.field_of)."""
from __future__ import annotations

import subprocess

import pytest

from c2gpu.drivers.cli import main
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.pipeline import PORT

from conftest import requires_tool

PROGRAM = """
#include <stdlib.h>
#define N 200
struct config { int n; double a; };
double x[N], y[N];
typedef struct { int n; double *restrict in; double *restrict out; } job;
typedef struct { int n; double *a; double *b; double s; } vec;

void scale(struct config cfg) {
    for (int i = 0; i < cfg.n; i++)
        y[i] = cfg.a * x[i] + y[i];
}

void smooth(job *j) {
    for (int i = 1; i < j->n - 1; i++)
        j->out[i] = (j->in[i - 1] + j->in[i] + j->in[i + 1]) / 3.0;
}

void axpy(vec *v) {
    for (int i = 0; i < v->n; i++)
        v->b[i] = v->b[i] + v->s * v->a[i];
}

int main(void) {
    struct config c = { 150, 2.5 };
    job jb;
    vec v;
    jb.n = N;
    jb.in = malloc(N * sizeof(double));
    jb.out = malloc(N * sizeof(double));
    v.n = N;
    v.s = 0.5;
    v.a = malloc(N * sizeof(double));
    v.b = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 1.0 / (i + 1);
        jb.in[i] = i % 7;
        jb.out[i] = 0;
        v.a[i] = i % 5;
        v.b[i] = 1;
    }
    scale(c);
    smooth(&jb);
    axpy(&v);
    return (int) (y[10] + jb.out[5] + v.b[3]);
}
"""


def outcomes(tmp_path, source: str, **options):
    """nest name -> (its plan or None, its refusal messages, the nest)."""
    path = tmp_path / "t.c"
    path.write_text(source)
    manager = make_manager(list(PORT.passes), options)
    program = manager.run(load_program(str(path), PreprocessOptions()))
    return {n.name: (manager.result("plan", n), [f.message for f in manager.errors_of(n)] +
                     [f.message for f in n.all_flags()], n) for n in program.nests}


def test_fields_become_scalars_and_arrays_that_say_what_they_stand_for(tmp_path):
    got = outcomes(tmp_path, PROGRAM)
    plan, errors, nest = got["scale@10"]
    assert plan is not None, errors                       # cfg.n bounds the loop, cfg.a is a scalar
    assert dict(nest.stands_for) == {"cfg__n": "cfg.n", "cfg__a": "cfg.a"}
    plan, errors, nest = got["smooth@15"]
    assert plan is not None, errors                       # restrict fields: distinct arrays
    assert dict(nest.stands_for) == {"j__n": "j->n", "j__in": "j->in", "j__out": "j->out"}
    assert any("j__in is j->in" in note for note in plan.mapping.notes)


def test_pointer_fields_may_alias_like_pointer_parameters(tmp_path):
    plan, errors, _ = outcomes(tmp_path, PROGRAM)["axpy@20"]
    assert plan is None and any("'v__a' and 'v__b' may alias" in e for e in errors), errors
    plan, errors, _ = outcomes(tmp_path, PROGRAM, assume_no_alias=True)["axpy@20"]
    assert plan is not None, errors


@pytest.mark.parametrize("change, written", [
    ("        y[i] = cfg.a * x[i] + y[i];", "        { y[i] = cfg.a * x[i] + y[i]; cfg.a = y[i]; }"),
    ("    for (int i = 0; i < cfg.n; i++)", "    for (int i = 0; i < cfg.n; i++, cfg.n--)"),
], ids=["in the body", "in the header"])
def test_a_field_the_nest_writes_is_not_renamed(tmp_path, change, written):
    """A written field is no invariant scalar: it stays `cfg.a` (a flagged struct access), and the nest is
    refused."""
    plan, errors, nest = outcomes(tmp_path, PROGRAM.replace(change, written))["scale@10"]
    field = "cfg__a" if "cfg.a =" in written else "cfg__n"
    assert plan is None and field not in dict(nest.stands_for), (errors, nest.stands_for)


def test_a_base_the_nest_reassigns_is_not_renamed(tmp_path):
    src = """
typedef struct node { int v; struct node *next; } node;
int sum(node *p) {
    int s = 0;
    for (int i = 0; i < 10 && p; i++) {
        s += p->v;
        p = p->next;
    }
    return s;
}
"""
    ((plan, errors, nest),) = outcomes(tmp_path, src).values()
    assert plan is None and nest.stands_for == ()


def test_a_scalar_field_a_pointer_may_reach_blocks_the_proof(tmp_path):
    """v->b may point at v->s or v->n: a write through it may change the factor or the bound."""
    src = """
typedef struct { int n; double *b; double s; } vec;
void fill(vec *v) {
    for (int i = 0; i < v->n; i++)
        v->b[i] = v->s * i;
}
"""
    ((plan, errors, _),) = outcomes(tmp_path, src).values()
    assert plan is None and any("'v->s'" in e or "'v->n'" in e for e in errors), errors     # named as written


@requires_tool("cc")
@requires_tool("g++")
def test_ports_with_fields_verify(tmp_path, capsys):
    path = tmp_path / "t.c"
    path.write_text(PROGRAM)
    assert main(["verify", str(path), "--assume-no-alias"]) == 0
    assert "verify: PASS: 4 nests checked" in capsys.readouterr().out



OWN = r"""
#include <stdio.h>
typedef struct { double re; double im; } cplx;
#define N 300
cplx a[N];
double b[N], first;
void rotate(int n, int s) {          /* FT's fftz2: u1.real = u[ku+i].real in each branch, read after */
    cplx w;
    w.im = 3;
    for (int i = 0; i < n; i++) {
        if (s > 0) { w.re = a[i].re; w.im = a[i].im; } else { w.re = a[i].im; w.im = -a[i].re; }
        b[i] = w.re * w.re + w.im;
    }
}
void half(int n) {                   /* w.im is read, never written: the value before the nest */
    cplx w;
    w.im = 3;
    for (int i = 0; i < n; i++) { w.re = a[i].re; b[i] += w.re * w.im; }
}
int main(void) {
    for (int i = 0; i < N; i++) { a[i].re = i % 7; a[i].im = i % 5 - 2; }
    rotate(N, 1); first = b[7]; rotate(N, -1); half(N);
    printf("%f %f %f\n", first, b[7], b[9]);
    return 0;
}
"""


def test_the_functions_own_struct_is_written_by_field(tmp_path):
    """A struct variable of the function, automatic, its address never taken, used in the nest only by field and
    not read after it: its fields are scalars of their own, which the nest may write (and privatize)."""
    got = outcomes(tmp_path, OWN)
    plan, errors, nest = got["rotate@10"]
    assert plan is not None, errors
    assert dict(nest.stands_for) == {"w__re": "w.re", "w__im": "w.im"}
    plan, errors, nest = got["half@18"]
    assert plan is not None, errors
    # read after the nest, its address taken, used whole, or declared in the nest: the written field stays a
    # flagged struct access
    for change in ("b[i] = w.re * w.re + w.im;\n    }\n}", "b[i] = w.re * w.re + w.im;\n    }\n    first = w.re;\n}"), \
            ("cplx w;\n    w.im = 3;\n    for (int i = 0; i < n; i++) {\n        if", "cplx w, *p = &w;\n    w.im = 3;\n    for (int i = 0; i < n; i++) {\n        if"), \
            ("b[i] = w.re * w.re + w.im;", "b[i] = w.re * w.re + w.im; a[i] = w;"), \
            ("    for (int i = 0; i < n; i++) {\n        if (s", "    for (int i = 0; i < n; i++) {\n        cplx w;\n        if (s"):
        assert change[0] in OWN
        plan, errors, nest = outcomes(tmp_path, OWN.replace(*change))["rotate@10"]
        assert plan is None and "w__re" not in dict(nest.stands_for), (change, errors)


@requires_tool("nvcc")
def test_a_port_that_writes_the_functions_own_struct_compiles_and_verifies(tmp_path, capsys):
    """The host keeps the last iteration's values in the fields themselves (&(w.re)), which nvcc compiles."""
    path = tmp_path / "t.c"
    path.write_text(OWN)
    cu = tmp_path / "t.cu"
    assert main(["port", str(path), "-o", str(cu)]) == 0
    text = cu.read_text()
    assert "&(w.re), &(w.im)" in text and "&w__re" not in text
    assert subprocess.run(["nvcc", "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "t.o")],
                          capture_output=True, text=True).returncode == 0
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    assert "verify: PASS: 3 nests checked" in capsys.readouterr().out


COMPLEX = r"""
#include <stdio.h>
typedef struct { double real; double imag; } dcomplex;
#define NX 16
#define NY 8
#define NZ 4
static dcomplex u0[NZ][NY][NX], u1[NZ][NY][NX], row[NX];
static double ex[100];
static int indexmap[NZ][NY][NX];
#define crmul(c,a,b) {(c).real = (a).real * (b); (c).imag = (a).imag * (b);}
static void evolve(dcomplex u0[NZ][NY][NX], dcomplex u1[NZ][NY][NX], int t, int indexmap[NZ][NY][NX], int d[3]) {
  int i, j, k;
  for (k = 0; k < d[2]; k++)
    for (j = 0; j < d[1]; j++)
      for (i = 0; i < d[0]; i++)
        crmul(u1[k][j][i], u0[k][j][i], ex[t*indexmap[k][j][i]]);
}
int main(void) {
  int dims[3] = {NX, NY, NZ};
  for (int k = 0; k < NZ; k++) for (int j = 0; j < NY; j++) for (int i = 0; i < NX; i++) {
    u0[k][j][i].real = i + 0.5 * j; u0[k][j][i].imag = k - 0.25 * i; indexmap[k][j][i] = (i + j + k) % 20; }
  for (int i = 0; i < 100; i++) ex[i] = 1.0 / (i + 1);
  for (int t = 1; t <= 3; t++) evolve(u0, u1, t, indexmap, dims);
  /* the fields swap: real of one element from imag of the next, a dependence between fields */
  for (int i = 0; i < NX - 1; i++) { row[i].real = u1[1][2][i + 1].imag; row[i].imag = row[i].real * 2; }
  for (int i = 1; i < NX; i++) row[i].imag = row[i - 1].imag + row[i].real;
  double sr = 0, si = 0;
  for (int k = 0; k < NZ; k++) for (int j = 0; j < NY; j++) for (int i = 0; i < NX; i++) {
    sr += u1[k][j][i].real; si += u1[k][j][i].imag; }
  printf("%.12f %.12f %.12f\n", sr, si, row[NX - 1].imag);
  return 0;
}
"""


def test_arrays_of_structs_are_analysed_by_field(tmp_path):
    import c2gpu
    from conftest import verified_ports
    path = tmp_path / "c.c"
    path.write_text(COMPLEX)
    loops = {(n.name, lp.var): lp.status for n in c2gpu.analyze(str(path), run_cpu=False).nests for lp in n.loops}
    assert [loops[("evolve@13", v)] for v in "kji"] == ["parallel"] * 3
    assert loops[("main@25", "i")] == "parallel"              # one field written, the other read: distinct
    assert loops[("main@26", "i")] == "carried"               # row[i].imag from row[i - 1].imag
    program = load_program(str(path), PreprocessOptions())
    u0 = program.nest("evolve@13").array("u0")
    assert (u0.elem_type, u0.fields, [d.to_c() for d in u0.dims]) == ("double", ("real", "imag"), ["4", "8", "16", "2"])
    assert {"evolve@13", "main@25", "main@28"} <= verified_ports(tmp_path, COMPLEX)


def test_a_whole_struct_beside_its_fields_is_not_analysed(tmp_path):
    import c2gpu
    path = tmp_path / "w.c"
    path.write_text("""
typedef struct { double re, im; } cpx;
cpx a[100], b[100];
void f(void) { for (int i = 0; i < 100; i++) { a[i] = b[i]; a[i].re = 2 * b[i].im; } }""")
    (nest,) = c2gpu.analyze(str(path), run_cpu=False).nests
    assert nest.loops[0].status == "not-proven"
    assert "'a[i]' reads or writes a whole struct of 'a', which the nest also accesses by field" in nest.loops[0].reason
