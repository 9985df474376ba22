"""Every memory access that matters for MPI-RMA races, one row each, sharded by memory.

Why one table: the race search (rma_kernels) only needs, per access, *where* (which rank's
memory, which bytes), *what* (read/write, local or RMA, atomic op), *when it starts* (issuer,
segment) and *when it is complete* (a cut on some rank). Everything MPI-specific (windows,
displacements, completion by flush/unlock/fence/request/PSCW, lock epochs, fence phases and the
paper's epochs for ``--baseline``) is resolved here, with numpy over whole columns.

Shards: ``(window, owner)`` for window memory, ``(-1, owner)`` for the owner's other memory
(origin and result buffers of its RMA calls and the loads/stores to them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from quiver.formats import AccessFlag, EventKind, LockType, MpiSyncKind, RmaOp, WinFlavor
from quiver.formats.blocks import expand_blocks, row_masks
from quiver.formats.jit import kernel
from quiver.replay.rma.sync import INF, Clocks, RankOrder, _key

# roles of an access row
LOAD, STORE, ORIGIN_READ, ORIGIN_WRITE, TARGET_READ, TARGET_WRITE = 0, 1, 2, 3, 4, 5
# the paper's operation classes (Table 2 rows)
B_OGET, B_OPUT, B_TGET, B_TPUT, B_LOAD, B_STORE = 0, 1, 2, 3, 4, 5
NO_OP = 12          # MPI_NO_OP code in the RMA `name` column

ACCUMULATES = (RmaOp.ACCUMULATE, RmaOp.GET_ACCUMULATE, RmaOp.FETCH_AND_OP, RmaOp.COMPARE_AND_SWAP,
               RmaOp.RACCUMULATE, RmaOp.RGET_ACCUMULATE)
GETS = (RmaOp.GET, RmaOp.RGET)
WITH_RESULT = (RmaOp.GET_ACCUMULATE, RmaOp.FETCH_AND_OP, RmaOp.COMPARE_AND_SWAP, RmaOp.RGET_ACCUMULATE)

# RMA `device` of rows without target bytes (FORMAT.md): the call's row when its target datatype is
# split into blocks, and a block of a split origin or result buffer
LOCAL_ROW, LOCAL_BLOCK = -2, -3
FIELDS = ("shard", "owner", "lo", "hi", "role", "write", "local", "atomic", "mop", "dsize", "issuer", "seg",
          "row", "end_rank", "end_cut", "lock", "excl", "phase", "bl_class", "bl_epoch", "loc", "rma_op",
          "win", "target", "disp", "mode")
# bytes of an element of each predefined datatype code the PMPI tracer writes (FORMAT.md, RMA `device`;
# LP64 Linux); codes >= 1000 are 1000 + size
_BASIC_SIZES = np.array([0, 1, 1, 1, 1, 2, 2, 4, 4, 8, 8, 8, 8, 4, 8, 16, 1, 2, 4, 8, 1, 2, 4, 8, 1, 4, 8, 8, 8,
                         8, 16, 8, 16, 16, 8, 8], dtype=np.int64)


def element_key(code: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Accumulates are atomic element by element: the datatype code and where elements start.

    Two accumulates with the same code whose elements start at different offsets modulo the
    element size (``MPI_INT`` at byte 0 and at byte 2) overlap on parts of elements: not atomic.
    Codes <= 0 (derived or unknown) stay as they are.
    """
    code = np.asarray(code, dtype=np.int64)
    size = np.where(code >= 1000, code - 1000, _BASIC_SIZES[np.clip(code, 0, len(_BASIC_SIZES) - 1)])
    size = np.where((code < 1000) & (code >= len(_BASIC_SIZES)), 1, np.maximum(size, 1))
    return np.where(code > 0, code * 64 + np.asarray(lo, dtype=np.int64) % size % 64, code)


# synchronisation mode an RMA call was issued in (for the advice in reports)
MODE_NONE, MODE_FENCE, MODE_LOCK, MODE_LOCK_ALL, MODE_PSCW = 0, 1, 2, 3, 4


