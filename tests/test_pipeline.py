"""The pass manager: ordering, build-time errors, caching, invalidation, failure isolation, timings."""
import pytest

from c2gpu.frontend import load_program
from c2gpu.ir import Nest
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
        return nest


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
    pm.run(program)
    # per nest: count once, reused by uses; the transform drops it, so the second uses recomputes it
    assert Counter.calls == 2 * len(program.nests)
    n = program.nests[0]
    assert pm.result("uses", n) == 10
    assert pm.timings["count"].runs == 2 * len(program.nests)
    assert pm.timings["uses"].seconds >= 0


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
