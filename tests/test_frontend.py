"""Preprocessing, parsing and source mapping."""
import subprocess
from pathlib import Path

import pytest
from pycparser import c_ast

from c2gpu.diagnostics import C2GPUError
from c2gpu.frontend import PreprocessOptions, load_program
from c2gpu.frontend.preprocess import parse_define

from conftest import TESTDATA, write_c

ALL_HEADERS = """
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <stdint.h>
#include <stdbool.h>
#include <time.h>
"""


def test_libc_headers_parse_and_math_is_known(tmp_path):
    src = write_c(tmp_path, ALL_HEADERS + """
void k(int n, float *restrict y, const double *restrict x, uint8_t *restrict m) {
  for (int i = 0; i < n; i++) {
    y[i] = sqrtf(y[i]) + expf(y[i]) + fabsf(y[i]);
    m[i] = (uint8_t)(x[i] > 0.5);
  }
}
""")
    prog = load_program(str(src))
    (nest,) = [n for n in prog.nests if n.function == "k"]
    s1 = nest.statements()[0]
    assert dict(s1.ops) == {"fp32_add": 3, "fp32_sqrt": 1, "fp32_special": 1}
    assert not nest.all_flags()          # math calls are not unknown calls
    assert nest.array("m").elem_size == 1 and nest.array("x").elem_type == "double"


def test_defines_and_include_dirs(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "sizes.h").write_text("#define M (N / 2)\n")
    src = write_c(tmp_path, '#include "sizes.h"\nfloat a[N];\nvoid f(void) {\n  for (int i = 0; i < M; i++) a[i] = 0;\n}\n')
    prog = load_program(str(src), PreprocessOptions(defines=(("N", "100"),), include_dirs=(str(inc),)))
    assert prog.nests[0].root.trip_count.to_c() == "50"
    assert prog.nests[0].array("a").dims[0].to_c() == "100"


def test_locations_point_at_user_lines_after_includes_and_macros(tmp_path):
    src = write_c(tmp_path, ALL_HEADERS + "#define SQ(x) ((x)*(x))\nfloat a[10];\nvoid f(void) {\n\n  for (int i = 0; i < 10; i++)\n    a[i] = SQ(a[i]);\n}\n")
    prog = load_program(str(src))
    n = prog.nests[0]
    assert (n.loc.file, n.loc.line, n.loc.col) == (str(src), 13, 3)
    assert n.statements()[0].loc.line == 14


def test_already_preprocessed_file(tmp_path):
    c = write_c(tmp_path, "#define N 8\nfloat a[N];\nvoid f(void) { for (int i = 0; i < N; i++) a[i] = i; }\n", "orig.c")
    pre = subprocess.run(["cpp", str(c)], capture_output=True, text=True, check=True).stdout
    i_file = write_c(tmp_path, pre, "orig.i")
    prog = load_program(str(i_file))
    assert prog.nests[0].root.trip_count.to_c() == "8"
    assert prog.nests[0].loc.file == str(c) and prog.nests[0].loc.line == 3


def test_non_utf8_bytes_in_comments_and_strings(tmp_path):
    p = tmp_path / "latin1.c"
    p.write_bytes(b'/* caf\xe9 */\nconst char *s = "\xff\xfe";\nfloat a[4];\nvoid f(void) { for (int i = 0; i < 4; i++) a[i] = 1; }\n')
    prog = load_program(str(p))
    assert len(prog.nests) == 1


def test_binary_garbage_is_rejected(tmp_path):
    p = tmp_path / "garbage.c"
    p.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(C2GPUError, match="binary"):
        load_program(str(p))


def test_gnu_extensions_are_tolerated(tmp_path):
    src = write_c(tmp_path, "static __inline__ int sq(int x) __attribute__((const));\n"
                            "void f(int n, float *__restrict__ a) { for (int i = 0; i < n; i++) a[i] = 0; }\n")
    prog = load_program(str(src))
    assert prog.nests[0].array("a").restrict


@pytest.mark.parametrize("text,expected", [("N=64", ("N", "64")), ("DEBUG", ("DEBUG", "1")), ("F(x)=x", ("F(x)", "x"))])
def test_parse_define(text, expected):
    assert parse_define(text) == expected


