"""Write a log as Parquet for other tools: one file per event family (the ``quiver.open`` views,
with readable names and source locations) in an output directory, plus ``run.json`` and,
when asked, ``findings.parquet``. Streams: one record batch of the log at a time."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from quiver.formats import FAMILIES, EventLog
from quiver.formats.safe_write import current_umask, make_temp_dir, write_atomic
from quiver.formats.select import iter_events
from quiver.formats.views import family_view


def is_parquet_export(path: Path) -> bool:
    """A directory this module wrote (safe to replace): run.json and Parquet files only."""
    if not path.is_dir() or not (path / "run.json").is_file():
        return False
    return all(p.name == "run.json" or (p.suffix == ".parquet" and p.is_file()) for p in path.iterdir())


def write_parquet_dir(log: EventLog, out: str | os.PathLike, *, ranks: list[int] | None = None,
                      from_ns: int | None = None, to_ns: int | None = None,
                      findings: pl.DataFrame | None = None) -> dict[str, int]:
    """Write ``<out>/<family>.parquet`` for every family with events; returns rows per file."""
    target = Path(out)
    if target.exists() and not is_parquet_export(target):
        raise FileExistsError(f"{target} exists and is not a quiver Parquet export; choose another -o")
    tmp = make_temp_dir(target)
    writers: dict[str, pq.ParquetWriter] = {}
    rows: dict[str, int] = {}
    try:
        for batch in iter_events(log, ranks=ranks, from_ns=from_ns, to_ns=to_ns):
            for family in FAMILIES:
                view = family_view(log, family, batch)
                if view.is_empty():
                    continue
                table = view.to_arrow()
                if family not in writers:
                    writers[family] = pq.ParquetWriter(str(tmp / f"{family}.parquet"), table.schema,
                                                       compression="zstd")
                writers[family].write_table(table.cast(writers[family].schema))
                rows[family] = rows.get(family, 0) + view.height
    except BaseException:
        for w in writers.values():
            w.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for w in writers.values():
        w.close()
    if findings is not None:
        findings.write_parquet(tmp / "findings.parquet", compression="zstd")
        rows["findings"] = findings.height
    write_atomic(tmp / "run.json", json.dumps({"run": log.run, "source": str(log.path), "files": dict(sorted(
        rows.items())), "filters": {"ranks": ranks, "from_ns": from_ns, "to_ns": to_ns}}, indent=2, sort_keys=True,
        default=str) + "\n")
    os.chmod(tmp, 0o777 & ~current_umask())
    if target.exists():
        shutil.rmtree(target)
    os.replace(tmp, target)
    return dict(sorted(rows.items()))
