"""Text and JSON renderings of performance predictions, and the `c2gpu gpus` table.

Every number printed carries its unit; JSON keys carry theirs (`_s` seconds, `_bytes`, `_cycles`).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional

from .. import units
from ..model.gpu import GPU, list_gpus
from .categories import CATEGORIES, nest_categories

if TYPE_CHECKING:       # names for annotations only: `c2gpu gpus` (gpus_table) must not import the model stack
    from .predict import KernelPerformance, LaunchCost, NestPerformance


# --------------------------------------------------------------------------- units (c2gpu.units has the rest)

def fmt_block(b) -> str:
    return "x".join(str(x) for x in b)


def _num(x: float) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    return units.significant(x)


# --------------------------------------------------------------------------- gpus

def gpus_table(gpus: Optional[list[GPU]] = None) -> str:
    gpus = gpus if gpus is not None else list_gpus()
    head = ("key", "name", "SMs", "clock", "DRAM", "peak fp32", "host link")
    rows = [(g.key, g.name, str(g.sm_count), f"{g.core_clock_ghz:.3g} GHz", f"{g.dram_bandwidth_gbs:.4g} GB/s",
             f"{g.peak_fp32_gflops:.5g} GFLOP/s", f"PCIe {g.pcie_generation} x{g.pcie_lanes} "
             f"({g.transfer_peak_mbs / 1000:.3g} GB/s)") for g in gpus]
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]
    right = {2, 3, 4, 5}

    def line(r):
        return "  ".join(c.rjust(w) if k in right else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths))).rstrip()
    return "\n".join([line(head), line(tuple("-" * w for w in widths))] + [line(r) for r in rows]) + "\n"


# --------------------------------------------------------------------------- text

def performance_text(perf: NestPerformance, indent: str = "  ") -> str:
    g = perf.gpu
    models = perf.models
    d = perf.default_model
    tiles = "with the shared-memory tiles port adds" if perf.shared_memory else "plain kernels, no shared-memory tiles"
    out = [f"{indent}performance on {g.name} [{g.key}], default model {d}, {tiles}"
           + (f"; sizes {', '.join(f'{k}={v}' for k, v in sorted(perf.env.items()))}" if perf.env else "") + ":"]
    p = indent + "  "
    for k in perf.kernels:
        out.extend(_kernel_text(k, models, d, p))
    if perf.transfers:
        parts = [f"{t.array} {t.direction} {units.byte_size(t.bytes)} {units.seconds(t.seconds)}"
                 for t in perf.transfers]
        out.append(f"{p}transfers (eq. 4.2, PCIe {g.pcie_generation} x{g.pcie_lanes}): " + "; ".join(parts)
                   + f"; total {units.seconds(perf.transfer_s)}")
    else:
        out.append(f"{p}transfers: none costed")
    out.append(f"{p}launch overhead: {launch_term(perf.launch)} = {units.seconds(perf.launch_overhead_s)}")
    out.append(_nest_categories_text(perf, p))
    if perf.shared_trials:
        rows = [f"{'none' if b is None else units.byte_size(b)} ({why}): {units.seconds(total)}"
                for b, why, total, _ in perf.shared_trials]
        kept = "no shared memory" if perf.shared_budget is None else f"budget {units.byte_size(perf.shared_budget)}"
        out.append(f"{p}shared memory decision (predicted total, {d}): " + "; ".join(rows) + f" -> {kept}; "
                   f"without shared memory {units.seconds(perf.without_shared_s)}, "
                   f"with {units.seconds(min(t for b, _, t, _ in perf.shared_trials if b is not None))}")
    if len(perf.structure_trials) > 1:
        out.append(f"{p}kernel structure (predicted total, {d}, each with the shared-memory tiles that make it fastest, or none):")
        width = max(28, *(len(t.structure) for t in perf.structure_trials))
        for t in perf.structure_trials:
            out.append(f"{p}  {t.structure:<{width}} {t.kernels} kernel{'s' if t.kernels != 1 else ' '}  "
                       f"{t.launches:>8.0f} launch{'es' if t.launches != 1 else '  '}  {units.seconds(t.total_s):>9}"
                       f"{'  <- chosen' if t.chosen else ''}{'  ' + t.bound if t.bound else ''}"
                       f"{'  not generated: ' + t.not_generated if t.not_generated else ''}")
    ctx = f" + context creation {units.seconds(perf.context_s)}" if perf.include_context else \
        f" (CUDA context creation {units.seconds(perf.context_s)} not included; --include-context)"
    totals = ", ".join(f"{m} {units.seconds(perf.total_s(m))}{' (default)' if m == d else ''}" for m in models)
    out.append(f"{p}total (kernels + launches + transfers{ctx}): {totals}")
    for n in perf.notes:
        out.append(f"{p}note: {n}")
    return "\n".join(out)


def _categories_text(tc, per: str) -> str:
    """One line: a kernel's seed-002 time categories (c2gpu.perf.categories) and its limiter."""
    t = tc.time_s
    parts = ", ".join(f"{CATEGORIES[c]} {units.seconds(s)}" + (f" ({s / t:.0%})" if t > 0 and s > 0 else "")
                      for c, s in tc.per_launch_s.items())
    return f"where the time goes (seed 002, {tc.model}{per}): {parts}; limiter: {tc.limiter_text}"


