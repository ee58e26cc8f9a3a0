"""Irregular access: a gather (`a[idx[i]]`, read only) copies the whole declared array to the device and
indexes it as written; a scatter (a write through an index) or a gather from memory of unknown extent is
refused with the reason."""
from __future__ import annotations

from c2gpu.drivers.cli import main
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.pipeline import PORT

from conftest import requires_tool

GATHERS = """
#define N 1000
#define M 64
double a[N], t[M][N], b[N], c[N];
int idx[N];
int main(void) {
    for (int i = 0; i < N; i++) { a[i] = i * 0.5; idx[i] = (i * 37) % N; }
    for (int r = 0; r < M; r++)
        for (int i = 0; i < N; i++)
            t[r][i] = r + i;
    for (int i = 0; i < N; i++)
        b[i] = a[idx[i]] + 1.0;
    for (int i = 0; i < N; i++)
        c[i] = t[idx[i] % M][i];
    EXTRA
    return (int) (b[7] + c[9]);
}
"""


def outcomes(tmp_path, source: str):
    path = tmp_path / "t.c"
    path.write_text(source)
    manager = make_manager(list(PORT.passes), {})
    program = manager.run(load_program(str(path), PreprocessOptions()))
    return {n.name: (manager.result("plan", n), manager.errors_of(n)) for n in program.nests}


def test_gathers_copy_the_whole_array(tmp_path):
    from c2gpu.codegen.wrapper import build_nest_code
    path = tmp_path / "t.c"
    path.write_text(GATHERS.replace("EXTRA", ""))
    manager = make_manager(list(PORT.passes), {})
    program = manager.run(load_program(str(path), PreprocessOptions()))
    gather_a, gather_t = program.nests[-2:]
    code_a = build_nest_code(gather_a, manager.result("plan", gather_a))
    plan = {p.name: p for p in code_a.arrays}["a"]
    assert tuple(map(str, plan.copy_in)) == ("0", "1000") and plan.why == "read through a[idx[i]]: the whole array is copied in"
    code_t = build_nest_code(gather_t, manager.result("plan", gather_t))
    assert "c[i] = t[((idx[i] % 64) * (1000) + (i))];" in code_t.wrapper   # indexed as written, row-major


def test_a_scatter_is_refused(tmp_path):
    plans = outcomes(tmp_path, GATHERS.replace("EXTRA", "for (int i = 0; i < N; i++)\n        a[idx[i]] = b[i];"))
    plan, errors = list(plans.values())[-1]
    assert plan is None and errors
    assert "a[idx[i]]" in errors[-1].message


@requires_tool("cc")
@requires_tool("g++")
def test_gather_ports_verify(tmp_path, capsys):
    path = tmp_path / "t.c"
    path.write_text(GATHERS.replace("EXTRA", ""))
    assert main(["verify", str(path)]) == 0
    assert "verify: PASS: 4 nests checked" in capsys.readouterr().out
