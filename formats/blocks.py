"""The blocks of strided ACCESS rows (FORMAT.md, format versions 2, 5 and 6).

Why one module: a strided row stands for ``blocks`` blocks of ``size`` bytes every ``stride``
bytes, (format version 5) a row with ``name`` >= 2 for ``name`` *planes* of that run, plane p
moved by ``p * id2`` bytes, and (format version 6) a *masked* row (``op`` & AccessFlag.MASKED) for
the slots of its run whose bit is set in ``id2``; every consumer that wants plain byte ranges (the
race checkers, the views, users' own analyses) expands them here, so the rule lives in one place.

Masked rows expand to one block per present slot (contiguous present slots are not merged): the
blocks a row stands for are then popcount(``id2``), as `trace info` and validation count them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .schema import AccessFlag

MASKED = int(AccessFlag.MASKED)

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl


def block_counts(aux2: np.ndarray) -> np.ndarray:
    """Blocks per plane of a row: ``aux2`` 0 (a plain run) and 1 are one block."""
    return np.maximum(np.asarray(aux2, dtype=np.int64), 1)


def plane_counts(name: np.ndarray | None) -> np.ndarray | None:
    """Planes per ACCESS row: ``name`` -1, 0 or 1 (every version 1-4 log) is one plane; None stays None
    (columns read without ``name``: one plane each)."""
    return None if name is None else np.maximum(np.asarray(name, dtype=np.int64), 1)


def mask_bits(op: np.ndarray | None, id2: np.ndarray | None) -> np.ndarray | None:
    """The slot bitmaps (uint64) of masked ACCESS rows, 0 for every other row; None when no row is masked
    (or the columns were read without ``op`` / ``id2``), so plain logs pay one reduction."""
    if op is None or id2 is None or not len(op):
        return None
    masked = (np.asarray(op) & MASKED) != 0
    if not masked.any():
        return None
    return np.where(masked, np.asarray(id2, dtype=np.int64).view(np.uint64), np.uint64(0))


def row_masks(cols: Mapping[str, np.ndarray], rows: np.ndarray) -> np.ndarray | None:
    """``mask_bits`` of the given rows of a log's columns (None too when ``op`` or ``id2`` was not read)."""
    if "op" not in cols or "id2" not in cols:
        return None
    return mask_bits(cols["op"][rows], cols["id2"][rows])


def row_blocks(aux2: np.ndarray, name: np.ndarray | None = None, masks: np.ndarray | None = None) -> np.ndarray:
    """Blocks a row stands for: planes x blocks per plane; a masked row (``masks`` != 0, see ``mask_bits``)
    its present slots."""
    n = block_counts(aux2)
    p = plane_counts(name)
    out = n if p is None else n * p
    if masks is not None:
        out = np.where(masks != 0, np.bitwise_count(masks).astype(np.int64), out)
    return out


def expand_blocks(addr: np.ndarray, size: np.ndarray, stride: np.ndarray, aux2: np.ndarray,
                  planes: np.ndarray | None = None, plane_stride: np.ndarray | None = None,
                  masks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, lo, hi) of every block of the given ACCESS rows, rows in order, blocks by address (plane by
    plane, then block by block). ``planes`` / ``plane_stride``: the rows' ``name`` and ``id2`` columns
    (None: one plane each). ``masks``: ``mask_bits`` of the rows (None: no masked row); a masked row gives
    one block per present slot (its ``name`` / ``id2`` are no planes)."""
    if masks is not None:
        return _expand_masked(np.asarray(addr), np.asarray(size), np.asarray(stride), np.asarray(aux2),
                              planes, plane_stride, masks)
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


def _expand_masked(addr: np.ndarray, size: np.ndarray, stride: np.ndarray, aux2: np.ndarray,
                   planes: np.ndarray | None, plane_stride: np.ndarray | None,
                   masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``expand_blocks`` of rows some of which are masked: every slot of a masked row (at most 64 each),
    then only the present ones; the other rows as ``expand_blocks`` gives them."""
    masked = masks != 0
    plain = np.flatnonzero(~masked)
    rows_p, lo_p, hi_p = expand_blocks(addr[plain], size[plain], stride[plain], aux2[plain],
                                       None if planes is None else np.asarray(planes)[plain],
                                       None if plane_stride is None else np.asarray(plane_stride)[plain])
    rows_p = plain[rows_p]
    m = np.flatnonzero(masked)
    slots = np.clip(np.asarray(aux2, dtype=np.int64)[m], 1, 64)
    row = np.repeat(m, slots)
    k = np.arange(len(row), dtype=np.int64) - np.repeat(np.cumsum(slots) - slots, slots)
    present = ((masks[row] >> k.astype(np.uint64)) & np.uint64(1)) != 0
    row, k = row[present], k[present]
    lo_m = np.asarray(addr, dtype=np.int64)[row] + k * np.asarray(stride, dtype=np.int64)[row]
    hi_m = lo_m + np.asarray(size, dtype=np.int64)[row]
    all_rows = np.concatenate((rows_p, row))
    order = np.argsort(all_rows, kind="stable")   # rows in order, each row's blocks in address order
    return all_rows[order], np.concatenate((lo_p, lo_m))[order], np.concatenate((hi_p, hi_m))[order]


def explode_blocks(accesses: pl.DataFrame) -> pl.DataFrame:
    """An `accesses` view (``Trace.accesses``) with one row per block: ``addr`` is the block's first
    byte, ``bytes`` its length, ``plane`` its plane and ``block`` its index in the plane's run (a masked
    row: its present slots only, ``block`` the slot index: the view's ``blocks`` of a masked row is its slot
    count and ``mask`` its bitmap); stride/blocks/planes/plane_stride/mask are kept. A view without ``planes`` (an older frame) is one plane a row, without ``mask`` no row is masked."""
    import polars as pl  # only here: the checkers import this module and need no polars

    dtype = accesses.schema["addr"]
    if "planes" not in accesses.columns:
        accesses = accesses.with_columns(pl.lit(1, pl.Int64).alias("planes"), pl.lit(0, pl.Int64).alias("plane_stride"))
    if "mask" not in accesses.columns:
        accesses = accesses.with_columns(pl.lit(None, pl.UInt64).alias("mask"))
    out = (accesses.with_columns(pl.int_ranges(0, pl.col("planes"), dtype=pl.Int64).alias("plane"))
           .explode("plane")
           .with_columns(pl.int_ranges(0, pl.col("blocks"), dtype=pl.Int64).alias("block"))
           .explode("block"))
    bit = pl.lit(2, pl.UInt64).pow(pl.col("block").cast(pl.UInt64))   # (polars has no shift of two columns)
    present = pl.col("mask").is_null() | ((pl.col("mask") & bit) != 0)
    return (out.filter(present)
            .with_columns((pl.col("addr").cast(pl.Int64) + pl.col("plane") * pl.col("plane_stride").cast(pl.Int64)
                           + pl.col("block") * pl.col("stride").cast(pl.Int64)).cast(dtype).alias("addr")))
