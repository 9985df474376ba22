"""`trace info`: what is in a log, computed by streaming the record batches (bounded memory)."""

from __future__ import annotations

from typing import Any

import numpy as np

from quiver.formats import FAMILIES, EventKind, EventLog


def log_summary(log: EventLog, _events: Any = None) -> dict[str, Any]:
    kind_counts = np.zeros(256, dtype=np.int64)
    t_min, t_max = None, None
    threads: set[tuple[int, int]] = set()
    devices: set[int] = set()
    ranks: set[int] = set()
    for batch in log.batches():
        if not len(batch["kind"]):
            continue
        kind_counts += np.bincount(batch["kind"].astype(np.int64), minlength=256)[:256]
        t = batch["time_ns"]
        t_min = int(t.min()) if t_min is None else min(t_min, int(t.min()))
        t_max = int(t.max()) if t_max is None else max(t_max, int(t.max()))
        pairs = np.unique(np.stack([batch["rank"].astype(np.int64), batch["thread"].astype(np.int64)]), axis=1)
        threads.update(zip(pairs[0].tolist(), pairs[1].tolist()))
        ranks.update(np.unique(batch["rank"]).tolist())
        # `device` is an OpenMP device only for OpenMP kinds (RMA reuses the column for a datatype size)
        dev = batch["device"][batch["kind"] < int(EventKind.WIN_CREATE)]
        devices.update(np.unique(dev[dev >= 0]).tolist())
    run = log.run
    return {
        "path": str(log.path),
        "program": run.get("program", "?"),
        "argv": list(run.get("argv", [])),
        "format_version": log.version,
        "ranks": int(run.get("ranks", max(len(ranks), 1))),
        "threads": len(threads),
        "devices": sorted(int(d) for d in devices),
        "events": int(kind_counts.sum()),
        "counts": {fam: int(sum(kind_counts[int(k)] for k in ks)) for fam, ks in FAMILIES.items()},
        "kinds": {k.name.lower(): int(kind_counts[int(k)]) for k in EventKind if kind_counts[int(k)]},
        "time_span_ns": (t_max - t_min) if t_min is not None else 0,
        "truncated": log.truncated,
        "exit_status": run.get("exit_status"),
        "signal": run.get("signal"),
        "has_accesses": bool(run.get("has_accesses", True)),
        "size_bytes": log.size_bytes,
        "strings": len(log.strings),
        "locations": len(log.locations),
    }


def _human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _human_ns(ns: int) -> str:
    if ns >= 1_000_000_000:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1_000_000:
        return f"{ns / 1e6:.3f} ms"
    if ns >= 1_000:
        return f"{ns / 1e3:.3f} us"
    return f"{ns} ns"


def render_summary(s: dict[str, Any]) -> str:
    argv = " ".join(s["argv"]) if s["argv"] else s["program"]
    status = "TRUNCATED (the program did not finish normally)" if s["truncated"] else "complete"
    if s.get("signal"):
        status += f", killed by signal {s['signal']}"
    elif s.get("exit_status") not in (None, 0):
        status += f", exit status {s['exit_status']}"
    lines = [
        f"log:            {s['path']}",
        f"program:        {argv}",
        f"format version: {s['format_version']}",
        f"status:         {status}",
        f"ranks:          {s['ranks']}",
        f"threads:        {s['threads']}",
        f"devices:        {', '.join(map(str, s['devices'])) if s['devices'] else 'none'}",
        f"time span:      {_human_ns(s['time_span_ns'])}",
        f"size on disk:   {_human_bytes(s['size_bytes'])} ({s['events']} events)",
        "events by family:",
    ]
    width = max(len(f) for f in s["counts"])
    for fam, n in s["counts"].items():
        lines.append(f"  {fam:<{width}}  {n}")
    if not s["has_accesses"]:
        lines.append("note: built without `trace cc`: memory accesses were not recorded")
    return "\n".join(lines)
