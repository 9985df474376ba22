"""Typer commands of the recording side: `trace cc`, `trace cxx`, `trace record`, `trace recover`.

quiver/cli.py runs the usual `record` and `cc` command lines without typer (quiver/commands/record.py,
the pass-through commands directly): what is here is their help and their error messages.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from quiver.commands.record import OPTION_NAMES
from quiver.tracer import cc as ccmod

_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": ["--help"]}


def cc(ctx: typer.Context) -> None:
    """Compile C like clang-19, adding host offloading, access instrumentation and the tracer.

    Every argument goes to clang-19 unchanged, e.g. `trace cc -g -O1 prog.c -o prog`.
    As CC in a build: CC=quiver-cc (the same wrapper as a plain executable).
    """
    raise typer.Exit(ccmod.run("cc", list(ctx.args)))


def cxx(ctx: typer.Context) -> None:
    """Compile C++ like clang++-19, adding host offloading, access instrumentation and the tracer.

    Every argument goes to clang++-19 unchanged. As CXX in a build: CXX=quiver-cxx.
    """
    raise typer.Exit(ccmod.run("cxx", list(ctx.args)))


cc.context_settings = _PASS_THROUGH
cxx.context_settings = _PASS_THROUGH


def record(
    program: Annotated[list[str], typer.Argument(help="the program and its arguments (after --)",
                                                 show_default=False)],
    output: Annotated[Path | None, typer.Option(*OPTION_NAMES["output"], help="event log to write (default run.arrow; "
                                                "run.d with --split)")] = None,
    ranks: Annotated[int | None, typer.Option(*OPTION_NAMES["ranks"], min=1,
                                              help="run RANKS MPI processes under the launcher")] = None,
    launcher: Annotated[str | None, typer.Option(*OPTION_NAMES["launcher"],
                                                 help="launcher command used with -n (default mpiexec.mpich)")] = None,
    split: Annotated[bool, typer.Option(*OPTION_NAMES["split"], help="write a directory with one log per rank and a "
                                        "manifest instead of one merged log (for big runs)")] = False,
    timeout: Annotated[str | None, typer.Option("--timeout", metavar="DURATION",
                                                help="end the program after DURATION (30, 30s, 2m, 1h) like a "
                                                "batch system: SIGTERM, SIGKILL 5 s later; the log is marked "
                                                "truncated and trace record exits 124")] = None,
    force: Annotated[bool, typer.Option(*OPTION_NAMES["force"], help="replace an existing file that is not a quiver log "
                                        "(never a directory); record beside a leftover OUT.raw/")] = False,
) -> None:
    """Run a program with the tracer and write one event log; exits with the program's status.

    Example:  trace record -o run.arrow -- ./prog 100
              trace record -n 1024 --split -o run.d -- ./app
              trace record --timeout 10m -o run.arrow -- ./long_job
    """
    from quiver.commands import record as record_cli

    raise typer.Exit(record_cli.run(program, output, ranks, launcher, split, timeout, force))


record.context_settings = {"allow_interspersed_args": False, "help_option_names": ["-h", "--help"]}


def recover(
    raw: Annotated[Path, typer.Argument(help="raw directory a killed `trace record` left (e.g. run.arrow.raw)")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="log to write (default: the one "
                                                "trace record was writing)")] = None,
) -> None:
    """Turn the raw chunks of an interrupted recording into a log, marked truncated.

    `trace info` and `trace analyze` do it on their own when they find run.arrow.raw next to run.arrow.

    Example:  trace recover run.arrow.raw
    """
    from quiver.tracer.recover import NotRecoverable, recovered_note
    from quiver.tracer.recover import recover as do_recover

    try:
        done = do_recover(raw, output)
    except NotRecoverable as e:
        print(f"trace: error: {e}", file=sys.stderr)
        raise typer.Exit(2) from None
    print(f"trace: recovered {done.log} from {raw} ({recovered_note(done.meta)})", file=sys.stderr)
