"""The blocks of strided ACCESS rows (FORMAT.md, format version 2).

Why one module: a strided row stands for ``blocks`` blocks of ``size`` bytes every ``stride``
bytes; every consumer that wants plain byte ranges (the race checkers, the views, users' own
analyses) expands them here, so the rule lives in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl


def block_counts(aux2: np.ndarray) -> np.ndarray:
    """Blocks per row: ``aux2`` 0 (a plain run) and 1 are one block."""
    return np.maximum(np.asarray(aux2, dtype=np.int64), 1)


def expand_blocks(addr: np.ndarray, size: np.ndarray, stride: np.ndarray,
                  aux2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, lo, hi) of every block of the given ACCESS rows, rows in order, blocks by address."""
    n = block_counts(aux2)
    rows = np.arange(len(n), dtype=np.int64)
    if len(n) == 0 or int(n.max()) == 1:
        lo = np.asarray(addr, dtype=np.int64)
        return rows, lo, lo + np.asarray(size, dtype=np.int64)
    row = np.repeat(rows, n)
    k = np.arange(len(row), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
    lo = np.asarray(addr, dtype=np.int64)[row] + k * np.asarray(stride, dtype=np.int64)[row]
    return row, lo, lo + np.asarray(size, dtype=np.int64)[row]


def explode_blocks(accesses: pl.DataFrame) -> pl.DataFrame:
    """An `accesses` view (``Trace.accesses``) with one row per block: ``addr`` is the block's first
    byte, ``bytes`` its length, ``block`` its index in the run; stride/blocks are kept."""
    import polars as pl  # only here: the checkers import this module and need no polars

    dtype = accesses.schema["addr"]
    return (accesses.with_columns(pl.int_ranges(0, pl.col("blocks"), dtype=pl.Int64).alias("block"))
            .explode("block")
            .with_columns((pl.col("addr").cast(pl.Int64) + pl.col("block") * pl.col("stride").cast(pl.Int64))
                          .cast(dtype).alias("addr")))
