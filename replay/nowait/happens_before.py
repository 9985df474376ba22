"""Happens-before between the events of one run, as vector clocks over segments.

Why vector clocks over segments: races are only possible between events of different execution
contexts (``tasks.py``) that no chain of synchronisation orders. A *segment* is a maximal run of
one context's events with no synchronisation in between, so all its events share one clock. Clock
entries are *chains* (totally ordered sequences of segments), not contexts: a task that starts
after an ended context's last segment reuses that context's chain, so a loop that launches
thousands of ``nowait`` kernels and waits for them keeps as many chains as kernels run at once.

Edges (source release -> destination acquire):
- task creation -> first event of the task;
- ``depend``: the end of the predecessor sibling task -> the start of the successor (in/out/inout
  rules of OpenMP 5; mutexinoutset/inoutset are treated as inout);
- ``taskwait``: the end of each child task created before it -> the taskwait;
- ``taskgroup``: the end of each task created inside it (and their descendants) -> its end;
- barrier: every thread's arrival -> every thread's departure, and each task that ended before its
  creator's thread left it -> the departures;
- parallel fork (SYNC ``parallel begin`` on the encountering thread -> ``implicit task begin`` of each
  thread of the team, when the recorder writes them).
The allocator's reuse of an address is not an ordering (another schedule gets another address);
the race checker keys device bytes by the lifetime of their copy instead.
A deferred target task's own events (entry copies, kernel, exit copies) are in program order in
its context. When the log shows a destination before its source (clock skew between threads), the
source context's current clock is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from quiver.formats import DependKind, EventKind, EventLog
from quiver.formats.jit import kernel
from quiver.replay.nowait.tasks import (
    SYNC_IMPLICIT_TASK_BEGIN,
    SYNC_PARALLEL_BEGIN,
    SYNC_TASKWAIT,
    SYNC_TG_BEGIN,
    SYNC_TG_END,
    TaskModel,
    build_task_model,
    lookup,
    pack,
)
from quiver.replay.threads.omp_order import barrier_groups, rows_by_instance, thread_edges
from quiver.replay.threads.omp_order import dependence_edges as _dependence_edges


@kernel
def _vector_clocks(ctx, n_ctx, task_ctx, last_row, release, acq_dst, acq_src):
    n = len(ctx)
    m = len(acq_dst)
    n_release = 0
    for r in range(n):
        if release[r]:
            n_release += 1
    cap_s = n_ctx + n_release + m + 1
    cap_c = 8
    vc = np.zeros((cap_s, cap_c), dtype=np.int32)
    seg = np.empty(n, dtype=np.int32)
    seg_chain = np.empty(cap_s, dtype=np.int32)
    seg_idx = np.empty(cap_s, dtype=np.int32)
    seg_ctx = np.empty(cap_s, dtype=np.int32)
    seg_first = np.empty(cap_s, dtype=np.int64)
    cur = np.full(n_ctx, -1, dtype=np.int64)
    fresh = np.ones(n_ctx, dtype=np.bool_)
    ctx_chain = np.full(n_ctx, -1, dtype=np.int64)
    chain_len = np.zeros(n_ctx + 1, dtype=np.int32)
    chain_free = np.zeros(n_ctx + 1, dtype=np.bool_)
    n_chains = 0
    ns = 0
    k = 0
    for r in range(n):
        x = ctx[r]
        has_acq = k < m and acq_dst[k] == r
        if fresh[x] or has_acq:
            s = ns
            ns += 1
            if cur[x] >= 0:
                for c in range(n_chains):
                    vc[s, c] = vc[cur[x], c]
            while k < m and acq_dst[k] == r:
                src = acq_src[k]
                ss = seg[src] if src < r else cur[ctx[src]]
                if ss >= 0 and ss != s:
                    for c in range(n_chains):
                        vc[s, c] = max(vc[s, c], vc[ss, c])
                k += 1
            c = ctx_chain[x]
            if c < 0:
                if task_ctx[x]:
                    for cc in range(n_chains):
                        if chain_free[cc] and chain_len[cc] <= vc[s, cc]:
                            c = cc
                            break
                if c < 0:
                    if n_chains == cap_c:
                        grown = np.zeros((cap_s, cap_c * 2), dtype=np.int32)
                        grown[:, :cap_c] = vc
                        vc = grown
                        cap_c *= 2
                    c = n_chains
                    n_chains += 1
                chain_free[c] = False
                ctx_chain[x] = c
            chain_len[c] += 1
            vc[s, c] = chain_len[c]
            seg_chain[s] = c
            seg_idx[s] = chain_len[c]
            seg_ctx[s] = x
            seg_first[s] = r
            cur[x] = s
            fresh[x] = False
        seg[r] = cur[x]
        if release[r]:
            fresh[x] = True
        if r == last_row[x] and task_ctx[x]:
            chain_free[ctx_chain[x]] = True
    return seg, vc[:ns, :max(n_chains, 1)].copy(), seg_chain[:ns].copy(), seg_idx[:ns].copy(), \
        seg_ctx[:ns].copy(), seg_first[:ns].copy()


@kernel
def _taskgroups(rows_kind, rows_ctx, rows_task, n_ctx, n_tasks, n_threads):
    """Innermost taskgroup of each task and the end row of each group (events in row order)."""
    n = len(rows_kind)
    top = np.full(n_ctx, -1, dtype=np.int64)
    inherited = np.full(n_ctx, -1, dtype=np.int64)
    parent = np.full(n + 1, -1, dtype=np.int64)
    end_idx = np.full(n + 1, -1, dtype=np.int64)
    task_group = np.full(max(n_tasks, 1), -1, dtype=np.int64)
    ng = 0
    for i in range(n):
        x = rows_ctx[i]
        if rows_kind[i] == 0:        # task creation
            t = rows_task[i]
            g = top[x] if top[x] >= 0 else inherited[x]
            task_group[t] = g
            inherited[n_threads + t] = g
        elif rows_kind[i] == 1:      # taskgroup begin
            parent[ng] = top[x]
            top[x] = ng
            ng += 1
        elif top[x] >= 0:            # taskgroup end
            end_idx[top[x]] = i
            top[x] = parent[top[x]]
    return task_group, end_idx[:ng]


@dataclass(frozen=True)
class HappensBefore:
    """Segments and their vector clocks; ``ordered(a, b)``: segment a happens before segment b."""

    tasks: TaskModel
    seg: np.ndarray          # segment of each row
    vc: np.ndarray           # (segments, chains) int32
    seg_chain: np.ndarray
    seg_idx: np.ndarray      # position of the segment in its chain (1-based)
    seg_ctx: np.ndarray
    seg_first: np.ndarray    # first row of the segment
    edges_src: np.ndarray    # the synchronisation edges used (rows), for explanations
    edges_dst: np.ndarray

    @property
    def n_segments(self) -> int:
        return len(self.seg_chain)

    def before(self, a: int, b: int) -> bool:
        """Segment ``a`` happens before (or is) segment ``b``."""
        return a == b or int(self.vc[b, self.seg_chain[a]]) >= int(self.seg_idx[a])



def task_end_rows(tm: TaskModel, cols: dict[str, np.ndarray]) -> np.ndarray:
    """The row at which each task is complete (deferred: its context's last row)."""
    end = tm.task_end_row.copy()
    deferred_ctx = tm.n_threads + np.arange(tm.n_tasks)
    last = tm.last_row[deferred_ctx]
    end = np.where(tm.task_deferred & (last >= 0), last, end)
    # undeferred without TASK_END: its construct's end, else its creation
    missing = end < 0
    if missing.any():
        cons = tm.task_construct[missing]
        end[missing] = tm.task_create_row[missing]
        kinds = cols["kind"]
        cend = np.flatnonzero(kinds == int(EventKind.CONSTRUCT_END))
        if len(cons) and len(cend):
            keys = pack(cols["rank"][cend], cols["id"][cend])
            ckeys = tm.constructs.keys
            has = cons >= 0
            want = ckeys[cons[has]]
            order = np.argsort(keys, kind="stable")
            pos = np.searchsorted(keys[order], want, side="right") - 1
            hit = (pos >= 0) & (keys[order][np.maximum(pos, 0)] == want)
            sub = end[missing]
            idx = np.flatnonzero(has)
            sub[idx[hit]] = cend[order[pos[hit]]]
            end[missing] = sub
    return end


def _start_rows(tm: TaskModel, dep: np.ndarray, dtask: np.ndarray) -> np.ndarray:
    """Where each task waits for its dependences: its first row, or (undeferred) its creator's next row
    after its creation and its depend rows ``dep`` (of tasks ``dtask``), which the runtime records before
    the creator waits (`target update ... depend(...)` without nowait)."""
    first = tm.first_row[tm.n_threads + np.arange(tm.n_tasks)]
    start = np.where(tm.task_deferred, first, -1)
    last = tm.task_create_row.copy()
    np.maximum.at(last, dtask, dep)
    und = ~tm.task_deferred & (last >= 0) & (tm.task_creator_ctx >= 0)
    if und.any():
        start[und] = tm.next_row_in_ctx(tm.task_creator_ctx[und], last[und])
    return start


def build_happens_before(log: EventLog, cols: dict[str, np.ndarray] | None = None,
                         tasks: TaskModel | None = None) -> HappensBefore:
    if cols is None:
        cols = {c: log.col(c) for c in ("kind", "rank", "thread", "device", "id", "id2", "op", "aux", "aux2",
                                        "addr", "addr2", "size")}
    tm = tasks if tasks is not None else build_task_model(log, cols)
    kind, rank = cols["kind"], cols["rank"]
    ctx = tm.ctx
    n = len(kind)
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []
    nt = tm.n_tasks
    tidx = np.arange(nt)
    end = task_end_rows(tm, cols)
    deferred_with_rows = tm.task_deferred & (tm.first_row[tm.n_threads + tidx] >= 0)

    # task creation
    sel = deferred_with_rows & (tm.task_create_row >= 0)
    src.append(tm.task_create_row[sel])
    dst.append(tm.first_row[tm.n_threads + tidx[sel]])

    # depend
    dep = np.flatnonzero(kind == int(EventKind.TASK_DEPEND))
    if len(dep):
        dtask = lookup(tm.task_key, pack(rank[dep], np.maximum(cols["id"][dep], 0)), cols["id"][dep] >= 0)
        ok = dtask >= 0
        dep, dtask = dep[ok], dtask[ok]
        scope = np.where(tm.task_creator_ctx[dtask] >= 0, tm.task_creator_ctx[dtask], ctx[dep]).astype(np.int64)
        start = _start_rows(tm, dep, dtask)
        daddr = cols["addr"][dep].astype(np.int64)
        dkind = cols["op"][dep].astype(np.int64)
        dkind = np.where(dkind == int(DependKind.IN), 1, 2)
        order = np.lexsort((dep, daddr, scope))
        pred, succ = _dependence_edges(scope, daddr, dkind, dtask, order)
        ok = (end[pred] >= 0) & (start[succ] >= 0)
        src.append(end[pred[ok]])
        dst.append(start[succ[ok]])

    sync = np.flatnonzero((kind == int(EventKind.SYNC)) & (cols["device"] < 0))
    sop = cols["op"][sync]

    # taskwait: each deferred child joins the first taskwait of its creator after its creation
    tw = sync[sop == SYNC_TASKWAIT]
    if len(tw):
        n1 = n + 1
        twkey = np.sort(ctx[tw].astype(np.int64) * n1 + tw)
        sel = deferred_with_rows & (tm.task_create_row >= 0) & (tm.task_creator_ctx >= 0)
        q = tm.task_creator_ctx[sel].astype(np.int64) * n1 + tm.task_create_row[sel]
        pos = np.searchsorted(twkey, q)
        hit = pos < len(twkey)
        hit[hit] &= twkey[pos[hit]] // n1 == tm.task_creator_ctx[sel][hit]
        src.append(end[sel][hit])
        dst.append(twkey[pos[hit]] % n1)

    # taskgroup
    tg = sync[(sop == SYNC_TG_BEGIN) | (sop == SYNC_TG_END)]
    if len(tg):
        cr = np.flatnonzero(deferred_with_rows & (tm.task_create_row >= 0))
        rows = np.concatenate([tm.task_create_row[cr], tg])
        rk = np.concatenate([np.zeros(len(cr), np.int64), np.where(cols["op"][tg] == SYNC_TG_BEGIN, 1, 2)])
        rt = np.concatenate([cr, np.full(len(tg), -1)]).astype(np.int64)
        o = np.argsort(rows, kind="stable")
        rows, rk, rt = rows[o], rk[o], rt[o]
        task_group, end_idx = _taskgroups(rk, ctx[rows].astype(np.int64), rt, tm.n_ctx, nt, tm.n_threads)
        g = task_group[cr]
        ok = (g >= 0)
        ok[ok] &= end_idx[g[ok]] >= 0
        src.append(end[cr[ok]])
        dst.append(rows[end_idx[g[ok]]])

    # barriers and the fork of parallel regions
    bs, bd = _task_barrier_joins(tm, cols, end, deferred_with_rows)
    src.append(bs)
    dst.append(bd)
    fork = sync[sop == SYNC_PARALLEL_BEGIN]
    team = sync[sop == SYNC_IMPLICIT_TASK_BEGIN]
    if len(fork) and len(team):
        keys = pack(rank[fork], cols["id"][fork])
        ko = np.argsort(keys, kind="stable")
        hit = lookup(keys[ko], pack(rank[team], cols["id"][team]), cols["id"][team] >= 0)
        ok = hit >= 0
        src.append(fork[ko][hit[ok]])
        dst.append(team[ok])

    # join, barriers (every arrival -> every departure), mutexes (locks, critical, ordered) and the rest of
    # the host threads' OpenMP ordering: the one derivation the RMA checker uses too (edges already added
    # above are repeated, harmlessly)
    ts, td = thread_edges(cols)
    src.append(ts)
    dst.append(td)

    s = np.concatenate(src).astype(np.int64) if src else np.zeros(0, np.int64)
    d = np.concatenate(dst).astype(np.int64) if dst else np.zeros(0, np.int64)
    keep = (s >= 0) & (d >= 0) & (s != d)
    s, d = s[keep], d[keep]
    o = np.lexsort((s, d))
    s, d = s[o], d[o]
    release = np.zeros(n, dtype=bool)
    release[s] = True
    seg, vc, seg_chain, seg_idx, seg_ctx, seg_first = _vector_clocks(
        ctx, tm.n_ctx, np.r_[np.zeros(tm.n_threads, bool), tm.task_deferred], tm.last_row, release, d, s)
    return HappensBefore(tasks=tm, seg=seg, vc=vc, seg_chain=seg_chain, seg_idx=seg_idx, seg_ctx=seg_ctx,
                         seg_first=seg_first, edges_src=s, edges_dst=d)


def _task_barrier_joins(tm: TaskModel, cols: dict[str, np.ndarray], end: np.ndarray,
                        deferred_with_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A deferred task joins the first barrier its creator's thread leaves after the task ended:
    task end -> every departure of that barrier instance (arrivals -> departures are ``thread_edges``')."""
    d_rows, d_inst = barrier_groups(cols)
    sel = np.flatnonzero(deferred_with_rows & (end >= 0) & (tm.task_creator_ctx >= 0))
    if len(sel) == 0 or len(d_rows) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    d_sorted, d_start = rows_by_instance(d_inst, d_rows)
    nd = np.diff(d_start)
    n1 = len(cols["kind"]) + 1
    dkey = tm.thread_of_row[d_rows].astype(np.int64) * n1 + d_rows
    dko = np.argsort(dkey)
    creator_thread = tm.thread_of_row[tm.task_create_row[sel]].astype(np.int64)
    pos = np.searchsorted(dkey[dko], creator_thread * n1 + end[sel])
    hit = pos < len(dko)
    hit[hit] &= dkey[dko][pos[hit]] // n1 == creator_thread[hit]
    t_hit, i_hit = sel[hit], d_inst[dko[pos[hit]]]
    reps = nd[i_hit]
    offs = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    s_t = np.repeat(end[t_hit], reps)
    d_p = d_sorted[np.repeat(d_start[i_hit], reps) + offs]
    later = d_p > s_t
    return s_t[later], d_p[later]