@dataclass
class Accesses:
    """Struct of arrays, one entry per access (see FIELDS); int64 everywhere for numba."""

    cols: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.cols["lo"])

    def take(self, idx: np.ndarray) -> Accesses:
        return Accesses({k: v[idx] for k, v in self.cols.items()})


def _composite(keys: np.ndarray, cuts: np.ndarray, factor: int) -> np.ndarray:
    return keys.astype(np.int64) * factor + cuts.astype(np.int64)


def _factor(*cuts: np.ndarray) -> int:
    return int(max((int(c.max()) for c in cuts if len(c)), default=0)) + 2


def next_cut(ev_keys: np.ndarray, ev_cuts: np.ndarray, q_keys: np.ndarray, q_cuts: np.ndarray) -> np.ndarray:
    """For each query: the smallest event cut > query cut with the same key, else INF."""
    out = np.full(len(q_keys), INF, dtype=np.int64)
    if len(ev_keys) == 0 or len(q_keys) == 0:
        return out
    f = _factor(ev_cuts, q_cuts)
    comp = np.sort(_composite(ev_keys, ev_cuts, f))
    i = np.searchsorted(comp, _composite(q_keys, q_cuts, f), side="right")
    ok = i < len(comp)
    hit = comp[np.minimum(i, len(comp) - 1)]
    ok &= hit // f == q_keys
    out[ok] = hit[ok] % f
    return out


def last_at_or_before(ev_keys: np.ndarray, ev_cuts: np.ndarray, q_keys: np.ndarray,
                      q_cuts: np.ndarray) -> np.ndarray:
    """For each query: index (into the events) of the last event with the same key and cut <= query cut, else -1."""
    out = np.full(len(q_keys), -1, dtype=np.int64)
    if len(ev_keys) == 0 or len(q_keys) == 0:
        return out
    f = _factor(ev_cuts, q_cuts)
    comp = _composite(ev_keys, ev_cuts, f)
    order = np.argsort(comp, kind="stable")
    comp = comp[order]
    i = np.searchsorted(comp, _composite(q_keys, q_cuts, f), side="right") - 1
    ok = i >= 0
    hit = comp[np.maximum(i, 0)]
    ok &= hit // f == q_keys
    out[ok] = order[i[ok]]
    return out


def count_at_or_before(ev_keys: np.ndarray, ev_cuts: np.ndarray, q_keys: np.ndarray,
                       q_cuts: np.ndarray) -> np.ndarray:
    """For each query: how many events with the same key have cut <= query cut."""
    if len(ev_keys) == 0 or len(q_keys) == 0:
        return np.zeros(len(q_keys), dtype=np.int64)
    f = _factor(ev_cuts, q_cuts)
    comp = np.sort(_composite(ev_keys, ev_cuts, f))
    upto = np.searchsorted(comp, _composite(q_keys, q_cuts, f), side="right")
    start = np.searchsorted(comp, _composite(q_keys, np.zeros_like(q_cuts), f), side="left")
    return (upto - start).astype(np.int64)


def _dense(*parts_pairs: tuple[np.ndarray, ...]) -> list[np.ndarray]:
    """Dense integer keys for several groups of columns, consistent across the groups."""
    sizes = [len(p[0]) for p in parts_pairs]
    cat = [np.concatenate([p[j] for p in parts_pairs]) for j in range(len(parts_pairs[0]))]
    k = _key(*cat) if sum(sizes) else np.zeros(0, dtype=np.int64)
    out, pos = [], 0
    for n in sizes:
        out.append(k[pos:pos + n])
        pos += n
    return out


