"""A log as a timeline: slices (constructs, kernels, data ops, RMA calls), flows (RMA origin ->
target) and instants (synchronisation, messages, findings) on tracks (host threads, device
queues, RMA windows), as polars frames. The Perfetto export and the notebooks draw from it.

Only the non-access events are read (batch by batch), so a log with billions of accesses
gives a timeline the size of its constructs and MPI calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from quiver.formats import EventKind, EventLog
from quiver.formats.names import CONSTRUCT_NAMES_BY_KEY
from quiver.formats.select import select_events
from quiver.formats.views import family_view

# Track ids (Chrome-trace tids) within a rank's process: host threads keep their thread index.
DEVICE_TRACK_BASE = 10_000_000     # + device * 100_000 + thread that drives the device
RMA_TRACK_BASE = 20_000_000        # + window * 100_000 + origin rank (target side of a window)
RMA_CALL_MAX_NS = 1_000            # the log has when an RMA call was made, not how long it took

TIMELINE_KINDS = (
    EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END, EventKind.KERNEL, EventKind.DATA_OP, EventKind.SYNC,
    EventKind.WIN_CREATE, EventKind.WIN_FREE, EventKind.RMA, EventKind.MPI_SYNC, EventKind.MPI_MESSAGE,
    EventKind.MPI_REQUEST, EventKind.TASK_CREATE, EventKind.TASK_BEGIN, EventKind.TASK_END,
)
DATA_OP_NAMES = {"alloc": "alloc", "transfer_to": "copy to device", "transfer_from": "copy from device",
                 "delete": "release", "associate": "associate", "disassociate": "disassociate"}
DATA_OP_CATEGORIES = {"alloc": "alloc", "transfer_to": "transfer", "transfer_from": "transfer",
                      "delete": "alloc", "associate": "alloc", "disassociate": "alloc"}
# MPI_SYNC kinds that complete an RMA call at its target: all of the window, or one target rank.
COMPLETES_ALL = ["fence", "unlock_all", "flush_all", "complete"]
COMPLETES_TARGET = ["unlock", "flush"]

SLICE_SCHEMA = {
    "rank": pl.Int32, "tid": pl.Int64, "category": pl.String, "name": pl.String, "start_ns": pl.Int64,
    "dur_ns": pl.Int64, "seq": pl.Int64, "device": pl.Int32, "variable": pl.String, "bytes": pl.Int64,
    "construct": pl.Int64, "file": pl.String, "line": pl.Int32, "detail": pl.String,
}
INSTANT_SCHEMA = {
    "rank": pl.Int32, "tid": pl.Int64, "category": pl.String, "name": pl.String, "time_ns": pl.Int64,
    "seq": pl.Int64, "scope": pl.String, "file": pl.String, "line": pl.Int32, "detail": pl.String,
}
FLOW_SCHEMA = {
    "id": pl.Int64, "category": pl.String, "name": pl.String, "from_rank": pl.Int32, "from_tid": pl.Int64,
    "from_ns": pl.Int64, "to_rank": pl.Int32, "to_tid": pl.Int64, "to_ns": pl.Int64,
}
TRACK_SCHEMA = {"rank": pl.Int32, "tid": pl.Int64, "track": pl.String, "sort": pl.Int64}


@dataclass
class Timeline:
    slices: pl.DataFrame     # SLICE_SCHEMA: one row per duration (kernel, copy, construct, RMA call)
    instants: pl.DataFrame   # INSTANT_SCHEMA
    flows: pl.DataFrame      # FLOW_SCHEMA: arrows between slices (RMA origin -> target)
    tracks: pl.DataFrame     # TRACK_SCHEMA: the name of every (rank, tid) in use
    ranks: list[int]
    program: str
    origin_ns: int = 0              # the first timeline event of the log: x = 0 at every zoom
    from_ns: int | None = None      # the window asked for (a plot's axis shows exactly this)
    to_ns: int | None = None


def _conform(df: pl.DataFrame, schema: dict) -> pl.DataFrame:
    """Exactly ``schema``'s columns and types (missing ones null), so parts concatenate."""
    return df.select([(pl.col(c) if c in df.columns else pl.lit(None)).cast(t).alias(c) for c, t in schema.items()])


def _where(file: str = "file", line: str = "line") -> pl.Expr:
    """``saxpy.c:10`` (base name: slice names stay short; the args keep the full path)."""
    base = pl.col(file).str.split("/").list.last().fill_null("??")
    return pl.when(pl.col(line) > 0).then(pl.format("{}:{}", base, pl.col(line))).otherwise(base)


