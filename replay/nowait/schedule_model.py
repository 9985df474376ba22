"""What can be reordered in a run with `nowait`: units, host blocks, windows and conflicts.

Why: the schedule checker replays the VSM on other orderings of the same events. This module cuts
the log into
- *units*: the deferred target tasks (entry copies, kernel, exit copies), each moved as a whole;
- the *host skeleton*: every other event in recorded order, grouped into *blocks* (one event, or all
  events of one synchronous construct, which the encountering thread runs without interruption);
and works out for each unit its *window* (after the blocks it must follow, before the blocks that
wait for it: creation, ``depend``, ``taskwait``/``taskgroup``/barrier, and the lifetime of device
copies it uses but did not allocate: the log's data ops are only valid while those copies exist),
and which blocks and units it *conflicts* with: they touch a common host byte (device accesses
translated to the host bytes they stand for) and one of them changes its VSM state.

Blocks that conflict with no unit are irrelevant: placing a unit before or after them gives an
equivalent schedule. Relevant blocks become the host elements of ``por.PorProblem``; consecutive
relevant blocks from the same site (a loop reading an array element by element) form one element,
so a unit is placed before or after such a run, not inside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from quiver.formats import EventKind
from quiver.formats.jit import kernel
from quiver.formats.sets import sorted_unique
from quiver.replay.nowait.device_copies import device_copies
from quiver.replay.nowait.happens_before import HappensBefore
from quiver.replay.nowait.por import PorProblem, unit_gaps
from quiver.replay.nowait.races import access_records, space_key
from quiver.replay.nowait.tasks import lookup, pack

FOOTPRINT_INTERVALS = 32   # per unit, space and kind: more are merged across their smallest gaps


@kernel
def _footprint(unit, space, lo, hi, mod, order, cap):
    """Per (unit, space, mod): the union of byte ranges, coarsened to ``cap`` ranges (conservative)."""
    n = len(order)
    o_unit = np.empty(n, np.int64)
    o_space = np.empty(n, np.int64)
    o_lo = np.empty(n, np.int64)
    o_hi = np.empty(n, np.int64)
    o_mod = np.empty(n, np.bool_)
    m = 0
    i = 0
    while i < n:
        j = i
        a = order[i]
        while j < n and unit[order[j]] == unit[a] and space[order[j]] == space[a] and mod[order[j]] == mod[a]:
            j += 1
        start = m
        for p in range(i, j):
            r = order[p]
            if m > start and lo[r] <= o_hi[m - 1]:
                o_hi[m - 1] = max(o_hi[m - 1], hi[r])
            else:
                o_unit[m] = unit[r]
                o_space[m] = space[r]
                o_lo[m] = lo[r]
                o_hi[m] = hi[r]
                o_mod[m] = mod[r]
                m += 1
        count = m - start
        if count > cap:                     # close the smallest gaps until cap ranges remain
            gaps = np.empty(count - 1, np.int64)
            for q in range(count - 1):
                gaps[q] = o_lo[start + q + 1] - o_hi[start + q]
            limit = np.sort(gaps)[count - cap - 1]
            w = start
            for q in range(start + 1, m):
                if o_lo[q] - o_hi[w] <= limit:
                    o_hi[w] = max(o_hi[w], o_hi[q])
                else:
                    w += 1
                    o_lo[w] = o_lo[q]
                    o_hi[w] = o_hi[q]
            m = w + 1
        i = j
    return o_unit[:m], o_space[:m], o_lo[:m], o_hi[:m], o_mod[:m]


@kernel
def _unit_block_conflicts(units, u_start, u_space, u_lo, u_hi, u_mod, lo, hi, s_block, s_space, s_lo, s_hi,
                          s_mod, max_len):
    """(unit, block) pairs of one window group; host records sorted by (space, lo), at most max_len long."""
    cap = 64
    out_u = np.empty(cap, dtype=np.int64)
    out_b = np.empty(cap, dtype=np.int64)
    n = 0
    ns = len(s_space)
    for u in units:
        for i in range(u_start[u], u_start[u + 1]):
            first = u_lo[i] - max_len + 1
            a, b = 0, ns
            while a < b:                    # first record with (space, lo) >= (u_space, first)
                mid = (a + b) // 2
                if s_space[mid] < u_space[i] or (s_space[mid] == u_space[i] and s_lo[mid] < first):
                    a = mid + 1
                else:
                    b = mid
            j = a
            while j < ns and s_space[j] == u_space[i] and s_lo[j] < u_hi[i]:
                if (s_hi[j] > u_lo[i] and (u_mod[i] or s_mod[j]) and lo[u] <= s_block[j] < hi[u]):
                    if n == cap:
                        cap *= 2
                        out_u = np.concatenate((out_u, np.empty(cap - n, np.int64)))
                        out_b = np.concatenate((out_b, np.empty(cap - n, np.int64)))
                    out_u[n] = u
                    out_b[n] = s_block[j]
                    n += 1
                j += 1
    return out_u[:n], out_b[:n]


@kernel
def _unit_unit_conflicts(units, u_start, u_space, u_lo, u_hi, u_mod, lo, hi):
    """Pairs of units of one window group whose footprints overlap with a change on one side."""
    cap = 64
    out_a = np.empty(cap, dtype=np.int64)
    out_b = np.empty(cap, dtype=np.int64)
    n = 0
    for x in range(len(units)):
        a = units[x]
        for y in range(x + 1, len(units)):
            b = units[y]
            if lo[a] > hi[b] or lo[b] > hi[a]:
                continue
            hit = False
            for i in range(u_start[a], u_start[a + 1]):
                for j in range(u_start[b], u_start[b + 1]):
                    if (u_space[i] == u_space[j] and u_lo[i] < u_hi[j] and u_lo[j] < u_hi[i]
                            and (u_mod[i] or u_mod[j])):
                        hit = True
                        break
                if hit:
                    break
            if hit:
                if n == cap:
                    cap *= 2
                    out_a = np.concatenate((out_a, np.empty(cap - n, np.int64)))
                    out_b = np.concatenate((out_b, np.empty(cap - n, np.int64)))
                out_a[n] = min(a, b)
                out_b[n] = max(a, b)
                n += 1
    return out_a[:n], out_b[:n]


def _window_groups(lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    """Units whose block-gap windows overlap, grouped (only they can be reordered with each other)."""
    order = np.lexsort((np.arange(len(lo)), lo))
    reach = np.maximum.accumulate(hi[order]) if len(order) else hi
    starts = np.r_[True, lo[order][1:] > reach[:-1]] if len(order) else np.zeros(0, bool)
    return np.split(order, np.flatnonzero(starts)[1:]) if len(order) else []


@dataclass
class ScheduleModel:
    """Units, host blocks and elements, windows and conflicts of one run."""

    n_rows: int
    unit_ctx: np.ndarray          # context of each unit, in launch order
    unit_of_row: np.ndarray       # unit index per row, -1 for host-skeleton rows
    block_of_row: np.ndarray      # block index per skeleton row, -1 for unit rows
    block_first_row: np.ndarray   # first row of each block
    lo: np.ndarray                # gap window per unit: placed before block g, lo <= g <= hi
    hi: np.ndarray
    unit_preds: list[list[int]]
    elem_first_block: np.ndarray  # host elements (groups of relevant blocks), chain order
    elem_last_block: np.ndarray
    after_host: np.ndarray        # per unit: host element it must follow (-1)
    before_host: np.ndarray       # per unit: host element it must precede (n_elements: none)
    conflict_pairs: set[tuple[int, int]]  # (unit, unit) with a < b, and (unit, k + element)

    @property
    def n_units(self) -> int:
        return len(self.unit_ctx)

    @property
    def n_elements(self) -> int:
        return len(self.elem_first_block)

    def conflict(self, a: int, b: int) -> bool:
        return (min(a, b), max(a, b)) in self.conflict_pairs

    def problem(self) -> PorProblem:
        k = self.n_units
        host: list[list[int]] = [[] for _ in range(k)]
        units: list[list[int]] = [[] for _ in range(k)]
        for a, b in sorted(self.conflict_pairs):
            if b >= k:
                host[a].append(b - k)
            else:
                units[a].append(b)
                units[b].append(a)
        return PorProblem(n_units=k, n_host=self.n_elements, after_host=self.after_host.tolist(),
                          before_host=self.before_host.tolist(), unit_preds=self.unit_preds,
                          host_conflicts=host, unit_conflicts=units)

    def placement(self, schedule: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(block gap, rank within the gap) of every unit in an element sequence."""
        k = self.n_units
        ids, host_gap = unit_gaps(schedule, k)
        gap = np.zeros(k, dtype=np.int64)
        rank = np.zeros(k, dtype=np.int64)
        after_block = np.where(host_gap > 0, self.elem_last_block[np.maximum(host_gap - 1, 0)] + 1, 0) \
            if len(self.elem_last_block) else np.zeros(len(ids), dtype=np.int64)
        gap[ids] = np.maximum(after_block, self.lo[ids])
        rank[ids] = np.arange(len(ids))
        return gap, rank

    def order(self, schedule: list[int]) -> np.ndarray:
        """The row permutation that runs the events in this schedule."""
        gap, rank = self.placement(schedule)
        rows = np.arange(self.n_rows, dtype=np.int64)
        unit = self.unit_of_row
        in_unit = unit >= 0
        primary = np.where(in_unit, np.r_[gap, 0][unit], self.block_of_row)       # unit -1: the sentinel
        secondary = np.where(in_unit, np.r_[rank, 0][unit], len(schedule) + 1)
        return np.lexsort((rows, secondary, primary))


