"""Cheap projected scans that tell whether a checker has anything to do in a log.

Apart from the checkers so that `trace analyze` can skip one without importing it: the race,
schedule and RMA checkers' modules and their set-up would dominate the analysis of a small
plain-offloading log that has nothing for them (on a large log, numba's start-up, ~0.6 s).
"""

from __future__ import annotations

import numpy as np
from quiver.formats import ConstructFlag, EventKind, EventLog, SyncKind, TaskFlag

RMA_KINDS = (EventKind.RMA,)


def has_async_target_work(log: EventLog) -> bool:
    """Whether the log holds any `nowait` construct or deferred target task (a cheap projected scan).

    Logs without one (plain offloading, MPI-only runs) have nothing for the race and schedule
    checkers, which would otherwise load every column of the log.
    """
    nowait, target_task, undeferred = int(ConstructFlag.NOWAIT), int(TaskFlag.TARGET), int(TaskFlag.UNDEFERRED)
    for batch in log.batches(["kind", "op", "aux"]):
        kind = batch["kind"]
        begins = kind == int(EventKind.CONSTRUCT_BEGIN)
        if np.any(begins & ((batch["aux"] & nowait) != 0)):
            return True
        creates = kind == int(EventKind.TASK_CREATE)
        if np.any(creates & ((batch["op"] & target_task) != 0) & ((batch["op"] & undeferred) == 0)):
            return True
    return False


def has_rma(log: EventLog) -> bool:
    """Whether the log holds an RMA call: a scan of the ``kind`` column alone, batch by batch, so a log
    without one (plain offloading) is never loaded whole."""
    wanted = np.array([int(k) for k in RMA_KINDS], dtype=np.int16)
    return any(np.isin(b["kind"], wanted).any() for b in log.batches(["kind"]))


def has_target_race_work(log: EventLog) -> bool:
    """Whether the race checker has work: `nowait` target tasks, or target constructs in a log whose
    host threads forked a parallel region (a target region of one thread may race with another)."""
    if has_async_target_work(log):
        return True
    construct = fork = False
    begin, fork_op = int(EventKind.CONSTRUCT_BEGIN), int(SyncKind.PARALLEL_BEGIN)
    for batch in log.batches(["kind", "op", "device"]):
        kind = batch["kind"]
        construct = construct or bool(np.any(kind == begin))
        # a host thread's fork (a kernel's own parallel region is device-side)
        fork = fork or bool(np.any((kind == int(EventKind.SYNC)) & (batch["op"] == fork_op) & (batch["device"] < 0)))
        if construct and fork:
            return True
    return False