def test_parse_define_rejects_garbage():
    with pytest.raises(C2GPUError):
        parse_define("1N=3")


def test_deep_nest_within_recursion_limits(tmp_path):
    depth = 40
    vars_ = [f"i{k}" for k in range(depth)]
    body = "a[0] += 1;"
    for v in reversed(vars_):
        body = f"for (int {v} = 0; {v} < 2; {v}++) {{ {body} }}"
    src = write_c(tmp_path, f"float a[1];\nvoid f(void) {{ {body} }}\n")
    prog = load_program(str(src))
    assert len(prog.nests[0].loops()) == depth


def test_pragmas_select_and_skip(testdata):
    prog = load_program(str(testdata / "selected.c"))
    assert [n.function for n in prog.nests] == ["scale_rows"]
    assert prog.nests[0].region == "pragma"
    skipped = [f for f in prog.diagnostics if f.code == "skipped"]
    assert any("skipped by '#pragma c2gpu skip'" in f.message for f in skipped)
    assert any("not marked '#pragma c2gpu port'" in f.message for f in skipped)


def test_scop_regions(testdata):
    prog = load_program(str(testdata / "polybench" / "gemm.c"), PreprocessOptions(include_dirs=(str(testdata / "polybench"),)))
    assert [n.function for n in prog.nests] == ["kernel_gemm"]
    assert prog.nests[0].region == "scop"
    assert all(f.code == "skipped" and "outside '#pragma scop'" in f.message for f in prog.diagnostics)


# --------------------------------------------------------------------------- c2gpu's headers parsed once
POLYBENCH = Path(__file__).resolve().parent.parent / "testdata" / "corpora" / "polybench-c-4.2.1"


def _shown(ast) -> str:
    import io
    buf = io.StringIO()
    ast.show(buf=buf, showcoord=True, attrnames=True, nodenames=True)
    return buf.getvalue()


def _polybench(*names):
    return [(POLYBENCH / n, (str(POLYBENCH / "utilities"),)) for n in names]


@pytest.mark.parametrize("path,includes", [(p, ()) for p in sorted(TESTDATA.glob("*.c"))] + _polybench(
    "linear-algebra/blas/gemm/gemm.c", "stencils/seidel-2d/seidel-2d.c", "medley/nussinov/nussinov.c"),
    ids=lambda v: getattr(v, "name", None) or "")
def test_the_shared_header_prefix_gives_the_ast_a_whole_parse_gives(path, includes):
    """The declarations c2gpu's headers put before a file's own lines are parsed once per process and shared
    (c2gpu.frontend.parse.header_prefix): the AST, coordinates included, is the one parsing the whole text
    gives."""
    from c2gpu.frontend.parse import _Parser, _parse, header_prefix
    from c2gpu.frontend.preprocess import preprocess
    text = preprocess(str(path), PreprocessOptions(include_dirs=includes))
    assert _shown(_parse(_Parser(), text, str(path))) == _shown(_Parser().parse(text, str(path)))
    if "#include <stdio.h>" in path.read_text().split("\n#define", 1)[0]:
        assert header_prefix(text)[1] > 0                 # split where the file's own declarations begin


def test_files_share_one_header_prefix_and_analysis_leaves_it_as_parsed(tmp_path, capsys):
    """gemm and atax include the same headers first: one prefix, whose nodes every analysis of either file
    then shares, so nothing may change them."""
    from c2gpu.drivers.cli import main
    from c2gpu.frontend import parse
    parse._PREFIXES.clear()
    files = [str(p) for p, _ in _polybench("linear-algebra/blas/gemm/gemm.c", "linear-algebra/kernels/atax/atax.c")]
    assert main(["analyze", files[0], "-I", str(POLYBENCH / "utilities"), "--gpu", "none"]) == 0
    (before,) = [(_shown(c_ast.FileAST(list(e))), dict(n)) for e, n in parse._PREFIXES.values()]
    for argv in (["analyze", *files, "--gpu", "a100", "--no-run"], ["port", files[1], "-o", str(tmp_path / "atax.cu")]):
        main([*argv, "-I", str(POLYBENCH / "utilities")])
    assert len(parse._PREFIXES) == 1
    (after,) = [(_shown(c_ast.FileAST(list(e))), dict(n)) for e, n in parse._PREFIXES.values()]
    assert after == before