def _device_tid() -> pl.Expr:
    return DEVICE_TRACK_BASE + pl.col("device").cast(pl.Int64).clip(lower_bound=0) * 100_000 + pl.col("thread")


def _next_on_thread(ev: pl.DataFrame) -> pl.DataFrame:
    """``next_ns``: time of the next event (of those read) on the same rank and thread."""
    return ev.sort("seq").with_columns(pl.col("time_ns").shift(-1).over("rank", "thread").alias("next_ns"))


def _construct_slices(cons: pl.DataFrame, last_ns: int) -> pl.DataFrame:
    begins = cons.filter(pl.col("event") == "construct_begin")
    ends = cons.filter(pl.col("event") == "construct_end").select(
        "rank", "construct", pl.col("time_ns").alias("end_ns"))
    df = begins.join(ends, on=["rank", "construct"], how="left").with_columns(pl.col("end_ns").fill_null(last_ns))
    return df.select(
        "rank", pl.col("thread").cast(pl.Int64).alias("tid"), pl.lit("construct").alias("category"),
        pl.format("{} {}", pl.col("construct_kind").replace_strict(CONSTRUCT_NAMES_BY_KEY, default=pl.col("construct_kind")),
                  _where()).alias("name"),
        pl.col("time_ns").alias("start_ns"), (pl.col("end_ns") - pl.col("time_ns")).clip(lower_bound=0).alias("dur_ns"),
        "seq", "device", "construct", "file", "line",
        pl.when((pl.col("flags") & 1) == 1).then(pl.lit("nowait")).otherwise(None).alias("detail"))


def _kernel_slices(kernels: pl.DataFrame, ops: pl.DataFrame, cons: pl.DataFrame, last_ns: int) -> pl.DataFrame:
    """A kernel runs from its launch to the construct's next data op (exit copies) or its end."""
    after = pl.concat([
        ops.select("rank", "construct", "seq", "time_ns"),
        cons.filter(pl.col("event") == "construct_end").select("rank", "construct", "seq", "time_ns"),
    ]).rename({"seq": "after_seq", "time_ns": "after_ns"})
    ends = (kernels.select("rank", "construct", "seq").join(after, on=["rank", "construct"], how="inner")
            .filter(pl.col("after_seq") > pl.col("seq")).group_by("seq").agg(pl.col("after_ns").min()))
    df = kernels.join(ends, on="seq", how="left").with_columns(pl.col("after_ns").fill_null(last_ns))
    return df.select(
        "rank", _device_tid().alias("tid"), pl.lit("kernel").alias("category"),
        pl.format("kernel {}", _where()).alias("name"), pl.col("time_ns").alias("start_ns"),
        (pl.col("after_ns") - pl.col("time_ns")).clip(lower_bound=0).alias("dur_ns"),
        "seq", "device", "construct", "file", "line")


def _data_op_slices(ops: pl.DataFrame, next_ns: pl.DataFrame) -> pl.DataFrame:
    """A data op lasts ``aux`` ns when the recorder knew it, else until the thread's next event."""
    df = ops.join(next_ns, on="seq", how="left")
    dur = (pl.when(pl.col("aux") > 0).then(pl.col("aux"))
           .otherwise((pl.col("next_ns") - pl.col("time_ns")).fill_null(0)).clip(lower_bound=0))
    return df.select(
        "rank", _device_tid().alias("tid"),
        pl.col("op").replace_strict(DATA_OP_CATEGORIES, default="alloc").alias("category"),
        pl.format("{} {}", pl.col("op").replace_strict(DATA_OP_NAMES, default=pl.col("op")),
                  pl.col("variable").fill_null("?")).alias("name"),
        pl.col("time_ns").alias("start_ns"), dur.alias("dur_ns"), "seq", "device", "variable",
        pl.col("bytes").cast(pl.Int64), "construct", "file", "line", pl.col("op").alias("detail"))


WASTE_WORDS = (("unused_bytes", "unused"), ("duplicate_bytes", "duplicate"), ("round_trip_bytes", "round trip"))


