"""Write a Timeline as Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing).

Every event carries ``ph``, ``ts``, ``pid`` (= rank) and ``tid`` (= track), metadata events too.
``ts``/``dur`` are microseconds written with exactly three decimals, so no nanosecond is lost
(and ``displayTimeUnit`` is ``ns``). Events are encoded by polars a frame at a time and
written in chunks; the output is deterministic (sorted, no wall-clock, no host-specific ids).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import IO

import polars as pl

from quiver.formats.safe_write import atomic_output

from .export_timeline import Timeline

CHUNK_ROWS = 100_000


def _us(col: str) -> pl.Expr:
    """Nanoseconds as a decimal microsecond literal with three decimals (exact)."""
    ns = pl.col(col).cast(pl.Int64)
    return pl.concat_str([(ns // 1000).cast(pl.String), pl.lit("."), (ns % 1000).cast(pl.String).str.zfill(3)])


def _strip_nulls(expr: pl.Expr) -> pl.Expr:
    """Drop ``"key":null`` members from an encoded JSON object."""
    return expr.str.replace_all(r'"\w+":null,?', "").str.replace(r",\}$", "}")


def _event(head: dict[str, pl.Expr], args: list[pl.Expr] | None = None) -> pl.Expr:
    """One JSON object per row: ``head`` fields (ts/dur spliced in as raw numbers), then args."""
    fields = {k: v for k, v in head.items() if k not in ("ts", "dur")}
    body = pl.struct(**fields).struct.json_encode()
    if args:
        body = pl.concat_str([body.str.strip_suffix("}"), pl.lit(',"args":'),
                              _strip_nulls(pl.struct(*args).struct.json_encode()), pl.lit("}")])
    parts = [pl.lit('{"ts":'), head["ts"]]
    if "dur" in head:
        parts += [pl.lit(',"dur":'), head["dur"]]
    parts += [pl.lit(","), body.str.strip_prefix("{")]
    return pl.concat_str(parts)


def _metadata(tl: Timeline) -> pl.DataFrame:
    procs = pl.DataFrame({"rank": tl.ranks}, schema={"rank": pl.Int32})
    name = pl.format("rank {} ({})", pl.col("rank"), pl.lit(tl.program)) if len(tl.ranks) > 1 else pl.lit(tl.program)
    lines = [
        procs.select(_event({"ts": pl.lit("0"), "ph": pl.lit("M"), "pid": pl.col("rank"), "tid": pl.lit(0),
                             "name": pl.lit("process_name")}, [name.alias("name")]).alias("json")),
        procs.select(_event({"ts": pl.lit("0"), "ph": pl.lit("M"), "pid": pl.col("rank"), "tid": pl.lit(0),
                             "name": pl.lit("process_sort_index")}, [pl.col("rank").alias("sort_index")])
                     .alias("json")),
        tl.tracks.select(_event({"ts": pl.lit("0"), "ph": pl.lit("M"), "pid": pl.col("rank"), "tid": pl.col("tid"),
                                 "name": pl.lit("thread_name")}, [pl.col("track").alias("name")]).alias("json")),
        tl.tracks.select(_event({"ts": pl.lit("0"), "ph": pl.lit("M"), "pid": pl.col("rank"), "tid": pl.col("tid"),
                                 "name": pl.lit("thread_sort_index")}, [pl.col("sort").alias("sort_index")])
                         .alias("json")),
    ]
    return pl.concat(lines)


def _slice_json(df: pl.DataFrame) -> pl.Series:
    where = pl.when(pl.col("line") > 0).then(pl.format("{}:{}", pl.col("file"), pl.col("line"))).otherwise(
        pl.col("file"))
    return df.select(_event(
        {"ts": _us("start_ns"), "dur": _us("dur_ns"), "ph": pl.lit("X"), "pid": pl.col("rank"), "tid": pl.col("tid"),
         "name": pl.col("name"), "cat": pl.col("category")},
        [pl.col("variable"), pl.col("bytes"), pl.col("device"), where.alias("source"), pl.col("construct"),
         pl.col("detail"), pl.col("seq")]).alias("json")).to_series()


def _instant_json(df: pl.DataFrame) -> pl.Series:
    where = pl.when(pl.col("line") > 0).then(pl.format("{}:{}", pl.col("file"), pl.col("line"))).otherwise(
        pl.col("file"))
    return df.select(_event(
        {"ts": _us("time_ns"), "ph": pl.lit("i"), "pid": pl.col("rank"), "tid": pl.col("tid"), "name": pl.col("name"),
         "cat": pl.col("category"), "s": pl.col("scope")},
        [where.alias("source"), pl.col("detail"), pl.col("seq")]).alias("json")).to_series()


def _flow_json(df: pl.DataFrame) -> pl.Series:
    start = df.select(_event({"ts": _us("from_ns"), "ph": pl.lit("s"), "pid": pl.col("from_rank"),
                              "tid": pl.col("from_tid"), "name": pl.col("name"), "cat": pl.col("category"),
                              "id": pl.col("id")}).alias("json"))
    finish = df.select(_event({"ts": _us("to_ns"), "ph": pl.lit("f"), "pid": pl.col("to_rank"),
                               "tid": pl.col("to_tid"), "name": pl.col("name"), "cat": pl.col("category"),
                               "id": pl.col("id"), "bp": pl.lit("e")}).alias("json"))
    # each flow's start right before its finish keeps the file readable and deterministic
    both = pl.concat([start.with_row_index("i").with_columns(pl.lit(0).alias("k")),
                      finish.with_row_index("i").with_columns(pl.lit(1).alias("k"))]).sort("i", "k")
    return both["json"]


def _chunks(df: pl.DataFrame, encode) -> Iterator[pl.Series]:
    for start in range(0, df.height, CHUNK_ROWS):
        yield encode(df.slice(start, CHUNK_ROWS))


def write_chrome_trace(tl: Timeline, out: str | os.PathLike | IO[str], *, other: dict | None = None) -> int:
    """Write ``tl`` as one JSON object ``{"traceEvents": [...], ...}``; returns the number of events."""
    if isinstance(out, (str, os.PathLike)):
        with atomic_output(out) as f:
            return write_chrome_trace(tl, f, other=other)
    f = out
    f.write('{"displayTimeUnit":"ns","otherData":')
    f.write(json.dumps(other or {}, sort_keys=True))
    f.write(',"traceEvents":[\n')
    n = 0
    parts: list[Iterator[pl.Series]] = [
        iter([_metadata(tl)["json"]]),
        _chunks(tl.slices, _slice_json),
        _chunks(tl.flows, _flow_json),
        _chunks(tl.instants, _instant_json),
    ]
    for part in parts:
        for series in part:
            if not len(series):
                continue
            if n:
                f.write(",\n")
            f.write(",\n".join(series.to_list()))
            n += len(series)
    f.write("\n]}\n")
    return n
