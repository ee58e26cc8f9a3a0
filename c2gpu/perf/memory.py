"""The memory traffic of a kernel on a block shape (MemoryMixin, a part of KernelAnalysis in
c2gpu/perf/profile.py): each global access's L1, L2 and DRAM sectors, latency and cost, and the launch's DRAM
(lower bound and estimate) and L2 bytes (the "Reuse" and "Costs" choices of profile.py's module doc)."""
from __future__ import annotations

import math
from dataclasses import field

from ..records import dataclass
from .coalescing import WINDOW
from .geometry import Geometry

L2_REUSE_SHARE = 0.5      # share of the L2 that keeps data for reuse across blocks (the rest streams)


@dataclass(frozen=True)
class AccessCost:
    """One global access on one block shape: coalescing and where its sectors come from."""
    key: str
    text: str
    line: int
    array: str
    kind: str                      # "read" / "write"
    elem_size: int
    requests: float                # warp requests per thread (= per warp), guards applied
    sectors: float                 # distinct 32-byte sectors per warp request
    lines: float                   # distinct 128-byte lines per warp request
    unknown: bool                  # stride unknown: 32 assumed and flagged
    l2_sectors: float = 0.0        # sectors per request that miss L1
    dram_sectors: float = 0.0      # sectors per request served by DRAM
    latency: float = 0.0           # cycles, sector-weighted L1/L2/DRAM mix
    transactions: float = 1.0      # DRAM-equivalent transactions (eq. 4.8's c)
    cycles: float = 0.0            # L1 + L2 + DRAM cycles of one request on one SM
    where: str = "global"          # "global"; "shared tile" (a read served by a tile); "tile load" /
                                   # "tile store" (the cooperative, coalesced copies of a tile)


@dataclass
class MemoryAnalysis:
    """The memory traffic of one launch of a kernel: each global access's cost, the DRAM and L2 bytes, and
    the working set."""
    accesses: list[AccessCost]
    dram_lower_bound: float        # bytes per launch: unique footprint (roofline)
    dram_estimate: float           # bytes per launch the models assume
    l2_bytes: float                # bytes per launch crossing L2 -> SM
    l1_window: int                 # iterations of temporal reuse kept in L1 (1 = none)
    working_set: float             # bytes per launch
    per_array: dict[str, dict] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)


