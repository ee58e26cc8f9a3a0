"""Random loop nests for the differential test (tests/test_differential.py).

Each program has many small nests, each in a function of its own, from one of two families:

* affine float nests over global arrays (NestGen): random bounds (constant, triangular, offset), steps
  (1, 2, decrementing), affine subscripts (shifted, scaled, mixed, reversed), guards, `+=` updates and scalar
  reductions.  Subscripts are offset by OFF so that every access stays inside the arrays;
* integer nests that probe C's semantics (CNestGen): casts to and assignments into narrow types
  (unsigned char, signed char, short, unsigned short) in subscripts, guards and bounds, signed/unsigned
  comparisons, scalars written on some paths only, writes in `for` headers, comma expressions and `++` inside
  expressions, pointers into the same buffer (`p = X + H + k` next to `X`) and to scalars (the loop variable
  included), calls to small functions of the same file, and reductions whose accumulator type or guard makes
  them something else.  Their arrays have W elements and every subscript is H + e with |e| < H, whatever
  the conversions do, so no access leaves its array (the C stays defined; only c2gpu's model can be wrong).

main() ends with report(), which prints a checksum of every integer array and scalar and the float results:
the test compares it between the original and the port, on top of what `verify` compares nest by nest.
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


class SiblingGen(NestGen):
    """A time loop around two or three adjacent perfect nests (the shape fusion works on: fdtd-2d's step), each
    of depth 1 or 2 with statements over the float arrays; its loops count up mostly, a statement rarely has a
    guard or updates the scalar (both keep a nest as written)."""

    def nest(self, name: str) -> str:
        r = self.rng
        lines = [f"void {name}(void)", "{", "    int t, i, j;", "    (void)i; (void)j;",
                 f"    for (t = 0; t < {r.choice([1, 2, 3])}; t++) {{"]
        for _ in range(r.choice([2, 2, 3])):
            loops = list(VARS[:r.choice([1, 2, 2])])
            indent = "        "
            for level, v in enumerate(loops):
                lo, hi = self.bounds(level, loops[:level])
                header = self.header(v, lo, hi) if r.random() < 0.2 else f"for ({v} = {lo}; {v} < {hi}; {v}++)"
                lines.append(f"{indent}{header} {{")
                indent += "    "
            for _ in range(r.choice([1, 1, 2])):
                s = self.statement(loops) if r.random() < 0.2 else \
                    f"{self.ref(loops)} {r.choice(['=', '+='])} {self.expr(loops)};"
                lines.append(indent + s)
            for _ in loops:
                indent = indent[:-4]
                lines.append(f"{indent}}}")
        lines += ["    }", "}"]
        return "\n".join(lines)


# The integer state of CNestGen's nests, the small functions they call, and the checksum printed at the end.
C_GLOBALS = r"""#define W 600
#define H (W / 2)
#define NU 13u
static int X[W], Y[W], Z[W];
static unsigned UQ[W];
static float FL[W];
static int acc, last, cnt;
static int sq(int x) { return x * x % 7; }
static void bump(int k) { Z[H + k] += 1; }
static int peek(int k) { return Y[H + k]; }
static int next(void) { return ++cnt; }

static void report(void)
{
    unsigned h = 0;
    int x;
#pragma c2gpu skip
    for (x = 0; x < W; x++)
        h = h * 31u + (unsigned)X[x] * 7u + (unsigned)Y[x] * 3u + (unsigned)Z[x] + UQ[x];
    printf("ints %u %d %d %d\n", h, acc, last, cnt);
    printf("floats %f %f %f\n", (double)s, (double)A[OFF][OFF], (double)U[OFF]);
}
"""

# narrow conversions whose value is in [-255, 255] for any int argument (H + it stays inside W)
NARROW = ("(unsigned char)({e})", "(signed char)({e})", "(short)({e}) / 256", "(unsigned short)({e}) / 256")


class CNestGen:
    """Integer nests whose meaning depends on C's conversions, side effects, aliasing and calls."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        # a user function named max (not CUDA's) in some programs only: when the port cannot compile it,
        # the whole program fails, and the other nests of the program are not checked
        self.user_max = rng.random() < 0.2

    def affine(self, v: str = "i") -> str:
        """c*v + d, with c and d that make some of its narrowings wrap and some not."""
        r = self.rng
        return f"{r.choice(['', '', '2 * ', '37 * ', '64 * ', '85 * ', '4096 * ', '5000 * '])}{v}" \
               f"{r.choice(['', ' + 3', ' + 120', ' + 250', ' - 5', ' + 32767'])}"

    def narrow(self, v: str = "i") -> str:
        return self.rng.choice(NARROW).format(e=self.affine(v))

    def index(self, v: str = "i") -> str:
        r = self.rng
        return f"H + {self.narrow(v)}" if r.random() < 0.35 else f"H + {v}{r.choice(['', ' + 1', ' - 1', ' + 2'])}"

    def arr(self) -> str:
        return self.rng.choice(["X", "Y", "Y", "Z"])

    def value(self, v: str = "i") -> str:
        r = self.rng
        return r.choice([f"{self.arr()}[{self.index(v)}] + 1", f"{v} * 3", f"{self.arr()}[H + {v}] / 2 - {v}",
                         f"(unsigned char)({self.arr()}[H + {v}] + 200)", f"(short)({v} * 9000)"])

    def guard(self, v: str = "i") -> str:
        r = self.rng
        return r.choice([f"{v} - {r.choice([3, 5])} < {r.choice([2, 4])}u",        # unsigned: negative is large
                         f"{v} - 5 >= 10u", f"(unsigned char)({v} * 64) == 0", f"(short){v} == 3",
                         f"(signed char)({v} * 20) < 0", f"{self.narrow(v)} > 40", f"X[H + {v}] > 20",
                         f"UQ[H + {v}] > -1", f"{v} % 3 == 0", f"(int)(UQ[H + {v}] % 5u) - 2 < 0"])

    def loop(self, v: str = "i") -> str:
        """The loop's header; its bound may go through a conversion (i stays below 260, j below N)."""
        r = self.rng
        hi = r.choice(["N"] * 12 + ["(unsigned char)(N + 245)", "(short)(N * 2600) / 100", "NU",
                                    "(signed char)(N * 10)", "(unsigned char)(N * 20)"] if v == "i" else
                      ["N", "N", "3", "3", "(unsigned char)(N + 245)", "NU"])
        lo = r.choice(["0", "0", "0", "-3", "1"])
        if hi == "NU" and lo == "0":
            lo = "-3"                   # i converted to unsigned: the loop does not run at all
        return f"for ({v} = {lo}; {v} < {hi}; {v}++)"

    def body(self, local: list[str], after: list[str]) -> list[str]:
        """The statements of one nest (inside `for (i ...)`); local: declarations; after: what follows the nest."""
        r = self.rng
        kind = r.choice(["cast", "cast", "narrow-local", "guard", "partial", "header", "comma", "alias",
                         "pointer-scalar", "call", "reduction", "counter"])
        dst = self.arr()
        if kind == "cast":
            return [f"{dst}[{self.index()}] = {self.value()};"]
        if kind == "narrow-local":
            ty = r.choice(["unsigned char", "signed char", "short"])
            local.append(f"{ty} k;")
            sub = "k / 128" if ty == "short" else "k"
            return [f"k = {self.affine()};", f"{dst}[H + {sub}] = {self.value()};"]
        if kind == "guard":
            target = r.choice([f"{dst}[H + i]", f"{dst}[H + {r.randint(-9, 9)}]", "acc", "last"])
            rhs = r.choice(["i", self.value()])
            op = r.choice(["=", "+="])
            stmt = f"if ({self.guard()}) {target} {op} {rhs};"
            return [stmt] if r.random() < 0.7 else [stmt[:-1] + f"; else {dst}[H + i] = -1;"]
        if kind == "partial":
            local.append("int t = 5;")
            after.append(f"Z[H + {r.randint(-9, 9)}] = t;" if r.random() < 0.5 else "")
            return r.choice([[f"if ({self.guard()}) t = {self.value()};", f"{dst}[H + i] = t + 1;"],
                             [f"t = {self.value()};", f"if ({self.guard()}) t = 0;", f"{dst}[H + i] = t;"],
                             [f"if ({self.guard()}) t = i;"],
                             [f"if ({self.guard()}) {{ t = {self.value()}; {dst}[H + i] = t; }}"]])
        if kind == "header":
            local.append("int t = 0;")
            after.append("Z[H + 7] = t;" if r.random() < 0.5 else "")
            return r.choice([[f"for (t = 0; t < 3; t++) {dst}[H + i] += t;"],
                             [f"for (; t < i; t++) {dst}[H + t] += 1;"],
                             [f"for (t = i; t < i + 2; t++) {dst}[H + i] += X[H + t];", "Y[H - i] = t;"]])
        if kind == "comma":
            local.append("int t = 0;")
            return r.choice([[f"{dst}[H + i] = (t = X[H + i], t * 2);"],
                             [f"{dst}[H + t++] = X[H + i] + 1;"],
                             [f"{dst}[H + i] = (acc++, X[H + i]);"],
                             [f"{dst}[H + i] = X[H + i] + (t += 2);"]])
        if kind == "counter":
            # a counter stepped in the loop (frontend/inductions.py): substituted when stepped by one in a
            # statement of its own in every iteration, read before and after the step, counting up or down;
            # left alone when stepped under a condition or twice; its value after the nest is stored
            ty, start = r.choice([("int", "0"), ("int", "-7"), ("long", "5"), ("unsigned", "3u")])
            local.append(f"{ty} c = {start};")
            after.append(f"Z[H + {r.randint(-9, 9)}] = (int)c;" if r.random() < 0.7 else "")
            at = "(int)(c % 32u)" if ty == "unsigned" else "(int)c"       # an unsigned c may wrap below zero
            step = r.choice(["c++;", "++c;", "c += 1;", "c = c + 1;", "c--;", "c -= 1;"])
            return r.choice([[f"{dst}[H + {at}] = {self.value()};", step],
                             [step, f"{dst}[H + {at}] = {self.value()};"],
                             [f"{dst}[H + {at}] = X[H + {at} - 1] + 1;", step],
                             [f"{dst}[H + i] = {at} + X[H + {at}];", step, f"Y[H - {at}] = i;"],
                             [f"if ({self.guard()}) {step}", f"{dst}[H + i] = {at};"],
                             [f"{dst}[H + {at}] = i;", step, step]])
        if kind == "alias":
            k = r.randint(-3, 3)
            local.append(f"int *p = {r.choice(['X', 'Y'])} + H + {k};")
            return r.choice([[f"p[i] = X[H + i + {r.randint(-2, 2)}] + 1;"],
                             [f"Y[H + i] = p[i - {r.randint(0, 3)}] - 1;"],
                             [f"p[i] = p[i + {r.randint(-2, 2)}] / 2 + 1;"],
                             ["X[H + i] = p[i] + 1;"]])
        if kind == "pointer-scalar":
            return r.choice([["*pa += X[H + i];"], ["*pa = X[H + i];"],
                             [f"{dst}[H + *pi] = i;", "if (X[H + i] > 60) *pi += 1;"]])
        if kind == "call":
            return r.choice([[f"{dst}[H + i] = sq(X[H + i]) + 1;"], ["bump(i % 5);"], ["Y[H + i] = peek(i + 1) + 1;"],
                             [f"{dst}[H + i] = next();"]] + ([["acc = max(acc, X[H + i]);"]] if self.user_max else []))
        # reductions: which of them are reductions in C's types?
        local.append(r.choice(["unsigned char r = 7;", "short r = 0;", "int r = 0;", "unsigned r = 1u;"]))
        after.append(f"Z[H + {r.randint(-9, 9)}] = r;")
        return r.choice([["r += X[H + i];"], ["r += FL[H + i];"], ["r = (r * 3 + X[H + i]) % 1000;"], ["r ^= X[H + i];"],
                         ["r += (unsigned char)(X[H + i] * 3);"], ["if (X[H + i] > r) r = X[H + i];"],
                         ["if (X[H + i] > r) { r = X[H + i]; cnt++; }"],
                         ["if (X[H + i] > r) { r = X[H + i]; Y[H + i] = 1; }"],
                         ["if (X[H + i] > r) r = X[H + i]; else if (X[H + i] < -50) r = 0;"]])

    def nest(self, name: str) -> str:
        r = self.rng
        local: list[str] = []
        after: list[str] = []
        stmts = self.body(local, after)
        if r.random() < 0.25:           # a second, independent statement in the same loop
            stmts.append(f"Z[H - i] = {self.value()};")
        uses = " ".join(stmts)
        lines = [f"void {name}(void)", "{", "    int i, j;", "    (void)i; (void)j;"]
        # pointers to scalars only where used: the address of i taken anywhere in the function stops its loops
        lines += [f"    {d}" for d in ["int *pa = &acc;"] * ("*pa" in uses) + ["int *pi = &i;"] * ("*pi" in uses)]
        lines += [f"    {d}" for d in dict.fromkeys(local)]
        header = self.loop("i")
        if r.random() < 0.3 and "*pi" not in uses:    # an outer loop j around it
            lines.append(f"    {self.loop('j')}")
            lines.append(f"    {header} {{")
            lines += [f"        {s.replace('H + i', 'H + i + j')}" for s in stmts]
            lines.append("    }")
        else:
            lines.append(f"    {header} {{")
            lines += [f"        {s}" for s in stmts]
            lines.append("    }")
        lines += [f"    {a}" for a in after if a]
        lines.append("}")
        return "\n".join(lines)


