"""The `trace` command. Each subcommand lives with the part of quiver that owns it.

The typer app (quiver/cli_app.py) is built only for the command lines that need it: the usual
`trace record`, compiler-wrapper (`trace cc` ...) and plain `trace analyze LOG` command lines run
without it (`fast_command`), because typer's import and the pydantic coercers it builds cost
~0.15-0.2 s on every recorded run, compiled file or analysed log. Help, mistakes, other options and
every other command go through typer.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

TYPE_CHECKING = False   # typing's import (~2 ms) is not on `trace record`'s path before the program starts
if TYPE_CHECKING:
    from typing import Any

    import typer

EXIT_CLEAN, EXIT_FINDINGS, EXIT_UNUSABLE, EXIT_INTERNAL = 0, 1, 2, 3

# (command name, module, function): modules owned by tracer/, replay/ and the exploration tools.
COMMANDS = [
    ("record", "quiver.commands.compile", "record"),
    ("recover", "quiver.commands.compile", "recover"),
    ("cc", "quiver.commands.compile", "cc"),
    ("cxx", "quiver.commands.compile", "cxx"),
    ("mpicc", "quiver.commands.mpi", "mpicc"),
    ("mpicxx", "quiver.commands.mpi", "mpicxx"),
    ("analyze", "quiver.commands.analyze", "analyze"),
    ("explain", "quiver.commands.explain", "explain"),
    ("export", "quiver.export", "export"),
]

# compiler wrappers that pass every argument on: command -> (module with `run(lang, args)`, lang),
# what their typer commands (quiver/commands/compile.py, quiver/commands/mpi.py) call with ctx.args
PASS_THROUGH = {
    "cc": ("quiver.tracer.cc", "cc"),
    "cxx": ("quiver.tracer.cc", "cxx"),
    "mpicc": ("quiver.tracer.mpicc", "cc"),
    "mpicxx": ("quiver.tracer.mpicc", "cxx"),
}


def fail(message: str, code: int = EXIT_UNUSABLE) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise (typer-only helpers of the app itself;
    commands raise quiver.formats.errors.QuiverError instead)."""
    import typer

    print(f"trace: error: {message}", file=sys.stderr)
    return typer.Exit(code)


def fast_command(args: list[str]) -> Callable[[], int] | None:
    """The command line run without typer, or None when typer must parse it: `record` with the usual
    options (quiver/commands/record.py), a pass-through wrapper without `--` or `--help` (which typer
    consumes or answers), `analyze LOG` with at most a report format."""
    if not args:
        return None
    name, rest = args[0], args[1:]
    if name in PASS_THROUGH and not any(a == "--" or a.startswith("--help") for a in rest):
        module, lang = PASS_THROUGH[name]
        return lambda: importlib.import_module(module).run(lang, rest)
    if name == "record":
        from quiver.commands import record as record_cli

        parsed = record_cli.parse(rest)
        return None if parsed is None else lambda: record_cli.run(**parsed)
    if name == "analyze":
        found = _analyze_args(rest)
        return None if found is None else lambda: _analyze(*found)
    return None


ANALYZE_FORMATS = ("text", "json", "sarif")  # quiver/commands/analyze_run.ReportFormat (a test checks)


def _analyze_args(args: list[str]) -> tuple[str, str] | None:
    """(log, format) of `trace analyze LOG` with at most `--format F` / `-f F`; None for anything else
    (the other options, help, mistakes: typer's)."""
    fmt, logs, i = None, [], 0
    while i < len(args):
        a = args[i]
        if a.startswith("--format="):
            value, i = a.partition("=")[2], i + 1
        elif a in ("--format", "-f") and i + 1 < len(args):
            value, i = args[i + 1], i + 2
        elif a.startswith("-"):
            return None
        else:
            logs.append(a)
            i += 1
            continue
        if fmt is not None or value not in ANALYZE_FORMATS:
            return None
        fmt = value
    return (logs[0], fmt or "text") if len(logs) == 1 else None


def _analyze(log: str, fmt: str) -> int:
    """`trace analyze` with its defaults but `log` and `fmt` (the typer command's body, without typer)."""
    from pathlib import Path

    analyze_run = import_without_gc("quiver.commands.analyze_run")
    return analyze_run.run(Path(log), analyze_run.ReportFormat(fmt))


def import_without_gc(name: str) -> Any:
    """Import module ``name`` with the cyclic garbage collector off, then freeze what is loaded by then
    (`gc.freeze`) and turn the collector back on. Why: numpy's and quiver's imports leave ~33,000 tracked
    objects that live as long as the process, and the collections their allocations trigger rescan them
    again and again: ~5 % of a small log's `trace analyze` (docs/bench.md "Start-up of `trace analyze`").
    Frozen, they are not scanned by the collections during the checks either."""
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(name)
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


