"""Happens-before between the threads of MPI ranks, as vector clocks per *segment*.

Why segments: every unit's (a thread of a rank, see ``RankOrder``) program order is cut at its
synchronisation events (RMA sync calls, request completions, messages, window frees, OpenMP
synchronisation); all accesses between two cuts share one vector clock, so the clocks cost
O(sync events x units), not O(events x units).

Conventions (used by every RMA module; "rank" in the clock code means a unit):
- the k-th sync event of a unit (1-based, program order) *is* cut k; accesses after it and
  before cut k+1 are in segment k (segment 0 precedes the first cut);
- ``vc(u, s)[j] >= k`` means: unit j's cut k happens before everything in u's segment s;
- edges: send -> matching receive (n-th send from a to b on (comm, tag) with the n-th receive),
  barriers / all-to-all collectives and ``MPI_Win_fence`` (everyone before -> everyone after),
  PSCW ``post -> start`` and ``complete -> wait``, and the OpenMP edges between the threads of a
  rank (``quiver.replay.threads.omp_order``). Locks give no edge (see rma_access).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from quiver.formats import EventKind, MessageKind, MpiSyncKind
from quiver.formats.sets import sorted_unique, sorted_unique_columns
from quiver.replay.threads.omp_order import TASK_KINDS, barrier_groups, ordering_rows, thread_edges

# MPI events that cut a unit's program order
MPI_CUT_KINDS = (EventKind.MPI_SYNC, EventKind.MPI_REQUEST, EventKind.MPI_MESSAGE, EventKind.WIN_FREE)
# every event the clocks are built from (each shard of a sharded run gets them all)
SYNC_KINDS = (*MPI_CUT_KINDS, EventKind.SYNC, *TASK_KINDS, EventKind.TASK_DEPEND)
INF = np.int64(1) << 40


@dataclass
class RankOrder:
    """Per event: its rank, its *unit* (a thread of a rank) and the unit's segment it is in.

    Units are the (rank, thread) pairs that have synchronisation events (an MPI call or an OpenMP
    sync); a thread without any is folded into its rank's first unit. Clocks are over units, so
    two threads of one rank are ordered only by the OpenMP edges of ``quiver.replay.threads.omp_order``.
    """

    ranks: np.ndarray          # sorted distinct ranks
    rank_index: np.ndarray     # per event: index of its rank in `ranks`
    seg: np.ndarray            # per event: segment of its unit (sync events: their own cut index)
    is_sync: np.ndarray        # per event
    ncuts: np.ndarray          # per unit: number of cuts
    unit: np.ndarray           # per event: its unit
    unit_rank: np.ndarray      # per unit: rank index
    unit_thread: np.ndarray    # per unit: thread

    @property
    def threaded(self) -> bool:
        """Does some rank have more than one unit (threads ordered by OpenMP only)?"""
        return len(self.unit_rank) > len(sorted_unique(self.unit_rank))


def _sync_mask(cols: dict[str, np.ndarray]) -> np.ndarray:
    kind = cols["kind"]
    mpi = np.isin(kind, np.array([int(k) for k in MPI_CUT_KINDS], dtype=kind.dtype))
    return mpi | ordering_rows(cols)


def _execution_units(cols: dict[str, np.ndarray], ridx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per event: (thread, task) of the context that ran it: a thread's implicit task (task 0) or a
    deferred explicit task (task = 1 + its id, thread -1: it may resume on another thread).

    The contexts are the nowait checker's task model (``quiver.replay.nowait.tasks``): one model of
    which task ran which event for every checker.
    """
    thread = cols["thread"].astype(np.int64)
    if not np.isin(cols["kind"], np.array([int(k) for k in TASK_KINDS], dtype=cols["kind"].dtype)).any():
        return thread, np.zeros(len(thread), np.int64)
    # imported only here: a plain MPI log does not need the task model's module (~2 ms of import)
    from quiver.replay.nowait.tasks import build_task_model

    tm = build_task_model(None, cols)  # type: ignore[arg-type]  (cols given: the log is not read)
    ctx = tm.ctx.astype(np.int64)
    in_task = ctx >= tm.n_threads
    task = np.zeros(len(ctx), np.int64)
    task[in_task] = 1 + (tm.task_key[ctx[in_task] - tm.n_threads] & ((1 << 40) - 1))
    return np.where(in_task, -1, thread), task


