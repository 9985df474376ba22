"""Execution contexts: which host thread, explicit task or deferred target task ran each event.

Why: happens-before (``happens_before.py``) orders contexts, and the schedule checker moves the
deferred target tasks (the asynchronous units of ``nowait`` constructs) around the host's events.
The tracer runs a ``nowait`` region on a hidden-helper thread inside its target task, so events are
attributed by ids (target task id, construct id) rather than by thread alone:

- TASK_BEGIN / TASK_END of a deferred task, and the construct events (CONSTRUCT_*, MAP_CLAUSE,
  DATA_OP, KERNEL, device-side ACCESS / SYNC) of a construct whose target task is deferred, belong
  to that task (when they come after its TASK_CREATE);
- device-side events of a synchronous construct belong to the context that began the construct
  (worker threads of a kernel's parallel region included);
- anything else belongs to the task running on its thread (TASK_BEGIN pushes, TASK_END pops), or to
  the thread's implicit task.

Context numbers: ``[0, n_threads)`` are the threads' implicit tasks, ``n_threads + i`` is task ``i``
of the task table (deferred tasks only; undeferred tasks run in their creator's context).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from quiver.formats import ConstructFlag, EventKind, EventLog, SyncKind, TaskFlag
from quiver.formats.jit import kernel
from quiver.formats.sets import sorted_unique
from quiver.replay.log_scan import has_async_target_work  # noqa: F401 -- re-exported: races, schedules

K_TASK_BEGIN = int(EventKind.TASK_BEGIN)
K_TASK_END = int(EventKind.TASK_END)
_ID_BITS = 40  # (rank, id) pairs are packed as rank << 40 | id


def pack(rank: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """One int64 key per (rank, id); ids must be >= 0."""
    return (rank.astype(np.int64) << _ID_BITS) | (ids.astype(np.int64) & ((1 << _ID_BITS) - 1))


def lookup(sorted_keys: np.ndarray, keys: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Index of each valid key in ``sorted_keys`` (-1 when absent or not valid)."""
    out = np.full(len(keys), -1, dtype=np.int64)
    if len(sorted_keys) == 0 or not valid.any():
        return out
    k = keys[valid]
    pos = np.minimum(np.searchsorted(sorted_keys, k), len(sorted_keys) - 1)
    found = sorted_keys[pos] == k
    sub = np.full(len(k), -1, dtype=np.int64)
    sub[found] = pos[found]
    out[valid] = sub
    return out


@kernel
def _assign_contexts(kind, thread_ctx, assoc_task, assoc_row, task_create_row, n_threads, n_tasks):
    n = len(kind)
    ctx = np.empty(n, dtype=np.int32)
    top = np.full(n_threads, -1, dtype=np.int64)     # task running on each thread
    below = np.full(max(n_tasks, 1), -1, dtype=np.int64)
    for r in range(n):
        t = assoc_task[r]
        th = thread_ctx[r]
        if t >= 0 and r > task_create_row[t]:
            ctx[r] = n_threads + t
            if kind[r] == K_TASK_BEGIN:
                below[t] = top[th]
                top[th] = t
            elif kind[r] == K_TASK_END and top[th] == t:
                top[th] = below[t]
            continue
        a = assoc_row[r]
        if a >= 0 and a < r:
            ctx[r] = ctx[a]
        elif top[th] >= 0:
            ctx[r] = n_threads + top[th]
        else:
            ctx[r] = th
    return ctx


@dataclass(frozen=True)
class Constructs:
    """CONSTRUCT_BEGIN events by construct: index ``i`` for key ``keys[i]`` = (rank, construct id)."""

    keys: np.ndarray         # sorted packed (rank, id)
    row: np.ndarray          # CONSTRUCT_BEGIN row
    kind: np.ndarray         # ConstructKind
    nowait: np.ndarray       # bool
    task: np.ndarray         # target task key index into the task table, -1
    loc: np.ndarray
    device: np.ndarray


