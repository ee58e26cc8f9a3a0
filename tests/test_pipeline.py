"""The pass manager: ordering, build-time errors, caching, invalidation, failure isolation, timings."""
from dataclasses import replace

import pytest

from c2gpu.frontend import load_program
from c2gpu.ir import Loc, Nest
from c2gpu.pipeline import Pass, PassFailed, PassManager, PipelineError
from c2gpu.registry import available_passes

from conftest import write_c

SRC = """
void f(int n, float *restrict a) {
  for (int i = 0; i < n; i++) a[i] = 1.0f;
  for (int i = 2; i < n; i += 2) a[i] = 2.0f;
}
"""


class Counter(Pass):
    name, provides = "count", ("count",)
    calls = 0

    def run(self, nest, ctx):
        Counter.calls += 1
        return len(nest.statements())


class UsesCount(Pass):
    name, requires, provides = "uses", ("count",), ("uses",)

    def run(self, nest, ctx):
        return ctx.get("count", nest) * 10


class Transform(Pass):
    name, transforms = "touch", True

    def run(self, nest, ctx):
        return replace(nest)             # a new nest: what was known of the old one no longer holds


class Unchanged(Pass):
    name, transforms = "leave", True

    def run(self, nest, ctx):
        return nest                      # the same (immutable) nest: nothing changed


class KeepsCount(Transform):
    name, preserves = "touch-keep", ("count",)


class Fails(Pass):
    name, provides = "fails", ("fails",)

    def run(self, nest, ctx):
        if nest.loc.line == 3:
            raise PassFailed("refused on purpose")
        if nest.loc.line == 4:
            raise ZeroDivisionError("boom")
        return "ok"


@pytest.fixture
def program(tmp_path):
    return load_program(str(write_c(tmp_path, SRC)))


def test_missing_provider_is_rejected_at_build_time():
    with pytest.raises(PipelineError, match="pass 'uses' requires 'count', which no registered pass provides"):
        PassManager([UsesCount()], ["uses"])


def test_unknown_pass_lists_available():
    with pytest.raises(PipelineError, match=r"unknown pass 'nope' \(available: count, uses\)"):
        PassManager([Counter(), UsesCount()], ["nope"])


def test_cycle_is_rejected():
    class A(Pass):
        name, requires, provides = "a", ("b",), ("a",)

    class B(Pass):
        name, requires, provides = "b", ("a",), ("b",)
    with pytest.raises(PipelineError, match="cycle"):
        PassManager([A(), B()], ["a"])


def test_duplicate_names_rejected():
    with pytest.raises(PipelineError, match="two passes are named 'count'"):
        PassManager([Counter(), Counter()], [])


def test_order_puts_providers_first():
    pm = PassManager([Counter(), UsesCount(), Transform()], ["touch", "uses"])
    assert pm.order() == ["touch", "count", "uses"]


def test_analysis_cached_and_invalidated_by_transform(program):
    Counter.calls = 0
    pm = PassManager([Counter(), UsesCount(), Transform()], ["count", "uses", "touch", "uses"])
    out = pm.run(program)
    # per nest: count once, reused by uses; the transform drops it, so the second uses recomputes it
    assert Counter.calls == 2 * len(program.nests)
    n = out.nests[0]
    assert pm.result("uses", n) == 10
    assert pm.timings["count"].runs == 2 * len(program.nests)
    assert pm.timings["uses"].seconds >= 0


def test_a_transform_that_changes_nothing_keeps_every_analysis(program):
    Counter.calls = 0
    pm = PassManager([Counter(), UsesCount(), Unchanged()], ["count", "leave", "uses"])
    pm.run(program)
    assert Counter.calls == len(program.nests)


def test_preserved_analysis_survives_transform(program):
    Counter.calls = 0
    pm = PassManager([Counter(), UsesCount(), KeepsCount()], ["count", "touch-keep", "uses"])
    pm.run(program)
    assert Counter.calls == len(program.nests)


