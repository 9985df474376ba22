"""OpenMP ordering between the host threads of one process, as (source row, destination row) edges.

Why one module: every checker that asks "is this thread's access ordered with that thread's?"
(the MPI-RMA checker for hybrid ranks, the ``nowait`` checker for host threads) needs the same
edges from the same SYNC / TASK events (formats/FORMAT.md), so they are derived once, here.
An edge ``s -> d`` means: everything the context of row ``s`` did up to it happens before
everything ``d``'s context does from row ``d`` on. Contexts are host threads' implicit tasks and
deferred explicit tasks (``quiver.replay.nowait.tasks``); the consumer drops edges inside one
context.

Edges:
- fork: ``parallel begin`` -> each ``implicit task begin`` of the region;
- join: every barrier arrival in the region -> its ``parallel end`` on the encountering thread;
- barrier: every arrival -> every departure of the same instance (the k-th arrival of each thread
  at the barriers of a region belongs to instance k; a thread without departure rows, as in
  LogBuilder logs, uses each barrier row as both);
- mutex (lock, ``critical``, ``ordered``, lock-based ``atomic``): the release that follows the
  k-th acquisition of a mutex -> the (k+1)-th acquisition;
- explicit tasks: creation -> the task's first event; ``depend``: the end of a predecessor sibling
  -> the start of its successor (in/out/inout of OpenMP 5; mutexinoutset/inoutset as inout); the
  task's end -> the next ``taskwait`` and the next ``taskgroup`` end of its creating thread, and
  that thread's next barrier departure.
- atomics (``atomic_edges``): a release write of an address -> each later acquire read of it (the
  last such write before the read); ``seq_cst``/``release``/``acquire`` atomics by their ordering,
  relaxed ones when a ``flush`` of their thread is next to them (before a write, after a read).
``flush``, worksharing begin/end and ``masked`` order nothing on their own.
"""

from __future__ import annotations

import numpy as np
from quiver.formats import DependKind, EventKind, SyncKind, TaskFlag
from quiver.formats.jit import kernel

# SYNC ops that are points in a thread's order (cuts): every one of them may start or end an edge
ORDERING_SYNC = (SyncKind.TASKWAIT, SyncKind.BARRIER, SyncKind.TASKGROUP_BEGIN, SyncKind.TASKGROUP_END,
                 SyncKind.PARALLEL_BEGIN, SyncKind.IMPLICIT_TASK_BEGIN, SyncKind.PARALLEL_END,
                 SyncKind.MUTEX_ACQUIRED, SyncKind.MUTEX_RELEASED, SyncKind.ATOMIC_WRITE, SyncKind.ATOMIC_READ)
TASK_KINDS = (EventKind.TASK_CREATE, EventKind.TASK_BEGIN, EventKind.TASK_END)


def ordering_rows(cols: dict[str, np.ndarray]) -> np.ndarray:
    """Mask of the host-side rows that can start or end a thread edge."""
    kind, op = cols["kind"], cols["op"]
    host = cols["device"] < 0
    sync = (kind == EventKind.SYNC) & np.isin(op, np.array([int(s) for s in ORDERING_SYNC], dtype=op.dtype))
    task = np.isin(kind, np.array([int(k) for k in TASK_KINDS], dtype=kind.dtype))
    return host & (sync | task)


