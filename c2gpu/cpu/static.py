"""Static CPU estimate: what one core would take to run a nest sequentially, without running it.

Used only when the nest cannot be timed (no C compiler on PATH, `--no-run`, or the measurement
failed); the result is labelled "static estimate" and says what it assumed.

The model is a roofline for ONE core running the sequential C code (seed 004, section 5.3 needs
the sequential time for speedup = sequential / (overhead + parallel)):

    time = max(compute, memory)

compute: every operation the nest executes (the IR's operation classes, times each statement's
    instance count from `c2gpu.analysis.counting`), plus one load per array read, one store per array
    write and two integer operations of loop control per loop iteration, issued at the CPU's
    scalar throughput.  Classes that share an execution resource add up (fp add/mul/fma/convert
    on the FP ports, div/sqrt on the divider, int/compare/select on the ALUs, loads, stores);
    the busiest resource, or the issue width if that binds first, gives the cycles.  Library
    calls (exp, sin, unknown functions) are added one after the other at their cost in cycles.
    An array access whose subscripts do not use the innermost loop (`C[i][j]` in matmul's k
    loop) is counted once per outer iteration: compilers keep it in a register.
memory: the bytes the nest touches (each array's exact index range over the iteration domain,
    from isl, as a bounding interval; or its access count when a subscript is not affine), read
    once at the bandwidth of the smallest cache level that holds them all, DRAM beyond the
    last-level cache.  That is warm data for anything that fits in a cache (the program usually
    has just written it) and compulsory traffic only: reuse lost to capacity misses and TLB
    misses are not modelled.

Scalar code, no SIMD and no dependence stalls: `cc -O2` (GCC >= 12 vectorizes at -O2) can be a
few times faster, a latency-bound reduction chain a few times slower.  Guards are ignored (both
branches of an `if` count), so guarded nests are over-estimated.  Treat it as an order of
magnitude.

CPU descriptions live in c2gpu/cpu/catalog/*.toml, every number with its source; the default is
"generic x86-64 server core, 1 thread".  `host_cpu()` reads the clock from /proc/cpuinfo and the
cache sizes from sysfs: it is opt-in, because the clock /proc/cpuinfo shows changes from one read
to the next on machines that scale their frequency, and c2gpu's reports must not.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import field, replace
from pathlib import Path
from typing import Mapping

import islpy as isl

from ..analysis import isl_sets as ph
from .. import units
from ..analysis.counting import enclosing_loops, evaluate_instances
from ..diagnostics import C2GPUError
from ..transform.normalize import normalize_nest
from ..ir import Access, Loop, Nest, Program
from ..symbolic import Poly
from .timing import CpuTiming
from ..records import dataclass

CATALOG = Path(__file__).resolve().parent / "catalog"
DEFAULT_CPU = "generic-x86-64"

# The execution resource each operation class occupies; classes on one resource add up.
UNITS = {
    "fp32_add": "fp", "fp64_add": "fp", "fp32_mul": "fp", "fp64_mul": "fp",
    "fp32_fma": "fp", "fp64_fma": "fp", "convert": "fp",
    "fp32_div": "divider", "fp64_div": "divider", "fp32_sqrt": "divider", "fp64_sqrt": "divider",
    "int": "alu", "compare": "alu", "select": "alu",
    "load": "load", "store": "store",
}
# Calls: their cost in cycles, one after the other (they are not pipelined with the loop body).
SERIAL = ("fp32_special", "fp64_special", "unknown_call")
# Instructions per operation where not 1: baseline x86-64 has no FMA, so a*b+c is a mul and an add.
UOPS = {"fp32_fma": 2, "fp64_fma": 2}
LOOP_CONTROL_OPS = 2   # per loop iteration: increment, compare-and-branch

_THROUGHPUT_KEYS = tuple(UNITS) + SERIAL
_MEMORY_KEYS = ("line_bytes", "l1_bytes", "l2_bytes", "llc_bytes", "l1_gbs", "l2_gbs", "llc_gbs", "dram_gbs")


@dataclass(frozen=True)
class CpuDescription:
    """One CPU core as the static estimate sees it; `sources` names where every number comes from."""
    key: str
    name: str
    clock_ghz: float
    throughput: dict[str, float]          # op class -> scalar operations per cycle
    issue_width: float                    # instructions per cycle
    line_bytes: int
    l1_bytes: int
    l2_bytes: int
    llc_bytes: int
    bandwidth_gbs: dict[str, float]       # "l1", "l2", "llc", "dram": one thread, 1e9 B/s
    sources: dict[str, str] = field(default_factory=dict)   # field -> source (ref key or phrase)
    refs: dict[str, str] = field(default_factory=dict)      # ref key -> citation

    @property
    def memory_bandwidth_gbs(self) -> float:
        return self.bandwidth_gbs["dram"]

    def source_of(self, key: str) -> str:
        s = self.sources.get(key, "")
        return self.refs.get(s, s)


def _value(table: dict, key: str, where: str, sources: dict) -> float:
    if key not in table:
        raise C2GPUError(f"CPU description {where}: missing '{key}'")
    entry = table[key]
    value = entry.get("value") if isinstance(entry, dict) else entry
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise C2GPUError(f"CPU description {where}: '{key}' must be a positive number, not {value!r}")
    if isinstance(entry, dict):
        sources[key] = str(entry.get("source", ""))
    return float(value)


def load_cpu(name: str | None = None) -> CpuDescription:
    """A catalog CPU by key (default "generic-x86-64") or a .toml description file (same format)."""
    name = name or DEFAULT_CPU
    path = Path(name) if name.endswith(".toml") else CATALOG / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in CATALOG.glob("*.toml")))
        raise C2GPUError(f"unknown CPU '{name}' (known: {known}; or give a .toml file)")
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise C2GPUError(f"cannot read CPU description '{path}': {e}") from None
    where, sources = f"'{path.name}'", {}
    thr = data.get("throughput", {})
    mem = data.get("memory", {})
    throughput = {k: _value(thr, k, where, sources) for k in _THROUGHPUT_KEYS}
    m = {k: _value(mem, k, where, sources) for k in _MEMORY_KEYS}
    return CpuDescription(
        key=str(data.get("key", path.stem)), name=str(data.get("name", path.stem)),
        clock_ghz=_value(data.get("clock", {}), "ghz", where, sources),
        throughput=throughput, issue_width=_value(thr, "issue_width", where, sources),
        line_bytes=int(m["line_bytes"]), l1_bytes=int(m["l1_bytes"]), l2_bytes=int(m["l2_bytes"]),
        llc_bytes=int(m["llc_bytes"]),
        bandwidth_gbs={"l1": m["l1_gbs"], "l2": m["l2_gbs"], "llc": m["llc_gbs"], "dram": m["dram_gbs"]},
        sources=sources, refs={str(k): str(v) for k, v in data.get("refs", {}).items()})


def _size(text: str) -> int | None:
    text = text.strip().upper()
    mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in "KMG" else text
    return int(digits) * mult if digits.isdigit() else None


def host_cpu(base: CpuDescription | None = None, cpuinfo: str = "/proc/cpuinfo",
             cache_dir: str = "/sys/devices/system/cpu/cpu0/cache") -> CpuDescription:
    """`base` (the generic core) with this machine's clock and cache sizes where Linux reports them.

    Clock: the highest "cpu MHz" in /proc/cpuinfo (the current clock of the fastest core when read;
    a virtual machine usually shows the nominal clock).  Caches: cpu0's L1 data, L2 and L3 sizes.
    Throughputs and bandwidths stay the generic ones.  Not deterministic: opt-in only.
    """
    d = base or load_cpu()
    sources, changes = dict(d.sources), {}
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        text = ""
    mhz = [float(v) for k, _, v in (ln.partition(":") for ln in text.splitlines())
           if k.strip() == "cpu MHz" and v.strip().replace(".", "", 1).isdigit()]
    model = next((v.strip() for k, _, v in (ln.partition(":") for ln in text.splitlines())
                  if k.strip() == "model name"), "")
    if mhz and 0.5 <= max(mhz) / 1000 <= 7.0:
        changes["clock_ghz"] = round(max(mhz) / 1000, 3)
        sources["ghz"] = f"{cpuinfo}: highest 'cpu MHz' when read"
    for idx in sorted(Path(cache_dir).glob("index*")) if Path(cache_dir).is_dir() else ():
        try:
            level = (idx / "level").read_text().strip()
            kind = (idx / "type").read_text().strip()
            size = _size((idx / "size").read_text())
        except OSError:
            continue
        key = {"1": "l1_bytes", "2": "l2_bytes", "3": "llc_bytes"}.get(level)
        if key and size and kind in ("Data", "Unified"):
            changes[key] = size
            sources[key] = f"{idx}/size"
    name = f"{model or 'this machine'} (host clock and caches), 1 thread"
    return replace(d, key="host", name=name, sources=sources, **changes)


# --------------------------------------------------------------------------- counting

def _normalized(nest: Nest) -> Nest:
    if all(lp.normalized for lp in nest.loops()):
        return nest
    return normalize_nest(nest)


def _loop_paths(loop: Loop, path: tuple[Loop, ...] = ()):
    """(loop, loops from the outermost down to and including it) for every loop."""
    path = path + (loop,)
    yield loop, list(path)
    for node in loop.body:
        if isinstance(node, Loop):
            yield from _loop_paths(node, path)


def _uses(access: Access, var: str) -> bool:
    return any(s is None or var in s.variables for s in access.subscripts)


class _Unknown(Exception):
    pass


def _count(nest: Nest, env: Mapping[str, int]) -> tuple[dict[str, int], int]:
    """Dynamic operation counts by class (loads/stores included) and elements accessed."""
    ops: dict[str, int] = {}
    accessed = 0

    def add(cls: str, n: int) -> None:
        if n:
            ops[cls] = ops.get(cls, 0) + n

    for s in nest.statements():
        loops = enclosing_loops(nest, s)
        inst = evaluate_instances(loops, env)
        if inst is None:
            raise _Unknown(f"the instance count of '{s.text}' is unknown (non-affine loop bound)")
        for cls, k in s.ops:
            add(cls, k * inst)
        outer = None
        for a in s.accesses:
            accessed += inst * a.elem_size
            n = inst
            if loops and not _uses(a, loops[-1].var):
                # invariant in the innermost loop: kept in a register, loaded/stored once per outer iteration
                outer = evaluate_instances(loops[:-1], env) if outer is None else outer
                n = outer if outer is not None else inst
            add("load" if a.kind == "read" else "store", n)
    for lp, path in _loop_paths(nest.root):
        iters = evaluate_instances(path, env)
        if iters is None:
            raise _Unknown(f"the trip count of loop '{lp.var}' is unknown (non-affine bound)")
        add("loop_control", LOOP_CONTROL_OPS * iters)
    return ops, accessed


def _flat_offset(nest: Nest, a: Access, env: Mapping[str, int]) -> Poly | None:
    """The access's element offset from the array start (row-major), with parameters bound."""
    subs = a.subscripts
    if not subs or any(s is None for s in subs):
        return None
    if len(subs) == 1:
        off = subs[0]
    else:
        try:
            dims = nest.array(a.array).dims
        except KeyError:        # an array the frontend left undescribed (declared inside a refused nest)
            return None
        inner = dims[len(dims) - len(subs) + 1:] if len(dims) >= len(subs) else None
        if inner is None or any(d is None for d in inner):
            return None
        off, stride = Poly.const(0), Poly.const(1)
        for s, d in zip(reversed(subs), (None,) + tuple(reversed(inner))):
            stride = stride if d is None else stride * d
            off = off + s * stride
    off = off.substitute(dict(env))
    return off if off.is_affine() else None


