"""Source-level words for `nowait` findings: which construct, which operation, which site.

Why: race and schedule findings talk about constructs ("the kernel of `target nowait` at line 9",
"the copy back at the end of `target data`"), not rows of a log.
"""

from __future__ import annotations

import os

import numpy as np
from quiver.formats import ConstructKind, DataOpKind, EventKind, EventLog
from quiver.formats.names import construct_name
from quiver.replay.mapping.diagnosis import source_function
from quiver.replay.nowait.tasks import TaskModel, lookup, pack
from quiver.replay.report.findings import Site

# constructs that take a `depend` clause
DEPEND_CONSTRUCTS = {int(ConstructKind.TARGET), int(ConstructKind.TARGET_ENTER_DATA),
                     int(ConstructKind.TARGET_EXIT_DATA), int(ConstructKind.TARGET_UPDATE)}


class RowText:
    """Describes rows of one log: their site, their construct and what they did."""

    def __init__(self, log: EventLog, cols: dict[str, np.ndarray], tasks: TaskModel):
        self.log = log
        self.cols = cols
        self.tasks = tasks
        self._loc = log.col("loc") if "loc" not in cols else cols["loc"]

    def site(self, row: int, side: str | None = None) -> Site:
        c = self.cols
        loc = self.log.location(int(self._loc[row]))
        device = int(c["device"][row])
        if side is None:
            side = "device" if device >= 0 and int(c["kind"][row]) == int(EventKind.ACCESS) else "host"
        return Site(file=loc.file, line=loc.line, function=source_function(loc.function), side=side, device=device,
                    rank=int(c["rank"][row]), thread=int(c["thread"][row]))

    def construct_of_row(self, row: int) -> int:
        """Index into ``tasks.constructs`` of the construct a row belongs to (-1)."""
        c = self.cols
        k = int(c["kind"][row])
        if k not in (int(EventKind.DATA_OP), int(EventKind.KERNEL), int(EventKind.ACCESS),
                     int(EventKind.CONSTRUCT_BEGIN), int(EventKind.CONSTRUCT_END), int(EventKind.MAP_CLAUSE)):
            return -1
        cid = int(c["id"][row])
        if cid < 0:
            return -1
        key = pack(np.array([c["rank"][row]]), np.array([cid]))
        return int(lookup(self.tasks.constructs.keys, key, np.array([True]))[0])

    def construct_line(self, ci: int) -> int:
        return self.log.location(int(self.tasks.constructs.loc[ci])).line if ci >= 0 else 0

    def construct_name(self, ci: int) -> str:
        """e.g. "`target nowait` (line 9)", "the end of `target data` (line 7)"."""
        if ci < 0:
            return "a construct"
        cons = self.tasks.constructs
        kind = int(cons.kind[ci])
        name = "target data" if kind == int(ConstructKind.TARGET_DATA_END) else construct_name(kind)
        if cons.nowait[ci]:
            name += " nowait"
        line = self.construct_line(ci)
        text = f"`{name}` (line {line})" if line > 0 else f"`{name}`"
        return "the end of " + text if kind == int(ConstructKind.TARGET_DATA_END) else text

    def construct_kind(self, ci: int) -> int:
        return int(self.tasks.constructs.kind[ci]) if ci >= 0 else -1

    def task_construct(self, ctx: int) -> int:
        t = self.tasks.task_of_ctx(ctx)
        return int(self.tasks.task_construct[t]) if t >= 0 else -1

    def operation(self, row: int, write: bool, device_part: bool) -> str:
        """What the row did to the byte, with its site: "write at f.c:11 in the kernel of `target nowait` (line 9)"."""
        c = self.cols
        k = int(c["kind"][row])
        ci = self.construct_of_row(row)
        if k == int(EventKind.ACCESS):
            verb = "write" if write else "read"
            if int(c["op"][row]) & 2:
                verb = "atomic " + verb
            site = self.site(row)
            where = f"{os.path.basename(site.file)}:{site.line}" if site.line > 0 else "an unknown line"
            if int(c["device"][row]) >= 0:
                return f"the {verb} at {where} in the kernel of {self.construct_name(ci)}"
            return f"the host {verb} at {where}"
        if k == int(EventKind.DATA_OP):
            op = int(c["op"][row])
            by = self.construct_name(ci)
            by = "at " + by if by.startswith("the end of") else "by " + by
            if op == int(DataOpKind.TRANSFER_TO):
                side = "writing the device copy" if device_part else "reading the host copy"
                return f"the copy to the device {by} {side}"
            if op == int(DataOpKind.TRANSFER_FROM):
                side = "reading the device copy" if device_part else "writing the host copy"
                return f"the copy from the device {by} {side}"
            if op in (int(DataOpKind.ALLOC), int(DataOpKind.ASSOCIATE)):
                return f"the allocation of the device copy {by}"
            return f"the release of the device copy {by}"
        return "an operation"

    def unit_site(self, ctx: int) -> Site | None:
        """Where a deferred target task was launched (its construct's line)."""
        ci = self.task_construct(ctx)
        return self.site(int(self.tasks.constructs.row[ci]), side="host") if ci >= 0 else None

    def unit_name(self, ctx: int) -> str:
        """How a deferred target task is called in a witness: "the kernel at line 9"."""
        ci = self.task_construct(ctx)
        if ci < 0:
            return "a target task"
        kind = int(self.tasks.constructs.kind[ci])
        line = self.construct_line(ci)
        what = {int(ConstructKind.TARGET): "the kernel", int(ConstructKind.TARGET_UPDATE): "the update",
                int(ConstructKind.TARGET_ENTER_DATA): "the enter data",
                int(ConstructKind.TARGET_EXIT_DATA): "the exit data"}.get(kind, "the target task")
        return f"{what} at line {line}" if line > 0 else what
