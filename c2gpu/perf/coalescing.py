"""Coalescing and L1 reuse of a kernel's global accesses on a block shape (CoalescingMixin, a part of KernelAnalysis
in c2gpu/perf/profile.py): the distinct sectors and lines of each warp request on sampled blocks, the share of the
warps that take each statement, and the sectors each group of accesses touches over the reuse window (the
"Coalescing" and "Reuse" choices of profile.py's module doc)."""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional

import numpy as np

from ..pipeline import memo

from .sampling import distinct_in_rows, floor_div, poly_np, run_starts, sorted_rows

WINDOW = 32               # consecutive iterations of the innermost in-thread loop in the reuse window
UNKNOWN_TRANSACTIONS = 32  # seed 004 section 6.1: unknown stride = worst case
REUSE_DISTANCE = 8        # iterations a line must survive in L1 for its reuse (32-byte sector / 4-byte stride)

class CoalescingMixin:
    """The coalescing part of KernelAnalysis (reads its accesses, statements, sampled lanes and GPU)."""

    def _sector_stats(self, block: tuple[int, int, int]):
        """The part of memory() that depends only on the kernel's loops and the block shape, not on its
        shared-memory tiles or registers: warp activity per statement, sectors and lines per request of
        every access, and per access group the distinct sectors of the sampled blocks.  The block-size
        search (seed 004, 5.2.1) evaluates the same shapes again for the plain kernel and for each
        shared-memory budget the performance pass compares, each with an analysis of its own: they share
        these results through the nest's memo table "sector counts" (pipeline.memo)."""
        mine = ("sectors", tuple(block))
        if mine in self._block_cache:
            return self._block_cache[mine]
        key = self._sector_key(block)
        shared = memo(self.nest, "sector counts") if key is not None else {}
        if key in shared:
            self._block_cache[mine] = shared[key]
            return shared[key]
        _geo, env0, valid0 = self._samples(block)
        ws = self.gpu.warp_size
        # a statement's sampled lanes depend only on its loops and guards (_domain_env): statements that share
        # both (matmul's C[i][j] read and write, a stencil's statements) share the lanes and their counts
        envs, per_stmt, warp_frac, lane_util = {}, {}, {}, {}
        for s in self.statements:
            where = (s.loop_ids, s.guards)
            if where not in envs:
                env, dom, act = self._domain_env(s, env0, valid0, WINDOW)
                # warp activity: requests come from warps with an active lane
                dom_any = dom.any(axis=-1)
                act_any = act.any(axis=-1)
                envs[where] = (env, act, act_any.sum(),
                               float(act_any.sum() / dom_any.sum()) if dom_any.sum() else 0.0,
                               float(act.sum() / (act_any.sum() * ws)) if act_any.sum() else 1.0)
            per_stmt[s.sid] = where
            warp_frac[s.sid], lane_util[s.sid] = envs[where][3:]
        sector_sets: dict[tuple[str, Optional[int]], list] = {}
        requested: dict[tuple[str, Optional[int]], float] = {}
        flags = []
        sec_b, line_b = self.gpu.sector_bytes, self.gpu.cache_line_bytes
        raw = {}
        addresses = {}   # (statement's loops and guards, flat index, element size) -> byte addresses | None
        for ai in self.access_infos:
            same = (per_stmt[ai.stmt.sid], ai.flat, ai.access.elem_size)
            if ai.flat is not None and same not in addresses:
                try:
                    idx = poly_np(ai.flat, envs[same[0]][0])
                except KeyError:
                    addresses[same] = None
                else:
                    addresses[same] = np.asarray(idx, dtype=np.int64) * ai.access.elem_size
        weights = self._block_weights(envs, addresses, math.lcm(sec_b, line_b))
        nb = int(weights.sum())
        kept = np.flatnonzero(weights)
        if len(kept) == len(weights):
            kept = weights = None         # every sampled block sorted: the plain sums
        else:
            weights = weights[kept]
        counted = {}      # same -> (sectors of the kept blocks, n_sec, n_line)
        for ai in self.access_infos:
            s = ai.stmt
            env, act, cnt = envs[per_stmt[s.sid]][:3]
            req = self._executions(ai) * warp_frac[s.sid]
            if ai.flat is None:
                flags.append(f"{ai.access.text} (line {ai.access.loc.line}): unknown stride, 32 transactions "
                             "per warp request assumed (seed 004, 6.1)")
                raw[ai.key] = (req, float(UNKNOWN_TRANSACTIONS), float(UNKNOWN_TRANSACTIONS), True)
                continue
            same = (per_stmt[s.sid], ai.flat, ai.access.elem_size)
            if same not in counted and addresses[same] is not None:
                addr, act_k = _blocks(addresses[same], kept), _blocks(act, kept)
                sectors = sorted_rows(floor_div(addr, sec_b), act_k)    # each warp request's sectors, sorted
                n_sec = distinct_in_rows(sectors, weights=weights)
                if line_b % sec_b == 0:    # a line is a run of whole sectors: lines come out sorted too
                    n_line = distinct_in_rows(sectors, line_b // sec_b, weights)
                else:
                    n_line = distinct_in_rows(sorted_rows(floor_div(addr, line_b), act_k), weights=weights)
                counted[same] = (sectors, n_sec, n_line)
            if counted.get(same) is None:
                flags.append(f"{ai.access.text} (line {ai.access.loc.line}): index not evaluable, 32 transactions assumed")
                raw[ai.key] = (req, float(UNKNOWN_TRANSACTIONS), float(UNKNOWN_TRANSACTIONS), True)
                continue
            sectors, n_sec, n_line = counted[same]
            avg_sec = float(n_sec / cnt) if cnt else 0.0
            avg_line = float(n_line / cnt) if cnt else 0.0
            raw[ai.key] = (req, avg_sec, avg_line, False)
            if ai.access.kind == "read" and ai.hoisted is None:   # (a register's load: once, no reuse window)
                group = (ai.access.array, ai.window_lid)
                sector_sets.setdefault(group, []).append((sectors, ai))
                requested[group] = requested.get(group, 0.0) + float(n_sec)
        # L1: block-level union of sectors per group, with and without the temporal window
        groups = {}
        for group, items in sector_sets.items():
            live = min(items[0][0].shape[2], REUSE_DISTANCE)
            groups[group] = (nb,) + _window_distinct(items, live, weights)
        out = (warp_frac, lane_util, raw, tuple(flags), groups, requested)
        self._block_cache[mine] = shared[key] = out
        return out

    def _block_weights(self, envs, addresses, unit: int):
        """How many of the sampled blocks each one stands for in the sector counts (0: counted as another).  A
        block whose lanes are active exactly where the first block's are, and whose accesses touch the first
        block's addresses moved by one distance per array, a multiple of `unit` (the sector and the line), has
        the first block's counts: its sorted sector rows are the first block's plus a constant, so the distinct
        sectors of each request, the lines, and the sectors of each reuse window are as many.  It is counted
        again instead of being sorted again (an interior block of a rectangular nest usually is: 3/4 of the
        sorting for the block search's large blocks).  Exact: the counts are the same as with every block
        sorted."""
        acts = [e[1] for e in envs.values()]
        nb = acts[0].shape[0] if acts and np.ndim(acts[0]) else 1
        weights = np.ones(nb, dtype=np.int64)
        arrays: dict[str, set] = {}
        for ai in self.access_infos:
            same = (ai.stmt.loop_ids, ai.stmt.guards), ai.flat, ai.access.elem_size
            if addresses.get(same) is not None:
                arrays.setdefault(ai.access.array, set()).add(same)
        for b in range(1, nb):
            if not all(np.array_equal(act[b], act[0]) for act in acts):
                continue
            for keys in arrays.values():
                moves = {_translation(addresses[k], b) for k in keys}
                if len(moves) != 1 or None in moves or moves.pop() % unit:
                    break
            else:
                weights[0] += 1
                weights[b] = 0
        return weights

    def warp_fractions(self, block) -> dict[int, float]:
        """Statement id -> share of the warps on `block` with a lane in its domain that have one where its guards
        hold (requests and instructions come from those warps)."""
        return self._sector_stats(block)[0]

    def _sector_key(self, block):
        """What _sector_stats reads besides the nest: the kernel without its block (loops, body, sizes),
        the host loops, whether elements live in registers, the parameter values, the block and the GPU's
        warp and cache geometry."""
        try:
            k = (replace(self.kernel, block=(0, 0, 0)), self.host_lids, self.promote,
                 tuple(sorted(self.env.items())), tuple(block), self.gpu.warp_size, self.gpu.sector_bytes,
                 self.gpu.cache_line_bytes)
            hash(k)
        except TypeError:
            return None
        return k


def _window_distinct(items, live: int, weights=None) -> tuple[int, int, int]:
    """Distinct sectors a group of accesses touches, summed over the sampled blocks (all of a block's warps, all
    the group's accesses): over the whole window, over its first `live` iterations, and as distinct (iteration,
    sector) pairs.  `items`: (sorted_rows of each warp request's sectors, ...) of shape (blocks, warps, window,
    lanes); `weights`: how many sampled blocks each of those blocks stands for (KernelAnalysis._block_weights),
    None for one each.  Only a request's distinct sectors matter (run_starts: a coalesced request's 32 lanes are 4
    sectors), as keys sector * 64 + iteration (the window has at most 64 iterations), one sorted vector per
    block: sorted keys are sorted by sector, then iteration, so a sector starts a run of equal `key >> 6`, and
    that run's first entry has its smallest iteration (the sector is touched within the first `live`
    iterations iff that one is)."""
    nb = items[0][0].shape[0]
    per_block: list[list] = [[] for _ in range(nb)]
    for s, _ai in items:
        starts = run_starts(s)
        keys = s * 64 + np.arange(s.shape[2], dtype=np.int64).reshape(1, 1, -1, 1)
        for b in range(nb):
            per_block[b].append(keys[b][starts[b]])
    u_win = u_live = u_one = 0
    for b, parts in enumerate(per_block):
        k = np.sort(np.concatenate(parts), kind="stable")
        if not k.size:
            continue
        w = 1 if weights is None else int(weights[b])
        sec = k >> 6
        new_sec = np.empty(k.size, dtype=bool)
        new_sec[0] = True
        np.not_equal(sec[1:], sec[:-1], out=new_sec[1:])
        u_one += w * (1 + int(np.count_nonzero(k[1:] != k[:-1])))
        u_win += w * int(np.count_nonzero(new_sec))
        u_live += w * int(np.count_nonzero(new_sec & ((k & 63) < live)))
    return u_win, u_live, u_one


def _blocks(a, kept):
    """The kept sampled blocks of `a` (blocks first; a value without a block axis is the same for all)."""
    if kept is None or np.ndim(a) == 0 or np.shape(a)[0] == 1:
        return a
    return a[kept]


def _translation(a, b: int):
    """The distance by which sampled block b's values of `a` are block 0's moved, or None when they are not a
    translation of them (0 for a value without a block axis)."""
    if np.ndim(a) == 0 or np.shape(a)[0] == 1:
        return 0
    d = a[b] - a[0]
    first = d.flat[0]
    return int(first) if (d == first).all() else None
