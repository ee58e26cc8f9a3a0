"""Algorithm 6.1 (bank conflicts) against the seed's worked values."""
import math

import pytest

from c2gpu.algorithms.banks import (affine_conflict_degree, bank_conflict_degree,
                                    max_conflicts, padding_that_removes_conflicts,
                                    tile_conflict_degree)


@pytest.mark.parametrize("stride", range(1, 65))
def test_listing_3_3_gcd_rule(stride):
    # Listing 3.3: S[tid * bank] with 4-byte floats, 32 banks -> gcd(32, bank)-way.
    assert affine_conflict_degree(stride) == math.gcd(32, stride)


def test_listing_3_3_literal_modulo_only_differs_at_64():
    # The kernel really indexes (tid*bank) % 1024.  For bank=64, threads tid and
    # tid+16 hit the same word (64*16 = 1024), which broadcasts: 16-way, not the
    # gcd rule's 32.  Every other stride in 1..64 agrees with gcd(32, stride).
    diffs = {s: affine_conflict_degree(s, modulo=1024) for s in range(1, 65)
             if affine_conflict_degree(s, modulo=1024) != math.gcd(32, s)}
    assert diffs == {64: 16}


def test_odd_strides_conflict_free_even_not():
    assert all(affine_conflict_degree(s) == 1 for s in range(1, 200, 2))
    assert affine_conflict_degree(2) == 2 and affine_conflict_degree(96) == 32


def test_broadcast_and_partial_broadcast():
    assert affine_conflict_degree(0) == 1                       # all threads, one word
    assert bank_conflict_degree([0] * 32) == 1
    # 16 threads read word 0, 16 threads read word 32 (same bank 0): 2 distinct words.
    assert bank_conflict_degree([0] * 16 + [128] * 16) == 2
    # bytes within one 4-byte word are one word: char array, stride 1 -> no conflict.
    assert bank_conflict_degree(range(32), access_size=1) == 1


def test_unknown_address_is_pessimistic():
    # Alg. 6.1: expression with variables -> max conflicts (32 for a warp).
    assert affine_conflict_degree(None) == 32
    assert bank_conflict_degree([0, 4, None] + [8] * 29) == 32
    assert max_conflicts(32, 8) == 64


def test_bank_parameters():
    # 16 banks (compute capability 1.x, half-warps of 16): stride 2 -> 2-way, 16 -> 16-way.
    assert affine_conflict_degree(2, threads=16, banks=16) == 2
    assert affine_conflict_degree(16, threads=16, banks=16) == 16
    # 8-byte banks (Kepler 64-bit mode): doubles at stride 1 are conflict-free...
    assert affine_conflict_degree(1, elem_size=8, bank_width=8) == 1
    # ...while with 4-byte banks each double spans 2 words: 64 words / 32 banks = 2.
    assert affine_conflict_degree(1, elem_size=8) == 2
    # word addresses directly: bank_width=1.
    assert bank_conflict_degree([0, 32, 64, 1], bank_width=1, access_size=1) == 3


def test_transpose_tile():
    assert tile_conflict_degree(32, (32, 32), "col") == 32           # T[32][32], T[tx][ty]
    assert tile_conflict_degree(32, (32, 32), "col", pad=1) == 1     # T[32][33]
    assert tile_conflict_degree(32, (32, 8), "row") == 1             # T[ty][tx]
    assert tile_conflict_degree(32, (32, 8), "row", pad=1) == 1
    # T[16][16] read column-wise by (16, 16): a warp is 2 rows of 16 threads;
    # addresses tx*16 + ty, ty in {0, 1}: banks {0, 16} and {1, 17}, 8 words each.
    assert tile_conflict_degree(16, (16, 16), "col") == 8
    assert tile_conflict_degree(64, (32, 32), "col", pad=1) == 1


def test_padding():
    assert padding_that_removes_conflicts(32, 4, 32) == 1            # [32][33]
    assert padding_that_removes_conflicts(33, 4, 32) == 0
    assert padding_that_removes_conflicts(64, 4, 32) == 1
    assert padding_that_removes_conflicts(32, 8, 32) == 1            # doubles: 2 words per thread
    assert padding_that_removes_conflicts(32, 1, 32) == 4            # chars: row of 9 words
    assert padding_that_removes_conflicts(32, 4, 16, warp_size=16) == 1
    # (16, 2)-shaped warps: row reads want rows == 16 (mod 32) words, column
    # reads want the 16 tx rows spread over distinct banks, impossible together.
    assert padding_that_removes_conflicts(16, 4, 32, block=(16, 16)) is None
    # the padding really works
    for cols in (8, 16, 24, 32, 48, 96):
        p = padding_that_removes_conflicts(cols, 4, 32)
        assert tile_conflict_degree(cols, (32, 32), "col", pad=p) == 1
        assert all(tile_conflict_degree(cols, (32, 32), "col", pad=q) > 1 for q in range(p))
