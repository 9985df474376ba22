"""What the reader needs to know of a decoded column before anyone uses it: its checksum, its range
and (``kind``) how many rows of each kind; and the ``addr`` running sum (format version 4).

Why: checksums (formats/integrity.py), range checks (formats/validate.py) and the addr running sum
each cost a pass over the column in numpy, together more than decompressing it. batch_scan.c does
them in one pass (built on first use like the VSM kernel, formats/native_build.py). Without a C
compiler the numpy functions below do the same; they are the reference the C code is tested
against (tests/formats/test_batch_scan.py): the digest is integrity.digest's XXH3-64 either way.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import addr_delta, integrity
from .native_build import BuildError, build_library
from .schema import COLUMN_DTYPES

SOURCE = Path(__file__).resolve().with_name("batch_scan.c")
KINDS = 128            # `kind` scans say which kinds in [0, KINDS) occur (batch_scan.c's kinds[2])
CFLAGS = ["-O3", "-std=gnu11", "-Wall"]
_UINT64 = (1 << 64) - 1


@dataclass(frozen=True)
class ColumnScan:
    """A column's digest (integrity.digest's hex); its minimum and maximum when asked for (None
    otherwise); for ``kind``, the kinds in [0, KINDS) that occur (bit k of ``kinds``)."""

    digest: str
    min: int | None = None
    max: int | None = None
    kinds: int | None = None


class _Scan(ctypes.Structure):
    _fields_ = [("min", ctypes.c_int64), ("max", ctypes.c_int64), ("digest", ctypes.c_uint64),
                ("kinds", ctypes.c_uint64 * 2)]


def _xxhash_header() -> Path | None:
    """pyarrow's vendored xxhash.h (a header-only XXH3), found without importing pyarrow."""
    spec = importlib.util.find_spec("pyarrow")
    for root in (spec.submodule_search_locations or []) if spec else []:
        header = Path(root) / "include" / "arrow" / "vendored" / "xxhash" / "xxhash.h"
        if header.is_file():
            return header
    return None


@functools.cache
def library() -> ctypes.CDLL | None:
    """batch_scan.c's library, built on first use; None when it cannot be (no compiler, no header):
    the numpy reference then does the work."""
    header = _xxhash_header()
    if header is None:
        return None
    include = header.parents[3]     # .../include, so that "arrow/vendored/xxhash/xxhash.h" resolves
    try:
        flags = [*CFLAGS, f"-I{include}"]
        lib = ctypes.CDLL(str(build_library("quiver_scan", [SOURCE], flags, [header])))
    except (BuildError, OSError):
        return None
    scan_t = ctypes.POINTER(_Scan)
    for fn in (lib.qv_scan_i32, lib.qv_scan_i64, lib.qv_scan_u64):
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, scan_t, ctypes.c_int]
        fn.restype = None
    lib.qv_scan_kind.argtypes = [ctypes.c_void_p, ctypes.c_int64, scan_t]
    lib.qv_scan_kind.restype = None
    lib.qv_scan_addr_delta.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, scan_t]
    lib.qv_scan_addr_delta.restype = None
    lib.qv_access_shapes.argtypes = [ctypes.c_void_p] * 7 + [ctypes.c_int64, ctypes.c_int, ctypes.c_int32,
                                                             ctypes.c_int64, ctypes.c_double,
                                                             ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int)]
    lib.qv_access_shapes.restype = ctypes.c_int
    return lib


def _lib() -> ctypes.CDLL:
    lib = library()
    if lib is None:
        raise RuntimeError("batch_scan.c could not be built here")
    return lib


