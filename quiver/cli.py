"""The `trace` command. Each subcommand lives with the part of quiver that owns it."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from typer._click import exceptions as click

from quiver.formats import LogFormatError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_UNUSABLE, EXIT_INTERNAL = 0, 1, 2, 3

app = typer.Typer(
    name="trace",
    help="Record OpenMP-offloading and MPI-RMA programs, then find data-mapping issues and RMA races.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def fail(message: str, code: int = EXIT_UNUSABLE) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise."""
    print(f"trace: error: {message}", file=sys.stderr)
    return typer.Exit(code)


@app.command(epilog="Example:  trace info run.arrow\n\n          trace info --json run.arrow")
def info(
    log: Annotated[Path, typer.Argument(help="event log written by `trace record` (or a split-log directory)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON")] = False,
) -> None:
    """What is in a log: program, ranks, threads, devices, counts by event family, time span, truncation."""
    from quiver.formats import open_logs
    from quiver.info import logset_summary, render_summary

    summary = logset_summary(open_logs(log))
    print(json.dumps(summary, indent=2, sort_keys=True) if as_json else render_summary(summary))


def _not_yet(name: str) -> Callable[..., None]:
    def command(args: Annotated[list[str] | None, typer.Argument(hidden=True)] = None) -> None:
        raise fail(f"'trace {name}' is not yet available in this version of quiver")

    command.__doc__ = f"(not yet available) {name}"
    return command


# (command name, module, function): modules owned by tracer/, replay/ and the exploration tools.
COMMANDS = [
    ("record", "quiver.tracer.commands", "record"),
    ("cc", "quiver.tracer.commands", "cc"),
    ("cxx", "quiver.tracer.commands", "cxx"),
    ("mpicc", "quiver.tracer.mpi_commands", "mpicc"),
    ("mpicxx", "quiver.tracer.mpi_commands", "mpicxx"),
    ("analyze", "quiver.replay.commands", "analyze"),
    ("explain", "quiver.replay.explain_command", "explain"),
    ("export", "quiver.export", "export"),
]


def _register() -> None:
    for name, module, func in COMMANDS:
        try:
            command = getattr(importlib.import_module(module), func)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            command = _not_yet(name)
        except AttributeError:
            command = _not_yet(name)
        settings = getattr(command, "context_settings", None)
        app.command(name, context_settings=settings)(command)


_register()


def main() -> None:
    try:
        code = app(prog_name="trace", standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except click.NoArgsIsHelpError as e:
        e.show()
        sys.exit(EXIT_UNUSABLE)
    except click.UsageError as e:
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
        print(f"trace: error: {e.format_message()}{hint}", file=sys.stderr)
        sys.exit(EXIT_UNUSABLE)
    except click.ClickException as e:
        print(f"trace: error: {e.format_message()}", file=sys.stderr)
        sys.exit(EXIT_UNUSABLE)
    except typer.Abort:
        print("trace: interrupted", file=sys.stderr)
        sys.exit(130)
    except LogFormatError as e:
        print(f"trace: error: {e}", file=sys.stderr)
        sys.exit(EXIT_UNUSABLE)
    except KeyboardInterrupt:
        print("trace: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as e:  # a bug in quiver: one line, traceback only on request
        if os.environ.get("QUIVER_DEBUG"):
            raise
        print(f"trace: internal error: {type(e).__name__}: {e} (set QUIVER_DEBUG=1 for a traceback)",
              file=sys.stderr)
        sys.exit(EXIT_INTERNAL)


if __name__ == "__main__":
    main()