def _nest_categories_text(perf: NestPerformance, p: str) -> str:
    """The nest's GPU time as seed 002 splits it: communicate (the transfers), the launches, and the kernels'
    categories over all their launches."""
    nc = nest_categories(perf)
    kernels = ", ".join(f"{CATEGORIES[c]} {units.seconds(s)}" for c, s in nc.kernels_s.items())
    ctx = f" + context creation {units.seconds(nc.context_s)}" if nc.context_s else ""
    return (f"{p}where the GPU time goes (seed 002, {nc.model}): communicate (host-device transfers) "
            f"{units.seconds(nc.communicate_s)} + launches {units.seconds(nc.launches_s)} ({launch_term(perf.launch)}) "
            f"+ kernels "
            f"{units.seconds(math.fsum(nc.kernels_s.values()))} ({kernels}){ctx} = {units.seconds(nc.total_s)}")

def launch_term(cost: LaunchCost) -> str:
    """"40 launches x 3.8 µs + 1 synchronize x 6.2 µs": the launch cost with both counts."""
    def count(n: float, one: str, many: str) -> str:
        return f"{n:.0f} {one if n == 1 else many}"
    return (f"{count(cost.launches, 'launch', 'launches')} x {units.seconds(cost.launch_s)} + "
            f"{count(cost.synchronizes, 'synchronize', 'synchronizes')} x {units.seconds(cost.synchronize_s)}")