def native_scan(values: np.ndarray, ranges: bool = True, kind: bool = False) -> ColumnScan:
    """batch_scan.c over a column (int16 only as ``kind``); RuntimeError without the library."""
    v = np.ascontiguousarray(values)
    r = _Scan()
    if kind:
        _lib().qv_scan_kind(v.ctypes.data, len(v), ctypes.byref(r))
        if not len(v):
            return ColumnScan(f"{r.digest:016x}")
        return ColumnScan(f"{r.digest:016x}", r.min, r.max, r.kinds[0] | r.kinds[1] << 64)
    fn = getattr(_lib(), {np.dtype(np.int32): "qv_scan_i32", np.dtype(np.int64): "qv_scan_i64",
                          np.dtype(np.uint64): "qv_scan_u64"}[v.dtype])
    fn(v.ctypes.data, len(v), ctypes.byref(r), int(ranges))
    if not ranges or not len(v):
        return ColumnScan(f"{r.digest:016x}")
    lo, hi = (r.min & _UINT64, r.max & _UINT64) if v.dtype == np.uint64 else (r.min, r.max)
    return ColumnScan(f"{r.digest:016x}", lo, hi)


def native_decode_addr(stored: np.ndarray) -> tuple[np.ndarray, ColumnScan]:
    """The absolute addresses of a stored (delta) `addr` column and their digest, in one pass."""
    v = np.ascontiguousarray(stored, dtype=np.uint64)
    out = np.empty(len(v), np.uint64)
    r = _Scan()
    _lib().qv_scan_addr_delta(v.ctypes.data, out.ctypes.data, len(v), ctypes.byref(r))
    return out, ColumnScan(f"{r.digest:016x}")


SHAPE_COLUMNS = ("kind", "op", "size", "aux2", "addr2", "id2", "name")


@dataclass(frozen=True)
class AccessShapes:
    """What batch_scan.c's qv_access_shapes says of a batch's ACCESS rows: ``clean`` when none breaks a shape
    rule of strided runs, planes and masked runs (False: one may; formats/validate.py's rules then decide),
    the ``blocks`` they stand for, and whether any is ``masked``."""

    clean: bool
    blocks: float
    masked: bool


def access_shapes(cols: dict[str, np.ndarray], access_kind: int, masked_bit: int, max_slots: int,
                  limit: int) -> AccessShapes | None:
    """qv_access_shapes over a batch's columns; None without the library or one of SHAPE_COLUMNS (or another
    dtype than the log's: the numpy rules then run)."""
    lib = library()
    if lib is None or any(c not in cols for c in SHAPE_COLUMNS):
        return None
    arrays = [np.ascontiguousarray(cols[c]) for c in SHAPE_COLUMNS]
    if any(a.dtype != COLUMN_DTYPES[c] for a, c in zip(arrays, SHAPE_COLUMNS, strict=True)):
        return None
    blocks, masked = ctypes.c_double(), ctypes.c_int()
    clean = lib.qv_access_shapes(*(a.ctypes.data for a in arrays), len(arrays[0]), access_kind, masked_bit,
                                 max_slots, float(limit), ctypes.byref(blocks), ctypes.byref(masked))
    return AccessShapes(bool(clean), blocks.value, bool(masked.value))


def reference_scan(values: np.ndarray, ranges: bool = True, kind: bool = False) -> ColumnScan:
    """The numpy definition of ``native_scan``."""
    if not len(values) or not (ranges or kind):
        return ColumnScan(integrity.digest(values))
    kinds = None
    if kind:
        present = np.unique(values[(values >= 0) & (values < KINDS)]).tolist()
        kinds = sum(1 << k for k in present)
    return ColumnScan(integrity.digest(values), int(values.min()), int(values.max()), kinds)


def reference_decode_addr(stored: np.ndarray) -> tuple[np.ndarray, ColumnScan]:
    values = addr_delta.decode(stored)
    return values, ColumnScan(integrity.digest(values))


def scan(name: str, values: np.ndarray, ranges: bool) -> ColumnScan:
    """The scan of column ``name`` (C when built, numpy otherwise); ``ranges``: with min and max."""
    if library() is None:
        return reference_scan(values, ranges, name == "kind")
    return native_scan(values, ranges, name == "kind")


def decode_addr(stored: np.ndarray) -> tuple[np.ndarray, ColumnScan]:
    return reference_decode_addr(stored) if library() is None else native_decode_addr(stored)
