"""Racing access pairs -> rma-race Findings: both lines, ranks, window, bytes, operations, fix.

Why here: the race search works on integer tables; this module is the only place that turns
them into words (what raced with what, and which synchronisation is missing where).
"""

from __future__ import annotations

import numpy as np
from quiver.formats import EventLog, RmaOp
from quiver.replay.report.findings import Finding, FindingKind, Related, Site
from quiver.replay.rma.access import (
    LOAD,
    MODE_FENCE,
    MODE_LOCK,
    MODE_LOCK_ALL,
    MODE_PSCW,
    ORIGIN_READ,
    ORIGIN_WRITE,
    STORE,
    TARGET_READ,
    TARGET_WRITE,
    Accesses,
    Regions,
)
from quiver.replay.rma.sync import RankOrder

CALL_NAMES = {int(o): "MPI_" + o.name.title().replace("_", "_") for o in RmaOp}
CALL_NAMES.update({int(RmaOp.GET_ACCUMULATE): "MPI_Get_accumulate", int(RmaOp.FETCH_AND_OP): "MPI_Fetch_and_op",
                   int(RmaOp.COMPARE_AND_SWAP): "MPI_Compare_and_swap", int(RmaOp.RGET_ACCUMULATE):
                   "MPI_Rget_accumulate"})
OP_NAMES = {1: "MPI_SUM", 2: "MPI_PROD", 3: "MPI_MAX", 4: "MPI_MIN", 5: "MPI_BAND", 6: "MPI_BOR", 7: "MPI_BXOR",
            8: "MPI_LAND", 9: "MPI_LOR", 10: "MPI_LXOR", 11: "MPI_REPLACE", 12: "MPI_NO_OP", 13: "MPI_MINLOC",
            14: "MPI_MAXLOC", 15: "compare-and-swap", 100: "a user-defined op"}
REQUEST_OPS = (RmaOp.RPUT, RmaOp.RGET, RmaOp.RACCUMULATE, RmaOp.RGET_ACCUMULATE)


class _View:
    """One access row with readable properties."""

    def __init__(self, log: EventLog, a: Accesses, i: int, ro: RankOrder) -> None:
        c = a.cols
        self.i = i
        self.role = int(c["role"][i])
        self.local = bool(c["local"][i])
        self.write = bool(c["write"][i])
        self.atomic = bool(c["atomic"][i])
        self.op = int(c["rma_op"][i])
        self.mop = int(c["mop"][i])
        self.rank = int(ro.ranks[ro.unit_rank[c["issuer"][i]]])
        self.owner = int(ro.ranks[c["owner"][i]])
        self.target = int(c["target"][i])
        self.win = int(c["win"][i])
        self.mode = int(c["mode"][i])
        self.row = int(c["row"][i])
        self.loc = log.location(int(c["loc"][i]))
        self.thread = int(log.col("thread")[self.row])
        self.unit = int(c["issuer"][i])
        self.in_task = int(ro.unit_thread[self.unit]) < 0    # a deferred explicit task (rma.sync units)
        # name the thread when its rank runs several (hybrid MPI + OpenMP)
        self.threaded = int(np.count_nonzero(ro.unit_rank == ro.unit_rank[c["issuer"][i]])) > 1

    @property
    def who(self) -> str:
        return f"rank {self.rank} thread {self.thread}" if self.threaded else f"rank {self.rank}"

    @property
    def call(self) -> str:
        return CALL_NAMES.get(self.op, f"RMA op {self.op}")

    def describe(self) -> str:
        if self.local:
            return "store" if self.role == STORE else "load"
        side = {ORIGIN_READ: "reads its origin buffer", ORIGIN_WRITE: "writes its local buffer",
                TARGET_READ: f"reads rank {self.owner}'s window", TARGET_WRITE: f"writes rank {self.owner}'s window"}
        what = self.call
        if self.atomic and self.mop:
            what += f"({OP_NAMES.get(self.mop, 'op')})"
        return f"{what} ({side.get(self.role, '')})"

    def line(self) -> str:
        return f"line {self.loc.line}" if self.loc.line > 0 else "its call"

    def site(self, thread: int) -> Site:
        return Site(file=self.loc.file, line=self.loc.line, function=self.loc.function, side="rank",
                    rank=self.rank, thread=thread)

    def op_label(self) -> str:
        if self.local:
            return "store" if self.role == STORE else "load"
        side = {ORIGIN_READ: "origin-read", ORIGIN_WRITE: "origin-write", TARGET_READ: "target-read",
                TARGET_WRITE: "target-write"}[self.role]
        return f"{self.call}:{side}"


def _completion_call(x: _View) -> str:
    """The call that completes RMA call x, as the user would write it."""
    if x.op in REQUEST_OPS:
        return f"MPI_Wait on the request of {x.call} ({x.line()})"
    t = x.target
    origin_only = x.role in (ORIGIN_READ, ORIGIN_WRITE)
    if x.mode == MODE_FENCE:
        return "MPI_Win_fence(0, win)"
    if x.mode == MODE_PSCW:
        return "MPI_Win_complete(win)" if origin_only else "MPI_Win_complete(win) on the origin and MPI_Win_wait(win)"
    flush = "MPI_Win_flush_local" if origin_only else "MPI_Win_flush"
    return f"{flush}({t}, win)"


