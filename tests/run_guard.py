"""Helpers for tests that kill recordings: start `trace record` tagged with a marker in its environment,
wait for the program's first output line, and list the processes of the run still alive."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
import uuid
from pathlib import Path

TRACE = str(Path(sys.executable).with_name("trace"))
MARKER = "QUIVER_TEST_RUN"


def marker_line(source: Path, tag: str) -> int:
    """Line of the `// @tag` comment in a test program."""
    for i, line in enumerate(source.read_text().splitlines(), 1):
        if line.rstrip().endswith(f"// @{tag}"):
            return i
    raise AssertionError(f"no // @{tag} in {source}")


def start_record(args: list[str], cwd: Path) -> tuple[subprocess.Popen, str]:
    """`trace record ARGS` with stdout piped, in its own session (the test kills it, not its group);
    returns the process and the marker every process of the run inherits."""
    tag = uuid.uuid4().hex
    proc = subprocess.Popen([TRACE, "record", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, MARKER: tag}, start_new_session=True)
    return proc, tag


def read_line(proc: subprocess.Popen, limit: float = 120.0) -> str:
    """The next line the program prints (a hang guard, not a timing assertion)."""
    fd = proc.stdout.fileno()
    ready, _, _ = select.select([fd], [], [], limit)
    assert ready, "the program printed nothing"
    return proc.stdout.readline().decode()


def _alive_with(tag: str) -> list[str]:
    """Processes (not zombies) whose environment carries the marker: `pid cmdline` each."""
    found = []
    needle = f"{MARKER}={tag}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rpartition(b")")[2].split()[0]
            if state in (b"Z", b"X"):
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry} {cmdline}")
        except OSError:
            continue
    return found


def survivors(tag: str, settle: float = 10.0) -> list[str]:
    """The run's processes still alive once they had `settle` seconds to die (empty when all died)."""
    deadline = time.monotonic() + settle
    while True:
        alive = _alive_with(tag)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def kill_survivors(tag: str) -> None:
    """Clean up after a failed assertion: no process of ours outlives the test."""
    for line in _alive_with(tag):
        try:
            os.kill(int(line.split()[0]), 9)
        except OSError:
            pass
