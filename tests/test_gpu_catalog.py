"""The GPU catalog (c2gpu/gpus/*.toml) and its loader (c2gpu.model.gpu)."""
import json
import math
import re

import pytest

from c2gpu.model.gpu import (INSTRUCTION_CLASSES, GPU, GPUDescriptionError, list_gpus, load_gpu,
                       transfer_time_s)
from c2gpu.diagnostics import C2GPUError

REQUIRED_KEYS = {"gtx460", "c2050", "k40", "p100", "v100", "a10", "a100", "h100-sxm", "h100-pcie",
                 "h200", "rtx3090", "rtx4090", "l4"}
ALL = list_gpus()
IDS = [g.key for g in ALL]


# ------------------------------------------------------------------ catalog shape

def test_catalog_has_the_required_gpus_sorted_by_key():
    assert REQUIRED_KEYS <= set(IDS)
    assert IDS == sorted(IDS)
    assert all(g.path == f"{g.key}.toml" for g in ALL)   # one file per GPU, named by its key


@pytest.mark.parametrize("gpu", ALL, ids=IDS)
def test_every_value_has_a_non_empty_source(gpu: GPU):
    numeric = [f for f, v in vars(gpu).items()
               if isinstance(v, (int, float)) and not isinstance(v, bool) and v is not None]
    assert len(numeric) > 40
    for f in numeric:
        assert gpu.sources.get(f, "").strip(), f"{gpu.key}: {f} has no source"
    for cls in INSTRUCTION_CLASSES:
        for part in ("latency", "throughput", "warps_for_peak"):
            assert gpu.sources.get(f"{part}.{cls}", "").strip(), f"{gpu.key}: {part}.{cls}"
    # Ref keys were expanded: no source is a bare one-word token.
    for f, s in gpu.sources.items():
        assert " " in s, f"{gpu.key}: source of {f} is not expanded: {s!r}"


@pytest.mark.parametrize("gpu", ALL, ids=IDS)
def test_sanity_relations(gpu: GPU):
    assert gpu.warp_size == 32
    assert gpu.shared_mem_per_block <= gpu.shared_mem_per_block_optin <= gpu.shared_mem_per_sm
    assert gpu.max_warps_per_sm * gpu.warp_size == gpu.max_threads_per_sm
    assert gpu.max_threads_per_block <= gpu.max_threads_per_sm
    assert gpu.max_registers_per_block <= gpu.registers_per_sm
    assert gpu.base_clock_ghz <= gpu.core_clock_ghz
    assert gpu.sector_bytes <= gpu.cache_line_bytes == 128
    assert gpu.l2_latency_cycles < gpu.dram_latency_cycles
    assert gpu.shared_mem_latency_cycles < gpu.l2_latency_cycles
    # Peak FP32 = 2 flops x cores x clock.
    cores = gpu.fp32_lanes_per_sm * gpu.sm_count
    assert gpu.peak_fp32_gflops == pytest.approx(2 * cores * gpu.core_clock_ghz, rel=1e-12)
    # ... and agrees with the vendor's number where one is recorded (1 %; FP64 peaks are
    # quoted to two digits, e.g. H100 "34 TFLOPS" for 33.45, hence 2 %).
    if gpu.published_fp32_tflops:
        assert gpu.peak_fp32_gflops / 1000 == pytest.approx(gpu.published_fp32_tflops, rel=0.01)
    if gpu.published_fp64_tflops:
        assert gpu.peak_fp64_gflops / 1000 == pytest.approx(gpu.published_fp64_tflops, rel=0.02)
    # cc >= 8.0 reserves 1 KiB of shared memory per block; earlier GPUs none.
    assert gpu.reserved_shared_mem_per_block == (1024 if gpu.cc >= (8, 0) else 0)
    assert gpu.register_allocation_unit == (64 if gpu.cc[0] == 2 else 256)
    # Throughputs never exceed the lanes that execute them.
    assert gpu.instruction("fp32_fma").throughput <= gpu.fp32_lanes_per_sm
    assert gpu.instruction("fp64_fma").throughput <= max(gpu.fp64_lanes_per_sm, 1)
    assert gpu.instruction("sfu").throughput <= gpu.sfu_per_sm
    for cls in INSTRUCTION_CLASSES:
        t = gpu.instruction(cls)
        assert t.latency > 0 and t.throughput > 0 and t.warps_for_peak >= 1
    assert 0 < gpu.memory_max_parallelism < 100
    assert gpu.transfer_intercept_mbs < gpu.transfer_peak_mbs


