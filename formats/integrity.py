"""Per-record-batch checksums (format version 3) and what a damaged batch loses.

Why: Arrow IPC has no checksums; a flipped bit in a compressed column usually still decompresses,
into wrong addresses, sizes or names, and the report would be confidently wrong. Each batch carries
in its custom metadata the XXH3-64 of every column's values (as the reader decodes them, so a
projected read checks only what it reads, at ~16 GB/s) and a summary of its events (time span,
ranks, threads) so that a damaged batch can be named together with what is lost.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xxhash

from .errors import LogFormatError

if TYPE_CHECKING:
    import numpy as np

META_CHECKSUMS = b"quiver.xxh3"      # comma-separated hex digests, one per column in schema order
META_SUMMARY = b"quiver.summary"     # {"t": [first, last], "ranks": "0-3,7", "threads": "0-8"}
META_CONSTANT = b"quiver.constant"   # {"rank": 0, "aux2": 0}: the columns holding one value in the batch


META_DIGEST = b"quiver.meta_xxh3"    # schema metadata: digest of the run, strings and locations values
_COVERED = (b"quiver.run", b"quiver.strings", b"quiver.locations")


def metadata_digest(meta: Mapping[bytes, bytes]) -> bytes:
    """The digest a log's schema metadata carries over its run, strings and locations."""
    h = xxhash.xxh3_64()
    for key in _COVERED:
        value = meta.get(key, b"")
        h.update(len(value).to_bytes(8, "little") + value)
    return h.hexdigest().encode()


def verify_metadata(path: Path, meta: Mapping[bytes, bytes]) -> None:
    if meta.get(META_DIGEST) != metadata_digest(meta):
        raise LogFormatError(f"{path}: damaged log: its run metadata, strings or locations do not match their "
                             "checksum")


def digest(values: np.ndarray | array) -> str:
    """XXH3-64 of a column's bytes (a numpy array, or an array.array: a small run's finalize)."""
    if not isinstance(values, array):
        import numpy as np

        values = np.ascontiguousarray(values)
    return f"{xxhash.xxh3_64_intdigest(values):016x}"


def _all_equal(values: array) -> bool:
    """Every element of a non-empty array.array is its first."""
    return values.tobytes() == (array(values.typecode, values[:1]) * len(values)).tobytes()


def distinct_ints(values: Any) -> list[int]:
    """The distinct values of a column, ascending, as Python ints (numpy array or array.array)."""
    if isinstance(values, array):
        return [values[0]] if len(values) and _all_equal(values) else sorted(set(values))
    from .sets import sorted_unique

    return sorted_unique(values).tolist()


def ranges(values: Any, limit: int | None = 12) -> str:
    """``"0-3,7"``: the distinct values of ``values`` as ranges (at most ``limit`` ranges, then '...')."""
    return ranges_of(distinct_ints(values), limit)


def ranges_of(u: list[int], limit: int | None = 12) -> str:
    """ranges() of distinct ints already in ascending order."""
    parts: list[str] = []
    for i, v in enumerate(u):
        if i and v == u[i - 1] + 1:
            continue
        j = i
        while j + 1 < len(u) and u[j + 1] == u[j] + 1:
            j += 1
        parts.append(f"{v}" if j == i else f"{v}-{u[j]}")
    if limit is None or len(parts) <= limit:
        return ",".join(parts)
    return ",".join(parts[:limit]) + ",..."


def _constant(values: np.ndarray | array) -> int | None:
    """The one value of ``values`` when all its rows hold it (None otherwise; the ends and the middle
    are looked at first, so a column that varies rarely costs a full pass)."""
    if not len(values):
        return None
    first = values[0]
    if values[-1] != first or values[len(values) // 2] != first:
        return None
    if isinstance(values, array):   # a small run's finalize (no numpy): compared as bytes, at memcmp speed
        return int(first) if _all_equal(values) else None
    if not (values == first).all():
        return None
    return int(first)


def batch_metadata(columns: Mapping[str, np.ndarray], names: list[str], constant: bool = True,
                   time_sorted: bool = False) -> dict[bytes, bytes]:
    """The custom metadata of the batch holding ``columns``; ``constant``: with the hint naming the
    columns that hold one value (written for compressed batches, which readers would decompress).
    ``time_sorted``: the caller knows `time_ns` ascends (its span is then its ends)."""
    t = columns["time_ns"]
    if not len(t):
        span = []
    elif time_sorted:
        span = [int(t[0]), int(t[-1])]
    else:
        span = [min(t), max(t)] if isinstance(t, array) else [int(t.min()), int(t.max())]
    summary = {"t": span, "ranks": ranges(columns["rank"]),
               "threads": ranges(columns["thread"])}
    meta = {META_CHECKSUMS: ",".join(digest(columns[n]) for n in names).encode(),
            META_SUMMARY: json.dumps(summary, sort_keys=True).encode()}
    same = {n: v for n in names if (v := _constant(columns[n])) is not None} if constant else {}
    if same:
        meta[META_CONSTANT] = json.dumps(same, separators=(",", ":")).encode()
    return meta


def constants(meta: Mapping[bytes, bytes] | None, dtypes: Mapping[str, np.dtype]) -> dict[str, int]:
    """The columns a batch's metadata says hold one value, and that value; {} when it says nothing or
    anything unexpected (a damaged hint is ignored: the columns are then decoded, and their checksums
    say whether they are damaged). A wrong value is caught by the column's checksum all the same."""
    try:
        raw = json.loads((meta or {})[META_CONSTANT])
    except (KeyError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(raw, dict):
        return {}
    out = {}
    for name, value in raw.items():
        dtype = dtypes.get(name)
        if dtype is None or type(value) is not int or not _fits(value, dtype):
            return {}
        out[name] = value
    return out


def _fits(value: int, dtype: np.dtype) -> bool:
    bits = 8 * dtype.itemsize
    return 0 <= value < 1 << bits if dtype.kind == "u" else -(1 << (bits - 1)) <= value < 1 << (bits - 1)


def lost(meta: Mapping[bytes, bytes] | None) -> str:
    """'; lost: ranks 0-1, threads 0-3, time 120-5000 ns' from a batch's summary, or ''."""
    try:
        s = json.loads((meta or {})[META_SUMMARY])
        span = f", time {s['t'][0]}-{s['t'][1]} ns" if s.get("t") else ""
        return f"; its events are lost: ranks {s['ranks']}, threads {s['threads']}{span}"
    except (KeyError, TypeError, ValueError, IndexError):
        return ""


def verify(path: Path, batch: int, meta: Mapping[bytes, bytes] | None, columns: Mapping[str, np.ndarray],
           names: list[str], digests: Mapping[str, str] | None = None) -> None:
    """Raise LogFormatError('damaged log (batch N)...') when a column's values do not match its digest.
    ``names``: every column of the schema (the digests' order); ``columns`` may be any of them;
    ``digests``: their digests when already computed (formats/batch_scan.py), by column name."""
    try:
        want = dict(zip(names, (meta or {})[META_CHECKSUMS].decode().split(","), strict=True))
    except (KeyError, UnicodeDecodeError, ValueError):
        raise LogFormatError(f"{path}: damaged log (batch {batch}): its checksums are missing or damaged{lost(meta)}") from None
    for name, values in columns.items():
        got = digests[name] if digests is not None and name in digests else digest(values)
        if got != want.get(name):
            raise LogFormatError(f"{path}: damaged log (batch {batch}): column '{name}' does not match its "
                                 f"checksum{lost(meta)}")
