"""`trace record` without typer: the command's body, and a parser for its usual command lines.

Why: typer builds pydantic coercers for every parameter it parses, ~0.2 s (with its import) on every
recorded run. The usual command lines (-o/--output, -n/--ranks, --launcher, --split, --timeout,
then the program) are parsed here; anything else (help, a mistake, a rarer spelling such as `-oX`) goes to
the typer command (quiver/commands/compile.py), so help and error messages stay typer's, and both call `run`.
"""

from __future__ import annotations

import sys
from pathlib import Path

# parameter of `run` -> its option names: declared once here, the typer command takes its names from
# this table too (typer.Option(*OPTION_NAMES["output"]) in quiver/commands/compile.py)
OPTION_NAMES = {"output": ("-o", "--output"), "ranks": ("-n", "--ranks"), "launcher": ("--launcher",),
                "split": ("--split",), "timeout": ("--timeout",),
                "force": ("--force",)}
FLAGS = ("split", "force")
VALUE_OPTIONS = {name: param for param, names in OPTION_NAMES.items() if param not in FLAGS for name in names}
FLAG_OPTIONS = {name: param for param in FLAGS for name in OPTION_NAMES[param]}


def parse(args: list[str]) -> dict | None:
    """The arguments of `run` for `trace record ARGS`, or None when typer must parse ARGS."""
    opts: dict = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a == "-" or not a.startswith("-"):  # the program: options end here (no interspersed args)
            break
        name, eq, value = a.partition("=")
        if name in FLAG_OPTIONS and not eq:
            key, i = FLAG_OPTIONS[name], i + 1
            opts[key] = True
            continue
        if name not in VALUE_OPTIONS or (eq and not name.startswith("--")):
            return None
        if not eq:
            if i + 1 == len(args):
                return None
            value = args[i + 1]
        i += 1 if eq else 2
        key = VALUE_OPTIONS[name]
        if key in opts or not value or value.startswith("-"):
            return None
        opts[key] = value
    program = args[i:]
    if not program:
        return None
    ranks = opts.get("ranks")
    if ranks is not None:
        if not (ranks.isascii() and ranks.isdigit() and int(ranks) >= 1):
            return None
        ranks = int(ranks)
    output = opts.get("output")
    return {"program": program, "output": Path(output) if output is not None else None, "ranks": ranks,
            "launcher": opts.get("launcher"), "split": opts.get("split", False), "timeout": opts.get("timeout"),
            "force": opts.get("force", False)}


def run(program: list[str], output: Path | None, ranks: int | None, launcher: str | None, split: bool,
        timeout: str | None = None, force: bool = False) -> int:
    """Record `program`; returns the exit status of `trace record` (errors: one line on stderr, 2)."""
    from quiver.tracer.launch import parse_duration
    from quiver.tracer.native import BuildError
    from quiver.tracer.record import ProgramNotRunnable, record

    if not program:
        print("trace: error: no program given (usage: trace record -o run.arrow -- ./prog args)", file=sys.stderr)
        return 2
    try:
        limit = parse_duration(timeout) if timeout is not None else None
    except ValueError as e:
        print(f"trace: error: --timeout: {e}", file=sys.stderr)
        return 2
    try:
        out = output if output is not None else Path("run.d" if split else "run.arrow")
        return record(program, out, ranks=ranks, launcher=launcher, split=split, timeout=limit,
                      force=force).exit_code
    except (FileExistsError, ProgramNotRunnable) as e:
        print(f"trace: error: {e}", file=sys.stderr)
    except FileNotFoundError as e:
        print(f"trace: error: program not found: {e.args[0] if e.args else program[0]}", file=sys.stderr)
    except PermissionError:
        print(f"trace: error: cannot run {program[0]}: permission denied", file=sys.stderr)
    except BuildError as e:
        print(f"trace: error: {e}", file=sys.stderr)
    return 2