def test_known_compute_capability_limits():
    # CUDA guide "Technical Specifications per Compute Capability".
    expect = {  # key: (cc, max warps/SM, max blocks/SM, shared/SM KiB, opt-in/block KiB)
        "gtx460": ("2.1", 48, 8, 48, 48), "c2050": ("2.0", 48, 8, 48, 48),
        "k40": ("3.5", 64, 16, 48, 48), "p100": ("6.0", 64, 32, 64, 48),
        "v100": ("7.0", 64, 32, 96, 96), "a100": ("8.0", 64, 32, 164, 163),
        "a10": ("8.6", 48, 16, 100, 99), "rtx3090": ("8.6", 48, 16, 100, 99),
        "rtx4090": ("8.9", 48, 24, 100, 99), "l4": ("8.9", 48, 24, 100, 99),
        "h100-sxm": ("9.0", 64, 32, 228, 227), "h100-pcie": ("9.0", 64, 32, 228, 227),
        "h200": ("9.0", 64, 32, 228, 227),
    }
    for key, (cc, warps, blocks, smem, optin) in expect.items():
        g = load_gpu(key)
        assert (g.compute_capability, g.max_warps_per_sm, g.max_blocks_per_sm,
                g.shared_mem_per_sm // 1024, g.shared_mem_per_block_optin // 1024) == \
            (cc, warps, blocks, smem, optin), key


def test_keys_and_aliases_are_unique():
    seen = {}
    for g in ALL:
        for n in (g.key, *g.aliases):
            assert n not in seen, f"{n} used by {seen.get(n)} and {g.key}"
            seen[n] = g.key


# ------------------------------------------------------------------ lookup

@pytest.mark.parametrize("name, key", [
    ("a100", "a100"), ("A100", "a100"), ("A100-SXM4-40GB", "a100"), ("a100-40gb", "a100"),
    ("GTX460", "gtx460"), ("GeForce-GTX-460", "gtx460"), ("H100", "h100-sxm"),
    ("  h100-PCIe ", "h100-pcie"), ("RTX4090", "rtx4090"), ("v100-sxm2", "v100"), ("L4", "l4"),
])
def test_lookup_is_case_insensitive_by_key_or_alias(name, key):
    assert load_gpu(name).key == key


def test_unknown_name_suggests_the_closest():
    with pytest.raises(GPUDescriptionError) as e:
        load_gpu("a1000")
    msg = str(e.value)
    assert "'a1000'" in msg and "did you mean" in msg and "'a100'" in msg
    assert isinstance(e.value, C2GPUError)
    with pytest.raises(GPUDescriptionError, match="h100-sxm"):
        load_gpu("h100sxm")
    with pytest.raises(GPUDescriptionError, match="Known GPUs: .*gtx460"):
        load_gpu("quadro")


# ------------------------------------------------------------------ the seed's GTX 460

def test_gtx460_carries_the_seed_measurements():
    g = load_gpu("gtx460")
    assert g.dram_latency_cycles == 500             # R 3.2, global memory
    assert g.l2_latency_cycles == 300               # R 3.2, L2
    assert g.shared_mem_latency_cycles == 36        # R 3.2, L1/shared
    assert g.dram_bandwidth_gbs == 86.4             # R 3.2
    assert g.core_clock_ghz == 1.35                 # R 3
    assert g.context_creation_ms == 65              # R 3.1
    assert g.launch_sync_us == 4                    # R 3.1: one timed empty kernel
    assert (g.sm_count, g.fp32_lanes_per_sm, g.registers_per_sm, g.max_registers_per_thread) == (7, 48, 32768, 63)
    assert (g.l1_cache_bytes, g.l2_cache_bytes, g.cache_line_bytes) == (16 * 1024, 384 * 1024, 128)
    assert (g.pcie_generation, g.pcie_lanes) == (2, 16)
    assert g.memory_max_parallelism == 8 and g.shared_mem_max_parallelism == 8
    assert g.mem_bytes_per_cycle == pytest.approx(64)                 # R 4.3.2: 86.4/1.35 = 64
    assert g.shared_mem_bandwidth_gbs == pytest.approx(1209.6)        # R 3.2: "1.2 TB/sec"
    for src in (g.sources["dram_latency_cycles"], g.sources["latency.int_mad"]):
        assert "seed 004" in src


# R Table 3.1: instruction, latency (cycles/op), throughput (ops/cycle), #warps needed for peak.
TABLE_3_1 = [
    ("add", 16, 32, 16), ("mul", 20, 16, 16), ("madd", 22, 16, 11), ("div", 317, 1.8, 5),
    ("and", 16, 32, 16), ("fadd", 16, 32, 16), ("fmadd", 18, 32, 16), ("fmul", 16, 32, 16),
    ("fdiv", 711, 0.75, 4), ("sqrt", 269, 1.6, 5),
]


@pytest.mark.parametrize("row, latency, throughput, warps", TABLE_3_1)
def test_gtx460_table_3_1(row, latency, throughput, warps):
    t = load_gpu("gtx460").instruction(row)
    assert (t.latency, t.throughput, t.warps_for_peak) == (latency, throughput, warps)


def test_seed_worked_examples_from_catalog_values():
    g = load_gpu("gtx460")
    # Eq. 4.5, madd: delay = 22/TLP up to 11 warps, then 22/(11 TLP) + 32/16.
    mad = g.instruction("int_mad")
    for tlp in (1, 5, 11, 12, 48):
        delay = mad.latency / tlp if tlp <= mad.warps_for_peak else \
            mad.latency / (tlp * mad.warps_for_peak) + g.warp_size / mad.throughput
        expected = 22 / tlp if tlp <= 11 else 22 / (11 * tlp) + 2
        assert delay == pytest.approx(expected)
    # Eq. 4.8 example: 500 + 8 * (128 c / 64) = 500 + 16 c.
    for c in (1, 2, 16, 32):
        d = g.dram_latency_cycles + g.memory_max_parallelism * g.cache_line_bytes * c / g.mem_bytes_per_cycle
        assert d == pytest.approx(500 + 16 * c)
    # Eq. 4.9 example: 36 + 8 * (4/32 + 4c/32) = 37 + c.
    bw = g.shared_mem_bandwidth_bytes_per_cycle
    for c in (0, 1, 7, 31):
        d = g.shared_mem_latency_cycles + g.shared_mem_max_parallelism * (
            g.warp_size * 4 / (g.shared_mem_banks * bw) + c * 4 / bw)
        assert d == pytest.approx(37 + c)


def test_little_law_reproduces_the_madd_warps_for_peak():
    # Where no warps_for_peak is stored it is latency x throughput / warp_size: for the
    # seed's madd that is 22 x 16 / 32 = 11, the measured value.
    a100 = load_gpu("a100")
    t = a100.instruction("fp32_fma")
    assert t.warps_for_peak == pytest.approx(t.latency * t.throughput / 32)
    assert a100.sources["warps_for_peak.fp32_fma"].startswith("derived:")


def test_derived_max_p_scales_the_seed_value_by_littles_law():
    g = load_gpu("a100")
    per_sm = g.dram_bandwidth_gbs / g.core_clock_ghz / g.sm_count
    assert g.memory_max_parallelism == pytest.approx(8 * g.dram_latency_cycles * per_sm / (500 * 64 / 7))
    assert g.sources["memory_max_parallelism"].startswith("derived:")


# ------------------------------------------------------------------ eq. 4.2

GTX = load_gpu("gtx460")


@pytest.mark.parametrize("nbytes, seconds", [
    # TRANSFER(size) = size / min(5000, 100 size + 692), size in KiB, BW in MB/s.
    (0, 0.0),
    (1024, 1024 / 792e6),               # 1 KiB: 100 + 692 = 792 MB/s -> 1.29 us
    (10 * 1024, 10240 / 1692e6),        # 10 KiB: 1692 MB/s -> 6.05 us
    (43 * 1024, 44032 / 4992e6),        # 43 KiB: 4992 MB/s, just below the knee -> 8.82 us
    (44 * 1024, 45056 / 5000e6),        # 44 KiB: 5092 > 5000 -> peak -> 9.01 us
    (1 << 20, (1 << 20) / 5000e6),      # 1 MiB at 5000 MB/s -> 0.21 ms
    (100 << 20, (100 << 20) / 5e9),     # 100 MiB -> 20.97 ms
])
def test_transfer_curve_eq_4_2(nbytes, seconds):
    assert transfer_time_s(GTX, nbytes) == pytest.approx(seconds)
    assert GTX.transfer_time_s(nbytes) == pytest.approx(seconds)


def test_transfer_time_is_almost_constant_below_the_knee():
    # R 4.2: "until peak bandwidth is reached, transfer time remains almost constant":
    # from 8 KiB to the 43.08 KiB knee it stays between 5 and 9 us (-> 10 us asymptote).
    times = [transfer_time_s(GTX, k * 1024) for k in range(8, 44)]
    assert all(5e-6 < t < 9e-6 for t in times)
    assert times == sorted(times)
    with pytest.raises(ValueError):
        transfer_time_s(GTX, -1)


def test_faster_links_transfer_faster():
    mib = 256 << 20
    t = {k: transfer_time_s(load_gpu(k), mib) for k in ("gtx460", "v100", "a100", "h100-sxm")}
    assert t["gtx460"] > t["v100"] > t["a100"] > t["h100-sxm"]


# ------------------------------------------------------------------ user files

def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def catalog_text(key="a100"):
    from importlib import resources
    return resources.files("c2gpu.gpus").joinpath(f"{key}.toml").read_text()


def test_user_file_copy_of_catalog_entry_loads(tmp_path):
    text = re.sub(r"(?m)^aliases = .*$", 'aliases = ["my-a100"]', catalog_text())
    p = write(tmp_path, "mine.toml", text.replace('key = "a100"', 'key = "mine"'))
    g = load_gpu(str(p))
    assert g.key == "mine" and g.aliases == ("my-a100",) and g.sm_count == 108 and g.path == str(p)
    same = lambda gpu: {k: v for k, v in vars(gpu).items() if k not in ("key", "aliases", "path")}
    assert same(g) == same(load_gpu("a100"))


def test_inherits_in_three_lines(tmp_path):
    p = write(tmp_path, "slow-a100.toml", 'inherits = "a100"\n[spec]\n'
              'core_clock_ghz = { value = 1.2, source = "nvidia-smi on our node" }\n')
    g = load_gpu(str(p))
    base = load_gpu("a100")
    assert g.core_clock_ghz == 1.2 and g.sm_count == base.sm_count
    assert g.key == "slow-a100" and g.name.startswith(base.name)
    assert g.sources["core_clock_ghz"] == "nvidia-smi on our node"
    assert g.sources["sm_count"] == base.sources["sm_count"]
    assert g.peak_fp32_gflops == pytest.approx(base.peak_fp32_gflops * 1.2 / 1.41)
    # max_p is re-derived: fewer cycles per byte at a lower clock -> more bytes per cycle.
    assert g.memory_max_parallelism > base.memory_max_parallelism


def test_catalog_h200_inherits_from_h100_sxm():
    h200, h100 = load_gpu("h200"), load_gpu("h100-sxm")
    assert (h200.sm_count, h200.core_clock_ghz) == (h100.sm_count, h100.core_clock_ghz)
    assert (h200.dram_bandwidth_gbs, h200.memory_gb) == (4800, 141)
    assert "H200" in h200.sources["dram_bandwidth_gbs"]


def test_json_user_file(tmp_path):
    data = {"inherits": "v100", "name": "V100 32GB", "key": "v100-32",
            "spec": {"memory_gb": {"value": 32, "source": "V100 datasheet, 32 GB board"}}}
    g = load_gpu(str(write(tmp_path, "v.json", json.dumps(data))))
    assert (g.key, g.memory_gb, g.sm_count) == ("v100-32", 32, 80)


def test_missing_field_names_field_and_file(tmp_path):
    text = "\n".join(l for l in catalog_text().splitlines() if not l.startswith("sm_count"))
    p = write(tmp_path, "nosm.toml", text)
    with pytest.raises(GPUDescriptionError, match=r"nosm\.toml.*missing required field 'spec\.sm_count'"):
        load_gpu(str(p))


def test_missing_instruction_class(tmp_path):
    text = "\n".join(l for l in catalog_text().splitlines() if not l.startswith("sfu       "))
    with pytest.raises(GPUDescriptionError, match=r"missing required field '(latency|throughput)\.sfu'"):
        load_gpu(str(write(tmp_path, "nosfu.toml", text)))


def test_value_without_source_is_rejected(tmp_path):
    p = write(tmp_path, "nosrc.toml", 'inherits = "a100"\n[spec]\nsm_count = { value = 100 }\n')
    with pytest.raises(GPUDescriptionError, match=r"nosrc\.toml: field 'spec\.sm_count' has no source"):
        load_gpu(str(p))
    p = write(tmp_path, "bare.toml", 'inherits = "a100"\n[spec]\nsm_count = 100\n')
    with pytest.raises(GPUDescriptionError, match=r"'spec\.sm_count' must be \{ value"):
        load_gpu(str(p))
    p = write(tmp_path, "badref.toml", 'inherits = "a100"\n[spec]\nsm_count = { value = 100, source = "wp3" }\n')
    with pytest.raises(GPUDescriptionError, match=r"source 'wp3' of field 'spec\.sm_count' is not defined in \[refs\]"):
        load_gpu(str(p))


@pytest.mark.parametrize("section, field, value, fragment", [
    ("spec", "sm_count", "0", r"'spec\.sm_count' = 0 is out of range; allowed 1 \.\. 1024"),
    ("spec", "sm_count", "-4", r"'spec\.sm_count' = -4 is out of range"),
    ("spec", "warp_size", "64", r"'spec\.warp_size' = 64 is out of range; allowed 32 threads"),
    ("spec", "core_clock_ghz", "1e6", r"'spec\.core_clock_ghz' = 1000000\.0 is out of range; allowed 0\.1 \.\. 5 GHz"),
    ("spec", "sm_count", "10.5", r"'spec\.sm_count' must be an integer"),
    ("spec", "dram_bandwidth_gbs", '"fast"', r"'spec\.dram_bandwidth_gbs' must be a number"),
    ("memory", "dram_latency_cycles", "-1", r"'memory\.dram_latency_cycles' = -1 is out of range"),
    ("latency", "fp32_fma", "0", r"'latency\.fp32_fma' = 0 is out of range"),
    ("spec", "register_allocation_granularity", '"block"', r"allowed: warp"),
    # cross-field: per-block shared memory over the SM's
    ("spec", "shared_mem_per_block", "200000", r"shared_mem_per_block = 200000 exceeds spec\.shared_mem_per_block_optin"),
    ("spec", "base_clock_ghz", "2.0", r"base_clock_ghz = 2\.0 exceeds spec\.core_clock_ghz"),
    ("spec", "max_warps_per_sm", "32", r"max_warps_per_sm x spec\.warp_size = 32 x 32 != spec\.max_threads_per_sm = 2048"),
    # a launch issued back to back cannot cost more than one followed by a synchronize (a100: 11 us)
    ("overhead", "launch_back_to_back_us", "12", r"launch_back_to_back_us = 12\.0 exceeds overhead\.launch_sync_us = 11\.0"),
])
def test_absurd_values_name_field_value_and_range(tmp_path, section, field, value, fragment):
    p = write(tmp_path, "bad.toml", f'inherits = "a100"\n[{section}]\n'
              f'{field} = {{ value = {value}, source = "test value here" }}\n')
    with pytest.raises(GPUDescriptionError, match=r"bad\.toml: .*" + fragment):
        load_gpu(str(p))


def test_unknown_field_suggests_the_right_one(tmp_path):
    p = write(tmp_path, "typo.toml", 'inherits = "a100"\n[spec]\nsm_cout = { value = 1, source = "a b" }\n')
    with pytest.raises(GPUDescriptionError, match=r"unknown field 'spec\.sm_cout'; did you mean 'spec\.sm_count'"):
        load_gpu(str(p))


def test_malformed_toml_reports_file_and_line(tmp_path):
    p = write(tmp_path, "broken.toml", 'name = "x"\nkey = "y"\n[spec]\nsm_count = { value = 108, source = }\n')
    with pytest.raises(GPUDescriptionError) as e:
        load_gpu(str(p))
    assert e.value.loc is not None and e.value.loc.line == 4
    assert str(e.value).startswith(f"{p}:4:") and "malformed TOML" in str(e.value)


def test_malformed_json_reports_line(tmp_path):
    p = write(tmp_path, "broken.json", '{\n  "inherits": "a100",\n  "spec": {,}\n}\n')
    with pytest.raises(GPUDescriptionError) as e:
        load_gpu(str(p))
    assert e.value.loc.line == 3 and "malformed JSON" in str(e.value)


def test_missing_file_and_bad_inherits(tmp_path):
    with pytest.raises(GPUDescriptionError, match="not found"):
        load_gpu(str(tmp_path / "nope.toml"))
    p = write(tmp_path, "x.toml", 'inherits = "a1000"\n')
    with pytest.raises(GPUDescriptionError, match="did you mean 'a100'"):
        load_gpu(str(p))
    a = write(tmp_path, "a.toml", 'inherits = "b.toml"\n')
    write(tmp_path, "b.toml", 'inherits = "a.toml"\n')
    with pytest.raises(GPUDescriptionError, match="cycle"):
        load_gpu(str(a))


def test_gpu_is_frozen_and_hashable():
    g = load_gpu("v100")
    with pytest.raises(Exception):
        g.sm_count = 1
    assert hash(g) == hash(load_gpu("V100"))
    with pytest.raises(KeyError, match="unknown instruction class"):
        g.instruction("fp16_fma")
    assert math.isclose(g.mem_bytes_per_cycle_per_sm * g.sm_count, g.mem_bytes_per_cycle)


# ------------------------------------------------------------------ launch and synchronization costs

def test_every_gpu_has_both_launch_costs_with_sources():
    for g in ALL:
        assert 0 < g.launch_back_to_back_us <= g.launch_sync_us, g.key
        assert g.launch_s == pytest.approx(g.launch_back_to_back_us * 1e-6)
        assert g.synchronize_s == pytest.approx((g.launch_sync_us - g.launch_back_to_back_us) * 1e-6)
        for f in ("launch_back_to_back_us", "launch_sync_us"):
            assert g.sources[f].strip(), (g.key, f)


def test_the_old_single_launch_field_is_refused_with_what_replaces_it(tmp_path):
    p = write(tmp_path, "old.toml", 'inherits = "a100"\n[overhead]\n'
              'kernel_launch_us = { value = 10, source = "our old file" }\n')
    with pytest.raises(GPUDescriptionError, match=r"old\.toml: field 'overhead\.kernel_launch_us' is no longer read: "
                                                  r"it was split into 'overhead\.launch_back_to_back_us'.*launch_sync_us"):
        load_gpu(str(p))


def test_launch_cost_counts_synchronizes_as_the_host_code_does():
    from c2gpu.perf.predict import SYNC_AT_END, SYNC_EACH_LAUNCH, launch_cost
    g = load_gpu("h100-sxm")
    wrapper = launch_cost(40, g, SYNC_AT_END)          # c2gpu's wrapper: back to back, one synchronize at the end
    assert (wrapper.launches, wrapper.synchronizes) == (40, 1)
    assert wrapper.seconds == pytest.approx(40 * g.launch_back_to_back_us * 1e-6
                                            + (g.launch_sync_us - g.launch_back_to_back_us) * 1e-6)
    each = launch_cost(40, g, SYNC_EACH_LAUNCH)        # PolyBench/GPU: a synchronize after every launch
    assert (each.launches, each.synchronizes) == (40, 40)
    assert each.seconds == pytest.approx(40 * g.launch_sync_us * 1e-6)
    assert launch_cost(0, g, SYNC_AT_END).seconds == 0     # nothing launched, nothing to wait for
    with pytest.raises(ValueError, match="synchronize must be one of"):
        launch_cost(1, g, "sometimes")
