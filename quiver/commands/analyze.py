"""`trace analyze`: run the checkers over a log and print a report (text, JSON or SARIF).

The typer command (help, options); its body is quiver/commands/analyze_run.py, which the usual command
lines reach without typer (quiver/cli.py).

Exit status: 0 no findings, 1 findings (advisory kinds alone never), 2 unusable input or usage, or a
truncated log without events (nothing could be checked), 4 with --fail-on-blind: no findings but
something could not be checked (the report's blind spots).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from quiver.commands.analyze_run import ReportFormat, render, run
from quiver.replay.registry import CHECKERS

__all__ = ["CHECK_HELP", "ReportFormat", "analyze", "render"]

CHECK_HELP = "checkers to run, comma-separated or repeated: " + ", ".join(CHECKERS) + ", all " \
             "(default: all but transfers, the advisory data-movement check; redundant-transfer is its old name)"


def analyze(
    log: Annotated[Path, typer.Argument(help="event log written by `trace record` (or a split-log directory)")],
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="report format")] = ReportFormat.text,
    check: Annotated[list[str] | None, typer.Option("--check", "-c", help=CHECK_HELP)] = None,
    max_schedules: Annotated[int, typer.Option("--max-schedules", min=1,
                                               help="nowait schedules to try per synchronisation window")] = 64,
    baseline: Annotated[bool, typer.Option("--baseline", help="MPI-RMA: the paper's epoch algorithm only")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="write the report to FILE")] = None,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                  help="progress bar on stderr (default: on a terminal)")] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-j", min=1, help="check shards in N local "
                                                "processes (same report as one)")] = None,
    dask: Annotated[str | None, typer.Option("--dask", metavar="ADDRESS", help="check shards on a Dask cluster: "
                                             "tcp://scheduler:8786, or 'local' for a LocalCluster")] = None,
    scratch: Annotated[Path | None, typer.Option("--scratch", help="directory for the shuffled shards "
                                                 "(default: system temp; next to the log with --dask ADDRESS)")] = None,
    source_root: Annotated[Path | None, typer.Option("--source-root", help="SARIF: source files under DIR get "
                                                     "paths relative to %SRCROOT% (default: the current "
                                                     "directory)", metavar="DIR")] = None,
    fail_on_blind: Annotated[bool, typer.Option("--fail-on-blind", help="exit 4 when there are no findings but "
                                                "something could not be checked (no accesses recorded, no "
                                                "events a check needs, truncated log)")] = False,
) -> int:
    """Find data-mapping issues, nowait races and MPI-RMA races in a log; print a report with fixes.

    LOG is a log file or a split-log directory (`trace record --split`). With --workers or --dask the run is checked shard by shard in parallel (docs/distributed.md); the report is identical.

    Exit status: 0 clean, 1 findings, 2 unusable input (or a truncated log without events), 3 blind spots
    with --fail-on-blind.
    """
    return run(log, fmt, check, max_schedules, baseline, output, progress, workers, dask, scratch, source_root,
               fail_on_blind)
