"""Aliasing facts from the whole file (c2gpu/frontend/objects.py): pointers the file shows point to distinct
objects (new memory, different arrays passed at every call, swapped buffers) do not block a loop; anything
the file leaves open (a copy, an overlapping argument, a function callable from elsewhere) still does."""
from __future__ import annotations

import pytest

from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.pipeline import PassManager
from c2gpu.registry import available_passes

from conftest import requires_tool


def verdicts(tmp_path, source: str, function: str | None = None) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """loop variable (C name) -> (status, first reason, notes) for the nests of `function` (all when None)."""
    path = tmp_path / "t.c"
    path.write_text(source)
    manager = PassManager(available_passes(), ["normalize", "dependence"], {})
    program = manager.run(load_program(str(path), PreprocessOptions()))
    out = {}
    for nest in program.nests:
        if function is not None and nest.function != function:
            continue
        info = manager.result("dependence", nest)
        for lp in nest.loops():
            v = info.verdicts[lp.lid]
            name = lp.origin.var if lp.origin is not None else lp.var
            out[name] = (v.status, v.reasons[0].message if v.reasons else "", info.notes)
    return out


TWO_MALLOCS = """
#include <stdlib.h>
void setup(int n) {
    double *a = (double *) malloc(sizeof(double) * n);
    double *b = %s;
    for (int i = 0; i < n; i++) {
        a[i] = 0.0;
        b[i] = i * 2.5;
    }
    free(a);
}
"""


def test_two_new_blocks_do_not_alias(tmp_path):
    v = verdicts(tmp_path, TWO_MALLOCS % "malloc(sizeof(double) * n)")
    status, _, notes = v["i"]
    assert status == "parallel"
    assert any("distinct objects" in n and "'a' (line 4), assigned only new memory (malloc)" in n for n in notes), notes


@pytest.mark.parametrize("second, proven", [
    ("({ double *p = malloc(sizeof(double) * n); if (!p) abort(); p; })", True),   # a GNU xmalloc
    ("({ double *p = malloc(sizeof(double) * n); p = a; p; })", False),            # assigned again
    ("({ double *p = malloc(sizeof(double) * n); double *q = p; q; })", False),    # not the pointer it declares
    ("({ double *p = malloc(sizeof(double) * n); g = p; p; })", False),            # escapes
])
def test_a_statement_expression_that_allocates_is_new_memory(tmp_path, second, proven):
    source = "double *g;\n" + TWO_MALLOCS % second
    status, reason, _ = verdicts(tmp_path, source)["i"]
    assert (status == "parallel") == proven, (status, reason)


@pytest.mark.parametrize("second", ["&a[2]", "(double *) a"])
def test_a_pointer_into_the_same_block_still_aliases(tmp_path, second):
    status, reason, _ = verdicts(tmp_path, TWO_MALLOCS % second)["i"]
    assert status == "unknown" and "may alias" in reason


@pytest.mark.parametrize("second, status", [("a", "parallel"), ("a + 1", "carried")])
def test_a_pointer_the_function_sets_once_into_the_block_is_read_as_it(tmp_path, second, status):
    """b = a (+ 1), assigned nowhere else (frontend/row_pointers.py): b[i] is a[i] (+ 1), one array, and the
    verdict is exact: each iteration writes its own element twice (parallel), or the element the next one
    writes first (carried)."""
    found, reason, _ = verdicts(tmp_path, TWO_MALLOCS % second)["i"]
    assert found == status, reason


def test_a_pointer_of_unknown_origin_still_aliases(tmp_path):
    src = TWO_MALLOCS.replace("void setup(int n) {", "double *other(int);\nvoid setup(int n) {") % "other(n)"
    status, reason, _ = verdicts(tmp_path, src)["i"]
    assert status == "unknown" and "'a' and 'b' may alias" in reason


def test_an_address_taken_pointer_is_unknown(tmp_path):
    src = TWO_MALLOCS.replace("    free(a);", "    keep(&b);\n    free(a);").replace(
        "void setup(int n) {", "void keep(double **);\nvoid setup(int n) {") % "malloc(8 * n)"
    status, reason, _ = verdicts(tmp_path, src)["i"]
    assert status == "unknown" and "may alias" in reason


CALLED = """
%s void add(double *x, double *y, int n) {
    for (int i = 0; i < n; i++)
        y[i] = y[i] + x[i];
}
double a[100], b[100];
%s
"""


