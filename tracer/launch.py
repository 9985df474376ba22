"""Run the recorded program so that no process of the run outlives `trace record`.

Why each piece:
- PR_SET_PDEATHSIG(SIGKILL), set in the child before exec: when `trace record` dies for any reason
  (SIGKILL, OOM kill), the kernel kills the program (or mpiexec). The tracer library loaded in every
  process of the run does the same for mpiexec's proxies and ranks (tracer/native/qv_buffer.c,
  QUIVER_LAUNCHER_PID), where the recorded ranks flush what they hold before they die.
- its own process group: signals and the time limit reach every process of the run (mpiexec, its
  proxies, the ranks, children of the program), and whatever is left when the program ends is killed.
  On a terminal the group is made the foreground one, so the program reads the terminal and gets
  Ctrl-C as it would without us; when the program is stopped (Ctrl-Z), `trace record` takes the
  terminal back and stops too, so the shell's job control works, and passes SIGCONT on.
- `timeout`: the way a batch system ends a job, SIGTERM to the group, SIGKILL after a grace period.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import suppress

PR_SET_PDEATHSIG = 1
GRACE_SECONDS = 5.0  # between SIGTERM and SIGKILL when the time limit is reached
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

_DURATION = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)(s|m|h|d)?$")
_UNIT = {None: 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """Seconds of a duration as `timeout` takes it: 30, 30s, 2.5m, 1h, 1d; ValueError otherwise."""
    m = _DURATION.match(text.strip())
    if not m or float(m.group(1)) * _UNIT[m.group(2)] <= 0:
        raise ValueError(f"invalid duration '{text}' (examples: 30, 30s, 2m, 1h)")
    return float(m.group(1)) * _UNIT[m.group(2)]


class Ended:
    """How the program ended. (A plain class: `dataclasses` imports inspect and ast, ~7 ms of CPU
    before the program starts; nothing on `trace record`'s path uses it.)"""

    __slots__ = ("code", "timed_out")

    def __init__(self, code: int, timed_out: bool) -> None:
        self.code = code            # Popen returncode: status, or -signal
        self.timed_out = timed_out


def _child_setup(parent: int, tty: int | None) -> Callable[[], None]:
    """What the child does between fork and exec (after joining its new process group): die with
    `trace record`, and on a terminal make its group the foreground one before the program runs (set
    only by the parent, a program that reads the terminal at once could be stopped by SIGTTIN first,
    and `trace record` would then stop itself as for Ctrl-Z, with no shell to continue it)."""
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # `trace record` died before the prctl
            os._exit(128 + signal.SIGKILL)
        _set_foreground(tty, os.getpgrp())

    return preexec


def _terminal() -> int | None:
    """stdin's terminal when `trace record` is its foreground process group, else None."""
    try:
        fd = sys.stdin.fileno()
        return fd if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp() else None
    except (OSError, ValueError):
        return None


def _set_foreground(fd: int | None, pgrp: int) -> None:
    if fd is None:
        return
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # a background group may not set it otherwise
    try:
        with suppress(OSError):
            os.tcsetpgrp(fd, pgrp)
    finally:
        signal.signal(signal.SIGTTOU, old)


def _killpg(pgrp: int, sig: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgrp, sig)


def _wait(proc: subprocess.Popen, tty: int | None, deadline: float | None) -> int | None:
    """The program's Popen returncode, or None at `deadline` (monotonic). On a terminal, a stopped
    program stops `trace record` (the shell sees its job stop); once continued, so is the program."""
    while True:
        flags = os.WUNTRACED | (os.WNOHANG if deadline is not None else 0)
        pid, status = os.waitpid(proc.pid, flags)
        if pid == 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(0.05, left))
            continue
        if os.WIFSTOPPED(status):
            if tty is not None:  # job control: only on a terminal
                _set_foreground(tty, os.getpgrp())
                os.kill(os.getpid(), signal.SIGSTOP)
                with suppress(OSError):
                    if os.tcgetpgrp(tty) == os.getpgrp():  # `fg`, not `bg`
                        _set_foreground(tty, proc.pid)
                _killpg(proc.pid, signal.SIGCONT)
            continue
        proc.returncode = os.waitstatus_to_exitcode(status)
        return proc.returncode


def run_group(argv: Sequence[str], env: dict[str, str], timeout: float | None = None,
              while_running: Callable[[], object] | None = None,
              on_timeout: Callable[[], object] | None = None) -> Ended:
    """Run `argv` with inherited stdio in its own process group; SIGINT/SIGTERM/SIGHUP/SIGQUIT go to the
    group, the caller stays to finalize. `while_running` is called once the program has started (an
    error it raises comes after the wait), `on_timeout` when the time limit is reached."""
    tty = _terminal()
    started = time.monotonic()
    env = {**env, "QUIVER_LAUNCHER_PID": str(os.getpid())}
    # no other thread runs yet (the finalize imports start after): preexec_fn cannot deadlock here
    proc = subprocess.Popen(list(argv), env=env, process_group=0,
                            preexec_fn=_child_setup(os.getpid(), tty))  # noqa: PLW1509
    pgrp = proc.pid
    _set_foreground(tty, pgrp)

    def forward(sig: int, _frame: object) -> None:
        _killpg(pgrp, sig)

    old = {s: signal.signal(s, forward) for s in FORWARDED}
    timed_out = False
    try:
        try:
            if while_running is not None:
                while_running()
        finally:
            code = _wait(proc, tty, None if timeout is None else started + timeout)
            if code is None:
                timed_out = True
                if on_timeout is not None:
                    on_timeout()
                _killpg(pgrp, signal.SIGTERM)
                code = _wait(proc, tty, time.monotonic() + GRACE_SECONDS)
                if code is None:
                    _killpg(pgrp, signal.SIGKILL)
                    code = _wait(proc, tty, None)
        return Ended(code, timed_out)
    finally:
        _killpg(pgrp, signal.SIGKILL)  # what the program left behind does not outlive the run
        _set_foreground(tty, os.getpgrp())
        for s, h in old.items():
            signal.signal(s, h)
