"""GPU descriptions: the catalog in c2gpu/gpus/*.toml, user files, and eq. 4.2.

Every number a model uses comes from a description file in which each value
carries the place it was taken from (see c2gpu/gpus/SCHEMA.md):

    [spec]
    sm_count = { value = 108, source = "a100wp" }      # "a100wp" is a key of [refs]

`load_gpu("a100")` looks a GPU up by key or alias (case-insensitive);
`load_gpu("my.toml")` reads a user's file (.toml or .json), which may start from
a catalog entry with `inherits = "a100"` and override only what differs.
Everything wrong with a description raises GPUDescriptionError with a message
meant for the user: which file, which field, what value, what range.
"""
from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from dataclasses import field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, Optional

from ..diagnostics import C2GPUError
from ..ir import Loc
from ..records import dataclass


class GPUDescriptionError(C2GPUError):
    """A GPU name or description file the user gave is unusable; the message says why."""


# --------------------------------------------------------------------------------------
# The schema: one row per field.  Sections group fields in the file; attribute names
# on GPU are the field names (they are unique across sections).
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Field:
    """One field of the GPU description schema: its section, type, allowed range or values, unit, and whether
    it is required."""
    section: str
    name: str
    kind: type            # int, float or str
    lo: float = 0.0       # inclusive range for numbers
    hi: float = 0.0
    unit: str = ""
    required: bool = True
    choices: tuple = ()   # for str fields with a closed set of values


KiB, MiB, GiB = 1024, 1024 ** 2, 1024 ** 3

_FIELDS: tuple[_Field, ...] = (
    # -- hardware facts -------------------------------------------------------------
    _Field("spec", "architecture", str),
    _Field("spec", "compute_capability", str),
    _Field("spec", "sm_count", int, 1, 1024, "SMs"),
    _Field("spec", "fp32_lanes_per_sm", int, 1, 1024, "FP32 results/clock/SM (CUDA cores per SM)"),
    _Field("spec", "fp64_lanes_per_sm", int, 0, 1024, "FP64 results/clock/SM"),
    _Field("spec", "sfu_per_sm", int, 1, 256, "special function units per SM"),
    _Field("spec", "core_clock_ghz", float, 0.1, 5.0, "GHz (boost)"),
    _Field("spec", "base_clock_ghz", float, 0.1, 5.0, "GHz"),
    _Field("spec", "memory_gb", float, 0.1, 4096, "GB"),
    _Field("spec", "dram_bandwidth_gbs", float, 1, 100_000, "GB/s"),
    _Field("spec", "warp_size", int, 32, 32, "threads"),
    _Field("spec", "max_threads_per_block", int, 32, 4096, "threads"),
    _Field("spec", "max_threads_per_sm", int, 32, 8192, "threads"),
    _Field("spec", "max_warps_per_sm", int, 1, 256, "warps"),
    _Field("spec", "max_blocks_per_sm", int, 1, 128, "blocks"),
    _Field("spec", "registers_per_sm", int, 1024, 1 << 20, "32-bit registers"),
    _Field("spec", "max_registers_per_thread", int, 16, 1024, "registers"),
    _Field("spec", "max_registers_per_block", int, 1024, 1 << 20, "registers"),
    _Field("spec", "register_allocation_unit", int, 1, 4096, "registers"),
    _Field("spec", "register_allocation_granularity", str, choices=("warp",)),
    _Field("spec", "warp_allocation_granularity", int, 1, 16, "warps (SM sub-partitions)"),
    _Field("spec", "shared_mem_per_sm", int, 1 * KiB, 16 * MiB, "bytes"),
    _Field("spec", "shared_mem_per_block", int, 1 * KiB, 16 * MiB, "bytes"),
    _Field("spec", "shared_mem_per_block_optin", int, 1 * KiB, 16 * MiB, "bytes"),
    _Field("spec", "shared_mem_allocation_unit", int, 1, 64 * KiB, "bytes"),
    _Field("spec", "reserved_shared_mem_per_block", int, 0, 64 * KiB, "bytes"),
    _Field("spec", "l1_cache_bytes", int, 0, 16 * MiB, "bytes"),
    _Field("spec", "l2_cache_bytes", int, 0, 1 * GiB, "bytes"),
    _Field("spec", "cache_line_bytes", int, 16, 1024, "bytes"),
    _Field("spec", "sector_bytes", int, 4, 1024, "bytes"),
    _Field("spec", "shared_mem_banks", int, 1, 128, "banks"),
    _Field("spec", "shared_mem_bank_bytes", int, 1, 16, "bytes"),
    _Field("spec", "published_fp32_tflops", float, 0.001, 10_000, "TFLOP/s", required=False),
    _Field("spec", "published_fp64_tflops", float, 0.0001, 10_000, "TFLOP/s", required=False),
    # -- memory timing and the seed's memory-model parameters (eq. 4.6-4.9) ---------
    _Field("memory", "dram_latency_cycles", float, 10, 100_000, "cycles"),
    _Field("memory", "l2_latency_cycles", float, 1, 100_000, "cycles"),
    _Field("memory", "shared_mem_latency_cycles", float, 1, 10_000, "cycles"),
    _Field("memory", "memory_max_parallelism", float, 0.1, 10_000, "requests (max_p)", required=False),
    _Field("memory", "shared_mem_max_parallelism", float, 0.1, 10_000, "warps"),
    _Field("memory", "shared_mem_bandwidth_bytes_per_cycle", float, 0.1, 100_000, "bytes/cycle"),
    _Field("memory", "gpuperf_sync_gamma", float, 0.1, 100_000, "(GPUPerf eq. 8 Gamma)", required=False),
    # -- cache hierarchy parameters of c2gpu.perf (calibrated; defaults below when absent) --
    _Field("memory", "l1_latency_cycles", float, 1, 10_000, "cycles", required=False),
    _Field("memory", "l2_bytes_per_cycle_per_sm", float, 0.1, 10_000, "bytes/cycle/SM", required=False),
    _Field("memory", "dram_efficiency", float, 0.05, 1.0, "(fraction of peak)", required=False),
    # -- fixed overheads (eq. 4.3) ----------------------------------------------------
    _Field("overhead", "launch_back_to_back_us", float, 0.01, 100_000, "microseconds per launch, no synchronize"),
    _Field("overhead", "launch_sync_us", float, 0.01, 100_000, "microseconds per launch + cudaDeviceSynchronize"),
    _Field("overhead", "context_creation_ms", float, 0.01, 1_000_000, "milliseconds"),
    # -- host link and the eq. 4.2 transfer curve -------------------------------------
    _Field("host_link", "pcie_generation", int, 1, 7, ""),
    _Field("host_link", "pcie_lanes", int, 1, 32, "lanes"),
    _Field("host_link", "transfer_peak_mbs", float, 1, 1_000_000, "MB/s"),
    _Field("host_link", "transfer_slope_mbs_per_kib", float, 0.001, 1_000_000, "MB/s per KiB"),
    _Field("host_link", "transfer_intercept_mbs", float, 0, 1_000_000, "MB/s"),
)