def _kernel_text(k: KernelPerformance, models, d, p) -> list[str]:
    geo = k.geometry
    out = []
    mapped_default = next((c.block for c in k.candidates if "mapping default" in c.labels
                           or "forced (--block)" in c.labels), k.block)
    how = {"forced": "forced with --block", "search": f"lowest predicted time of {len(k.candidates)} candidates; "
           f"mapping default {fmt_block(mapped_default)}", "mapping": "mapping default"}[k.block_choice]
    out.append(f"{p}kernel {k.name}: block {fmt_block(k.block)} ({how}), grid {fmt_block(geo.grid)} = "
               f"{geo.blocks} blocks, {geo.threads} threads, {k.launches:.0f} launch{'es' if k.launches != 1 else ''}")
    q = p + "  "
    preds = " | ".join(f"{m} {units.seconds(k.predictions[m].time_s)}{' (default)' if m == d else ''}"
                       f"{' [clamped to roofline]' if k.predictions[m].clamped else ''}" for m in models)
    per = " per launch" if k.launches != 1 else ""
    out.append(f"{q}predicted kernel time{per}: {preds}")
    if d in k.categories:
        out.append(f"{q}{_categories_text(k.categories[d], per)}")
    rf = k.roofline
    out.append(f"{q}roofline bound: {units.seconds(rf.bound_s)} ({rf.limiter}: DRAM lower bound "
               f"{units.byte_size(k.memory.dram_lower_bound)} at peak -> {units.seconds(rf.memory_s)}, "
               f"{units.flop_count(k.intensity.flops)} at peak -> {units.seconds(rf.compute_s)}; "
               f"{_num(k.intensity.flops_per_dram_byte)} flop/B)")
    o = k.occupancy
    if o is not None:
        out.append(f"{q}occupancy: {o.active_warps_per_sm} warps/SM ({o.occupancy:.0%}), {o.active_blocks_per_sm} "
                   f"blocks/SM, limited by {o.limiting_factor}; registers {k.registers.count}/thread "
                   f"[{k.registers.source}]" + (f", spills {k.registers.spill_stores} B" if k.registers.spill_stores else ""))
    ic = k.instructions
    out.append(f"{q}per thread: {ic.total:.4g} instructions ({', '.join(f'{c} {n:.4g}' for c, n in ic.per_class.items())}; "
               f"{ic.memory:.4g} global, {ic.shared:.4g} shared memory); address arithmetic {ic.address:.4g}, "
               f"loop overhead {ic.loop_overhead:.4g}")
    out.append(f"{q}ILP {k.ilp:.3g} (eq. 6.1, {k.hot_region}), memory parallelism {k.mlp:.3g}, "
               f"arithmetic intensity {_num(k.intensity.alg63)} (Alg. 6.3: {k.intensity.on_chip} on-chip / "
               f"{k.intensity.off_chip} off-chip)")
    mem = k.memory
    out.append(f"{q}memory per launch: DRAM {units.byte_size(mem.dram_estimate)} estimated (lower bound "
               f"{units.byte_size(mem.dram_lower_bound)}), L2->SM {units.byte_size(mem.l2_bytes)}, working set "
               f"{units.byte_size(mem.working_set)}; L1 reuse window {mem.l1_window} iteration"
               f"{'s' if mem.l1_window != 1 else ''}")
    out.append(f"{q}coalescing (per warp request: 32-B sectors / 128-B lines; L2 sectors, DRAM sectors):")
    for c in mem.accesses:
        flag = "  UNKNOWN STRIDE: worst case assumed" if c.unknown else ""
        where = f" (line {c.line})" if c.line else ""
        if c.where == "shared tile":
            out.append(f"{q}  {c.kind:<5} {c.text}{where}: served by its shared-memory tile "
                       f"(as a global access: {c.sectors:.3g} sectors / {c.lines:.3g} lines)")
            continue
        if c.requests == 0:
            out.append(f"{q}  {c.kind:<5} {c.text}{where}: only in boundary threads (its guard holds in none of "
                       "the sampled interior warps): not costed")
            continue
        tag = f" [{c.where}]" if c.where != "global" else ""
        out.append(f"{q}  {c.kind:<5} {c.text}{where}{tag}: {c.sectors:.3g} sectors / {c.lines:.3g} lines; "
                   f"{c.l2_sectors:.3g} from L2, {c.dram_sectors:.3g} from DRAM{flag}")
    if k.tiles:
        out.append(f"{q}shared-memory tiles: " + "; ".join(k.tiles))
    if k.benefits:
        b = k.benefits
        out.append(f"{q}GPUPerf ({b.get('case')}): T_comp {units.seconds(b.get('T_comp'))}, "
                   f"T_mem {units.seconds(b.get('T_mem'))}, "
                   f"T_overlap {units.seconds(b.get('T_overlap'))}; ideal T_fp {units.seconds(b.get('T_fp'))}, "
                   f"T_mem_min {units.seconds(b.get('T_mem_min'))}")
        out.append(f"{q}GPUPerf benefits (time a fix could save per launch): B_itilp {units.seconds(b.get('B_itilp'))} "
                   f"(more ILP/TLP), B_serial {units.seconds(b.get('B_serial'))} (serialization), B_fp "
                   f"{units.seconds(b.get('B_fp'))} (fewer instructions), B_memlp {units.seconds(b.get('B_memlp'))} "
                   f"(memory-level parallelism)")
    if k.hotspots:
        out.append(f"{q}hotspots (Resios: compute units idle while only this access was in flight):")
        for h in k.hotspots:
            where = f" (line {h.line})" if h.line else ""
            out.append(f"{q}  {h.text}{where}: {units.seconds(h.idle_s)} per launch ({h.share:.0%} of the kernel)")
    elif "resios" in k.predictions:
        out.append(f"{q}hotspots: none (the compute units never waited on memory alone)")
    if k.candidates:
        others = [m for m in models if m != d]
        out.append(f"{q}block sizes (predicted kernel time per launch"
                   + (f"; {', '.join(others)} on the chosen block only" if others and len(k.candidates) > 1 else "")
                   + "):")
        hdr = f"{q}  {'block':<11} {'threads':>7} {'warps/SM':>8} {'occ':>5} {'limit':<13}" + "".join(
            f" {m:>10}" for m in models) + "  note"
        out.append(hdr)
        for c in k.candidates:
            occ = c.occupancy
            if occ is None or not c.times:
                out.append(f"{q}  {fmt_block(c.block):<11} {c.block[0] * c.block[1] * c.block[2]:>7}  cannot "
                           f"launch: {c.error}" + (f"  {', '.join(c.labels)}" if c.labels else ""))
                continue
            out.append(f"{q}  {fmt_block(c.block):<11} {c.block[0] * c.block[1] * c.block[2]:>7} "
                       f"{occ.active_warps_per_sm:>8} {occ.occupancy:>5.0%} {occ.limiting_factor:<13}"
                       + "".join(f" {units.seconds(c.times[m]) if m in c.times else '-':>10}" for m in models)
                       + (f"  {', '.join(c.labels)}" if c.labels else ""))
        for label, (shape, why) in k.strategies.items():
            out.append(f"{q}  5.2.1 {label}: {fmt_block(shape)} ({why})")
    for m in models:
        for n in k.predictions[m].notes:
            out.append(f"{q}{m}: {n}")
    for n in k.notes:
        out.append(f"{q}note: {n}")
    return out


