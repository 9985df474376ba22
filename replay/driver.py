"""Run the selected checkers over one log and collect what every report renderer needs.

Why: `trace analyze`, notebooks and tests all want the same thing — pick checkers by name, run them,
merge their findings deterministically and decide the exit status — without going through the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from quiver.formats import EventLog
from quiver.formats.jit import sized
from quiver.formats.version import __version__
from quiver.replay.registry import ALIASES, CHECKERS, CheckOptions, available_checkers, default_checkers
from quiver.replay.report.blind_spots import BlindSpot, find_blind_spots, kinds_present
from quiver.replay.report.findings import ADVISORY_KINDS, Finding, merge_findings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_NOTHING_CHECKED = 0, 1, 2
EXIT_BLIND = 4   # no error findings, but blind spots, and the caller asked to fail on them (--fail-on-blind)


class UnknownCheck(ValueError):
    """A --check name that is not a checker (the message is one line for the user)."""


def resolve_checks(requested: Iterable[str] | None) -> list[str]:
    """Checker names from --check values (comma-separated or repeated, ``all``); default when empty."""
    names: list[str] = []
    for value in requested or ():
        names.extend(part.strip() for part in value.split(",") if part.strip())
    if not names:
        return default_checkers()
    out: list[str] = []
    for name in (n.lower() for n in names):
        name = ALIASES.get(name, name)
        if name == "all":
            picked = list(CHECKERS)
        elif name in CHECKERS:
            picked = [name]
        else:
            known = ", ".join([*CHECKERS, "all"])
            raise UnknownCheck(f"unknown check '{name}' (known: {known})")
        out.extend(n for n in picked if n not in out)
    return out


@dataclass
class AnalysisReport:
    """Findings of one analysis plus the facts about the log that reports print."""

    log_path: str
    run: dict[str, Any]
    events: int
    checks: list[str]
    unavailable: list[str]
    findings: list[Finding] = field(default_factory=list)
    blind_spots: list[BlindSpot] = field(default_factory=list)
    fail_on_blind: bool = False
    tool_version: str = __version__

    @property
    def truncated(self) -> bool:
        return bool(self.run.get("truncated", False))

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.kind not in ADVISORY_KINDS]

    @property
    def nothing_recorded(self) -> bool:
        """A truncated log without a single event: nothing could be checked (never "no findings")."""
        return self.truncated and self.events == 0

    @property
    def exit_status(self) -> int:
        if self.nothing_recorded:
            return EXIT_NOTHING_CHECKED
        if self.errors:
            return EXIT_FINDINGS
        return EXIT_BLIND if self.fail_on_blind and self.blind_spots else EXIT_CLEAN

    def add_blind_spots(self, kinds: set[int], explicit: bool) -> None:
        """Append what these checks could not see in a log with these event kinds (report/blind_spots.py)."""
        self.blind_spots += find_blind_spots(self.run, kinds, self.checks + self.unavailable, explicit,
                                             self.truncation_note())

    def counts_by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.kind.value] = counts.get(f.kind.value, 0) + 1
        return dict(sorted(counts.items()))

    def truncation_note(self) -> str:
        """What a truncated log may be missing: "log truncated (<reason>): events after <time> are missing"."""
        if not self.truncated:
            return ""
        why = self.run.get("truncated_reason")
        if not why:
            sig = self.run.get("signal") or 0
            why = f"signal {sig}" if sig else "the program did not end normally"
        if self.events == 0:
            return f"log truncated ({why}) and holds no events: nothing could be checked"
        last = self.run.get("last_event_ns")
        when = _seconds(int(last)) if isinstance(last, int) else "the last recorded one"
        return f"log truncated ({why}): events after {when} are missing"


def _seconds(ns: int) -> str:
    """A log time (ns since the start of the run) in the unit that reads best."""
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns} ns"


def run_checks(log: EventLog, checks: list[str], options: CheckOptions | None = None,
               on_check: Callable[[str], None] | None = None, explicit: bool = False) -> AnalysisReport:
    """Run ``checks`` (names from the registry) over ``log``; unavailable ones are listed, not run.
    ``explicit``: the user named the checks, so one whose events are absent is a blind spot."""
    options = options or CheckOptions()
    available = available_checkers(checks)
    run = dict(log.run)
    if run.get("truncated") and "last_event_ns" not in run and log.num_events:  # logs of older versions
        run["last_event_ns"] = int(log.col("time_ns").max())
    report = AnalysisReport(log_path=str(log.path), run=run, events=log.num_events,
                            checks=[c for c in checks if c in available],
                            unavailable=[c for c in checks if c not in available])
    from quiver.replay.mapping.vsm import reusing_shadows

    found: list[Finding] = []
    # a small log runs the numba kernels interpreted: numba's start-up would cost more than the work
    with reusing_shadows(), sized(log.num_events):
        for name in report.checks:
            if on_check is not None:
                on_check(name)
            found.extend(available[name](log, options))
    report.findings = merge_findings(found)
    report.add_blind_spots(kinds_present(log.batches(["kind"])), explicit)
    return report
