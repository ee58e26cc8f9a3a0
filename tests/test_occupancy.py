"""Occupancy, checked against hand computations with the CUDA occupancy calculator's rules.

Rules (cuda_occupancy.h), per SM:
  warps/block  W = ceil(threads / 32)
  warp limit   = max_warps // W
  block limit  = max_blocks
  reg limit    = regs/warp R = ceil(regs_per_thread * 32, 256);
                 warps = (65536 / P // R) * P with P sub-partitions (4; GP100 and Fermi 2,
                 Fermi with R rounded to 64 and 32768 registers); blocks = warps // W
  smem limit   = S = ceil(bytes + reserve, unit) (reserve 1 KiB from cc 8.0; unit 256 up to
                 cc 7.x, 128 from cc 8.0 and on Fermi); blocks = smem_per_sm // S
The GPUs' numbers (CUDA guide):
  V100 7.0: 64 warps, 32 blocks, 96 KiB = 98304 B smem, unit 256, no reserve
  A100 8.0: 64 warps, 32 blocks, 164 KiB = 167936 B, unit 128, reserve 1024, opt-in 163 KiB
  A10 / RTX 3090 8.6: 48 warps, 16 blocks, 100 KiB = 102400 B, unit 128, reserve 1024
  RTX 4090 8.9: 48 warps, 24 blocks, 100 KiB
  H100 9.0: 64 warps, 32 blocks, 228 KiB = 233472 B, unit 128, reserve 1024
  P100 6.0: 64 warps, 32 blocks, 64 KiB = 65536 B, unit 256, 2 sub-partitions
  GTX 460 2.1: 48 warps, 8 blocks, 32768 registers, 48 KiB, unit 128, 2 sub-partitions
"""
from dataclasses import replace

import pytest

from c2gpu.model.gpu import list_gpus, load_gpu
from c2gpu.model.occupancy import FACTORS, InvalidLaunchError, occupancy

