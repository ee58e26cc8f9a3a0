"""Scatters and histograms (Statement.scatter, c2gpu/passes/dependence.py, codegen): `hist[data[i]]++` and
`a[idx[i]] += v` commute, so the loop is a reduction whose updates run as atomics, with the whole array copied
in and out.  verify cannot tell an atomic from a plain update (the CPU execution layer runs one thread at a
time), so the emitted kernels are checked to use atomics, in the plain and the tiled printer alike."""
from __future__ import annotations

import re

import pytest

from c2gpu.drivers.cli import main
from c2gpu.drivers.driver import make_manager
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.pipeline import PORT
from c2gpu.drivers.port import port_file

from conftest import TESTDATA, requires_tool

PROGRAM = """
#include <stdio.h>
#define N 5000
#define B 64
int hist[B], data[N];
float w[N], fh[B];
long lh[B];
int main(void) {
    for (int i = 0; i < N; i++) {
        data[i] = (i * 7919) % 1000;
        w[i] = (i % 13) * 0.25f;
    }
    for (int i = 0; i < N; i++) {
        hist[data[i] % B] += 2;
        fh[data[i] & (B - 1)] += w[i];
        if (data[i] > 500)
            lh[data[i] % B]--;
    }
    long s = 0;
    double f = 0;
    for (int b = 0; b < B; b++) {
        s += hist[b] * (b + 1) + lh[b];
        f += fh[b];
    }
    printf("%ld %f\\n", s, f);
    return 0;
}
"""


def analysed(tmp_path, source: str, **options):
    path = tmp_path / "t.c"
    path.write_text(source)
    manager = make_manager(list(PORT.passes), options)
    program = manager.run(load_program(str(path), PreprocessOptions()))
    return manager, program


def test_histogram_is_a_reduction_by_atomics(tmp_path):
    manager, program = analysed(tmp_path, (TESTDATA / "histogram.c").read_text())
    nest = program.nest("histogram@22")
    verdict = manager.result("dependence", nest).loop("i")
    assert verdict.status == "reduction" and verdict.reasons[0].message.startswith("scatter hist[data[i]] += over 'i'")
    res = port_file(str(TESTDATA / "histogram.c"), PreprocessOptions(), make_manager(list(PORT.passes), {}),
                    str(tmp_path / "h.c"))
    assert "atomicAdd(&hist[data[i]], 1);" in res.text
    assert "hist: updated through hist[data[i]] (atomics): the whole array is copied in and out" in res.text


def test_every_scatter_of_a_tiled_kernel_is_atomic(tmp_path):
    """The loop stages data[] in shared memory (the tiled printer): int +=, float += and long -- under an if
    are all atomics, the last as a 64-bit add of -1."""
    path = tmp_path / "t.c"
    path.write_text(PROGRAM)
    res = port_file(str(path), PreprocessOptions(), make_manager(list(PORT.passes), {}), str(tmp_path / "o.c"))
    kernel = next(k for o in res.ported for k in o.code.kernels if "hist" in k.text)
    assert "__shared__" in kernel.text
    assert re.search(r"atomicAdd\(&hist\[[^;]*% 64\], 2\);", kernel.text)
    assert re.search(r"atomicAdd\(&fh\[[^;]*& \(64 - 1\)\], w\[i\]\);", kernel.text)
    assert re.search(r"atomicAdd\(\(unsigned long long \*\)\(&lh\[[^;]*\]\), \(unsigned long long\)\(-1\)\);",
                     kernel.text)
    assert not re.search(r"(hist|fh|lh)\[[^;]*\] *(\+=|--)", kernel.text)


def test_exact_fp_keeps_a_floating_point_scatter_in_c_order(tmp_path):
    manager, program = analysed(tmp_path, PROGRAM, exact_fp=True)
    nest = program.nests[1]
    assert manager.result("plan", nest) is None


@pytest.mark.parametrize("body, why", [
    ("hist[data[i] % B] += 2; w[i] = hist[3];", "cannot be analysed"),          # the array also read elsewhere
    ("hist[data[i] % B] += hist[0];", "cannot be analysed"),                   # the update reads the array
    ("hist[data[i] % B] = hist[data[i] % B] + 1;", "cannot be analysed"),      # not an update statement
], ids=["read elsewhere", "reads itself", "plain assignment"])
def test_what_is_no_scatter_stays_unproven(tmp_path, body, why):
    src = PROGRAM.replace("""        hist[data[i] % B] += 2;
        fh[data[i] & (B - 1)] += w[i];
        if (data[i] > 500)
            lh[data[i] % B]--;""", "        " + body)
    manager, program = analysed(tmp_path, src)
    nest = program.nests[1]
    assert manager.result("plan", nest) is None
    assert any(why in f.message for f in manager.errors_of(nest)), manager.errors_of(nest)


def test_a_scatter_through_a_pointer_of_unknown_extent_is_refused(tmp_path):
    src = """
void count(int *h, const int *d, int n) {
    for (int i = 0; i < n; i++)
        h[d[i]]++;
}
"""
    path = tmp_path / "t.c"
    path.write_text(src)
    res = port_file(str(path), PreprocessOptions(), make_manager(list(PORT.passes), {"assume_no_alias": True}),
                    str(tmp_path / "o.c"))
    (o,) = res.outcomes
    assert not o.ported and "extent is unknown" in o.reason, o.reason


@requires_tool("cc")
@requires_tool("g++")
def test_scatter_ports_verify(tmp_path, capsys):
    path = tmp_path / "t.c"
    path.write_text(PROGRAM)
    assert main(["verify", str(path)]) == 0
    assert "verify: PASS: 3 nests checked" in capsys.readouterr().out
