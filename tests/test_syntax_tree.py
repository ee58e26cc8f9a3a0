"""The IR's syntax trees (c2gpu.syntax_tree): the frontend hands every loop and statement of a nest over as one, and the
tree says what the C says.  Judged by pycparser's own generator: printed back, each statement and each loop
reads exactly as pycparser prints the parsed C, on every one of testdata and PolyBench; and by C itself: a
tree's operators and operands are those of the source, checked on hand-written statements.  One tree per nest:
each statement's tree is the very node of its loop's tree (code generation finds it there by identity)."""
from pathlib import Path

import pytest

from c2gpu.syntax_tree import (Assign, Binary, Call, Cast, Comma, Const, Decl, Index, Member, Name, Opaque, Ternary,
                        TypeName, Unary, to_c, walk)
from c2gpu.frontend import PreprocessOptions, load_program

ROOT = Path(__file__).resolve().parent.parent
PB = ROOT / "testdata" / "corpora" / "polybench-c-4.2.1"


def _statements(path: Path, includes=()):
    prog = load_program(str(path), PreprocessOptions(include_dirs=tuple(str(d) for d in includes)))
    return [st for nest in prog.nests for st in nest.statements()]


def _printed_as_parsed(st) -> bool:
    text = to_c(st.expr)
    return text == st.text or (st.kind == "cond" and st.text == f"if ({text})")


def _corpus():
    for f in sorted((ROOT / "testdata").glob("*.c")):
        yield pytest.param(f, (), id=f.name)
    for f in sorted(PB.rglob("*.c")):
        if "utilities" not in f.parts:
            yield pytest.param(f, (PB / "utilities", f.parent), id="pb-" + f.name)


@pytest.mark.parametrize("path,includes", list(_corpus()))
def test_every_statement_and_loop_prints_as_parsed(path, includes):
    from c2gpu.frontend.syntax import text_of
    prog = load_program(str(path), PreprocessOptions(include_dirs=tuple(str(d) for d in includes)))
    stmts = [st for nest in prog.nests for st in nest.statements()]
    wrong = [(st.loc.line, to_c(st.expr), st.text) for st in stmts if st.expr is not None and not _printed_as_parsed(st)]
    assert not wrong
    loops = [lp for nest in prog.nests for lp in nest.loops()]
    parsed = prog.frontend.sources.nodes     # the parser's node each tree was converted from
    assert loops and all(to_c(lp.syntax) == text_of(parsed[id(lp.syntax)][1]) for lp in loops)
    for lp in loops:            # its statements are nodes of its tree, not copies
        mine = {id(n) for n in walk(lp.syntax)}
        assert all(id(n.syntax) in mine for n in lp.body)


def _one(tmp_path, body: str, decls: str = "double a[10][10], b[10], s; int n, k; struct P { double x; } p[10];"):
    f = tmp_path / "t.c"
    f.write_text(f"{decls}\ndouble f(double);\nvoid g(void) {{\n  for (int i = 0; i < 10; i++) {{\n    {body}\n  }}\n}}\n")
    stmts = _statements(f)
    assert len(stmts) == 1, [s.text for s in stmts]
    return stmts[0]


def test_assignment_tree(tmp_path):
    st = _one(tmp_path, "a[i][k] += b[i] * f(s) - 2.0;")
    i = Name("i")
    assert st.expr == Assign("+=", Index(Index(Name("a"), i), Name("k")),
                             Binary("-", Binary("*", Index(Name("b"), i), Call(Name("f"), (Name("s"),))),
                                    Const("double", "2.0")))
    assert st.expr.at == st.loc
    write = next(a for a in st.accesses if a.array == "a" and a.kind == "write")
    assert st.expr.target.at == write.loc                               # where the IR's access is


def test_operators_as_written(tmp_path):
    st = _one(tmp_path, "s = (double) (n > 0 ? p[i].x : -b[i]), s++, sizeof(int);")
    assert isinstance(st.expr, Comma) and len(st.expr.items) == 3
    first, second, third = st.expr.items
    assert first == Assign("=", Name("s"), Cast("double", Ternary(Binary(">", Name("n"), Const("int", "0")),
                                                                  Member(Index(Name("p"), Name("i")), ".", "x"),
                                                                  Unary("-", Index(Name("b"), Name("i"))))))
    assert second == Unary("p++", Name("s")) and third == Unary("sizeof", TypeName("int"))
    assert to_c(st.expr) == "s = (double) ((n > 0) ? (p[i].x) : (-b[i])), s++, sizeof(int)"
    assert [type(e).__name__ for e in walk(third)] == ["Unary", "TypeName"]


def test_declarations(tmp_path):
    st = _one(tmp_path, "double u = s * 2;")
    assert st.expr == Decl("u", "double u", Binary("*", Name("s"), Const("int", "2")))
    assert to_c(st.expr) == "double u = s * 2"


# shapes the corpora may lack, each printed back as pycparser's generator prints the parsed statement
SHAPES = ["double t[2][2] = {{1.0, 2}, {x, (double) n}};", "struct P q = {.x = 1.0};", "x = (y = 2, y + 1);",
          "x = y = z;", "x = f((a, b), c);", "x = -(-y);", "x = !(a && b) || ~c;", "x = *p++ + p[-1];",
          "x = (a ? b : c) ? d : e;", "x = sizeof x + sizeof(double[3]);", "x = ((struct P) {y}).x;",
          "p->x = q.x;", "x = (*f)(y);", "x = a[b[i]][c ? 1 : 2];", "x = (int) (unsigned) -y;", "x = 'a' + \"s\"[0];",
          "x = a - (b - c) - d;", "x = a << b >> c;", "int k, *r = &x;", "x++, --y;"]


@pytest.mark.parametrize("code", SHAPES)
def test_printed_as_pycparser_prints_it(code):
    from pycparser import c_parser
    from c2gpu.frontend.syntax import Trees, text_of
    decls = "int x, y, z, a, b, c, d, e, i, n, *p; struct P { double x; } q; int f(int, ...);"
    tree = c_parser.CParser().parse(f"{decls} void g(void) {{ {code} }}")
    body = tree.ext[-1].body.block_items
    trees = Trees()
    for item in body:
        assert to_c(trees(item)) == text_of(item)
    first = trees(body[0])
    assert isinstance(first, (Decl, Assign, Comma)) and all(not isinstance(e, Opaque) or "struct" in e.text
                                                            or "." in e.text for e in walk(first))


def test_what_the_ir_keeps_as_text(tmp_path):
    st = _one(tmp_path, "s = ((struct P) {b[i]}).x;")
    assert isinstance(st.expr.value, Member) and isinstance(st.expr.value.base, Opaque)
    assert to_c(st.expr) == st.text


def test_loop_kept_whole_has_no_tree(tmp_path):
    st = _one(tmp_path, "while (s > 1.0) s = s / 2;")
    assert st.kind == "loop" and st.expr is None