class DisjunctionGen(NestGen):
    """Affine nests whose statements mostly sit under conditions made of `!=`, `||`, `!` and `else` branches
    (unions of affine pieces: c2gpu/frontend/guards.py), on the loop variables and constants at the ends of
    their ranges, so that a dependence holds in some pieces of a domain and not in others."""

    def statement(self, loops: list[str]) -> str:
        r = self.rng
        s = f"{self.ref(loops)} {r.choice(['=', '+='])} {self.expr(loops)};"
        if r.random() < 0.8:
            a, b, c = r.choice(loops), r.choice(loops + ["N / 2"]), r.choice([0, 1, 2])
            cond = r.choice([f"{a} != {c}", f"{a} != {b}", f"{a} < {c + 1} || {a} > N - {c + 2}",
                             f"!({a} == {c} || {a} == N - 1)", f"{a} != {c} && {a} != N - {c + 1}",
                             f"{a} == {c} || {b} == {c}", f"!({a} != {b})"])
            other = f" else {self.ref(loops)} = {self.expr(loops)};" if r.random() < 0.3 else ""
            s = f"if ({cond}) {s}{other}"
        return s


FAMILIES = ("affine", "c", "siblings", "disjunctions")


def program(seed: int, nests: int = 30, n: int = 13, family: str = "affine") -> str:
    """A program of `nests` nests from one family: 'affine' (NestGen), 'c' (CNestGen), 'siblings' (SiblingGen) or
    'disjunctions' (DisjunctionGen)."""
    rng = random.Random(seed)
    gen = {"affine": NestGen, "siblings": SiblingGen, "disjunctions": DisjunctionGen}[family](rng, n) \
        if family != "c" else CNestGen(rng)
    parts = [f"/* random {family} nests, seed {seed} */", "#include <stdio.h>", f"#define N {n}",
             "#define OFF (2 * N + 4)", "#define M (4 * N + 10)",
             "static float A[M][M], B[M][M], C[M][M], U[M], V[M];", "static float s;", C_GLOBALS]
    names = [f"nest{k}" for k in range(nests)]
    for name in names:
        parts.append(gen.nest(name))
        parts.append("")
    if any("max(" in part for part in parts):       # a user function that is not CUDA's max
        parts.insert(parts.index(C_GLOBALS) + 1, "static int max(int a, int b) { return a > b ? a - b : b; }\n")
    parts += ["static void init(void)", "{", "    int x, y;",
              "#pragma c2gpu skip",
              "    for (x = 0; x < W; x++) {",
              "        X[x] = (x * 7919) % 201 - 100;",
              "        Y[x] = (x * 104729) % 1009 - 500;",
              "        Z[x] = x % 17;",
              "        UQ[x] = (unsigned)x * 2654435761u;",
              "        FL[x] = (float)((x * 13) % 29) / 7.0f - 2.0f;",
              "    }",
              "#pragma c2gpu skip",
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
    parts += ["    report();", "    return 0;", "}", ""]
    return "\n".join(parts)
