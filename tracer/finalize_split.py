"""`trace record --split`: one event log per rank plus a manifest, instead of one merged log.

Why: a run on thousands of ranks gives hundreds of GB; merging it into one file needs one
machine to hold the merge, while a sharded analysis (docs/distributed.md) wants per-rank pieces
anyway. Each rank is finalized on its own (bounded memory) by the ordinary ``finalize``, run on a
view of the raw directory that holds only that rank's files (symbolic links).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quiver.formats import rank_file_name, write_manifest
from quiver.tracer.finalize import finalize
from quiver.tracer.rawread import ranks_in, read_info


def _rank_view(raw_dir: Path, rank: int) -> Path:
    """A directory of links to rank ``rank``'s raw files only."""
    view = raw_dir / f".rank{rank}"
    if view.exists():
        shutil.rmtree(view)
    view.mkdir()
    own = re.compile(rf"^r{rank}\.")
    for p in raw_dir.iterdir():
        if own.match(p.name) and p.is_file():
            os.symlink(p.resolve(), view / p.name)
    return view


def prepare_split_dir(out: Path) -> None:
    """Create ``out`` for a split log; an older split log there is replaced, anything else refused."""
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} exists and is not a directory (a split log is a directory)")
    if out.is_dir() and any(out.iterdir()):
        if not (out / "manifest.json").exists():
            raise FileExistsError(f"{out} is a non-empty directory that is not a split log; choose another -o")
        for p in out.iterdir():
            if p.name == "manifest.json" or re.match(r"^rank-\d+\.arrow(\.part)?$", p.name):
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def finalize_split(raw_dir: Path, out: Path, run: dict[str, Any] | None = None,
                   progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Write ``out/rank-NNNNN.arrow`` for every rank of ``raw_dir`` and ``out/manifest.json``;
    returns the run metadata of the whole run (the manifest's ``run``). ``progress``: finalize's, per
    rank file."""
    raw_dir, out, run = Path(raw_dir), Path(out), dict(run or {})
    ranks = ranks_in(raw_dir) if raw_dir.is_dir() else []
    prepare_split_dir(out)
    starts = [int(i["start_mono_ns"]) for i in (read_info(raw_dir / f"r{r}.info") for r in ranks)
              if "start_mono_ns" in i]
    t0 = min(starts) if starts else None        # one time base for all rank files
    metas, files = [], []
    for rank in ranks or [0]:
        view = _rank_view(raw_dir, rank) if ranks else raw_dir
        try:
            name = rank_file_name(rank)
            metas.append(finalize(view, out / name, {**run, "rank": rank, "ranks": max(len(ranks), 1)}, t0=t0,
                                  progress=progress))
            files.append(name)
        finally:
            if view != raw_dir:
                shutil.rmtree(view, ignore_errors=True)
    meta = merge_run_metadata(metas)
    write_manifest(out, files, meta)
    return meta


def merge_run_metadata(metas: list[dict[str, Any]]) -> dict[str, Any]:
    """The run metadata of the whole run from the per-rank logs' metadata."""
    first = metas[0]
    meta = {k: v for k, v in first.items() if k != "rank"}
    meta.update({
        "ranks": len(metas),
        "threads": sum(int(m.get("threads", 0)) for m in metas),
        "devices": max(int(m.get("devices", 0)) for m in metas),
        "start_unix_ns": min((int(m["start_unix_ns"]) for m in metas if m.get("start_unix_ns")), default=0),
        "events": sum(int(m.get("events", 0)) for m in metas),
        "partial_records": sum(int(m.get("partial_records", 0)) for m in metas),
        "ompt": any(m.get("ompt") for m in metas),
        "device_images": sorted({d for m in metas for d in m.get("device_images", [])}),
        "truncated": any(m.get("truncated") for m in metas),
        "truncated_reason": next((m.get("truncated_reason") for m in metas if m.get("truncated")), None),
        "last_event_ns": max((m["last_event_ns"] for m in metas if m.get("last_event_ns") is not None),
                             default=None),
        "has_accesses": any(m.get("has_accesses") for m in metas),
        "signal": next((m["signal"] for m in metas if m.get("signal")), first.get("signal")),
    })
    if any(m.get("access_limit_reached") for m in metas):
        meta["access_limit_reached"] = True
    return meta
