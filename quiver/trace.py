"""``quiver.open``: one event log as polars frames, one per event family."""

from __future__ import annotations

import os
from collections.abc import Iterable
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
        return log_summary(self.log)

    # --- analysis -------------------------------------------------------------------------
    def check(self, checks: Iterable[str] | str | None = None, **options: Any) -> list:
        """Run checkers and return their merged ``Finding``s, as `trace analyze` does.

        ``checks`` names checkers of ``quiver.replay.registry.CHECKERS`` (``"mapping"``,
        ``["rma", "redundant-transfer"]``, ``"all"``; default: the default set); keyword options
        go to ``CheckOptions`` (``max_schedules``, ``baseline``, ``extra``). Raises ValueError
        for an unknown name."""
        from quiver.replay.driver import resolve_checks, run_checks
        from quiver.replay.registry import CheckOptions

        names = resolve_checks([checks] if isinstance(checks, str) else checks)
        return run_checks(self.log, names, CheckOptions(**options)).findings

    def findings(self, checks: Iterable[str] | str | None = None, **options: Any) -> pl.DataFrame:
        """``check`` as a DataFrame, one row per finding, in report order."""
        return findings_frame(self.check(checks, **options))

    def explain(self) -> pl.DataFrame:
        """Per construct site and map item: Copy In / Copy Out / Persistent In / Persistent Out /
        Alloc / Release (``<category>_runs`` and ``<category>_bytes`` columns) and what its transfers
        wasted (``read_bytes``, ``unused_bytes``, ``duplicate_bytes``, ``round_trip_bytes``,
        ``wasted_ns``), the table `trace explain` prints."""
        from quiver.replay.transfers.constructs import construct_items, explain_table
        from quiver.replay.transfers.redundant import replay_transfers, survey
        first = survey(self.log)
        return explain_table(construct_items(self.log, first.events, replay_transfers(self.log, first).transfers))

    def transfers(self, per: str = "transfer") -> pl.DataFrame:
        """Data movement and its waste. ``per="transfer"``: every host<->device copy with ``used_bytes``
        read on the other side, ``unused_bytes`` never read, ``duplicate_bytes`` the destination
        already held, ``round_trip_bytes`` copied back unchanged, ``wasted_bytes`` (their sum) and
        ``duration_ns``. ``per="construct"``: the per-construct table of `trace explain` (``explain()``)."""
        if per == "construct":
            return self.explain()
        if per != "transfer":
            raise ValueError(f"per must be 'transfer' or 'construct', not {per!r}")
        from quiver.replay.transfers.redundant import transfer_waste
        return transfer_waste(self.log)

    def timeline(self, *, ranks: Iterable[int] | None = None, from_ns: int | None = None,
                 to_ns: int | None = None) -> pl.DataFrame:
        """Slices with a duration (constructs, kernels, data ops, RMA calls) per rank and track
        (``tid``: host thread, device queue or RMA window), as `trace export --to perfetto` draws them."""
        from quiver.export_timeline import build_timeline
        tl = build_timeline(self.log, ranks=list(ranks) if ranks is not None else None, from_ns=from_ns,
                            to_ns=to_ns)
        return tl.slices.join(tl.tracks.select("rank", "tid", "track"), on=["rank", "tid"], how="left")

    def plot_timeline(self, ax: Any = None, *, ranks: Iterable[int] | None = None, from_ns: int | None = None,
                      to_ns: int | None = None, title: str | None = None, findings: list | bool = False) -> Any:
        """Draw the timeline with matplotlib: a row per host thread, device queue and RMA window;
        kernels, copies and RMA calls (arrows from origin to target), synchronisation ticks, and
        ``findings`` as red crosses (True: run the default checkers). Returns the axes."""
        from quiver.export_plot import plot_timeline
        from quiver.export_timeline import build_timeline
        found = self.check() if findings is True else (findings or None)
        tl = build_timeline(self.log, ranks=list(ranks) if ranks is not None else None, from_ns=from_ns,
                            to_ns=to_ns, findings=found)
        return plot_timeline(tl, ax, title=title)

    def history(self, variable: str | None = None, *, addr: int | None = None, size: int = 1,
                rank: int | None = None) -> pl.DataFrame:
        """Every operation on one variable (by name) or one host address range, in log order:
        allocations, map clauses, data ops, host and device accesses (device addresses translated
        to host ones), RMA calls that read or write it."""
        from quiver.history import operation_history
        return operation_history(self.log, variable=variable, addr=addr, size=size, rank=rank)

    def vsm_state(self, variable: str | None = None, *, at: int | None = None, addr: int | None = None,
                  size: int = 1, rank: int | None = None) -> pl.DataFrame:
        """Validity of every byte of a variable (or address range) after event ``at`` (a ``seq``;
        end of the run when None): OV valid/initialised and CV valid/initialised per device, as the
        mapping checker sees it, one row per run of bytes in the same state."""
        from quiver.history import vsm_state
        return vsm_state(self.log, variable=variable, addr=addr, size=size, rank=rank, at=at)

    def __repr__(self) -> str:
        return f"<quiver.Trace {self.log.path} program={self.run.get('program')!r} events={self.log.num_events}>"


FINDING_SCHEMA = {
    "kind": pl.String, "advisory": pl.Boolean, "variable": pl.String, "message": pl.String, "file": pl.String,
    "line": pl.Int32, "function": pl.String, "side": pl.String, "device": pl.Int32, "rank": pl.Int32,
    "thread": pl.Int32, "clause": pl.String, "clause_file": pl.String, "clause_line": pl.Int32,
    "other_file": pl.String, "other_line": pl.Int32, "other_rank": pl.Int32, "element": pl.Int64,
    "bytes": pl.Int64, "occurrences": pl.Int64, "fix": pl.String,
}


def findings_frame(findings: list) -> pl.DataFrame:
    """Findings as a DataFrame (FINDING_SCHEMA), keeping their order."""
    from quiver.replay.report.findings import ADVISORY_KINDS

    rows = []
    for f in findings:
        clause = next((r for r in f.related if r.role == "map-clause"), None)
        other = next((r for r in f.related if r.role == "other-access"), None)
        rows.append({
            "kind": f.kind.value, "advisory": f.kind in ADVISORY_KINDS, "variable": f.variable,
            "message": f.message, "file": f.access.file, "line": f.access.line, "function": f.access.function,
            "side": f.access.side, "device": f.access.device, "rank": f.access.rank, "thread": f.access.thread,
            "clause": clause.message if clause else None, "clause_file": clause.site.file if clause else None,
            "clause_line": clause.site.line if clause else None, "other_file": other.site.file if other else None,
            "other_line": other.site.line if other else None, "other_rank": other.site.rank if other else None,
            "element": f.element, "bytes": f.bytes, "occurrences": f.occurrences, "fix": f.fix,
        })
    return pl.DataFrame(rows, schema=FINDING_SCHEMA)


def open(path: str | os.PathLike) -> Trace:
    """Open an event log; raises ``quiver.formats.LogFormatError`` if it is unusable."""
    return Trace.from_arrow(path)
