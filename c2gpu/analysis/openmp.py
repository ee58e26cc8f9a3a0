"""OpenMP directives checked against the dependence analysis (`#pragma omp parallel for`, and the `for` of
`omp target teams distribute parallel for`): the findings `analyze` reports on them, each with a stable code.

- `omp-race` (error): the loop carries a dependence c2gpu proves exactly (the message names the accesses), on
  data no clause of the directive makes private or reduced: the threads race.
- `omp-missing-clause` (warning): the loop is parallel as sequential C, but a scalar c2gpu privatizes or reduces
  itself, an inner loop variable declared outside the loop, or a counter stepped in every iteration has no
  matching clause: in the OpenMP program the threads share it.  The fix-it is the directive with the clause.
- `omp-unneeded-clause` (note): a private, firstprivate or lastprivate clause names a variable the loop never
  uses.

Loops c2gpu cannot prove either way get no finding: nothing is claimed that is not proven.
"""
from __future__ import annotations

import re

from ..syntax_tree import Assign, Name
from ..ir import Edit, Fix, Flag, Loop, Nest
from ..records import dataclass

_CLAUSE = re.compile(r"\b(private|firstprivate|lastprivate|linear|reduction|shared)\s*\(([^)]*)\)")
_PARALLEL_FOR = re.compile(r"\s*(#\s*pragma\s+)?omp\s+(target\s+teams\s+distribute\s+)?parallel\s+for\b")
_DEPENDENCES = ("flow", "anti", "output")
OPENMP_CODES = ("omp-race", "omp-missing-clause", "omp-unneeded-clause")


def openmp_clauses(pragma: str) -> dict[str, set[str]]:
    """Clause name -> the variables it lists: 'omp parallel for private(j) reduction(+:s)'."""
    out: dict[str, set[str]] = {}
    for name, args in _CLAUSE.findall(pragma):
        if name in ("reduction", "linear") and ":" in args:
            args = args.split(":", 1)[1] if name == "reduction" else args.split(":", 1)[0]
        out.setdefault(name, set()).update(a.strip() for a in args.split(",") if a.strip())
    return out


def is_parallel_for(pragma: str) -> bool:
    return _PARALLEL_FOR.match(pragma) is not None


@dataclass(frozen=True)
class MissingClause:
    clause: str          # "private(j)", "reduction(+:s)", "linear(k)"
    message: str


def missing_clauses(pragma: str, line: int | None, loop: Loop, verdict, nest: Nest) -> list[MissingClause]:
    """What the `#pragma omp parallel for` at `line` before `loop` lacks, given the loop's dependence verdict.

    `verdict` is the LoopVerdict of `loop` (private, reductions, outer_writes and reasons).  Only a loop c2gpu
    proves (parallel or reduction) can miss a clause: for any other the race is in the loop itself.
    """
    if "omp" not in pragma or verdict.status not in ("parallel", "reduction"):
        return []
    clauses = openmp_clauses(pragma)
    privatized = set().union(*(clauses.get(c, set()) for c in ("private", "firstprivate", "lastprivate", "linear")))
    reduced = clauses.get("reduction", set())
    where = f"the OpenMP pragma at line {line}" if line else f"the OpenMP pragma of the loop at line {loop.loc.line}"
    out: dict[str, MissingClause] = {}
    for s in verdict.private:
        if s in privatized | reduced:
            continue
        if s not in nest.live_after:
            out.setdefault(f"private({s})", MissingClause(
                f"private({s})", f"{where} has no private({s}) clause, but {s} is written before it is read in "
                                 "every iteration: the threads share one variable (a data race)"))
        elif _assigned_in_every_iteration(loop, s):
            # read after the loop: the value of the last iteration, as C leaves it
            out.setdefault(f"lastprivate({s})", MissingClause(
                f"lastprivate({s})", f"{where} has no lastprivate({s}) clause, but {s} is written before it is read "
                                     "in every iteration, and may be read after the loop: the threads share one "
                                     "variable (a data race)"))
        else:
            out.setdefault(s, MissingClause(
                "", f"{where} lets the threads share {s}, which is written before it is read in the iterations that "
                    "read it (a data race), and may be read after the loop, where C leaves the value of the last "
                    "iteration that wrote it: no clause keeps that value (lastprivate keeps the last iteration's)"))
    ops = {r.target: r.op for r in nest.reductions()}
    for s in verdict.reductions:
        if "[" not in s and s not in reduced:
            clause = f"reduction({ops.get(s, '+')}:{s})"
            out.setdefault(clause, MissingClause(
                clause, f"{where} has no {clause} clause, but {s} is a reduction over the loop: the threads update "
                        "one variable (a data race)"))
    if loop.lid == nest.root.lid:
        for ind in nest.inductions:         # frontend/inductions.py: counted, not shared
            if ind.name not in clauses.get("linear", set()):
                out.setdefault(f"linear({ind.name})", MissingClause(
                    f"linear({ind.name})", f"{where} has no linear({ind.name}) clause, but {ind.name} is stepped by "
                                           f"one in every iteration (line {ind.line}): the threads share one counter "
                                           "(a data race)"))
    declared = {st.decl for st in loop.statements() if st.decl}
    collapsed = _collapsed(loop, pragma)
    for inner in list(loop.loops())[1:]:
        var = inner.source_var
        if not inner.declared_in_header and var not in declared and var not in privatized and inner not in collapsed:
            out.setdefault(f"private({var})", MissingClause(
                f"private({var})", f"{where} has no private({var}) clause, but the inner loop at line "
                                   f"{inner.loc.line} uses {var}, declared outside the loop: the threads share one "
                                   "counter (a data race)"))
    return list(out.values())


