"""Random affine loop nests for the differential test (tests/test_differential.py).

Each program has many small nests over global arrays, with random bounds
(constant, triangular, offset), steps (1, 2, decrementing), affine subscripts
(shifted, scaled, mixed, reversed), guards, `+=` updates and scalar
reductions.  Subscripts are offset by OFF so that every access stays inside
the arrays for any generated combination.
"""
from __future__ import annotations

import random

VARS = ("i", "j", "k")


class NestGen:
    def __init__(self, rng: random.Random, n: int):
        self.rng = rng
        self.n = n

    def bounds(self, level: int, outer: list[str]) -> tuple[str, str]:
        r = self.rng
        lo = r.choice(["0", "0", "1", "2"] + ([outer[-1], f"{outer[-1]} + 1"] if outer else []))
        hi = r.choice(["N", "N", "N - 1", "N - 2"] + ([f"{outer[-1]} + 1", f"N - {outer[-1]}"] if outer else []))
        return lo, hi

    def header(self, var: str, lo: str, hi: str) -> str:
        kind = self.rng.choices(["up", "step2", "down"], weights=[6, 2, 2])[0]
        if kind == "up":
            return f"for ({var} = {lo}; {var} < {hi}; {var}++)"
        if kind == "step2":
            return f"for ({var} = {lo}; {var} < {hi}; {var} += 2)"
        return f"for ({var} = ({hi}) - 1; {var} >= {lo}; {var}--)"

    def subscript(self, loops: list[str]) -> str:
        r = self.rng
        terms = []
        chosen = r.sample(loops, k=min(len(loops), r.choice([1, 1, 1, 2])))
        budget = 2
        for v in chosen:
            c = r.choice([1, 1, 1, -1, 2]) if budget >= 2 else r.choice([1, -1])
            budget -= abs(c)
            terms.append(f"{c}*{v}" if c not in (1, -1) else (v if c == 1 else f"-{v}"))
            if budget <= 0:
                break
        const = r.choice([0, 0, 0, 1, -1, 2, -2])
        expr = " + ".join(terms).replace("+ -", "- ")
        if const:
            expr += f" + {const}" if const > 0 else f" - {-const}"
        return f"OFF + {expr}"

    def ref(self, loops: list[str]) -> str:
        r = self.rng
        if r.random() < 0.6:
            return f"{r.choice(['A', 'B', 'C'])}[{self.subscript(loops)}][{self.subscript(loops)}]"
        return f"{r.choice(['U', 'V'])}[{self.subscript(loops)}]"

    def expr(self, loops: list[str]) -> str:
        r = self.rng
        parts = [self.ref(loops) for _ in range(r.choice([1, 1, 2, 3]))]
        if r.random() < 0.3:
            parts.append(f"0.5f * (float){r.choice(loops)}")
        if r.random() < 0.3:
            parts.append(f"{r.choice(['0.25f', '1.5f', '2.0f'])}")
        return " + ".join(parts)

    def statement(self, loops: list[str]) -> str:
        r = self.rng
        kind = r.choices(["assign", "update", "scalar"], weights=[6, 3, 1])[0]
        if kind == "scalar":
            s = f"s += {self.expr(loops)};"
        else:
            op = "=" if kind == "assign" else "+="
            s = f"{self.ref(loops)} {op} {self.expr(loops)};"
        if r.random() < 0.2:
            a, b = (r.sample(loops, 2) if len(loops) > 1 else (loops[0], "N / 2"))
            cond = r.choice([f"{a} > {b}", f"{a} % 2 == 0", f"{a} <= {b} + 1"])
            s = f"if ({cond}) {s}"
        return s

    def nest(self, name: str) -> str:
        r = self.rng
        depth = r.choice([1, 2, 2, 3])
        loops = list(VARS[:depth])
        lines = [f"void {name}(void)", "{", "    int i, j, k;", "    (void)i; (void)j; (void)k;"]
        indent = "    "
        opened = 0
        for level, v in enumerate(loops):
            lo, hi = self.bounds(level, loops[:level])
            lines.append(f"{indent}{self.header(v, lo, hi)} {{")
            indent += "    "
            opened += 1
        for _ in range(r.choice([1, 1, 2, 3])):
            lines.append(indent + self.statement(loops))
        for _ in range(opened):
            indent = indent[:-4]
            lines.append(f"{indent}}}")
        lines.append("}")
        return "\n".join(lines)


def program(seed: int, nests: int = 30, n: int = 13) -> str:
    rng = random.Random(seed)
    gen = NestGen(rng, n)
    parts = [f"/* random affine nests, seed {seed} */", "#include <stdio.h>", f"#define N {n}",
             "#define OFF (2 * N + 4)", "#define M (4 * N + 10)",
             "static float A[M][M], B[M][M], C[M][M], U[M], V[M];", "static float s;", ""]
    names = [f"nest{k}" for k in range(nests)]
    for name in names:
        parts.append(gen.nest(name))
        parts.append("")
    parts += ["static void init(void)", "{", "    int x, y;",
              "    for (x = 0; x < M; x++) {",
              "        U[x] = (float)((x * 5) % 11) / 11.0f;",
              "        V[x] = (float)((x * 3) % 7) / 7.0f;",
              "        for (y = 0; y < M; y++) {",
              "            A[x][y] = (float)((x * 7 + y * 13) % 23) / 23.0f;",
              "            B[x][y] = (float)((x * 3 + y * 5) % 19) / 19.0f;",
              "            C[x][y] = (float)((x + y * 11) % 17) / 17.0f;",
              "        }", "    }", "}", "",
              "int main(void)", "{", "    init();"]
    parts += [f"    {name}();" for name in names]
    parts += ['    printf("%f %f %f\\n", (double)s, (double)A[OFF][OFF], (double)U[OFF]);', "    return 0;", "}", ""]
    return "\n".join(parts)