def rank_order(cols: dict[str, np.ndarray], ranks: np.ndarray | None = None) -> RankOrder:
    """Units and segments of every event; ``ranks`` (sorted) when the events are one shard of a bigger log."""
    kind = cols["kind"]
    rank = cols["rank"].astype(np.int64)
    ranks = sorted_unique(rank) if ranks is None else np.asarray(ranks, dtype=np.int64)
    ridx = np.searchsorted(ranks, rank)
    thread, task = _execution_units(cols, ridx)
    is_sync = _sync_mask(cols)
    # units: (rank index, thread, task) of sync rows, plus one per rank that has none
    key_rows = np.stack([ridx, thread, task])
    units = sorted_unique_columns(key_rows[:, is_sync]) if is_sync.any() else np.zeros((3, 0), np.int64)
    has_unit = np.zeros(len(ranks), dtype=bool)
    has_unit[units[0]] = True
    missing = np.flatnonzero(~has_unit)   # np.setdiff1d, without np.unique (which imports numpy.ma)
    units = np.concatenate([units, np.stack([missing, np.zeros(len(missing), np.int64),
                                             np.zeros(len(missing), np.int64)])], axis=1).astype(np.int64)
    units = units[:, np.lexsort((units[2], units[1], units[0]))]
    unit_rank, unit_thread = units[0], units[1]
    # dense codes of (thread, task) shared by units and events
    both = np.concatenate([units, key_rows], axis=1)
    code = _key(both[1], both[2])
    span = int(code.max()) + 1 if len(code) else 1
    ukey = units[0] * span + code[:units.shape[1]]
    q = ridx * span + code[units.shape[1]:]
    pos = np.minimum(np.searchsorted(ukey, q), len(ukey) - 1)
    first = np.searchsorted(unit_rank, ridx)          # the rank's first unit
    unit = np.where(ukey[pos] == q, pos, first).astype(np.int64)
    nu = len(ukey)
    order = np.lexsort((np.arange(len(kind)), unit))     # by unit, then sequence
    s = is_sync[order].astype(np.int64)
    csum = np.cumsum(s)
    starts = np.searchsorted(unit[order], np.arange(nu))
    base = np.where(starts > 0, csum[np.maximum(starts - 1, 0)], 0)
    seg_sorted = csum - np.repeat(base, np.diff(np.append(starts, len(order))))
    seg = np.empty(len(kind), dtype=np.int64)
    seg[order] = seg_sorted
    ncuts = np.bincount(unit[is_sync], minlength=nu).astype(np.int64)
    return RankOrder(ranks, ridx, seg, is_sync, ncuts, unit, unit_rank, unit_thread)