def _threads_fix(x: _View, y: _View) -> str:
    """Two threads (or explicit tasks) of one rank: the OpenMP synchronisation (and MPI completion) missing."""
    if x.local and not y.local:
        x, y = y, x
    if x.in_task or y.in_task:
        who = f"the tasks of {x.line()} and line {y.loc.line} on rank {x.rank}"
        where, later = "in its task", "the task of"
        sync = ("`depend(out: ...)` on the first task and `depend(in: ...)` on the second (the buffer), or a "
                "`taskwait` / `taskgroup` between them")
    else:
        who = f"threads {x.thread} and {y.thread} of rank {x.rank}"
        where, later = f"on thread {x.thread}", ""
        sync = ("`#pragma omp barrier` between them, or a lock / `critical` section the first thread leaves after "
                "it and the second enters before")
    if y.local or x.atomic == y.atomic:
        done = "" if x.role in (TARGET_READ,) and not x.write else f" with {_completion_call(x)}"
        what = f"the {y.describe()} at line {y.loc.line}" if y.local else f"the {y.call} at line {y.loc.line}"
        on = "" if later else f" on thread {y.thread}"
        return (f"{who} are not ordered: complete the {x.call} at {x.line()}{done} {where}, then order "
                f"{later + ' ' if later else ''}{what}{on} after it with {sync}")
    return (f"use the same operation and basic datatype in both accumulates ({x.line()} and line {y.loc.line}) "
            f"so MPI makes them atomic, or order {who} with {sync}")


def fix_text(x: _View, y: _View) -> str:
    """The synchronisation that is missing between x (earlier) and y (later)."""
    if x.rank == y.rank and (x.thread != y.thread or x.unit != y.unit) and (x.threaded or y.threaded):
        return _threads_fix(x, y)
    text = _fix_text(x, y)
    local = x if x.local else y if y.local else None
    if local is not None and local.threaded and x.rank != y.rank:
        text += (f"; on rank {local.rank} the {local.describe()} runs on thread {local.thread}: order it with the "
                 f"thread that makes that MPI call too (`#pragma omp barrier` between them)")
    return text


def _fix_text(x: _View, y: _View) -> str:
    if x.local and not y.local:
        x, y = y, x
        swapped = True
    else:
        swapped = False
    # x is now an RMA access (or both are RMA)
    if y.local:
        if x.role in (ORIGIN_READ, ORIGIN_WRITE) and x.rank == y.rank and not swapped:
            what = "reusing" if y.write else "reading"
            return (f"complete the {x.call} at {x.line()} before {what} its buffer: add {_completion_call(x)} "
                    f"before line {y.loc.line}")
        if x.mode == MODE_FENCE:
            return (f"separate them with MPI_Win_fence: the {y.describe()} at line {y.loc.line} on rank {y.rank} "
                    f"is in the same fence epoch as the {x.call} at {x.line()} on rank {x.rank}")
        if x.mode == MODE_PSCW:
            return (f"rank {y.rank} may touch that memory only before MPI_Win_post or after MPI_Win_wait: move "
                    f"line {y.loc.line}, or complete the {x.call} at {x.line()} first")
        if swapped:
            return (f"order rank {y.rank}'s {y.describe()} at line {y.loc.line} before rank {x.rank}'s {x.call} at "
                    f"{x.line()}: synchronise the ranks in between (MPI_Barrier, a message or MPI_Win_fence), "
                    f"or hold MPI_Win_lock(MPI_LOCK_EXCLUSIVE, {y.owner}, 0, win) around line {y.loc.line}")
        return (f"complete the {x.call} at {x.line()} with {_completion_call(x)} on rank {x.rank}, then "
                f"synchronise rank {x.rank} with rank {y.rank} (MPI_Barrier or a message) before line {y.loc.line}; "
                f"or hold MPI_Win_lock(MPI_LOCK_EXCLUSIVE, {y.owner}, 0, win) around line {y.loc.line}")
    # two RMA accesses
    if x.atomic and y.atomic:
        return (f"use the same operation and basic datatype in both accumulates ({x.line()} and line {y.loc.line}) "
                f"so MPI makes them atomic, or order them")
    if x.atomic != y.atomic:
        plain = y if x.atomic else x
        repl = {RmaOp.PUT: "MPI_Accumulate(..., MPI_REPLACE, win)", RmaOp.GET: "MPI_Get_accumulate(..., MPI_NO_OP, win)",
                RmaOp.RPUT: "MPI_Raccumulate(..., MPI_REPLACE, win)",
                RmaOp.RGET: "MPI_Rget_accumulate(..., MPI_NO_OP, win)"}.get(RmaOp(plain.op) if plain.op in
                                                                             set(map(int, RmaOp)) else None,
                                                                             "an accumulate with the same op")
        return (f"replace the {plain.call} at line {plain.loc.line} by {repl} so both are atomic accumulates, "
                f"or order the two calls")
    if x.rank == y.rank:
        if x.mode == MODE_FENCE:
            return f"put line {x.loc.line} and line {y.loc.line} in different fence epochs (MPI_Win_fence in between)"
        return f"add {_completion_call(x)} between line {x.loc.line} and line {y.loc.line}"
    if x.mode == MODE_FENCE and y.mode == MODE_FENCE:
        return (f"separate them with MPI_Win_fence: rank {x.rank} ({x.line()}) and rank {y.rank} (line "
                f"{y.loc.line}) access the same bytes in the same fence epoch")
    if x.mode in (MODE_LOCK, MODE_LOCK_ALL) or y.mode in (MODE_LOCK, MODE_LOCK_ALL):
        return (f"order them: complete the {x.call} at {x.line()} with {_completion_call(x)} on rank {x.rank} and "
                f"synchronise rank {x.rank} with rank {y.rank} before line {y.loc.line}, or use "
                f"MPI_Win_lock(MPI_LOCK_EXCLUSIVE, {x.owner}, 0, win) on both sides")
    return (f"order the {x.call} at {x.line()} on rank {x.rank} before the {y.call} at line {y.loc.line} on rank "
            f"{y.rank} (complete it, then synchronise the ranks)")