def test_failure_in_one_nest_does_not_stop_others(program):
    pm = PassManager([Fails()], ["fails"])
    out = pm.run(program)
    assert len(out.nests) == 2
    first, second = out.nests
    assert [f.message for f in pm.errors[first.name]] == ["refused on purpose"]
    assert "internal error in pass 'fails': ZeroDivisionError: boom" in pm.errors[second.name][0].message


def test_builtin_normalize_registered_and_transforms(program):
    names = {p.name for p in available_passes()}
    assert "normalize" in names
    pm = PassManager(available_passes(), ["normalize"])
    out = pm.run(program)
    second = out.nests[1].root
    assert second.var == "i_n" and second.origin.var == "i" and second.origin.step == 2
    assert second.trip_count.to_c() == "(n - 1)/2"


# --------------------------------------------------------------------------- one manager, many programs

class WhichFile(Pass):
    name, provides = "which-file", ("which-file",)

    def run(self, nest, ctx):
        if nest.loc.file.endswith("b.c"):
            raise PassFailed("refused in b.c only")
        return nest.loc.file


def test_one_manager_keeps_equally_named_nests_of_two_programs_apart(tmp_path):
    a = load_program(str(write_c(tmp_path, SRC, "a.c")))
    b = load_program(str(write_c(tmp_path, SRC, "b.c")))
    assert [n.name for n in a.nests] == [n.name for n in b.nests]
    pm = PassManager([WhichFile()], ["which-file"])
    a, b = pm.run(a), pm.run(b)
    assert pm.result("which-file", a.nests[0]).endswith("a.c")
    assert pm.result("which-file", b.nests[0]) is None
    assert pm.errors_of(a.nests[0]) == []
    assert [f.message for f in pm.errors_of(b.nests[0])] == ["refused in b.c only"]
    # the by-name view of callers not yet moved to errors_of
    assert [f.message for f in pm.errors[b.nests[0].name]] == ["refused in b.c only"]


class Copy(Pass):
    """A transform that returns a new Nest object, as normalize does."""
    name, transforms = "copy", True

    def run(self, nest, ctx):
        return replace(nest)


class CopyKeepsCount(Copy):
    name, preserves = "copy-keep", ("count",)


def test_results_are_found_by_the_nest_the_run_returns(program):
    Counter.calls = 0
    pm = PassManager([Counter(), CopyKeepsCount()], ["count", "copy-keep", "count"])
    out = pm.run(program)
    assert Counter.calls == len(program.nests)        # preserved across the copy: not computed again
    assert out.nests[0] is not program.nests[0]
    assert pm.result("count", out.nests[0]) == 1
    assert pm.result("count", program.nests[0]) is None


def test_errors_follow_the_nest_through_a_transform(program):
    pm = PassManager([Fails(), Copy()], ["fails", "copy"])
    out = pm.run(program)
    assert [f.message for f in pm.errors_of(out.nests[0])] == ["refused on purpose"]


# --------------------------------------------------------------------------- transitive invalidation

class UsesCalls(UsesCount):
    calls = 0

    def run(self, nest, ctx):
        UsesCalls.calls += 1
        return super().run(nest, ctx)


class KeepsUsesOnly(Copy):
    name, preserves = "copy-keep-uses", ("uses",)


class KeepsBoth(Copy):
    name, preserves = "copy-keep-both", ("uses", "count")


@pytest.mark.parametrize("transform, recomputed", [("copy-keep-uses", True), ("copy-keep-both", False)])
def test_invalidation_is_transitive(program, transform, recomputed):
    """'uses' is computed from 'count': a transform that drops 'count' drops 'uses' too, preserved or not."""
    Counter.calls = UsesCalls.calls = 0
    pm = PassManager([Counter(), UsesCalls(), KeepsUsesOnly(), KeepsBoth()], ["uses", transform, "uses"])
    out = pm.run(program)
    runs = 2 if recomputed else 1
    assert UsesCalls.calls == Counter.calls == runs * len(program.nests)
    assert pm.result("uses", out.nests[0]) == 10


# --------------------------------------------------------------------------- computing again what read a changed input

EXTERNAL = {"value": None}       # an input outside the nests (ptxas's register counts, for the performance pass)