# Instruction classes: seed Table 3.1 classes plus what the brief adds.  Each needs a
# latency (cycles, dependent issue) and a throughput (results per clock per SM);
# warps_for_peak (max_i of eq. 4.5) is optional and derived by Little's law if absent.
INSTRUCTION_CLASSES: tuple[str, ...] = (
    "fp32_add", "fp32_mul", "fp32_fma",
    "fp64_add", "fp64_mul", "fp64_fma",
    "int_add", "int_mul", "int_mad", "int_div", "logic", "compare",
    "fp32_div", "fp32_sqrt", "sfu",
)
# Seed Table 3.1 row names, accepted by GPU.instruction() as aliases.
SEED_ROW_NAMES = {"add": "int_add", "mul": "int_mul", "madd": "int_mad", "div": "int_div", "and": "logic",
                  "fadd": "fp32_add", "fmadd": "fp32_fma", "fmul": "fp32_mul", "fdiv": "fp32_div",
                  "sqrt": "fp32_sqrt"}
_INSN_SECTIONS = {
    "latency": (0.5, 100_000, "cycles", True),
    "throughput": (0.001, 1024, "results/clock/SM", True),
    "warps_for_peak": (0.1, 1000, "warps", False),
}
_SCALAR_SECTIONS = ("spec", "memory", "overhead", "host_link")
# Fields that no longer exist, with what replaces them (a user's old file gets this instead of "unknown field").
_REPLACED = {
    ("overhead", "kernel_launch_us"):
        "it was split into 'overhead.launch_back_to_back_us' (a launch issued back to back with others on a "
        "stream, no synchronize) and 'overhead.launch_sync_us' (a launch followed by cudaDeviceSynchronize); "
        "the old value was launch + synchronize",
}
_FIELD_BY_KEY = {(f.section, f.name): f for f in _FIELDS}
_TOP_LEVEL = {"name", "key", "aliases", "inherits", "refs"} | set(_SCALAR_SECTIONS) | set(_INSN_SECTIONS)

