"""Shared-memory bank conflicts: Algorithm 6.1 of the seed thesis (section 6.1).

Algorithm 6.1 instantiates the access expression f for every thread of a warp,
maps each byte offset o to bank (o / b_w) mod n_b, and returns the largest number
of threads that land in one bank (pessimistically the maximum when f cannot be
evaluated).  We refine two points the pseudo-code leaves loose:

* Broadcast: threads reading the *same* word of a bank are served together
  (multicast exists since Fermi/GF104, the seed's GPU, and on every later GPU),
  so the degree counts *distinct words* per bank, not threads.  Degree 1 means
  conflict-free, degree d means the request is serialized d times.
* The pseudo-code instantiates f(x) .. f(x + warp_size), which is warp_size + 1
  threads; we use exactly warp_size threads (tid 0 .. warp_size-1).  It also
  ends with ``max(bank_map, max_conflicts)``, which would always return the
  maximum; the intended cap is ``min`` and that is what we do.

Parameters default to the seed's GF104 numbers which are also today's numbers:
32 banks of 4 bytes and a 32-thread warp (the 16-bank / half-warp scheme of
compute capability 1.x is available by passing banks=16, warp_size=16).
"""

from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence, Tuple

DEFAULT_BANKS = 32        # GF104 and all later NVIDIA GPUs (seed section 2.2.2)
DEFAULT_BANK_WIDTH = 4    # bytes; "successive 32-bit words are assigned to successive banks"
DEFAULT_WARP_SIZE = 32