class CountingCopy(Copy):
    name = "counting-copy"
    calls = 0

    def run(self, nest, ctx):
        CountingCopy.calls += 1
        return super().run(nest, ctx)


class ReadsExternal(Pass):
    """Reads EXTERNAL for the first nest only; refuses the nest while it is missing."""
    name, requires, provides = "external", ("count",), ("external",)
    stale: list = []

    def run(self, nest, ctx):
        if nest.loc.line != 3:
            return "not read"
        if EXTERNAL["value"] is None:
            ReadsExternal.stale.append(ctx.manager.running())
            raise PassFailed("the input is not there yet", code="pending")
        return EXTERNAL["value"]


class UsesExternal(Pass):
    name, uses, provides = "uses-external", ("external",), ("uses-external",)

    def run(self, nest, ctx):
        return f"from {ctx.get_optional('external', nest)}"


class CrashesOnce(Pass):
    name, provides = "crashes", ("crashes",)
    calls = 0

    def run(self, nest, ctx):
        CrashesOnce.calls += 1
        if CrashesOnce.calls <= 2:
            raise ZeroDivisionError("boom")
        return "ok"


def test_recompute_keeps_what_did_not_read_the_changed_input(program):
    """What read a missing input (and what was computed from it) is computed again after it arrives, with its
    errors replaced; the nests, the other analyses and their errors stand, as a run from scratch gives them."""
    steps = ["counting-copy", "count", "fails", "external", "uses-external"]
    passes = lambda: [CountingCopy(), Counter(), Fails(), ReadsExternal(), UsesExternal()]   # noqa: E731
    CountingCopy.calls = Counter.calls = 0
    ReadsExternal.stale = []
    EXTERNAL["value"] = None
    pm = PassManager(passes(), steps)
    first = pm.run(program)
    a, b = first.nests
    assert [f.code for f in pm.errors_of(a)] == ["pass-failed", "pending"]
    assert pm.result("uses-external", a) == "from None" and pm.result("uses-external", b) == "from not read"
    assert [(p.name, n) for p, n in ReadsExternal.stale] == [("external", a)]

    EXTERNAL["value"] = 42
    pm.recompute(ReadsExternal.stale)
    again = pm.run(program)
    assert again.nests[0] is a and again.nests[1] is b                 # the transform is not run again
    assert CountingCopy.calls == Counter.calls == len(program.nests)
    assert pm.result("external", a) == 42 and pm.result("uses-external", a) == "from 42"
    fresh = PassManager(passes(), steps)
    out = fresh.run(program)
    for mine, theirs in zip(again.nests, out.nests):
        assert pm.errors_of(mine) == fresh.errors_of(theirs)          # no "pending", nothing twice
        for name in ("count", "external", "uses-external"):
            assert pm.result(name, mine) == fresh.result(name, theirs)


def test_recompute_runs_an_analysis_that_crashed_again_and_reports_it_once(program):
    CrashesOnce.calls = 0
    pm = PassManager([CrashesOnce()], ["crashes"])
    first = pm.run(program)
    assert [f.code for n in first.nests for f in pm.errors_of(n)] == ["internal-error"] * 2
    pm.recompute([])
    again = pm.run(program)
    assert [pm.result("crashes", n) for n in again.nests] == ["ok", "ok"]
    assert [f for n in again.nests for f in pm.errors_of(n)] == []


def test_recompute_after_a_transform_read_the_input_forgets_everything(program):
    CountingCopy.calls = 0
    pm = PassManager([CountingCopy(), Counter()], ["counting-copy", "count"])
    first = pm.run(program)
    pm.recompute([(pm.available["counting-copy"], program.nests[0])])
    again = pm.run(program)
    assert CountingCopy.calls == 2 * len(program.nests)
    assert again.nests[0] is not first.nests[0]


# --------------------------------------------------------------------------- declared reads

class Sneaky(Pass):
    name, provides = "sneaky", ("sneaky",)

    def run(self, nest, ctx):
        return ctx.get("count", nest)


