"""Synthetic stencil-like logs of any size, for measuring `trace analyze` apart from recording.

The log is what `trace record` would write for a clean offloading code: two host arrays mapped
with ``target enter data``, a series of kernels that read ``a`` (12-byte coalesced ranges) and
write ``b`` on the device, then ``target exit data map(from: b)`` and a host read. The VSM finds
nothing in it, so the time measured is the checkers' steady state, not report rendering.

``write_builder_log`` builds it in memory with LogBuilder.append_columns; ``write_streamed_log``
streams it with LogWriter one record batch at a time, so a log of 10^9 events never exists in
memory as a whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from quiver.formats import ConstructKind, DataOpKind, EventKind, LogBuilder, LogWriter, MapType
from quiver.formats.stats import LogStats
from quiver.formats.writer import complete_columns

HOST_A, HOST_B = 0x7F00_0000_0000, 0x7F10_0000_0000
DEV_A, DEV_B = 0x5500_0000_0000, 0x5510_0000_0000
ELEMS = 1 << 21                   # floats per array (8 MiB each)
ELEM = 4
BATCH = 1 << 20
SOURCE = "synthetic_stencil.c"


@dataclass
class SyntheticPlan:
    """Structural events (prologue, per-kernel begin/end, epilogue) and where accesses go."""

    builder: LogBuilder
    structure: dict[str, np.ndarray]   # all structural events, in order
    bounds: list[int]                  # structure[bounds[i]:bounds[i+1]] is piece i
    kernel_ids: list[int]
    read_loc: int
    write_loc: int
    events: int                        # access events in total

    @property
    def per_sweep(self) -> int:
        return 2 * (ELEMS - 2)


def plan(events: int) -> SyntheticPlan:
    b = LogBuilder(program="synthetic-stencil", argv=["synthetic-stencil", str(events)], threads=2)
    bounds = [0]

    def mark() -> None:
        bounds.append(len(b.columns()["kind"]))

    nbytes = ELEMS * ELEM
    b.alloc(HOST_A, nbytes, site=(SOURCE, 8, "main"))
    b.alloc(HOST_B, nbytes, site=(SOURCE, 8, "main"))
    b.access(HOST_A, nbytes, write=True, site=(SOURCE, 9, "main"))
    b.access(HOST_B, nbytes, write=True, site=(SOURCE, 9, "main"))
    enter = b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=(SOURCE, 10, "main"))
    b.map_clause(enter, "a", HOST_A, nbytes, MapType.TO, site=(SOURCE, 10, "main"), text="a[0:total]")
    b.map_clause(enter, "b", HOST_B, nbytes, MapType.TO, site=(SOURCE, 10, "main"), text="b[0:total]")
    for host, dev, var in ((HOST_A, DEV_A, "a"), (HOST_B, DEV_B, "b")):
        b.data_op(DataOpKind.ALLOC, host, dev, nbytes, construct=enter, var=var)
        b.data_op(DataOpKind.TRANSFER_TO, host, dev, nbytes, construct=enter, var=var)
    b.construct_end(enter, ConstructKind.TARGET_ENTER_DATA)
    mark()
    kernels = max(1, -(-events // (2 * (ELEMS - 2))))
    kernel_ids = []
    for _ in range(kernels):
        c = b.construct_begin(ConstructKind.TARGET, site=(SOURCE, 12, "main"))
        b.kernel(c)
        kernel_ids.append(c)
        mark()
        b.construct_end(c)
        mark()
    leave = b.construct_begin(ConstructKind.TARGET_EXIT_DATA, site=(SOURCE, 22, "main"))
    b.map_clause(leave, "b", HOST_B, nbytes, MapType.FROM, site=(SOURCE, 22, "main"), text="b[0:total]")
    b.map_clause(leave, "a", HOST_A, nbytes, MapType.DELETE, site=(SOURCE, 22, "main"), text="a[0:total]")
    b.data_op(DataOpKind.TRANSFER_FROM, HOST_B, DEV_B, nbytes, construct=leave, var="b")
    b.data_op(DataOpKind.DELETE, HOST_B, DEV_B, nbytes, construct=leave, var="b")
    b.data_op(DataOpKind.DELETE, HOST_A, DEV_A, nbytes, construct=leave, var="a")
    b.construct_end(leave, ConstructKind.TARGET_EXIT_DATA)
    b.access(HOST_B, nbytes, site=(SOURCE, 24, "main"))
    b.free(HOST_A, site=(SOURCE, 26, "main"))
    b.free(HOST_B, site=(SOURCE, 26, "main"))
    mark()
    return SyntheticPlan(b, b.columns(), bounds, kernel_ids, b.location(SOURCE, 17, "main"),
                         b.location(SOURCE, 16, "main"), events)


def access_columns(p: SyntheticPlan, start: int, stop: int, kernel: int) -> dict[str, np.ndarray]:
    """Access events [start, stop) of the whole run, all inside kernel number ``kernel``."""
    i = np.arange(start, stop, dtype=np.int64)
    elem = (i // 2) % (ELEMS - 2) + 1
    write = (i & 1).astype(bool)
    return {
        "kind": np.full(len(i), int(EventKind.ACCESS), dtype=np.int16),
        "addr": np.where(write, DEV_B + ELEM * elem, DEV_A + ELEM * (elem - 1)).astype(np.uint64),
        "size": np.where(write, ELEM, 3 * ELEM).astype(np.uint64),
        "op": write.astype(np.int32),
        "device": np.zeros(len(i), dtype=np.int32),
        "id": np.full(len(i), p.kernel_ids[kernel], dtype=np.int64),
        "thread": (elem >= ELEMS // 2).astype(np.int32),
        "loc": np.where(write, p.write_loc, p.read_loc).astype(np.int32),
    }


def chunks(p: SyntheticPlan, batch: int = BATCH) -> Iterator[dict[str, np.ndarray]]:
    """The whole log in sequence order, at most ``batch`` rows per chunk, with consecutive times."""
    clock = 0

    def timed(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        nonlocal clock
        n = len(cols["kind"])
        cols = dict(cols, time_ns=np.arange(clock, clock + n, dtype=np.int64))
        clock += n
        return cols

    def piece(i: int) -> dict[str, np.ndarray]:
        lo, hi = p.bounds[i], p.bounds[i + 1]
        return {k: v[lo:hi] for k, v in p.structure.items()}

    yield timed(piece(0))
    done = 0
    for k in range(len(p.kernel_ids)):
        yield timed(piece(1 + 2 * k))
        end = min(p.events, done + p.per_sweep)
        for s in range(done, end, batch):
            yield timed(access_columns(p, s, min(s + batch, end), k))
        done = end
        yield timed(piece(2 + 2 * k))
    yield timed(piece(len(p.bounds) - 2))


def write_builder_log(path: Path, events: int) -> Path:
    """The log built in memory with LogBuilder.append_columns (the issue's 10M-event row)."""
    p = plan(events)
    out = LogBuilder(program=p.builder.run["program"], argv=p.builder.run["argv"], threads=2)
    out.strings, out.locations = list(p.builder.strings), list(p.builder.locations)
    for cols in chunks(p):
        out.append_columns(cols)
    return out.write(path)


def write_streamed_log(path: Path, events: int, progress: Callable[[int], None] | None = None) -> Path:
    """The same log streamed batch by batch with LogWriter (bounded memory at any size)."""
    p = plan(events)
    stats = LogStats()      # stored in the metadata as finalize does: a first pass over the generated chunks
    for cols in chunks(p):
        stats.add(complete_columns(cols))
    with LogWriter(path, strings=p.builder.strings, locations=p.builder.locations, run=p.builder.run,
                   stats=stats) as w:
        for cols in chunks(p):
            w.write_columns(cols)
            if progress:
                progress(len(cols["kind"]))
    return path
