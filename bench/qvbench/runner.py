"""Run one command and measure what it cost: wall time and peak memory of its whole process tree.

Peak memory comes from ``os.wait4``: Linux reports the largest resident set of the child and of
every descendant it waited for, so under ``mpiexec`` (or ``trace record``, which runs the program
as its child) it is the peak of the largest single process (one rank), not the sum over ranks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .tmpfiles import TmpfileSweeper


@dataclass(frozen=True)
class Measurement:
    seconds: float
    peak_rss_kib: int
    returncode: int
    timed_out: bool
    tmpfiles_left: int = 0          # device images the run left in /tmp (we removed them)

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.returncode == 0


class RunFailed(RuntimeError):
    """A command the benchmark needs did not finish normally."""


def run_measured(
    cmd: Sequence[str],
    *,
    cwd: Path,
    log: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    sweeper: TmpfileSweeper | None = None,
) -> Measurement:
    """Run ``cmd`` with stdout and stderr appended to ``log``; kill its process group on timeout."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    marker = sweeper.snapshot() if sweeper else None
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(cmd) + "\n").encode())
        out.flush()
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            if timer:
                timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    if expired.is_set():  # leftovers of a killed tree (e.g. ranks under mpiexec)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    left = sweeper.sweep(marker) if sweeper and marker is not None else 0
    return Measurement(seconds=seconds, peak_rss_kib=int(usage.ru_maxrss), returncode=proc.returncode,
                       timed_out=expired.is_set(), tmpfiles_left=left)


def run_checked(cmd: Sequence[str], *, cwd: Path, log: Path, env: Mapping[str, str] | None = None,
                timeout: float | None = None, sweeper: TmpfileSweeper | None = None) -> Measurement:
    """Like run_measured, but a failure raises RunFailed naming the log to read."""
    m = run_measured(cmd, cwd=cwd, log=log, env=env, timeout=timeout, sweeper=sweeper)
    if m.timed_out:
        raise RunFailed(f"timed out after {timeout:.0f} s: {' '.join(cmd)} (see {log})")
    if m.returncode != 0:
        raise RunFailed(f"exit status {m.returncode}: {' '.join(cmd)} (see {log})")
    return m