# The seed's calibration point for deriving max_p on other GPUs (seed 004, section 4.3.2):
# GTX 460, max_p = 8 at 500 cycles DRAM latency and 64 B/cycle over 7 SMs.
_SEED_MAX_P, _SEED_LATENCY, _SEED_BYTES_PER_CYCLE_PER_SM = 8.0, 500.0, 64.0 / 7
# GPUPerf's Gamma for the C2050 (seed 000, section 4.1.1): used where a file gives none.
_GPUPERF_GAMMA = 1.0
_GAMMA_DEFAULT_SOURCE = (
    "estimate: seed 000 chose Gamma = 64 for its simulated Fermi (kept in c2050.toml); read literally, eq. 7-8 "
    "then charge every warp 64 DRAM latencies per barrier, serialized on the SM, which predicts tiled and "
    "reduction kernels 10-100x slower than their plain versions; a barrier waits for the slowest warp of its "
    "block, about one memory latency, so Gamma = 1 charges one latency weighted by the memory-instruction "
    "ratio. Not calibrated: testdata/validation/naive_cuda_measured.tsv has no kernel with barriers")


# Defaults of the optional cache-hierarchy fields c2gpu.perf uses (see SCHEMA.md); a GPU whose file gives
# no value gets these, with the reason as its source.  None = derived from another field (below).
_PERF_DEFAULTS = (
    ("l1_latency_cycles", None,
     "derived: shared_mem_latency_cycles (L1 and shared memory are one SRAM since Volta; the tag check adds a "
     "few cycles, ignored); not measured"),
    ("l2_bytes_per_cycle_per_sm", 32.0,
     "estimate: 32 bytes/cycle/SM of L2-to-SM bandwidth, the value calibrated against testdata/validation/naive_cuda_measured.tsv "
     "on the A10 and H100 (see their files); not a vendor figure"),
    ("dram_efficiency", 0.8,
     "estimate: sustained fraction of peak DRAM bandwidth of a streaming kernel, about 0.8 as calibrated "
     "against testdata/validation/naive_cuda_measured.tsv on the A10 and H100; not a vendor figure"),
)


@dataclass(frozen=True)
class InstructionTiming:
    """The latency and throughput of one instruction class on a GPU."""
    latency: float          # cycles from issue to a dependent instruction being able to issue
    throughput: float       # results per clock per SM (CUDA guide convention)
    warps_for_peak: float   # max_i of eq. 4.5: parallelism (ILP x TLP) at which throughput peaks


