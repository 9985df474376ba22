"""What each target construct really did to each variable (OmpSan's Table 4, from the runtime's data ops).

For every construct instance and every map-clause item: Copy In (bytes transferred to the
device), Copy Out (bytes transferred back), Alloc (device copy created here), Release (device
copy deleted here), Persistent In (the device copy already existed on entry, so nothing was
allocated) and Persistent Out (the device copy outlives the construct). The data ops are what
the runtime did after reference counting, so these are facts, not predictions from clauses.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from quiver.formats import ConstructKind, EventLog, MapType
from quiver.formats.names import CONSTRUCT_NAMES_BY_KEY, map_type_name
from quiver.formats.select import MAPPING_KINDS, select_events
from quiver.formats.views import family_view

# Map-clause items that are not mapped at all (scalars passed by value).
_NOT_MAPPED = int(MapType.LITERAL) | int(MapType.PRIVATE)


def clause_text(map_type: str, clause: str, construct_kind: int, implicit: bool = False) -> str:
    """How the item reads in the source: ``map(tofrom: a[0:N])``, ``to(a[0:N])`` in an update."""
    if implicit:
        return f"implicit map({map_type}: {clause})"
    if construct_kind == ConstructKind.TARGET_UPDATE:
        return f"{map_type.split(', ')[-1]}({clause})"
    return f"map({map_type}: {clause})"


def load_mapping_frames(log: EventLog, events: pl.DataFrame | None = None
                        ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(constructs, maps, data_ops) views, reading only the construct, map and data-op events
    (or taking them from ``events``, raw events with ``seq`` that include them)."""
    ev = events if events is not None else select_events(log, MAPPING_KINDS)
    return family_view(log, "constructs", ev), family_view(log, "maps", ev), family_view(log, "data_ops", ev)


def match_data_ops(maps: pl.DataFrame, ops: pl.DataFrame) -> pl.DataFrame:
    """``ops`` with the ``clause_index`` of the map item each data op serves (null if none).

    An op serves the first item of its construct whose host section overlaps the op's host
    range; failing that, the first item with the same variable name.
    """
    items = maps.select("rank", "construct", "clause_index", pl.col("variable").alias("item_variable"),
                        pl.col("host_begin").alias("item_begin"), pl.col("bytes").alias("item_bytes"))
    pairs = ops.select("seq", "rank", "construct", "host_addr", "bytes", "variable").join(
        items, on=["rank", "construct"], how="inner")
    overlap = (pl.col("host_addr") < pl.col("item_begin") + pl.col("item_bytes")) & (
        pl.col("item_begin") < pl.col("host_addr") + pl.col("bytes").clip(lower_bound=1))
    by_range = pairs.filter(overlap).group_by("seq").agg(pl.col("clause_index").min())
    by_name = (pairs.filter(pl.col("variable") == pl.col("item_variable"))
               .group_by("seq").agg(pl.col("clause_index").min().alias("by_name")))
    return (ops.join(by_range, on="seq", how="left").join(by_name, on="seq", how="left")
            .with_columns(pl.coalesce("clause_index", "by_name").alias("clause_index")).drop("by_name")
            .sort("seq"))


_OP_COLUMNS = {"alloc": "alloc", "transfer_to": "copy_in", "transfer_from": "copy_out", "delete": "release"}


WASTE_ITEM_COLUMNS = ("read_device_bytes", "read_host_bytes", "unused_bytes", "duplicate_bytes", "round_trip_bytes", "wasted_ns")