def _footprint(nest: Nest, env: Mapping[str, int], elems_accessed: dict[str, int]) -> tuple[int, dict[str, int], str]:
    """Bytes touched per array: exact index interval (isl) or, failing that, the access count."""
    params = ", ".join(nest.params)
    fix = isl.Set(f"[{params}] -> {{ : {' and '.join(f'{p} = {int(env[p])}' for p in nest.params) or 'true'} }}")
    ranges: dict[str, list[int] | None] = {}
    for s in nest.statements():
        for a in s.accesses:
            if ranges.get(a.array, []) is None:
                continue
            off = _flat_offset(nest, a, env)
            try:
                if off is None:
                    raise ValueError
                dom, names = ph.statement_domain(nest, s)
                if not off.variables <= set(names):
                    raise ValueError
                dom = dom.intersect_params(fix)
                if dom.is_empty():
                    continue
                dims = ", ".join(names[lp.var] for lp in ph.loop_path(nest, s))
                m = isl.Map(f"[{params}] -> {{ [{dims}] -> [c2gpu_e] : c2gpu_e = {ph.poly_to_isl(off, names)} }}")
                vals = dom.apply(m)
                lo, hi = vals.dim_min_val(0), vals.dim_max_val(0)
                if not (lo.is_int() and hi.is_int()):
                    raise ValueError
                lo, hi = int(lo.to_python()), int(hi.to_python())
            except (ValueError, isl.Error):
                ranges[a.array] = None
                continue
            r = ranges.setdefault(a.array, [lo, hi])
            r[0], r[1] = min(r[0], lo), max(r[1], hi)
    per_array, exact = {}, True
    for info in nest.arrays:
        if info.name not in ranges and info.name not in elems_accessed:
            continue
        r = ranges.get(info.name)
        if r is not None:
            per_array[info.name] = (r[1] - r[0] + 1) * info.elem_size
            continue
        exact = False
        total = elems_accessed.get(info.name, 0) * info.elem_size
        try:   # never more than the declared array
            size = math.prod(int(d.evaluate(env)) for d in info.dims) * info.elem_size if info.dims else None
        except (KeyError, AttributeError, TypeError):
            size = None
        per_array[info.name] = min(total, size) if size else total
    method = "exact index ranges (isl)" if exact else "exact index ranges where affine, access counts elsewhere"
    return sum(per_array.values()), per_array, method


