"""Raw events of some kinds as polars frames with their global ``seq``: the selection every view,
the notebook API and the checkers' tables start from."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import polars as pl

from .reader import EventLog
from .schema import COLUMN_DTYPES, EventKind

# dtype of ``seq`` in every frame (the one ``events_frame`` gives), so frames join on it.
SEQ_DTYPE = pl.UInt32


def iter_events(log: EventLog, kinds: Iterable[int] | None = None, *, ranks: Iterable[int] | None = None,
                from_ns: int | None = None, to_ns: int | None = None,
                columns: Iterable[str] | None = None) -> Iterator[pl.DataFrame]:
    """Raw events of some kinds (all when None) with their global ``seq``, one frame per record
    batch, so a caller can stream a log larger than memory. ``columns`` keeps only those raw
    columns; ``ranks`` and the inclusive ``from_ns``/``to_ns`` window filter rows."""
    names = list(columns) if columns is not None else list(COLUMN_DTYPES)
    kind_list = np.array(sorted({int(k) for k in kinds}), dtype=np.int16) if kinds is not None else None
    rank_list = np.array(sorted({int(r) for r in ranks}), dtype=np.int32) if ranks is not None else None
    offset = 0
    for batch in log.batches():
        n = len(batch["kind"])
        keep = np.ones(n, dtype=bool)
        if kind_list is not None:
            keep &= np.isin(batch["kind"], kind_list)
        if rank_list is not None:
            keep &= np.isin(batch["rank"], rank_list)
        if from_ns is not None:
            keep &= batch["time_ns"] >= from_ns
        if to_ns is not None:
            keep &= batch["time_ns"] <= to_ns
        idx = np.flatnonzero(keep)
        if len(idx):
            cols = {"seq": pl.Series((idx + offset).astype(np.int64)).cast(SEQ_DTYPE)}
            cols.update({name: batch[name][idx] for name in names})
            yield pl.DataFrame(cols)
        offset += n


def empty_events(columns: Iterable[str] | None = None) -> pl.DataFrame:
    names = list(columns) if columns is not None else list(COLUMN_DTYPES)
    cols: dict[str, Any] = {"seq": pl.Series([], dtype=SEQ_DTYPE)}
    cols.update({name: np.zeros(0, dtype=COLUMN_DTYPES[name]) for name in names})
    return pl.DataFrame(cols)


def select_events(log: EventLog, kinds: Iterable[int] | None = None, *, ranks: Iterable[int] | None = None,
                  from_ns: int | None = None, to_ns: int | None = None,
                  columns: Iterable[str] | None = None) -> pl.DataFrame:
    """``iter_events`` in one frame: read batch by batch, so the kinds left out (usually the
    accesses) never sit in memory together."""
    columns = list(columns) if columns is not None else None
    parts = list(iter_events(log, kinds, ranks=ranks, from_ns=from_ns, to_ns=to_ns, columns=columns))
    return pl.concat(parts, rechunk=True) if parts else empty_events(columns)


# Event kinds that describe the OpenMP data environment (no accesses).
MAPPING_KINDS = (EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END, EventKind.MAP_CLAUSE, EventKind.DATA_OP,
                 EventKind.KERNEL)
