"""Readable polars views of one event family: named columns, decoded codes, joined locations."""

from __future__ import annotations

import polars as pl

from .reader import EventLog
from .schema import (
    FAMILIES,
    AccessFlag,
    ConstructKind,
    DataOpKind,
    DependKind,
    EventKind,
    MessageKind,
    MpiSyncKind,
    RmaOp,
    SyncKind,
    WinFlavor,
)

# For each family: raw column -> readable name. Columns not listed are dropped from the view.
RENAMES: dict[str, dict[str, str]] = {
    "allocs": {"addr": "addr", "size": "bytes", "id": "alloc_id"},
    "constructs": {"id": "construct", "op": "construct_kind", "id2": "target_task", "aux": "flags",
                   "device": "device"},
    "maps": {"id": "construct", "name": "variable", "aux2": "clause", "addr": "host_begin", "addr2": "base",
             "size": "bytes", "op": "map_type", "aux": "clause_index", "device": "device"},
    "data_ops": {"op": "op", "addr": "host_addr", "addr2": "device_addr", "size": "bytes", "id": "construct",
                 "id2": "target_task", "name": "variable", "device": "device"},
    "kernels": {"id": "construct", "id2": "target_task", "device": "device"},
    "tasks": {"id": "task", "id2": "parent", "op": "flags", "addr": "depend_addr"},
    "sync": {"op": "sync_kind", "id": "id"},
    "accesses": {"addr": "addr", "size": "bytes", "op": "flags", "device": "device", "id": "construct",
                 "addr2": "stride", "aux2": "blocks"},
    "windows": {"id": "window", "addr": "base", "size": "bytes", "aux": "disp_unit", "op": "flavor"},
    "rma": {"op": "op", "id": "window", "id2": "target", "aux": "target_disp", "size": "bytes",
            "addr": "origin_addr", "name": "mpi_op", "device": "datatype_size", "aux2": "request"},
    "mpi_sync": {"op": "sync_kind", "id": "window", "id2": "target", "aux": "lock_type", "name": "group",
                 "aux2": "request"},
    "messages": {"op": "message_kind", "id2": "peer", "aux": "tag", "aux2": "comm", "id": "message_seq"},
}
STRING_COLUMNS = {("maps", "name"), ("maps", "aux2"), ("data_ops", "name"), ("mpi_sync", "name")}
CODES = {
    ("constructs", "op"): ConstructKind, ("data_ops", "op"): DataOpKind, ("sync", "op"): SyncKind,
    ("windows", "op"): WinFlavor, ("rma", "op"): RmaOp, ("mpi_sync", "op"): MpiSyncKind,
    ("messages", "op"): MessageKind,
}
KIND_NAMES = {int(k): k.name.lower() for k in EventKind}
DEPEND_NAMES = {int(k): k.name.lower() for k in DependKind}


def _code_names(enum) -> dict[int, str]:
    return {int(k): k.name.lower() for k in enum}


def locations_frame(log: EventLog) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "loc": pl.Series(range(len(log.locations)), dtype=pl.Int32),
            "file": [loc.file for loc in log.locations],
            "line": pl.Series([loc.line for loc in log.locations], dtype=pl.Int32),
            "function": [loc.function for loc in log.locations],
        },
        schema={"loc": pl.Int32, "file": pl.String, "line": pl.Int32, "function": pl.String},
    )


def events_frame(log: EventLog) -> pl.DataFrame:
    """All events as one polars frame with raw columns plus ``seq`` (row order)."""
    df = pl.from_arrow(log.table)
    assert isinstance(df, pl.DataFrame)
    return df.with_row_index("seq")


def family_view(log: EventLog, family: str, events: pl.DataFrame | None = None) -> pl.DataFrame:
    """One event family with readable column names, decoded codes and source locations."""
    if family not in FAMILIES:
        raise KeyError(f"unknown event family {family!r}; known: {', '.join(FAMILIES)}")
    df = events if events is not None else events_frame(log)
    kinds = [int(k) for k in FAMILIES[family]]
    df = df.filter(pl.col("kind").is_in(kinds))
    strings = pl.Series(log.strings, dtype=pl.String) if log.strings else pl.Series([], dtype=pl.String)
    exprs: list[pl.Expr] = [pl.col("seq"), pl.col("time_ns"), pl.col("rank"), pl.col("thread")]
    if len(FAMILIES[family]) > 1:
        exprs.append(pl.col("kind").replace_strict(KIND_NAMES, default="?", return_dtype=pl.String).alias("event"))
    for raw, nice in RENAMES[family].items():
        col = pl.col(raw)
        if (family, raw) in STRING_COLUMNS:
            idx = col.cast(pl.Int64)
            exprs.append(pl.when(idx >= 0).then(idx).otherwise(None).alias(nice))
        elif (family, raw) in CODES:
            exprs.append(col.alias(nice + "_code"))
            exprs.append(col.replace_strict(_code_names(CODES[(family, raw)]), default="?",
                                            return_dtype=pl.String).alias(nice))
        else:
            exprs.append(col.alias(nice))
    if family == "accesses":
        exprs.append(((pl.col("op") & 1) == 1).alias("write"))
        # format version 5: `name` >= 2 is that many planes of the strided run, `id2` bytes apart
        planes = pl.max_horizontal(pl.col("name").cast(pl.Int64), pl.lit(1, pl.Int64))
        exprs.append(planes.alias("planes"))
        exprs.append(pl.when(planes >= 2).then(pl.col("id2")).otherwise(0).cast(pl.Int64).alias("plane_stride"))
        # format version 6: a masked row (op bit 4) is `blocks` slots of which those whose bit is set in `mask`
        # (id2's bit pattern) were accessed; null on every other row
        masked = (pl.col("op") & int(AccessFlag.MASKED)) != 0
        exprs.append(pl.when(masked).then(pl.col("id2").cast(pl.UInt64, wrap_numerical=True))
                     .otherwise(None).alias("mask"))
        exprs.append(pl.when(pl.col("device") < 0).then(pl.lit("host")).otherwise(pl.lit("device")).alias("side"))
    if family == "tasks":
        exprs.append(pl.when(pl.col("kind") == int(EventKind.TASK_DEPEND))
                     .then(pl.col("op").replace_strict(DEPEND_NAMES, default="?", return_dtype=pl.String))
                     .otherwise(None).alias("depend_kind"))
    exprs.append(pl.col("loc"))
    out = df.select(exprs)
    if family == "accesses":  # aux2 0 (a plain run, all version 1 logs) is one block
        out = out.with_columns(pl.max_horizontal(pl.col("blocks"), pl.lit(1, pl.Int64)).cast(pl.Int64).alias("blocks"))
    for raw, nice in RENAMES[family].items():
        if (family, raw) in STRING_COLUMNS:
            out = out.with_columns(strings.gather(out[nice]).alias(nice) if len(strings)
                                   else pl.lit(None, dtype=pl.String).alias(nice))
    out = out.join(locations_frame(log), on="loc", how="left").drop("loc")
    return out.sort("seq")
