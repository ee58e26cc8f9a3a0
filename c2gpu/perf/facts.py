"""kernel_fact: the cached property of a KernelAnalysis (c2gpu/perf/profile.py) that every analysis of the same
kernel shares, whichever of its parts defines it."""
from __future__ import annotations


class kernel_fact:
    """A cached property of a KernelAnalysis that depends neither on the block shape nor on the tiles nor on
    the register count: kept in the analysis's `_facts`, which every analysis of the same kernel shares (the
    block search builds one analysis per shape it tries and per shared-memory budget, and each asked isl
    again for the footprints)."""

    def __init__(self, fn):
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        facts = obj._facts
        if self.name not in facts:
            facts[self.name] = self.fn(obj)
        return facts[self.name]