# commands that read logs: a log whose recording was interrupted is recovered first
READS_LOGS = ("info", "analyze", "explain", "export")


def recover_interrupted(args: list[str]) -> None:
    """For `trace info/analyze/explain/export`: finalize the raw directory (`LOG.raw`) a killed
    `trace record` left next to a log named on the command line, saying so on stderr."""
    if not args or args[0] not in READS_LOGS:
        return
    from pathlib import Path

    from quiver.tracer.raw_names import may_have_recording

    candidates = [a for a in args[1:] if a and not a.startswith("-") and Path(a).parent.is_dir()
                  and may_have_recording(a)]
    if not candidates:
        return

    from quiver.tracer.recover import (
        NotRecoverable,
        busy_recording,
        pending_recovery,
        recover,
        recovered_note,
    )

    for a in candidates:
        raw = pending_recovery(Path(a))
        if raw is None:
            busy = None if Path(a).exists() else busy_recording(Path(a))
            if busy:  # a killed recording still flushing: say so instead of "no such file"
                print(f"trace: warning: {a} is not written yet: {busy}; try again when it ends", file=sys.stderr)
            continue
        try:
            done = recover(raw, Path(a))
        except NotRecoverable as e:
            print(f"trace: warning: {e}", file=sys.stderr)
            continue
        print(f"trace: {a}: its recording was interrupted; recovered it from {raw.name} ({recovered_note(done.meta)})",
              file=sys.stderr)


def one_blas_thread() -> None:
    """numpy's OpenBLAS starts a thread per core at import (~0.03 s of CPU on 2 cores, more on a busy
    machine), and no command multiplies matrices: the commands that read logs ask for one unless the
    user chose. (`trace record` asks in its own process only after the program started: the program
    keeps the user's environment.)"""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run(args: list[str], exit_now: bool = False) -> int:
    """Exit status of `trace ARGS`; errors are one line on stderr, a traceback only on request.
    `exit_now`: after a command line run without typer, end the process at once (`_exit_now`)."""
    if args in (["--version"], ["-V"]):
        from quiver.formats.version import __version__

        print(f"trace (quiver) {__version__}")
        return 0
    if args and args[0] in READS_LOGS:
        one_blas_thread()
    try:
        recover_interrupted(args)
        fast = fast_command(args)
        if fast is not None:
            code = fast()
            if exit_now:
                _exit_now(code)
            return code
        from quiver.cli_app import run_app

        return run_app(args)
    except KeyboardInterrupt:
        print("trace: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        discard_stdout()
        return 0
    except Exception as e:
        errors = sys.modules.get("quiver.formats.errors")  # not loaded: cannot be one of ours
        if errors is not None and isinstance(e, errors.QuiverError):
            print(f"trace: error: {e}", file=sys.stderr)
            return e.exit_code
        if isinstance(e, MemoryError) and not os.environ.get("QUIVER_DEBUG"):  # a resource limit, not a bug
            print(f"trace: error: out of memory ({_first_line(e)}): the input is too large or damaged",
                  file=sys.stderr)
            return EXIT_UNUSABLE
        if os.environ.get("QUIVER_DEBUG"):  # a bug in quiver: one line, traceback only on request
            raise
        print(f"trace: internal error: {type(e).__name__}: {_first_line(e)} (set QUIVER_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL


def _first_line(e: BaseException) -> str:
    """An exception's message on one line (polars and pyarrow messages span several)."""
    text = " ".join(str(e).split())
    return text[:300]


def stdout_reader_gone() -> bool:
    """Whether stdout is a pipe whose reading end was closed (poll reports an error on it)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLERR)
        return bool(poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def discard_stdout() -> None:
    """The reader of our stdout went away (`trace export -o - | head`): like any Unix filter, end
    quietly with status 0; what is still buffered goes to /dev/null instead of raising at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _exit_now(code: int) -> None:
    """Exit without the interpreter's teardown of numpy and pyarrow (~40 ms after `trace record`):
    the log is closed and no thread or temporary file is left, only stdio to flush."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def main() -> None:
    # every command has closed its files and pools when run() returns; the interpreter's teardown
    # could still abort in a native thread pool a failed read left behind ("terminate called without
    # an active exception", exit -6 instead of 2), so the process ends here
    _exit_now(run(sys.argv[1:], exit_now=True))


def __getattr__(name: str) -> Any:
    if name == "app":  # the typer app, built on first use
        from quiver.cli_app import app

        return app
    raise AttributeError(f"module 'quiver.cli' has no attribute {name!r}")


if __name__ == "__main__":
    main()
