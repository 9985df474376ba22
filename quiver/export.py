"""`trace export`: a log as a timeline for ui.perfetto.dev / chrome://tracing, or as Parquet.

The pieces: ``export_timeline`` (the log as slices, flows and instants), ``export_chrome``
(Chrome trace-event JSON), ``export_parquet`` (one Parquet file per event family).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

FORMATS = ("perfetto", "chrome", "parquet")


def parse_ranks(text: str | None) -> list[int] | None:
    """``"0,2"`` -> [0, 2]; ranges ``"0-3"`` are accepted too."""
    if text is None:
        return None
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"bad --ranks {text!r}: use comma-separated ranks such as 0,2 or 0-3")
        out.update(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    if not out:
        raise ValueError(f"bad --ranks {text!r}: no rank given")
    return sorted(out)


def default_output(log: Path, to: str) -> Path:
    base = log.with_suffix("") if log.suffix == ".arrow" else log
    return base.with_name(base.name + (".parquet" if to == "parquet" else ".json"))


def _findings(log, checks: list[str] | None) -> list:
    from quiver.trace import Trace
    return Trace(log).check(checks)


def _waste(log):
    """Every transfer with the bytes it wasted (to mark them on the timeline); None without accesses."""
    if not log.run.get("has_accesses", True):
        return None
    from quiver.replay.transfers.redundant import transfer_waste
    return transfer_waste(log)


def _run_findings(logs, checks: list[str] | None) -> list:
    """Findings of a whole split run (MPI-RMA races need every rank), as `trace analyze run.d` gives."""
    from quiver.replay.distributed.run import analyze_sharded
    from quiver.replay.driver import resolve_checks
    return analyze_sharded(logs.path, checks or resolve_checks(None)).findings


def export(
    log: Annotated[Path, typer.Argument(help="event log written by `trace record` (or a split-log directory)")],
    to: Annotated[str, typer.Option("--to", "-t", help="perfetto, chrome (the same JSON) or parquet")],
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="output file (JSON; '-' for stdout) or directory (parquet); "
                               "default: next to the log")] = None,
    from_ns: Annotated[int | None, typer.Option("--from-ns", help="keep what overlaps this time (ns) and later")] = None,
    to_ns: Annotated[int | None, typer.Option("--to-ns", help="keep what starts at this time (ns) or earlier")] = None,
    ranks: Annotated[str | None, typer.Option("--ranks", help="only these ranks, e.g. 0,2 or 0-3")] = None,
    findings: Annotated[bool, typer.Option("--findings/--no-findings",
                                           help="run the checkers and add their findings")] = True,
    check: Annotated[list[str] | None, typer.Option("--check", help="checkers to run for --findings "
                                                                     "(default: the default set)")] = None,
) -> None:
    """Export a log: a timeline for ui.perfetto.dev or chrome://tracing (kernels and data transfers
    per device, RMA calls as arrows from origin to target, findings as markers), or Parquet
    files (one per event family) for other tools."""
    from quiver.formats.errors import UsageError
    from quiver.formats.logset import open_logs

    if to not in FORMATS:
        raise UsageError(f"unknown export format {to!r}; use one of {', '.join(FORMATS)}")
    try:
        rank_list = parse_ranks(ranks)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if from_ns is not None and to_ns is not None and from_ns > to_ns:
        raise UsageError(f"--from-ns {from_ns} is after --to-ns {to_ns}")
    logs = open_logs(log)
    out = output if output is not None else default_output(log, to)
    if to == "parquet" and str(out) == "-":
        raise UsageError("parquet needs an output directory, not stdout")
    if to == "parquet" and len(logs) > 1:
        raise UsageError(f"{log} is a split log: export each of its rank-*.arrow files to Parquet")
    if to == "parquet" and out.exists():
        from .export_parquet import is_parquet_export
        if not is_parquet_export(out):
            raise UsageError(f"{out} exists and is not a quiver Parquet export; choose another -o")
    if check:
        from quiver.replay.driver import UnknownCheck, resolve_checks
        try:
            check = resolve_checks(check)
        except UnknownCheck as e:
            raise UsageError(str(e)) from None
    try:
        if to == "parquet":
            written = _export_parquet(logs, out, rank_list, from_ns, to_ns, findings, check)
            what = f"{sum(written.values())} rows in {len(written)} files"
        else:
            n = _export_chrome(logs, out, rank_list, from_ns, to_ns, findings, check)
            what = f"{n} trace events; open it in https://ui.perfetto.dev or chrome://tracing"
    except BrokenPipeError:
        raise   # `-o - | head`: the reader is gone, quiver/cli.py ends quietly
    except (FileExistsError, OSError) as e:
        from quiver.formats.safe_write import OutputError

        plain = isinstance(e, (FileExistsError, OutputError))
        raise UsageError(str(e) if plain else f"{out}: cannot write ({e.strerror})") from None
    if str(out) != "-":
        print(f"trace: wrote {out}: {what}", file=sys.stderr)


def _export_chrome(logs, out: Path, ranks, from_ns, to_ns, with_findings: bool, checks) -> int:
    import polars as pl  # here, not at the top: every `trace` command imports this module

    from .export_chrome import write_chrome_trace
    from .export_timeline import Timeline, build_timeline

    parts = []
    run_found = _run_findings(logs, checks) if with_findings and logs.split else None
    for ev_log in logs:
        if run_found is not None:   # a rank file shows its own rank's findings of the whole run
            found = [f for f in run_found if f.access.rank == ev_log.run.get("rank", f.access.rank)]
        else:
            found = _findings(ev_log, checks) if with_findings else None
        waste = _waste(ev_log) if with_findings else None
        parts.append(build_timeline(ev_log, ranks=ranks, from_ns=from_ns, to_ns=to_ns, findings=found, waste=waste))
    tl = parts[0] if len(parts) == 1 else Timeline(
        slices=pl.concat([p.slices for p in parts]).sort("start_ns", "rank", "tid", "seq"),
        instants=pl.concat([p.instants for p in parts]).sort("time_ns", "rank", "tid", "seq"),
        flows=pl.concat([p.flows for p in parts]).sort("from_ns", "id"),
        tracks=pl.concat([p.tracks for p in parts]).unique().sort("rank", "sort"),
        ranks=sorted({r for p in parts for r in p.ranks}), program=parts[0].program)
    other = {"source": str(logs.path), "program": tl.program, "quiver_export": "perfetto",
             "filters": {"ranks": ranks, "from_ns": from_ns, "to_ns": to_ns}}
    if str(out) == "-":
        return write_chrome_trace(tl, sys.stdout, other=other)
    return write_chrome_trace(tl, out, other=other)


def _export_parquet(logs, out: Path, ranks, from_ns, to_ns, with_findings: bool, checks) -> dict[str, int]:
    from quiver.trace import findings_frame

    from .export_parquet import write_parquet_dir

    ev_log = logs.open(0)
    found = findings_frame(_findings(ev_log, checks)) if with_findings else None
    return write_parquet_dir(ev_log, out, ranks=ranks, from_ns=from_ns, to_ns=to_ns, findings=found)


export.context_settings = {"help_option_names": ["-h", "--help"]}