# --------------------------------------------------------------------------- JSON

def _f(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def performance_json(perf: NestPerformance | None, error: str | None = None) -> dict | None:
    """The "performance" entry of a nest in analyze's JSON (schema: $defs/performance)."""
    if perf is None:
        return None if error is None else {"error": error}
    g = perf.gpu
    return {
        "gpu": {"key": g.key, "name": g.name},
        "default_model": perf.default_model,
        "shared_memory_tiles": perf.shared_memory,
        "structure_decision": [{"structure": t.structure, "kernels": t.kernels, "launches": t.launches,
                                "total_s": t.total_s, "chosen": t.chosen, "bound": t.bound or None,
                                "not_generated": t.not_generated or None}
                               for t in perf.structure_trials] or None,
        "shared_memory_decision": None if not perf.shared_trials else {
            "budget_bytes": perf.shared_budget, "without_shared_s": perf.without_shared_s,
            "trials": [{"budget_bytes": b, "why": why, "total_s": t, "kernel_s": ks}
                       for b, why, t, ks in perf.shared_trials]},
        "models": list(perf.models),
        "sizes": {k: v for k, v in sorted(perf.env.items())},
        "kernels": [_kernel_json(k, perf.models) for k in perf.kernels],
        "transfers": [{"array": t.array, "direction": t.direction, "bytes": t.bytes, "time_s": t.seconds}
                      for t in perf.transfers],
        "transfer_time_s": perf.transfer_s,
        "launch_overhead_s": perf.launch_overhead_s,
        "launch_cost": {"launches": perf.launch.launches, "synchronizes": perf.launch.synchronizes,
                        "launch_s": perf.launch.launch_s, "synchronize_s": perf.launch.synchronize_s},
        "context_creation_s": perf.context_s,
        "context_included": perf.include_context,
        "total_time_s": {m: perf.total_s(m) for m in perf.models},
        "kernel_time_s": {m: perf.kernel_s(m) for m in perf.models},
        "time_categories": {m: _nest_categories_json(perf, m) for m in perf.models},
        "notes": list(perf.notes),
    }


def _nest_categories_json(perf: NestPerformance, model: str) -> dict:
    nc = nest_categories(perf, model)
    return {"communicate_s": nc.communicate_s, "launches_s": nc.launches_s, "launches": nc.launches,
            "context_s": nc.context_s, "kernels_s": dict(nc.kernels_s), "total_s": nc.total_s}


def _categories_json(tc) -> dict:
    return {"per_launch_s": dict(tc.per_launch_s), "all_launches_s": tc.all_launches_s,
            "busy_share": tc.busy_share, "limiter": tc.limiter, "limiter_share": tc.share(tc.limiter),
            "limiter_text": tc.limiter_text}


def _kernel_json(k: KernelPerformance, models) -> dict:
    o = k.occupancy
    geo = k.geometry
    return {
        "name": k.name,
        "launches": k.launches,
        "block": list(k.block),
        "block_choice": k.block_choice,
        "grid": list(geo.grid),
        "threads": geo.threads,
        "predictions": {m: {"time_s": k.predictions[m].time_s, "model_time_s": k.predictions[m].raw_time_s,
                            "clamped_to_roofline": k.predictions[m].clamped,
                            "breakdown_s": {a: _f(b) for a, b in k.predictions[m].breakdown.items()},
                            "notes": list(k.predictions[m].notes)} for m in models},
        "roofline": {"bound_s": k.roofline.bound_s, "memory_s": k.roofline.memory_s,
                     "compute_s": k.roofline.compute_s, "limiter": k.roofline.limiter,
                     "dram_lower_bound_bytes": k.memory.dram_lower_bound, "flops": k.intensity.flops,
                     "flops_per_dram_byte": _f(k.intensity.flops_per_dram_byte)},
        "occupancy": None if o is None else {
            "active_warps_per_sm": o.active_warps_per_sm, "active_blocks_per_sm": o.active_blocks_per_sm,
            "occupancy": o.occupancy, "limiting_factor": o.limiting_factor},
        "registers": {"per_thread": k.registers.count, "source": k.registers.source,
                      "spill_store_bytes": k.registers.spill_stores, "spill_load_bytes": k.registers.spill_loads},
        "ilp": k.ilp, "mlp": k.mlp, "hot_region": k.hot_region,
        "arithmetic_intensity": {"alg_6_3": _f(k.intensity.alg63), "on_chip": k.intensity.on_chip,
                                 "off_chip": k.intensity.off_chip},
        "instructions_per_thread": {"by_class": dict(k.instructions.per_class),
                                    "statement_ops": dict(k.instructions.per_ir_class),
                                    "address": k.instructions.address, "loop_overhead": k.instructions.loop_overhead,
                                    "global_memory": k.instructions.memory, "shared_memory": k.instructions.shared},
        "memory": {"dram_estimate_bytes": k.memory.dram_estimate, "dram_lower_bound_bytes": k.memory.dram_lower_bound,
                   "l2_bytes": k.memory.l2_bytes, "working_set_bytes": k.memory.working_set,
                   "l1_reuse_window": k.memory.l1_window,
                   "accesses": [{"id": c.key, "text": c.text, "line": c.line, "array": c.array, "kind": c.kind,
                                 "requests_per_thread": c.requests, "sectors_per_request": c.sectors,
                                 "lines_per_request": c.lines, "l2_sectors_per_request": c.l2_sectors,
                                 "dram_sectors_per_request": c.dram_sectors, "unknown_stride": c.unknown,
                                 "latency_cycles": c.latency, "cycles_per_request": c.cycles, "served_by": c.where}
                                for c in k.memory.accesses]},
        "gpuperf_benefits_s": {a: _f(b) for a, b in k.benefits.items() if a != "case"},
        "gpuperf_case": k.benefits.get("case"),
        "hotspots": [{"id": h.key, "text": h.text, "line": h.line, "idle_s": h.idle_s, "share": h.share}
                     for h in k.hotspots],
        "block_candidates": [{"block": list(c.block), "time_s": {m: c.times.get(m) for m in models} if c.times else None,
                              "active_warps_per_sm": c.occupancy.active_warps_per_sm if c.occupancy else None,
                              "occupancy": c.occupancy.occupancy if c.occupancy else None,
                              "labels": list(c.labels), "error": c.error or None} for c in k.candidates],
        "strategies": {label: {"block": list(s), "why": why} for label, (s, why) in k.strategies.items()},
        "shared_memory_tiles": list(k.tiles),
        "time_categories": {m: _categories_json(k.categories[m]) for m in models if m in k.categories},
        "notes": list(k.notes),
    }