def _nth(keys: np.ndarray) -> np.ndarray:
    """Occurrence number of each row among rows with the same key (rows already in order)."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((np.arange(len(keys)), keys))
    k = keys[order]
    first = np.r_[True, k[1:] != k[:-1]]
    grp_start = np.maximum.accumulate(np.where(first, np.arange(len(k)), 0))
    nth = np.empty(len(keys), dtype=np.int64)
    nth[order] = np.arange(len(k)) - grp_start
    return nth


def _key(*parts: np.ndarray) -> np.ndarray:
    """Dense row keys (0..k-1) for several integer columns: mixed-radix codes of 1-D factorisations."""
    if len(parts[0]) == 0:
        return np.zeros(0, dtype=np.int64)
    code = np.zeros(len(parts[0]), dtype=np.int64)
    for p in parts:
        uniq, inv = np.unique(np.asarray(p).astype(np.int64), return_inverse=True)
        code = code * len(uniq) + inv.reshape(-1)
        if int(code.max()) > (1 << 40):
            code = np.unique(code, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return np.unique(code, return_inverse=True)[1].reshape(-1).astype(np.int64)


@dataclass
class Clocks:
    """Vector clock of every (rank index, segment): ``table[off[r] + s, j]``."""

    table: np.ndarray          # (sum(ncuts + 1), nranks) int64
    off: np.ndarray            # per rank index
    nranks: int
    pscw_wait: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)
    # (origin rank index, complete cut) -> [(target rank index, wait cut)]

    def row(self, r: int, s: int) -> np.ndarray:
        return self.table[self.off[r] + s]


def _group_ranks(text: str) -> set[int]:
    return {int(x) for x in text.split(",") if x.strip().lstrip("-").isdigit()} if text else set()


def _pscw_edges(cols, strings, ro: RankOrder, rank_pos: dict[int, int]):
    """Point edges post->start and complete->wait, and the complete->wait map for completion.

    Groups name ranks; the events are (unit, cut) points of the thread that called them.
    """
    kind, op = cols["kind"], cols["op"]
    sel = np.flatnonzero((kind == EventKind.MPI_SYNC) & np.isin(op, [MpiSyncKind.POST, MpiSyncKind.START,
                                                                      MpiSyncKind.COMPLETE, MpiSyncKind.WAIT]))
    edges: list[tuple[int, int, int, int]] = []   # (dst unit, dst cut, src unit, src cut)
    waits: dict[tuple[int, int], list[tuple[int, int]]] = {}
    if len(sel) == 0:
        return edges, waits
    # per (rank, window): ordered list of events
    posts: dict[tuple[int, int], list[list]] = {}   # (target rank, win) -> [[(u, cut), group, (u, wait cut)]]
    starts: dict[tuple[int, int], list[list]] = {}  # (origin rank, win) -> [[(u, cut), group, (u, complete cut)]]
    for i in sel:
        r = int(ro.rank_index[i])
        w = int(cols["id"][i])
        k = (int(ro.unit[i]), int(ro.seg[i]))
        o = int(op[i])
        name = int(cols["name"][i])
        group = _group_ranks(strings[name] if 0 <= name < len(strings) else "")
        group_idx = {rank_pos[g] for g in group if g in rank_pos}
        if o == MpiSyncKind.POST:
            posts.setdefault((r, w), []).append([k, group_idx, None])
        elif o == MpiSyncKind.START:
            starts.setdefault((r, w), []).append([k, group_idx, None])
        elif o == MpiSyncKind.WAIT:
            open_posts = [p for p in posts.get((r, w), []) if p[2] is None]
            if open_posts:
                open_posts[0][2] = k
        elif o == MpiSyncKind.COMPLETE:
            open_starts = [s for s in starts.get((r, w), []) if s[2] is None]
            if open_starts:
                open_starts[0][2] = k
    for (o_r, w), ss in starts.items():
        seen: dict[int, int] = {}
        for s_cut, group, c_cut in ss:
            for t in sorted(group):
                n = seen.get(t, 0)
                seen[t] = n + 1
                matching = [p for p in posts.get((t, w), []) if o_r in p[1]]
                if n >= len(matching):
                    continue
                p_cut, _g, w_cut = matching[n]
                edges.append((*s_cut, *p_cut))            # post -> start
                if c_cut is not None and w_cut is not None:
                    edges.append((*w_cut, *c_cut))        # complete -> wait
                    waits.setdefault(c_cut, []).append(w_cut)
    return edges, waits


def clocks(cols: dict[str, np.ndarray], strings: list[str], ro: RankOrder) -> Clocks:
    """Vector clocks of every segment of every rank, from the sync events of the log."""
    nr = len(ro.unit_rank)
    rank_pos = {int(r): i for i, r in enumerate(ro.ranks)}
    kind, op = cols["kind"], cols["op"]
    ridx, seg, unit = ro.rank_index, ro.seg, ro.unit

    # point edges (dst rank, dst cut) <- (src rank, src cut)
    point: dict[tuple[int, int], list[tuple[int, int]]] = {}
    msg = kind == EventKind.MPI_MESSAGE
    peer = cols["id2"].astype(np.int64)
    known_peer = np.isin(peer, ro.ranks)
    peer_idx = np.where(known_peer, np.searchsorted(ro.ranks, peer), -1)
    sends = np.flatnonzero(msg & (op == MessageKind.SEND) & known_peer)
    recvs = np.flatnonzero(msg & (op == MessageKind.RECV) & known_peer)
    if len(sends) and len(recvs):
        s_key = _key(ridx[sends], peer_idx[sends], cols["aux2"][sends], cols["aux"][sends])
        s_nth = _nth(s_key)
        # receive keys in sender-major form: (src = peer, dst = me)
        both = _key(np.r_[ridx[sends], peer_idx[recvs]], np.r_[peer_idx[sends], ridx[recvs]],
                    np.r_[cols["aux2"][sends], cols["aux2"][recvs]], np.r_[cols["aux"][sends], cols["aux"][recvs]])
        sk, rk = both[: len(sends)], both[len(sends):]
        r_nth = _nth(rk)
        s_nth = _nth(sk)
        lookup = {(int(k), int(n)): int(i) for k, n, i in zip(sk, s_nth, sends)}
        for k, n, i in zip(rk, r_nth, recvs):
            j = lookup.get((int(k), int(n)))
            if j is not None:
                point.setdefault((int(unit[i]), int(seg[i])), []).append((int(unit[j]), int(seg[j])))
    pscw, waits = _pscw_edges(cols, strings, ro, rank_pos)
    for dr, dk, sr, sk_ in pscw:
        point.setdefault((dr, dk), []).append((sr, sk_))

    # group joins: collectives per communicator, fences per window
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    coll = np.flatnonzero(msg & ((op == MessageKind.BARRIER) | (op == MessageKind.COLLECTIVE)))
    if len(coll):
        nth = _nth(_key(ridx[coll], cols["aux2"][coll]))
        gk = _key(np.zeros(len(coll)), cols["aux2"][coll], nth)
        for g, i in zip(gk, coll):
            groups.setdefault((0, int(g)), []).append((int(unit[i]), int(seg[i])))
    fence = np.flatnonzero((kind == EventKind.MPI_SYNC) & (op == MpiSyncKind.FENCE))
    if len(fence):
        nth = _nth(_key(ridx[fence], cols["id"][fence]))
        gk = _key(cols["id"][fence], nth)
        for g, i in zip(gk, fence):
            groups.setdefault((1, int(g)), []).append((int(unit[i]), int(seg[i])))
    # OpenMP between the threads (and tasks) of each rank: point edges, and each barrier instance
    # as a group join of its departures (each follows its thread's arrival)
    ts, td = thread_edges(cols, barriers=False)
    keep = ro.is_sync[ts] & ro.is_sync[td] & (unit[ts] != unit[td])
    for du, dk, su, sk in zip(unit[td[keep]].tolist(), seg[td[keep]].tolist(), unit[ts[keep]].tolist(),
                              seg[ts[keep]].tolist()):
        point.setdefault((du, dk), []).append((su, sk))
    dep, inst = barrier_groups(cols)
    for i, g in zip(dep.tolist(), inst.tolist()):
        groups.setdefault((2, g), []).append((int(unit[i]), int(seg[i])))
    group_of: dict[tuple[int, int], tuple[int, int]] = {}
    for g, members in groups.items():
        for m in members:
            group_of[m] = g

    return _propagate(ro, point, groups, group_of, waits, nr)


class _Propagation:
    """Rows of the clock table, filled in an order that respects every join."""

    def __init__(self, ncuts: np.ndarray, nr: int) -> None:
        self.nr = nr
        self.ncuts = ncuts
        self.off = np.zeros(nr, dtype=np.int64)
        self.off[1:] = np.cumsum(ncuts + 1)[:-1]
        self.table = np.zeros((int(np.sum(ncuts + 1)), nr), dtype=np.int64)
        self.done = np.zeros(nr, dtype=np.int64)   # rows of rank r final up to this cut

    def fill(self, r: int, upto: int) -> None:
        """Rows of r up to cut `upto` that have no join inherit the previous row."""
        lo = int(self.done[r])
        if upto <= lo:
            return
        base = self.off[r]
        rows = self.table[base + lo + 1: base + upto + 1]
        rows[:] = self.table[base + lo]
        rows[:, r] = np.arange(lo + 1, upto + 1)
        self.done[r] = upto

    def row(self, r: int, k: int) -> np.ndarray:
        self.fill(r, k)
        return self.table[self.off[r] + k]

    def contribution(self, r: int, k: int, srcs: list[tuple[int, int]]) -> np.ndarray:
        """What r knows at its cut k: its previous row, itself, and the point sources."""
        out = self.row(r, k - 1).copy()
        out[r] = k
        for sr, sk in srcs:
            out = np.maximum(out, self.row(sr, sk))
        return out

    def set(self, r: int, k: int, row: np.ndarray) -> None:
        self.fill(r, k - 1)
        row = row.copy()
        row[r] = k
        self.table[self.off[r] + k] = row
        self.done[r] = k


def _propagate(ro: RankOrder, point, groups, group_of, waits, nr: int) -> Clocks:
    """Kahn-style pass over the join cuts only; the other cuts inherit by prefix maximum."""
    pr = _Propagation(ro.ncuts, nr)
    by_rank: dict[int, set[int]] = {}
    for r, k in (*point, *group_of):
        by_rank.setdefault(r, set()).add(k)
    joins_of = [sorted(by_rank.get(ri, ())) for ri in range(nr)]
    pos = [0] * nr

    def final(r: int, k: int) -> bool:
        """Are r's rows up to cut k final (every join of r at or before k processed)?"""
        js = joins_of[r]
        return pos[r] >= len(js) or js[pos[r]] > k

    def at_head(r: int, k: int) -> bool:
        return pos[r] < len(joins_of[r]) and joins_of[r][pos[r]] == k

    remaining = sum(len(j) for j in joins_of)
    while remaining:
        progress = False
        for r in range(nr):
            while pos[r] < len(joins_of[r]):
                k = joins_of[r][pos[r]]
                g = group_of.get((r, k))
                members = groups[g] if g is not None else [(r, k)]
                if not all(at_head(m, mk) and all(final(sr, sk) for sr, sk in point.get((m, mk), []))
                           for m, mk in members):
                    break
                joined = None
                for m, mk in members:
                    c = pr.contribution(m, mk, point.get((m, mk), []))
                    joined = c if joined is None else np.maximum(joined, c)
                for m, mk in members:
                    pr.set(m, mk, joined)
                    pos[m] += 1
                    remaining -= 1
                progress = True
        if not progress:
            # a join that can never be met (unmatched message, crashed rank): drop the earliest one
            r = min((ri for ri in range(nr) if pos[ri] < len(joins_of[ri])), key=lambda ri: joins_of[ri][pos[ri]])
            k = joins_of[r][pos[r]]
            g = group_of.pop((r, k), None)
            if g is not None:
                groups[g] = [m for m in groups[g] if m != (r, k)]
            srcs = [(sr, sk) for sr, sk in point.pop((r, k), []) if final(sr, sk)]
            pr.set(r, k, pr.contribution(r, k, srcs))
            pos[r] += 1
            remaining -= 1
    for r in range(nr):
        pr.fill(r, int(ro.ncuts[r]))
    return Clocks(pr.table, pr.off, nr, waits)