@dataclass(frozen=True)
class GPU:
    """A GPU description, loaded and checked: the hardware figures the models use, each with its source."""
    name: str
    key: str
    aliases: tuple[str, ...]
    architecture: str
    compute_capability: str
    sm_count: int
    fp32_lanes_per_sm: int
    fp64_lanes_per_sm: int
    sfu_per_sm: int
    core_clock_ghz: float
    base_clock_ghz: float
    memory_gb: float
    dram_bandwidth_gbs: float
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    max_registers_per_thread: int
    max_registers_per_block: int
    register_allocation_unit: int
    register_allocation_granularity: str
    warp_allocation_granularity: int
    shared_mem_per_sm: int
    shared_mem_per_block: int
    shared_mem_per_block_optin: int
    shared_mem_allocation_unit: int
    reserved_shared_mem_per_block: int
    l1_cache_bytes: int
    l2_cache_bytes: int
    cache_line_bytes: int
    sector_bytes: int
    shared_mem_banks: int
    shared_mem_bank_bytes: int
    published_fp32_tflops: Optional[float]
    published_fp64_tflops: Optional[float]
    dram_latency_cycles: float
    l2_latency_cycles: float
    shared_mem_latency_cycles: float
    memory_max_parallelism: float
    shared_mem_max_parallelism: float
    shared_mem_bandwidth_bytes_per_cycle: float
    gpuperf_sync_gamma: float
    l1_latency_cycles: float
    l2_bytes_per_cycle_per_sm: float
    dram_efficiency: float
    launch_back_to_back_us: float
    launch_sync_us: float
    context_creation_ms: float
    pcie_generation: int
    pcie_lanes: int
    transfer_peak_mbs: float
    transfer_slope_mbs_per_kib: float
    transfer_intercept_mbs: float
    # hash=False: mappings are not hashable, and name/key/numbers identify a GPU anyway.
    instructions: Mapping[str, InstructionTiming] = field(hash=False, repr=False)
    sources: Mapping[str, str] = field(hash=False, repr=False)
    # Which of `sources` the loader filled in itself (derived values and defaults): an
    # inheriting file re-derives these instead of copying them (e.g. max_p follows a clock).
    computed: frozenset = field(default=frozenset(), repr=False)
    path: Optional[str] = field(default=None, compare=False)

    def __getstate__(self) -> dict:
        # a read-only mapping cannot be pickled: `analyze --jobs N` hands the GPU to worker processes
        state = dict(self.__dict__)
        state["instructions"], state["sources"] = dict(self.instructions), dict(self.sources)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state, instructions=MappingProxyType(state["instructions"]),
                     sources=MappingProxyType(state["sources"]))
        object.__setattr__(self, "__dict__", state)

    def instruction(self, cls: str) -> InstructionTiming:
        """Timing of an instruction class (INSTRUCTION_CLASSES, or a seed Table 3.1 row name)."""
        try:
            return self.instructions[SEED_ROW_NAMES.get(cls, cls)]
        except KeyError:
            raise KeyError(f"unknown instruction class {cls!r}; known: {', '.join(INSTRUCTION_CLASSES)}") from None

    # -- derived quantities (documented in SCHEMA.md, "Derived") ---------------------
    @property
    def cc(self) -> tuple[int, int]:
        major, minor = self.compute_capability.split(".")
        return int(major), int(minor)

    @property
    def peak_fp32_gflops(self) -> float:
        """2 flops per FMA x FP32 lanes x SMs x boost clock."""
        return 2 * self.fp32_lanes_per_sm * self.sm_count * self.core_clock_ghz

    @property
    def peak_fp64_gflops(self) -> float:
        return 2 * self.fp64_lanes_per_sm * self.sm_count * self.core_clock_ghz

    @property
    def mem_bytes_per_cycle(self) -> float:
        """BW of eq. 4.8: DRAM bandwidth in bytes per core cycle, whole GPU (seed: 86.4/1.35 = 64)."""
        return self.dram_bandwidth_gbs / self.core_clock_ghz

    @property
    def mem_bytes_per_cycle_per_sm(self) -> float:
        return self.mem_bytes_per_cycle / self.sm_count

    @property
    def shared_mem_bandwidth_gbs(self) -> float:
        """Seed section 3.2: 4 bytes x banks x SMs x clock (GTX 460: 1.2 TB/s)."""
        return self.shared_mem_bank_bytes * self.shared_mem_banks * self.sm_count * self.core_clock_ghz

    def transfer_time_s(self, nbytes: float) -> float:
        return transfer_time_s(self, nbytes)

    @property
    def launch_s(self) -> float:
        """One kernel launch issued back to back with others on a stream (overhead.launch_back_to_back_us)."""
        return self.launch_back_to_back_us * 1e-6

    @property
    def synchronize_s(self) -> float:
        """What a cudaDeviceSynchronize after a launch adds to it: launch_sync_us - launch_back_to_back_us."""
        return (self.launch_sync_us - self.launch_back_to_back_us) * 1e-6


# --------------------------------------------------------------------------------------
# Eq. 4.2
# --------------------------------------------------------------------------------------

TRANSFER_SIZE_UNIT_BYTES = 1024   # the "size" unit of eq. 4.2's regression (see transfer_time_s)


def transfer_time_s(gpu: GPU, nbytes: float) -> float:
    """Host<->device copy time, seed 004 eq. 4.2:

        TRANSFER(size) = size / min(BW_peak, BW_inc(size)),  BW_inc(size) = slope * size + intercept

    with the seed's GTX 460 numbers min(5000, 100 * size + 692).  The thesis calls size
    "bytes", but in bytes the curve would saturate at 43 bytes and in MB the small-copy
    plateau would be 10 ms.  The reading that fits its description ("until peak bandwidth
    is reached, transfer time remains almost constant": ~10 us, a cudaMemcpy's fixed cost,
    saturating near 43 KiB on PCIe 2.0) is size in KiB and bandwidth in MB/s (10^6 B/s),
    the same reading as c2gpu.model.resios (pcie_size_unit_bytes = 1024).
    """
    if nbytes < 0:
        raise ValueError(f"transfer size must be >= 0 bytes, got {nbytes}")
    if nbytes == 0:
        return 0.0
    size_kib = nbytes / TRANSFER_SIZE_UNIT_BYTES
    bw_mbs = min(gpu.transfer_peak_mbs, gpu.transfer_slope_mbs_per_kib * size_kib + gpu.transfer_intercept_mbs)
    return nbytes / (bw_mbs * 1e6)


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------