def construct_items(log: EventLog, events: pl.DataFrame | None = None, waste: pl.DataFrame | None = None
                    ) -> pl.DataFrame:
    """One row per (construct instance, map item): what the runtime did to that item there
    (``events``: already-read raw events including the mapping kinds, see load_mapping_frames).
    With ``waste`` (``redundant.replay_transfers(...).transfers``) also what the item's transfers
    wasted: ``read_device_bytes`` / ``read_host_bytes`` of its copies read on the device / back on the
    host, ``unused_bytes``, ``duplicate_bytes``,
    ``round_trip_bytes`` and ``wasted_ns`` (their share of the transfers' durations)."""
    cons, maps, ops = load_mapping_frames(log, events)
    begins = cons.filter(pl.col("event") == "construct_begin").select(
        "rank", "construct", "construct_kind", "construct_kind_code", "device", "file", "line", "function",
        pl.col("seq").alias("begin_seq"), pl.col("time_ns").alias("begin_ns"), "thread")
    ends = cons.filter(pl.col("event") == "construct_end").select(
        "rank", "construct", pl.col("line").alias("end_line"), pl.col("seq").alias("end_seq"))
    begins = begins.join(ends, on=["rank", "construct"], how="left")
    ops = match_data_ops(maps, ops)
    # Ops with no map item become items of their own (named after the op's variable or address).
    orphans = (ops.filter(pl.col("clause_index").is_null())
               .group_by("rank", "construct", "host_addr")
               .agg(pl.col("variable").drop_nulls().first(), pl.col("bytes").max(), pl.col("device").first(),
                    pl.col("seq").min().alias("first_seq"))
               .sort("rank", "construct", "first_seq")
               .with_columns((pl.int_range(pl.len()).over("rank", "construct") + 1_000_000)
                             .cast(pl.Int64).alias("clause_index")))
    ops = ops.join(orphans.select("rank", "construct", "host_addr", pl.col("clause_index").alias("orphan")),
                   on=["rank", "construct", "host_addr"], how="left").with_columns(
        pl.coalesce("clause_index", "orphan").alias("clause_index")).drop("orphan")
    wasted_items = _waste_per_item(ops, waste)
    stats = (ops.filter(pl.col("op").is_in(list(_OP_COLUMNS)))
             .group_by("rank", "construct", "clause_index", "op")
             .agg(pl.col("bytes").sum().alias("b"), pl.len().alias("n"))
             .with_columns(pl.col("op").replace_strict(_OP_COLUMNS, return_dtype=pl.String)))
    wide = None
    for col in _OP_COLUMNS.values():
        part = stats.filter(pl.col("op") == col).select(
            "rank", "construct", "clause_index", pl.col("b").alias(f"{col}_bytes"), pl.col("n").alias(f"{col}_ops"))
        wide = part if wide is None else wide.join(part, on=["rank", "construct", "clause_index"], how="full",
                                                   coalesce=True)
    item_cols = [
        "rank", "construct", "clause_index", "variable", "clause", pl.col("host_begin").alias("host_addr"),
        pl.col("bytes").alias("section_bytes"), "map_type", pl.col("file").alias("clause_file"),
        pl.col("line").alias("clause_line")]
    explicit = maps.filter((pl.col("map_type") & _NOT_MAPPED) == 0).select(item_cols)
    implicit_orphans = orphans.select(
        "rank", "construct", "clause_index",
        pl.coalesce("variable", pl.Series([f"<0x{a:x}>" for a in orphans["host_addr"].to_list()],
                                          dtype=pl.String)).alias("variable"),
        pl.lit(None, dtype=pl.String).alias("clause"), "host_addr", pl.col("bytes").alias("section_bytes"),
        pl.lit(None, dtype=pl.Int32).alias("map_type"), pl.lit(None, dtype=pl.String).alias("clause_file"),
        pl.lit(None, dtype=pl.Int32).alias("clause_line"))
    items = pl.concat([explicit.with_columns(pl.col("clause_index").cast(pl.Int64)),
                       implicit_orphans.with_columns(pl.col("clause_index").cast(pl.Int64))], how="vertical_relaxed")
    items = items.with_columns(pl.coalesce("clause", "variable").alias("clause"))
    items = items.join(begins, on=["rank", "construct"], how="inner")
    if wide is not None:
        items = items.join(wide.with_columns(pl.col("clause_index").cast(pl.Int64)),
                           on=["rank", "construct", "clause_index"], how="left")
    for col in _OP_COLUMNS.values():
        for suffix in ("bytes", "ops"):
            name = f"{col}_{suffix}"
            if name not in items.columns:
                items = items.with_columns(pl.lit(0, dtype=pl.UInt64 if suffix == "bytes" else pl.UInt32).alias(name))
            items = items.with_columns(pl.col(name).fill_null(0))
    items = items.join(wasted_items, on=["rank", "construct", "clause_index"], how="left").with_columns(
        [pl.col(c).fill_null(0) for c in WASTE_ITEM_COLUMNS])
    items = items.with_columns(
        (pl.col("alloc_ops") == 0).alias("persistent_in"),
        (pl.col("release_ops") == 0).alias("persistent_out"),
        ((pl.col("map_type").fill_null(0) & int(MapType.IMPLICIT)) != 0).alias("implicit"),
    )
    items = with_map_type_names(items)
    return items.select(
        "rank", "construct", "construct_kind", "construct_kind_code", "device", "file", "line", "end_line",
        "function", "thread", "begin_seq", "begin_ns", "end_seq", "clause_index", "variable", "clause",
        "map_type", "map_type_name", "implicit", "host_addr", "section_bytes", "clause_file", "clause_line",
        "copy_in_bytes", "copy_in_ops", "copy_out_bytes", "copy_out_ops", "alloc_bytes", "alloc_ops",
        "release_bytes", "release_ops", "persistent_in", "persistent_out", *WASTE_ITEM_COLUMNS,
    ).sort("rank", "begin_seq", "clause_index")


