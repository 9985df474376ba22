"""``quiver.open``: one event log as polars frames, one per event family."""

from __future__ import annotations

import os
from functools import cached_property
from typing import Any

import polars as pl

from quiver.formats import FAMILIES, EventLog, read_log
from quiver.formats.views import events_frame, family_view


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


def open(path: str | os.PathLike) -> Trace:  # noqa: A001 - the documented entry point
    """Open an event log; raises ``quiver.formats.LogFormatError`` if it is unusable."""
    return Trace.from_arrow(path)
