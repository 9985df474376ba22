"""Damaged copies of a real log through every reading command: never exit 3, a traceback or a hang.

Run as ``python tests/fuzz/damage.py LOG OUTDIR [--limit N [--commands K]]`` (the first K of COMMANDS) (or from tests/fuzz/test_damage.py):
one process imports quiver once, then each variant runs in a forked child with a time limit, so a
sweep of hundreds of variants takes seconds of import time instead of minutes. Prints one line per
bad variant (``variant command: exit=.. / timeout / traceback``) and exits 1 when there was one.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

COMMANDS = (("analyze", "--check", "all"), ("info",), ("explain",), ("export", "--to", "chrome", "-o", "-"))
TIMEOUT_S = 90.0   # a hang, not a slow machine


def variants(data: bytes, count: int) -> Iterator[tuple[str, bytes]]:
    """Bit flips and truncations at offsets spread over the whole file, deterministic."""
    n = len(data)
    step = max(1, n // max(1, count // 2))
    for off in range(0, n, step):
        flipped = bytearray(data)
        flipped[off] ^= 1 << (off % 8)
        yield f"flip@{off}", bytes(flipped)
    for cut in range(1, n, max(1, n // max(1, count // 4))):
        yield f"cut@{cut}", data[:cut]
    for off in range(0, n, max(1, n // max(1, count // 4))):   # a zeroed 8-byte word (a length, an offset)
        zeroed = bytearray(data)
        zeroed[off:off + 8] = b"\xff" * min(8, n - off)
        yield f"ff8@{off}", bytes(zeroed)


def run_child(args: list[str]) -> int:
    """`trace ARGS` in this process: its exit status; a traceback on stderr is detected by the parent."""
    from quiver.cli import run

    return run(args)


def check_variant(path: Path, command: tuple[str, ...]) -> str | None:
    """None when the command behaved (exit 0/1/2, at most one stderr line, no traceback)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        err = io.StringIO()
        code = 99
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(err):
                code = run_child([command[0], str(path), *command[1:]])
        except BaseException as e:  # noqa: BLE001 - anything escaping is the bug we look for
            err.write(f"escaped {type(e).__name__}: {e}\n")
            code = 98
        os.write(w, err.getvalue().encode()[:4000])
        os._exit(code)
    os.close(w)
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            return "timeout"
        time.sleep(0.01)
    err = b""
    while chunk := os.read(r, 65536):
        err += chunk
    os.close(r)
    text = err.decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("trace: wrote")
             and "warning" not in ln]
    if code not in (0, 1, 2) or "Traceback" in text or len(lines) > 1:
        return f"exit={code} {text.strip()[:300]!r}"
    return None


def sweep(log: Path, outdir: Path, count: int, commands=COMMANDS) -> list[str]:
    data = log.read_bytes()
    bad = []
    outdir.mkdir(parents=True, exist_ok=True)
    for name, blob in variants(data, count):
        path = outdir / f"{name}.arrow"
        path.write_bytes(blob)
        for command in commands:
            problem = check_variant(path, command)
            if problem:
                bad.append(f"{name} {command[0]}: {problem}")
                print(bad[-1], flush=True)
        path.unlink()
    return bad


def main(argv: list[str]) -> int:
    log, outdir = Path(argv[0]), Path(argv[1])
    count = int(argv[3]) if len(argv) > 3 and argv[2] == "--limit" else 200
    commands = COMMANDS[: int(argv[5])] if len(argv) > 5 and argv[4] == "--commands" else COMMANDS
    import quiver.replay.driver

    import quiver.cli
    import quiver.commands.analyze
    import quiver.commands.explain
    import quiver.export  # noqa: F401
    bad = sweep(log, outdir, count, commands)
    print(f"{len(bad)} bad", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