def _waste_per_item(ops: pl.DataFrame, waste: pl.DataFrame | None) -> pl.DataFrame:
    """Per (rank, construct, clause_index): the WASTE_ITEM_COLUMNS of its transfers (none without ``waste``)."""
    keys = {"rank": pl.Int32, "construct": ops["construct"].dtype, "clause_index": pl.Int64}
    if waste is None or waste.is_empty():
        return pl.DataFrame(schema={**keys, **{c: pl.Int64 for c in WASTE_ITEM_COLUMNS}})
    lost = pl.col("unused_bytes") + pl.col("duplicate_bytes") + pl.col("round_trip_bytes")
    to = pl.col("op") == "transfer_to"
    per = waste.select("seq", pl.when(to).then(pl.col("used_bytes")).otherwise(0).alias("read_device_bytes"),
                       pl.when(to).then(0).otherwise(pl.col("used_bytes")).alias("read_host_bytes"), "unused_bytes", "duplicate_bytes",
                       "round_trip_bytes", (pl.col("duration_ns").fill_null(0) * lost
                                            // pl.col("bytes").cast(pl.Int64).clip(lower_bound=1)).alias("wasted_ns"))
    return (ops.select("seq", "rank", "construct", pl.col("clause_index").cast(pl.Int64)).join(per, on="seq")
            .group_by("rank", "construct", "clause_index").agg([pl.col(c).sum() for c in WASTE_ITEM_COLUMNS]))


def with_map_type_names(df: pl.DataFrame) -> pl.DataFrame:
    """Add ``map_type_name`` from (``map_type``, ``construct_kind_code``), naming each distinct pair once."""
    pairs = df.select("map_type", "construct_kind_code").unique().drop_nulls()
    names = pairs.with_columns(pl.Series("map_type_name", [
        map_type_name(int(m), int(k)) for m, k in pairs.iter_rows()], dtype=pl.String))
    return df.join(names, on=["map_type", "construct_kind_code"], how="left", nulls_equal=False).with_columns(
        pl.col("map_type_name").fill_null(""))


SITE_KEYS = ["rank", "file", "line", "end_line", "function", "construct_kind", "construct_kind_code", "device"]


def explain_table(items: pl.DataFrame) -> pl.DataFrame:
    """``construct_items`` summed per construct site (a construct in a loop is one site, many runs)."""
    runs = items.group_by(SITE_KEYS).agg(pl.col("construct").n_unique().alias("runs"),
                                         pl.col("begin_seq").min().alias("first_seq"))
    per_item = items.group_by([*SITE_KEYS, "variable", "clause", "map_type_name", "implicit", "clause_file",
                               "clause_line"]).agg(
        pl.col("clause_index").min(),
        pl.col("section_bytes").max(),
        *[pl.col(f"{c}_bytes").sum() for c in _OP_COLUMNS.values()],
        *[(pl.col(f"{c}_ops") > 0).sum().alias(f"{c}_runs") for c in _OP_COLUMNS.values()],
        *[pl.col(c).sum() for c in WASTE_ITEM_COLUMNS],
        pl.col("persistent_in").sum().alias("persistent_in_runs"),
        pl.col("persistent_out").sum().alias("persistent_out_runs"),
        pl.len().alias("item_runs"),
    )
    return (per_item.join(runs, on=SITE_KEYS, how="left", nulls_equal=True)
            .sort("rank", "file", "line", "first_seq", "construct_kind_code", "device", "clause_index", "variable"))


@dataclass(frozen=True)
class Category:
    title: str
    column: str          # prefix of ``<column>_runs`` / ``<column>_bytes`` in explain_table
    has_bytes: bool


CATEGORIES = [
    Category("Copy In", "copy_in", True),
    Category("Copy Out", "copy_out", True),
    Category("Persistent In", "persistent_in", False),
    Category("Persistent Out", "persistent_out", False),
    Category("Alloc", "alloc", True),
    Category("Release", "release", True),
]


def _bytes(n: int) -> str:
    """Exact and readable: ``400 B``, ``32 KiB``, ``1.5 MiB = 1572864 B``."""
    if n < 10 * 1024:
        return f"{n} B"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n // size} {unit}" if n % size == 0 else f"{n / size:.1f} {unit} = {n} B"
    return f"{n} B"


def _entry(row: dict, cat: Category) -> str | None:
    """One item in one category of one site, e.g. ``a[0:N] (400 B)``; None when it does not apply."""
    k = int(row[f"{cat.column}_runs"])
    if k == 0:
        return None
    label = row["clause"] + (" (implicit)" if row["implicit"] else "")
    runs = int(row["runs"])
    parts = []
    if cat.has_bytes:
        total = int(row[f"{cat.column}_bytes"])
        parts.append(_bytes(total // k) + (f" x {k} = {_bytes(total)}" if k > 1 and k == runs else ""))
    if k < runs:
        parts.append(f"{k} of {runs} runs")
    return f"{label} ({', '.join(parts)})" if parts else label


def site_title(row: dict) -> str:
    kind = CONSTRUCT_NAMES_BY_KEY.get(row["construct_kind"], row["construct_kind"])
    where = row["file"] or "??"
    if row["line"]:
        where += f":{row['line']}"
        if row["end_line"] and row["end_line"] != row["line"]:
            where += f"-{row['end_line']}"
    who = [f"in {row['function']}"] if row["function"] else []
    who.append(f"device {row['device']}")
    runs = int(row["runs"])
    if runs > 1:
        who.append(f"ran {runs} times")
    return f"{where}  {kind}  ({', '.join(who)})"


WASTE_WORDS = (("unused_bytes", "unused"), ("duplicate_bytes", "duplicate"), ("round_trip_bytes", "round trip"))


def _waste_entry(row: dict) -> str | None:
    """``a[0:N] (duplicate 24576 B, read 32768 B)`` for the Wasted line of a site; None when nothing was."""
    parts = [f"{word} {_bytes(int(row[col]))}" for col, word in WASTE_WORDS if int(row.get(col) or 0) > 0]
    if not parts:
        return None
    reads = [f"{_bytes(int(row[read]))} read on the {side}" for read, moved, side in (
        ("read_device_bytes", "copy_in_bytes", "device"), ("read_host_bytes", "copy_out_bytes", "host"))
        if int(row[moved] or 0)]
    return f"{row['clause']} ({', '.join(parts + reads)})"


def render_text(table: pl.DataFrame, findings: list, *, ranks: int = 1, costs: dict | None = None,
                empty: str = "no target constructs in this log") -> str:
    """OmpSan-style listing: one block per construct site (with what its transfers wasted), then every
    data-movement finding with its fix, then the totals, the potential saving and the peak device memory
    (``costs``: ``{"run_ns": {rank: ns}, "peaks": (rank, device, peak_bytes) frame}``)."""
    lines: list[str] = []
    width = max(len(c.title) for c in CATEGORIES)
    for key, rows in table.group_by(SITE_KEYS, maintain_order=True):
        rows_d = rows.sort("clause_index", "variable").to_dicts()
        head = rows_d[0]
        rank = f"rank {head['rank']}: " if ranks > 1 else ""
        lines.append(rank + site_title(head))
        shown = False
        for cat in CATEGORIES:
            entries = [e for e in (_entry(r, cat) for r in rows_d) if e]
            if entries:
                lines.append(f"  {cat.title:<{width}}  {', '.join(entries)}")
                shown = True
        wasted = [e for e in (_waste_entry(r) for r in rows_d) if e]
        if wasted:
            lines.append(f"  {'Wasted':<{width}}  {', '.join(wasted)}")
        if not shown:
            lines.append("  (no mapped data)")
    if not lines:
        lines.append(empty)   # or what a filter did not match (quiver/commands/explain.py)
    moved_to = int(table["copy_in_bytes"].sum()) if table.height else 0
    moved_from = int(table["copy_out_bytes"].sum()) if table.height else 0
    lines.append("")
    if findings:
        lines.append(f"Wasted data movement ({len(findings)}):")
        for f in findings:
            lines.append(f"  {f.access.short()}: {f.kind.value}: {f.message}")
            lines.append(f"    fix: {f.fix}")
        lines.append("")
    by_kind: dict[str, int] = {}
    for f in findings:
        by_kind[f.kind.value] = by_kind.get(f.kind.value, 0) + f.bytes
    wasted = ", ".join(f"{_bytes(n)} {kind}" for kind, n in sorted(by_kind.items())) or "nothing"
    lines.append(f"moved: {_bytes(moved_to)} to devices, {_bytes(moved_from)} back to the host; wasted: {wasted}")
    if costs is not None:
        saved = sum(int(f.details.get("wasted_ns", 0)) for f in findings)
        run = sum(costs["run_ns"].values())
        share = f" ({100.0 * saved / run:.3g}% of the run's {run} ns)" if run > 0 else ""
        lines.append(f"potential saving: {saved} ns of data-op time{share}")
        peaks = costs["peaks"].to_dicts()
        if peaks:
            who = [("rank " + str(p["rank"]) + " " if ranks > 1 else "") + f"device {p['device']}" for p in peaks]
            lines.append("peak device memory: " + ", ".join(
                f"{w} {_bytes(int(p['peak_bytes']))}" for w, p in zip(who, peaks)))
    return "\n".join(lines) + "\n"


def to_json(table: pl.DataFrame, findings: list, costs: dict | None = None) -> dict:
    sites = []
    for _key, rows in table.group_by(SITE_KEYS, maintain_order=True):
        rows_d = rows.sort("clause_index", "variable").to_dicts()
        head = rows_d[0]
        items = []
        for r in rows_d:
            item = {"variable": r["variable"], "clause": r["clause"], "map_type": r["map_type_name"],
                    "implicit": bool(r["implicit"]), "clause_file": r["clause_file"], "clause_line": r["clause_line"],
                    "section_bytes": int(r["section_bytes"] or 0)}
            for cat in CATEGORIES:
                entry = {"runs": int(r[f"{cat.column}_runs"])}
                if cat.has_bytes:
                    entry["bytes"] = int(r[f"{cat.column}_bytes"])
                item[cat.column] = entry
            item["wasted"] = {c: int(r.get(c) or 0) for c in WASTE_ITEM_COLUMNS}
            items.append(item)
        sites.append({"rank": head["rank"], "file": head["file"], "line": head["line"], "end_line": head["end_line"],
                      "function": head["function"], "construct": head["construct_kind"], "device": head["device"],
                      "runs": int(head["runs"]), "items": items})
    totals = {
        "copy_in_bytes": int(table["copy_in_bytes"].sum()) if table.height else 0,
        "copy_out_bytes": int(table["copy_out_bytes"].sum()) if table.height else 0,
        "wasted_bytes": sum(f.bytes for f in findings),
        "wasted_ns": sum(int(f.details.get("wasted_ns", 0)) for f in findings),
    }
    if costs is not None:
        totals["run_ns"] = {str(r): int(ns) for r, ns in sorted(costs["run_ns"].items())}
        totals["peak_device_bytes"] = costs["peaks"].to_dicts()
    return {"constructs": sites, "findings": [f.to_dict() for f in findings], "totals": totals}
