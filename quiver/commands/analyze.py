"""`trace analyze`: run the checkers over a log and print a report (text, JSON or SARIF).

Exit status: 0 no findings, 1 findings (advisory kinds alone never), 2 unusable input or usage, or a
truncated log without events (nothing could be checked), 4 with --fail-on-blind: no findings but
something could not be checked (the report's blind spots).
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from quiver.formats import read_log
from quiver.replay.driver import AnalysisReport, UnknownCheck, resolve_checks, run_checks
from quiver.replay.registry import CHECKERS, CheckOptions

LARGE_LOG_EVENTS = 20_000_000   # progress is shown for logs this large even when stderr is not a terminal


class ReportFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"


def render(report: AnalysisReport, fmt: ReportFormat, source_root: Path | None = None) -> str:
    if fmt == ReportFormat.json:
        from quiver.replay.report.json import render_json

        return render_json(report)
    if fmt == ReportFormat.sarif:
        from quiver.replay.report.sarif import render_sarif

        return render_sarif(report, str(source_root or Path.cwd()))
    from quiver.replay.report.text import render_text

    return render_text(report)


def _write(path: Path, text: str) -> None:
    from quiver.formats.errors import UsageError
    from quiver.formats.safe_write import OutputError, write_atomic

    try:
        write_atomic(path, text)
    except OutputError as e:
        raise UsageError(str(e)) from None


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
    from quiver.formats.errors import UsageError

    try:
        checks = resolve_checks(check)
    except UnknownCheck as e:
        raise UsageError(str(e)) from None
    options = CheckOptions(max_schedules=max_schedules, baseline=baseline)
    if log.is_dir() or workers is not None or dask is not None:
        report = _run_sharded(log, checks, options, workers, dask, scratch,
                              progress if progress is not None else sys.stderr.isatty())
        report.add_blind_spots(_logset_kinds(log), explicit=bool(check))
    else:
        opened = read_log(log)
        show = progress if progress is not None else (sys.stderr.isatty() or opened.num_events >= LARGE_LOG_EVENTS)
        if show:
            report = _run_with_progress(opened, checks, max_schedules, baseline, explicit=bool(check))
        else:
            report = run_checks(opened, checks, options, explicit=bool(check))
    report.fail_on_blind = fail_on_blind
    text = render(report, fmt, source_root)
    if output is not None:
        _write(output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return report.exit_status


def _run_sharded(log: Path, checks: list[str], options: CheckOptions, workers: int | None, dask: str | None,
                 scratch: Path | None, show: bool) -> AnalysisReport:
    """The sharded analysis (quiver.replay.distributed.run) on the executor --workers/--dask ask for."""
    from quiver.formats.errors import UsageError
    from quiver.replay.distributed.executors import ExecutorUnavailable, make_executor
    from quiver.replay.distributed.run import analyze_sharded

    if scratch is not None and not scratch.is_dir():
        raise UsageError(f"--scratch {scratch}: not a directory")
    try:
        executor = make_executor(workers, dask)
    except ExecutorUnavailable as e:
        raise UsageError(str(e)) from None
    try:
        if not show:
            return analyze_sharded(log, checks, options, executor, scratch)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=console.is_terminal) as bar:
            def phase(name: str, total: int):
                task = bar.add_task(f"{name:>15}", total=max(total, 1))
                return lambda n: bar.advance(task, n)

            return analyze_sharded(log, checks, options, executor, scratch, progress=phase)
    finally:
        executor.close()


def _logset_kinds(path: Path) -> set[int]:
    """Event kinds of a log or split-log directory (a ``kind``-column scan of each rank file)."""
    from quiver.formats.logset import open_logs
    from quiver.replay.report.blind_spots import kinds_present

    return kinds_present(b for log in open_logs(path) for b in log.batches(["kind"]))


def _run_with_progress(log, checks: list[str], max_schedules: int, baseline: bool,
                       explicit: bool = False) -> AnalysisReport:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=console.is_terminal) as bar:
        tasks: dict[str, int] = {}
        current: list[str] = []

        def on_check(name: str) -> None:
            if current:
                bar.update(tasks[current[-1]], completed=log.num_events)
            tasks[name] = bar.add_task(f"{name:>18}", total=max(log.num_events, 1))
            current.append(name)

        def advance(n: int) -> None:
            if current:
                task = tasks[current[-1]]
                bar.advance(task, n)

        options = CheckOptions(max_schedules=max_schedules, baseline=baseline, extra={"progress": advance})
        report = run_checks(log, checks, options, on_check=on_check, explicit=explicit)
        if current:
            bar.update(tasks[current[-1]], completed=log.num_events)
    return report
