"""The typer app of `trace`: every command of quiver/cli.py's COMMANDS, with help and error messages.

Why separate from quiver/cli.py: building it (typer, and pydantic for every parameter it parses)
costs ~0.2 s, which the usual `trace record` and `trace cc` command lines skip.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from typer._click import exceptions as click

from quiver.cli import COMMANDS, EXIT_UNUSABLE, discard_stdout, fail, stdout_reader_gone

app = typer.Typer(
    name="trace",
    help="Record OpenMP-offloading and MPI-RMA programs, then find data-mapping issues and RMA races.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    # plain help (no boxes) wrapped at the terminal's width, not cut at 80 columns
    context_settings={"help_option_names": ["-h", "--help"],
                      "max_content_width": max(shutil.get_terminal_size((100, 24)).columns, 80)},
)

# Option types as man pages write them (PATH, N, TEXT, [a|b]) instead of typer's <path>, <int range>.
_TYPE_WORDS = {"path": "PATH", "file": "FILE", "directory": "DIR", "int": "N", "int range": "N", "float": "NUMBER",
               "float range": "NUMBER", "str": "TEXT", "list[str]": "TEXT", "list[path]": "PATH", "bool": ""}


def _readable_type(plain: Callable[..., str]) -> Callable[..., str]:
    def display_type(self, ctx) -> str:
        label = plain(self, ctx)
        inner = label[1:-1] if label.startswith("<") and label.endswith(">") else label
        if inner in _TYPE_WORDS:
            return _TYPE_WORDS[inner]
        return f"[{inner}]" if "|" in inner else inner.upper()

    return display_type


_param = getattr(importlib.import_module("typer.core"), "_TyperParameter", None)
if _param is not None and hasattr(_param, "display_type"):
    _param.display_type = _readable_type(_param.display_type)


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", "-V", is_eager=True,
                                                   help="print quiver's version and exit")] = False) -> None:
    """Record OpenMP-offloading and MPI-RMA programs, then find data-mapping issues and RMA races."""
    if version:   # (quiver/cli.py answers `trace --version` before typer; this lists it in --help)
        from quiver.formats.version import __version__

        print(f"trace (quiver) {__version__}")
        raise typer.Exit(0)


@app.command(epilog="Example:  trace info run.arrow\n\n          trace info --json run.arrow\n\n          trace info --verify run.arrow")
def info(
    log: Annotated[Path, typer.Argument(help="event log written by `trace record` (or a split-log directory)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON")] = False,
    verify: Annotated[bool, typer.Option("--verify", help="read and check every event (checksums, values) "
                                                          "instead of trusting the stored counts")] = False,
) -> None:
    """What is in a log: program, ranks, threads, devices, counts by event family, time span, truncation.

    Reads the counts `trace record` stored in the log's checksummed metadata (under a second at any
    size); logs without them, and --verify, read every event. A damaged log is then described as far as
    it is readable, with one DAMAGED line per damaged batch (what it held), and exits 2."""
    from quiver.formats import open_logs
    from quiver.info import logset_summary, render_summary

    summary = logset_summary(open_logs(log), verify)
    print(json.dumps(summary, indent=2, sort_keys=True) if as_json else render_summary(summary))
    if summary["damaged"]:
        more = len(summary["damaged"]) - 1
        print(f"trace: error: {summary['damaged'][0]}" + (f" (and {more} more damaged batches)" if more else ""),
              file=sys.stderr)
        raise typer.Exit(EXIT_UNUSABLE)


def _not_yet(name: str) -> Callable[..., None]:
    def command(args: Annotated[list[str] | None, typer.Argument(hidden=True)] = None) -> None:
        raise fail(f"'trace {name}' is not yet available in this version of quiver")

    command.__doc__ = f"(not yet available) {name}"
    return command


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


def run_app(args: list[str]) -> int:
    """Run `trace ARGS` through typer; its usage errors become one line on stderr and exit 2."""
    try:
        code = app(args, prog_name="trace", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except click.NoArgsIsHelpError as e:
        e.show()
        return EXIT_UNUSABLE
    except click.UsageError as e:
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
        print(f"trace: error: {e.format_message()}{hint}", file=sys.stderr)
        return EXIT_UNUSABLE
    except click.ClickException as e:
        print(f"trace: error: {e.format_message()}", file=sys.stderr)
        return EXIT_UNUSABLE
    except typer.Abort:
        print("trace: interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        if stdout_reader_gone():   # click turns EPIPE into exit 1: `trace export -o - | head` ends with 0
            discard_stdout()
            return 0
        raise
