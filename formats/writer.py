"""Write event logs: whole column sets or record batches, strings and locations in the metadata."""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from . import addr_delta
from .integrity import META_DIGEST, batch_metadata, metadata_digest
from .ipc_file import IpcFileWriter, fd_sink
from .safe_write import commit, create_temp, discard, fd_path
from .schema import (
    COLUMN_DEFAULTS,
    COLUMN_NAMES,
    COLUMNS,
    DELTA_ADDR_VERSION,
    FORMAT_NAME,
    FORMAT_VERSION,
    META_FORMAT,
    META_LOCATIONS,
    META_RUN,
    META_STRINGS,
    META_VERSION,
    arrow_schema,
)
from .stats import STATS_KEY, LogStats

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

Location = tuple[str, int, int, str]  # (file, line, column, function)

# Record batches of this many rows keep streaming readers in bounded memory. 2^18, not 2^20: a
# batch's decoded columns (2 MiB for a 64-bit one) then stay in the core's cache between the reader's
# checks and the checkers (the VSM from the file 0.26 -> 0.23 s on 10 M events, its peak 225 -> 139 MiB;
# docs/bench.md), and the file is no larger.
BATCH_ROWS = 1 << 18

ZSTD_LEVEL = 3


def plain_engine_for(compression: str | None) -> bool:
    """LogWriter's plain engine can write logs of this compression: uncompressed always, zstd where
    libzstd loads (formats/zstd.py)."""
    if compression is None:
        return True
    if compression != "zstd":
        return False
    from . import zstd

    return zstd.available()


def log_metadata(strings: Sequence[str], locations: Sequence[Location], run: Mapping[str, Any]) -> dict[bytes, bytes]:
    locs = [[str(f), int(line), int(col), str(fn)] for f, line, col, fn in locations]
    meta = {
        META_FORMAT: FORMAT_NAME.encode(),
        META_VERSION: str(FORMAT_VERSION).encode(),
        META_RUN: json.dumps(dict(run), sort_keys=True, default=str).encode(),
        META_STRINGS: json.dumps(list(strings)).encode(),
        META_LOCATIONS: json.dumps(locs).encode(),
    }
    meta[META_DIGEST] = metadata_digest(meta)
    return meta


def complete_columns(columns: Mapping[str, Any], n: int | None = None) -> dict[str, np.ndarray]:
    """Cast given columns to the schema's dtypes and fill the missing ones with their defaults."""
    import numpy as np

    from .schema import COLUMN_DTYPES

    unknown = set(columns) - set(COLUMN_NAMES)
    if unknown:
        raise ValueError(f"unknown event columns: {sorted(unknown)}")
    if n is None:
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"event columns differ in length: {sorted(lengths)}")
        n = lengths.pop() if lengths else 0
    out = {}
    for name in COLUMN_NAMES:
        dtype = COLUMN_DTYPES[name]
        if name in columns:
            arr = np.asarray(columns[name])
            if arr.dtype != dtype:
                arr = arr.astype(dtype)
            if len(arr) != n:
                raise ValueError(f"column {name!r} has {len(arr)} rows, expected {n}")
        else:
            arr = np.full(n, COLUMN_DEFAULTS[name], dtype=dtype)
        out[name] = arr
    return out


