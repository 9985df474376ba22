"""The full operation history of one variable or one host address range (``Trace.history``).

Why a separate pass: device accesses carry device addresses, RMA calls carry window
displacements, so the events that touch a host range are found only after translating both
back to host addresses. The log is streamed once (record batch by record batch), with the
live mapping table carried across batches.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from quiver.formats import AccessFlag, ConstructKind, EventKind, EventLog, MapType, RmaOp
from quiver.formats.blocks import block_counts, expand_blocks, row_masks
from quiver.formats.names import ALLOC_NAMES, CONSTRUCT_NAMES_BY_KEY, map_type_name
from quiver.formats.select import SEQ_DTYPE, iter_events, select_events
from quiver.formats.views import locations_frame
from quiver.replay.transfers.constructs import clause_text
from quiver.replay.transfers.device_to_host import LiveMappings, device_to_host_planes
from quiver.replay.transfers.redundant import free_sizes

HISTORY_KINDS = (EventKind.ALLOC, EventKind.FREE, EventKind.MAP_CLAUSE, EventKind.DATA_OP, EventKind.ACCESS,
                 EventKind.RMA)
DATA_OP_TEXT = {1: "device copy allocated", 2: "copied to the device", 3: "copied back to the host",
                4: "device copy released", 5: "device memory associated", 6: "device memory disassociated"}
# RMA calls that write at the target (the rest read there); calls that write the origin buffer.
RMA_WRITES_TARGET = {int(o) for o in RmaOp} - {int(RmaOp.GET), int(RmaOp.RGET)}
RMA_WRITES_ORIGIN = {int(RmaOp.GET), int(RmaOp.RGET)}

OUT_SCHEMA = {
    "seq": SEQ_DTYPE, "time_ns": pl.Int64, "rank": pl.Int32, "thread": pl.Int32, "side": pl.String,
    "operation": pl.String, "host_addr": pl.UInt64, "bytes": pl.UInt64, "offset": pl.Int64,
    "variable": pl.String, "construct": pl.Int64, "detail": pl.String, "file": pl.String, "line": pl.Int32,
    "function": pl.String,
}


def _ranges(log: EventLog, control: pl.DataFrame, variable: str | None, addr: int | None, size: int,
            rank: int | None) -> pl.DataFrame:
    """(rank, lo, hi, name) host ranges to follow, merged per rank."""
    if variable is not None:
        sid = [i for i, s in enumerate(log.strings) if s == variable]
        hits = control.filter(pl.col("kind").is_in([int(EventKind.MAP_CLAUSE), int(EventKind.DATA_OP)])
                              & pl.col("name").is_in(sid) & (pl.col("size") > 0))
        if rank is not None:
            hits = hits.filter(pl.col("rank") == rank)
        if hits.is_empty():
            names = sorted({log.strings[n] for n in control.filter(pl.col("kind") == int(EventKind.MAP_CLAUSE))
                            ["name"].to_list() if 0 <= n < len(log.strings)})
            known = ", ".join(names[:20]) or "none"
            raise KeyError(f"no mapped variable named {variable!r} in this log (mapped variables: {known})")
        spans = hits.select("rank", pl.col("addr").alias("lo"), (pl.col("addr") + pl.col("size")).alias("hi"))
    else:
        if addr is None:
            raise ValueError("give a variable name or an address (addr=..., size=...)")
        ranks = [rank] if rank is not None else sorted(set(control["rank"].to_list()) or {0})
        spans = pl.DataFrame({"rank": ranks, "lo": [addr] * len(ranks), "hi": [addr + max(size, 1)] * len(ranks)},
                             schema={"rank": pl.Int32, "lo": pl.UInt64, "hi": pl.UInt64})
    spans = spans.sort("rank", "lo")
    merged = (spans.with_columns(pl.col("hi").cum_max().shift(1).over("rank").alias("reach"))
              .with_columns((pl.col("reach").is_null() | (pl.col("lo") > pl.col("reach"))).cum_sum().over("rank")
                            .alias("g"))
              .group_by("rank", "g").agg(pl.col("lo").min(), pl.col("hi").max()).sort("rank", "lo"))
    return merged.select("rank", "lo", "hi")


def _overlapping(rank: np.ndarray, lo: np.ndarray, hi: np.ndarray, ranges: pl.DataFrame) -> np.ndarray:
    keep = np.zeros(len(rank), dtype=bool)
    for r, a, b in ranges.iter_rows():
        keep |= (rank == r) & (lo < np.uint64(b)) & (hi > np.uint64(a))
    return keep


def _blocks_overlapping(rank: np.ndarray, lo: np.ndarray, length: np.ndarray, cols: dict[str, np.ndarray],
                        is_access: np.ndarray, ranges: pl.DataFrame) -> np.ndarray:
    """Rows with a byte in ``ranges``; a strided ACCESS run counts when one of its blocks does (a masked run:
    one of its present slots)."""
    strided = is_access & (block_counts(cols["aux2"]) > 1)
    if not strided.any():
        return _overlapping(rank, lo, lo + length, ranges)
    keep = _overlapping(rank[~strided], lo[~strided], lo[~strided] + length[~strided], ranges)
    out = np.zeros(len(rank), dtype=bool)
    out[~strided] = keep
    rows = np.flatnonzero(strided)
    masks = row_masks(cols, rows)
    row, b_lo, b_hi = expand_blocks(lo[rows], cols["size"][rows], cols["addr2"][rows], cols["aux2"][rows], masks=masks)
    hit = _overlapping(rank[rows][row], b_lo.astype(np.uint64), b_hi.astype(np.uint64), ranges)
    out[rows[np.unique(row[hit])]] = True
    return out


def operation_history(log: EventLog, *, variable: str | None = None, addr: int | None = None, size: int = 1,
                      rank: int | None = None) -> pl.DataFrame:
    control = select_events(log, [EventKind.MAP_CLAUSE, EventKind.DATA_OP, EventKind.CONSTRUCT_BEGIN,
                                  EventKind.WIN_CREATE])
    ranges = _ranges(log, control, variable, addr, size, rank)
    live = LiveMappings(control.filter((pl.col("kind") == int(EventKind.DATA_OP)) & pl.col("op").is_in([1, 5])).height)
    wins = control.filter(pl.col("kind") == int(EventKind.WIN_CREATE)).select(
        pl.col("rank").alias("target"), pl.col("id").alias("window"), pl.col("addr").alias("win_base"))
    frees = free_sizes(log)
    parts = []
    for batch in iter_events(log, HISTORY_KINDS):
        cols = {c: batch[c].to_numpy() for c in ("kind", "rank", "device", "addr", "addr2", "size", "op", "aux2",
                                                 "name", "id2")}
        is_access = cols["kind"] == int(EventKind.ACCESS)
        is_dev_access = is_access & (cols["device"] >= 0)
        # one entry per plane of every row (rows of planes, format version 5; one for the others): a device
        # row's planes translated one by one (a later plane may lie in another mapping, or in none)
        host, first = device_to_host_planes(cols, live)
        planes = np.diff(first)
        row = np.repeat(np.arange(len(planes)), planes)
        p = np.arange(len(row)) - first[row]
        p_lo = np.where(is_dev_access[row], host,
                        cols["addr"][row] + (p * np.where(planes[row] > 1, cols["id2"][row], 0)).astype(np.uint64))
        mapped = ~(is_dev_access[row] & (host == 0))
        b = batch.join(frees.rename({"size": "free_size"}), on="seq", how="left").with_columns(
            pl.when(pl.col("kind") == int(EventKind.FREE)).then(pl.col("free_size").fill_null(1))
            .otherwise(pl.col("size")).alias("span"))
        length = np.maximum(b["span"].to_numpy(), 1).astype(np.uint64)
        hit = _blocks_overlapping(cols["rank"][row], p_lo.astype(np.uint64), length[row],
                                  {c: cols[c][row] for c in ("size", "addr2", "aux2", "op", "id2")}, is_access[row],
                                  ranges) & mapped
        keep = np.zeros(len(planes), dtype=bool)
        keep[row[hit]] = True
        # host_addr: the first block's host address (a device row's first plane in a mapping)
        lo = cols["addr"].astype(np.uint64)
        if len(planes):
            at = np.minimum.reduceat(np.where(mapped, np.arange(len(host)), len(host)), first[:-1])
            lo = np.where(is_dev_access, np.where(at < len(host), host[np.minimum(at, len(host) - 1)], 0), lo)
        b = b.with_columns(pl.Series("host_addr", lo), pl.lit("origin").alias("role"))
        parts.append(b.filter(pl.Series(keep)).drop("free_size", "span"))
        rma = batch.filter(pl.col("kind") == int(EventKind.RMA))
        if rma.height and wins.height:
            remote = (rma.join(wins, left_on=["id2", "id"], right_on=["target", "window"], how="inner")
                      .with_columns((pl.col("win_base") + pl.col("aux").cast(pl.UInt64)).alias("host_addr"),
                                    pl.col("rank").alias("origin"), pl.col("id2").cast(pl.Int32).alias("rank"),
                                    pl.lit("target").alias("role")))
            if remote.height:
                keep = _overlapping(remote["rank"].to_numpy(), remote["host_addr"].to_numpy(),
                                    remote["host_addr"].to_numpy() + np.maximum(remote["size"].to_numpy(), 1),
                                    ranges)
                parts.append(remote.filter(pl.Series(keep)).drop("win_base"))
    rows = pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()
    if rows.is_empty():
        return pl.DataFrame(schema=OUT_SCHEMA)
    if "origin" not in rows.columns:
        rows = rows.with_columns(pl.lit(None, dtype=pl.Int32).alias("origin"))
    return _describe(log, rows.sort("seq", "role"), control, ranges)


def _describe(log: EventLog, rows: pl.DataFrame, control: pl.DataFrame, ranges: pl.DataFrame) -> pl.DataFrame:
    strings = pl.Series("s", log.strings, dtype=pl.String)
    construct_kinds = control.filter(pl.col("kind") == int(EventKind.CONSTRUCT_BEGIN)).select(
        "rank", pl.col("id").alias("cid"), pl.col("op").alias("construct_kind"))
    rows = rows.with_columns(
        pl.when(pl.col("kind").is_in([int(EventKind.MAP_CLAUSE), int(EventKind.DATA_OP), int(EventKind.ACCESS)]))
        .then(pl.col("id")).otherwise(None).alias("cid"))
    rows = rows.join(construct_kinds, on=["rank", "cid"], how="left")

    def name(col: str) -> pl.Expr:
        idx = pl.col(col).cast(pl.Int64)
        ok = (idx >= 0) & (idx < len(strings))
        return pl.when(ok).then(pl.lit(strings).gather(idx.clip(0, max(len(strings) - 1, 0)))) \
            if len(strings) else pl.lit(None, dtype=pl.String)

    # map-clause wording, worked out once per distinct (map type, construct kind, clause text, name)
    keys = ["op", "construct_kind", "aux2", "name"]
    combos = rows.filter(pl.col("kind") == int(EventKind.MAP_CLAUSE)).select(keys).unique()
    words = []
    for bits, kind, text_id, name_id in combos.iter_rows():
        k = int(kind or 0)
        text = log.string(int(text_id)) or log.string(int(name_id)) or "?"
        clause = clause_text(map_type_name(int(bits), k), text, k, bool(bits & MapType.IMPLICIT))
        words.append(f"{CONSTRUCT_NAMES_BY_KEY.get(_kind_name(k), 'construct')}: {clause}")
    combos = combos.with_columns(pl.Series("clause_detail", words, dtype=pl.String),
                                 pl.lit(int(EventKind.MAP_CLAUSE), dtype=pl.Int16).alias("kind"))
    rows = rows.join(combos, on=["kind", *keys], how="left", nulls_equal=True)

    kind = pl.col("kind")
    dev_side = pl.format("device {}", pl.col("device"))
    access = pl.when((pl.col("op") & 2) == 2).then(pl.lit("atomic ")).otherwise(pl.lit("")) + pl.when(
        (pl.col("op") & 1) == 1).then(pl.lit("write")).otherwise(pl.lit("read"))
    op = pl.col("op")
    rma_name = op.replace_strict({int(o): o.name.lower() for o in RmaOp}, default="rma", return_dtype=pl.String)
    operation = (
        pl.when(kind == int(EventKind.ALLOC)).then(pl.format("allocated ({})", op.replace_strict(
            ALLOC_NAMES, default="heap", return_dtype=pl.String)))
        .when(kind == int(EventKind.FREE)).then(pl.lit("freed"))
        .when(kind == int(EventKind.MAP_CLAUSE)).then(pl.lit("map clause"))
        .when(kind == int(EventKind.DATA_OP)).then(op.replace_strict(DATA_OP_TEXT, default="data op",
                                                                     return_dtype=pl.String))
        .when(kind == int(EventKind.ACCESS)).then(access)
        .when((kind == int(EventKind.RMA)) & (pl.col("role") == "origin")).then(
            pl.format("{} to rank {} {} this buffer", rma_name, pl.col("id2"),
                      pl.when(op.is_in(list(RMA_WRITES_ORIGIN))).then(pl.lit("writes")).otherwise(pl.lit("reads"))))
        .when(kind == int(EventKind.RMA)).then(
            pl.format("{} from rank {} {} here", rma_name, pl.col("origin"),
                      pl.when(op.is_in(list(RMA_WRITES_TARGET))).then(pl.lit("writes")).otherwise(pl.lit("reads"))))
        .otherwise(pl.lit("?")))
    side = (pl.when((kind == int(EventKind.ACCESS)) & (pl.col("device") >= 0)).then(dev_side)
            .when(kind == int(EventKind.DATA_OP)).then(pl.format("host <-> device {}", pl.col("device")))
            .when((kind == int(EventKind.RMA)) & (pl.col("role") == "target")).then(pl.lit("remote"))
            .otherwise(pl.lit("host")))
    strided = (kind == int(EventKind.ACCESS)) & (pl.col("aux2") >= 2)
    masked = strided & ((pl.col("op") & int(AccessFlag.MASKED)) != 0)   # format version 6: present slots only
    present = pl.col("id2").bitwise_count_ones().cast(pl.UInt64)
    detail = (pl.when(kind == int(EventKind.MAP_CLAUSE)).then(pl.col("clause_detail"))
              .when(kind == int(EventKind.RMA)).then(pl.format("window {}, {} bytes at target displacement {}",
                                                                pl.col("id"), pl.col("size"), pl.col("aux")))
              .when(masked).then(pl.format("masked run: {} of {} slots of {} bytes every {} bytes", present,
                                           pl.col("aux2"), pl.col("size"), pl.col("addr2")))
              .when(strided & (pl.col("name") >= 2)).then(pl.format(
                  "{} planes {} bytes apart of a strided run: {} blocks of {} bytes every {} bytes", pl.col("name"),
                  pl.col("id2"), pl.col("aux2"), pl.col("size"), pl.col("addr2")))
              .when(strided).then(pl.format("strided run: {} blocks of {} bytes every {} bytes", pl.col("aux2"),
                                            pl.col("size"), pl.col("addr2")))
              .when(kind == int(EventKind.DATA_OP)).then(
                  pl.format("{}", pl.col("construct_kind").replace_strict(
                      {int(k): CONSTRUCT_NAMES_BY_KEY.get(_kind_name(int(k)), "") for k in range(1, 7)}, default=None,
                      return_dtype=pl.String)))
              .otherwise(None))
    base = ranges.group_by("rank").agg(pl.col("lo").min().alias("range_lo"))
    out = rows.join(base, on="rank", how="left").with_columns(
        side.alias("side"), operation.alias("operation"), detail.alias("detail"),
        pl.when(kind.is_in([int(EventKind.MAP_CLAUSE), int(EventKind.DATA_OP)])).then(name("name"))
        .otherwise(None).alias("variable"),
        (pl.col("host_addr").cast(pl.Int64) - pl.col("range_lo").cast(pl.Int64)).alias("offset"),
        pl.when(kind == int(EventKind.FREE)).then(pl.lit(0, dtype=pl.UInt64))
        .when(masked).then(pl.col("size") * present)
        .when(strided).then(pl.col("size") * pl.col("aux2").cast(pl.UInt64)
                            * pl.max_horizontal(pl.col("name"), pl.lit(1)).cast(pl.UInt64)).otherwise(pl.col("size"))
        .alias("bytes"),
        pl.col("cid").alias("construct"))
    out = out.join(locations_frame(log), on="loc", how="left")
    return out.select([pl.col(c).cast(t) for c, t in OUT_SCHEMA.items()]).sort("seq", "side")


def _kind_name(code: int) -> str:
    try:
        return ConstructKind(code).name.lower()
    except ValueError:
        return ""


STATE_SCHEMA = {
    "rank": pl.Int32, "host_begin": pl.UInt64, "host_end": pl.UInt64, "offset": pl.Int64, "bytes": pl.Int64,
    "tracked": pl.Boolean, "ov_valid": pl.Boolean, "ov_init": pl.Boolean, "state": pl.String,
}


def vsm_state(log: EventLog, *, variable: str | None = None, addr: int | None = None, size: int = 1,
              rank: int | None = None, at: int | None = None) -> pl.DataFrame:
    """The mapping checker's per-byte state of a variable after event ``at`` (a ``seq``; the end
    of the log when None), run-length encoded: one row per run of bytes in the same state.

    Replays the mapping checker's own engine (``quiver.replay.mapping.vsm.VsmSession``) up to ``at`` and
    reads its shadow; per device ``cv<d>_valid`` / ``cv<d>_init`` columns follow ``ov_*``."""
    from quiver.replay.mapping import vsm_layout as K
    from quiver.replay.mapping.events import S_CV_INIT, S_CV_VALID, S_OV_INIT, S_OV_VALID, read_control_events
    from quiver.replay.mapping.vsm import VsmSession, state4

    control = select_events(log, [EventKind.MAP_CLAUSE, EventKind.DATA_OP, EventKind.CONSTRUCT_BEGIN,
                                  EventKind.WIN_CREATE])
    ranges = _ranges(log, control, variable, addr, size, rank)
    session = VsmSession.for_control(read_control_events(log))
    stop = log.num_events if at is None else int(at) + 1
    if not 0 < stop <= log.num_events:
        raise ValueError(f"at={at} is not an event of this log (seq 0..{log.num_events - 1})")
    offset = 0
    for batch in log.batches():
        n = len(batch["kind"])
        if offset >= stop:
            break
        take = min(n, stop - offset)
        session.apply(batch if take == n else {k: v[:take] for k, v in batch.items()}, base=offset)
        offset += n
    st = session.static
    devices = [int(d) for d in st.devices]
    parts = []
    for r, lo, hi in ranges.iter_rows():
        addrs = np.arange(int(lo), int(hi), dtype=np.int64)
        keys = (np.int64(r) << np.int64(K.SHIFT)) | addrs
        seg = np.searchsorted(st.tr_lo, keys, side="right") - 1
        ok = (seg >= 0) & (keys < st.tr_hi[np.maximum(seg, 0)]) if len(st.tr_lo) else np.zeros(len(keys), bool)
        idx = np.where(ok, st.tr_base[np.maximum(seg, 0)] + (keys - st.tr_lo[np.maximum(seg, 0)]), 0) \
            if len(st.tr_lo) else np.zeros(len(keys), dtype=np.int64)
        bits = np.where(ok, session.values(idx) if len(session.shadow) else 0, -1)
        change = np.flatnonzero(np.concatenate(([True], bits[1:] != bits[:-1])))
        ends = np.concatenate((change[1:], [len(bits)]))
        run = bits[change]
        # decode each distinct shadow value once, with the checker's own decoder (state4)
        values = np.unique(run[run >= 0])
        decoded = {d: np.array([state4(int(v), i) for v in values], dtype=np.int64)
                   for i, d in enumerate(devices or [-1])}

        def bit(d: int, mask: int, run=run, values=values, decoded=decoded) -> np.ndarray:
            if not len(values):
                return np.zeros(len(run), dtype=bool)
            got = decoded[d][np.searchsorted(values, np.maximum(run, values[0]))]
            return (run >= 0) & ((got & mask) != 0)

        first_dev = devices[0] if devices else -1
        cols = {
            "rank": np.full(len(change), r, dtype=np.int32), "host_begin": (addrs[change]).astype(np.uint64),
            "host_end": (addrs[ends - 1] + 1).astype(np.uint64), "offset": change.astype(np.int64),
            "bytes": (ends - change).astype(np.int64), "tracked": run >= 0,
            "ov_valid": (run < 0) | bit(first_dev, S_OV_VALID), "ov_init": (run < 0) | bit(first_dev, S_OV_INIT),
        }
        for d in devices:
            cols[f"cv{d}_valid"] = bit(d, S_CV_VALID)
            cols[f"cv{d}_init"] = bit(d, S_CV_INIT)
        parts.append(pl.DataFrame(cols))
    out = pl.concat(parts) if parts else pl.DataFrame(schema={k: v for k, v in STATE_SCHEMA.items() if k != "state"})
    return out.with_columns(_state_text(devices).alias("state")).select(
        *[c for c in STATE_SCHEMA if c != "state"], *[c for c in out.columns if c.startswith("cv")], "state")


def _state_text(devices: list[int]) -> pl.Expr:
    """``OV valid, CV0 stale`` style wording of one run of bytes."""
    def copy(valid: str, init: str, label: str) -> pl.Expr:
        return (pl.when(pl.col(valid)).then(pl.lit(f"{label} valid"))
                .when(pl.col(init)).then(pl.lit(f"{label} stale"))
                .otherwise(pl.lit(f"{label} uninitialised")))
    parts = [copy("ov_valid", "ov_init", "OV")] + [copy(f"cv{d}_valid", f"cv{d}_init", f"CV{d}") for d in devices]
    return (pl.when(~pl.col("tracked")).then(pl.lit("never mapped (host copy valid)"))
            .otherwise(pl.concat_str(parts, separator=", ")))
