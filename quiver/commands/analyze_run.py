"""`trace analyze` without typer: the command's body (`run`), its report formats and renderers.

Why apart from the typer command (quiver/commands/analyze.py): typer's import costs ~0.04 s of CPU,
and the usual `trace analyze LOG [--format F]` command line is run without it (quiver/cli.py), as
`trace record` is (quiver/commands/record.py). Both call `run`.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

from quiver.formats import read_log
from quiver.replay.driver import AnalysisReport, UnknownCheck, resolve_checks, run_checks
from quiver.replay.registry import CheckOptions

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


def run(log: Path, fmt: ReportFormat = ReportFormat.text, check: list[str] | None = None, max_schedules: int = 64,
        baseline: bool = False, output: Path | None = None, progress: bool | None = None, workers: int | None = None,
        dask: str | None = None, scratch: Path | None = None, source_root: Path | None = None,
        fail_on_blind: bool = False) -> int:
    """`trace analyze` (quiver/commands/analyze.py says what each parameter is); returns the exit status."""
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
