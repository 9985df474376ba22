"""Findings: what every checker returns and every report renders.

The JSON contract (docs/report-json.md) is ``Finding.to_dict``; keep the two in step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class FindingKind(str, Enum):
    """The closed set of finding kinds (the ``kind`` field of the JSON report)."""

    USE_OF_UNINITIALIZED_MEMORY = "use-of-uninitialized-memory"
    USE_OF_STALE_DATA = "use-of-stale-data"
    BUFFER_OVERFLOW = "buffer-overflow"
    UNMAPPED_MEMORY = "unmapped-memory"
    DATA_RACE = "data-race"
    RMA_RACE = "rma-race"
    # data-movement advice (OMPDataPerf's five kinds, docs/transfers.md)
    UNUSED_TRANSFER = "unused-transfer"
    DUPLICATE_TRANSFER = "duplicate-transfer"
    ROUND_TRIP = "round-trip"
    REPEATED_ALLOCATION = "repeated-allocation"
    UNUSED_ALLOCATION = "unused-allocation"
    REDUNDANT_TRANSFER = "unused-transfer"  # noqa: PIE796 (the old name: an alias of UNUSED_TRANSFER)


TRANSFER_KINDS = frozenset({FindingKind.UNUSED_TRANSFER, FindingKind.DUPLICATE_TRANSFER, FindingKind.ROUND_TRIP,
                            FindingKind.REPEATED_ALLOCATION, FindingKind.UNUSED_ALLOCATION})
# Kinds that never change the exit status on their own.
ADVISORY_KINDS = TRANSFER_KINDS


@dataclass(frozen=True)
class Site:
    """A source location where something happened, and on which side."""

    file: str = "??"
    line: int = 0
    function: str = ""
    side: str = "host"          # "host", "device" (OpenMP) or "rank" (MPI)
    device: int = -1
    rank: int = 0
    thread: int = 0

    def short(self) -> str:
        return f"{self.file}:{self.line}" if self.line > 0 else self.file

    def __str__(self) -> str:
        return f"{self.short()} in {self.function}" if self.function else self.short()


@dataclass(frozen=True)
class Related:
    """Another location that matters for a finding: a map clause, the other access of a race..."""

    role: str                   # "map-clause", "other-access", "allocation", "history", "synchronization", ...
    site: Site
    message: str = ""


@dataclass(frozen=True)
class HistoryStep:
    """One operation in the history of the first bad byte."""

    operation: str              # e.g. "CV allocated (map(alloc: b[0:N]))", "host write"
    site: Site
    state: str = ""             # the byte's state after the step, e.g. "OV valid, CV invalid"
    repeat: int = 1             # identical consecutive steps folded into one (fold_history)


def fold_history(steps: list[HistoryStep]) -> list[HistoryStep]:
    """Consecutive identical steps (the same write at the same line, 5 times over) as one step with
    ``repeat`` = how many."""
    out: list[HistoryStep] = []
    for step in steps:
        last = out[-1] if out else None
        if last is not None and (last.operation, last.site, last.state) == (step.operation, step.site, step.state):
            out[-1] = HistoryStep(last.operation, last.site, last.state, last.repeat + step.repeat)
        else:
            out.append(step)
    return out


@dataclass
class Finding:
    kind: FindingKind
    message: str                # one line: what went wrong
    access: Site                # where it went wrong
    variable: str | None = None
    related: list[Related] = field(default_factory=list)
    history: list[HistoryStep] = field(default_factory=list)
    fix: str = ""               # the concrete change to make
    element: int | None = None  # index of the first bad element
    element_size: int | None = None
    extent: str = ""            # e.g. "b: 500000 elements mapped (4-byte)"
    bytes: int = 0              # bad bytes, summed over occurrences
    occurrences: int = 1
    details: dict[str, Any] = field(default_factory=dict)  # checker-specific (rank, window, schedules, ...)

    def key(self) -> tuple:
        """Findings with the same key are one finding (counts are summed)."""
        clause = next((r.site for r in self.related if r.role == "map-clause"), None)
        other = next((r.site for r in self.related if r.role == "other-access"), None)
        return (self.kind.value, self.variable or "", self.access.file, self.access.line, self.access.side,
                self.access.rank, clause.file if clause else "", clause.line if clause else 0,
                other.file if other else "", other.line if other else 0, other.rank if other else 0)

    def sort_key(self) -> tuple:
        return (self.access.file, self.access.line, self.kind.value, self.variable or "", self.access.rank,
                self.key())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = self.kind.value
        return d


def merge_findings(findings: list[Finding]) -> list[Finding]:
    """One finding per key, counts summed, in a deterministic order.

    The schedules checker re-finds issues of the recorded run in other ``nowait`` schedules; such a
    pair becomes one finding with the recorded run's counts and the schedule-aware words (message,
    fix, related sites, ``details["schedules"]``), whichever order the checkers ran in.
    """
    merged: dict[tuple, Finding] = {}
    for f in findings:
        k = f.key()
        if k in merged:
            m = merged[k]
            if ("schedules" in f.details) != ("schedules" in m.details):
                recorded, scheduled = (f, m) if "schedules" in m.details else (m, f)
                m.message, m.fix, m.related = scheduled.message, scheduled.fix, scheduled.related
                m.details = {**recorded.details, **scheduled.details}
                m.bytes, m.occurrences = recorded.bytes, recorded.occurrences
                continue
            m.bytes += f.bytes
            m.occurrences += f.occurrences
        else:
            merged[k] = f
    for f in merged.values():
        f.history = fold_history(f.history)
    return fold_ranks(sorted(merged.values(), key=Finding.sort_key))


def _fold_key(f: Finding) -> tuple:
    """The same finding on other ranks: the key without ranks and without the rank-named variable."""
    clause = next((r.site for r in f.related if r.role == "map-clause"), None)
    other = next((r.site for r in f.related if r.role == "other-access"), None)
    return (f.kind.value, f.access.file, f.access.line, f.access.side, f.access.device,
            clause.file if clause else "", clause.line if clause else 0,
            other.file if other else "", other.line if other else 0,
            tuple(f.details.get("operations") or ()), f.variable if f.kind is not FindingKind.RMA_RACE else "")


def fold_ranks(findings: list[Finding]) -> list[Finding]:
    """One finding per missing synchronisation: the same race (or mapping issue) at the same lines on
    several ranks is one finding, at its lowest rank, that lists the others (``details["also_on"]``:
    rank, other rank, variable and fix of each) with counts summed. Order and content stay deterministic."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        groups.setdefault(_fold_key(f), []).append(f)
    out: list[Finding] = []
    for f in findings:
        group = groups[_fold_key(f)]
        if len(group) == 1:
            out.append(f)
            continue
        if group[0] is not f:
            continue
        first, rest = group[0], group[1:]
        also = []
        for g in rest:
            other = next((r.site for r in g.related if r.role == "other-access"), None)
            also.append({"rank": g.access.rank, "other_rank": other.rank if other else None,
                         "variable": g.variable, "fix": g.fix, "occurrences": g.occurrences, "bytes": g.bytes})
            first.bytes += g.bytes
            first.occurrences += g.occurrences
        ranks = set(first.details.get("ranks", [first.access.rank]))
        for g in rest:
            ranks.update(g.details.get("ranks", [g.access.rank]))
        first.details = {**first.details, "ranks": sorted(ranks), "also_on": also}
        out.append(first)
    return out
