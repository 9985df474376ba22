"""The `transfers` checker: every kind of wasted data movement OMPDataPerf reports, made exact by the
recorded accesses, with its cost and the change that removes it (docs/transfers.md).

- unused-transfer: bytes copied and never read on the other side before being overwritten,
  copied over or released (OMPDataPerf's "unused transfer");
- duplicate-transfer: bytes sent to a side that already holds them, or to a device that held
  them until its copy was released (a map repeated in a loop);
- round-trip: bytes copied back from a device that never changed them;
- repeated-allocation: the same host section allocated on a device again after being released;
- unused-allocation: a device copy that no kernel read or wrote.

Advisory: these never change the exit status. Costs come from the data ops' own durations
(``aux``), summed per finding (``details["wasted_ns"]``), with the rank's run time and the peak
device memory, so reports can give the saving as a share of the run whatever backend found them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from quiver.formats import EventLog, MapType
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import Finding, FindingKind, Related, Site, merge_findings
from quiver.replay.transfers import fixes
from quiver.replay.transfers.constructs import (
    clause_text,
    load_mapping_frames,
    match_data_ops,
    with_map_type_names,
)
from quiver.replay.transfers.redundant import REASONS, Survey, TransferReplay, replay_transfers, survey

TRANSFER_COLUMNS = {FindingKind.UNUSED_TRANSFER: "unused_bytes", FindingKind.DUPLICATE_TRANSFER: "duplicate_bytes",
                    FindingKind.ROUND_TRIP: "round_trip_bytes"}
SITE = ["rank", "c_file", "c_line", "c_function", "construct_kind", "construct_kind_code", "device", "var",
        "clause", "map_type", "map_type_name", "m_file", "m_line"]


def check_transfers(log: EventLog, options: CheckOptions) -> list[Finding]:
    """Findings of the five data-movement kinds: one per (kind, construct site, variable, direction, clause)."""
    return transfer_findings(log, options)


def transfer_findings(log: EventLog, options: CheckOptions, first: Survey | None = None,
                      replay: TransferReplay | None = None) -> list[Finding]:
    """``check_transfers`` reusing a ``survey`` / ``replay_transfers`` the caller already made."""
    first = first if first is not None else survey(log)
    has_accesses = bool(log.run.get("has_accesses", True))
    if replay is None:
        replay = replay_transfers(log, first)
    cons, maps, ops = load_mapping_frames(log, first.events)
    costs = {"run_ns": run_time(log), "peaks": device_peaks(ops)}
    begins = cons.filter(pl.col("event") == "construct_begin").select(
        "rank", "construct", "construct_kind", "construct_kind_code", pl.col("file").alias("c_file"),
        pl.col("line").alias("c_line"), pl.col("function").alias("c_function"), pl.col("thread").alias("c_thread"))
    clauses = maps.select("rank", "construct", "clause_index", pl.col("variable").alias("m_variable"), "clause",
                          "map_type", pl.col("file").alias("m_file"), pl.col("line").alias("m_line"))

    def at_sites(rows: pl.DataFrame) -> pl.DataFrame:
        matched = match_data_ops(maps, rows.drop("clause_index", strict=False))
        df = (matched.join(begins, on=["rank", "construct"], how="left")
              .join(clauses, on=["rank", "construct", "clause_index"], how="left")
              .with_columns(pl.coalesce("m_variable", "variable").alias("var"), pl.col("construct_kind_code").fill_null(0)))
        return with_map_type_names(df)

    found: list[Finding] = []
    min_fraction = float(options.extra.get("redundant_min_fraction", 0.5))
    if has_accesses and replay.transfers.height:
        found += _transfer_findings(at_sites(replay.transfers), min_fraction, costs)
    if replay.allocations.height:
        allocs = replay.allocations
        if log.truncated:       # a copy still alive at the crash may yet have been used
            allocs = allocs.with_columns(pl.col("touched") | pl.col("release_seq").is_null())
        found += _allocation_findings(at_sites(allocs), has_accesses, costs)
    return merge_findings(found)


def run_time(log: EventLog) -> dict[int, int]:
    """Per rank, the time of its last event (ns since the start of the run)."""
    last: dict[int, int] = {}
    for batch in log.batches(["rank", "time_ns"]):
        if not len(batch["rank"]):
            continue
        ranks, inv = np.unique(batch["rank"], return_inverse=True)
        top = np.full(len(ranks), np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(top, inv, batch["time_ns"].astype(np.int64))
        for r, t in zip(ranks.tolist(), top.tolist()):
            last[r] = max(last.get(r, 0), t)
    return last


def device_peaks(ops: pl.DataFrame) -> pl.DataFrame:
    """(rank, device, peak_bytes): the most device memory mapped data held at once."""
    sized = ops.filter(pl.col("op").is_in(["alloc", "delete"])).sort("seq").with_columns(
        pl.when(pl.col("op") == "alloc").then(pl.col("bytes").cast(pl.Int64))
        .otherwise(-pl.col("bytes").cast(pl.Int64)).alias("delta"))
    return (sized.with_columns(pl.col("delta").cum_sum().over("rank", "device").alias("held"))
            .group_by("rank", "device").agg(pl.col("held").max().alias("peak_bytes")).sort("rank", "device"))


def _cost_details(row: dict, costs: dict) -> dict:
    rank, device = int(row["rank"]), int(row["device"])
    peaks = costs["peaks"].filter((pl.col("rank") == rank) & (pl.col("device") == device))["peak_bytes"]
    return {"wasted_ns": int(row["wasted_ns"] or 0), "run_ns": int(costs["run_ns"].get(rank, 0)),
            "peak_device_bytes": int(peaks[0]) if len(peaks) else 0}


@dataclass(frozen=True)
class _Subject:
    """What a finding row is about, as both finding builders word it: the construct's site, the
    variable, its map clause and the device."""

    row: dict
    file: str
    line: int
    where: str       # "file:line" of the construct, for fixes
    var: str
    clause: str      # the clause's section text (the variable's name when the log has none)
    device: int
    kind_code: int   # the construct's kind
    map_name: str

    @classmethod
    def of(cls, row: dict) -> _Subject:
        file, line = row["c_file"] or "??", int(row["c_line"] or 0)
        var = row["var"] or "?"
        return cls(row=row, file=file, line=line, where=f"{file}:{line}" if line else file, var=var,
                   clause=row["clause"] or var, device=int(row["device"]),
                   kind_code=int(row["construct_kind_code"] or 0), map_name=row["map_type_name"] or "")

    def site(self, side: str) -> Site:
        """Where the finding is: the construct, on ``side``."""
        return Site(file=self.file, line=self.line, function=self.row["c_function"] or "", side=side,
                    device=self.device, rank=int(self.row["rank"]), thread=int(self.row["thread"] or 0))

    def related(self) -> list[Related]:
        """The map clause, when the log located it."""
        row = self.row
        if row["m_file"] is None:
            return []
        implicit = bool((row["map_type"] or 0) & MapType.IMPLICIT)
        return [Related("map-clause", Site(file=row["m_file"], line=int(row["m_line"] or 0), rank=int(row["rank"])),
                        clause_text(self.map_name, self.clause, self.kind_code, implicit))]


def _transfer_findings(df: pl.DataFrame, min_fraction: float, costs: dict) -> list[Finding]:
    df = df.with_columns(pl.when(pl.col("op") == "transfer_to").then(pl.lit("to")).otherwise(pl.lit("from"))
                         .alias("direction"), pl.col("duration_ns").fill_null(0))
    runs = df.group_by([*SITE, "direction"]).agg(pl.col("construct").n_unique().alias("runs"))
    out = []
    for kind, col in TRANSFER_COLUMNS.items():
        share = pl.col("duration_ns") * pl.col(col) // pl.col("bytes").clip(lower_bound=1)
        groups = (df.group_by([*SITE, "direction"]).agg(
            pl.col("bytes").sum().alias("moved"), pl.col(col).sum().alias("wasted"),
            pl.col("used_bytes").sum().alias("used"), pl.col("held_bytes").sum().alias("held"),
            (pl.col("duplicate_bytes") + pl.col("round_trip_bytes")).sum().alias("unchanged"),
            pl.len().alias("transfers"), (pl.col(col) > 0).sum().alias("wasteful"), share.sum().alias("wasted_ns"),
            pl.col("reason").fill_null(0).bitwise_or().alias("reason"),
            pl.col("seq").filter(pl.col(col) > 0).min().alias("first_seq"),
            pl.col("time_ns").filter(pl.col(col) > 0).min().alias("first_ns"),
            pl.col("first_wasted").filter(pl.col("first_wasted") >= 0).min().alias("first_wasted"),
            pl.col("c_thread").first().alias("thread"))
            .filter((pl.col("wasted") > 0) & (pl.col("wasted") >= pl.col("moved") * min_fraction))
            .join(runs, on=[*SITE, "direction"], how="left", nulls_equal=True)
            .sort("rank", "c_file", "c_line", "var", "direction"))
        out += [_transfer_finding(kind, row, costs) for row in groups.iter_rows(named=True)]
    return out


def _transfer_finding(kind: FindingKind, row: dict, costs: dict) -> Finding:
    direction = row["direction"]
    s = _Subject.of(row)
    var, clause, device, kind_code, map_name, where = s.var, s.clause, s.device, s.kind_code, s.map_name, s.where
    moved, wasted, used = int(row["moved"]), int(row["wasted"]), int(row["used"])
    verb = f"copied to device {device}" if direction == "to" else f"copied back to the host from device {device}"
    head = f"{wasted} of {moved} bytes of '{var}' {verb}"
    if kind is FindingKind.UNUSED_TRANSFER:
        reasons = [text for bit, text in REASONS.items() if int(row["reason"] or 0) & bit]
        message = f"{head} were never read there ({'; '.join(reasons)})"
        fix = fixes.unused_transfer_fix(direction, kind_code, row["map_type"], map_name, clause, where, used, moved,
                                        wasted)
    elif kind is FindingKind.DUPLICATE_TRANSFER:
        held = int(row["held"])
        if direction == "from":
            why = "the host already held them (copied back before, unchanged on the device since)"
        elif held >= wasted:
            why = f"device {device} already held them (unchanged on the host since they were last sent)"
        else:
            why = (f"device {device} had held them until its copy was released (unchanged on the host since); "
                   f"{used} bytes were read there")
        message = f"{head} were already there: {why}"
        fix = fixes.duplicate_fix(direction, kind_code, row["map_type"], map_name, clause, where, device, held,
                                  wasted, int(row["unchanged"]), moved, int(row["runs"] or 1))
    else:
        message = f"{head} are the bytes the host had sent there: the device never changed them"
        fix = fixes.round_trip_fix(kind_code, row["map_type"], map_name, clause, where, int(row["unchanged"]), moved)
    return Finding(
        kind=kind, message=message,
        access=s.site("device" if direction == "to" else "host"), variable=var, related=s.related(), fix=fix, bytes=wasted,
        occurrences=int(row["wasteful"]),
        details={"direction": direction, "construct": row["construct_kind"] or "", "transferred_bytes": moved,
                 "transfers": int(row["transfers"]), "read_bytes": used,
                 "first_wasted_addr": int(row["first_wasted"]) if row["first_wasted"] is not None else None,
                 "seq": int(row["first_seq"]), "time_ns": int(row["first_ns"]), **_cost_details(row, costs)},
    )


def _allocation_findings(df: pl.DataFrame, has_accesses: bool, costs: dict) -> list[Finding]:
    df = df.filter(pl.col("bytes") > 0).sort("seq").with_columns(
        (pl.col("duration_ns").fill_null(0) + pl.col("release_duration_ns").fill_null(0)).alias("op_ns"),
        (pl.int_range(pl.len()).over("rank", "device", "host_addr", "bytes") > 0).alias("repeat"))
    agg = [pl.len().alias("n"), pl.col("bytes").sum().alias("wasted"), pl.col("op_ns").sum().alias("wasted_ns"),
           pl.col("bytes").max().alias("size"), pl.col("seq").min().alias("first_seq"),
           pl.col("time_ns").min().alias("first_ns"), pl.col("c_thread").first().alias("thread")]
    out = []
    totals = df.group_by(SITE).agg(pl.len().alias("allocs"))
    rep = (df.filter(pl.col("repeat")).group_by(SITE).agg(*agg)
           .join(totals, on=SITE, how="left", nulls_equal=True).sort("rank", "c_file", "c_line", "var"))
    out += [_allocation_finding(FindingKind.REPEATED_ALLOCATION, row, costs) for row in rep.iter_rows(named=True)]
    if has_accesses:
        unused = (df.filter(~pl.col("touched")).group_by(SITE).agg(*agg)
                  .join(totals, on=SITE, how="left", nulls_equal=True).sort("rank", "c_file", "c_line", "var"))
        out += [_allocation_finding(FindingKind.UNUSED_ALLOCATION, row, costs) for row in unused.iter_rows(named=True)]
    return out


def _allocation_finding(kind: FindingKind, row: dict, costs: dict) -> Finding:
    s = _Subject.of(row)
    var, clause, device, kind_code, map_name, where = s.var, s.clause, s.device, s.kind_code, s.map_name, s.where
    n, allocs = int(row["n"]), int(row["allocs"])
    implicit = bool((row["map_type"] or 0) & MapType.IMPLICIT)
    if kind is FindingKind.REPEATED_ALLOCATION:
        message = (f"'{var}' ({int(row['size'])} B) was allocated on device {device} again {n} "
                   f"time{'s' if n != 1 else ''} after being released")
        fix = fixes.repeated_allocation_fix(map_name, clause, where, device, allocs)
    else:
        message = (f"no kernel read or wrote the device copy of '{var}' ({int(row['size'])} B on device {device}"
                   f"{f', {n} allocations' if n > 1 else ''})")
        fix = fixes.unused_allocation_fix(kind_code, map_name, clause, where, implicit)
    return Finding(
        kind=kind, message=message,
        access=s.site("device"), variable=var, related=s.related(), fix=fix, bytes=int(row["wasted"]), occurrences=n,
        details={"construct": row["construct_kind"] or "", "allocations": allocs, "allocation_bytes": int(row["size"]),
                 "seq": int(row["first_seq"]), "time_ns": int(row["first_ns"]), **_cost_details(row, costs)},
    )