def _catalog_dir():
    return resources.files("c2gpu.gpus")


@lru_cache(maxsize=None)
def _catalog() -> dict[str, GPU]:
    """All catalog entries by key; also checks that keys and aliases are unique."""
    gpus: dict[str, GPU] = {}
    names: dict[str, str] = {}
    for entry in sorted(_catalog_dir().iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        gpu = _load_file(entry.name, entry.read_text(encoding="utf-8"), (), catalog=True)
        for n in (gpu.key, *gpu.aliases):
            if n.lower() in names:
                raise GPUDescriptionError(f"catalog: name {n!r} used by both {names[n.lower()]} and {entry.name}")
            names[n.lower()] = entry.name
        gpus[gpu.key] = gpu
    return gpus


def list_gpus() -> list[GPU]:
    """Every catalog GPU, sorted by key."""
    return [g for _, g in sorted(_catalog().items())]


def _lookup_table() -> dict[str, str]:
    table = {}
    for g in _catalog().values():
        for n in (g.key, *g.aliases):
            table[n.lower()] = g.key
    return table


def load_gpu(name_or_path: str) -> GPU:
    """A catalog GPU by key or alias (case-insensitive), or a .toml/.json description file."""
    s = str(name_or_path).strip()
    p = Path(s)
    # A path is recognised by its suffix or a directory separator, never by a file of
    # that name happening to exist in the working directory.
    if p.suffix.lower() in (".toml", ".json") or "/" in s or "\\" in s:
        return _load_path(p, ())
    return _by_name(s)


@lru_cache(maxsize=None)
def _by_file_name(key: str) -> Optional[GPU]:
    """The catalog GPU whose file is `key`.toml and whose key is `key`, read alone: parsing the 13 catalog
    files for the alias table costs ~0.05 s that `--gpu h100-sxm` does not need (the whole catalog, and
    its check that names are unique, is still built for an alias, an unknown name or `c2gpu gpus`)."""
    entry = _catalog_dir() / f"{key}.toml"
    if not entry.is_file():
        return None
    gpu = _load_file(entry.name, entry.read_text(encoding="utf-8"), (), catalog=True)
    return gpu if gpu.key.lower() == key else None


def _by_name(name: str) -> GPU:
    if _catalog.cache_info().currsize == 0 and re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name.lower()):
        gpu = _by_file_name(name.lower())
        if gpu is not None:
            return gpu
    table = _lookup_table()
    key = table.get(name.lower())
    if key is None:
        close = difflib.get_close_matches(name.lower(), list(table), n=3, cutoff=0.5)
        # Map aliases back to keys for the suggestion, keeping order and dropping repeats.
        hints = list(dict.fromkeys(table[c] for c in close))
        hint = f"; did you mean {' or '.join(repr(h) for h in hints)}?" if hints else "."
        raise GPUDescriptionError(
            f"unknown GPU {name!r}{hint} Known GPUs: {', '.join(sorted(_catalog()))} "
            f"(or give a path to a .toml/.json description file)")
    return _catalog()[key]


def _load_path(path: Path, chain: tuple[str, ...]) -> GPU:
    if not path.is_file():
        raise GPUDescriptionError(f"GPU description file not found: {path}")
    return _load_file(str(path), path.read_text(encoding="utf-8"), chain)


def _parse(where: str, text: str) -> dict:
    try:
        if where.lower().endswith(".json"):
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        loc = Loc(where, int(m.group(1)), int(m.group(2))) if m else None
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise GPUDescriptionError(f"malformed TOML: {msg}" + ("" if loc else f" in {where}"), loc) from None
    except json.JSONDecodeError as e:
        raise GPUDescriptionError(f"malformed JSON: {e.msg}", Loc(where, e.lineno, e.colno)) from None
    if not isinstance(data, dict):
        raise GPUDescriptionError(f"{where}: a GPU description must be a table/object at top level")
    return data


def _resolve_source(where: str, dotted: str, source: Any, refs: Mapping[str, str]) -> str:
    """A source is either a key of [refs] (one word) or a literal citation (several words)."""
    if not isinstance(source, str) or not source.strip():
        raise GPUDescriptionError(f"{where}: field '{dotted}' has no source; give "
                                  f"{{ value = ..., source = \"where the number comes from\" }}")
    s = source.strip()
    if re.search(r"\s", s):
        return s
    if s in refs:
        return refs[s]
    raise GPUDescriptionError(f"{where}: source {s!r} of field '{dotted}' is not defined in [refs] "
                              f"(a literal source must be a phrase, not a single word)")


