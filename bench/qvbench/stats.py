"""Small numeric helpers shared by the harness: medians, ratios, unit conversions, log statistics."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from .runner import Measurement


def median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def mib(kib: int | None) -> float | None:
    return kib / 1024 if kib is not None else None


def summarize(runs: list[Measurement]) -> dict[str, Any]:
    """Median time and the largest peak memory over the successful runs of one variant."""
    good = [m for m in runs if m.ok]
    bad = next((m for m in runs if not m.ok), None)
    return {
        "error": failure_reason(bad) if bad else None,
        "seconds": median([m.seconds for m in good]),
        "runs_s": [round(m.seconds, 4) for m in runs],
        "peak_rss_mib": mib(max((m.peak_rss_kib for m in good), default=None)),
        "failed": sum(not m.ok for m in runs),
        "retried": sum(m.retries for m in runs),
        "timed_out": any(m.timed_out for m in runs),
        "tmpfiles_left": sum(m.tmpfiles_left for m in runs),
    }


def failure_reason(m: Measurement) -> str:
    if m.stopped:
        return f"{m.stopped} after {m.seconds:.0f} s"
    if m.timed_out:
        return f"timed out after {m.seconds:.0f} s"
    return f"exit status {m.returncode}"


def log_stats(path: Path) -> dict[str, Any]:
    """Size on disk, events and access events of a log (single file or split directory).

    Streams the record batches and counts only the kind column (``trace info`` computes much
    more per batch and is slow on logs of tens of millions of events).
    """
    import numpy as np
    from quiver.formats import EventKind, open_logs

    logs = open_logs(path)
    size = events = accesses = 0
    capped = False
    for log in logs:
        size += log.size_bytes
        capped |= bool(log.run.get("access_limit_reached", False))
        for batch in log.batches():
            kind = batch["kind"]
            events += len(kind)
            accesses += int(np.count_nonzero(kind == EventKind.ACCESS))
    if logs.split:
        size += sum(f.stat().st_size for f in path.iterdir() if f not in set(logs.files))
    return {"bytes": size, "events": events, "accesses": accesses, "capped": capped,
            "bytes_per_access": size / accesses if accesses else None}