@dataclass(frozen=True)
class TaskModel:
    """Execution context of every event, plus the task table the orderings are built from."""

    ctx: np.ndarray              # int32 per row
    n_threads: int
    thread_of_row: np.ndarray    # thread context of the row's thread (whatever task runs there)
    task_key: np.ndarray         # sorted packed (rank, task id); task i
    task_flags: np.ndarray       # TaskFlag bits (-1: no TASK_CREATE seen)
    task_deferred: np.ndarray    # bool: runs in its own context
    task_target: np.ndarray      # bool: a deferred target task (an asynchronous unit)
    task_create_row: np.ndarray  # TASK_CREATE row, -1
    task_creator_ctx: np.ndarray  # context that created it, -1
    task_construct: np.ndarray   # index into ``constructs`` of its construct, -1
    task_end_row: np.ndarray     # TASK_END row, -1
    first_row: np.ndarray        # per context: first / last row, -1 when it has no rows
    last_row: np.ndarray
    constructs: Constructs

    @property
    def n_tasks(self) -> int:
        return len(self.task_key)

    @property
    def n_ctx(self) -> int:
        return self.n_threads + self.n_tasks

    @cached_property
    def target_ctx(self) -> np.ndarray:
        """bool per context: the context is an asynchronous target task."""
        out = np.zeros(self.n_ctx, dtype=bool)
        out[self.n_threads:] = self.task_target & (self.first_row[self.n_threads:] >= 0)
        return out

    @cached_property
    def _ctx_rows(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.lexsort((np.arange(len(self.ctx)), self.ctx))
        combined = self.ctx[order].astype(np.int64) * (len(self.ctx) + 1) + order
        return combined, order

    def next_row_in_ctx(self, ctxs: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """First row > ``rows`` that runs in ``ctxs`` (-1 when none)."""
        combined, order = self._ctx_rows
        n1 = len(self.ctx) + 1
        q = ctxs.astype(np.int64) * n1 + rows.astype(np.int64) + 1
        pos = np.searchsorted(combined, q)
        out = np.full(len(q), -1, dtype=np.int64)
        ok = pos < len(combined)
        ok[ok] &= combined[pos[ok]] // n1 == ctxs[ok]
        out[ok] = order[pos[ok]]
        return out

    def task_of_ctx(self, ctx: int) -> int:
        return ctx - self.n_threads if ctx >= self.n_threads else -1


def _constructs(cols: dict[str, np.ndarray], task_keys: np.ndarray) -> Constructs:
    rows = np.flatnonzero(cols["kind"] == int(EventKind.CONSTRUCT_BEGIN))
    keys = pack(cols["rank"][rows], cols["id"][rows])
    keys, first = np.unique(keys, return_index=True)
    rows = rows[first]
    id2 = cols["id2"][rows]
    task = lookup(task_keys, pack(cols["rank"][rows], np.maximum(id2, 0)), id2 >= 0)
    return Constructs(keys=keys, row=rows, kind=cols["op"][rows].astype(np.int32),
                      nowait=(cols["aux"][rows] & int(ConstructFlag.NOWAIT)) != 0, task=task,
                      loc=cols["loc"][rows].astype(np.int32), device=cols["device"][rows].astype(np.int32))


def build_task_model(log: EventLog, cols: dict[str, np.ndarray] | None = None) -> TaskModel:
    """Attribute every event of ``log`` to an execution context (vectorised + one numba pass)."""
    if cols is None:
        cols = {c: log.col(c) for c in ("kind", "rank", "thread", "device", "id", "id2", "op", "aux")}
    kind, rank, id_, id2 = cols["kind"], cols["rank"], cols["id"], cols["id2"]
    n = len(kind)

    thread_keys, thread_of_row = np.unique(pack(rank, cols["thread"]), return_inverse=True)
    n_threads = len(thread_keys)
    thread_of_row = thread_of_row.astype(np.int32)

    # the task table: every task created, plus target tasks only known from their constructs
    create = np.flatnonzero(kind == int(EventKind.TASK_CREATE))
    nowait_begin = (kind == int(EventKind.CONSTRUCT_BEGIN)) & ((cols["aux"] & int(ConstructFlag.NOWAIT)) != 0) \
        & (id2 >= 0)
    keyed = np.concatenate([pack(rank[create], id_[create]), pack(rank[nowait_begin], id2[nowait_begin])])
    task_key = sorted_unique(keyed)
    n_tasks = len(task_key)
    create_keys, first_create = np.unique(pack(rank[create], id_[create]), return_index=True)
    create = create[first_create]
    ti = np.searchsorted(task_key, create_keys)
    task_flags = np.full(n_tasks, -1, dtype=np.int32)
    task_flags[ti] = cols["op"][create]
    task_create_row = np.full(n_tasks, -1, dtype=np.int64)
    task_create_row[ti] = create

    constructs = _constructs(cols, task_key)
    nowait_task = constructs.task[constructs.nowait & (constructs.task >= 0)]
    never_deferred = int(TaskFlag.UNDEFERRED) | int(TaskFlag.INITIAL) | int(TaskFlag.IMPLICIT)
    task_deferred = (task_flags >= 0) & ((task_flags & never_deferred) == 0)
    task_deferred[nowait_task] = True
    task_target = np.zeros(n_tasks, dtype=bool)
    task_target[(task_flags >= 0) & ((task_flags & int(TaskFlag.TARGET)) != 0)] = True
    task_target[nowait_task] = True
    task_target &= task_deferred
    task_construct = np.full(n_tasks, -1, dtype=np.int64)
    has_task = constructs.task >= 0
    task_construct[constructs.task[has_task]] = np.flatnonzero(has_task)

    # which task (if deferred) each row belongs to by its ids
    is_construct_row = np.isin(kind, [int(EventKind.CONSTRUCT_BEGIN), int(EventKind.CONSTRUCT_END),
                                      int(EventKind.DATA_OP), int(EventKind.KERNEL)])
    device_side = (np.isin(kind, [int(EventKind.ACCESS), int(EventKind.SYNC)]) & (cols["device"] >= 0))
    construct_id = np.where(kind == int(EventKind.SYNC), cols["aux"], id_)
    by_construct = is_construct_row | device_side | (kind == int(EventKind.MAP_CLAUSE))
    cidx = lookup(constructs.keys, pack(rank, np.maximum(construct_id, 0)), by_construct & (construct_id >= 0))
    task_of_row = np.r_[constructs.task, -1][cidx]      # cidx -1 reads the appended -1
    direct = is_construct_row & (id2 >= 0)
    task_of_row[direct] = lookup(task_key, pack(rank[direct], id2[direct]), np.ones(int(direct.sum()), bool))
    sched = np.isin(kind, [K_TASK_BEGIN, K_TASK_END])
    task_of_row[sched] = lookup(task_key, pack(rank[sched], np.maximum(id_[sched], 0)), id_[sched] >= 0)
    deferred_or_none = np.r_[task_deferred, False]     # index -1 (no task) reads the appended False
    assoc_task = np.where(deferred_or_none[task_of_row], task_of_row, -1)
    assoc_row = np.full(n, -1, dtype=np.int64)
    sync_side = device_side & (cidx >= 0) & (assoc_task < 0)
    assoc_row[sync_side] = constructs.row[cidx[sync_side]]

    ctx = _assign_contexts(kind.astype(np.int32), thread_of_row, assoc_task.astype(np.int64), assoc_row,
                           task_create_row, n_threads, n_tasks)

    n_ctx = n_threads + n_tasks
    rows = np.arange(n, dtype=np.int64)
    first_row = np.full(n_ctx, n, dtype=np.int64)
    np.minimum.at(first_row, ctx, rows)
    first_row[first_row == n] = -1
    last_row = np.full(n_ctx, -1, dtype=np.int64)
    np.maximum.at(last_row, ctx, rows)
    task_creator_ctx = np.where(task_create_row >= 0, ctx[np.maximum(task_create_row, 0)], -1).astype(np.int32)
    ends = np.flatnonzero(kind == K_TASK_END)
    end_task = lookup(task_key, pack(rank[ends], np.maximum(id_[ends], 0)), id_[ends] >= 0)
    task_end_row = np.full(n_tasks, -1, dtype=np.int64)
    ok = end_task >= 0
    np.maximum.at(task_end_row, end_task[ok], ends[ok])

    return TaskModel(
        ctx=ctx, n_threads=n_threads, thread_of_row=thread_of_row,
        task_key=task_key, task_flags=task_flags, task_deferred=task_deferred, task_target=task_target,
        task_create_row=task_create_row, task_creator_ctx=task_creator_ctx, task_construct=task_construct,
        task_end_row=task_end_row, first_row=first_row, last_row=last_row, constructs=constructs,
    )


SYNC_TASKWAIT = int(SyncKind.TASKWAIT)
SYNC_TG_BEGIN = int(SyncKind.TASKGROUP_BEGIN)
SYNC_TG_END = int(SyncKind.TASKGROUP_END)
SYNC_PARALLEL_BEGIN = int(SyncKind.PARALLEL_BEGIN)
SYNC_IMPLICIT_TASK_BEGIN = int(SyncKind.IMPLICIT_TASK_BEGIN)
