"""Run one command and measure what it cost: wall time and peak memory of its whole process tree.

Peak memory comes from ``os.wait4``: Linux reports the largest resident set of the child and of
every descendant it waited for, so under ``mpiexec`` (or ``trace record``, which runs the program
as its child) it is the peak of the largest single process (one rank), not the sum over ranks.
The command runs under ``peak.py``, a small process that forks it and reports its ``wait4``
peak: a child forked from this harness directly would be charged the harness's own resident set.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .tmpfiles import TmpfileSweeper

PEAK = Path(__file__).with_name("peak.py")


@dataclass(frozen=True)
class Measurement:
    seconds: float
    peak_rss_kib: int
    returncode: int
    timed_out: bool
    tmpfiles_left: int = 0          # device images the run left in /tmp (we removed them)
    stopped: str = ""               # why a watchdog killed the run, if one did
    retries: int = 0                # earlier attempts lost to a known libomp fault (see run_retrying)

    @property
    def ok(self) -> bool:
        return not self.timed_out and not self.stopped and self.returncode == 0


def directory_bytes(path: Path) -> int:
    """Bytes in the files directly under ``path`` (0 when it does not exist)."""
    try:
        return sum(e.stat().st_size for e in os.scandir(path) if e.is_file(follow_symlinks=False))
    except OSError:
        return 0


def size_watchdog(path: Path, limit: int) -> Callable[[], str]:
    """A check for run_measured: stop the run once ``path`` holds more than ``limit`` bytes."""
    def check() -> str:
        n = directory_bytes(path)
        return f"stopped: {path.name} grew past {limit / 2**30:.0f} GiB" if n > limit else ""
    return check


def run_measured(
    cmd: Sequence[str],
    *,
    cwd: Path,
    log: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    sweeper: TmpfileSweeper | None = None,
    watchdog: Callable[[], str] | None = None,
) -> Measurement:
    """Run ``cmd`` with stdout and stderr appended to ``log``; kill its process group on timeout,
    or when ``watchdog`` (polled twice a second) returns a reason to stop."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    marker = sweeper.snapshot() if sweeper else None
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(cmd) + "\n").encode())
        out.flush()
        start = time.perf_counter()
        fd, peak_file = tempfile.mkstemp(prefix="qvbench-peak-")
        os.close(fd)
        proc = subprocess.Popen([sys.executable, "-I", "-S", str(PEAK), peak_file, *cmd], cwd=cwd, env=full_env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
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
        finished = threading.Event()
        stopped: list[str] = []

        def watch() -> None:
            while not finished.wait(0.5):
                reason = watchdog()
                if reason:
                    stopped.append(reason)
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    return

        watcher = threading.Thread(target=watch, daemon=True) if watchdog else None
        if watcher:
            watcher.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            finished.set()
            if timer:
                timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    if expired.is_set() or stopped:  # leftovers of a killed tree (e.g. ranks under mpiexec)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    left = sweeper.sweep(marker) if sweeper and marker is not None else 0
    return Measurement(seconds=seconds, peak_rss_kib=_peak(peak_file, usage), returncode=proc.returncode,
                       timed_out=expired.is_set(), tmpfiles_left=left, stopped=stopped[0] if stopped else "")


# libomp 19 aborts now and then while it hands a `target nowait` task to a hidden helper thread
# (llvm-project #81488 family: "Assertion failure at kmp_tasking.cpp(4368): task_team != NULL");
# measured 1 native run in 12 of bench's pipeline kernel. The fault is the runtime's, with or without
# the tracer, so a run that died of it is run again rather than counted as the kernel failing.
RUNTIME_FAULT = b"OMP: Error #13: Assertion failure at kmp_"
RUNTIME_FAULT_RETRIES = 2


def run_retrying(cmd: Sequence[str], *, log: Path, before: Callable[[], None] | None = None,
                 **kwargs: object) -> Measurement:
    """``run_measured``, run again (at most ``RUNTIME_FAULT_RETRIES`` times) when the run died of
    the known libomp fault; ``before`` clears what an attempt leaves behind. The measurement says
    how many attempts were lost."""
    for attempt in range(RUNTIME_FAULT_RETRIES + 1):
        if before:
            before()
        start = log.stat().st_size if log.exists() else 0
        m = run_measured(cmd, log=log, **kwargs)  # type: ignore[arg-type]
        if m.ok or m.timed_out or m.stopped or not _died_of_runtime_fault(log, start):
            break
    return replace(m, retries=attempt)


def _died_of_runtime_fault(log: Path, start: int) -> bool:
    with open(log, "rb") as f:
        f.seek(start)
        return RUNTIME_FAULT in f.read()


def _peak(peak_file: str, usage: os.struct_rusage) -> int:
    """The command's own peak as ``peak.py`` wrote it (the shim's, an upper bound, if it was killed first)."""
    try:
        with open(peak_file) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return int(usage.ru_maxrss)
    finally:
        Path(peak_file).unlink(missing_ok=True)
