"""The binary tools finalize runs on the executable (llvm-symbolizer, llvm-dwarfdump), and
processes of them started while the program runs.

Why: on a small program the fixed cost of `trace record` is start-up, imports and finalize; the
tools depend only on the executable (the symbolizer on nothing: it is told each address's object,
and answers the global objects behind map clauses too), so `trace record` starts them together with
the program (`prestart`), their start-up (each loads libLLVM) overlaps the program and finalize's
imports, and finalize only collects their output (`output`). A command nobody started is simply
run. `stop_all` ends whatever finalize did not use, so no process outlives `trace record`.

No numpy here: this module is imported before the program starts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

# A full DWARF dump of executables up to this size is started with the program (the variables
# named in map clauses are known only from the log); bigger ones are searched by name afterwards.
FULL_DUMP_MAX_BYTES = 1 << 20

_started: dict[tuple[str, ...], subprocess.Popen] = {}
_answered: list[subprocess.Popen] = []   # killed once their answers were read, reaped by stop_all


def _which(*names: str) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


def symbolizer() -> str | None:
    return _which("llvm-symbolizer-19", "llvm-symbolizer")


def dwarfdump() -> str | None:
    return _which("llvm-dwarfdump-19", "llvm-dwarfdump")


def symbolizer_argv(tool: str) -> list[str]:
    """Lines `"OBJECT" ADDRESS` (code) and `DATA "OBJECT" ADDRESS` (the symbol holding a data address) on
    stdin, one JSON record per line on stdout: one process for every object of the run (the executable,
    its libraries, the device images found only after the run)."""
    return [tool, "--output-style=JSON", "--inlining", "--demangle"]


def dwarf_names_argv(tool: str, exe: str, names: list[str]) -> list[str]:
    """The DIEs called one of ``names``, each after its parents."""
    return [tool, "--show-parents", *[f"--name={v}" for v in names], exe]


def dwarf_all_argv(tool: str, exe: str) -> list[str]:
    """Every DIE, parents before children (what dwarf_names_argv prints, and more)."""
    return [tool, "--debug-info", exe]


def prestart(exe: Path, objects: bool = True) -> None:
    """Start the tools finalize will run on ``exe``, if they are installed. ``objects``: also the
    debug-info reader, which finalize needs only for map clauses naming locals (a program that never
    calls the offloading runtime has none: finalize then runs it itself if it needs it)."""
    path = os.path.realpath(exe)
    if tool := symbolizer():
        start(symbolizer_argv(tool), stdin=True)
    if not objects:
        return
    tool = dwarfdump()
    try:
        small = os.path.getsize(path) <= FULL_DUMP_MAX_BYTES
    except OSError:
        small = False
    if tool and small:
        start(dwarf_all_argv(tool, path))


def start(argv: list[str], stdin: bool = False) -> None:
    key = tuple(argv)
    if key in _started:
        return
    try:
        _started[key] = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError:
        pass


def started(argv: list[str]) -> bool:
    return tuple(argv) in _started


def output(argv: list[str], stdin: str | None = None) -> str:
    """The standard output of ``argv`` (given ``stdin``): of its started process if there is one."""
    proc = _started.pop(tuple(argv), None)
    if proc is None:
        return subprocess.run(argv, input=stdin, check=False, capture_output=True, text=True).stdout
    out, _ = proc.communicate(stdin)
    return out


def answers(argv: list[str], lines: list[str]) -> list[str]:
    """The output lines of a tool that answers each input line with one line (llvm-symbolizer's JSON
    style), given ``lines``. A started process is not waited for: once it has answered them all (or
    ended) it is killed and left for stop_all to reap, because its exit (unloading libLLVM: 3-15 ms)
    would otherwise be on finalize's path, after the program."""
    text = "".join(f"{line}\n" for line in lines)
    proc = _started.pop(tuple(argv), None)
    if proc is None:
        return subprocess.run(argv, input=text, check=False, capture_output=True, text=True).stdout.splitlines()
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:   # in a thread: a long input and its answers could fill both pipes
        try:
            proc.stdin.write(text)
            proc.stdin.close()
        except OSError:   # the tool ended early: what it printed is read below
            pass

    writer = threading.Thread(target=feed, name="quiver-tool-input")
    writer.start()
    out: list[str] = []
    try:
        while len(out) < len(lines):
            line = proc.stdout.readline()
            if not line:
                break
            out.append(line.rstrip("\n"))
    finally:
        proc.kill()
        writer.join()
        _answered.append(proc)
    return out


def stop_all() -> None:
    """End the started processes nobody asked for (their output is not needed), and reap those whose
    answers were read."""
    while _started:
        _, proc = _started.popitem()
        proc.kill()
        proc.communicate()
    while _answered:
        proc = _answered.pop()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
