"""`trace explain`: what each target construct really moved, and the transfers never needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def explain(
    log: Annotated[Path, typer.Argument(help="event log written by `trace record`")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="text or json")] = "text",
    variable: Annotated[str | None, typer.Option("--variable", "-v", help="only this variable")] = None,
    line: Annotated[int | None, typer.Option("--line", help="only constructs at this source line")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="write here instead of stdout")] = None,
) -> None:
    """For each target construct: Copy In, Copy Out, Persistent In/Out, Alloc, Release per variable, with
    bytes, and what its transfers wasted; then every data-movement finding of the transfers check (unused /
    duplicate transfers, round trips, repeated / unused allocations) with the clause to change, the
    potential saving and the peak device memory.

    Always exits 0 on a readable log: this is advice, not a verdict (see `trace analyze`)."""
    import polars as pl  # here, not at the top: every `trace` command imports this module

    from quiver.formats.errors import UsageError
    from quiver.formats.logset import open_logs
    from quiver.replay.registry import CheckOptions
    from quiver.replay.report.findings import merge_findings
    from quiver.replay.transfers.advice import device_peaks, run_time, transfer_findings
    from quiver.replay.transfers.constructs import (
        construct_items,
        explain_table,
        load_mapping_frames,
        render_text,
        to_json,
    )
    from quiver.replay.transfers.redundant import replay_transfers, survey

    if fmt not in ("text", "json"):
        raise UsageError(f"unknown format {fmt!r}; use text or json")
    logs = open_logs(log)
    parts, findings, run_ns, peaks = [], [], {}, []
    for events in logs:                     # one file, or one per rank for a split log
        first = survey(events)
        replay = replay_transfers(events, first)
        parts.append(construct_items(events, first.events, replay.transfers))
        findings.extend(transfer_findings(events, CheckOptions(), first, replay))
        run_ns.update(run_time(events))
        peaks.append(device_peaks(load_mapping_frames(events, first.events)[2]))
    items = pl.concat(parts)
    findings = merge_findings(findings)
    costs = {"run_ns": run_ns, "peaks": pl.concat(peaks).sort("rank", "device")}
    unmatched = ""
    if variable is not None:
        known = sorted(set(items["variable"].to_list()))
        items = items.filter(items["variable"] == variable)
        findings = [f for f in findings if f.variable == variable]
        if items.is_empty() and known:
            unmatched = f"no target construct maps a variable named `{variable}` (mapped: {_listing(known)})"
    if line is not None:
        known_lines = sorted(set(items["line"].to_list()))
        items = items.filter(items["line"] == line)
        findings = [f for f in findings if f.access.line == line]
        if items.is_empty() and known_lines and not unmatched:
            what = f" mapping `{variable}`" if variable is not None else ""
            unmatched = f"no target construct{what} at line {line} (constructs at lines: {_listing(known_lines)})"
    table = explain_table(items)
    if fmt == "json":
        doc = {"log": str(log), **to_json(table, findings, costs)}
        if unmatched:
            doc["unmatched"] = unmatched
        text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    else:
        text = render_text(table, findings, ranks=int(logs.run.get("ranks", 1) or 1), costs=costs,
                           **({"empty": unmatched} if unmatched else {}))
    if output is not None:
        from quiver.formats.safe_write import OutputError, write_atomic

        try:
            write_atomic(output, text)
        except OutputError as e:
            raise UsageError(str(e)) from None
    else:
        print(text, end="")


def _listing(values: list, limit: int = 12) -> str:
    """What the log does have, for a filter that matched nothing ("a, b, c" / "none")."""
    if not values:
        return "none"
    shown = ", ".join(map(str, values[:limit]))
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


explain.context_settings = {"help_option_names": ["-h", "--help"]}
