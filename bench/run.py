#!/usr/bin/env python3
"""`make bench`: native vs recorded run time, log size, analysis speed and peak memory per kernel,
next to valgrind memcheck and the sanitizers; prints one table and writes bench/results.json.

    .venv/bin/python bench/run.py [--quick] [--repeat N] [--kernels a,b] [--no-tools] [--huge N]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quiver.replay.registry import CHECKERS
from qvbench import build as builds
from qvbench import kernels as catalogue
from qvbench.report import render, summary
from qvbench.suite import Context, Settings, measure_kernel, measure_synthetic

BENCH = Path(__file__).resolve().parent
OUT_HINT = "the run output under --workdir/out/"
SYNTHETIC_EVENTS, SYNTHETIC_QUICK = 10_000_000, 1_000_000


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"bench: error: {message} (see 'bench/run.py --help')", file=sys.stderr)
        sys.exit(2)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = Parser(prog="bench/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes (CI smoke): proves the pipeline, not speed")
    p.add_argument("--repeat", type=int, default=3, help="rounds of alternated runs; medians are reported (3)")
    p.add_argument("--kernels", help="comma-separated kernels to run (default: all)")
    p.add_argument("--source", type=Path, metavar="FILE.c",
                   help="measure this OpenMP C program instead of the built-in kernels (with --args)")
    p.add_argument("--args", default="", metavar="'A B'", help="arguments for --source's program")
    p.add_argument("--opt", default="-O2", choices=["-O0", "-O1", "-O2", "-O3"],
                   help="optimisation level of --source's native and recorded builds (-O2)")
    p.add_argument("--no-tools", action="store_true", help="skip valgrind memcheck and the sanitizers")
    p.add_argument("--no-full", action="store_true",
                   help="skip the full-size rounds: only the reduced-size comparison with the tools")
    p.add_argument("--tool-timeout", type=float, default=300.0, help="seconds one tool run may take (300)")
    p.add_argument("--synthetic", type=int, default=None,
                   help=f"access events in the synthetic row (default {SYNTHETIC_EVENTS:,}; "
                        f"{SYNTHETIC_QUICK:,} with --quick; 0 skips it)")
    p.add_argument("--huge", type=int, default=0, metavar="N",
                   help="also stream a synthetic log of N access events with LogWriter and report "
                        "`trace analyze` peak memory")
    p.add_argument("--json", type=Path, default=BENCH / "results.json", help="where to write the results")
    p.add_argument("--workdir", type=Path, default=BENCH / "build", help="builds, logs and run output")
    p.add_argument("--keep-logs", action="store_true", help="keep the recorded and synthetic logs")
    a = p.parse_args(argv)
    if a.no_full and a.no_tools and not a.huge and not a.synthetic:
        p.error("--no-full with --no-tools leaves nothing to measure")
    if a.repeat < 1:
        p.error("--repeat must be at least 1")
    if a.huge < 0 or (a.synthetic is not None and a.synthetic < 0):
        p.error("event counts must not be negative")
    try:
        if a.source is not None:
            a.kernel_list = [catalogue.from_source(a.source, a.args.split(), a.opt)]
        else:
            a.kernel_list = catalogue.select(a.kernels)
    except ValueError as e:
        p.error(str(e))
    if a.no_full and a.no_tools:  # only the synthetic logs
        a.kernel_list = []
    return a


def _version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=30).stdout
        return out.strip().splitlines()[0] if out.strip() else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "not installed"


def machine() -> dict[str, Any]:
    return {
        "host": platform.node(), "cpus": os.cpu_count(), "load_avg": os.getloadavg(),
        "python": platform.python_version(), "clang": _version([builds.CLANG, "--version"]),
        "valgrind": _version(["valgrind", "--version"]), "date_unix": int(time.time()),
        "trace_commands": {c: builds.trace_available(c) for c in ("cc", "mpicc", "record", "analyze")},
    }


def lock_workdir(workdir: Path):
    """Hold ``workdir/.lock`` for this process's life: two benches in one workdir would delete and
    overwrite each other's logs (a run of one then reads a half-written or missing log of the other)."""
    workdir.mkdir(parents=True, exist_ok=True)
    f = open(workdir / ".lock", "a+")  # noqa: SIM115 - kept open until the process exits
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "?"
        print(f"bench: error: another bench run (pid {holder}) is using {workdir}; wait for it or pass "
              "--workdir DIR", file=sys.stderr)
        sys.exit(2)
    f.truncate(0)
    f.write(f"{os.getpid()}\n")
    f.flush()
    return f


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    a = parse_args(argv)
    lock = lock_workdir(a.workdir.resolve())  # noqa: F841 - held until exit
    quick = a.quick
    synthetic_events = a.synthetic if a.synthetic is not None else (SYNTHETIC_QUICK if quick else SYNTHETIC_EVENTS)
    settings = Settings(repeat=a.repeat, quick=quick, tools=not a.no_tools, full=not a.no_full, tool_timeout=a.tool_timeout,
                        workdir=a.workdir.resolve(), keep_logs=a.keep_logs)
    shutil.rmtree(settings.workdir / "out", ignore_errors=True)
    err = Console(stderr=True)
    results: dict[str, Any] = {
        "settings": {"quick": quick, "repeat": a.repeat, "tools": settings.tools, "full": settings.full, "tool_timeout_s": a.tool_timeout,
                     "kernels": [k.name for k in a.kernel_list]},
        "machine": machine(), "kernels": [], "errors": [],
    }
    # steps: per kernel 2 builds + 3 per round, tools: 3 builds + 6 per round; synthetic: 1 + rounds
    total = sum(2 + 3 * a.repeat + (3 + 6 * a.repeat if settings.tools and k.has_tools else 0) for k in a.kernel_list)
    total += (3 + a.repeat) if synthetic_events else 0   # write, info, analyze rounds, checker
    total += 3 + len(CHECKERS) if a.huge else 0   # write, info, analyze, one run per checker
    with Progress(TextColumn("[bold]bench[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=err, transient=False) as progress:
        task = progress.add_task("starting", total=total)

        def step(msg: str) -> None:
            progress.update(task, description=msg, advance=1)

        ctx = Context(settings, step=step)
        for k in a.kernel_list:
            try:
                results["kernels"].append(measure_kernel(ctx, k))
            except RuntimeError as e:
                results["errors"].append(str(e))
        if synthetic_events:
            results["synthetic"] = measure_synthetic(ctx, synthetic_events, streamed=False, name="synthetic")
        if a.huge:
            results["huge"] = measure_synthetic(ctx, a.huge, streamed=True, name="huge")
        progress.update(task, description="done", completed=total)
    for k in results["kernels"]:
        if k.get("recorded_error"):
            results["errors"].append(f"{k['name']} recorded: {k['recorded_error']}")
    for key in ("synthetic", "huge"):
        if results.get(key, {}).get("error"):
            results["errors"].append(f"{key}: {results[key]['error']}")
    results["errors"] = sorted(set(results["errors"]))
    results["summary"] = summary(results)
    results["tmpfiles_removed"] = ctx.sweeper.removed
    a.json.parent.mkdir(parents=True, exist_ok=True)
    a.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    out = Console(width=max(200, Console().width), soft_wrap=False)
    render(results, out)
    err.print(f"results written to {a.json}")
    for note in retried(results):
        err.print(f"[yellow]retried:[/] {note}")
    failed = failures(results)
    for f in failed:
        err.print(f"[red]failed:[/] {f}")
    return 1 if failed else 0


def failures(results: dict[str, Any]) -> list[str]:
    """Runs that should have worked and did not (a part not built yet is not a failure)."""
    out = [e for e in results["errors"] if "not available yet" not in e]
    for k in results["kernels"]:
        for part in ("native", "recorded", "analyze"):
            if k.get(part) and k[part]["failed"]:
                out.append(f"{k['name']}: {k[part]['failed']} {part} run(s) failed (see {OUT_HINT})")
    return out


def retried(results: dict[str, Any]) -> list[str]:
    """Runs measured again because libomp itself aborted (runner.RUNTIME_FAULT), said so the
    reader knows the runtime, not the kernel or the tracer, was flaky."""
    out = []
    for k in results["kernels"]:
        for prefix, rows in (("", k), ("tools ", k.get("tools") or {})):
            for part, v in rows.items():
                if isinstance(v, dict) and v.get("retried"):
                    out.append(f"{k['name']}: {v['retried']} {prefix}{part} attempt(s) died of libomp's "
                               f"known task_team assertion and were run again")
    return out


if __name__ == "__main__":
    sys.exit(main())
