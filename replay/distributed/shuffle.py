"""The partitioned shuffle: map tasks sort each source's rows by destination into fragment files,
partition tasks read back only their destinations' rows.

Why files: a map task holds one record batch at a time, a partition task only its shards' rows,
so no process ever holds the run. Fragments are Arrow IPC files in a scratch directory
(one record batch per destination and input batch, found again through the footer), with three
order-key columns so rows from many sources merge into the run's order:
- one file: (source, 0, row in source), i.e. the file's own row order;
- a split log: (running max of time_ns, rank, row in the rank file), the order finalize gives a
  single-file log of the same run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import ipc
from quiver.formats import COLUMN_NAMES, EventKind, read_log
from quiver.formats.schema import COLUMN_DTYPES
from quiver.replay.distributed.partition import KEY_COLUMNS, Piece, Source, is_global, route

FRAGMENT_CODEC = "lz4"


def _schema() -> pa.Schema:
    fields = [pa.field(n, pa.from_numpy_dtype(np.dtype(COLUMN_DTYPES[n]))) for n in COLUMN_NAMES]
    return pa.schema(fields + [pa.field(k, pa.int64()) for k in KEY_COLUMNS])


SCHEMA = _schema()


def _batch(cols: dict[str, np.ndarray]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(cols[n]) for n in SCHEMA.names], schema=SCHEMA)


def _empty() -> dict[str, np.ndarray]:
    return {n: np.zeros(0, dtype=COLUMN_DTYPES[n]) for n in COLUMN_NAMES} | {
        k: np.zeros(0, dtype=np.int64) for k in KEY_COLUMNS}


@dataclass
class MapResult:
    """What a map task reports: its fragment file, rows per destination, and the global rows."""

    source: int
    fragment: str
    pieces: dict[int, list[int]] = field(default_factory=dict)   # destination -> record batches
    rows: dict[int, int] = field(default_factory=dict)           # destination -> rows
    global_rows: dict[str, np.ndarray] = field(default_factory=_empty)
    ranks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    events: int = 0
    has_rma: bool = False

    def piece(self, dst: int) -> Piece:
        return Piece(self.fragment, tuple(self.pieces[dst]))


def _remap(values: np.ndarray, table: np.ndarray | None) -> np.ndarray:
    if table is None:
        return values
    ok = (values >= 0) & (values < len(table))
    out = values.copy()
    out[ok] = table[values[ok]]
    return out


def map_source(source: Source, families: frozenset[int], scratch: str) -> MapResult:
    """Read one source batch by batch; write its routed rows by destination; keep its global rows."""
    log = read_log(source.path)            # validates; the batches are read (and checked) by index below
    end = log.num_batches if source.end_batch < 0 else source.end_batch
    out = MapResult(source.index, os.path.join(scratch, f"map-{source.index:06d}.arrow"))
    globals_: list[dict[str, np.ndarray]] = []
    ranks: set[int] = set()
    pos, tmax, written = 0, np.iinfo(np.int64).min, 0
    options = ipc.IpcWriteOptions(compression=FRAGMENT_CODEC)
    with pa.OSFile(out.fragment, "wb") as sink, ipc.new_file(sink, SCHEMA, options=options) as writer:
        for i in range(source.first_batch, end):
            cols = log.batch(i)
            n = len(cols["kind"])
            if source.split:
                cols["loc"] = _remap(cols["loc"], source.loc_map).astype(cols["loc"].dtype)
                sync = cols["kind"] == EventKind.MPI_SYNC
                cols["name"] = np.where(sync, _remap(cols["name"], source.str_map), cols["name"]).astype(
                    cols["name"].dtype)
                t = np.maximum.accumulate(np.maximum(cols["time_ns"], tmax)) if n else cols["time_ns"]
                tmax = int(t[-1]) if n else tmax
                keys = (t.astype(np.int64), cols["rank"].astype(np.int64), np.arange(pos, pos + n, dtype=np.int64))
            else:
                keys = (np.full(n, source.index, np.int64), np.zeros(n, np.int64),
                        np.arange(pos, pos + n, dtype=np.int64))
            pos += n
            cols.update(zip(KEY_COLUMNS, keys))
            ranks.update(np.unique(cols["rank"]).tolist())
            out.has_rma |= bool((cols["kind"] == EventKind.RMA).any())
            if families:
                g = np.flatnonzero(is_global(cols["kind"]))
                if len(g):
                    globals_.append({k: v[g] for k, v in cols.items()})
            rows, dst = route(cols, families)
            if not len(rows):
                continue
            order = np.argsort(dst, kind="stable")
            rows, dst = rows[order], dst[order]
            cut = np.r_[0, np.flatnonzero(np.diff(dst)) + 1, len(dst)]
            for a, b in pairwise(cut):
                d = int(dst[a])
                writer.write_batch(_batch({k: v[rows[a:b]] for k, v in cols.items()}))
                out.pieces.setdefault(d, []).append(written)
                out.rows[d] = out.rows.get(d, 0) + int(b - a)
                written += 1
    out.events = pos
    out.ranks = np.array(sorted(ranks), dtype=np.int64)
    if globals_:
        out.global_rows = {k: np.concatenate([g[k] for g in globals_]) for k in globals_[0]}
    return out


def sort_rows(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Rows in the run's order; a row routed twice to the same partition appears once."""
    k0, k1, k2 = (cols[k] for k in KEY_COLUMNS)
    order = np.lexsort((k2, k1, k0))
    if len(order) > 1:
        a, b, c = k0[order], k1[order], k2[order]
        dup = np.r_[False, (a[1:] == a[:-1]) & (b[1:] == b[:-1]) & (c[1:] == c[:-1])]
        order = order[~dup]
    return {k: v[order] for k, v in cols.items()}


def concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    parts = [p for p in parts if len(p["kind"])]
    if not parts:
        return _empty()
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def read_pieces(pieces: list[Piece]) -> dict[str, np.ndarray]:
    """The rows of some destinations, from the fragment files that hold them."""
    by_file: dict[str, list[int]] = {}
    for p in pieces:
        by_file.setdefault(p.path, []).extend(p.batches)
    parts = []
    for path in sorted(by_file):
        with pa.memory_map(path, "r") as f:
            reader = ipc.open_file(f)
            for i in sorted(set(by_file[path])):
                batch = reader.get_batch(i)
                parts.append({n: batch.column(j).to_numpy() for j, n in enumerate(SCHEMA.names)})
    return concat(parts)


def write_rows(path: str | Path, cols: dict[str, np.ndarray]) -> None:
    """A table of rows with order keys (the run's global rows) for every partition to read."""
    options = ipc.IpcWriteOptions(compression=FRAGMENT_CODEC)
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, SCHEMA, options=options) as writer:
        writer.write_batch(_batch(cols))


def read_rows(path: str | Path) -> dict[str, np.ndarray]:
    with pa.memory_map(str(path), "r") as f:
        table = ipc.open_file(f).read_all()
    return {n: table.column(n).to_numpy() for n in SCHEMA.names}


def event_columns(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {n: cols[n] for n in COLUMN_NAMES}
