"""Logs with planes of strided ACCESS rows (format version 5), and the same logs with the planes expanded.

Why: a row of planes (``name`` >= 2 copies of a strided run, ``id2`` bytes apart) must mean to every
checker exactly what its ``name`` strided rows, one per plane at the row's time and site, mean. The
oracle tests of each checker family build a log with the builder, expand it here (``expand_planes``)
and compare what the checker says of both; the expanded log's row indices map back to the planes row
they came from (``origin``), so findings that name events compare too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from oracle import oracle_detections
from quiver.formats import EventKind, LogBuilder
from quiver.formats.writer import write_log
from quiver.replay.mapping.vsm import run_vsm
from quiver.replay.mapping.vsm_layout import LOG_BLOCK

import quiver


def expand_planes(cols: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """(columns with every row of planes replaced by one strided row per plane, the row of ``cols`` each
    expanded row comes from)."""
    multi = (cols["kind"] == int(EventKind.ACCESS)) & (cols["name"] >= 2)
    n = np.where(multi, cols["name"], 1).astype(np.int64)
    origin = np.repeat(np.arange(len(n), dtype=np.int64), n)
    plane = np.arange(len(origin), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
    out = {c: v[origin].copy() for c, v in cols.items()}
    m = multi[origin]
    out["addr"] = (out["addr"].astype(np.int64) + plane * np.where(m, out["id2"], 0)).astype(cols["addr"].dtype)
    out["name"][m] = -1
    out["id2"][m] = -1
    assert int(multi.sum()) > 0, "a planes test without rows of planes"
    return out, origin


def write_both(b: LogBuilder, directory: Path) -> tuple[Path, Path, np.ndarray]:
    """The builder's log as written (planes) and expanded, and the expanded rows' origins."""
    cols = b.columns()
    wide, origin = expand_planes(cols)
    run = dict(b.run)
    run.setdefault("threads", len(np.unique(cols["thread"])))
    planes = write_log(directory / "planes.arrow", cols, strings=b.strings, locations=b.locations, run=run)
    expanded = write_log(directory / "expanded.arrow", wide, strings=b.strings, locations=b.locations, run=run)
    return Path(planes), Path(expanded), origin


def remap_detection(d, origin: np.ndarray):
    """A VSM detection of the expanded log with its events as rows of the planes log."""
    def back(g: int) -> int:
        return int(origin[g]) if g >= 0 else g

    return dataclasses.replace(d, event=back(d.event), clause_event=back(d.clause_event),
                               entry_event=back(d.entry_event), release_event=back(d.release_event),
                               history=tuple((back(g), s) for g, s in d.history))


def remap_detections(detections: list, origin: np.ndarray) -> list:
    """``remap_detection`` of each, in the order of the planes log (several rows of the expanded log may
    map to one row of planes)."""
    return sorted((remap_detection(d, origin) for d in detections), key=lambda d: d.sort_key())


def without_history(d) -> tuple:
    """What a detection says but its history."""
    return tuple(v for k, v in d.__dict__.items() if k != "history")


def kernel_agrees(cols: dict[str, np.ndarray], each: Callable[[int, list], None] | None = None) -> list:
    """The oracle's detections of ``cols``, asserted equal to the VSM kernel's at the default and at 8-byte
    shadow blocks: with histories (a replay that watches bytes, so takes no shortcut) and of the first pass
    alone (whose shortcuts decide the findings), then ``each(log_block, detections)`` at each size."""
    want = oracle_detections(cols)
    for lgb in (LOG_BLOCK, 3):
        assert run_vsm(cols, log_block=lgb).detections == want
        assert [without_history(d) for d in run_vsm(cols, history=False, log_block=lgb).detections] == \
            [without_history(d) for d in want]
        if each is not None:
            each(lgb, want)
    return want


def findings(path: Path, checks: str | list[str]) -> list[dict[str, Any]]:
    """What `trace analyze --check checks` finds in the log at ``path``, as dicts."""
    return [f.to_dict() for f in quiver.open(path).check(checks)]


def same_findings(b: LogBuilder, directory: Path, checks: str | list[str]) -> list[dict[str, Any]]:
    """The findings of the builder's log, asserted equal to those of its expanded log."""
    planes, expanded, _origin = write_both(b, directory)
    got = findings(planes, checks)
    assert got == findings(expanded, checks)
    return got


def store_after_put(store: Callable[[LogBuilder, int], None]) -> LogBuilder:
    """Two ranks' windows and lock_all, an MPI_Put from rank 0's buffer (16 bytes at 0x90000, site line
    10), then ``store(builder, buffer)`` adds rank 0's local store, then unlock_all: Fig. 4a of the RMA
    checker's tests, the store in a row shape of its own (planes, a masked run)."""
    from quiver.formats import MpiSyncKind, RmaOp

    b = LogBuilder(ranks=2)
    for r in range(2):
        b.win_create(r, 0, 0x10000 + r * 0x10000, 64, disp_unit=4)
    for r in range(2):
        b.mpi_sync(r, MpiSyncKind.LOCK_ALL, 0)
    buf = 0x90000
    b.rma(0, RmaOp.PUT, 0, 1, 0, 16, origin_addr=buf, site=("a.c", 10))
    store(b, buf)
    for r in range(2):
        b.mpi_sync(r, MpiSyncKind.UNLOCK_ALL, 0)
    return b
