"""Open and validate event logs. Every command goes through ``read_log``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyarrow import ipc

from .errors import LogFormatError
from .schema import (
    ARROW_FIELDS,
    COLUMN_NAMES,
    FORMAT_NAME,
    FORMAT_VERSION,
    META_FORMAT,
    META_LOCATIONS,
    META_RUN,
    META_STRINGS,
    META_VERSION,
    MIN_FORMAT_VERSION,
)

ARROW_MAGIC = b"ARROW1"


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int
    column: int
    function: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line > 0 else (self.file or "??")
        return f"{where} ({self.function})" if self.function else where


UNKNOWN_LOCATION = SourceLocation("??", 0, 0, "")


def _json_meta(meta: dict[bytes, bytes], key: bytes, path: Path) -> Any:
    try:
        return json.loads(meta[key].decode())
    except (KeyError, UnicodeDecodeError, json.JSONDecodeError):
        raise LogFormatError(f"{path}: damaged quiver metadata ({key.decode()})") from None


def validate_schema(schema: pa.Schema, path: Path) -> dict[bytes, bytes]:
    """Check an Arrow schema is a quiver log this version can read; return its metadata."""
    meta = schema.metadata or {}
    if meta.get(META_FORMAT) != FORMAT_NAME.encode():
        raise LogFormatError(f"{path}: an Arrow file, but not a quiver event log (no '{FORMAT_NAME}' marker)")
    try:
        version = int(meta.get(META_VERSION, b"0"))
    except ValueError:
        raise LogFormatError(f"{path}: unreadable format version {meta.get(META_VERSION)!r}") from None
    if version > FORMAT_VERSION:
        raise LogFormatError(
            f"{path}: format version {version} is newer than this quiver reads ({FORMAT_VERSION}); upgrade quiver"
        )
    if version < MIN_FORMAT_VERSION:
        raise LogFormatError(
            f"{path}: format version {version} is older than this quiver reads ({MIN_FORMAT_VERSION}); re-record it"
        )
    names = schema.names
    if names != COLUMN_NAMES:
        missing = [c for c in COLUMN_NAMES if c not in names]
        detail = f"missing columns {missing}" if missing else "columns in an unexpected order"
        raise LogFormatError(f"{path}: not a valid quiver log: {detail}")
    for got, want in zip(schema, ARROW_FIELDS):
        if got.type != want.type:
            raise LogFormatError(f"{path}: column '{got.name}' has type {got.type}, expected {want.type}")
    return meta


@dataclass
class EventLog:
    """A validated log: run metadata, interned strings and locations, and the event columns."""

    path: Path
    run: dict[str, Any]
    strings: list[str]
    locations: list[SourceLocation]
    version: int
    num_events: int
    num_batches: int
    _reader: ipc.RecordBatchFileReader = field(repr=False)
    _projections: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def table(self) -> pa.Table:
        try:
            return self._reader.read_all()
        except (pa.ArrowInvalid, OSError) as e:
            raise LogFormatError(f"{self.path}: damaged event data ({_short(e)})") from None

    def col(self, name: str) -> np.ndarray:
        """One column as a numpy array (zero-copy when the log is uncompressed)."""
        if name not in COLUMN_NAMES:
            raise KeyError(name)
        return self.table.column(name).to_numpy()

    def columns(self) -> dict[str, np.ndarray]:
        return {name: self.col(name) for name in COLUMN_NAMES}

    def batches(self, columns: list[str] | None = None) -> Iterator[dict[str, np.ndarray]]:
        """Stream the events one record batch at a time, in sequence order (bounded memory).

        ``columns`` limits what is read and decompressed (e.g. ``["kind"]`` for a quick scan).
        """
        for i in range(self.num_batches):
            yield self.batch(i, columns)

    def batch(self, i: int, columns: list[str] | None = None) -> dict[str, np.ndarray]:
        """Record batch ``i`` (all columns, or only ``columns``)."""
        if columns is None:
            names = list(COLUMN_NAMES)
        else:
            unknown = [c for c in columns if c not in COLUMN_NAMES]
            if unknown:
                raise KeyError(unknown[0])
            names = [c for c in COLUMN_NAMES if c in columns]
        reader = self._projection(tuple(names))
        try:
            batch = reader.get_batch(i)
        except (pa.ArrowInvalid, OSError) as e:
            raise LogFormatError(f"{self.path}: damaged record batch {i} ({_short(e)})") from None
        return {name: batch.column(j).to_numpy() for j, name in enumerate(names)}

    def _projection(self, names: tuple[str, ...]) -> ipc.RecordBatchFileReader:
        """A reader of the same file that decodes only ``names`` (Arrow IPC field projection).

        It reads through plain file reads, not a memory map: the pages of a mapped file stay in the
        process's resident set once touched, so streaming a log larger than memory through a map
        would look (and be accounted) as if the whole log were loaded."""
        if names not in self._projections:
            options = ipc.IpcReadOptions(included_fields=[COLUMN_NAMES.index(n) for n in names])
            try:
                self._projections[names] = ipc.open_file(pa.OSFile(str(self.path), "r"), options=options)
            except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as e:
                raise LogFormatError(f"{self.path}: damaged Arrow file ({_short(e)})") from None
        return self._projections[names]

    def string(self, sid: int) -> str:
        return self.strings[sid] if 0 <= sid < len(self.strings) else ""

    def location(self, lid: int) -> SourceLocation:
        return self.locations[lid] if 0 <= lid < len(self.locations) else UNKNOWN_LOCATION

    @property
    def truncated(self) -> bool:
        return bool(self.run.get("truncated", False))

    @property
    def size_bytes(self) -> int:
        return self.path.stat().st_size


def _short(e: BaseException) -> str:
    return str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__


def read_log(path: str | os.PathLike) -> EventLog:
    """Open ``path`` as a quiver log or raise LogFormatError with a one-line reason."""
    p = Path(path)
    if not p.exists():
        raise LogFormatError(f"{p}: no such file")
    if p.is_dir():
        raise LogFormatError(f"{p}: is a directory, not an event log")
    try:
        size = p.stat().st_size
        with open(p, "rb") as f:
            head = f.read(8)
    except OSError as e:
        raise LogFormatError(f"{p}: cannot read ({e.strerror})") from None
    if size == 0:
        raise LogFormatError(f"{p}: empty file, not an event log")
    if not head.startswith(ARROW_MAGIC):
        raise LogFormatError(f"{p}: not an Arrow IPC file (not a quiver event log)")
    try:
        with open(p, "rb") as f:
            f.seek(-6, os.SEEK_END)
            tail = f.read(6)
    except OSError:
        tail = b""
    if tail != ARROW_MAGIC:
        raise LogFormatError(f"{p}: truncated Arrow file (no footer); the log was cut short or is still being written")
    try:
        reader = ipc.open_file(pa.memory_map(str(p), "r"))
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as e:
        raise LogFormatError(f"{p}: damaged Arrow file ({_short(e)})") from None
    meta = validate_schema(reader.schema, p)
    run = _json_meta(meta, META_RUN, p)
    strings = _json_meta(meta, META_STRINGS, p)
    raw_locs = _json_meta(meta, META_LOCATIONS, p)
    try:
        locations = [SourceLocation(str(f), int(line), int(col), str(fn)) for f, line, col, fn in raw_locs]
    except (TypeError, ValueError):
        raise LogFormatError(f"{p}: damaged quiver metadata (locations)") from None
    num_batches = reader.num_record_batches
    try:   # through plain reads: touching every batch header through the map would keep ~50 KiB per batch resident
        num_events = ipc.open_file(pa.OSFile(str(p), "r")).count_rows()
    except (pa.ArrowInvalid, OSError) as e:
        raise LogFormatError(f"{p}: damaged record batch ({_short(e)})") from None
    return EventLog(
        path=p, run=run, strings=list(strings), locations=locations, version=int(meta[META_VERSION]),
        num_events=num_events, num_batches=num_batches, _reader=reader,
    )
