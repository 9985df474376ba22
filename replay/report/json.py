"""The JSON report (`--format json`): the contract documented in docs/report-json.md.

Why a renderer of its own: ``Finding`` nests sites (``related[i].site``); the contract puts
``file``/``line`` directly on every location, so scripts read ``f["related"][0]["line"]``.
"""

from __future__ import annotations

import json
from typing import Any

from quiver.replay.driver import AnalysisReport
from quiver.replay.report.findings import Finding, FindingKind, Site

REPORT_VERSION = 1
KINDS = [k.value for k in FindingKind]


def site_dict(site: Site) -> dict[str, Any]:
    return {"file": site.file, "line": site.line, "function": site.function, "side": site.side,
            "device": site.device, "rank": site.rank, "thread": site.thread}


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "kind": f.kind.value,
        "message": f.message,
        "variable": f.variable,
        "element": f.element,
        "element_size": f.element_size,
        "elements": (f.bytes // f.element_size) if f.element_size else None,
        "extent": f.extent,
        "bytes": f.bytes,
        "occurrences": f.occurrences,
        "access": site_dict(f.access),
        "related": [{"role": r.role, **site_dict(r.site), "message": r.message} for r in f.related],
        "history": [{"operation": h.operation, **site_dict(h.site), "state": h.state, "repeat": h.repeat}
                    for h in f.history],
        "fix": f.fix,
        "details": f.details,
    }


def report_dict(report: AnalysisReport) -> dict[str, Any]:
    run = report.run
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "quiver", "version": report.tool_version},
        "log": {"path": report.log_path, "program": run.get("program", ""), "argv": list(run.get("argv", [])),
                "events": report.events, "truncated": report.truncated,
                "truncated_reason": run.get("truncated_reason") if report.truncated else None,
                "exit_status": run.get("exit_status"), "signal": run.get("signal")},
        "checks": report.checks,
        "unavailable_checks": report.unavailable,
        "kinds": KINDS,
        "summary": {"findings": len(report.findings), "errors": len(report.errors),
                    "advisories": len(report.findings) - len(report.errors), "by_kind": report.counts_by_kind(),
                    "blind_spots": len(report.blind_spots), "exit_status": report.exit_status,
                    "note": report.truncation_note()},
        "blind_spots": [spot.as_dict() for spot in report.blind_spots],
        "findings": [finding_dict(f) for f in report.findings],
    }


def render_json(report: AnalysisReport) -> str:
    return json.dumps(report_dict(report), indent=2, sort_keys=False, default=str) + "\n"
