"""Time one checker in-process on a log, warm (the second of two runs: numba compilation and the VSM
kernel's first-use build are out).

Run as a script in a fresh process (the harness sets NUMBA_NUM_THREADS=1 for "one core")::

    python bench/qvbench/checker_speed.py LOG [CHECKER]   -> one JSON line on stdout
"""

from __future__ import annotations

import json
import sys
import time


def measure(path: str, checker: str = "mapping") -> dict:
    from quiver.formats import read_log
    from quiver.replay.registry import CheckOptions, available_checkers

    check = available_checkers()[checker]
    cold = time.perf_counter()
    check(read_log(path), CheckOptions())
    cold = time.perf_counter() - cold
    log = read_log(path)
    warm = time.perf_counter()
    findings = check(log, CheckOptions())
    warm = time.perf_counter() - warm
    out = {"checker": checker, "events": log.num_events, "seconds": warm, "first_run_s": cold,
           "findings": len(findings), "events_per_s": log.num_events / warm if warm else None}
    out.update(end_to_end(path, checker))
    if checker == "mapping":
        out.update(vsm_parts(path))
    return out


def end_to_end(path: str, checker: str) -> dict:
    """The checker from the file: opening the log (footer, metadata, string and location tables) and
    the check, which reads, decompresses and validates the columns it needs; best of two, CPU time
    (warm: numba's compiled code is loaded, the file is in the page cache)."""
    from quiver.formats import read_log
    from quiver.replay.registry import CheckOptions, available_checkers

    check = available_checkers()[checker]
    best_open = best = float("inf")
    events = 0
    for _ in range(2):
        t = time.process_time()
        log = read_log(path)
        opened = time.process_time()
        check(log, CheckOptions())
        done = time.process_time()
        if done - t < best:
            best, best_open, events = done - t, opened - t, log.num_events
        del log
    return {"end_to_end_s": best, "open_s": best_open, "end_to_end_events_per_s": events / best if best else None}


def vsm_parts(path: str) -> dict:
    """The mapping checker's replay split in two: decoding the columns the VSM reads from the log
    (zstd), and the VSM kernel on those decoded columns; best of two rounds, CPU time."""
    from quiver.formats import read_log
    from quiver.replay.mapping import vsm
    from quiver.replay.mapping.events import read_control_events

    log = read_log(path)
    names = vsm.stream_columns()
    static = vsm.build_static(read_control_events(log))
    decode = kernel = float("inf")
    for _ in range(2):
        t = time.process_time()
        batches = [log.batch(i, names) for i in range(log.num_batches)]
        decode = min(decode, time.process_time() - t)
        session = vsm.VsmSession(static)
        t = time.process_time()
        vsm.stream_log(log, session, None, batches=batches)
        kernel = min(kernel, time.process_time() - t)
        del batches, session
    return {"decode_s": decode, "kernel_s": kernel, "decoded_columns": names,
            "kernel_events_per_s": log.num_events / kernel if kernel else None}


if __name__ == "__main__":
    print(json.dumps(measure(*sys.argv[1:3])))