@pytest.mark.parametrize("storage, caller, proven", [
    ("static", "int main(void) { add(a, b, 100); return 0; }", True),
    ("", "int main(void) { add(a, b, 100); return 0; }", True),             # the file is the whole program
    ("", "void run(void) { add(a, b, 100); }", False),                       # no main: others may call add
    ("static", "void run(void) { add(a, b, 100); }", True),                  # static: all its calls are here
    ("static", "int main(void) { add(a, b, 50); add(b, a, 50); return 0; }", True),   # distinct at each call
    ("static", "int main(void) { add(a, b, 50); add(a, a + 1, 50); return 0; }", False),
    ("static", "int main(void) { void (*f)(double *, double *, int) = add; f(a, b, 9); return 0; }", False),
    ("static", "void mid(double *p, double *q) { add(p, q, 10); }\n"
               "int main(void) { mid(a, b); mid(b, a); return 0; }", True),     # through a caller's parameters
    ("static", "void mid(double *p, double *q) { add(p, q, 10); }\n"
               "int main(void) { mid(a, b); mid(b, b); return 0; }", False),
])
def test_parameters_point_where_every_call_says(tmp_path, storage, caller, proven):
    status, reason, notes = verdicts(tmp_path, CALLED % (storage, caller), "add")["i"]
    if proven:
        assert status == "parallel", reason
        assert any("at the call of add()" in n or "calls of add()" in n for n in notes), notes
    else:
        assert status == "unknown" and "may alias" in reason


POLYBENCH_STYLE = """
#include <stdlib.h>
static void kernel(int n, double A[10][10], double B[10][10]) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            B[i][j] = A[i][j] * 2.0;
}
double *fresh(int n) {
    double *p = (double *) malloc(n * sizeof(double));
    if (!p)
        exit(1);
    return p;
}
int main(void) {
    double (*A)[10][10];
    A = (double (*)[10][10]) fresh(100);
    double (*B)[10][10] = (double (*)[10][10]) %s;
    kernel(10, *A, *B);
    return 0;
}
"""


def test_pointers_to_arrays_from_an_allocating_function(tmp_path):
    v = verdicts(tmp_path, POLYBENCH_STYLE % "fresh(100)", "kernel")
    assert v["i"][0] == "parallel" and v["j"][0] == "parallel"


def test_the_same_block_twice_still_aliases(tmp_path):
    v = verdicts(tmp_path, POLYBENCH_STYLE % "A", "kernel")
    assert v["i"][0] == "unknown" and "may alias" in v["i"][1]


SWAP = """
#include <stdlib.h>
double *u1, *u2;
int n = 10;
int main(void) {
    u1 = malloc(n * sizeof(double));
    u2 = malloc(n * sizeof(double));
    for (int t = 0; t < 10; t++) {
        for (int i = 1; i < n - 1; i++)
            u2[i] = u1[i - 1] + u1[i + 1];
        %s
    }
    return 0;
}
"""


def test_swapped_buffers_stay_distinct(tmp_path):
    v = verdicts(tmp_path, SWAP % "double *tmp = u1; u1 = u2; u2 = tmp;")
    assert v["i"][0] == "parallel", v["i"]
    assert v["t"][0] != "parallel"           # the swap is in t: u1 names another buffer in the next iteration


@pytest.mark.parametrize("tail", [
    "u1 = u2;",                                          # not a swap: u1 and u2 are then the same buffer
    "double *tmp = u1; u1 = u2; u2 = tmp; u1 = tmp;",    # a copy of a swapped pointer
    "double *tmp = u2; u1 = tmp;",
])
def test_anything_but_a_swap_may_make_them_alias(tmp_path, tail):
    v = verdicts(tmp_path, SWAP % tail)
    assert v["i"][0] == "unknown" and "may alias" in v["i"][1], v["i"]


def test_a_copy_of_a_swapped_pointer_is_unknown(tmp_path):
    src = SWAP.replace("double *u1, *u2;", "double *u1, *u2, *keep;").replace(
        "u2 = malloc(n * sizeof(double));", "u2 = malloc(n * sizeof(double));\n    keep = u1;").replace(
        "u2[i] = u1[i - 1] + u1[i + 1];", "u2[i] = keep[i - 1] + keep[i + 1];")
    v = verdicts(tmp_path, src % "double *tmp = u1; u1 = u2; u2 = tmp;")
    assert v["i"][0] == "unknown" and "'keep' and 'u2' may alias" in v["i"][1], v["i"]


def test_a_global_pointer_of_a_file_without_main_is_unknown(tmp_path):
    src = SWAP.replace("int main(void) {", "int step(void) {") % ""
    v = verdicts(tmp_path, src)
    assert v["i"][0] == "unknown" and "may alias" in v["i"][1]


@requires_tool("cc")
@requires_tool("g++")
def test_a_port_that_relies_on_the_facts_verifies(tmp_path, capsys):
    from c2gpu.drivers.cli import main
    path = tmp_path / "t.c"
    path.write_text(CALLED % ("static", """
int main(void) {
    for (int i = 0; i < 100; i++) { a[i] = i; b[i] = 2 * i; }
    add(a, b, 100);
    add(b, a, 100);
    return (int) a[7] % 7;
}"""))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "PASS: 2 nests checked" in out, out          # main's loop and add's, whose port relies on the facts