def mark_wasted(slices: pl.DataFrame, waste: pl.DataFrame) -> pl.DataFrame:
    """Data-op slices of transfers that wasted bytes (``waste``: per transfer ``seq`` and the byte
    columns of ``redundant.replay_transfers``) become ``wasted transfer`` slices named ``wasted: ...``
    with the bytes of each kind in ``detail``."""
    parts = [pl.when(pl.col(c) > 0).then(pl.format("{} {} B", pl.lit(word), pl.col(c))) for c, word in WASTE_WORDS]
    marks = waste.filter(pl.col("wasted_bytes") > 0).select(
        pl.col("seq").cast(pl.Int64), pl.concat_str(parts, separator="; ", ignore_nulls=True).alias("waste"))
    df = slices.join(marks, on="seq", how="left")
    hit = pl.col("waste").is_not_null()
    return df.with_columns(
        pl.when(hit).then(pl.lit("wasted transfer")).otherwise(pl.col("category")).alias("category"),
        pl.when(hit).then(pl.format("wasted: {}", pl.col("name"))).otherwise(pl.col("name")).alias("name"),
        pl.when(hit).then(pl.format("{} ({})", pl.col("waste"), pl.col("detail"))).otherwise(pl.col("detail"))
        .alias("detail")).drop("waste")


def _rma(rma: pl.DataFrame, msync: pl.DataFrame, next_ns: pl.DataFrame, last_ns: int):
    """RMA calls: a short slice at the origin, a slice on the target's window track from the call
    to the origin's synchronisation that completes it, and a flow between the two."""
    if rma.is_empty():
        return [], []
    syncs = msync.filter(pl.col("event") == "mpi_sync").select(
        "rank", "window", "target", "sync_kind", pl.col("time_ns").alias("done_ns"), pl.col("seq").alias("done_seq"))
    calls = rma.sort("seq").with_columns(pl.col("seq").alias("call_seq"))
    all_done = (calls.select("seq", "rank", "window", "call_seq")
                .join_asof(syncs.filter(pl.col("sync_kind").is_in(COMPLETES_ALL)).sort("done_seq")
                           .select("rank", "window", "done_seq", pl.col("done_ns").alias("all_ns")),
                           left_on="call_seq", right_on="done_seq", by=["rank", "window"], strategy="forward",
                           check_sortedness=False).select("seq", "all_ns"))
    one_done = (calls.select("seq", "rank", "window", "target", "call_seq")
                .join_asof(syncs.filter(pl.col("sync_kind").is_in(COMPLETES_TARGET)).sort("done_seq")
                           .select("rank", "window", "target", "done_seq", pl.col("done_ns").alias("one_ns")),
                           left_on="call_seq", right_on="done_seq", by=["rank", "window", "target"],
                           strategy="forward", check_sortedness=False).select("seq", "one_ns"))
    df = (calls.join(all_done, on="seq", how="left").join(one_done, on="seq", how="left")
          .join(next_ns, on="seq", how="left")
          .with_columns(pl.min_horizontal("all_ns", "one_ns").fill_null(last_ns).alias("done_ns"),
                        (pl.col("next_ns") - pl.col("time_ns")).fill_null(RMA_CALL_MAX_NS)
                        .clip(0, RMA_CALL_MAX_NS).alias("call_ns"),
                        (RMA_TRACK_BASE + pl.col("window").cast(pl.Int64) * 100_000 + pl.col("rank"))
                        .alias("target_tid")))
    detail = pl.format("window {} disp {}", pl.col("window"), pl.col("target_disp"))
    origin = df.select(
        "rank", pl.col("thread").cast(pl.Int64).alias("tid"), pl.lit("rma").alias("category"),
        pl.format("{} -> rank {}", pl.col("op"), pl.col("target")).alias("name"), pl.col("time_ns").alias("start_ns"),
        pl.col("call_ns").alias("dur_ns"), "seq", pl.col("bytes").cast(pl.Int64), "file", "line",
        detail.alias("detail"))
    target = df.select(
        pl.col("target").cast(pl.Int32).alias("rank"), pl.col("target_tid").alias("tid"),
        pl.lit("rma").alias("category"), pl.format("{} from rank {}", pl.col("op"), pl.col("rank")).alias("name"),
        pl.col("time_ns").alias("start_ns"), (pl.col("done_ns") - pl.col("time_ns")).clip(lower_bound=0)
        .alias("dur_ns"), "seq", pl.col("bytes").cast(pl.Int64), "file", "line", detail.alias("detail"))
    flows = df.select(
        pl.col("seq").cast(pl.Int64).alias("id"), pl.lit("rma").alias("category"), pl.col("op").alias("name"),
        pl.col("rank").alias("from_rank"), pl.col("thread").cast(pl.Int64).alias("from_tid"),
        pl.col("time_ns").alias("from_ns"), pl.col("target").cast(pl.Int32).alias("to_rank"),
        pl.col("target_tid").alias("to_tid"), pl.col("time_ns").alias("to_ns"))
    return [origin, target], [flows]