@dataclass
class Regions:
    """Window memory of every rank: [lo, hi) of window `win` on rank index `rank`, alive in rows [born, dies)."""

    rank: np.ndarray
    win: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    born: np.ndarray
    dies: np.ndarray
    base: dict[tuple[int, int], tuple[int, int]]   # (win, rank index) -> (base, flavor)

    def shard_of(self, rank: np.ndarray, addr: np.ndarray, row: np.ndarray) -> np.ndarray:
        """The window whose memory holds each address at that time, else -1."""
        out = np.full(len(addr), -1, dtype=np.int64)
        if len(self.lo) == 0 or len(addr) == 0:
            return out
        # each region only looks at its own rank's queries (thousands of ranks, one region each)
        by_rank = np.argsort(rank, kind="stable")
        sorted_rank = rank[by_rank]
        starts = np.searchsorted(sorted_rank, self.rank, side="left")
        ends = np.searchsorted(sorted_rank, self.rank, side="right")
        for i in range(len(self.lo)):
            q = by_rank[starts[i]:ends[i]]
            if len(q) == 0:
                continue
            hit = ((out[q] < 0) & (addr[q] >= self.lo[i]) & (addr[q] < self.hi[i]) & (row[q] >= self.born[i])
                   & (row[q] < self.dies[i]))
            out[q[hit]] = self.win[i]
        return out


def regions(cols: dict[str, np.ndarray], ro: RankOrder) -> Regions:
    kind = cols["kind"]
    n = len(kind)
    ridx = ro.rank_index
    rows = np.arange(n)
    out: dict[str, list[int]] = {k: [] for k in ("rank", "win", "lo", "hi", "born", "dies")}
    base: dict[tuple[int, int], tuple[int, int]] = {}
    frees = {(int(cols["id"][i]), int(ridx[i])): int(i) for i in rows[kind == EventKind.WIN_FREE]}
    for i in rows[kind == EventKind.WIN_CREATE]:
        w, r = int(cols["id"][i]), int(ridx[i])
        base[(w, r)] = (int(cols["addr"][i]), int(cols["op"][i]))
        if int(cols["size"][i]) > 0 and int(cols["op"][i]) != WinFlavor.DYNAMIC:
            for k, v in (("rank", r), ("win", w), ("lo", int(cols["addr"][i])),
                         ("hi", int(cols["addr"][i]) + int(cols["size"][i])), ("born", int(i)),
                         ("dies", frees.get((w, r), n))):
                out[k].append(v)
    detach = [(int(cols["id"][i]), int(ridx[i]), int(cols["addr"][i]), int(i)) for i in rows[kind == EventKind.WIN_DETACH]]
    for i in rows[kind == EventKind.WIN_ATTACH]:
        w, r, a = int(cols["id"][i]), int(ridx[i]), int(cols["addr"][i])
        end = next((j for (dw, dr, da, j) in detach if (dw, dr, da) == (w, r, a) and j > i), frees.get((w, r), n))
        for k, v in (("rank", r), ("win", w), ("lo", a), ("hi", a + int(cols["size"][i])), ("born", int(i)),
                     ("dies", end)):
            out[k].append(v)
    arr = {k: np.array(v, dtype=np.int64) for k, v in out.items()}
    return Regions(arr["rank"], arr["win"], arr["lo"], arr["hi"], arr["born"], arr["dies"], base)


@dataclass
class Completion:
    """Per RMA row: the (unit, cut) after which it is complete at the origin and at the target."""

    origin_unit: np.ndarray
    origin_cut: np.ndarray
    target_rank: np.ndarray     # unit whose cut completes the target side
    target_cut: np.ndarray


@kernel
def _first_completion(q_key, q_target, q_row, q_unit, q_seg, e_key, e_target, e_row, e_unit, e_cut, vc, vc_off):
    """Per query: the first event (row order) with the query's key, after it, for its target (or for
    every target: -1), that the query's call happens before. Events sorted by (key, row).
    Returns (unit, cut, row) with cut INF and row INF when there is none."""
    n = len(q_key)
    out_u = np.full(n, -1, dtype=np.int64)
    out_c = np.full(n, INF, dtype=np.int64)
    out_r = np.full(n, INF, dtype=np.int64)
    for i in range(n):
        k = q_key[i]
        j0 = np.searchsorted(e_key, k, side="left")
        j1 = np.searchsorted(e_key, k, side="right")
        j = j0 + np.searchsorted(e_row[j0:j1], q_row[i], side="right")   # the first event after the call
        while j < j1:
            if e_target[j] == -1 or e_target[j] == q_target[i]:
                u = e_unit[j]
                if u == q_unit[i] or vc[vc_off[u] + e_cut[j], q_unit[i]] >= q_seg[i] + 1:
                    out_u[i] = u
                    out_c[i] = e_cut[j]
                    out_r[i] = e_row[j]
                    break
            j += 1
    return out_u, out_c, out_r


