"""`trace info`: what is in a log, from the stats its writer stored in the run metadata, else (older
logs, `--verify`) by streaming the record batches (bounded memory)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quiver.formats import FAMILIES, EventKind, EventLog, LogFormatError, LogSet
from quiver.formats.logset import MANIFEST
from quiver.formats.stats import STATS_KEY, LogStats

# only what `trace info` prints (aux2, name, op and id2: the blocks of strided ACCESS rows, their planes and
# masked runs)
SCAN_COLUMNS = ["kind", "time_ns", "rank", "thread", "device", "aux2", "name", "op", "id2"]


@dataclass
class Contents:
    """What the events of a log (or of a split run) hold, and the batches that could not be read."""

    stats: LogStats = field(default_factory=LogStats)
    damaged: list[str] = field(default_factory=list)

    def merge(self, other: Contents) -> None:
        self.stats.merge(other.stats)
        self.damaged += other.damaged


def _scan(log: EventLog, columns: list[str] | None = SCAN_COLUMNS) -> Contents:
    """The contents of one log, streamed over ``columns`` (None: all of them, all checked), batch by batch."""
    out = Contents()
    for i in range(log.num_batches):
        try:
            out.stats.add(log.batch(i, columns))
        except LogFormatError as e:     # the other batches are still described; the message says what is lost
            out.damaged.append(str(e))
    return out


def contents(log: EventLog, verify: bool = False) -> Contents:
    """From the stats the writer stored in the run metadata (no event read), or by a scan of the columns
    it prints when the log has none (written before they existed, or by a chunked write_log); ``verify``:
    by a scan of every column (each checked against its checksum and the value rules)."""
    stored = LogStats.from_json(log.run.get(STATS_KEY))
    if verify:
        log.hints = False   # every stored byte, not the values the batches say their constant columns hold
        out = _scan(log, None)
        if stored is not None and stored.blocks is None:
            out.stats.blocks = None   # the same lines as without --verify (a writer that did not count blocks)
        return out
    return Contents(stored) if stored is not None else _scan(log)


def _summary(path: str, run: dict[str, Any], version: int, found: Contents, size: int, strings: int,
             locations: int) -> dict[str, Any]:
    scan = found.stats
    kind_counts = scan.kinds
    return {
        "path": path,
        "program": run.get("program", "?"),
        "argv": list(run.get("argv", [])),
        "format_version": version,
        "ranks": int(run.get("ranks", max(len(scan.ranks), 1))),
        "threads": len(scan.threads),
        "devices": sorted(int(d) for d in scan.devices),
        "events": scan.events,
        "access_blocks": scan.blocks,
        "counts": {fam: int(sum(kind_counts[int(k)] for k in ks)) for fam, ks in FAMILIES.items()},
        "kinds": {k.name.lower(): int(kind_counts[int(k)]) for k in EventKind if kind_counts[int(k)]},
        "time_span_ns": (scan.t_max - scan.t_min) if scan.t_min is not None and scan.t_max is not None else 0,
        "truncated": bool(run.get("truncated", False)),
        "truncated_reason": run.get("truncated_reason"),
        "exit_status": run.get("exit_status"),
        "signal": run.get("signal"),
        "has_accesses": bool(run.get("has_accesses", True)),
        "size_bytes": size,
        "strings": strings,
        "locations": locations,
        "damaged": list(found.damaged),
    }


def log_summary(log: EventLog, verify: bool = False) -> dict[str, Any]:
    return _summary(str(log.path), log.run, log.version, contents(log, verify), log.size_bytes, len(log.strings),
                    len(log.locations))


def logset_summary(logs: LogSet, verify: bool = False) -> dict[str, Any]:
    """``log_summary`` of a single log, or of a whole split run (every rank file, one rank file at a time)."""
    if not logs.split:
        return log_summary(logs.open(0), verify)
    total = Contents()
    size, strings, locations, version = (logs.path / MANIFEST).stat().st_size, set(), set(), 0
    for log in logs:
        total.merge(contents(log, verify))
        size += log.size_bytes
        strings.update(log.strings)
        locations.update(log.locations)
        version = log.version
    out = _summary(str(logs.path), logs.run, version, total, size, len(strings), len(locations))
    out["rank_files"] = len(logs)
    return out


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


def _devices_text(ids: list[int]) -> str:
    """``1 (device 0)``, ``2 (devices 0, 1)``, ``none``: a count and the ids, so `0` is not read as a count."""
    if not ids:
        return "none"
    word = "device" if len(ids) == 1 else "devices"
    return f"{len(ids)} ({word} {', '.join(map(str, ids))})"


def render_summary(s: dict[str, Any]) -> str:
    argv = " ".join(s["argv"]) if s["argv"] else s["program"]
    why = s.get("truncated_reason") or "the program did not finish normally"
    status = f"TRUNCATED ({why})" if s["truncated"] else "complete"
    if s.get("signal") and not why.startswith("signal"):
        status += f", killed by signal {s['signal']}"
    elif s.get("exit_status") not in (None, 0):
        status += f", exit status {s['exit_status']}"
    lines = [
        f"log:            {s['path']}" + (f" (split: {s['rank_files']} rank files)" if "rank_files" in s else ""),
        f"program:        {argv}",
        f"format version: {s['format_version']}",
        f"status:         {status}",
        f"ranks:          {s['ranks']}",
        f"threads:        {s['threads']}",
        f"devices:        {_devices_text(s['devices'])}",
        f"time span:      {_human_ns(s['time_span_ns'])}",
        f"size on disk:   {_human_bytes(s['size_bytes'])} ({s['events']} events)",
        "events by family:",
    ]
    width = max(len(f) for f in s["counts"])
    for fam, n in s["counts"].items():
        blocks = s.get("access_blocks")
        more = f" (standing for {blocks} blocks: strided runs, planes and masked runs)" \
            if fam == "accesses" and blocks is not None and blocks != n else ""
        lines.append(f"  {fam:<{width}}  {n}{more}")
    for message in s.get("damaged", []):
        lines.append(f"DAMAGED: {message}")
    if not s["has_accesses"]:
        lines.append("note: built without `trace cc`: memory accesses were not recorded")
    return "\n".join(lines)