def _words(addr: int, access_size: int, bank_width: int) -> range:
    # A thread reading access_size bytes at addr touches every bank-width word
    # overlapping [addr, addr + access_size); an 8-byte double touches 2 words.
    return range(addr // bank_width, (addr + access_size - 1) // bank_width + 1)


def max_conflicts(warp_size: int = DEFAULT_WARP_SIZE, access_size: int = 4,
                  bank_width: int = DEFAULT_BANK_WIDTH) -> int:
    """The pessimistic answer of Algorithm 6.1 when f has unknown variables:
    every thread hits a distinct word of one bank (32 for a 32-thread warp of
    4-byte accesses; wider accesses touch more words per thread)."""
    return warp_size * max(1, math.ceil(access_size / bank_width))


def bank_conflict_degree(byte_addresses: Iterable[Optional[int]], *,
                         access_size: int = 4,
                         banks: int = DEFAULT_BANKS,
                         bank_width: int = DEFAULT_BANK_WIDTH) -> int:
    """Algorithm 6.1 on explicit addresses: degree of bank conflict of one
    shared-memory access by the threads of one warp.

    byte_addresses: one byte address per active thread; ``None`` marks an
    address the caller could not evaluate, in which case the seed's pessimistic
    rule applies and we return max_conflicts(len(addresses), ...).
    To feed *word* addresses, pass bank_width=1 and access_size=1.

    Returns the maximum over banks of the number of distinct words accessed in
    that bank (same word = broadcast, no conflict); 0 for an empty warp.
    """
    addrs = list(byte_addresses)
    if any(a is None for a in addrs):
        # Alg. 6.1: "if banks contains variables then return max_conflicts"
        return max_conflicts(len(addrs), access_size, bank_width)
    words_per_bank: dict = {}
    for a in addrs:
        for w in _words(a, access_size, bank_width):
            # Alg. 6.1: bank = (o / b_w) mod n_b, computed per word
            words_per_bank.setdefault(w % banks, set()).add(w)
    if not words_per_bank:
        return 0
    return max(len(ws) for ws in words_per_bank.values())


def affine_conflict_degree(stride: Optional[int], base: int = 0, elem_size: int = 4, *,
                           modulo: Optional[int] = None,
                           threads: int = DEFAULT_WARP_SIZE,
                           banks: int = DEFAULT_BANKS,
                           bank_width: int = DEFAULT_BANK_WIDTH) -> int:
    """Algorithm 6.1 for the affine access S[(base + stride*tid) % modulo] with
    element size elem_size bytes, tid = 0 .. threads-1 (one warp).

    stride=None means "depends on an unknown variable" (the seed's Listing 6.1
    case) and gives the pessimistic maximum.  modulo reproduces Listing 3.3
    literally (``idx = (tid * bank) % 1024``); leave it None for a plain affine
    index.  For 4-byte elements and no modulo the result is gcd(32, stride)
    (Listing 3.3 analysis), and 1 (broadcast) for stride 0.
    """
    if stride is None:
        return max_conflicts(threads, elem_size, bank_width)
    idx = [base + stride * t for t in range(threads)]
    if modulo is not None:
        idx = [i % modulo for i in idx]
    return bank_conflict_degree([i * elem_size for i in idx], access_size=elem_size,
                                banks=banks, bank_width=bank_width)


def tile_conflict_degree(cols: int, block: Tuple[int, int], access: str = "row", *,
                         pad: int = 0, elem_size: int = 4,
                         banks: int = DEFAULT_BANKS,
                         bank_width: int = DEFAULT_BANK_WIDTH,
                         warp_size: int = DEFAULT_WARP_SIZE) -> int:
    """Degree of conflict of a 2-D shared tile ``T[rows][cols + pad]`` accessed
    by a (bx, by) thread block as ``T[ty][tx]`` (access="row") or ``T[tx][ty]``
    (access="col"), worst over all warps of the block.

    Warps are formed as CUDA does: linear tid = tx + ty*bx, warp k holds tids
    k*warp_size .. k*warp_size + warp_size - 1 (the last warp may be partial).
    Example: the transpose tile T[32][32] read column-wise by (32, 32) is
    32-way; T[32][33] (pad=1) is conflict-free.
    """
    if access not in ("row", "col"):
        raise ValueError("access must be 'row' (T[ty][tx]) or 'col' (T[tx][ty])")
    bx, by = block
    row_len = cols + pad
    n = bx * by
    worst = 0
    for start in range(0, n, warp_size):
        addrs = []
        for tid in range(start, min(start + warp_size, n)):
            tx, ty = tid % bx, tid // bx
            r, c = (ty, tx) if access == "row" else (tx, ty)
            addrs.append((r * row_len + c) * elem_size)
        worst = max(worst, bank_conflict_degree(addrs, access_size=elem_size,
                                                banks=banks, bank_width=bank_width))
    return worst


def _ideal_degree(cols: int, block: Tuple[int, int], access: str, pad: int,
                  elem_size: int, banks: int, bank_width: int, warp_size: int) -> bool:
    # "No conflict" generalised to any element size: every warp's distinct words
    # are spread as evenly as possible, i.e. degree == ceil(words / banks)
    # (for 8-byte elements a warp necessarily needs 2 passes over 32 banks).
    bx, by = block
    n = bx * by
    for start in range(0, n, warp_size):
        addrs = []
        for tid in range(start, min(start + warp_size, n)):
            tx, ty = tid % bx, tid // bx
            r, c = (ty, tx) if access == "row" else (tx, ty)
            addrs.append((r * (cols + pad) + c) * elem_size)
        words = {w for a in addrs for w in _words(a, elem_size, bank_width)}
        deg = bank_conflict_degree(addrs, access_size=elem_size, banks=banks,
                                   bank_width=bank_width)
        if deg != math.ceil(len(words) / banks):
            return False
    return True


def padding_that_removes_conflicts(cols: int, elem_size: int = 4,
                                   banks: int = DEFAULT_BANKS, *,
                                   bank_width: int = DEFAULT_BANK_WIDTH,
                                   warp_size: int = DEFAULT_WARP_SIZE,
                                   block: Optional[Tuple[int, int]] = None,
                                   accesses: Sequence[str] = ("row", "col")) -> Optional[int]:
    """Smallest padding (in elements) p such that the tile T[..][cols + p] is
    conflict-free for every access pattern in `accesses` by `block`
    (default block (warp_size, warp_size), the classic transpose tile).

    Classic result: cols=32, 4-byte elements, 32 banks -> 1 (T[32][33]).
    Returns None when no padding works (e.g. a block whose warps span several
    rows, where row and column reads want incompatible row lengths).  The
    bank pattern depends on the row length in bytes modulo banks*bank_width,
    so checking p < banks*bank_width covers every case.
    """
    block = block or (warp_size, warp_size)
    for p in range(banks * bank_width):
        if all(_ideal_degree(cols, block, a, p, elem_size, banks, bank_width, warp_size)
               for a in accesses):
            return p
    return None
