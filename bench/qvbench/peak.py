"""Run a command and write its peak resident set (KiB) to a file: ``python peak.py OUT CMD ARGS...``.

Why a separate small process: Linux charges a process, at exec, the resident set its memory had
before the exec, and a child forked from the benchmark harness starts with the harness's pages
(hundreds of MiB once numpy, polars and pyarrow are loaded). ``os.wait4`` on such a child reports
at least the harness's size. Forked from this small process instead, the command's peak is its
own (and, as with ``wait4``, that of the largest descendant it waited for). Exits like the command
(same code, or the same signal).
"""

from __future__ import annotations

import os
import signal
import sys


def main(argv: list[str]) -> None:
    out, cmd = argv[0], argv[1:]
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            print(f"{cmd[0]}: {e.strerror}", file=sys.stderr)
            os._exit(127)
    _pid, status, usage = os.wait4(pid, 0)
    with open(out, "w") as f:
        f.write(str(int(usage.ru_maxrss)))
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main(sys.argv[1:])