def test_reading_an_undeclared_analysis_is_a_pipeline_error(program):
    pm = PassManager([Counter(), Sneaky()], ["count", "sneaky"])
    with pytest.raises(PipelineError, match="pass 'sneaky' reads 'count' without declaring it in `requires` or `uses`"):
        pm.run(program)


class MaybeCount(Pass):
    name, uses, provides = "maybe", ("count",), ("maybe",)

    def run(self, nest, ctx):
        return ctx.available("count"), ctx.get_optional("count", nest)


def test_used_analysis_is_read_only_when_the_pipeline_computes_it(program):
    without = PassManager([Counter(), MaybeCount()], ["maybe"])
    out = without.run(program)
    assert without.result("maybe", out.nests[0]) == (False, None)
    with_count = PassManager([Counter(), MaybeCount()], ["count", "maybe"])
    out = with_count.run(program)
    assert with_count.result("maybe", out.nests[0]) == (True, 1)
    assert with_count.order() == ["count", "maybe"]


class MaybeFails(Pass):
    name, uses, provides = "maybe-fails", ("fails",), ("maybe-fails",)

    def run(self, nest, ctx):
        return ctx.get_optional("fails", nest)


def test_a_refused_used_analysis_reads_as_none_and_is_reported_once(program):
    pm = PassManager([Fails(), MaybeFails()], ["fails", "maybe-fails"])
    out = pm.run(program)
    first = out.nests[0]
    assert pm.result("maybe-fails", first) is None and pm.result("fails", first) is None
    assert [f.message for f in pm.errors_of(first)] == ["refused on purpose"]


def test_a_cycle_through_uses_is_rejected():
    class A(Pass):
        name, uses, provides = "a", ("b",), ("a",)

    class B(Pass):
        name, requires, provides = "b", ("a",), ("b",)
    with pytest.raises(PipelineError, match="cycle"):
        PassManager([A(), B()], ["a"])


# --------------------------------------------------------------------------- refusals: code, location, once

class Blocks(Pass):
    name, provides = "blocks", ("blocks",)

    def run(self, nest, ctx):
        raise PassFailed("loop 'i' carries a dependence", code="carried-dependence",
                         loc=Loc(nest.loc.file, nest.loc.line, 42))


class NeedsFails(Pass):
    name, requires, provides = "needs-fails", ("fails",), ("needs-fails",)

    def run(self, nest, ctx):
        return ctx.get("fails", nest)


def test_refusal_flag_carries_its_code_and_blocking_line(program):
    pm = PassManager([Blocks(), Fails()], ["blocks", "fails"])
    out = pm.run(program)
    first, second = out.nests
    blocked, default = pm.errors_of(first)
    assert (blocked.code, blocked.loc.col, blocked.message) == ("carried-dependence", 42, "loop 'i' carries a dependence")
    assert (default.code, default.loc) == ("pass-failed", first.loc)    # no code, no line: the defaults
    assert pm.errors_of(second)[-1].code == "internal-error"


def test_a_refusal_is_reported_once_however_many_passes_need_it(program):
    pm = PassManager([Fails(), NeedsFails()], ["fails", "needs-fails", "needs-fails"])
    out = pm.run(program)
    assert [f.message for f in pm.errors_of(out.nests[0])] == ["refused on purpose"]


def test_too_deep_nest_is_refused_at_the_first_loop_beyond_the_limit(tmp_path):
    from c2gpu.passes.dependence import MAX_DEPTH
    depth = MAX_DEPTH + 2
    src = "void f(float *a) {\n" + "".join(f"for (int i{k} = 0; i{k} < 2; i{k}++)\n" for k in range(depth)) + \
        "a[i0] = 1.0f;\n}\n"
    pm = PassManager(available_passes(), ["dependence"])
    out = pm.run(load_program(str(write_c(tmp_path, src))))
    (flag,) = pm.errors_of(out.nests[0])
    assert flag.code == "nest-too-deep" and flag.message.startswith(f"the nest is {depth} loops deep")
    assert flag.loc.line == 2 + MAX_DEPTH             # loop k sits on line k + 2