def _search(ro: RankOrder, clk: Clocks, ev: np.ndarray, ev_parts: tuple, ev_target: np.ndarray, rma: np.ndarray,
            q_parts: tuple, q_target: np.ndarray):
    """``_first_completion`` for events ``ev`` keyed by ev_parts, queries ``rma`` keyed by q_parts."""
    n = len(rma)
    if len(ev) == 0 or n == 0:
        return np.full(n, -1, np.int64), np.full(n, INF, np.int64), np.full(n, INF, np.int64)
    ek, qk = _dense(ev_parts, q_parts)
    o = np.lexsort((ev, ek))
    return _first_completion(qk, q_target.astype(np.int64), rma.astype(np.int64), ro.unit[rma], ro.seg[rma],
                             ek[o], ev_target[o].astype(np.int64), ev[o].astype(np.int64), ro.unit[ev][o],
                             ro.seg[ev][o], clk.table, clk.off)


def _earliest(*found: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Element-wise the (unit, cut, row) with the smallest row."""
    u, c, r = (x.copy() for x in found[0])
    for fu, fc, fr in found[1:]:
        better = fr < r
        u[better], c[better], r[better] = fu[better], fc[better], fr[better]
    return u, c, r


def completion(cols: dict[str, np.ndarray], ro: RankOrder, clk: Clocks, rma: np.ndarray,
               target_idx: np.ndarray) -> Completion:
    """When each RMA call is complete at the origin and at the target (flush, unlock, fence, request, PSCW).

    A completion call on any thread of the origin rank completes the call if the call happens
    before it (the same thread earlier, or ordered by OpenMP synchronisation).
    """
    kind, op, ridx = cols["kind"], cols["op"], ro.rank_index
    o, w = ridx[rma], cols["id"][rma]
    sync = kind == EventKind.MPI_SYNC
    peer = cols["id2"].astype(np.int64)
    peer_idx = np.where(np.isin(peer, ro.ranks), np.searchsorted(ro.ranks, peer), -2)

    def sel(*ops: int) -> np.ndarray:
        return np.flatnonzero(sync & np.isin(op, np.array(ops, dtype=op.dtype)))

    def per_target(ev: np.ndarray, one: bool) -> np.ndarray:
        return peer_idx[ev] if one else np.full(len(ev), -1, np.int64)

    both_ev = np.r_[sel(MpiSyncKind.FENCE, MpiSyncKind.UNLOCK_ALL, MpiSyncKind.FLUSH_ALL),
                    np.flatnonzero(kind == EventKind.WIN_FREE), sel(MpiSyncKind.UNLOCK, MpiSyncKind.FLUSH)]
    both_t = np.isin(op[both_ev], [MpiSyncKind.UNLOCK, MpiSyncKind.FLUSH]) & (kind[both_ev] == EventKind.MPI_SYNC)
    orig_ev = sel(MpiSyncKind.FLUSH_LOCAL_ALL, MpiSyncKind.FLUSH_LOCAL)
    orig_t = op[orig_ev] == MpiSyncKind.FLUSH_LOCAL
    complete = sel(MpiSyncKind.COMPLETE)

    both = _search(ro, clk, both_ev, (ridx[both_ev], cols["id"][both_ev]),
                   np.where(both_t, peer_idx[both_ev], -1), rma, (o, w), target_idx)
    orig = _search(ro, clk, orig_ev, (ridx[orig_ev], cols["id"][orig_ev]),
                   np.where(orig_t, peer_idx[orig_ev], -1), rma, (o, w), target_idx)
    comp = _search(ro, clk, complete, (ridx[complete], cols["id"][complete]), per_target(complete, False),
                   rma, (o, w), target_idx)

    # request completion (request ids are unique per rank)
    req = cols["aux2"][rma]
    has_req = np.isin(cols["op"][rma], [RmaOp.RPUT, RmaOp.RGET, RmaOp.RACCUMULATE, RmaOp.RGET_ACCUMULATE]) & (req >= 0)
    rq = np.flatnonzero(kind == EventKind.MPI_REQUEST)
    reqc = _search(ro, clk, rq, (ridx[rq], cols["aux2"][rq]), per_target(rq, False), rma, (o, req), target_idx)
    none = (np.full(len(rma), -1, np.int64), np.full(len(rma), INF, np.int64), np.full(len(rma), INF, np.int64))
    reqc = tuple(np.where(has_req, x, y) for x, y in zip(reqc, none))

    ou, oc, _ = _earliest(both, orig, comp, reqc)
    is_rget = np.isin(cols["op"][rma], list(GETS)) & has_req
    tu, tc, _ = _earliest(both, tuple(np.where(is_rget, x, y) for x, y in zip(reqc, none)))
    # PSCW: the target side completes at the target's matching MPI_Win_wait
    pscw = np.flatnonzero(comp[2] < _earliest(both, none)[2])
    for i in pscw:
        waits = clk.pscw_wait.get((int(comp[0][i]), int(comp[1][i])), [])
        hit = next(((wu, wc) for (wu, wc) in waits if ro.unit_rank[wu] == target_idx[i]), None)
        if hit is not None:
            tu[i], tc[i] = hit
    return Completion(ou, oc, tu, tc)


def lock_epochs(cols: dict[str, np.ndarray], ro: RankOrder, q_rank: np.ndarray, q_win: np.ndarray,
                q_target: np.ndarray, q_row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(epoch id or -1, exclusive?) of the passive-target epoch on (window, target) each query is in.

    A lock belongs to the process, not the thread (MPI): a query (rank index, row) is in the
    epoch of its rank's last lock/unlock on (window, target) before it in the log, whichever
    thread called it (one thread: its program order)."""
    kind, op, ridx = cols["kind"], cols["op"], ro.rank_index
    seg = np.arange(len(kind), dtype=np.int64)
    q_seg = q_row
    sync = kind == EventKind.MPI_SYNC
    peer = cols["id2"].astype(np.int64)
    peer_idx = np.where(np.isin(peer, ro.ranks), np.searchsorted(ro.ranks, peer), -1)
    lock_id = np.full(len(q_rank), -1, dtype=np.int64)
    excl = np.zeros(len(q_rank), dtype=np.int64)
    for opening, closing, per_target in ((MpiSyncKind.LOCK, MpiSyncKind.UNLOCK, True),
                                         (MpiSyncKind.LOCK_ALL, MpiSyncKind.UNLOCK_ALL, False)):
        ev = np.flatnonzero(sync & ((op == opening) | (op == closing)))
        if len(ev) == 0:
            continue
        parts = (ridx[ev], cols["id"][ev]) + ((peer_idx[ev],) if per_target else ())
        qparts = (q_rank, q_win) + ((q_target,) if per_target else ())
        ek, qk = _dense(parts, qparts)
        last = last_at_or_before(ek, seg[ev], qk, q_seg)
        inside = last >= 0
        inside[inside] = op[ev[last[inside]]] == opening
        lock_id[inside] = ev[last[inside]]
        excl[inside] = (cols["aux"][ev[last[inside]]] == LockType.EXCLUSIVE).astype(np.int64)
    return lock_id, excl


def fence_phase(cols: dict[str, np.ndarray], ro: RankOrder, q_rank: np.ndarray, q_win: np.ndarray,
                q_seg: np.ndarray) -> np.ndarray:
    """How many fences on the window the rank has passed: accesses in different phases never race."""
    ev = np.flatnonzero((cols["kind"] == EventKind.MPI_SYNC) & (cols["op"] == MpiSyncKind.FENCE))
    ek, qk = _dense((ro.unit[ev], cols["id"][ev]), (q_rank, q_win))
    return count_at_or_before(ek, ro.seg[ev], qk, q_seg)


def paper_epochs(cols: dict[str, np.ndarray], ro: RankOrder, q_rank: np.ndarray, q_win: np.ndarray,
                 q_seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(epoch ordinal, open?) in the paper's model: epochs are fence and lock_all/unlock_all only.

    ``q_win`` -1 asks about the rank's private memory: every window's epoch calls count.
    """
    kind, op = cols["kind"], cols["op"]
    ev = np.flatnonzero((kind == EventKind.MPI_SYNC)
                        & np.isin(op, [MpiSyncKind.FENCE, MpiSyncKind.LOCK_ALL, MpiSyncKind.UNLOCK_ALL]))
    ordinal = np.zeros(len(q_rank), dtype=np.int64)
    is_open = np.zeros(len(q_rank), dtype=bool)
    opening = (op[ev] == MpiSyncKind.FENCE) | (op[ev] == MpiSyncKind.LOCK_ALL)
    for private in (False, True):
        m = (q_win < 0) == private
        if not m.any():
            continue
        ev_win = np.full(len(ev), -1) if private else cols["id"][ev]
        ek, qk = _dense((ro.unit[ev], ev_win), (q_rank[m], q_win[m]))
        ordinal[m] = count_at_or_before(ek[opening], ro.seg[ev][opening], qk, q_seg[m])
        last = last_at_or_before(ek, ro.seg[ev], qk, q_seg[m])
        op_last = np.where(last >= 0, op[ev[np.maximum(last, 0)]], 0) if len(ev) else np.zeros(len(last), np.int64)
        is_open[m] = (last >= 0) & ((op_last == MpiSyncKind.FENCE) | (op_last == MpiSyncKind.LOCK_ALL))
    return ordinal, is_open


def build(cols: dict[str, np.ndarray], ro: RankOrder, clk: Clocks) -> tuple[Accesses, Regions]:
    """The access table of a log (local loads/stores and both sides of every RMA call)."""
    kind = cols["kind"]
    reg = regions(cols, ro)
    ridx, seg = ro.rank_index, ro.seg
    parts: list[dict[str, np.ndarray]] = []

    # local loads and stores (host side only)
    acc = np.flatnonzero((kind == EventKind.ACCESS) & (cols["device"] < 0) & (cols["size"] > 0))
    if len(acc):
        blk, lo, hi = expand_blocks(cols["addr"][acc], cols["size"][acc], cols["addr2"][acc], cols["aux2"][acc],
                                    cols["name"][acc], cols["id2"][acc], row_masks(cols, acc))
        acc = acc[blk]  # one row per block of a strided run (per plane: format version 5; present slot: 6)
        write = (cols["op"][acc] & AccessFlag.WRITE) != 0
        unit = ro.unit[acc]
        parts.append(_rows(acc, reg.shard_of(ridx[acc], lo, acc), ridx[acc], lo, hi,
                           np.where(write, STORE, LOAD), write, 1, 0, 0, 0, unit, seg[acc],
                           unit, seg[acc] + 1, cols["loc"][acc], 0, -1, -1, 0,
                           np.where(write, B_STORE, B_LOAD)))

    rma = np.flatnonzero(kind == EventKind.RMA)
    if len(rma):
        parts += _rma_rows(cols, ro, clk, reg, rma)

    if not parts:
        empty = {f: np.zeros(0, dtype=np.int64) for f in FIELDS}
        return Accesses(empty), reg
    table = {f: np.concatenate([p[f] for p in parts]) for f in FIELDS}
    a = Accesses(table)
    _add_epochs(cols, ro, a)
    return a, reg


def _rows(row, shard, owner, lo, hi, role, write, local, atomic, mop, dsize, issuer, sg, end_rank, end_cut, loc,
          rma_op, win, target, disp, bl_class) -> dict[str, np.ndarray]:
    n = len(row)

    def col(v) -> np.ndarray:
        return np.broadcast_to(np.asarray(v, dtype=np.int64), (n,)).copy()

    return {"shard": col(shard), "owner": col(owner), "lo": col(lo), "hi": col(hi), "role": col(role),
            "write": col(write), "local": col(local), "atomic": col(atomic), "mop": col(mop), "dsize": col(dsize),
            "issuer": col(issuer), "seg": col(sg), "row": col(row), "end_rank": col(end_rank),
            "end_cut": col(end_cut), "lock": col(-1), "excl": col(0), "phase": col(0), "bl_class": col(bl_class),
            "bl_epoch": col(-1), "loc": col(loc), "rma_op": col(rma_op), "win": col(win), "target": col(target),
            "disp": col(disp), "mode": col(MODE_NONE)}


def _rma_rows(cols, ro: RankOrder, clk: Clocks, reg: Regions, rma: np.ndarray) -> list[dict[str, np.ndarray]]:
    ridx, seg = ro.rank_index, ro.seg
    op = cols["op"][rma].astype(np.int64)
    win = cols["id"][rma].astype(np.int64)
    target = cols["id2"][rma].astype(np.int64)
    known = np.isin(target, ro.ranks)
    t_idx = np.where(known, np.searchsorted(ro.ranks, target), -1)
    o = ridx[rma]
    u = ro.unit[rma]
    size = cols["size"][rma].astype(np.int64)
    disp = cols["aux"][rma].astype(np.int64)
    mop = np.where(np.isin(op, list(ACCUMULATES)), cols["name"][rma].astype(np.int64), 0)
    dsize = cols["device"][rma].astype(np.int64)
    atomic = np.isin(op, list(ACCUMULATES)).astype(np.int64)
    comp = completion(cols, ro, clk, rma, t_idx)
    loc = cols["loc"][rma]
    out = []

    # target side
    base = np.zeros(len(rma), dtype=np.int64)
    ok = np.zeros(len(rma), dtype=bool)
    for (bw, br), (b, flavor) in reg.base.items():
        hit = known & (win == bw) & (t_idx == br)
        ok |= hit
        base[hit] = 0 if flavor == WinFlavor.DYNAMIC else b
    lo = base + disp
    t_write = np.where(np.isin(op, list(GETS)) | ((atomic == 1) & (mop == NO_OP)), 0, 1)
    t_role = np.where(t_write == 1, TARGET_WRITE, TARGET_READ)
    bl = np.where(np.isin(op, list(GETS)), B_TGET, B_TPUT)
    # a call with derived datatypes is one row for what is not split (device -2: no target bytes), one
    # row per block of the target's type map (with each block's basic datatype) and one per block of
    # a local buffer's (device -3: no target bytes), as the tracer decomposed them
    m = ok & (size > 0) & (dsize != LOCAL_ROW) & (dsize != LOCAL_BLOCK)
    out.append(_rows(rma[m], win[m], t_idx[m], lo[m], lo[m] + size[m], t_role[m], t_write[m], 0, atomic[m], mop[m],
                     element_key(dsize[m], lo[m]), u[m], seg[rma][m], comp.target_rank[m], comp.target_cut[m], loc[m], op[m], win[m],
                     target[m], disp[m], bl[m]))

    # origin side: the origin buffer (read, or written by a get) and the result buffer (written)
    oaddr = cols["addr"][rma].astype(np.int64)
    is_get = np.isin(op, list(GETS))
    m = (oaddr != 0) & (size > 0)
    shard = reg.shard_of(o[m], oaddr[m], rma[m])
    out.append(_rows(rma[m], shard, o[m], oaddr[m], oaddr[m] + size[m], np.where(is_get[m], ORIGIN_WRITE, ORIGIN_READ),
                     is_get[m].astype(np.int64), 0, 0, 0, 0, u[m], seg[rma][m], comp.origin_unit[m], comp.origin_cut[m],
                     loc[m], op[m],
                     win[m], target[m], disp[m], np.where(is_get[m], B_OGET, B_OPUT)))
    raddr = cols["addr2"][rma].astype(np.int64)
    m = (raddr != 0) & (size > 0) & np.isin(op, list(WITH_RESULT))
    shard = reg.shard_of(o[m], raddr[m], rma[m])
    out.append(_rows(rma[m], shard, o[m], raddr[m], raddr[m] + size[m], ORIGIN_WRITE, 1, 0, 0, 0, 0, u[m],
                     seg[rma][m], comp.origin_unit[m], comp.origin_cut[m], loc[m], op[m], win[m], target[m], disp[m], B_OGET))
    return out


def _add_epochs(cols, ro: RankOrder, a: Accesses) -> None:
    """Lock epochs, fence phases and the paper's epochs of every access."""
    c = a.cols
    remote = c["local"] == 0
    target_side = remote & ((c["role"] == TARGET_READ) | (c["role"] == TARGET_WRITE))
    in_window = c["shard"] >= 0
    # lock epoch: RMA target accesses by their issuer's lock on (win, owner); the owner's own
    # loads/stores in its window by its lock on itself
    q = np.flatnonzero((target_side | (c["local"] == 1)) & in_window)
    if len(q):
        lock, excl = lock_epochs(cols, ro, ro.unit_rank[c["issuer"][q]], c["shard"][q], c["owner"][q], c["row"][q])
        c["lock"][q] = lock
        c["excl"][q] = excl
    # fence phases split program order only when each rank is one thread: a thread that no OpenMP
    # synchronisation orders with the fence is in no phase (all accesses stay in phase 0)
    q = np.flatnonzero(in_window) if not ro.threaded else np.zeros(0, np.int64)
    if len(q):
        c["phase"][q] = fence_phase(cols, ro, c["issuer"][q], c["shard"][q], c["seg"][q])
    _add_modes(cols, ro, a)
    # the paper's epochs: window memory by the window's epochs, private memory by any epoch of the
    # rank; RMA accesses always count, loads and stores only while an epoch is open
    ordinal, is_open = paper_epochs(cols, ro, c["issuer"], c["shard"], c["seg"])
    c["bl_epoch"] = np.where(remote | is_open, ordinal, -1)


def _add_modes(cols, ro: RankOrder, a: Accesses) -> None:
    """Which synchronisation each RMA call was issued under: lock, lock_all, PSCW or fence (the
    rank's last such call before it in the log, whichever of its threads made it)."""
    c = a.cols
    q = np.flatnonzero(c["local"] == 0)
    if len(q) == 0:
        return
    t = c["target"][q]
    t_idx = np.where(np.isin(t, ro.ranks), np.searchsorted(ro.ranks, t), -1)
    mode = np.full(len(q), MODE_NONE, dtype=np.int64)
    kind, op = cols["kind"], cols["op"]
    ev = np.flatnonzero((kind == EventKind.MPI_SYNC) & np.isin(op, [MpiSyncKind.FENCE, MpiSyncKind.START,
                                                                      MpiSyncKind.COMPLETE]))
    q_rank, q_row = ro.unit_rank[c["issuer"][q]], c["row"][q]
    ek, qk = _dense((ro.rank_index[ev], cols["id"][ev]), (q_rank, c["win"][q]))
    last = last_at_or_before(ek, ev, qk, q_row)
    last_op = np.where(last >= 0, op[ev[np.maximum(last, 0)]], 0) if len(ev) else np.zeros(len(q), np.int64)
    mode[last_op == MpiSyncKind.FENCE] = MODE_FENCE
    mode[last_op == MpiSyncKind.START] = MODE_PSCW
    for opening, closing, per_target, m in ((MpiSyncKind.LOCK_ALL, MpiSyncKind.UNLOCK_ALL, False, MODE_LOCK_ALL),
                                            (MpiSyncKind.LOCK, MpiSyncKind.UNLOCK, True, MODE_LOCK)):
        ev = np.flatnonzero((kind == EventKind.MPI_SYNC) & ((op == opening) | (op == closing)))
        if len(ev) == 0:
            continue
        peer = cols["id2"][ev].astype(np.int64)
        peer_idx = np.where(np.isin(peer, ro.ranks), np.searchsorted(ro.ranks, peer), -1)
        parts = (ro.rank_index[ev], cols["id"][ev]) + ((peer_idx,) if per_target else ())
        qparts = (q_rank, c["win"][q]) + ((t_idx,) if per_target else ())
        ek, qk = _dense(parts, qparts)
        last = last_at_or_before(ek, ev, qk, q_row)
        inside = last >= 0
        inside[inside] = op[ev[last[inside]]] == opening
        mode[inside] = m
    c["mode"][q] = mode
