"""The default report: plain text laid out like a sanitizer's (one block per finding, a SUMMARY line).

Deterministic: built only from the findings and the log's metadata, no clock, no terminal widths.
"""

from __future__ import annotations

from quiver.replay.driver import AnalysisReport
from quiver.replay.report.findings import ADVISORY_KINDS, TRANSFER_KINDS, Finding, FindingKind, Site

PREFIX = "==quiver=="
ROLE_WORDS = {"map-clause": "map clause", "other-access": "other access", "ignored-clause": "ignored clause",
              "release": "released", "allocation": "host object", "construct": "construct"}


def side_text(site: Site) -> str:
    if site.side == "device":
        return f"on device {site.device}"
    if site.side == "rank":
        return f"on rank {site.rank}"
    return "on the host"


def where(site: Site) -> str:
    """``in main at fig1.c:12``; nothing for an unknown place."""
    fn = f"in {site.function}" if site.function else ""
    at = f"at {site.short()}" if site.file and site.file != "??" else ""
    return " ".join(p for p in (fn, at) if p)


def counts_text(f: Finding) -> str:
    if f.kind in TRANSFER_KINDS:
        noun = "allocation" if f.kind in (FindingKind.REPEATED_ALLOCATION, FindingKind.UNUSED_ALLOCATION) else \
            "transfer"
        return f"{f.bytes} byte{'s' if f.bytes != 1 else ''} in {f.occurrences} {noun}{'s' if f.occurrences != 1 else ''}"
    if f.element_size:
        n = max(f.bytes // f.element_size, 1)
        amount = f"{n} element{'s' if n != 1 else ''} ({f.bytes} bytes)"
    else:
        amount = f"{f.bytes} byte{'s' if f.bytes != 1 else ''}"
    return f"{amount} in {f.occurrences} access{'es' if f.occurrences != 1 else ''}"


def render_finding(f: Finding) -> list[str]:
    level = "WARNING" if f.kind in ADVISORY_KINDS else "ERROR"
    lines = [f"{PREFIX} {level}: {f.kind.value} {side_text(f.access)} {where(f.access)}", f"  {f.message}"]
    if f.details.get("line_from"):
        lines.append(f"  line: of {f.details['line_from']}")
    if f.extent:
        lines.append(f"  {f.extent}")
    if f.bytes:
        lines.append(f"  {counts_text(f)}")
    for r in f.related:
        role = ROLE_WORDS.get(r.role, r.role.replace("-", " "))
        lines.append(f"  {role}: " + " ".join(p for p in (r.message, where(r.site)) if p))
    also = f.details.get("also_on") if isinstance(f.details, dict) else None
    if also:
        ranks = ", ".join(f"rank {a['rank']}" + (f" (with rank {a['other_rank']})" if a.get("other_rank") is not None
                                                  else "") for a in also)
        lines.append(f"  also on: {ranks}: the same lines, {len(also) + 1} ranks in all")
    if f.history:
        lines.append("  history of the first bad byte:")
        for i, step in enumerate(f.history):
            state = f"  -> {step.state}" if step.state else ""
            at = f"{step.site.short()}: " if step.site.file and step.site.file != "??" else ""
            times = f" (x{step.repeat})" if step.repeat > 1 else ""
            lines.append(f"    #{i} {at}{step.operation}{times}{state}")
    if f.kind in TRANSFER_KINDS and "wasted_ns" in f.details:
        lines.append(f"  cost: {cost_text(f.details['wasted_ns'], f.details.get('run_ns', 0))}"
                     + (f"; read on the other side: {f.details['read_bytes']} of {f.details['transferred_bytes']} "
                        "bytes" if "read_bytes" in f.details else ""))
    if f.fix:
        lines.append(f"  fix: {f.fix}")
    return lines


def cost_text(ns: int, run_ns: int) -> str:
    """``1234 ns of data-op time (0.05% of the run)``."""
    share = f" ({100.0 * ns / run_ns:.3g}% of the run)" if run_ns > 0 else ""
    return f"{ns} ns of data-op time{share}"


def movement_summary(findings: list[Finding]) -> list[str]:
    """The potential saving of all data-movement findings as a share of the run (each rank's run time
    counted once) and the peak device memory of every (rank, device) they name."""
    found = [f for f in findings if f.kind in TRANSFER_KINDS and "wasted_ns" in f.details]
    if not found:
        return []
    run = {f.access.rank: int(f.details.get("run_ns", 0)) for f in found}
    peaks = {(f.access.rank, f.access.device): int(f.details.get("peak_device_bytes", 0)) for f in found}
    saved = sum(int(f.details["wasted_ns"]) for f in found)
    where = ", ".join(f"{'rank ' + str(r) + ' ' if len(run) > 1 else ''}device {d}: {b} B"
                      for (r, d), b in sorted(peaks.items()))
    allocs = (FindingKind.REPEATED_ALLOCATION, FindingKind.UNUSED_ALLOCATION)
    moved = sum(f.bytes for f in found if f.kind not in allocs)
    allocated = sum(f.bytes for f in found if f.kind in allocs)
    text = (f"data movement: potential saving {cost_text(saved, sum(run.values()))}: {moved} bytes of "
            f"transfers, {allocated} bytes of allocations; peak device memory {where}")
    return [text]


def render_text(report: AnalysisReport) -> str:
    lines: list[str] = []
    for spot in report.blind_spots:
        lines.append(f"{PREFIX} WARNING: {spot.message}")
    if report.blind_spots:
        lines.append("")
    for f in report.findings:
        lines += render_finding(f)
        lines.append("")
    summary_lines = movement_summary(report.findings)
    if summary_lines:
        lines += [*summary_lines, ""]
    checks = ", ".join(report.checks) or "none"
    if report.unavailable:
        checks += f"; not available: {', '.join(report.unavailable)}"
    if report.findings:
        kinds = ", ".join(f"{n} {k}" for k, n in report.counts_by_kind().items())
        n = len(report.findings)
        summary = f"{n} finding{'s' if n != 1 else ''} ({kinds})"
    elif report.nothing_recorded:
        summary = "nothing checked (no events recorded)"
    else:
        summary = "no findings"
    if report.blind_spots and not report.nothing_recorded:
        n = len(report.blind_spots)
        reasons = ", ".join(spot.reason for spot in report.blind_spots)
        summary += f", {n} blind spot{'s' if n != 1 else ''} ({reasons}: see the warnings above)"
    truncated = " (truncated log)" if report.truncated else ""
    lines.append(f"SUMMARY: quiver: {summary} in {report.log_path}{truncated} [checks: {checks}]")
    return "\n".join(lines) + "\n"