def _construct_of_rows(cols: dict[str, np.ndarray], keys: np.ndarray) -> np.ndarray:
    """Construct index of each row that belongs to a construct (-1 otherwise)."""
    kind = cols["kind"]
    by_id = np.isin(kind, [int(EventKind.CONSTRUCT_BEGIN), int(EventKind.CONSTRUCT_END),
                           int(EventKind.MAP_CLAUSE), int(EventKind.DATA_OP), int(EventKind.KERNEL)])
    device_side = np.isin(kind, [int(EventKind.ACCESS), int(EventKind.SYNC)]) & (cols["device"] >= 0)
    cid = np.where(kind == int(EventKind.SYNC), cols["aux"], cols["id"])
    valid = (by_id | device_side) & (cid >= 0)
    return lookup(keys, pack(cols["rank"], np.maximum(cid, 0)), valid)


def build_schedule_model(cols: dict[str, np.ndarray], hb: HappensBefore) -> ScheduleModel:
    tm = hb.tasks
    n = len(cols["kind"])
    ctx = tm.ctx
    unit_ctx = np.flatnonzero(tm.target_ctx)
    launch = tm.task_create_row[unit_ctx - tm.n_threads]
    first = tm.first_row[unit_ctx]
    o = np.lexsort((first, np.where(launch >= 0, launch, first)))
    unit_ctx, launch = unit_ctx[o], launch[o]
    k = len(unit_ctx)
    unit_of_ctx = np.full(tm.n_ctx, -1, dtype=np.int64)
    unit_of_ctx[unit_ctx] = np.arange(k)
    unit_of_row = unit_of_ctx[ctx]

    # host skeleton blocks: one event, or the consecutive events of one synchronous construct
    sk = np.flatnonzero(unit_of_row < 0)
    cons = _construct_of_rows(cols, tm.constructs.keys)[sk]
    boundary = np.r_[True, (cons[1:] < 0) | (cons[1:] != cons[:-1])] if len(sk) else np.zeros(0, bool)
    block_ids = np.cumsum(boundary) - 1
    block_of_row = np.full(n, -1, dtype=np.int64)
    block_of_row[sk] = block_ids
    block_first_row = sk[boundary]
    nb = len(block_first_row)

    # constraint edges: happens-before, plus device-copy lifetimes around every device use
    recs = access_records(cols)
    life = device_copies(cols)
    dev = recs["device_part"]
    li = life.of(recs)
    used = li >= 0
    rel = life.release[li[used]]
    prev_src, prev_dst = life.present_edges()
    direct_src, direct_dst = life.direct_edges(recs, li)
    src = np.concatenate([hb.edges_src, life.alloc[li[used]], recs["row"][used][rel >= 0], prev_src, direct_src])
    dst = np.concatenate([hb.edges_dst, recs["row"][used], rel[rel >= 0], prev_dst, direct_dst])
    us, ud = unit_of_row[src], unit_of_row[dst]
    lo = np.zeros(k, dtype=np.int64)
    hi = np.full(k, nb, dtype=np.int64)
    sel = (us < 0) & (ud >= 0)
    np.maximum.at(lo, ud[sel], block_of_row[src[sel]] + 1)
    sel = (us >= 0) & (ud < 0)
    np.minimum.at(hi, us[sel], block_of_row[dst[sel]])
    hi = np.maximum(hi, lo)
    sel = (us >= 0) & (ud >= 0) & (us != ud)
    unit_preds: list[list[int]] = [[] for _ in range(k)]
    for a, b in sorted(set(zip(us[sel].tolist(), ud[sel].tolist()))):
        unit_preds[b].append(a)

    # footprints in host bytes (the VSM's shadow cells); device parts translated through lifetimes
    host_space = space_key(cols["rank"][recs["row"]], np.full(len(recs["row"]), -1))
    f_space = np.where(dev, host_space, recs["space"])
    f_lo = recs["lo"].copy()
    f_lo[used] = life.host[li[used]] + (recs["lo"][used] - life.lo[li[used]])
    f_hi = f_lo + (recs["hi"] - recs["lo"])
    kinds = cols["kind"][recs["row"]]
    keep = ~dev | used | (kinds == int(EventKind.ACCESS))   # an access outside every copy: those host bytes
    f_mod = recs["write"] | (kinds == int(EventKind.DATA_OP))
    allocs = np.flatnonzero(cols["kind"] == int(EventKind.ALLOC))
    f_row = np.r_[recs["row"][keep], allocs]
    f_space = np.r_[f_space[keep], space_key(cols["rank"][allocs], np.full(len(allocs), -1))]
    f_lo = np.r_[f_lo[keep], cols["addr"][allocs].astype(np.int64)]
    f_hi = np.r_[f_hi[keep], (cols["addr"][allocs] + cols["size"][allocs]).astype(np.int64)]
    f_mod = np.r_[f_mod[keep], np.ones(len(allocs), bool)]
    f_unit = unit_of_row[f_row]

    ur = np.flatnonzero(f_unit >= 0)
    fu_unit, fu_space, fu_lo, fu_hi, fu_mod = _footprint(
        f_unit[ur], f_space[ur], f_lo[ur], f_hi[ur], f_mod[ur],
        np.lexsort((f_lo[ur], f_mod[ur], f_space[ur], f_unit[ur])), FOOTPRINT_INTERVALS)
    u_start = np.searchsorted(fu_unit, np.arange(k + 1))
    sr = np.flatnonzero((f_unit < 0) & (f_hi > f_lo))
    s_block = block_of_row[f_row[sr]]
    cu_parts, cb_parts, ua_parts, ub_parts = [], [], [], []
    for group in _window_groups(lo, hi):
        g_lo, g_hi = int(lo[group].min()), int(hi[group].max())
        in_window = sr[(s_block >= g_lo) & (s_block < g_hi)]
        if len(in_window):
            o = in_window[np.lexsort((f_lo[in_window], f_space[in_window]))]
            max_len = int((f_hi[o] - f_lo[o]).max())
            cu, cb = _unit_block_conflicts(group.astype(np.int64), u_start, fu_space, fu_lo, fu_hi, fu_mod, lo, hi,
                                           block_of_row[f_row[o]], f_space[o], f_lo[o], f_hi[o], f_mod[o], max_len)
            cu_parts.append(cu)
            cb_parts.append(cb)
        if len(group) > 1:
            ua, ub = _unit_unit_conflicts(group.astype(np.int64), u_start, fu_space, fu_lo, fu_hi, fu_mod, lo, hi)
            ua_parts.append(ua)
            ub_parts.append(ub)
    empty = np.zeros(0, np.int64)
    cu = np.concatenate(cu_parts) if cu_parts else empty
    cb = np.concatenate(cb_parts) if cb_parts else empty
    ua = np.concatenate(ua_parts) if ua_parts else empty
    ub = np.concatenate(ub_parts) if ub_parts else empty
    if len(cu):
        pairs_ub = np.unique(np.stack([cu, cb]), axis=1)
        cu, cb = pairs_ub[0], pairs_ub[1]

    # host elements: relevant blocks (conflicting, or a window bound), runs of one site merged
    anchors = np.r_[lo[lo > 0] - 1, hi[hi < nb]]
    relevant = sorted_unique(np.r_[cb, anchors]).astype(np.int64)
    bounds = sorted_unique(np.r_[lo, hi])
    if len(relevant):
        frow = block_first_row[relevant]
        sig_loc, sig_kind = cols["loc"][frow], cols["kind"][frow]
        same = (sig_loc[1:] == sig_loc[:-1]) & (sig_kind[1:] == sig_kind[:-1])
        # no window bound strictly inside a run: no g with prev < g <= cur
        crossing = np.searchsorted(bounds, relevant[1:], "right") > np.searchsorted(bounds, relevant[:-1], "right")
        starts = np.r_[True, ~same | crossing]
        elem_first = relevant[starts]
        elem_last = relevant[np.r_[np.flatnonzero(starts)[1:] - 1, len(relevant) - 1]]
    else:
        elem_first = elem_last = np.zeros(0, dtype=np.int64)
    m = len(elem_first)

    def elem_of(blocks: np.ndarray) -> np.ndarray:
        return np.searchsorted(elem_first, blocks, "right") - 1

    after_host = np.where(lo > 0, elem_of(lo - 1), -1)
    before_host = np.where(hi < nb, elem_of(hi), m)
    pairs = {(int(a), int(b)) for a, b in zip(ua, ub)}
    pairs |= {(int(u), k + int(e)) for u, e in zip(cu, elem_of(cb))}
    return ScheduleModel(
        n_rows=n, unit_ctx=unit_ctx, unit_of_row=unit_of_row, block_of_row=block_of_row,
        block_first_row=block_first_row, lo=lo, hi=hi, unit_preds=unit_preds, elem_first_block=elem_first,
        elem_last_block=elem_last, after_host=after_host.astype(np.int64),
        before_host=before_host.astype(np.int64), conflict_pairs=pairs)
