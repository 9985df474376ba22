"""LogBuilder: write event logs by hand, for checker tests and users' experiments.

Example::

    from quiver.formats import LogBuilder, ConstructKind, DataOpKind, MapType

    b = LogBuilder(program="demo")
    b.alloc(0x1000, 400, site=("demo.c", 4, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("demo.c", 9, "main"))
    b.map_clause(c, "b", 0x1000, 400, MapType.TO | MapType.FROM, site=("demo.c", 9, "main"), text="b[0:100]")
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 400, construct=c, var="b")
    b.data_op(DataOpKind.TRANSFER_TO, 0x1000, 0x9000, 400, construct=c, var="b")
    b.kernel(c)
    b.access(0x9000, 4, device=0, construct=c, site=("demo.c", 11, "main"))
    b.construct_end(c)
    b.write("demo.arrow")

Events get consecutive timestamps in the order they are added unless ``time_ns`` is given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .schema import (
    COLUMN_DEFAULTS,
    COLUMN_DTYPES,
    COLUMN_NAMES,
    FORMAT_VERSION,
    MAX_MASK_SLOTS,
    AccessFlag,
    ConstructFlag,
    ConstructKind,
    DataOpKind,
    DependKind,
    EventKind,
    MessageKind,
    MpiSyncKind,
    RmaOp,
    SyncKind,
    WinFlavor,
)
from .writer import Location, complete_columns, write_log

Site = tuple[str, int, str] | tuple[str, int] | None


class LogBuilder:
    """Accumulates events (scalar calls or numpy bulk appends) and writes one log."""

    def __init__(self, program: str = "synthetic", argv: list[str] | None = None, ranks: int = 1, **run: Any):
        self.run: dict[str, Any] = {
            "program": program, "argv": argv or [program], "ranks": ranks, "truncated": False,
            "exit_status": 0, "signal": 0, "has_accesses": True, "tool": "quiver.LogBuilder",
            "format_version": FORMAT_VERSION,
        }
        self.run.update(run)
        self.strings: list[str] = []
        self._string_ids: dict[str, int] = {}
        self.locations: list[Location] = []
        self._location_ids: dict[Location, int] = {}
        self._rows: list[tuple] = []
        self._chunks: list[dict[str, np.ndarray]] = []
        self._clock = 0
        self._next_id: dict[str, int] = {}

    # interning ---------------------------------------------------------------------------
    def string(self, s: str | None) -> int:
        if s is None:
            return -1
        sid = self._string_ids.get(s)
        if sid is None:
            sid = self._string_ids[s] = len(self.strings)
            self.strings.append(s)
        return sid

    def location(self, file: str, line: int, function: str = "", column: int = 0) -> int:
        key = (file, int(line), int(column), function)
        lid = self._location_ids.get(key)
        if lid is None:
            lid = self._location_ids[key] = len(self.locations)
            self.locations.append(key)
        return lid

    def _loc(self, site: Site | int) -> int:
        if site is None:
            return -1
        if isinstance(site, int):
            return site
        return self.location(site[0], site[1], site[2] if len(site) > 2 else "")

    def new_id(self, space: str) -> int:
        n = self._next_id.get(space, 0)
        self._next_id[space] = n + 1
        return n

    # low level ---------------------------------------------------------------------------
    def event(self, kind: int, *, time_ns: int | None = None, **cols: Any) -> None:
        """Append one event; columns not given take their defaults (FORMAT.md)."""
        if time_ns is None:
            time_ns = self._clock
        self._clock = max(self._clock, int(time_ns)) + 1
        values = dict(COLUMN_DEFAULTS)
        values.update(cols)
        values["kind"] = int(kind)
        values["time_ns"] = int(time_ns)
        self._rows.append(tuple(int(values[c]) for c in COLUMN_NAMES))

    def _flush_rows(self) -> None:
        if self._rows:
            by_column = list(zip(*self._rows))
            self._chunks.append({name: np.array(by_column[i], dtype=COLUMN_DTYPES[name])
                                 for i, name in enumerate(COLUMN_NAMES)})
            self._rows = []

    def append_columns(self, columns: Mapping[str, Any]) -> None:
        """Bulk-append events given as arrays (e.g. 10 million accesses); missing columns default.

        Without a ``time_ns`` column the events get consecutive timestamps after the last event.
        """
        self._flush_rows()
        cols = dict(columns)
        n = len(next(iter(cols.values())))
        if "time_ns" not in cols:
            cols["time_ns"] = np.arange(self._clock, self._clock + n, dtype=np.int64)
        self._chunks.append(complete_columns(cols, n))
        if n:
            self._clock = max(self._clock, int(np.max(cols["time_ns"]))) + 1

    # memory ------------------------------------------------------------------------------
    def alloc(self, addr: int, size: int, site: Site = None, *, rank: int = 0, thread: int = 0,
              time_ns: int | None = None) -> int:
        aid = self.new_id("alloc")
        self.event(EventKind.ALLOC, addr=addr, size=size, id=aid, loc=self._loc(site), rank=rank,
                   thread=thread, time_ns=time_ns)
        return aid

    def free(self, addr: int, site: Site = None, *, rank: int = 0, thread: int = 0) -> None:
        self.event(EventKind.FREE, addr=addr, loc=self._loc(site), rank=rank, thread=thread)

    # OpenMP ------------------------------------------------------------------------------
    def construct_begin(self, kind: ConstructKind, site: Site = None, *, device: int = 0, nowait: bool = False,
                        depend: bool = False, task: int = -1, thread: int = 0, rank: int = 0) -> int:
        cid = self.new_id("construct")
        flags = (ConstructFlag.NOWAIT if nowait else 0) | (ConstructFlag.HAS_DEPEND if depend else 0)
        self.event(EventKind.CONSTRUCT_BEGIN, id=cid, op=int(kind), aux=int(flags), id2=task, device=device,
                   loc=self._loc(site), thread=thread, rank=rank)
        return cid

    def construct_end(self, construct: int, kind: ConstructKind = ConstructKind.TARGET, *, device: int = 0,
                      task: int = -1, thread: int = 0, rank: int = 0, site: Site = None) -> None:
        self.event(EventKind.CONSTRUCT_END, id=construct, op=int(kind), id2=task, device=device,
                   loc=self._loc(site), thread=thread, rank=rank)

    def map_clause(self, construct: int, var: str, addr: int, size: int, map_type: int, site: Site = None, *,
                   text: str | None = None, base: int | None = None, index: int = 0, device: int = 0,
                   thread: int = 0, rank: int = 0) -> None:
        self.event(EventKind.MAP_CLAUSE, id=construct, name=self.string(var), addr=addr,
                   addr2=addr if base is None else base, size=size, op=int(map_type), aux=index,
                   aux2=self.string(text if text is not None else var), loc=self._loc(site), device=device,
                   thread=thread, rank=rank)

    def data_op(self, op: DataOpKind, host: int, dev: int, size: int, *, construct: int = -1,
                var: str | None = None, device: int = 0, site: Site = None, task: int = -1, thread: int = 0,
                rank: int = 0, time_ns: int | None = None) -> None:
        self.event(EventKind.DATA_OP, op=int(op), addr=host, addr2=dev, size=size, id=construct, id2=task,
                   name=self.string(var), device=device, loc=self._loc(site), thread=thread, rank=rank,
                   time_ns=time_ns)

    def kernel(self, construct: int, *, device: int = 0, site: Site = None, task: int = -1, thread: int = 0,
               rank: int = 0) -> None:
        self.event(EventKind.KERNEL, id=construct, op=int(ConstructKind.TARGET), id2=task, device=device,
                   loc=self._loc(site), thread=thread, rank=rank)

    def task_create(self, task: int, *, parent: int = -1, flags: int = 0, site: Site = None, thread: int = 0,
                    rank: int = 0) -> None:
        self.event(EventKind.TASK_CREATE, id=task, id2=parent, op=flags, loc=self._loc(site), thread=thread,
                   rank=rank)

    def task_depend(self, task: int, addr: int, kind: DependKind, *, thread: int = 0, rank: int = 0) -> None:
        self.event(EventKind.TASK_DEPEND, id=task, addr=addr, op=int(kind), thread=thread, rank=rank)

    def task_begin(self, task: int, *, thread: int = 0, rank: int = 0) -> None:
        self.event(EventKind.TASK_BEGIN, id=task, thread=thread, rank=rank)

    def task_end(self, task: int, *, thread: int = 0, rank: int = 0) -> None:
        self.event(EventKind.TASK_END, id=task, thread=thread, rank=rank)

    def sync(self, kind: SyncKind, *, site: Site = None, thread: int = 0, rank: int = 0, id: int = -1,
             aux2: int = 0) -> None:
        """``aux2``: barrier 0 arrival / 1 departure, mutex: its OmpMutexKind, worksharing: its OmpWorkKind."""
        self.event(EventKind.SYNC, op=int(kind), loc=self._loc(site), thread=thread, rank=rank, id=id, aux2=aux2)

    def access(self, addr: int, size: int, *, write: bool = False, device: int = -1, construct: int = -1,
               site: Site = None, thread: int = 0, rank: int = 0, atomic: bool = False,
               time_ns: int | None = None, width: int = 0, stride: int = 0, blocks: int = 1, planes: int = 1,
               plane_stride: int = 0, mask: int | None = None) -> None:
        """``blocks`` > 1: a strided run, ``blocks`` blocks of ``size`` bytes every ``stride`` bytes.
        ``planes`` > 1 (format version 5): that run ``planes`` times, plane p moved by ``p * plane_stride``
        bytes (the run must be strided, ``plane_stride`` beyond its span and a multiple of ``stride``).
        ``mask`` (format version 6): a masked run, slot i of ``size`` bytes at ``addr + i * stride`` accessed
        iff bit i is set; ``blocks`` slots (default: up to the highest set bit), ``stride`` default ``size``
        (contiguous elements). Bits 0 and ``blocks`` - 1 must be set, 2 <= slots <= 64."""
        flags = (AccessFlag.WRITE if write else 0) | (AccessFlag.ATOMIC if atomic else 0)
        if mask is not None:
            slots = blocks if blocks > 1 else int(mask).bit_length()
            stride = stride or size
            if not 2 <= slots <= MAX_MASK_SLOTS or mask < 0 or mask >> slots or not mask & 1 \
                    or not mask >> (slots - 1) & 1:
                raise ValueError(f"a masked access needs 2-{MAX_MASK_SLOTS} slots with the first and last "
                                 f"present and no bit past them (mask {mask:#x}, slots {slots})")
            if stride < size or planes > 1:
                raise ValueError(f"a masked access needs stride >= size and no planes (stride {stride}, size "
                                 f"{size}, planes {planes})")
            self.event(EventKind.ACCESS, addr=addr, size=size, op=int(flags) | int(AccessFlag.MASKED),
                       device=device, id=construct, loc=self._loc(site), thread=thread, rank=rank,
                       time_ns=time_ns, aux=width, addr2=stride, aux2=slots, name=-1,
                       id2=int(np.uint64(mask).view(np.int64)))
            return
        if blocks > 1 and stride <= size:
            raise ValueError(f"a strided access needs stride > size (stride {stride}, size {size})")
        if planes > 1:
            span = (blocks - 1) * stride + size
            if blocks < 2:
                raise ValueError(f"planes of an access need a strided run (blocks {blocks})")
            if plane_stride <= span or plane_stride % stride:
                raise ValueError(f"planes of a strided access need plane_stride > the run's span {span} and a "
                                 f"multiple of stride {stride} (plane_stride {plane_stride})")
        self.event(EventKind.ACCESS, addr=addr, size=size, op=int(flags), device=device, id=construct,
                   loc=self._loc(site), thread=thread, rank=rank, time_ns=time_ns, aux=width,
                   addr2=stride if blocks > 1 else 0, aux2=blocks if blocks > 1 else 0,
                   name=planes if planes > 1 else -1, id2=plane_stride if planes > 1 else -1)

    # MPI ---------------------------------------------------------------------------------
    def win_create(self, rank: int, win: int, base: int, size: int, *, disp_unit: int = 1,
                   flavor: WinFlavor = WinFlavor.CREATE, site: Site = None, thread: int = 0) -> None:
        self.event(EventKind.WIN_CREATE, rank=rank, id=win, addr=base, size=size, aux=disp_unit, op=int(flavor),
                   loc=self._loc(site), thread=thread)

    def win_free(self, rank: int, win: int, *, site: Site = None) -> None:
        self.event(EventKind.WIN_FREE, rank=rank, id=win, loc=self._loc(site))

    def rma(self, rank: int, op: RmaOp, win: int, target: int, disp: int, size: int, *, origin_addr: int = 0,
            mpi_op: int = 0, datatype_size: int = 1, request: int = -1, site: Site = None,
            thread: int = 0) -> None:
        """An RMA call on ``rank``; ``disp`` is the target displacement in bytes from the window base."""
        self.event(EventKind.RMA, rank=rank, op=int(op), id=win, id2=target, aux=disp, size=size,
                   addr=origin_addr, name=mpi_op, device=datatype_size, aux2=request, loc=self._loc(site),
                   thread=thread)

    def mpi_sync(self, rank: int, kind: MpiSyncKind, win: int, *, target: int = -1, lock_type: int = 0,
                 group: list[int] | None = None, site: Site = None, thread: int = 0) -> None:
        name = self.string(",".join(str(r) for r in group)) if group is not None else -1
        self.event(EventKind.MPI_SYNC, rank=rank, op=int(kind), id=win, id2=target, aux=lock_type, name=name,
                   loc=self._loc(site), thread=thread)

    def request_complete(self, rank: int, request: int, *, site: Site = None, thread: int = 0) -> None:
        self.event(EventKind.MPI_REQUEST, rank=rank, aux2=request, loc=self._loc(site), thread=thread)

    def message(self, rank: int, kind: MessageKind, *, peer: int = -1, tag: int = 0, comm: int = 0,
                seq: int = -1, site: Site = None, thread: int = 0) -> None:
        self.event(EventKind.MPI_MESSAGE, rank=rank, op=int(kind), id2=peer, aux=tag, aux2=comm, id=seq,
                   loc=self._loc(site), thread=thread)

    # output ------------------------------------------------------------------------------
    def columns(self) -> dict[str, np.ndarray]:
        self._flush_rows()
        if not self._chunks:
            return complete_columns({}, 0)
        return {name: np.concatenate([c[name] for c in self._chunks]) for name in COLUMN_NAMES}

    def write(self, path: str | os.PathLike, *, compression: str | None = "zstd") -> Path:
        cols = self.columns()
        run = dict(self.run)
        run.setdefault("threads", len(np.unique(cols["thread"])) if len(cols["thread"]) else 1)
        return write_log(path, cols, strings=self.strings, locations=self.locations, run=run,
                         compression=compression)

    def write_split(self, directory: str | os.PathLike, *, compression: str | None = "zstd") -> Path:
        """The same events as a split log (`trace record --split`): one file per rank + manifest."""
        from .logset import write_split

        cols = self.columns()
        run = dict(self.run)
        run.setdefault("threads", len(np.unique(cols["thread"])) if len(cols["thread"]) else 1)
        write_split(directory, cols, strings=self.strings, locations=self.locations, run=run, compression=compression)
        return Path(directory)
