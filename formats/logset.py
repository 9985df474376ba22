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
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import LogFormatError
from .reader import EventLog, log_run, read_log, regular_file_size
from .safe_write import write_atomic
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
    return write_atomic(d / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")


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


MAX_MANIFEST_BYTES = 64 << 20
RANK_FILE = re.compile(r"rank-(\d{1,9})\.arrow")


def open_logs(path: str | os.PathLike) -> LogSet:
    """A single log file or a split directory; raises LogFormatError with a one-line reason."""
    p = Path(path)
    try:
        is_dir = p.is_dir()
    except OSError:
        is_dir = False
    if not is_dir:
        log = read_log(p)
        return LogSet(path=p, files=[p], run=log.run, split=False)
    mpath = p / MANIFEST
    try:
        if not mpath.exists():
            raise LogFormatError(f"{p}: a directory without {MANIFEST}, not a split quiver log")
    except OSError as e:
        raise LogFormatError(f"{p}: cannot read ({e.strerror})") from None
    size = regular_file_size(mpath, "a manifest")
    if size > MAX_MANIFEST_BYTES:
        raise LogFormatError(f"{mpath}: {size} bytes, too large for a manifest")
    try:
        with open(mpath, "rb") as f:
            manifest = json.loads(f.read(MAX_MANIFEST_BYTES).decode())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        raise LogFormatError(f"{mpath}: damaged manifest") from None
    if not isinstance(manifest, dict) or manifest.get("format") != SPLIT_FORMAT:
        raise LogFormatError(f"{mpath}: not a quiver split-log manifest")
    version = manifest.get("format_version")
    if not isinstance(version, int) or not MIN_FORMAT_VERSION <= version <= FORMAT_VERSION:
        raise LogFormatError(f"{mpath}: format version {str(version)[:20]} is not one this quiver reads "
                             f"({MIN_FORMAT_VERSION}-{FORMAT_VERSION})")
    run = manifest.get("run", {})
    if not isinstance(run, dict):
        raise LogFormatError(f"{mpath}: damaged manifest (run)")
    files = _rank_files(p, mpath, manifest)
    return LogSet(path=p, files=files, run=dict(run), split=True)


def _rank_files(directory: Path, mpath: Path, manifest: dict[str, Any]) -> list[Path]:
    """The manifest's rank logs, each checked: a plain name ``rank-N.arrow`` inside the directory (no
    absolute path, no '..', no link leading out), a regular file, every rank exactly once, as many as
    ``ranks`` says, and each file's own rank metadata agreeing with its name."""
    names = manifest.get("files")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise LogFormatError(f"{mpath}: damaged manifest (files)")
    if not names:
        raise LogFormatError(f"{directory}: the manifest lists no rank logs")
    ranks = manifest.get("ranks")
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks != len(names):
        raise LogFormatError(f"{mpath}: damaged manifest: 'ranks' is {str(ranks)[:20]} but {len(names)} files "
                             "are listed")
    root = os.path.realpath(directory)
    files, seen = [], set()
    for name in names:
        match = RANK_FILE.fullmatch(name)
        if match is None:
            raise LogFormatError(f"{mpath}: rank log {name[:80]!r} is not a file name rank-N.arrow in the directory")
        rank = int(match.group(1))
        if rank in seen:
            raise LogFormatError(f"{mpath}: rank {rank} is listed more than once")
        seen.add(rank)
        f = directory / name
        real = os.path.realpath(f)
        if os.path.dirname(real) != root:
            raise LogFormatError(f"{mpath}: rank log {name} links outside the directory")
        if not os.path.lexists(f):
            missing = [n for n in names if not os.path.lexists(directory / n)]
            raise LogFormatError(f"{directory}: {len(missing)} rank log(s) listed in the manifest are missing "
                                 f"({missing[0]} ...)")
        regular_file_size(f)
        own = log_run(f).get("rank", rank)
        if own != rank:
            raise LogFormatError(f"{f}: holds rank {str(own)[:20]}, not rank {rank} as its name says")
        files.append(f)
    return files
