"""SARIF 2.1.0 report (`--format sarif`) for IDEs and code scanning.

One run; one rule per finding kind (the closed set, so rule indices never move); one result per
finding with its access as the location, the map clause / other access / release as related
locations, and the history of the first bad byte as a code flow. The fix is in the message and in
``properties.fix`` (SARIF ``fixes`` need exact columns, which the log does not have).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from quiver.replay.driver import AnalysisReport
from quiver.replay.report.findings import ADVISORY_KINDS, Finding, FindingKind, Site
from quiver.replay.report.json import finding_dict

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
# The analyzer's documentation (an absolute URI, as SARIF requires): docs/analyze.md of these sources.
_DOCS = Path(__file__).resolve().parents[2] / "docs" / "analyze.md"
INFORMATION_URI = _DOCS.as_uri() if _DOCS.is_file() else None

RULES: dict[FindingKind, tuple[str, str, str]] = {
    FindingKind.USE_OF_UNINITIALIZED_MEMORY: (
        "UseOfUninitializedMemory", "Read of a copy (host or device) that was never initialised",
        ("A read on the host or a device returned bytes that no one ever wrote into that copy, typically "
         "because a map clause allocated the device copy without copying the host data in (map(alloc) instead "
         "of map(to)).")),
    FindingKind.USE_OF_STALE_DATA: (
        "UseOfStaleData", "Read of a copy that misses the last write on the other side",
        ("The host read data that a device overwrote without copying it back, or a device read data that the "
         "host overwrote after the copy-in (missing map(from), map(to) or target update).")),
    FindingKind.BUFFER_OVERFLOW: (
        "BufferOverflow", "Access outside the mapped section, or a section larger than its host object",
        ("A kernel accessed bytes of a variable outside the array section its construct mapped, or a map "
         "clause copies past the end of the host allocation.")),
    FindingKind.UNMAPPED_MEMORY: (
        "UnmappedMemory", "Device access to host memory that no map clause maps",
        ("A kernel dereferenced the address of a host object (heap, global or stack) that no live mapping "
         "covers, e.g. a pointer passed firstprivate without a map clause for what it points to. On a GPU "
         "this reads or corrupts unrelated memory.")),
    FindingKind.DATA_RACE: (
        "DataRace", "Unordered conflicting accesses or copies",
        ("Two operations on the same bytes, at least one a write or a copy, are not ordered (nowait target "
         "tasks without depend or taskwait).")),
    FindingKind.RMA_RACE: (
        "RmaRace", "Conflicting MPI-RMA accesses in the same epoch",
        ("An RMA operation conflicts with a local load/store or another RMA operation on the same window "
         "bytes without synchronisation between them.")),
    FindingKind.UNUSED_TRANSFER: (
        "UnusedTransfer", "A transfer whose data is never read on the other side",
        "Data copied to a device and never read there, or copied back and never read on the host."),
    FindingKind.DUPLICATE_TRANSFER: (
        "DuplicateTransfer", "A transfer of bytes the destination already holds or held",
        ("Data sent to a device that already holds it (or held it until its copy was released), or copied "
         "back to a host that already holds it.")),
    FindingKind.ROUND_TRIP: (
        "RoundTrip", "Data copied back from a device that never changed it",
        "Bytes the host sent to a device come back unchanged (map(tofrom) of data the kernel only reads)."),
    FindingKind.REPEATED_ALLOCATION: (
        "RepeatedAllocation", "The same buffer allocated on a device again and again",
        "A host section is allocated on a device, released and allocated again (a map inside a loop)."),
    FindingKind.UNUSED_ALLOCATION: (
        "UnusedAllocation", "Device memory no kernel touches",
        "A device copy is allocated but no kernel reads or writes any of its bytes."),
}
RULE_ORDER = list(RULES)


def artifact_uri(path: str) -> str:
    if path.startswith("/"):
        return "file://" + quote(path)
    return quote(PurePosixPath(path).as_posix())


def artifact_location(path: str, root: str | None) -> dict[str, Any]:
    """A file under the source root as a relative URI against %SRCROOT% (what code scanning needs
    to place a result in the repository); anything else absolute."""
    if root:
        rel = os.path.relpath(path, root) if path.startswith("/") else os.path.normpath(path)
        if not rel.startswith(".."):
            return {"uri": quote(PurePosixPath(rel).as_posix()), "uriBaseId": SRCROOT}
    return {"uri": artifact_uri(path)}


def physical(site: Site, root: str | None = None) -> dict[str, Any] | None:
    if not site.file or site.file == "??":
        return None
    loc: dict[str, Any] = {"artifactLocation": artifact_location(site.file, root)}
    if site.line > 0:
        loc["region"] = {"startLine": site.line}
    return loc


def location(site: Site, text: str = "", ident: int | None = None, root: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ident is not None:
        out["id"] = ident
    phys = physical(site, root)
    if phys is not None:
        out["physicalLocation"] = phys
    if site.function:
        out["logicalLocations"] = [{"name": site.function, "kind": "function"}]
    if text:
        out["message"] = {"text": text}
    return out


def result(f: Finding, root: str | None = None) -> dict[str, Any]:
    text = f.message + (f" ({f.extent})" if f.extent else "") + (f". Fix: {f.fix}" if f.fix else "")
    res: dict[str, Any] = {
         "ruleId": f.kind.value,
         "ruleIndex": RULE_ORDER.index(f.kind),
         "level": "note" if f.kind in ADVISORY_KINDS else "error",
         "message": {"text": text},
         "locations": [location(f.access, root=root)],
         "partialFingerprints": {"quiverFindingKey/v1": hashlib.sha256(repr(f.key()).encode()).hexdigest()[:32]},
         "occurrenceCount": max(int(f.occurrences), 1),
         "properties": {k: v for k, v in finding_dict(f).items() if k not in ("access", "related", "history")},
    }
    if f.related:
        res["relatedLocations"] = [location(r.site, f"{r.role}: {r.message}" if r.message else r.role, i, root)
                                   for i, r in enumerate(f.related)]
    if f.history:
        steps = [{"location": location(h.site, f"{h.operation}" + (f" (x{h.repeat})" if h.repeat > 1 else "")
                                       + (f" -> {h.state}" if h.state else ""), root=root),
                  "executionOrder": i} for i, h in enumerate(f.history)]
        res["codeFlows"] = [{"message": {"text": "history of the first bad byte"},
                             "threadFlows": [{"locations": steps}]}]
    return res


def rule(kind: FindingKind) -> dict[str, Any]:
    name, short, full = RULES[kind]
    return {"id": kind.value, "name": name, "shortDescription": {"text": short}, "fullDescription": {"text": full},
            "defaultConfiguration": {"level": "note" if kind in ADVISORY_KINDS else "error"},
            "help": {"text": f"{full} See docs/analyze.md in the quiver sources."}}


def sarif_dict(report: AnalysisReport, source_root: str | None = None) -> dict[str, Any]:
    """``source_root``: files under it get URIs relative to %SRCROOT% (its ``file://`` URI is in
    ``originalUriBaseIds``), so code scanning places results in the repository."""
    root = os.path.abspath(source_root) if source_root else None
    notes = [{"level": "warning", "message": {"text": spot.message},
              "properties": {"reason": spot.reason, "checks": list(spot.checks)}} for spot in report.blind_spots]
    invocation: dict[str, Any] = {"executionSuccessful": True, "exitCode": report.exit_status}
    if notes:
        invocation["toolExecutionNotifications"] = notes
    driver: dict[str, Any] = {"name": "quiver", "version": report.tool_version}
    if INFORMATION_URI:
        driver["informationUri"] = INFORMATION_URI
    driver["rules"] = [rule(k) for k in RULE_ORDER]
    run: dict[str, Any] = {"tool": {"driver": driver}}
    if root:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}}
    return {
        "$schema": SARIF_SCHEMA,
         "version": SARIF_VERSION,
         "runs": [{
            **run,
            "invocations": [invocation],
            "results": [result(f, root) for f in report.findings],
            "properties": {"log": report.log_path, "program": report.run.get("program", ""),
                           "truncated": report.truncated, "checks": report.checks,
                           "blindSpots": [spot.as_dict() for spot in report.blind_spots]},
        }],
    }


def render_sarif(report: AnalysisReport, source_root: str | None = None) -> str:
    return json.dumps(sarif_dict(report, source_root), indent=2, default=str) + "\n"
