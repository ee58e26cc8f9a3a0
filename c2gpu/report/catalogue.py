"""What each diagnostic code means, why it keeps a nest off the GPU, how to change the C, and an example:
`c2gpu codes --explain CODE`, and the SARIF rules of the codes (their help text).

One entry per code of c2gpu.diagnostics.CODES (tests/test_catalogue.py holds them together).  An example is
C that c2gpu reports with the code (`before`) and the same computation changed as `fix` says, which it does not
report with it (`after`); the test analyses both, so an example is never out of date.
"""
from __future__ import annotations

from ..diagnostics import CODES
from ..records import dataclass


@dataclass(frozen=True)
class Explanation:
    why: str                 # why it blocks (or limits) a GPU port
    fix: str                 # how to change the C, or what to do
    before: str = ""         # C c2gpu reports with the code
    after: str = ""          # the same computation, changed as `fix` says: not reported with it


_E = Explanation

CATALOGUE: dict[str, Explanation] = {
    "address-taken": _E(
        "A variable of the nest whose address is taken (`&x`) may change through that pointer at any write; "
        "c2gpu cannot prove which iterations touch it.",
        "Use the variable itself instead of a pointer to it; pass values rather than addresses to functions.",
        """void f(int n, float *restrict a, const float *restrict b) {
  for (int i = 0; i < n; i++) {
    float t = b[i];
    float *p = &t;
    a[i] = *p * 2;
  }
}""",
        """void f(int n, float *restrict a, const float *restrict b) {
  for (int i = 0; i < n; i++) {
    float t = b[i];
    a[i] = t * 2;
  }
}"""),
    "array-escapes": _E(
        "An array passed to a function inside the nest may be read or written there, at elements c2gpu "
        "cannot see.",
        "Inline the work the function does on the array into the loop, or make the function `static` in the "
        "same file so that c2gpu sees its body.",
        """void scale(float *x, int i);
void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++)
    scale(a, i);
}""",
        """static void scale(float *x, int i) { x[i] = 2 * x[i]; }
void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++)
    scale(a, i);
}"""),
    "exposed-loop-variable": _E(
        "A loop variable that is a global or static may be changed by a write through a pointer in the body.",
        "Declare the loop variable locally, in the `for` header.",
        """int i;
void f(int n, float *a) {
  for (i = 0; i < n; i++)
    a[i] = 2 * a[i];
}""",
        """void f(int n, float *a) {
  for (int i = 0; i < n; i++)
    a[i] = 2 * a[i];
}"""),
    "inside-while": _E(
        "The nest sits inside a `while` (or `do`) loop, which runs an unknown number of times: the nest is "
        "analysed and ported on its own, and its launches are counted once.",
        "Nothing blocks the nest itself; when the outer loop runs a known number of times, a `for` loop with "
        "that count lets c2gpu count the launches and keep the data on the GPU across them."),
    "local-array": _E(
        "An array declared inside the nest is a new array in each iteration; c2gpu gives each thread its own "
        "copy where it can prove the iterations do not share it.",
        "Nothing to do when the array is private to an iteration; otherwise declare it outside the loop."),
    "loop-var-modified": _E(
        "A loop variable assigned in the body changes which iterations run: the loop has no trip count and "
        "its iterations are not independent.",
        "Compute the other value in a separate variable; leave the loop variable to the `for` header.",
        """void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++) {
    a[i] = 2 * a[i];
    if (a[i] > 100) i++;
  }
}""",
        """void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++) {
    a[i] = 2 * a[i];
  }
}"""),
    "non-affine-bound": _E(
        "A loop whose start, end or step is not an affine function of the outer loop variables and sizes (a "
        "product of loop variables, a value the nest itself writes) cannot be counted or described exactly.",
        "Bounds affine in the loop variables and sizes are counted, elements read at fixed places that the nest "
        "does not write included (`j < len[0]`, `k <= *nzv`, `i < v->n` are sizes); rewrite a product of loop "
        "variables as loops c2gpu can count.  A loop inside the nest whose bounds change with the loops around "
        "it (`k < rowstr[j + 1]`) runs whole in each thread: map the loops outside it."),
    "non-affine-subscript": _E(
        "A subscript that is not an affine function of the loop variables (an index read from memory, a "
        "product of loop variables) hides which element it touches: c2gpu cannot prove two iterations touch "
        "different ones.",
        "Index with the loop variables themselves where the data allows it.  A read through an index array "
        "(a gather, `a[i] = b[idx[i]]`) does not block the port; a write through one (a scatter, "
        "`a[idx[i]] = ...`) needs the indices to be distinct, which C does not show: an update `a[idx[i]] += "
        "v` runs with atomics."),
    "pointer-modified": _E(
        "A pointer assigned inside the nest (`p++`, `p = q`) moves every subscript through it: which element "
        "`p[0]` is depends on the iterations before.",
        "Index from a fixed base with the loop variable (`p[i]` instead of `*p++`). A pointer stepped once per "
        "iteration whose value after the loop is never read is already read that way.",
        """float *f(int n, float *restrict a) {
  float *p = a;
  for (int i = 0; i < n; i++) {
    *p = 2 * *p;
    p++;
  }
  return p;
}""",
        """float *f(int n, float *restrict a) {
  for (int i = 0; i < n; i++)
    a[i] = 2 * a[i];
  return a + (n > 0 ? n : 0);
}"""),
    "runs-in-thread": _E(
        "A loop inside the nest that c2gpu does not count (a `while`, a data-dependent bound) runs whole in "
        "each thread; the estimates count one iteration of it.",
        "Nothing blocks the port; a counted `for` loop makes the estimates exact."),
    "shadows-loop-variable": _E(
        "A variable declared inside the nest with the name of a loop variable around it: c2gpu tells loops "
        "apart by name, so it proves nothing about either.",
        "Rename one of them.",
        """void f(int n, float a[n][n]) {
  for (int i = 0; i < n; i++)
    for (int i = 0; i < n; i++)
      a[i][i] = 0;
}""",
        """void f(int n, float a[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      a[i][j] = 0;
}"""),
    "static-local": _E(
        "A `static` (or `extern`) variable declared in the nest is one variable shared by every iteration.",
        "Drop `static` when the value need not survive the iteration."),
    "unknown-array": _E(
        "An array with no declaration c2gpu can see (a macro c2gpu was not given, a missing header).",
        "Give the definitions with -D and the headers with -I, as for the compiler."),
    "unknown-call": _E(
        "A call to a function whose body c2gpu cannot see may read or write anything: no loop around it is "
        "proven parallel.",
        "Make the function's body visible (in the same file, or passed with --extra-source), or move the call "
        "out of the loop (printing and logging especially) into a loop of its own.",
        """#include <stdio.h>
void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++) {
    a[i] = 2 * a[i];
    printf("%f\\n", a[i]);
  }
}""",
        """#include <stdio.h>
void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++)
    a[i] = 2 * a[i];
  for (int i = 0; i < n; i++)
    printf("%f\\n", a[i]);
}"""),
    "unknown-identifier": _E(
        "A name with no declaration c2gpu can see (usually a macro or a header it was not given).",
        "Give the definitions with -D and the headers with -I, as for the compiler."),
    "unsupported-access": _E(
        "An access c2gpu does not analyse (a member of a struct through a pointer, a dereference of an "
        "expression) may touch any element.",
        "Index arrays directly (`a[i]`), or copy the struct's array pointer into a local before the loop."),
    "unsupported-statement": _E(
        "A statement whose control flow c2gpu cannot follow (`break`, `goto`, `return` in the loop) makes "
        "the number of iterations depend on the data.",
        "Search in a loop of its own, or compute a flag in every iteration and test it after the loop.",
        """void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++) {
    if (a[i] < 0) break;
    a[i] = 2 * a[i];
  }
}""",
        """void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++) {
    if (a[i] >= 0) a[i] = 2 * a[i];
  }
}"""),
    "long-double": _E(
        "CUDA's device code has no `long double`: the GPU would compute in double, with other results.",
        "Compute in double in the C as well, if its precision is enough for the program."),
    "errno-read": _E(
        "The nest's math functions set `errno` on the CPU, and the file reads `errno`; device math never "
        "sets it.",
        "Check the arguments before the call instead of `errno` after it, or compile the C with "
        "-fno-math-errno if the program does not need it."),
    "omp-race": _E(
        "The loop under `#pragma omp parallel for` carries a dependence c2gpu proves exactly (the message names "
        "the two accesses and the distance): with threads, iterations run at the same time and the result "
        "depends on their timing.",
        "Remove the directive, or change the algorithm so that the iterations are independent (a separate "
        "output array, a scan); a directive does not make a loop parallel.",
        """void f(int n, float *restrict a) {
  #pragma omp parallel for
  for (int i = 0; i < n - 1; i++)
    a[i] = 0.5f * (a[i] + a[i + 1]);
}""",
        """void f(int n, float *restrict out, const float *restrict a) {
  #pragma omp parallel for
  for (int i = 0; i < n - 1; i++)
    out[i] = 0.5f * (a[i] + a[i + 1]);
}"""),
    "omp-missing-clause": _E(
        "The loop is parallel as sequential C, but a scalar it writes before reading (a temporary), a sum it "
        "accumulates, an inner loop counter declared outside it, or a counter it steps is shared by the "
        "threads of the OpenMP program unless a clause says otherwise: they race on it.",
        "Add the clause the message names (private, reduction, linear); the fix-it line is the directive with "
        "it, for an editor or `clang-apply-replacements`-style tool to apply.",
        """float f(int n, const float *restrict a) {
  float sum = 0;
  #pragma omp parallel for
  for (int i = 0; i < n; i++)
    sum += a[i];
  return sum;
}""",
        """float f(int n, const float *restrict a) {
  float sum = 0;
  #pragma omp parallel for reduction(+:sum)
  for (int i = 0; i < n; i++)
    sum += a[i];
  return sum;
}"""),
    "omp-unneeded-clause": _E(
        "A private, firstprivate or lastprivate clause names a variable the loop never uses: it does nothing.",
        "Remove it from the clause."),
    "unblocking-edit": _E(
        "The nest is not ported, and c2gpu found a small edit of the source after which it is: the edit was "
        "applied to a copy of the file and the nest analysed again. The note says what the port would then "
        "give. An edit either keeps the program's meaning, checked by c2gpu (prints moved into a loop of their "
        "own after the loop, when what they print is final; a string's length computed once before the loop, "
        "when the loop does not change the string), or asserts what the code does not show (`restrict`: no "
        "call passes overlapping pointers): then the note says what, and only the user can check it.",
        "Apply the fix-it (`c2gpu fix FILE --apply`, or an editor's quick fix; one that asserts something only "
        "with `--assert`, after checking what it asserts).",
        """void add(int n, double a[], const double b[]) {
  for (int i = 0; i < n; i++)
    a[i] += b[i];
}""",
        """void add(int n, double a[restrict], const double b[restrict]) {
  for (int i = 0; i < n; i++)
    a[i] += b[i];
}"""),
    "not-analysed": _E(
        "c2gpu could not describe the nest (deeper than it analyses, or an internal error, reported as such).",
        "Nothing to change in the C for a depth limit; report an internal error."),
    "skipped": _E(
        "The nest is left out by `#pragma c2gpu skip`, or lies outside the `#pragma scop` regions of a file "
        "that has some.",
        "Remove the pragma, or put the nest inside a region, to have it analysed."),
    "unknown-pragma": _E(
        "A `#pragma c2gpu` c2gpu does not know is ignored.",
        "`c2gpu analyze --help` lists the pragmas c2gpu reads (port, skip)."),
    "out-of-bounds-subscript": _E(
        "A subscript leaves its dimension for every size the loops allow: the C has undefined behaviour "
        "whenever the nest runs, and nothing about it can be proven.",
        "Fix the bound or the subscript (an off-by-one `<=`, usually).",
        """float a[100];
void f(void) {
  for (int i = 0; i <= 100; i++)
    a[i] = 0;
}""",
        """float a[100];
void f(void) {
  for (int i = 0; i < 100; i++)
    a[i] = 0;
}"""),
    "nest-too-deep": _E(
        "The nest is deeper than c2gpu's exact dependence analysis handles.",
        "Port an inner part: move it into a function of its own."),
    "carried-dependence": _E(
        "An iteration reads (or overwrites) what an earlier one wrote: running them at the same time changes "
        "the result.  The message names the accesses and the distance.",
        "When the dependence is a recurrence the algorithm needs (a prefix sum, Gauss-Seidel), use a parallel "
        "algorithm for it (a scan, Jacobi); when it is an artefact (a buffer reused across iterations), give "
        "each iteration its own.",
        """void f(int n, float *restrict a) {
  for (int i = 1; i < n; i++)
    a[i] = a[i - 1] + 1;
}""",
        """void f(int n, float *restrict a, const float *restrict b) {
  for (int i = 1; i < n; i++)
    a[i] = b[i - 1] + 1;
}"""),
    "not-proven-parallel": _E(
        "c2gpu did not prove the outermost loop's iterations independent: possible aliasing between pointer "
        "parameters, a call it cannot see, an access it cannot describe.  The message points at the access "
        "and line.",
        "Declare pointer parameters that never overlap `restrict` (or pass --assume-no-alias when that holds "
        "for every call), and see the code of the access the message names.",
        """void f(int n, float *a, const float *b) {
  for (int i = 0; i < n; i++)
    a[i] = 2 * b[i];
}""",
        """void f(int n, float *restrict a, const float *restrict b) {
  for (int i = 0; i < n; i++)
    a[i] = 2 * b[i];
}"""),
    "unmapped-reduction": _E(
        "A reduction c2gpu does not run across threads (a product, a reduction into a value the loop also "
        "reads).",
        "Sums, maxima and minima of scalars and of array elements run across threads; write the reduction as "
        "one of those."),
    "shared-scalar": _E(
        "A scalar keeps its value from one iteration to the next, or after the loop, in a way c2gpu does not "
        "privatize (neither a private value nor a +, max or min reduction).",
        "Declare the scalar inside the loop body when each iteration computes it afresh; write an "
        "accumulation as a sum, maximum or minimum."),
    "guarded-host-loop": _E(
        "A loop that must stay on the host contains loops with guards of their own, which c2gpu's host code "
        "does not split into launches.",
        "Move the guard into the statements, or the guarded part into a function of its own."),
    "map-refused": _E(
        "--map asked for a loop that cannot be mapped (not proven parallel, or not in the nest).",
        "`c2gpu analyze` lists the loops and which are parallel; map those."),
    "private-array-split": _E(
        "An array each thread has a copy of is also used outside its kernel, where that copy does not exist.",
        "Keep the array's uses inside one loop of the nest."),
    "private-array-too-large": _E(
        "An array each thread would copy has a size c2gpu cannot tell.",
        "Give the array a constant size (a macro set with -D)."),
    "block-not-power-of-two": _E(
        "A block size given with --block for a kernel with a reduction: the reduction tree needs a power of "
        "two threads.",
        "Give a power of two (128, 256) or let c2gpu choose."),
    "needs-gpu": _E(
        "Performance analyses need a GPU description.",
        "Give --gpu NAME (`c2gpu gpus` lists them) or a description file."),
    "not-predicted": _E(
        "The performance models could not evaluate the kernels (a size without a value, a block the GPU "
        "cannot run).",
        "Give sizes with --param NAME=VALUE or -D."),
    "registers-pending": _E(
        "ptxas's register counts are compiled first: the first of two internal runs (never in a report).",
        "Nothing to do."),
    "not-generated": _E(
        "Code generation cannot emit the nest: a gather of an array whose extent is unknown, an array it "
        "cannot bound, a loop variable whose exit value it cannot state.  The message says which.",
        "Give arrays known extents (a declared size, or a pointer to a sized array), per the message."),
    "overlapping-copies": _E(
        "Two names the nest writes may be one object, and each writes only part of the region it copies back: "
        "the copy-outs could overwrite each other's results.  `restrict` does not rule it out (two restrict "
        "pointers may point into one array where their accesses do not overlap).",
        "When the pointers never point into one object, say so with --assume-no-alias; or have each name write "
        "every element of its region (then its copy-out puts back only what it wrote)."),
    "empty-nest": _E(
        "The nest never executes a statement (an empty iteration domain for every size).",
        "Check the loop bounds."),
    "pass-failed": _E(
        "A pass refused the nest; the message says why.",
        "See the message."),
    "internal-error": _E(
        "A pass crashed on the nest: a bug in c2gpu (or in a plugin pass), not in the C.",
        "Report it with the file; --debug shows the traceback.  The other nests are analysed as usual."),
}


def explain(code: str) -> str:
    """The text `c2gpu codes --explain CODE` prints."""
    d, e = CODES[code], CATALOGUE[code]
    kinds = {"limit": "a limit on what c2gpu can prove about the loops around it",
             "refusal": "a reason a pass refuses the nest", "note": "a note about the file",
             "openmp": "an OpenMP directive checked against c2gpu's analysis",
             "fix": "an edit c2gpu proved unblocks the port", "bug": "a bug in c2gpu"}
    out = [f"{code} ({kinds[d.kind]}): {d.summary}", "", f"Why: {e.why}", "", f"Fix: {e.fix}"]
    if e.before:
        out += ["", "Before (c2gpu reports it):", "", *("    " + line for line in e.before.splitlines()),
                "", "After:", "", *("    " + line for line in e.after.splitlines())]
    return "\n".join(out)