CASES = [
    # (gpu, threads, regs/thread, smem bytes) -> (blocks, warps, limiting factor)   how
    # ---------------------------------------------------------------- cc 7.0, V100
    (("v100", 256, 32, 0), (8, 64, "warps")),
    #   W=8; warps 64//8=8; R=1024 -> 16384//1024=16 x4=64 warps -> 8 blocks; ties, warps first
    (("v100", 256, 64, 0), (4, 32, "registers")),
    #   R=2048 -> 8 x4 = 32 warps -> 32//8 = 4 blocks (warps would allow 8)
    (("v100", 32, 16, 0), (32, 32, "blocks")),
    #   W=1; warps 64; R=512 -> 128 warps -> 128 blocks; block limit 32
    (("v100", 128, 32, 49152), (2, 8, "shared memory")),
    #   S=49152 (already a multiple of 256); 98304//49152 = 2; warps 16, regs 16
    (("v100", 32, 255, 0), (8, 8, "registers")),
    #   255*32=8160 -> R=8192; 16384//8192=2 x4 = 8 warps -> 8 one-warp blocks
    (("v100", 1024, 64, 0), (1, 32, "registers")),
    #   W=32; warps 64//32=2; R=2048 -> 32 warps -> 1 block
    (("v100", 100, 40, 0), (12, 48, "registers")),
    #   W=ceil(100/32)=4; warps 16; R=1280 -> 16384//1280=12 x4=48 warps -> 12 blocks
    (("v100", 256, 32, 20000), (4, 32, "shared memory")),
    #   S=ceil(20000,256)=20224; 98304//20224=4 (4.86); warps 8, regs 8
    # ---------------------------------------------------------------- cc 8.0, A100
    (("a100", 32, 32, 0), (32, 32, "blocks")),
    #   warps 64, regs 64 blocks, smem: 0+1024 reserve -> 167936//1024=164; block limit 32
    (("a100", 64, 192, 0), (4, 8, "registers")),
    #   R=6144; 16384//6144=2 x4 = 8 warps -> 4 blocks of 2 warps.  Dividing the whole
    #   register file (65536//6144=10 warps -> 5 blocks) would be wrong: sub-partitions.
    (("a100", 256, 32, 41984), (3, 24, "shared memory")),
    #   41 KiB + 1 KiB reserve = 43008 -> 167936//43008 = 3 (3.9).  Without the reserve:
    #   167936//41984 = 4.  The cc-8.0 reserve changes the answer (see test below).
    (("a100", 256, 32, 40960), (4, 32, "shared memory")),
    #   40 KiB + 1 KiB = 41984 -> exactly 4 (167936 = 4 x 41984); warps 8, regs 8
    (("a100", 96, 40, 0), (16, 48, "registers")),
    #   W=3; warps 64//3=21; R=1280 -> 12 x4 = 48 warps -> 16 blocks; smem 164
    (("a100", 1024, 32, 0), (2, 64, "warps")),
    #   W=32; warps 2; R=1024 -> 64 warps -> 2 blocks; tie warps/registers
    (("a100", 128, 0, 166912), (1, 4, "shared memory")),
    #   the 163 KiB opt-in maximum: 166912+1024 = 167936 -> exactly 1 block; no registers
    # ---------------------------------------------------------------- cc 8.6, A10 / RTX 3090
    (("a10", 256, 32, 0), (6, 48, "warps")),
    #   warps 48//8 = 6; regs 64 warps -> 8; blocks 16; smem 102400//1024 = 100
    (("a10", 64, 32, 0), (16, 32, "blocks")),
    #   warps 48//2 = 24; block limit 16 -> 32 of 48 warps
    (("a10", 128, 64, 0), (8, 32, "registers")),
    #   R=2048 -> 8 x4 = 32 warps -> 8 blocks; warps would allow 12
    (("a10", 256, 16, 32768), (3, 24, "shared memory")),
    #   32768+1024 = 33792 -> 102400//33792 = 3 (3.03); warps 6
    (("a10", 128, 32, 51200), (1, 4, "shared memory")),
    #   50 KiB + 1 KiB = 52224 -> 102400//52224 = 1 (1.96); without the reserve 2
    (("rtx3090", 512, 40, 0), (3, 48, "warps")),
    #   W=16; warps 48//16 = 3; R=1280 -> 48 warps -> 3; tie warps/registers
    # ---------------------------------------------------------------- cc 8.9, RTX 4090
    (("rtx4090", 32, 32, 0), (24, 24, "blocks")),
    #   warps 48, regs 64; the 24-block limit of cc 8.9
    (("rtx4090", 64, 32, 0), (24, 48, "warps")),
    #   warps 48//2 = 24 = block limit 24: tie, warps first
    # ---------------------------------------------------------------- cc 9.0, H100
    (("h100-sxm", 256, 32, 0), (8, 64, "warps")),
    #   as on the V100: warps 8, regs 8
    (("h100-sxm", 128, 128, 0), (4, 16, "registers")),
    #   R=4096 -> 16384//4096=4 x4 = 16 warps -> 4 blocks
    (("h100-sxm", 128, 32, 102400), (2, 8, "shared memory")),
    #   100 KiB + 1 KiB = 103424 -> 233472//103424 = 2 (2.26)
    (("h100-sxm", 32, 0, 0), (32, 32, "blocks")),
    #   no registers -> no register limit; smem: reserve only, 233472//1024 = 228
    (("h100-pcie", 128, 32, 58368), (3, 12, "shared memory")),
    #   57 KiB + 1 KiB = 59392 -> 233472//59392 = 3 (3.93); without the reserve 4
    # ---------------------------------------------------------------- cc 6.0, P100
    (("p100", 64, 192, 0), (5, 10, "registers")),
    #   2 sub-partitions: R=6144; 32768//6144=5 x2 = 10 warps -> 5 blocks (A100: 4)
    (("p100", 128, 32, 20000), (3, 12, "shared memory")),
    #   S=ceil(20000,256)=20224 -> 65536//20224 = 3 (3.24); warps 16; regs 64 warps -> 16
    # ---------------------------------------------------------------- cc 2.1, GTX 460
    (("gtx460", 256, 21, 0), (5, 40, "registers")),
    #   R=ceil(672,64)=704; 16384//704=23 x2 = 46 warps -> 46//8 = 5 blocks; warps 6
    (("gtx460", 192, 16, 0), (8, 48, "warps")),
    #   W=6; warps 48//6=8; R=512 -> 32 x2 = 64 warps -> 10; blocks 8: tie warps/blocks
    (("gtx460", 128, 16, 12288), (4, 16, "shared memory")),
    #   S=12288 -> 49152//12288 = 4; warps 12; blocks 8
]


