"""Split logs: a directory with one event log per rank and a small manifest.

``trace record --split -o run.d`` writes::

    run.d/manifest.json      {"format": "quiver-split", "format_version": 1, "ranks": N, "files": [...], "run": {...}}
    run.d/rank-00000.arrow   an ordinary event log holding rank 0's events
    ...

Every command that takes ``run.arrow`` also takes such a directory; ``open_logs`` hides the
difference: it yields the per-rank logs of a directory, or the single file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import LogFormatError
from .reader import EventLog, read_log
from .schema import FORMAT_VERSION, MIN_FORMAT_VERSION
from .writer import Location, write_log

MANIFEST = "manifest.json"
SPLIT_FORMAT = "quiver-split"


def rank_file_name(rank: int) -> str:
    return f"rank-{rank:05d}.arrow"


def write_manifest(directory: str | os.PathLike, files: Sequence[str], run: dict[str, Any]) -> Path:
    d = Path(directory)
    manifest = {"format": SPLIT_FORMAT, "format_version": FORMAT_VERSION, "ranks": len(files),
                "files": list(files), "run": run}
    path = d / MANIFEST
    tmp = path.with_suffix(".json.part")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path


def write_split(directory: str | os.PathLike, columns: dict[str, np.ndarray], *, strings: Sequence[str] = (),
                locations: Sequence[Location] = (), run: dict[str, Any] | None = None,
                compression: str | None = "zstd") -> Path:
    """Write one run's events (all ranks, in sequence order) as a split log: a rank file per rank
    (each with the run's string and location tables) and the manifest. Returns the manifest path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    run = dict(run or {})
    rank = np.asarray(columns["rank"])
    order = np.argsort(rank, kind="stable")
    ranks, starts = np.unique(rank[order], return_index=True)
    ends = np.r_[starts[1:], len(order)]
    files = []
    for r, a, b in zip(ranks.tolist(), starts, ends):
        rows = order[a:b]
        name = rank_file_name(int(r))
        write_log(d / name, {k: np.asarray(v)[rows] for k, v in columns.items()}, strings=strings,
                  locations=locations, run={**run, "rank": int(r)}, compression=compression)
        files.append(name)
    return write_manifest(d, files, run)


@dataclass
class LogSet:
    """One run: a single log, or the per-rank logs of a split directory (in manifest order)."""

    path: Path
    files: list[Path]
    run: dict[str, Any]
    split: bool

    def __len__(self) -> int:
        return len(self.files)

    def open(self, i: int) -> EventLog:
        return read_log(self.files[i])

    def __iter__(self) -> Iterator[EventLog]:
        for i in range(len(self.files)):
            yield self.open(i)


def open_logs(path: str | os.PathLike) -> LogSet:
    """A single log file or a split directory; raises LogFormatError with a one-line reason."""
    p = Path(path)
    if not p.is_dir():
        log = read_log(p)
        return LogSet(path=p, files=[p], run=log.run, split=False)
    mpath = p / MANIFEST
    if not mpath.exists():
        raise LogFormatError(f"{p}: a directory without {MANIFEST}, not a split quiver log")
    try:
        manifest = json.loads(mpath.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise LogFormatError(f"{mpath}: damaged manifest") from None
    if not isinstance(manifest, dict) or manifest.get("format") != SPLIT_FORMAT:
        raise LogFormatError(f"{mpath}: not a quiver split-log manifest")
    version = manifest.get("format_version")
    if not isinstance(version, int) or not MIN_FORMAT_VERSION <= version <= FORMAT_VERSION:
        raise LogFormatError(f"{mpath}: format version {version} is not one this quiver reads "
                             f"({MIN_FORMAT_VERSION}-{FORMAT_VERSION})")
    files = [p / f for f in manifest.get("files", [])]
    missing = [f.name for f in files if not f.exists()]
    if missing:
        raise LogFormatError(f"{p}: {len(missing)} rank log(s) listed in the manifest are missing ({missing[0]} ...)")
    if not files:
        raise LogFormatError(f"{p}: the manifest lists no rank logs")
    return LogSet(path=p, files=files, run=dict(manifest.get("run", {})), split=True)