def findings(log: EventLog, a: Accesses, reg: Regions, ro: RankOrder, x: np.ndarray, y: np.ndarray,
             lo: np.ndarray, hi: np.ndarray, baseline: bool) -> list[Finding]:
    """One Finding per distinct racing pair of sites (counts and bytes summed)."""
    if len(x) == 0:
        return []
    c = a.cols
    threads = log.col("thread")
    # orientation (independent of how concurrent ranks interleaved in the log): y is the
    # finding's access: the later one on the same rank, else the load/store, else the higher rank
    same = c["issuer"][x] == c["issuer"][y]
    x_local, y_local = c["local"][x] == 1, c["local"][y] == 1
    swap = np.where(same, c["row"][x] > c["row"][y],
                    np.where(x_local != y_local, x_local, c["issuer"][x] > c["issuer"][y]))
    x, y = np.where(swap, y, x), np.where(swap, x, y)
    # one finding per pair of sites and ranks (the threads of a worksharing loop are one finding)
    rank_of = ro.unit_rank[c["issuer"]]
    key = np.stack([c["loc"][x], c["loc"][y], c["role"][x], c["role"][y], rank_of[x], rank_of[y],
                    c["owner"][x], c["shard"][x], c["rma_op"][x], c["rma_op"][y]], axis=1)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    nbytes = np.bincount(inv, weights=(hi - lo).astype(np.float64)).astype(np.int64)
    count = np.bincount(inv)
    out: list[Finding] = []
    for g, i in enumerate(first):
        vx, vy = _View(log, a, int(x[i]), ro), _View(log, a, int(y[i]), ro)
        shard = int(c["shard"][x[i]])
        owner = int(ro.ranks[c["owner"][x[i]]])
        mask = inv == g
        blo, bhi = int(lo[mask].min()), int(hi[mask].max())
        base = reg.base.get((shard, int(c["owner"][x[i]])), (0, 0))[0] if shard >= 0 else 0
        if shard >= 0:
            variable = f"window {shard} on rank {owner}"
            where = f"bytes {blo - base}..{bhi - base - 1} of window {shard} on rank {owner}"
        else:
            variable = f"local buffer of rank {owner}"
            where = f"rank {owner}'s local buffer at {blo:#x} ({bhi - blo} bytes)"
        disp = next((int(c["disp"][k]) for k in (x[i], y[i]) if not c["local"][k] and
                     c["role"][k] in (TARGET_READ, TARGET_WRITE)), None)
        message = (f"{vy.describe()} on {vy.who} races with {vx.describe()} on {vx.who}: "
                   f"{where}, not ordered by any synchronisation")
        details = {
            "analysis": "baseline (seed 001 epochs)" if baseline else "extended",
            "ranks": sorted({vx.rank, vy.rank}),
            "access_rank": vy.rank, "other_rank": vx.rank, "memory_rank": owner,
            "threads": [vy.thread, vx.thread],
            "window": shard if shard >= 0 else None,
            "byte_range": [blo - base, bhi - base] if shard >= 0 else [blo, bhi],
            "displacement": disp,
            "operations": [vy.op_label(), vx.op_label()],
        }
        out.append(Finding(
            kind=FindingKind.RMA_RACE,
            message=message,
            access=vy.site(int(threads[vy.row])),
            variable=variable,
            related=[Related("other-access", vx.site(int(threads[vx.row])), f"{vx.describe()} on {vx.who}")],
            fix=fix_text(vx, vy),
            bytes=int(nbytes[g]),
            occurrences=int(count[g]),
            details=details,
        ))
    return out


__all__ = ["LOAD", "STORE", "findings", "fix_text"]