def _instants(ev: pl.DataFrame, log: EventLog) -> list[pl.DataFrame]:
    out = []
    sync = family_view(log, "sync", ev)
    if sync.height:
        out.append(sync.select("rank", pl.col("thread").cast(pl.Int64).alias("tid"), pl.lit("sync").alias("category"),
                               pl.col("sync_kind").alias("name"), "time_ns", "seq", "file", "line"))
    msync = family_view(log, "mpi_sync", ev)
    if msync.height:
        name = (pl.when(pl.col("event") == "mpi_request").then(pl.format("request {} done", pl.col("request")))
                .when(pl.col("target") >= 0).then(pl.format("{}({})", pl.col("sync_kind"), pl.col("target")))
                .otherwise(pl.col("sync_kind")))
        out.append(msync.select("rank", pl.col("thread").cast(pl.Int64).alias("tid"), pl.lit("mpi").alias("category"),
                                name.alias("name"), "time_ns", "seq", "file", "line",
                                pl.format("window {}", pl.col("window")).alias("detail")))
    msg = family_view(log, "messages", ev)
    if msg.height:
        name = (pl.when(pl.col("message_kind").is_in(["send", "recv"]))
                .then(pl.format("{} {} rank {}", pl.col("message_kind"),
                                pl.when(pl.col("message_kind") == "send").then(pl.lit("to")).otherwise(pl.lit("from")),
                                pl.col("peer")))
                .otherwise(pl.col("message_kind")))
        out.append(msg.select("rank", pl.col("thread").cast(pl.Int64).alias("tid"), pl.lit("mpi").alias("category"),
                              name.alias("name"), "time_ns", "seq", "file", "line"))
    win = family_view(log, "windows", ev).filter(pl.col("event").is_in(["win_create", "win_free"]))
    if win.height:
        out.append(win.select("rank", pl.col("thread").cast(pl.Int64).alias("tid"), pl.lit("mpi").alias("category"),
                              pl.format("{} {}", pl.col("event"), pl.col("window")).alias("name"), "time_ns", "seq",
                              "file", "line"))
    return [_conform(o.with_columns(pl.lit("t").alias("scope")), INSTANT_SCHEMA) for o in out]


def finding_instants(findings: list, ev: pl.DataFrame, log: EventLog) -> pl.DataFrame:
    """One process-wide instant per finding, at the time the checker gave (``details["time_ns"]``)
    or else at the first event recorded at the finding's source line on its rank."""
    if not findings:
        return pl.DataFrame(schema=INSTANT_SCHEMA)
    rows = [{"rank": f.access.rank, "file": f.access.file, "line": f.access.line, "order": i,
             "name": f"{f.kind.value}: {f.variable}" if f.variable else f.kind.value,
             "given_ns": f.details.get("time_ns") if isinstance(f.details, dict) else None,
             "detail": f.message + (f" | fix: {f.fix}" if f.fix else ""),
             "tid": f.access.thread if f.access.side != "device" else
             DEVICE_TRACK_BASE + max(f.access.device, 0) * 100_000 + f.access.thread}
            for i, f in enumerate(findings)]
    df = pl.DataFrame(rows, schema={"rank": pl.Int32, "file": pl.String, "line": pl.Int32, "order": pl.Int64,
                                    "name": pl.String, "given_ns": pl.Int64, "detail": pl.String, "tid": pl.Int64})
    locs = pl.DataFrame({"loc": list(range(len(log.locations))), "file": [x.file for x in log.locations],
                         "line": [x.line for x in log.locations]},
                        schema={"loc": pl.Int32, "file": pl.String, "line": pl.Int32})
    first = (ev.select("rank", "loc", "time_ns", "seq").join(locs, on="loc", how="inner")
             .group_by("rank", "file", "line").agg(pl.col("time_ns").sort_by("seq").first().alias("seen_ns"),
                                                  pl.col("seq").min().cast(pl.Int64).alias("seq")))
    df = df.join(first, on=["rank", "file", "line"], how="left").sort("order")
    return _conform(df.with_columns(pl.coalesce("given_ns", "seen_ns", pl.lit(0)).alias("time_ns"),
                                    pl.lit("finding").alias("category"), pl.lit("p").alias("scope")),
                    INSTANT_SCHEMA)


