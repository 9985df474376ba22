"""The blocks of strided ACCESS rows (FORMAT.md, format versions 2 and 5).

Why one module: a strided row stands for ``blocks`` blocks of ``size`` bytes every ``stride``
bytes, and (format version 5) a row with ``name`` >= 2 for ``name`` *planes* of that run, plane p
moved by ``p * id2`` bytes; every consumer that wants plain byte ranges (the race checkers, the
views, users' own analyses) expands them here, so the rule lives in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl


def block_counts(aux2: np.ndarray) -> np.ndarray:
    """Blocks per plane of a row: ``aux2`` 0 (a plain run) and 1 are one block."""
    return np.maximum(np.asarray(aux2, dtype=np.int64), 1)


def plane_counts(name: np.ndarray | None) -> np.ndarray | None:
    """Planes per ACCESS row: ``name`` -1, 0 or 1 (every version 1-4 log) is one plane; None stays None
    (columns read without ``name``: one plane each)."""
    return None if name is None else np.maximum(np.asarray(name, dtype=np.int64), 1)


def row_blocks(aux2: np.ndarray, name: np.ndarray | None = None) -> np.ndarray:
    """Blocks a row stands for: planes x blocks per plane."""
    n = block_counts(aux2)
    p = plane_counts(name)
    return n if p is None else n * p


def expand_blocks(addr: np.ndarray, size: np.ndarray, stride: np.ndarray, aux2: np.ndarray,
                  planes: np.ndarray | None = None,
                  plane_stride: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, lo, hi) of every block of the given ACCESS rows, rows in order, blocks by address (plane by
    plane, then block by block). ``planes`` / ``plane_stride``: the rows' ``name`` and ``id2`` columns
    (None: one plane each)."""
    n = block_counts(aux2)
    p = plane_counts(planes)
    per_row = n if p is None else n * p
    rows = np.arange(len(n), dtype=np.int64)
    if len(n) == 0 or int(per_row.max()) == 1:
        lo = np.asarray(addr, dtype=np.int64)
        return rows, lo, lo + np.asarray(size, dtype=np.int64)
    row = np.repeat(rows, per_row)
    k = np.arange(len(row), dtype=np.int64) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    lo = np.asarray(addr, dtype=np.int64)[row]
    stride64 = np.asarray(stride, dtype=np.int64)[row]
    if p is not None and int(p.max()) > 1:
        nr = n[row]
        lo = lo + (k // nr) * np.asarray(plane_stride, dtype=np.int64)[row] + (k % nr) * stride64
    else:
        lo = lo + k * stride64
    return row, lo, lo + np.asarray(size, dtype=np.int64)[row]


def explode_blocks(accesses: pl.DataFrame) -> pl.DataFrame:
    """An `accesses` view (``Trace.accesses``) with one row per block: ``addr`` is the block's first
    byte, ``bytes`` its length, ``plane`` its plane and ``block`` its index in the plane's run;
    stride/blocks/planes/plane_stride are kept. A view without ``planes`` (an older frame) is one plane a row."""
    import polars as pl  # only here: the checkers import this module and need no polars

    dtype = accesses.schema["addr"]
    if "planes" not in accesses.columns:
        accesses = accesses.with_columns(pl.lit(1, pl.Int64).alias("planes"), pl.lit(0, pl.Int64).alias("plane_stride"))
    return (accesses.with_columns(pl.int_ranges(0, pl.col("planes"), dtype=pl.Int64).alias("plane"))
            .explode("plane")
            .with_columns(pl.int_ranges(0, pl.col("blocks"), dtype=pl.Int64).alias("block"))
            .explode("block")
            .with_columns((pl.col("addr").cast(pl.Int64) + pl.col("plane") * pl.col("plane_stride").cast(pl.Int64)
                           + pl.col("block") * pl.col("stride").cast(pl.Int64)).cast(dtype).alias("addr")))