def _flatten(where: str, data: dict) -> dict[tuple[str, str], tuple[Any, str]]:
    """{(section, name): (value, expanded source)} for one file, checking its shape."""
    for k in data:
        if k not in _TOP_LEVEL:
            close = difflib.get_close_matches(k, sorted(_TOP_LEVEL), n=1)
            raise GPUDescriptionError(f"{where}: unknown top-level key {k!r}"
                                      + (f"; did you mean {close[0]!r}?" if close else ""))
    refs = data.get("refs", {})
    if not isinstance(refs, dict) or not all(isinstance(v, str) and v.strip() for v in refs.values()):
        raise GPUDescriptionError(f"{where}: [refs] must map short names to non-empty citation strings")
    out = {}
    for section in (*_SCALAR_SECTIONS, *_INSN_SECTIONS):
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise GPUDescriptionError(f"{where}: '{section}' must be a table")
        for name, entry in table.items():
            dotted = f"{section}.{name}"
            known = (name in INSTRUCTION_CLASSES) if section in _INSN_SECTIONS else (section, name) in _FIELD_BY_KEY
            if (section, name) in _REPLACED:
                raise GPUDescriptionError(f"{where}: field '{dotted}' is no longer read: {_REPLACED[section, name]}")
            if not known:
                pool = INSTRUCTION_CLASSES if section in _INSN_SECTIONS else \
                    [f.name for f in _FIELDS if f.section == section]
                close = difflib.get_close_matches(name, pool, n=1)
                raise GPUDescriptionError(f"{where}: unknown field '{dotted}'"
                                          + (f"; did you mean '{section}.{close[0]}'?" if close else ""))
            if not isinstance(entry, dict) or "value" not in entry:
                raise GPUDescriptionError(f"{where}: field '{dotted}' must be {{ value = ..., source = \"...\" }}, "
                                          f"got {entry!r}")
            extra = set(entry) - {"value", "source", "note"}
            if extra:
                raise GPUDescriptionError(f"{where}: field '{dotted}' has unknown keys {sorted(extra)}; "
                                          f"allowed: value, source, note")
            src = _resolve_source(where, dotted, entry.get("source"), refs)
            note = entry.get("note")
            if note is not None:
                if not isinstance(note, str) or not note.strip():
                    raise GPUDescriptionError(f"{where}: field '{dotted}': 'note' must be a non-empty string")
                src = f"{src} ({note.strip()})"
            out[(section, name)] = (entry["value"], src)
    return out


def _check_value(where: str, section: str, name: str, value: Any, kind: type, lo: float, hi: float,
                 unit: str, choices: tuple = ()) -> Any:
    dotted = f"{section}.{name}"
    if kind is str:
        if not isinstance(value, str) or not value.strip():
            raise GPUDescriptionError(f"{where}: field '{dotted}' must be a non-empty string, got {value!r}")
        if choices and value not in choices:
            raise GPUDescriptionError(f"{where}: field '{dotted}' = {value!r}; allowed: {', '.join(choices)}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and isinstance(value, float)
                                                                          and not value.is_integer()):
        want = "an integer" if kind is int else "a number"
        raise GPUDescriptionError(f"{where}: field '{dotted}' must be {want}, got {value!r}")
    if not math.isfinite(value) or not lo <= value <= hi:
        rng = f"{lo:g}" if lo == hi else f"{lo:g} .. {hi:g}"
        raise GPUDescriptionError(f"{where}: field '{dotted}' = {value!r} is out of range; "
                                  f"allowed {rng}{' ' + unit if unit else ''}")
    return kind(value)