def _tracks(slices: pl.DataFrame, instants: pl.DataFrame, flows: pl.DataFrame) -> pl.DataFrame:
    used = pl.concat([slices.select("rank", "tid"), instants.select("rank", "tid"),
                      flows.select(pl.col("from_rank").alias("rank"), pl.col("from_tid").alias("tid")),
                      flows.select(pl.col("to_rank").alias("rank"), pl.col("to_tid").alias("tid"))]).unique()
    tid = pl.col("tid")
    name = (pl.when(tid >= RMA_TRACK_BASE)
            .then(pl.format("window {} <- rank {}", (tid - RMA_TRACK_BASE) // 100_000, (tid - RMA_TRACK_BASE) % 100_000))
            .when(tid >= DEVICE_TRACK_BASE)
            .then(pl.format("device {} (driven by thread {})", (tid - DEVICE_TRACK_BASE) // 100_000,
                            (tid - DEVICE_TRACK_BASE) % 100_000))
            .when(tid == 0).then(pl.lit("thread 0 (initial)"))
            .otherwise(pl.format("thread {}", tid)))
    return _conform(used.with_columns(name.alias("track"), tid.alias("sort")), TRACK_SCHEMA).sort("rank", "sort")


def build_timeline(log: EventLog, *, ranks: list[int] | None = None, from_ns: int | None = None,
                   to_ns: int | None = None, findings: list | None = None,
                   waste: pl.DataFrame | None = None) -> Timeline:
    """The timeline of a log, restricted to some ranks and to slices overlapping [from_ns, to_ns];
    with ``waste`` (``Trace.transfers()``) the transfers that wasted bytes are marked."""
    ev = select_events(log, TIMELINE_KINDS, ranks=ranks)
    last_ns = int(ev["time_ns"].max()) if ev.height else 0
    nxt = _next_on_thread(ev).select("seq", "next_ns")
    cons = family_view(log, "constructs", ev)
    ops = family_view(log, "data_ops", ev)
    kernels = family_view(log, "kernels", ev)
    rma = family_view(log, "rma", ev)
    msync = family_view(log, "mpi_sync", ev)
    ops = ops.join(ev.select("seq", "aux"), on="seq", how="left")
    copies = _data_op_slices(ops, nxt)
    if waste is not None and waste.height:
        copies = mark_wasted(_conform(copies, SLICE_SCHEMA), waste)
    slices = [_construct_slices(cons, last_ns), _kernel_slices(kernels, ops, cons, last_ns), copies]
    rma_slices, flows = _rma(rma, msync, nxt, last_ns)
    slices += rma_slices
    slice_df = pl.concat([_conform(s, SLICE_SCHEMA) for s in slices])
    inst = _instants(ev, log)
    if findings:
        all_ev = select_events(log, None, ranks=ranks, columns=("rank", "loc", "time_ns"))
        inst.append(finding_instants(findings, all_ev, log))
    inst_df = pl.concat(inst) if inst else pl.DataFrame(schema=INSTANT_SCHEMA)
    flow_df = pl.concat([_conform(f, FLOW_SCHEMA) for f in flows]) if flows else pl.DataFrame(schema=FLOW_SCHEMA)
    if ranks is not None:
        keep = [int(r) for r in ranks]
        slice_df = slice_df.filter(pl.col("rank").is_in(keep))
        inst_df = inst_df.filter(pl.col("rank").is_in(keep))
        flow_df = flow_df.filter(pl.col("from_rank").is_in(keep) & pl.col("to_rank").is_in(keep))
    if from_ns is not None:
        slice_df = slice_df.filter(pl.col("start_ns") + pl.col("dur_ns") >= from_ns)
        inst_df = inst_df.filter(pl.col("time_ns") >= from_ns)
        flow_df = flow_df.filter(pl.col("from_ns") >= from_ns)
    if to_ns is not None:
        slice_df = slice_df.filter(pl.col("start_ns") <= to_ns)
        inst_df = inst_df.filter(pl.col("time_ns") <= to_ns)
        flow_df = flow_df.filter(pl.col("to_ns") <= to_ns)
    slice_df = slice_df.sort("start_ns", "rank", "tid", "seq", "dur_ns", descending=[False, False, False, False, True])
    inst_df = inst_df.sort("time_ns", "rank", "tid", "seq", "name", nulls_last=True)
    flow_df = flow_df.sort("from_ns", "id")
    present = sorted(set(slice_df["rank"].to_list()) | set(inst_df["rank"].to_list())
                     | set(range(int(log.run.get("ranks", 1) or 1))) if ranks is None else [int(r) for r in ranks])
    origin = int(ev["time_ns"].min()) if ev.height else 0
    return Timeline(slices=slice_df, instants=inst_df, flows=flow_df, tracks=_tracks(slice_df, inst_df, flow_df),
                    ranks=present, program=str(log.run.get("program", "?")), origin_ns=origin, from_ns=from_ns,
                    to_ns=to_ns)
