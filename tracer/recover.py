"""`trace recover`: turn the raw chunks a killed `trace record` left behind into a (truncated) log.

Why: when `trace record` itself dies (a batch system's SIGKILL, an OOM kill, a CI timeout), the program
has written its raw chunks (`run.arrow.raw/`) but nobody finalized them, and these are the runs users
most need to analyse. `trace record` leaves a marker in the raw directory (LAUNCHER) saying which log it
was writing, for which command line, and its own process, so that a later command can tell a dead
recording (recover it) from a running one (leave it alone).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from quiver.tracer.raw_names import RAW_SUFFIX, raw_prefixes

TYPE_CHECKING = False   # typing's import (~2 ms) is not on `trace record`'s path before the program starts
if TYPE_CHECKING:
    from typing import Any

LAUNCHER = "launcher.json"


class NotRecoverable(Exception):
    """The directory cannot be recovered now (the message is one line for the user)."""


def raw_dir_for(out: Path) -> Path:
    return out.with_name(out.name + RAW_SUFFIX)


def _start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot): tells a live pid from a reused one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def write_marker(raw: Path, out: Path, split: bool, run: dict[str, Any]) -> None:
    """Say which log `trace record` (this process) writes from `raw`, with the run metadata it knows."""
    marker = {"pid": os.getpid(), "start_ticks": _start_ticks(os.getpid()), "output": str(out), "split": split,
              "run": run}
    (raw / LAUNCHER).write_text(json.dumps(marker, sort_keys=True))


def mark_reason(raw: Path, reason: str) -> None:
    """Record why the run is being ended (e.g. "time limit"), in case `trace record` dies finalizing."""
    try:
        marker = read_marker(raw)
        marker["reason"] = reason
        (raw / LAUNCHER).write_text(json.dumps(marker, sort_keys=True))
    except (OSError, ValueError):
        pass


def read_marker(raw: Path) -> dict[str, Any]:
    try:
        marker = json.loads((raw / LAUNCHER).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise ValueError(f"{raw / LAUNCHER}: unreadable ({e})") from None
    return marker if isinstance(marker, dict) else {}


def _alive(pid: int, start: int | None) -> bool:
    ticks = _start_ticks(pid)
    return ticks is not None and (start is None or ticks == start)


def _recording_pids(raw: Path) -> list[int]:
    """Processes still recording into `raw` (r<R>.owner holds each rank's pid)."""
    pids = []
    for owner in sorted(raw.glob("r*.owner")):
        try:
            pid = int(owner.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue  # gone (or not ours to read: not recording here either)
        if f"QUIVER_RAW_DIR={raw}".encode() in environ.split(b"\0"):
            pids.append(pid)
    return pids


def busy_reason(raw: Path, marker: dict[str, Any]) -> str | None:
    """Why `raw` must not be recovered now: its `trace record` or its program still runs."""
    pid = marker.get("pid")
    if isinstance(pid, int) and pid != os.getpid() and _alive(pid, marker.get("start_ticks")):
        return f"{raw} is still being recorded (trace record, pid {pid}, is running)"
    pids = _recording_pids(raw)
    if pids:
        return f"{raw} is still being written by the recorded program (pid {pids[0]})"
    return None


def is_raw_dir(raw: Path) -> bool:
    return raw.is_dir() and ((raw / LAUNCHER).exists() or any(raw.glob("r*.info")))


class Recovered:
    """The log written and its run metadata (a plain class: `trace record` imports this module before the
    program starts, and `dataclasses` costs ~7 ms of CPU there)."""

    __slots__ = ("log", "meta")

    def __init__(self, log: Path, meta: dict[str, Any]) -> None:
        self.log, self.meta = log, meta


def recover(raw: Path, out: Path | None = None) -> Recovered:
    """Finalize `raw` into its log (the one `trace record` was writing, else `out`, else the name
    without `.raw`), marked truncated; the raw directory is removed afterwards."""
    raw = Path(raw).resolve()
    if not is_raw_dir(raw):
        raise NotRecoverable(f"{raw}: not a raw directory left by `trace record`")
    try:
        marker = read_marker(raw)
    except ValueError as e:
        raise NotRecoverable(str(e)) from None
    busy = busy_reason(raw, marker)
    if busy:
        raise NotRecoverable(busy)
    if out is None:
        if marker.get("output"):
            out = Path(marker["output"])
        elif raw.name.endswith(RAW_SUFFIX) and len(raw.name) > len(RAW_SUFFIX):
            out = raw.with_name(raw.name[: -len(RAW_SUFFIX)])
        else:
            raise NotRecoverable(f"{raw}: no log name known; give one with -o")
    split = bool(marker.get("split"))
    run = dict(marker.get("run") or {})
    run.update({"truncated": True, "recovered": True})
    if marker.get("reason"):
        run["truncated_reason"] = marker["reason"]
    from quiver.tracer.record import cleanup_device_images

    cleanup_device_images(raw)
    if split:
        from quiver.tracer.finalize_split import finalize_split

        meta = finalize_split(raw, out, run)
    else:
        from quiver.tracer.finalize_small import finalize_run

        meta = finalize_run(raw, out, run)
    if not os.environ.get("QUIVER_KEEP_RAW"):
        shutil.rmtree(raw, ignore_errors=True)
    return Recovered(Path(out), meta)


def recovered_note(meta: dict[str, Any]) -> str:
    """What `trace recover` says about the log it wrote."""
    return f"{meta.get('events', 0)} events, log truncated: {meta.get('truncated_reason') or 'unknown reason'}"


def _raw_dirs_of(log: Path) -> list[Path]:
    """Raw directories beside `log` that may hold its recording: `LOG.raw`, and any `LOG.raw*` or
    `.LOG.raw*` (a uniquely named one) whose marker names `log`."""
    parent, name = log.parent, log.name
    found = [raw_dir_for(log)]
    try:
        found += sorted(p for p in parent.iterdir() if p.name != found[0].name and
                        p.name.startswith(raw_prefixes(name)))
    except OSError:
        return []
    target = str(log.resolve())
    out = []
    for raw in found:
        try:
            marker = read_marker(raw) if (raw / LAUNCHER).is_file() else None
        except ValueError:
            continue
        if marker is not None and (raw == found[0] or str(Path(marker.get("output", "")).resolve()) == target):
            out.append(raw)
    return out


def busy_recording(log: Path) -> str | None:
    """Why the raw directory of `log` cannot be recovered yet (its recording still runs), or None."""
    for raw in _raw_dirs_of(Path(log)):
        try:
            reason = busy_reason(raw, read_marker(raw))
        except ValueError:
            continue
        if reason:
            return reason
    return None


def pending_recovery(log: Path) -> Path | None:
    """The raw directory a dead recording of `log` left behind, if any (and newer than `log`); a raw
    directory kept on purpose (QUIVER_KEEP_RAW) has no marker once its log is written."""
    log = Path(log)
    for raw in _raw_dirs_of(log):
        if busy_reason(raw, read_marker(raw)):
            continue
        try:
            if log.exists() and log.stat().st_mtime > raw.stat().st_mtime:
                continue
        except OSError:
            continue
        return raw
    return None