# --------------------------------------------------------------------------- the estimate

def _unknown(nest: Nest, why: str, reason: str, cpu: CpuDescription) -> CpuTiming:
    note = f"static estimate impossible: {why}" + (f" ({reason})" if reason else "")
    return CpuTiming(nest=nest.name, source="static estimate", median_s=None, note=note,
                     details={"cpu": cpu.key, "cpu_name": cpu.name, "reason": reason})


def static_estimate(nest: Nest, params: Mapping[str, int] | None = None, cpu: CpuDescription | None = None,
                    reason: str = "") -> CpuTiming:
    """Estimated sequential time of ONE execution of `nest` on one core of `cpu` (see the module doc).

    params: values of the nest's symbolic parameters (function arguments such as `n`); sizes given
    by `#define`/-D are already in the IR.  Without a value for every parameter, `median_s` is None.
    reason: why the estimate is used instead of a measurement, repeated in the note.
    """
    cpu = cpu or load_cpu()
    nest = _normalized(nest.as_written or nest)     # the CPU runs the C as written, not a reordered port of it
    env = {k: int(v) for k, v in (params or {}).items()}
    missing = sorted(set(nest.params) - set(env))
    if missing:
        return _unknown(nest, f"needs a value for {', '.join(missing)} (params={{{missing[0]!r}: ...}} "
                              f"or --param {missing[0]}=...)", reason, cpu)
    try:
        ops, _ = _count(nest, env)
    except _Unknown as e:
        return _unknown(nest, str(e), reason, cpu)
    elems: dict[str, int] = {}
    for s in nest.statements():
        inst = evaluate_instances(enclosing_loops(nest, s), env) or 0
        for a in s.accesses:
            elems[a.array] = elems.get(a.array, 0) + inst
    footprint, per_array, method = _footprint(nest, env, elems)

    # compute: busiest resource, or the issue width, plus serial calls
    unit_cycles: dict[str, float] = {}
    uops, serial, unknown_classes = 0.0, 0.0, []
    for cls, n in sorted(ops.items()):
        if cls == "loop_control":
            unit_cycles["alu"] = unit_cycles.get("alu", 0.0) + n / cpu.throughput["int"]
            uops += n
        elif cls in SERIAL:
            serial += n / cpu.throughput[cls]
            uops += n
        else:
            if cls not in UNITS:
                unknown_classes.append(cls)   # a class this model does not know: 1 per cycle
            unit = UNITS.get(cls, "other")
            unit_cycles[unit] = unit_cycles.get(unit, 0.0) + n / cpu.throughput.get(cls, 1.0)
            uops += n * UOPS.get(cls, 1)
    issue = uops / cpu.issue_width
    cycles = max([issue, *unit_cycles.values()]) + serial
    compute_s = cycles / (cpu.clock_ghz * 1e9)

    # memory: the footprint once, from the smallest level that holds it
    level = next((lv for lv, size in (("l1", cpu.l1_bytes), ("l2", cpu.l2_bytes), ("llc", cpu.llc_bytes))
                  if footprint <= size), "dram")
    bw = cpu.bandwidth_gbs[level]
    memory_s = footprint / (bw * 1e9)
    t = max(compute_s, memory_s)
    limiter = "compute" if compute_s >= memory_s else "memory"
    bound_by = max(unit_cycles, key=unit_cycles.get) if unit_cycles and max(unit_cycles.values()) >= issue else "issue"
    note = (f"static estimate ({reason}): " if reason else "static estimate: ") + \
        (f"{cpu.name} at {cpu.clock_ghz:g} GHz; scalar code at issue throughput (no SIMD, no dependence stalls), "
         f"guards ignored; {units.byte_size(footprint)} touched once from {level.upper()} ({bw:g} GB/s); "
         f"{limiter}-bound; an order of magnitude, not a measurement")
    if unknown_classes:
        note += f"; op classes {', '.join(unknown_classes)} taken at 1 per cycle"
    details = {
        "cpu": cpu.key, "cpu_name": cpu.name, "clock_ghz": cpu.clock_ghz, "reason": reason,
        "params": dict(sorted(env.items())), "ops": dict(sorted(ops.items())),
        "unit_cycles": {k: round(v) for k, v in sorted(unit_cycles.items())}, "issue_cycles": round(issue),
        "serial_call_cycles": round(serial), "cycles": round(cycles), "bound_by": bound_by,
        "compute_s": compute_s, "memory_s": memory_s, "limiter": limiter,
        "footprint_bytes": footprint, "footprint_per_array": dict(sorted(per_array.items())),
        "footprint_method": method, "memory_level": level, "bandwidth_gbs": bw,
    }
    return CpuTiming(nest=nest.name, source="static estimate", median_s=t, note=note, details=details)


def estimate_program(program: Program, params: Mapping[str, int] | None = None,
                     cpu: CpuDescription | None = None, reason: str = "") -> dict[str, CpuTiming]:
    """`static_estimate` for every nest of `program`, by nest name."""
    cpu = cpu or load_cpu()
    return {n.name: static_estimate(n, n.param_env(dict(params or {})), cpu, reason) for n in program.nests}