def batch_from_columns(columns: Mapping[str, np.ndarray], schema: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays([pa.array(columns[n]) for n in COLUMN_NAMES], schema=schema)


class LogWriter:
    """Streams record batches into an Arrow IPC file; the metadata is fixed when it opens.

    ``stats``: what the events about to be written hold (formats/stats.py), stored in the run
    metadata for `trace info`; a ``run`` copied from another log loses that log's stats (they would
    describe other events). The row count is checked against them on close.

    Writes to a fresh temporary beside ``path`` (created exclusively, never through a link:
    formats/safe_write.py) and renames it on close, so a reader never sees half a file under the
    final name and nothing planted at a predictable name is written through.

    ``engine="plain"`` writes the file without pyarrow (formats/ipc_file.py): what `trace record` uses,
    where importing pyarrow would cost more than the writing; uncompressed, or zstd-compressed as
    pyarrow would through the system's libzstd (formats/zstd.py; ``plain_engine_for`` says whether it
    can).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        strings: Sequence[str] = (),
        locations: Sequence[Location] = (),
        run: Mapping[str, Any] | None = None,
        compression: str | None = "zstd",
        stats: LogStats | None = None,
        engine: Literal["pyarrow", "plain"] = "pyarrow",
    ) -> None:
        self.path = Path(path)
        self.rows = 0
        self.compressed = compression is not None
        run = {k: v for k, v in (run or {}).items() if k != STATS_KEY}
        if stats is not None:
            run[STATS_KEY] = stats.to_json()
        self._expected = stats.rows if stats is not None else None
        meta = log_metadata(strings, locations, run)
        if engine == "plain":
            if not plain_engine_for(compression):
                raise ValueError(f"the plain engine cannot write {compression!r} compression here")
            self._open_plain(meta, compression)
            return
        import pyarrow as pa
        from pyarrow import ipc

        self.schema = arrow_schema(meta)
        # zstd level 3, not Arrow's default 1: constant and slowly varying columns (id, size, kind ...)
        # come out far smaller and decompress several times faster, which is most of a replay's cost
        codec = pa.Codec(compression, compression_level=ZSTD_LEVEL) if compression == "zstd" else compression
        options = ipc.IpcWriteOptions(compression=codec)
        self._fd, self._part = create_temp(self.path)
        try:
            self._sink = pa.OSFile(fd_path(self._fd), "wb")
            self._writer = ipc.new_file(self._sink, self.schema, options=options)
        except BaseException:
            os.close(self._fd)
            discard(self._part)
            raise

    def _open_plain(self, meta: dict[bytes, bytes], compression: str | None) -> None:
        self._fd, self._part = create_temp(self.path)
        try:
            self._sink = fd_sink(self._fd)
            self._writer = IpcFileWriter(self._sink, COLUMNS, meta, compression=compression)
        except BaseException:
            os.close(self._fd)
            discard(self._part)
            raise

    def write_columns(self, columns: Mapping[str, Any], stored_addr: Any = None, time_sorted: bool = False) -> None:
        """Append rows: columns of any array type (completed and cast by complete_columns), or, with the
        plain engine, every column as an array.array of its type (written as they are, without numpy).
        ``stored_addr``: addr_delta.encode(columns["addr"]) when the caller has it (finalize_small computes
        it in C); only for rows that fit in one batch. ``time_sorted``: the caller knows `time_ns` ascends
        (a log's rows are in time order; the batch's time span is then read off its ends)."""
        plain = isinstance(self._writer, IpcFileWriter) and all(isinstance(columns.get(c), array) for c in COLUMN_NAMES)
        cols = dict(columns) if plain else complete_columns(columns)
        n = len(cols["kind"])
        if stored_addr is not None and (n > BATCH_ROWS or len(stored_addr) != n):
            raise ValueError("stored_addr is for one batch of the columns' length")
        for start in range(0, n, BATCH_ROWS):
            part = {k: v[start:start + BATCH_ROWS] for k, v in cols.items()} if n > BATCH_ROWS else cols
            # checksums of the values readers see; which columns hold one value, when compressed
            meta = batch_metadata(part, COLUMN_NAMES, constant=self.compressed, time_sorted=time_sorted)
            if FORMAT_VERSION >= DELTA_ADDR_VERSION:
                part = dict(part)
                part["addr"] = addr_delta.encode(part["addr"]) if stored_addr is None else stored_addr
            batch = part if isinstance(self._writer, IpcFileWriter) else batch_from_columns(part, self.schema)
            self._writer.write_batch(batch, custom_metadata=meta)
        self.rows += n

    def close(self) -> Path:
        if self._expected is not None and self._expected != self.rows:
            self.__exit__(ValueError, None, None)
            raise ValueError(f"{self.path}: {self.rows} events written, but its stats count {self._expected}")
        self._writer.close()
        self._sink.close()
        os.close(self._fd)
        commit(self._part, self.path)
        return self.path

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            try:
                self._writer.close()
                self._sink.close()
            finally:
                os.close(self._fd)
                discard(self._part)


def write_log(
    path: str | os.PathLike,
    columns: Mapping[str, Any] | Iterable[Mapping[str, Any]],
    *,
    strings: Sequence[str] = (),
    locations: Sequence[Location] = (),
    run: Mapping[str, Any] | None = None,
    compression: str | None = "zstd",
) -> Path:
    """Write a complete log. ``columns`` is one mapping of arrays, or an iterable of them (chunks); for
    one mapping, the log's stats are stored too (`trace info` reads them instead of the events)."""
    stats = None
    if isinstance(columns, Mapping):
        columns = complete_columns(columns)
        stats = LogStats.of(columns)
    chunks = [columns] if isinstance(columns, Mapping) else columns
    with LogWriter(path, strings=strings, locations=locations, run=run, compression=compression,
                   stats=stats) as w:
        for chunk in chunks:
            w.write_columns(chunk)
    return Path(path)
