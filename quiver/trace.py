"""``quiver.open``: one event log as polars frames, one per event family."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl

from quiver.formats import FAMILIES, EventKind, EventLog, read_log
from quiver.formats.schema import COLUMN_DTYPES
from quiver.formats.views import events_frame, family_view

# dtype of ``seq`` in every frame (the one ``events_frame`` gives), so frames join on it.
SEQ_DTYPE = pl.UInt32


def select_events(log: EventLog, kinds: Iterable[int] | None = None, *, ranks: Iterable[int] | None = None,
                  from_ns: int | None = None, to_ns: int | None = None,
                  columns: Iterable[str] | None = None) -> pl.DataFrame:
    """Raw events of some kinds (all when None) with their global ``seq``, read one record batch
    at a time so the kinds left out (usually the accesses) never sit in memory together.
    ``columns`` keeps only those raw columns (all when None)."""
    names = list(columns) if columns is not None else list(COLUMN_DTYPES)
    kind_list = np.array(sorted({int(k) for k in kinds}), dtype=np.int16) if kinds is not None else None
    rank_list = np.array(sorted({int(r) for r in ranks}), dtype=np.int32) if ranks is not None else None
    parts: list[pl.DataFrame] = []
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
            parts.append(pl.DataFrame(cols))
        offset += n
    if not parts:
        cols = {"seq": pl.Series([], dtype=SEQ_DTYPE)}
        cols.update({name: np.zeros(0, dtype=COLUMN_DTYPES[name]) for name in names})
        return pl.DataFrame(cols)
    return pl.concat(parts, rechunk=True)


# Event kinds that describe the OpenMP data environment (no accesses).
MAPPING_KINDS = (EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END, EventKind.MAP_CLAUSE, EventKind.DATA_OP,
                 EventKind.KERNEL)


class Trace:
    """An opened log. Attributes named after event families (``maps``, ``data_ops``, ``accesses``,
    ``rma`` ...) are polars DataFrames with readable columns and source locations."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._views: dict[str, pl.DataFrame] = {}

    @classmethod
    def from_arrow(cls, path: str | os.PathLike) -> Trace:
        return cls(read_log(path))

    @property
    def run(self) -> dict[str, Any]:
        return self.log.run

    @cached_property
    def events(self) -> pl.DataFrame:
        """Every event with its raw integer columns and ``seq``."""
        return events_frame(self.log)

    def view(self, family: str) -> pl.DataFrame:
        if family not in self._views:
            self._views[family] = family_view(self.log, family, self.events)
        return self._views[family]

    def __getattr__(self, name: str) -> pl.DataFrame:
        if name in FAMILIES:
            return self.view(name)
        raise AttributeError(name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(FAMILIES))

    def counts(self) -> dict[str, int]:
        """Number of events per family."""
        kinds = self.events.group_by("kind").len()
        by_kind = dict(zip(kinds["kind"].to_list(), kinds["len"].to_list()))
        return {fam: sum(by_kind.get(int(k), 0) for k in ks) for fam, ks in FAMILIES.items()}

    def summary(self) -> dict[str, Any]:
        from quiver.info import log_summary
        return log_summary(self.log, self.events)

    def __repr__(self) -> str:
        return f"<quiver.Trace {self.log.path} program={self.run.get('program')!r} events={self.log.num_events}>"


def open(path: str | os.PathLike) -> Trace:
    """Open an event log; raises ``quiver.formats.LogFormatError`` if it is unusable."""
    return Trace.from_arrow(path)