class MemoryMixin:
    """The memory traffic part of KernelAnalysis (reads its coalescing, footprints, tiles, occupancy and GPU)."""

    def memory(self, block: tuple[int, int, int]) -> MemoryAnalysis:
        done = ("memory", tuple(block))    # (not `key`: the loops below use that name for the accesses)
        if done in self._results:
            return self._results[done]
        warp_frac, lane_util, raw, flags, groups, requested = self._sector_stats(block)
        raw, flags = dict(raw), list(flags)
        geo = self.geometry(block)
        ws = self.gpu.warp_size
        costs: list[AccessCost] = []
        written_arrays = {ai.access.array for ai in self.access_infos if ai.access.kind == "write"}
        sec_b, line_b = self.gpu.sector_bytes, self.gpu.cache_line_bytes
        # ---- L1: block-level union of sectors per group, with and without the temporal window
        occ = self.occupancy(block)
        active_sms = min(self.gpu.sm_count, max(1, geo.blocks))
        resident = min(occ.active_blocks_per_sm if occ is not None else 1, -(-geo.blocks // active_sms))
        smem = self.shared_bytes(block)
        l1_bytes = self.gpu.l1_cache_bytes + self.gpu.shared_mem_per_sm - resident * smem
        miss_win, miss_one, foot = {}, {}, 0.0
        for group, (nb, u_win, u_live, u_one) in groups.items():
            r = requested[group] or 1.0
            reuse_across = group[0] not in written_arrays
            miss_win[group] = min(1.0, (u_win if reuse_across else u_one) / r)
            miss_one[group] = min(1.0, u_one / r)
            foot += (u_live / nb) * sec_b
        # the lines must stay in L1 while they are reused: the sectors the resident blocks touch over
        # REUSE_DISTANCE iterations (a 32-byte sector serves 8 iterations of a 4-byte stream)
        window_fits = foot * resident <= l1_bytes
        miss = miss_win if window_fits else miss_one
        # ---- per-array traffic and DRAM
        per_array: dict[str, dict] = {}
        warps_per_launch = {}
        staged = self._staged_keys()
        entries = []      # (key, text, line, array, kind, elem size, where)
        for ai in self.access_infos:
            req, sec, lin, unknown = raw[ai.key]
            util = lane_util[ai.stmt.sid]
            warps = self.threads / (ws * util) if util > 0 else 0.0
            warps_per_launch[ai.key] = warps
            d = per_array.setdefault(ai.access.array, {"read_l2": 0.0, "write_l2": 0.0})
            opp = staged.get(ai.key)
            a = ai.access
            if opp is not None and opp.kind != "store":
                raw[ai.key] = (req, sec, lin, unknown, 0.0)       # read from the shared tile
                entries.append((ai.key, a.text, a.loc.line, a.array, a.kind, a.elem_size, "shared tile"))
                continue
            if opp is not None:                                      # staged store: coalesced copy-out
                sec = lin = max(1.0, ws * a.elem_size / sec_b)
                lin = max(1.0, ws * a.elem_size / line_b)
                raw[ai.key] = (req, sec, lin, unknown, sec)
                d["write_l2"] += req * warps * sec * sec_b
                entries.append((ai.key, a.text, a.loc.line, a.array, a.kind, a.elem_size, "tile store"))
                continue
            if a.kind == "read":
                l2s = sec * (miss.get((a.array, ai.window_lid), 1.0) if not unknown else 1.0)
            else:
                l2s = sec
            d["read_l2" if a.kind == "read" else "write_l2"] += req * warps * l2s * sec_b
            raw[ai.key] = (req, sec, lin, unknown, l2s)
            if ai.hoisted is None:
                text = a.text
            else:
                lp = self.by_id[ai.hoisted]
                where = "load before" if a.kind == "read" else "store after"
                text = f"{a.text} (register {where} loop '{lp.source_var}')"
            entries.append((ai.key, text, a.loc.line, a.array, a.kind, a.elem_size,
                            "local memory" if ai.local else "global"))
        for o in self._tiles():                                       # cooperative tile loads
            if o.kind == "store":
                continue
            key = f"tile {o.array}"
            req = self.tile_loads_per_thread(o)
            sec = max(1.0, ws * o.elem_size / sec_b)
            lin = max(1.0, ws * o.elem_size / line_b)
            warps = geo.launched_threads / ws
            warps_per_launch[key] = warps
            raw[key] = (req, sec, lin, False, sec)
            d = per_array.setdefault(o.array, {"read_l2": 0.0, "write_l2": 0.0})
            d["read_l2"] += req * warps * sec * sec_b
            shape = "][".join(str(e) for e in o.shape)
            entries.append((key, f"{o.array} tile [{shape}]", 0, o.array, "read", o.elem_size, "tile load"))
        fp = self.footprints
        ws_bytes = sum(v["read"] + v["write"] - v["overlap"] for v in fp.values())
        waves = _waves(geo, resident, self.gpu.sm_count)
        l2_reuse = self.gpu.l2_cache_bytes * L2_REUSE_SHARE
        host_ws = self.host_working_set
        resident_share = min(1.0, l2_reuse / host_ws) if host_ws else 0.0
        lower = 0.0
        estimate = 0.0
        for name, d in per_array.items():
            f = fp.get(name, {"read": 0.0, "write": 0.0, "read_lb": 0.0, "write_lb": 0.0, "overlap": 0.0})
            lower += f["read_lb"] + f["write_lb"]
            if ws_bytes <= l2_reuse:
                fetch = 1.0
            else:
                fetch = self._refetch(name, geo, waves)
            rd = max(f["read"], min(f["read"] * fetch, d["read_l2"])) if d["read_l2"] > 0 else 0.0
            wr = f["write"] if d["write_l2"] > 0 else 0.0
            rd, wr = rd * (1 - resident_share), wr * (1 - resident_share)
            d.update(dram_read=rd, dram_write=wr, footprint_read=f["read"], footprint_write=f["write"],
                     refetch=fetch, l2_resident_share=resident_share)
            estimate += rd + wr
        if self.host_path:
            # a kernel launched again and again by a host loop: what the previous launch left in the L2
            # need not come from DRAM; the bound stays a true lower bound (at most the L2's capacity
            # survives, and the loop reads the footprint at least once)
            lower = max(lower - self.gpu.l2_cache_bytes, lower / max(1.0, self.launches))
        # ---- per-access costs
        m = self.effective_machine_base
        active_sms = min(self.gpu.sm_count, max(1, geo.blocks))
        dram_bpc_sm = self.gpu.dram_bandwidth_gbs * self.gpu.dram_efficiency / self.gpu.core_clock_ghz / active_sms
        l2_bpc_sm = self.gpu.l2_bytes_per_cycle_per_sm
        l1_bpc = self.gpu.shared_mem_banks * self.gpu.shared_mem_bank_bytes
        l2_total = 0.0
        for key, text, line, array, kind, es, where in entries:
            req, sec, lin, unknown, l2s = raw[key]
            d = per_array[array]
            if kind == "read":
                ratio = d["dram_read"] / d["read_l2"] if d["read_l2"] > 0 else 0.0
            else:
                ratio = d["dram_write"] / d["write_l2"] if d["write_l2"] > 0 else 0.0
            ds = l2s * ratio
            l2s = max(l2s, ds)    # data that comes from DRAM crosses the L2 too (the reuse estimate was low)
            cyc = lin * line_b / l1_bpc + (l2s - ds) * sec_b / l2_bpc_sm + ds * sec_b / dram_bpc_sm
            c = cyc * dram_bpc_sm / m.transaction_bytes
            p1 = 1.0 - (l2s / sec if sec > 0 else 1.0)
            pd = ds / l2s if l2s > 0 else 0.0
            lat = p1 * self.gpu.l1_latency_cycles + (1 - p1) * (
                (1 - pd) * self.gpu.l2_latency_cycles + pd * self.gpu.dram_latency_cycles)
            if where == "shared tile":
                cyc, c, lat = 0.0, 0.0, self.gpu.shared_mem_latency_cycles
            l2_total += req * warps_per_launch[key] * l2s * sec_b
            costs.append(AccessCost(key, text, line, array, kind, es, req, sec, lin, unknown, l2s, ds, lat,
                                    max(c, 1e-6), cyc, where))
        res = MemoryAnalysis(costs, lower, max(estimate, lower), l2_total, WINDOW if window_fits else 1, ws_bytes,
                             per_array, flags)
        self._results[done] = res
        return res

    def _refetch(self, array: str, geo: Geometry, waves: float) -> float:
        """Times an array's data is read from DRAM when the working set exceeds the L2 (profile.py's module doc)."""
        acc = [ai for ai in self.access_infos if ai.access.array == array and ai.access.kind == "read"]
        if not acc or any(ai.flat is None for ai in acc):
            return max(1.0, waves)
        sharing = []
        for m in self.kernel.loops:
            if all(ai.flat.coeff(m.var) == 0 and not any(m.var == v for mono, _ in ai.flat.terms for v, _ in mono)
                   for ai in acc):
                sharing.append("xyz".index(m.dim))
        if not sharing:
            return 1.0
        g = geo.grid
        stride = {0: 1, 1: g[0], 2: g[0] * g[1]}[min(sharing)]
        group = 1
        for k in sharing:
            group *= g[k]
        per_wave = geo.blocks / waves if waves > 0 else geo.blocks
        return float(min(group, max(1, math.ceil(group * stride / per_wave))))


def _waves(geo: Geometry, resident: int, sm_count: int) -> float:
    per_wave = max(1, resident * min(sm_count, geo.blocks))
    return geo.blocks / per_wave