def _assigned_in_every_iteration(loop: Loop, name: str) -> bool:
    """Whether a statement of the loop's own body, under no condition of its own, is `name = ...;`."""
    for st in loop.statements():
        if not st.loop_ids or st.loop_ids[-1] != loop.lid or st.kind != "assign" or name not in st.scalar_writes:
            continue
        outside = st.loop_ids.index(loop.lid)            # the loops around `loop`
        if all(g.depth is not None and g.depth <= outside for g in st.guards) and \
                isinstance(st.expr, Assign) and st.expr.target == Name(name):
            return True
    return False


def _collapsed(loop: Loop, pragma: str) -> list[Loop]:
    """The loops `collapse(n)` associates with the directive (their variables are private, OpenMP 5.2 5.1.1):
    the loop and the n - 1 loops perfectly nested in it."""
    m = re.search(r"\bcollapse\s*\(\s*(\d+)\s*\)", pragma)
    out = [loop]
    while m and len(out) < int(m.group(1)) and len(out[-1].body) == 1 and isinstance(out[-1].body[0], Loop):
        out.append(out[-1].body[0])
    return out


def openmp_clause_notes(pragma: str, line: int | None, loop: Loop, verdict, nest: Nest) -> list[str]:
    """missing_clauses as the notes of the dependence pass."""
    return [m.message for m in missing_clauses(pragma, line, loop, verdict, nest)]


def pragma_notes(nest: Nest, info) -> list[str]:
    """openmp_clause_notes for every loop of the nest with a `#pragma omp parallel for` (Loop.pragmas);
    `info` is the nest's DependenceInfo."""
    out = []
    for lp in nest.loops():
        for pragma in lp.pragmas:
            if is_parallel_for(pragma):
                out.extend(openmp_clause_notes(pragma, None, lp, info.verdicts[lp.lid], nest))
    return out


def openmp_findings(nest: Nest, info) -> list[Flag]:
    """The findings on the nest's OpenMP loops (module docstring), as flags at their directives; a missing
    clause carries the directive with the clause added as its fix-it."""
    out = []
    for lp in nest.loops():
        for k, pragma in enumerate(lp.pragmas):
            if not is_parallel_for(pragma):
                continue
            span = lp.pragma_spans[k] if k < len(lp.pragma_spans) else None
            at = span.loc if span is not None else lp.loc
            line = at.line
            verdict = info.verdicts[lp.lid]
            clauses = openmp_clauses(pragma)
            listed = set().union(*clauses.values()) if clauses else set()
            races = [r for r in verdict.reasons if r.kind in _DEPENDENCES and r.exact and r.array not in listed]
            if verdict.status == "carried" and races:
                out.append(Flag("omp-race", f"the OpenMP loop '{verdict.var}' at line {lp.loc.line} races: "
                                            f"{races[0].message}", at, level="error"))
                continue
            missing = missing_clauses(pragma, line, lp, verdict, nest)
            # the fix-it adds every clause, when a clause can fix every finding, in place of the whole directive
            whole = span is not None and (span.end_line, span.end_col) > (span.line, span.col)
            fixed = Fix("add " + " ".join(m.clause for m in missing),
                        (Edit(span, " ".join(["#pragma", pragma.strip(), *(m.clause for m in missing)])),)) \
                if whole and missing and all(m.clause for m in missing) else None
            for m in missing:
                out.append(Flag("omp-missing-clause", m.message, at, level="warning", fix=fixed))
            used = _names_used(nest, lp)
            for name in sorted(set().union(*(clauses.get(c, set()) for c in
                                             ("private", "firstprivate", "lastprivate"))) - used):
                out.append(Flag("omp-unneeded-clause", f"the OpenMP pragma at line {line} lists {name} as private, "
                                                       f"but the loop at line {lp.loc.line} never uses it", at))
    return out


def _names_used(nest: Nest, loop: Loop) -> set[str]:
    """Every variable the loop reads or writes (scalars, arrays, its own and inner loop variables), as C names."""
    names = {lp.source_var for lp in loop.loops()}
    for st in loop.statements():
        names |= set(st.scalar_reads) | set(st.scalar_writes) | {a.array for a in st.accesses}
        if st.decl:
            names.add(st.decl)
    for g in (g for st in loop.statements() for g in st.guards):
        names |= set(g.reads)
    c_names = {s.name: s.source_name for s in nest.scalars}     # ("t#2": the nest's second variable t)
    return {c_names.get(n, n) for n in names}
