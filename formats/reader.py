"""Open and validate event logs. Every command goes through ``read_log``.

A log of up to PLAIN_MAX_BYTES in the subset formats/ipc_file.py writes (uncompressed integer columns) is
read without pyarrow (formats/ipc_read.py: ~0.06 s of import, a good part of a small log's analysis);
any other file, or anything that reader does not expect, is read with pyarrow, which gives its answer
and its errors. Both paths hand the same columns to the same checks.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from . import batch_scan, integrity
from .errors import LogFormatError
from .ipc_read import PlainIpcFile, Unsupported
from .safe_write import fd_path
from .schema import (
    COLUMN_DTYPES,
    COLUMN_NAMES,
    DELTA_ADDR_VERSION,
    FORMAT_NAME,
    FORMAT_VERSION,
    META_FORMAT,
    META_LOCATIONS,
    META_RUN,
    META_STRINGS,
    META_VERSION,
    MIN_FORMAT_VERSION,
    arrow_schema,
)
from .sniff import ARROW_MAGIC
from .validate import RANGE_COLUMNS, BatchRules

if TYPE_CHECKING:
    import pyarrow as pa
    from pyarrow import ipc

CHECKSUM_VERSION = 3     # first format version whose batches carry checksums (formats/integrity.py)
# zstd turns a constant column of a million rows into a few bytes: ~100 bytes of file for a million
# rows is already extreme; more than this is a crafted row count (before anything is allocated)
MAX_ROWS_PER_BYTE = 1 << 16
# logs up to this size are tried without pyarrow (formats/ipc_read.py), the whole file read into memory:
# a small run's log is written in that subset (tracer/finalize.py PLAIN_MAX_ROWS: ~1.5 MB at most)
PLAIN_MAX_BYTES = 16 << 20


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
    except (KeyError, ValueError, RecursionError):
        raise LogFormatError(f"{path}: damaged quiver metadata ({key.decode()})") from None


def validate_schema(schema: pa.Schema, path: Path) -> dict[bytes, bytes]:
    """Check an Arrow schema is a quiver log this version can read; return its metadata."""
    return _check_schema(schema.metadata or {}, schema.names, [str(f.type) for f in schema], path)


def _check_schema(meta: dict[bytes, bytes], names: list[str], types: list[str], path: Path) -> dict[bytes, bytes]:
    """validate_schema over the metadata, column names and type names (pyarrow's: "int64") of a schema."""
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
    if names != COLUMN_NAMES:
        missing = [c for c in COLUMN_NAMES if c not in names]
        detail = f"missing columns {missing}" if missing else "columns in an unexpected order"
        raise LogFormatError(f"{path}: not a valid quiver log: {detail}")
    for name, got in zip(names, types, strict=True):
        if got != COLUMN_DTYPES[name].name:
            raise LogFormatError(f"{path}: column '{name}' has type {got}, expected {COLUMN_DTYPES[name].name}")
    return meta


class ConstantColumns:
    """Read-only arrays of one value, and their scans, shared by the batches whose metadata says a column
    holds that value (integrity.constants): such a column is neither decompressed nor scanned again.
    At most ``MAX_BYTES`` are kept (a log's batches have one length and few distinct constants)."""

    MAX_BYTES = 64 << 20

    def __init__(self) -> None:
        self._arrays: dict[tuple[str, int, int], np.ndarray] = {}
        self._scans: dict[tuple[str, int, int], batch_scan.ColumnScan] = {}
        self._bytes = 0

    def array(self, name: str, value: int, rows: int) -> np.ndarray:
        key = (name, value, rows)
        a = self._arrays.get(key)
        if a is None:
            a = np.full(rows, value, dtype=COLUMN_DTYPES[name])
            a.flags.writeable = False
            if self._bytes + a.nbytes > self.MAX_BYTES:
                self._arrays.clear()
                self._scans.clear()
                self._bytes = 0
            self._arrays[key] = a
            self._bytes += a.nbytes
        return a

    def scan(self, name: str, value: int, rows: int) -> batch_scan.ColumnScan:
        key = (name, value, rows)
        s = self._scans.get(key)
        if s is None:
            s = self._scans[key] = batch_scan.scan(name, self.array(name, value, rows), name in RANGE_COLUMNS)
        return s


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
    _reader: ipc.RecordBatchFileReader | None = field(repr=False)   # None: read without pyarrow (_plain)
    _rules: BatchRules = field(repr=False)
    _plain: PlainIpcFile | None = field(default=None, repr=False, compare=False)
    _checked: set = field(default_factory=set, repr=False, compare=False)   # (batch, column) verified
    _scans: dict = field(default_factory=dict, repr=False, compare=False)   # (batch, column) -> its checked scan
    _projections: dict = field(default_factory=dict, repr=False, compare=False)
    # False: decode every stored column, also those a batch says hold one value (`trace info --verify`)
    hints: bool = field(default=True, repr=False, compare=False)
    # whether the last batch read through pyarrow had the hint: only then is the next one read in two steps
    # (its metadata with `kind`, then the columns the hint does not cover), else in one (logs without it)
    _hinted: bool = field(default=True, repr=False, compare=False)
    _constants: ConstantColumns = field(default_factory=lambda: ConstantColumns(), repr=False, compare=False)

    @cached_property
    def table(self) -> pa.Table:
        """All events as one Arrow table; every batch is checked first (checksums, values)."""
        import pyarrow as pa

        if self._plain is not None:
            schema = arrow_schema(self._plain.metadata)
            return pa.Table.from_batches([pa.RecordBatch.from_arrays([pa.array(c) for c in cols.values()],
                                                                     schema=schema)
                                          for cols in self._plain_batches()], schema=schema)
        batches = []
        for i in range(self.num_batches):
            batch, _ = self._decode(self._reader, i, list(COLUMN_NAMES), arrow=True)
            batches.append(batch)
        try:
            return pa.Table.from_batches(batches, schema=self._reader.schema)
        except (pa.ArrowException, OSError) as e:
            raise LogFormatError(f"{self.path}: damaged event data ({_short(e)})") from None

    def col(self, name: str) -> np.ndarray:
        """One column as a numpy array (zero-copy when the log is uncompressed and has one batch)."""
        if name not in COLUMN_NAMES:
            raise KeyError(name)
        if self._plain is not None:
            return self._plain_columns[name]
        return self.table.column(name).to_numpy()

    def _plain_batches(self) -> list[dict[str, np.ndarray]]:
        return [self._decode(None, i, list(COLUMN_NAMES))[1] for i in range(self.num_batches)]

    @cached_property
    def _plain_columns(self) -> dict[str, np.ndarray]:
        """Every column of a log read without pyarrow, its batches checked and joined (what `table` gives)."""
        parts = self._plain_batches()
        if len(parts) == 1:
            return parts[0]
        return {n: np.concatenate([p[n] for p in parts]) if parts else np.empty(0, COLUMN_DTYPES[n])
                for n in COLUMN_NAMES}

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
        return self._decode(self._projection(tuple(names)) if self._plain is None else None, i, names)[1]

    def kinds_in_batch(self, i: int) -> int | None:
        """The event kinds below 128 that batch ``i`` holds (bit k: kind k), once its ``kind`` column has
        been read and checked; None before (or without the C batch scan's answer)."""
        scan = self._scans.get((i, "kind"))
        return scan.kinds if scan is not None else None

    def _decode(self, reader: ipc.RecordBatchFileReader | None, i: int, names: list[str],
                arrow: bool = False) -> tuple[pa.RecordBatch | None, dict[str, np.ndarray]]:
        """Batch ``i`` of ``reader`` (which reads ``names``; None: of the log read without pyarrow) and its
        columns, checked: decodable, no nulls, checksums (format version 3), values (formats/validate.py).
        LogFormatError otherwise.
        ``arrow``: the returned batch holds the decoded addresses too (`table` needs it; the columns
        alone do not, and wrapping an array for Arrow imports numpy.ma, ~10 ms of a small analysis)."""
        try:
            constant: dict[str, int] = {}
            if reader is None:   # its batches were checked when the file was opened (formats/ipc_read.py)
                batch, (raw, meta) = None, self._plain.batch(i, names)
                if self.hints and not arrow and self.version >= CHECKSUM_VERSION:
                    constant = {n: v for n, v in integrity.constants(meta, COLUMN_DTYPES).items() if n in raw}
                    raw.update((n, self._constants.array(n, v, len(raw[n]))) for n, v in constant.items())
            elif arrow or not self.hints or self.version < CHECKSUM_VERSION or not self._hinted:
                batch, raw, meta = self._arrow_batch(reader, i, names)
                self._hinted = integrity.META_CONSTANT in (meta or {})   # the next batch likely alike
            else:
                batch, raw, meta, constant = self._hinted_batch(i, names)
            # each column once per log (later passes re-read the same batches)
            check = not self._checked.issuperset((i, name) for name in names)
            cols, scans = {}, {}
            for j, name in enumerate(names):
                cols[name] = raw[name]
                if name in constant:   # not decoded: one shared array per value, scanned once
                    scans[name] = self._constants.scan(name, constant[name], len(raw[name]))
                elif name == "addr" and self.version >= DELTA_ADDR_VERSION:
                    cols[name], scans[name] = batch_scan.decode_addr(cols[name])
                    if arrow:
                        import pyarrow as pa

                        batch = batch.set_column(j, batch.schema.field(j), pa.array(cols[name]))
                elif check:   # a column scanned by an earlier read of this batch (e.g. `kind`) is not again
                    scans[name] = self._scans.get((i, name)) or batch_scan.scan(name, cols[name],
                                                                                 name in RANGE_COLUMNS)
        except (*_arrow_errors(), OSError, MemoryError, ValueError, IndexError) as e:
            raise LogFormatError(f"{self.path}: damaged log (batch {i} of {self.num_batches}: {_short(e)})"
                                 f"{self._lost_around(i)}") from None
        if check:
            if self.version >= CHECKSUM_VERSION:
                integrity.verify(self.path, i, meta, cols, COLUMN_NAMES, {n: s.digest for n, s in scans.items()})
            self._rules.check(cols, i, lambda: self.batch(i, ["time_ns"])["time_ns"], scans)
            self._scans.update(((i, name), scan) for name, scan in scans.items())
            if "kind" in names:   # without `kind`, the kind-dependent rules were not applied
                self._checked.update((i, name) for name in names)
        return batch, cols

    def _arrow_batch(self, reader: ipc.RecordBatchFileReader, i: int,
                     names: list[str]) -> tuple[pa.RecordBatch, dict[str, np.ndarray], Any]:
        """Batch ``i`` of a pyarrow reader, its columns (no nulls) and custom metadata."""
        if self.version >= CHECKSUM_VERSION:
            found = reader.get_batch_with_custom_metadata(i)
            batch, meta = found.batch, found.custom_metadata
        else:
            batch, meta = reader.get_batch(i), None
        if batch.num_columns != len(names):
            raise LogFormatError(f"{self.path}: damaged log (batch {i}): {batch.num_columns} columns")
        cols = {}
        for j, name in enumerate(names):
            column = batch.column(j)
            if column.null_count:
                raise LogFormatError(f"{self.path}: damaged log (batch {i}): nulls in column '{name}'"
                                     f"{integrity.lost(meta)}")
            cols[name] = column.to_numpy()
        return batch, cols, meta

    def _hinted_batch(self, i: int, names: list[str]) -> tuple[None, dict[str, np.ndarray], Any, dict[str, int]]:
        """Batch ``i``'s columns ``names``, those its metadata says hold one value (integrity.constants)
        not decompressed but given as a shared read-only array of that value; the checksums then say
        whether the hint was right. The metadata comes with the batch's ``kind`` column, the narrowest
        (pyarrow decodes every column when asked for none).
        Returns (None, columns, custom metadata, the constant columns among ``names``)."""
        _, probe, meta = self._arrow_batch(self._projection(("kind",)), i, ["kind"])
        self._hinted = integrity.META_CONSTANT in (meta or {})
        rows = len(probe["kind"])
        constant = {n: v for n, v in integrity.constants(meta, COLUMN_DTYPES).items() if n in names}
        rest = [n for n in names if n not in constant and n != "kind"]
        cols = {}
        if rest:
            _, cols, _ = self._arrow_batch(self._projection(tuple(rest)), i, rest)
            if len(cols[rest[0]]) != rows:
                raise LogFormatError(f"{self.path}: damaged log (batch {i}): columns of different lengths"
                                     f"{integrity.lost(meta)}")
        if "kind" in names and "kind" not in constant:
            cols["kind"] = probe["kind"]
        for n, v in constant.items():
            cols[n] = self._constants.array(n, v, rows)
        return None, cols, meta, constant

    def _lost_around(self, i: int) -> str:
        """What an undecodable batch held, from its neighbours' summaries: the time span between them."""
        spans = []
        for j in (i - 1, i + 1):
            try:
                if not 0 <= j < self.num_batches:
                    meta = None
                elif self._plain is not None:
                    meta = self._plain.batches[j][1]
                else:
                    meta = self._reader.get_batch_with_custom_metadata(j).custom_metadata
                spans.append(json.loads(meta[integrity.META_SUMMARY])["t"] if meta else None)
            except (*_arrow_errors(), OSError, KeyError, TypeError, ValueError):
                spans.append(None)
        lo = f"after {spans[0][1]} ns" if spans[0] else "from the start"
        hi = f"before {spans[1][0]} ns" if spans[1] else "to the end"
        return f"; events {lo} {hi} are lost" if self.version >= CHECKSUM_VERSION else ""

    def _projection(self, names: tuple[str, ...]) -> ipc.RecordBatchFileReader:
        """A reader of the same file that decodes only ``names`` (Arrow IPC field projection).

        It reads through plain file reads, not a memory map: the pages of a mapped file stay in the
        process's resident set once touched, so streaming a log larger than memory through a map
        would look (and be accounted) as if the whole log were loaded.

        It decompresses on the calling thread (``use_threads=False``): a batch's few buffers handed to
        Arrow's thread pool cost more CPU in wake-ups and hand-offs than they save (~6% of a VSM
        check from the file), and a checker runs on one core."""
        import pyarrow as pa
        from pyarrow import ipc

        if names not in self._projections:
            options = ipc.IpcReadOptions(included_fields=[COLUMN_NAMES.index(n) for n in names], use_threads=False)
            try:
                self._projections[names] = ipc.open_file(pa.OSFile(str(self.path), "r"), options=options)
            except (pa.ArrowException, OSError) as e:
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


def _arrow_errors() -> tuple[type[BaseException], ...]:
    """pyarrow's exception base once pyarrow is loaded (a log read without it raises none)."""
    pa = sys.modules.get("pyarrow")
    return (pa.ArrowException,) if pa is not None else ()


def _short(e: BaseException) -> str:
    return str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__


def regular_file_size(p: Path, what: str = "an event log") -> int:
    """The size of ``p`` when it is a regular file, checked before anything opens it: a FIFO or a
    device would block or never end (LogFormatError otherwise)."""
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise LogFormatError(f"{p}: no such file") from None
    except OSError as e:
        raise LogFormatError(f"{p}: cannot read ({e.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise LogFormatError(f"{p}: is a directory, not {what}")
    if not stat.S_ISREG(st.st_mode):
        raise LogFormatError(f"{p}: not a regular file (a FIFO, socket or device), not {what}")
    return st.st_size


def _open_regular(p: Path) -> BinaryIO:
    """Open without blocking on a FIFO swapped in after the check, and refuse it."""
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LogFormatError(f"{p}: not a regular file, not an event log")
    return os.fdopen(fd, "rb")


def _footer_schema(f: BinaryIO) -> pa.Schema:
    """The schema in the footer of the regular file open as ``f``, read by Arrow through a file of its
    own (safe_write.fd_path: the same file, no FIFO swapped in) on the calling thread.

    Why not ``ipc.open_file(f)``: Arrow then reads through a Python file object, and its buffers are
    Python objects; one released by a pool thread needs the GIL, which a thread waiting for the pool
    while holding it never gives (apache/arrow#50482; a fuzzing run hung in one such read for minutes)."""
    import pyarrow as pa
    from pyarrow import ipc

    with pa.OSFile(fd_path(f.fileno()), "r") as source:
        return ipc.open_file(source, options=ipc.IpcReadOptions(use_threads=False)).schema


def is_quiver_log(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular file with a quiver log's schema (footer checked, no event read)."""
    import pyarrow as pa

    try:
        p = Path(path)
        regular_file_size(p)
        with _open_regular(p) as f:
            if f.read(6) != ARROW_MAGIC:
                return False
            validate_schema(_footer_schema(f), p)
        return True
    except (LogFormatError, OSError, ValueError, pa.ArrowException):
        return False


def log_run(path: str | os.PathLike) -> dict[str, Any]:
    """The run metadata of a log, from its footer alone (no event is read); LogFormatError if unusable."""
    import pyarrow as pa

    p = Path(path)
    regular_file_size(p)
    try:
        with _open_regular(p) as f:
            meta = validate_schema(_footer_schema(f), p)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise LogFormatError(f"{p}: damaged Arrow file ({_short(e)})") from None
    run = _json_meta(meta, META_RUN, p)
    if not isinstance(run, dict):
        raise LogFormatError(f"{p}: damaged quiver metadata (run)")
    return run


def read_log(path: str | os.PathLike) -> EventLog:
    """Open ``path`` as a quiver log or raise LogFormatError with a one-line reason."""
    p = Path(path)
    size = regular_file_size(p)
    try:
        with _open_regular(p) as f:
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
    plain = _plain_file(p) if size <= PLAIN_MAX_BYTES else None
    if plain is not None:
        reader = None
        meta = _check_schema(plain.metadata, [n for n, _ in plain.fields], [d.name for _, d in plain.fields], p)
        num_batches, num_events = plain.num_batches, plain.num_rows
    else:
        reader, meta, num_batches, num_events = _arrow_file(p)
    version = int(meta[META_VERSION])
    if version >= CHECKSUM_VERSION:
        integrity.verify_metadata(p, meta)
    run = _json_meta(meta, META_RUN, p)
    strings = _json_meta(meta, META_STRINGS, p)
    raw_locs = _json_meta(meta, META_LOCATIONS, p)
    if not isinstance(run, dict) or not isinstance(strings, list) or not all(isinstance(x, str) for x in strings):
        raise LogFormatError(f"{p}: damaged quiver metadata (run or strings)")
    try:
        locations = [SourceLocation(str(f), int(line), int(col), str(fn)) for f, line, col, fn in raw_locs]
    except (TypeError, ValueError, OverflowError):
        raise LogFormatError(f"{p}: damaged quiver metadata (locations)") from None
    if num_events > size * MAX_ROWS_PER_BYTE:
        raise LogFormatError(f"{p}: damaged log: {num_events} events in a file of {size} bytes")
    rules = BatchRules.of(p, run, len(strings), len(locations), num_batches, version)
    return EventLog(
        path=p, run=run, strings=list(strings), locations=locations, version=version,
        num_events=num_events, num_batches=num_batches, _reader=reader, _rules=rules, _plain=plain,
    )


def _plain_file(p: Path) -> PlainIpcFile | None:
    """The log read whole without pyarrow (formats/ipc_read.py), or None: read it with pyarrow."""
    try:
        with _open_regular(p) as f:
            data = np.empty(os.fstat(f.fileno()).st_size, np.uint8)
            if f.readinto(data) != len(data):
                return None
        data.flags.writeable = False
        return PlainIpcFile(data)
    except (Unsupported, OSError, MemoryError):
        return None


def _arrow_file(p: Path) -> tuple[ipc.RecordBatchFileReader, dict[bytes, bytes], int, int]:
    """(reader, schema metadata, batches, rows) of the log through pyarrow; LogFormatError if unusable."""
    import pyarrow as pa
    from pyarrow import ipc

    try:
        reader = ipc.open_file(pa.memory_map(str(p), "r"))
        meta = validate_schema(reader.schema, p)
        num_batches = reader.num_record_batches
        # through plain reads: touching every batch header through the map would keep ~50 KiB per batch resident
        num_events = ipc.open_file(pa.OSFile(str(p), "r")).count_rows()
    except (pa.ArrowException, OSError, ValueError) as e:
        raise LogFormatError(f"{p}: damaged Arrow file ({_short(e)})") from None
    return reader, meta, num_batches, num_events
