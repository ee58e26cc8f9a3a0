"""Whether two arrays of a nest may share memory: what the file shows (frontend/objects.py), `restrict`, and
what --assume-no-alias vouches for.  The dependence analysis asks it of every pair of arrays a nest writes and
reads; the plan asks it before copying two arrays apart, and the fix-its before moving code past a write."""
from __future__ import annotations

from ..frontend.objects import distinct_objects
from ..ir import ArrayInfo


def is_pointer(info: ArrayInfo) -> bool:
    """Parameters declared as arrays are pointers in C; a local or global without a first extent is a pointer."""
    if info.storage in ("param-pointer", "param-array"):
        return True
    return not info.dims or info.dims[0] is None


def assumed_distinct(info: ArrayInfo, assume_no_alias: bool) -> bool:
    """Whether `--assume-no-alias` vouches for this array: a pointer parameter the function never reassigns
    and whose target the file does not show (an assumption about what the caller passes).  A local or global
    pointer, a parameter the function reassigns (`u1 = u2`), and a parameter the file shows is passed `&n` or an
    array at every call point where the code says: no assumption overrides that."""
    return assume_no_alias and info.storage in ("param-pointer", "param-array") and not info.assigned \
        and info.target is None


def may_share_memory(a: ArrayInfo, b: ArrayInfo, assume_no_alias: bool) -> bool:
    """Whether two different arrays of a nest may be (parts of) one object, whatever `restrict` says: at least
    one is a pointer, the file does not show them distinct, and --assume-no-alias does not vouch for both."""
    if a.rows_source or b.rows_source:
        # a table's accesses touch its rows, which restrict, --assume-no-alias and the table's own storage say
        # nothing about: only the file's labels tell them apart
        return not distinct_objects(a, b)
    if not is_pointer(a) and not is_pointer(b):
        return False
    if distinct_objects(a, b) or a.unreachable or b.unreachable:
        return False
    return not all(assumed_distinct(x, assume_no_alias) or not is_pointer(x) for x in (a, b))


def may_alias(a: ArrayInfo, b: ArrayInfo, assume_no_alias: bool) -> bool:
    """Whether two different arrays may share memory.

    Two declared arrays (global, static or local objects) are distinct objects, and so are two arrays the
    whole file shows point to different objects (`distinct_objects`).
    A pointer may point into anything, including a global or local array
    (pointer vs object: may alias unless the pointer is restrict).  Two pointers
    may alias unless both are restrict: C11 6.7.3.1 would already forbid it
    with one of them restrict when the other is only read, but we keep to the
    stricter rule so that a single restrict is never a silent promise.
    `--assume-no-alias` asserts that the pointer parameters the function does not
    reassign point to distinct objects that overlap no other array or variable.
    """
    if not may_share_memory(a, b, assume_no_alias):
        return False
    if a.rows_source or b.rows_source:
        return True
    pa, pb = is_pointer(a), is_pointer(b)
    if pa and pb:
        return not (a.restrict and b.restrict)
    return not (a if pa else b).restrict