def _load_file(where: str, text: str, chain: tuple[str, ...], catalog: bool = False) -> GPU:
    data = _parse(where, text)
    own = _flatten(where, data)
    base: Optional[GPU] = None
    inherits = data.get("inherits")
    if inherits is not None:
        if not isinstance(inherits, str):
            raise GPUDescriptionError(f"{where}: 'inherits' must be a GPU key or a file path")
        if inherits.lower() in chain or len(chain) > 8:
            raise GPUDescriptionError(f"{where}: 'inherits' makes a cycle: {' -> '.join((*chain, inherits))}")
        if inherits.lower().endswith((".toml", ".json")):
            p = Path(inherits)
            if not p.is_absolute():
                p = Path(where).parent / p
            base = _load_path(p, (*chain, inherits.lower()))
        elif catalog:
            # A catalog file inheriting from another catalog entry: found by reading the
            # files directly, since the catalog itself is still being built.
            base = _load_catalog_entry(inherits, (*chain, inherits.lower()))
        else:
            base = _by_name(inherits)

    # Start from the base GPU's values and sources, then overlay this file's.
    merged: dict[tuple[str, str], tuple[Any, str]] = {}
    if base is not None:
        merged.update(_as_flat(base))
    merged.update(own)

    vals: dict[str, Any] = {}
    sources: dict[str, str] = {}
    computed: set[str] = set()
    for f in _FIELDS:
        if (f.section, f.name) not in merged:
            if f.required:
                raise GPUDescriptionError(f"{where}: missing required field '{f.section}.{f.name}'"
                                          + (f" ({f.unit})" if f.unit else ""))
            vals[f.name] = None
            continue
        value, src = merged[(f.section, f.name)]
        vals[f.name] = _check_value(where, f.section, f.name, value, f.kind, f.lo, f.hi, f.unit, f.choices)
        sources[f.name] = src

    timings = {}
    for cls in INSTRUCTION_CLASSES:
        parts = {}
        for section, (lo, hi, unit, required) in _INSN_SECTIONS.items():
            if (section, cls) not in merged:
                if required:
                    raise GPUDescriptionError(f"{where}: missing required field '{section}.{cls}' ({unit})")
                continue
            value, src = merged[(section, cls)]
            parts[section] = _check_value(where, section, cls, value, float, lo, hi, unit)
            sources[f"{section}.{cls}"] = src
        if "warps_for_peak" not in parts:
            # Little's law: warps in flight needed to cover the latency at full rate.
            parts["warps_for_peak"] = max(1.0, parts["latency"] * parts["throughput"] / vals["warp_size"])
            sources[f"warps_for_peak.{cls}"] = ("derived: latency x throughput / warp_size (Little's law; "
                                                "seed Table 3.1 '#warps needed for peak' where measured)")
            computed.add(f"warps_for_peak.{cls}")
        timings[cls] = InstructionTiming(parts["latency"], parts["throughput"], parts["warps_for_peak"])

    if vals["memory_max_parallelism"] is None:
        # Scale the seed's max_p = 8 (GTX 460) by Little's law: outstanding bytes needed
        # per SM = latency x bandwidth per SM; the seed's point fixes the constant.
        per_sm = vals["dram_bandwidth_gbs"] / vals["core_clock_ghz"] / vals["sm_count"]
        vals["memory_max_parallelism"] = _SEED_MAX_P * (vals["dram_latency_cycles"] * per_sm) / (
            _SEED_LATENCY * _SEED_BYTES_PER_CYCLE_PER_SM)
        sources["memory_max_parallelism"] = (
            "derived: seed 004 section 4.3.2 max_p = 8 on the GTX 460, scaled by Little's law: "
            "8 x (dram_latency_cycles x bytes/cycle/SM) / (500 x 64/7)")
        computed.add("memory_max_parallelism")
    if vals["gpuperf_sync_gamma"] is None:
        vals["gpuperf_sync_gamma"] = _GPUPERF_GAMMA
        sources["gpuperf_sync_gamma"] = _GAMMA_DEFAULT_SOURCE
        computed.add("gpuperf_sync_gamma")
    for fname, default, why in _PERF_DEFAULTS:
        if vals[fname] is None:   # c2gpu.perf parameters: defaulted (and re-derived when inherited)
            vals[fname] = vals["shared_mem_latency_cycles"] if default is None else default
            sources[fname] = why
            computed.add(fname)

    stem = Path(where).stem
    name = data.get("name")
    key = data.get("key")
    if name is None and base is not None:
        name = f"{base.name} ({stem})"
    if name is None:
        raise GPUDescriptionError(f"{where}: missing required field 'name'")
    if key is None:
        key = stem.lower()
    aliases = data.get("aliases", [])
    if not isinstance(name, str) or not isinstance(key, str) or not key.strip() or \
            not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise GPUDescriptionError(f"{where}: 'name' and 'key' must be strings and 'aliases' a list of strings")

    gpu = GPU(name=name, key=key.lower(), aliases=tuple(a.lower() for a in aliases), **vals,
              instructions=MappingProxyType(timings), sources=MappingProxyType(sources),
              computed=frozenset(computed), path=where)
    _check_relations(where, gpu)
    return gpu


