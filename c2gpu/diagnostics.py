"""User-facing errors in compiler style (`file:line:col: error: message`), and the table of diagnostic codes.

Every `Flag` and every refusal (`PassFailed`) carries a stable code from CODES; reports print it
(`[unknown-call]`, `"code": "unknown-call"`), users filter on it and silence it (`silence`).  A test scans
the sources and fails on a code missing here, so this table is the complete list.
"""
from __future__ import annotations

from typing import Iterable

from .ir import Flag, Loc
from .records import dataclass


class C2GPUError(Exception):
    """An error the user caused (bad input, bad option); printed without a traceback."""

    def __init__(self, message: str, loc: Loc | None = None, code: str = "error"):
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.code = code

    def __str__(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        return f"{where}error: {self.message}"


@dataclass(frozen=True)
class Diagnostic:
    """A diagnostic code's entry in CODES: its kind and a one-line summary of what it means."""
    kind: str       # "limit": limits what c2gpu can prove about the loops around it; "refusal": a pass
                    # refused the nest; "note": about the file (a nest skipped, a pragma); "openmp": an OpenMP
                    # directive checked against the analysis; "fix": an edit proven to unblock a nest;
                    # "bug": c2gpu's fault
    summary: str


CODES: dict[str, Diagnostic] = {
    # what lowering (c2gpu/frontend/lower.py and the modules beside it) finds in the C
    "address-taken": Diagnostic("limit", "the address of a variable of the nest is taken, so it may change through a pointer"),
    "array-escapes": Diagnostic("limit", "an array or pointer is passed to a function, which may read or write what it points to"),
    "exposed-loop-variable": Diagnostic("limit", "a global or static loop variable may change through a pointer write"),
    "inside-while": Diagnostic("limit", "the nest sits inside a while loop, so it runs an unknown number of times"),
    "local-array": Diagnostic("limit", "an array is declared inside the nest"),
    "loop-var-modified": Diagnostic("limit", "a loop variable is assigned in the loop body"),
    "non-affine-bound": Diagnostic("limit", "a loop's bounds or step are not affine, or its variable may wrap"),
    "non-affine-subscript": Diagnostic("limit", "a subscript is not an affine function of the loop variables"),
    "pointer-modified": Diagnostic("limit", "a pointer is assigned inside the nest, so its subscripts move"),
    "runs-in-thread": Diagnostic("limit", "a loop inside the nest that c2gpu does not count runs whole in each "
                                          "thread; the estimates count one iteration of it"),
    "shadows-loop-variable": Diagnostic("limit", "a variable declared in the nest hides a loop variable"),
    "static-local": Diagnostic("limit", "a static or extern variable declared in the nest is shared by every iteration"),
    "unknown-array": Diagnostic("limit", "an array that is not declared"),
    "unknown-call": Diagnostic("limit", "a call to a function whose reads and writes c2gpu cannot see"),
    "unknown-identifier": Diagnostic("limit", "a name that is not declared"),
    "unsupported-access": Diagnostic("limit", "an access c2gpu does not analyse (struct member, dereference)"),
    "unsupported-statement": Diagnostic("limit", "a statement whose control flow c2gpu cannot analyse (break, goto, ...)"),
    "long-double": Diagnostic("refusal", "the nest computes in long double, which CUDA's device code does not have"),
    "errno-read": Diagnostic("refusal", "the nest's math calls set errno, which the file reads and device math never sets"),
    # what the OpenMP directives get wrong (c2gpu/analysis/openmp.py)
    "omp-race": Diagnostic("openmp", "the loop of an OpenMP directive carries a dependence: its threads race"),
    "omp-missing-clause": Diagnostic("openmp", "an OpenMP directive lacks a private, reduction or linear clause the "
                                               "loop needs"),
    "omp-unneeded-clause": Diagnostic("openmp", "an OpenMP directive lists a variable as private that its loop "
                                                "never uses"),
    # what an edit of the source would unblock (c2gpu/drivers/unblock.py)
    "unblocking-edit": Diagnostic("fix", "an edit of the source after which c2gpu ports the nest (analysed again "
                                         "with the edit); it may assert what the code does not show"),
    "not-analysed": Diagnostic("note", "a nest that could not be described (too deep, or an internal error)"),
    "skipped": Diagnostic("note", "a nest left out by a pragma or outside '#pragma scop' regions"),
    "unknown-pragma": Diagnostic("note", "a '#pragma c2gpu' that c2gpu does not know"),
    # what the passes find
    "out-of-bounds-subscript": Diagnostic("limit", "a subscript leaves its dimension for every size the loops allow"),
    "nest-too-deep": Diagnostic("refusal", "the nest is deeper than exact dependence analysis allows"),
    "carried-dependence": Diagnostic("refusal", "the outermost loop carries a dependence and cannot stay on the host"),
    "not-proven-parallel": Diagnostic("refusal", "the outermost loop is not proven parallel (aliasing, calls, non-affine accesses)"),
    "unmapped-reduction": Diagnostic("refusal", "a reduction c2gpu does not run across threads (only scalar +, max, min)"),
    "shared-scalar": Diagnostic("refusal", "a scalar keeps its value across iterations or after the loop"),
    "guarded-host-loop": Diagnostic("refusal", "a loop on the host whose inner loops have guards of their own"),
    "map-refused": Diagnostic("refusal", "a loop --map asks for cannot be mapped"),
    "private-array-split": Diagnostic("refusal", "an array with a copy per thread is also used outside its kernel"),
    "private-array-too-large": Diagnostic("refusal", "an array each thread would copy has a size c2gpu cannot tell"),
    "block-not-power-of-two": Diagnostic("refusal", "a block whose thread count the reduction tree cannot use"),
    "needs-gpu": Diagnostic("refusal", "performance analyses need a GPU (--gpu)"),
    "not-predicted": Diagnostic("refusal", "the performance models could not evaluate the kernels"),
    "registers-pending": Diagnostic("refusal", "ptxas's register counts are compiled first (the first of two runs; "
                                               "never in a report)"),
    "not-generated": Diagnostic("refusal", "code generation cannot emit the nest (a gather, an array it cannot bound, ...)"),
    "overlapping-copies": Diagnostic("refusal", "two names the nest writes may be one object, and their copy-outs could "
                                                "overwrite each other"),
    "empty-nest": Diagnostic("refusal", "the nest never executes a statement"),
    "pass-failed": Diagnostic("refusal", "a pass refused the nest (the message says why)"),
    "internal-error": Diagnostic("bug", "a pass crashed on the nest: a bug in c2gpu or in a plugin pass"),
}


# Codes of what keeps a nest on the CPU whatever its loops are: C that CUDA's device code computes differently.
# They do not limit the dependence proofs; the mapping pass refuses the nest with them.
HOST_ONLY = frozenset({"long-double", "errno-read"})


def silence(flags: Iterable[Flag], codes: Iterable[str]) -> list[Flag]:
    """`flags` without those whose code the user silenced; a code not in CODES is the user's mistake."""
    silenced = set(codes)
    for code in sorted(silenced - CODES.keys()):
        raise C2GPUError(f"unknown diagnostic code '{code}' (known: {', '.join(sorted(CODES))})")
    return [f for f in flags if f.code not in silenced]