def _pack(*parts: np.ndarray) -> np.ndarray:
    """Dense keys of several integer columns (rows equal in every column get the same key)."""
    if len(parts[0]) == 0:
        return np.zeros(0, dtype=np.int64)
    code = np.zeros(len(parts[0]), dtype=np.int64)
    for p in parts:
        uniq, inv = np.unique(np.asarray(p, dtype=np.int64), return_inverse=True)
        code = code * len(uniq) + inv.reshape(-1)
        if int(code.max()) > (1 << 40):
            code = np.unique(code, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return np.unique(code, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _occurrence(groups: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """k for the k-th row (in row order) of its group."""
    o = np.lexsort((rows, groups))
    g = groups[o]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.zeros(0, np.int64)
    occ = np.empty(len(rows), dtype=np.int64)
    occ[o] = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
    return occ


def _next_on_thread(ev_thread: np.ndarray, ev_rows: np.ndarray, q_thread: np.ndarray,
                    q_rows: np.ndarray, before: bool = False) -> np.ndarray:
    """Per query: the first event row of the same key (a thread, or any group) after the query row
    (``before``: the last one before it), else -1."""
    out = np.full(len(q_rows), -1, dtype=np.int64)
    if len(ev_rows) == 0 or len(q_rows) == 0:
        return out
    n1 = int(max(ev_rows.max(), q_rows.max())) + 2
    key = np.sort(ev_thread.astype(np.int64) * n1 + ev_rows)
    pos = np.searchsorted(key, q_thread.astype(np.int64) * n1 + q_rows, side="left" if before else "right")
    if before:
        pos = pos - 1
    ok = (pos >= 0) & (pos < len(key))
    ok[ok] &= key[pos[ok]] // n1 == q_thread[ok]
    out[ok] = key[pos[ok]] % n1
    return out


def rows_by_instance(inst: np.ndarray, rows: np.ndarray, n_inst: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` grouped by instance key: (the rows ordered by key, stably; offsets ``start`` with the
    rows of instance i at ``[start[i], start[i + 1])``)."""
    o = np.argsort(inst, kind="stable")
    n = int(inst.max()) + 1 if n_inst is None else n_inst
    return rows[o], np.searchsorted(inst[o], np.arange(n + 1))


# LLVM AtomicOrdering (SYNC ATOMIC_* ``aux2``): which atomic writes release and which reads acquire
_RELEASE_ORDERS = (5, 6, 7)    # release, acq_rel, seq_cst
_ACQUIRE_ORDERS = (4, 6, 7)    # acquire, acq_rel, seq_cst


def atomic_edges(cols: dict[str, np.ndarray], sync: np.ndarray, tkey: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Release write -> acquire read of one address by the rank's threads (OpenMP 5.2 flush-sync):
    each acquire read is ordered after the last release write to its address before it in the log
    (the write it read from, as far as the run shows). A relaxed write releases when its thread's
    previous SYNC row is a ``flush``, a relaxed read acquires when its thread's next one is."""
    op, rank = cols["op"], cols["rank"].astype(np.int64)
    w = np.flatnonzero(sync & (op == int(SyncKind.ATOMIC_WRITE)))
    r = np.flatnonzero(sync & (op == int(SyncKind.ATOMIC_READ)))
    if len(w) == 0 or len(r) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = cols["aux2"].astype(np.int64)
    rows = np.flatnonzero(sync)
    is_flush = op == int(SyncKind.FLUSH)
    prev = _next_on_thread(tkey[rows], rows, tkey[w], w, before=True)
    nxt = _next_on_thread(tkey[rows], rows, tkey[r], r)
    w = w[np.isin(order[w], _RELEASE_ORDERS) | ((prev >= 0) & is_flush[np.maximum(prev, 0)])]
    r = r[np.isin(order[r], _ACQUIRE_ORDERS) | ((nxt >= 0) & is_flush[np.maximum(nxt, 0)])]
    if len(w) == 0 or len(r) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    addr = cols["addr"].astype(np.int64)
    k = _pack(np.r_[rank[w], rank[r]], np.r_[addr[w], addr[r]])
    src = _next_on_thread(k[:len(w)], w, k[len(w):], r, before=True)
    ok = src >= 0
    return src[ok], r[ok]


def instance_pairs(a_inst: np.ndarray, a_rows: np.ndarray, d_inst: np.ndarray, d_rows: np.ndarray):
    """Every (a, d) row pair with the same instance key."""
    if len(a_rows) == 0 or len(d_rows) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    n_inst = int(max(a_inst.max(), d_inst.max())) + 1
    a_sorted, a_start = rows_by_instance(a_inst, a_rows, n_inst)
    d_sorted, d_start = rows_by_instance(d_inst, d_rows, n_inst)
    na, nd = np.diff(a_start), np.diff(d_start)
    per = na * nd
    inst = np.repeat(np.arange(n_inst), per)
    k = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    src = a_sorted[a_start[inst] + k // np.maximum(nd[inst], 1)]
    dst = d_sorted[d_start[inst] + k % np.maximum(nd[inst], 1)]
    return src, dst


@kernel
def dependence_edges(scope, addr, kind, task, order):
    """Predecessor/successor task pairs from depend items visited in (scope, addr, row) order."""
    n = len(order)
    pred = np.empty(n * 4 + 4, dtype=np.int64)
    succ = np.empty(n * 4 + 4, dtype=np.int64)
    ne = 0
    i = 0
    while i < n:
        j = i
        while j < n and scope[order[j]] == scope[order[i]] and addr[order[j]] == addr[order[i]]:
            j += 1
        last_out = -1
        readers_from = i       # readers since last_out are order[readers_from:p] with kind IN
        for p in range(i, j):
            e = order[p]
            t = task[e]
            if last_out >= 0 and last_out != t:   # every item waits for the last out/inout before it
                if ne >= len(pred):
                    pred = np.concatenate((pred, np.empty(len(pred), np.int64)))
                    succ = np.concatenate((succ, np.empty(len(succ), np.int64)))
                pred[ne] = last_out
                succ[ne] = t
                ne += 1
            if kind[e] != 1:   # out / inout (mutexinoutset, inoutset: as inout) also waits for the readers
                for q in range(readers_from, p):
                    rq = order[q]
                    if kind[rq] == 1 and task[rq] != t:
                        if ne >= len(pred):
                            pred = np.concatenate((pred, np.empty(len(pred), np.int64)))
                            succ = np.concatenate((succ, np.empty(len(succ), np.int64)))
                        pred[ne] = task[rq]
                        succ[ne] = t
                        ne += 1
                last_out = t
                readers_from = p + 1
        i = j
    return pred[:ne], succ[:ne]



def _barrier_instances(rank, thread, ident, arrive, depart) -> tuple[np.ndarray, np.ndarray]:
    """Instance keys of arrival and departure rows (consistent between the two)."""
    a_occ = _occurrence(_pack(rank[arrive], thread[arrive], ident[arrive]), arrive)
    d_occ = _occurrence(_pack(rank[depart], thread[depart], ident[depart]), depart)
    inst = _pack(np.r_[rank[arrive], rank[depart]], np.r_[ident[arrive], ident[depart]], np.r_[a_occ, d_occ])
    return inst[:len(arrive)], inst[len(arrive):]


def _barrier_rows(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(arrival rows, departure rows) of host barriers (a thread without departures: each row is both)."""
    kind, op = cols["kind"], cols["op"]
    rank, thread, ident = cols["rank"].astype(np.int64), cols["thread"].astype(np.int64), cols["id"].astype(np.int64)
    bar = np.flatnonzero((cols["device"] < 0) & (kind == EventKind.SYNC) & (op == int(SyncKind.BARRIER)))
    arrive = bar[cols["aux2"][bar] == 0]
    departs = cols["aux2"][bar] == 1
    if len(bar):
        grp = _pack(rank[bar], thread[bar], ident[bar])
        has_dep = np.zeros(int(grp.max()) + 1, bool)
        has_dep[grp[departs]] = True
        departs = departs | ~has_dep[grp]
    return arrive, bar[departs]


def barrier_groups(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(departure rows, instance) of every barrier: a consumer that joins the departures of an
    instance (each thread's departure follows its own arrival) needs no arrival -> departure edges."""
    arrive, depart = _barrier_rows(cols)
    if len(depart) == 0:
        return depart, np.zeros(0, np.int64)
    rank, thread, ident = cols["rank"].astype(np.int64), cols["thread"].astype(np.int64), cols["id"].astype(np.int64)
    _a, d_inst = _barrier_instances(rank, thread, ident, arrive, depart)
    return depart, d_inst


def thread_edges(cols: dict[str, np.ndarray], barriers: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(source rows, destination rows) of every OpenMP edge between host threads (see module doc).

    ``cols`` needs kind, rank, thread, device, op, id, id2, addr, aux2; rows are in log order.
    ``barriers`` False leaves out the arrival -> departure edges (``barrier_groups`` instead).
    """
    kind, op, rank = cols["kind"], cols["op"], cols["rank"].astype(np.int64)
    thread = cols["thread"].astype(np.int64)
    ident = cols["id"].astype(np.int64)
    host = cols["device"] < 0
    tkey = _pack(rank, thread)      # one key per (rank, thread)
    sync = host & (kind == EventKind.SYNC)
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []

    def rows_of(s: SyncKind) -> np.ndarray:
        return np.flatnonzero(sync & (op == int(s)))

    # fork and join
    fork, team, join = rows_of(SyncKind.PARALLEL_BEGIN), rows_of(SyncKind.IMPLICIT_TASK_BEGIN), \
        rows_of(SyncKind.PARALLEL_END)
    arrive, depart = _barrier_rows(cols)
    s, d = instance_pairs(*_two_keys(rank, ident, fork, team))
    src.append(s)
    dst.append(d)
    s, d = instance_pairs(*_two_keys(rank, ident, arrive, join))
    src.append(s)
    dst.append(d)

    # barriers: the k-th arrival of a thread at a region's barriers meets the k-th departures
    if barriers and len(arrive) and len(depart):
        a_inst, d_inst = _barrier_instances(rank, thread, ident, arrive, depart)
        s, d = instance_pairs(a_inst, arrive, d_inst, depart)
        src.append(s)
        dst.append(d)

    # mutexes: acquisitions of one mutex are serialised
    acq, rel = rows_of(SyncKind.MUTEX_ACQUIRED), rows_of(SyncKind.MUTEX_RELEASED)
    if len(acq) > 1 and len(rel):
        m = _pack(np.r_[rank[acq], rank[rel]], np.r_[ident[acq], ident[rel]])
        m_acq, m_rel = m[:len(acq)], m[len(acq):]
        o = np.lexsort((acq, m_acq))
        acq_o, m_o = acq[o], m_acq[o]
        nxt = np.r_[m_o[1:] == m_o[:-1], False]       # acquisition k has a successor k+1
        prev_rows, next_rows = acq_o[nxt], acq_o[np.r_[False, nxt[:-1]]]
        # the release of the same mutex on the acquiring thread after acquisition k
        n_m = int(m.max()) + 1
        release = _next_on_thread(tkey[rel] * n_m + m_rel, rel, tkey[prev_rows] * n_m + m_o[nxt], prev_rows)
        ok = release >= 0
        src.append(release[ok])
        dst.append(next_rows[ok])

    # atomics: release write -> acquire read of the same flag
    s, d = atomic_edges(cols, sync, tkey)
    src.append(s)
    dst.append(d)

    # explicit tasks
    create = np.flatnonzero(host & (kind == EventKind.TASK_CREATE) & ((op & int(TaskFlag.EXPLICIT)) != 0)
                            & ((op & int(TaskFlag.TARGET)) == 0))
    if len(create):
        begin = np.flatnonzero(kind == EventKind.TASK_BEGIN)
        end = np.flatnonzero(kind == EventKind.TASK_END)
        s, d = instance_pairs(*_two_keys(rank, ident, create, _first_per_key(rank, ident, begin)))
        src.append(s)
        dst.append(d)
        # depend: the end of a predecessor sibling -> the start of its successor (OpenMP 5 rules)
        dep = np.flatnonzero(kind == EventKind.TASK_DEPEND)
        if len(dep):
            # one key space for the created tasks, the depend rows and the first begin / end of every task
            # (target tasks' too: packed apart, their keys would not be the created tasks')
            b_rows, e_rows = _first_per_key(rank, ident, begin), _first_per_key(rank, ident, end)
            parts = (create, dep, b_rows, e_rows)
            task_key = _pack(np.concatenate([rank[p] for p in parts]), np.concatenate([ident[p] for p in parts]))
            c_task, d_task, b_task, e_task = np.split(task_key, np.cumsum([len(p) for p in parts])[:-1])
            n_t = int(task_key.max()) + 1
            parent = np.full(n_t, -1, np.int64)
            parent[c_task] = cols["id2"][create]
            first_begin = np.full(n_t, -1, np.int64)
            first_end = np.full(n_t, -1, np.int64)
            first_begin[b_task] = b_rows
            first_end[e_task] = e_rows
            scope = _pack(rank[dep], parent[d_task])
            daddr = cols["addr"][dep].astype(np.int64)
            dkind = np.where(op[dep] == int(DependKind.IN), 1, 2).astype(np.int64)
            order = np.lexsort((dep, daddr, scope))
            pred, succ = dependence_edges(scope, daddr, dkind, d_task, order)
            ok = (first_end[pred] >= 0) & (first_begin[succ] >= 0)
            src.append(first_end[pred[ok]])
            dst.append(first_begin[succ[ok]])
        c_rows, e_rows = instance_pairs(*_two_keys(rank, ident, create, _first_per_key(rank, ident, end)))
        for w in (rows_of(SyncKind.TASKWAIT), rows_of(SyncKind.TASKGROUP_END), depart):
            nxt = _next_on_thread(tkey[w], w, tkey[c_rows], np.maximum(c_rows, e_rows))
            ok = nxt >= 0
            src.append(e_rows[ok])
            dst.append(nxt[ok])

    s = np.concatenate(src).astype(np.int64) if src else np.zeros(0, np.int64)
    d = np.concatenate(dst).astype(np.int64) if dst else np.zeros(0, np.int64)
    keep = (s >= 0) & (d >= 0) & (s != d)
    return s[keep], d[keep]


def _two_keys(rank: np.ndarray, ident: np.ndarray, a: np.ndarray, b: np.ndarray):
    """Instance keys (rank, id) of two row sets, consistent between them, for ``instance_pairs``."""
    k = _pack(np.r_[rank[a], rank[b]], np.r_[ident[a], ident[b]])
    return k[:len(a)], a, k[len(a):], b


def _first_per_key(rank: np.ndarray, ident: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The first row of each (rank, id) among ``rows``."""
    if len(rows) == 0:
        return rows
    k = _pack(rank[rows], ident[rows])
    _, first = np.unique(k, return_index=True)
    return rows[first]
