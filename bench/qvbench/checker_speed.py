"""Time one checker in-process on a log, warm (the second of two runs, so numba compilation is out).

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
    return {"checker": checker, "events": log.num_events, "seconds": warm, "first_run_s": cold,
            "findings": len(findings), "events_per_s": log.num_events / warm if warm else None}


if __name__ == "__main__":
    print(json.dumps(measure(*sys.argv[1:3])))