@pytest.mark.parametrize("args, expected", CASES, ids=[f"{a[0]}-{a[1]}t-{a[2]}r-{a[3]}B" for a, _ in CASES])
def test_occupancy_table(args, expected):
    key, threads, regs, smem = args
    gpu = load_gpu(key)
    o = occupancy(gpu, threads, regs, smem)
    assert (o.active_blocks_per_sm, o.active_warps_per_sm, o.limiting_factor) == expected
    assert o.occupancy == pytest.approx(o.active_warps_per_sm / gpu.max_warps_per_sm)
    assert o.limiting_factor in o.limiting_factors
    assert all(o.block_limits[f] == o.active_blocks_per_sm for f in o.limiting_factors)


def test_table_covers_every_limit_and_several_compute_capabilities():
    factors = {exp[2] for _, exp in CASES}
    assert factors == set(FACTORS)
    assert {load_gpu(a[0]).compute_capability for a, _ in CASES} >= {"7.0", "8.0", "8.6", "9.0"}
    assert len(CASES) >= 20


def test_reserved_shared_memory_changes_the_answer_on_cc80():
    a100 = load_gpu("a100")
    with_reserve = occupancy(a100, 256, 32, 41 * 1024)
    without = occupancy(replace(a100, reserved_shared_mem_per_block=0), 256, 32, 41 * 1024)
    assert (with_reserve.active_blocks_per_sm, without.active_blocks_per_sm) == (3, 4)
    assert with_reserve.shared_mem_per_block == 42 * 1024
    # The reserve is charged even to a kernel with no shared memory at all.
    assert occupancy(a100, 32, 32, 0).blocks_limit_shared_memory == 164
    # ... but not before cc 8.0.
    assert occupancy(load_gpu("v100"), 32, 32, 0).blocks_limit_shared_memory is None


def test_details_of_one_result():
    o = occupancy(load_gpu("v100"), 256, 32, 0)
    assert o.limiting_factors == ("warps", "registers")
    assert o.block_limits == {"warps": 8, "blocks": 32, "registers": 8, "shared memory": None}
    assert (o.warps_per_block, o.registers_per_block, o.shared_mem_per_block) == (8, 8 * 1024, 0)
    assert o.occupancy == 1.0
    assert occupancy(load_gpu("v100"), 256, 0, 0).blocks_limit_registers is None


@pytest.mark.parametrize("key, threads, regs, smem, fragment", [
    ("a100", 1025, 32, 0, "1025 threads per block is invalid on a100"),
    ("a100", 0, 32, 0, "0 threads per block"),
    ("a100", 256, 256, 0, "256 registers per thread is invalid on a100 .* 0 .. 255"),
    ("gtx460", 64, 64, 0, "64 registers per thread is invalid on gtx460 .* 0 .. 63"),
    # 1024 x 65: R = ceil(2080, 256) = 2304; 32 warps x 2304 = 73728 > 65536 per block
    ("v100", 1024, 65, 0, "needs 73728 registers .* over the limit of 65536"),
    # GTX 460: 1024 x 40 -> R = 1280, 32 x 1280 = 40960 > 32768
    ("gtx460", 1024, 40, 0, "needs 40960 registers"),
    ("a100", 128, 32, 166913, "166913 bytes of shared memory per block cannot launch on a100"),
    ("v100", 128, 32, 98305, "at most 98304 bytes"),
    ("gtx460", 32, 16, 49153, "at most 49152 bytes"),
    ("a100", 128, 32, -1, "must be >= 0"),
])
def test_invalid_launches_raise(key, threads, regs, smem, fragment):
    with pytest.raises(InvalidLaunchError, match=fragment):
        occupancy(load_gpu(key), threads, regs, smem)


@pytest.mark.parametrize("gpu", list_gpus(), ids=lambda g: g.key)
def test_invariants_over_a_sweep(gpu):
    for threads in range(32, gpu.max_threads_per_block + 1, 32):
        previous = None
        for regs in (0, 16, 32, 40, 63, 64, 96, 128, 168, 255):
            if regs > gpu.max_registers_per_thread:
                continue
            for smem in (0, 4096, 16384, gpu.shared_mem_per_block_optin):
                try:
                    o = occupancy(gpu, threads, regs, smem)
                except InvalidLaunchError:
                    continue
                assert 1 <= o.active_blocks_per_sm <= gpu.max_blocks_per_sm
                assert o.active_warps_per_sm <= gpu.max_warps_per_sm
                assert 0 < o.occupancy <= 1
                if smem == 0:
                    # More registers per thread never allow more blocks.
                    if previous is not None:
                        assert o.active_blocks_per_sm <= previous
                    previous = o.active_blocks_per_sm
