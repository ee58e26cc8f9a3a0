"""Section 5.2.1 block-size strategies and candidate shapes."""
import math

import pytest

from c2gpu.algorithms.blocksize import (block_from_warps, candidate_block_shapes,
                                        choose_block_size, even_division,
                                        latency_hiding, utilization_limit)

# GTX 460 (GF104, the seed's card): 7 SMs, 48 resident warps, 32768 registers,
# 48 KiB shared memory per SM, 1024 threads per block.
GF104 = dict(max_threads_per_block=1024, max_warps_per_sm=48, regs_per_sm=32768,
             smem_per_sm=48 * 1024)


def test_even_division_seed_validation_160():
    # seed 7.1: 1024 iterations, 7 SMs: 1024 / (7 * 32) = 4.57 -> 5 warps -> 160.
    c = even_division(1024, 7)
    assert (c.warps, c.threads) == (5, 160)
    assert "1024" in c.explanation and "7 SMs" in c.explanation
    assert even_division(100, 80).warps == 1            # never 0 warps
    assert even_division(80 * 32 * 4, 80).warps == 4    # exact division


def test_utilization_limit():
    # 20 regs/thread: 32768 / (32*20) = 51.2 -> 51 > 48 resident warps -> 48.
    c = utilization_limit(48, 32768, 20, 49152, 0)
    assert c.warps == 48 and "resident-warp" in c.explanation
    # 32 regs/thread: 32768 / 1024 = 32 warps, register-bound.
    c = utilization_limit(48, 32768, 32, 49152, 0)
    assert c.warps == 32 and "registers" in c.explanation
    # 64 B shared per thread: 49152 / (32*64) = 24 warps, shared-memory-bound.
    c = utilization_limit(48, 32768, 20, 49152, 64)
    assert c.warps == 24 and "shared memory" in c.explanation


def test_latency_hiding():
    # c=4: mul L=20 -> 80; global load L=500 with ai=2 -> 4*500/2 = 1000 -> max 1000.
    insns = [(20, False), (500, True)]
    assert latency_hiding(insns, 2.0).warps == 1000
    # ai=inf (no off-chip instructions): memory needs 0, compute 80.
    assert latency_hiding(insns, math.inf).warps == 80
    # ai=8: 4*500/8 = 250 -> 250.
    assert latency_hiding(insns, 8.0).warps == 250
    assert latency_hiding([(36, True)], 5.0).warps == math.ceil(4 * 36 / 5)   # 29


def test_choose_block_size_reproduces_seed_answers():
    # seed 7.1: small 1-D loop -> even division wins: min(5, 48, 80) = 5 -> 160.
    c = choose_block_size(1024, 7, regs_per_thread=20, smem_per_thread=0,
                          latencies=[(20, False)], **GF104)
    assert c.threads == 160 and block_from_warps(c.warps, 1) == (160,)
    # seed 7.2: large 2-D workload -> min(74899, 48, 80) = 48 > 1024/32 = 32 -> (32, 32).
    c = choose_block_size(4096 * 4096, 7, regs_per_thread=20, smem_per_thread=0,
                          latencies=[(20, False)], **GF104)
    assert c.warps == 32 and "block limit" in c.explanation
    assert block_from_warps(c.warps, 2) == (32, 32)
    # utilization binding: 64 regs/thread -> 32768/2048 = 16 warps.
    c = choose_block_size(10**6, 7, regs_per_thread=64, smem_per_thread=0, **GF104)
    assert c.warps == 16 and c.threads == 512
    with pytest.raises(ValueError):
        block_from_warps(2, 3)


def test_candidate_shapes_hand_cases():
    assert candidate_block_shapes(1, (100,)) == [(32,), (64,), (96,), (128,)]
    assert candidate_block_shapes(1, (10,)) == [(10,)]                # whole space, partial warp
    assert candidate_block_shapes(1, (5000,)) == [(32 * i,) for i in range(1, 33)]
    assert candidate_block_shapes(2, (100, 3)) == [(x, y) for x in (32, 64, 96, 128) for y in (1, 2, 4)]
    # x below a warp: x = 16, y must make 16*y a multiple of 32 and <= 1024.
    assert candidate_block_shapes(2, (16, 100)) == [(16, y) for y in (2, 4, 8, 16, 32, 64)]
    assert candidate_block_shapes(2, (3, 5)) == [(3, 8)]


def test_candidate_shapes_invariants_3d():
    shapes = candidate_block_shapes(3, (512, 512, 512))
    assert len(shapes) == 104
    # x is capped at the extent (512), so (1024, 1, 1) is not offered.
    assert (32, 32, 1) in shapes and (512, 2, 1) in shapes and (32, 1, 32) in shapes
    assert (1024, 1, 1) not in shapes and (32, 1, 64) not in shapes  # 32*64 = 2048 > 1024
    for s in shapes:
        n = math.prod(s)
        assert n <= 1024 and n % 32 == 0 and s[0] % 32 == 0 and s[2] <= 64
    assert candidate_block_shapes(3, (64, 64, 64), max_threads=256) == sorted(
        s for s in shapes if math.prod(s) <= 256 and s[0] <= 64 and s[1] <= 64)