def _load_catalog_entry(key: str, chain: tuple[str, ...]) -> GPU:
    """Find a catalog file by key or alias without building the whole catalog (for inherits)."""
    for entry in _catalog_dir().iterdir():
        if not entry.name.endswith(".toml"):
            continue
        text = entry.read_text(encoding="utf-8")
        data = _parse(entry.name, text)
        names = [data.get("key", "")] + list(data.get("aliases", []))
        if key.lower() in (n.lower() for n in names):
            return _load_file(entry.name, text, chain, catalog=True)
    raise GPUDescriptionError(f"catalog: 'inherits = {key!r}' names no catalog GPU")


def _as_flat(gpu: GPU) -> dict[tuple[str, str], tuple[Any, str]]:
    """Back to {(section, name): (value, source)}, for inheriting; derived values stay out."""
    flat = {}
    for f in _FIELDS:
        src = gpu.sources.get(f.name)
        if src is None or f.name in gpu.computed:
            continue  # re-derive for the child (e.g. max_p follows a changed clock)
        flat[(f.section, f.name)] = (getattr(gpu, f.name), src)
    for cls, t in gpu.instructions.items():
        flat[("latency", cls)] = (t.latency, gpu.sources[f"latency.{cls}"])
        flat[("throughput", cls)] = (t.throughput, gpu.sources[f"throughput.{cls}"])
        if f"warps_for_peak.{cls}" not in gpu.computed:
            flat[("warps_for_peak", cls)] = (t.warps_for_peak, gpu.sources[f"warps_for_peak.{cls}"])
    return flat


def _check_relations(where: str, g: GPU) -> None:
    """Cross-field sanity: each rule names the fields and values involved."""
    def need(ok: bool, msg: str):
        if not ok:
            raise GPUDescriptionError(f"{where}: {msg}")

    need(bool(re.fullmatch(r"\d+\.\d+", g.compute_capability)),
         f"field 'spec.compute_capability' = {g.compute_capability!r}; expected 'major.minor', e.g. '8.0'")
    need(g.base_clock_ghz <= g.core_clock_ghz,
         f"spec.base_clock_ghz = {g.base_clock_ghz} exceeds spec.core_clock_ghz (boost) = {g.core_clock_ghz}")
    need(g.max_warps_per_sm * g.warp_size == g.max_threads_per_sm,
         f"spec.max_warps_per_sm x spec.warp_size = {g.max_warps_per_sm} x {g.warp_size} "
         f"!= spec.max_threads_per_sm = {g.max_threads_per_sm}")
    need(g.max_threads_per_block <= g.max_threads_per_sm,
         f"spec.max_threads_per_block = {g.max_threads_per_block} exceeds spec.max_threads_per_sm = "
         f"{g.max_threads_per_sm}")
    need(g.max_registers_per_block <= g.registers_per_sm,
         f"spec.max_registers_per_block = {g.max_registers_per_block} exceeds spec.registers_per_sm = "
         f"{g.registers_per_sm}")
    need(g.shared_mem_per_block <= g.shared_mem_per_block_optin,
         f"spec.shared_mem_per_block = {g.shared_mem_per_block} exceeds spec.shared_mem_per_block_optin = "
         f"{g.shared_mem_per_block_optin}")
    need(g.shared_mem_per_block_optin + g.reserved_shared_mem_per_block <= g.shared_mem_per_sm,
         f"spec.shared_mem_per_block_optin + spec.reserved_shared_mem_per_block = "
         f"{g.shared_mem_per_block_optin} + {g.reserved_shared_mem_per_block} exceeds "
         f"spec.shared_mem_per_sm = {g.shared_mem_per_sm}")
    need(g.sector_bytes <= g.cache_line_bytes,
         f"spec.sector_bytes = {g.sector_bytes} exceeds spec.cache_line_bytes = {g.cache_line_bytes}")
    need(g.transfer_intercept_mbs < g.transfer_peak_mbs,
         f"host_link.transfer_intercept_mbs = {g.transfer_intercept_mbs} must be below "
         f"host_link.transfer_peak_mbs = {g.transfer_peak_mbs}")
    need(g.launch_back_to_back_us <= g.launch_sync_us,
         f"overhead.launch_back_to_back_us = {g.launch_back_to_back_us} exceeds overhead.launch_sync_us = "
         f"{g.launch_sync_us} (a synchronize cannot make a launch cheaper)")
    fma = g.instructions["fp32_fma"].throughput
    need(fma <= g.fp32_lanes_per_sm,
         f"throughput.fp32_fma = {fma:g} exceeds spec.fp32_lanes_per_sm = {g.fp32_lanes_per_sm}")
