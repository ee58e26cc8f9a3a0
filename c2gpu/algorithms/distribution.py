"""Loop distribution's grouping: the statements (or items) of a loop body cut into contiguous groups, each of which
can become a loop of its own in order, because no dependence between two groups goes backward."""
from __future__ import annotations


def forward_groups(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """Items 0..n-1 in contiguous groups such that every edge (source item, sink item) goes forward from a
    group to the same or a later one: the first item of each item's group.  A backward edge puts its two
    groups and all between them together."""
    first = list(range(n))
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            if first[a] > first[b]:
                last = max(k for k in range(n) if first[k] == first[a])
                for k in range(first[b], last + 1):
                    first[k] = first[b]
                changed = True
    return first
