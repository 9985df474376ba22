"""Transfers that were never needed: bytes copied to a device and never read there, or copied
back to the host and overwritten there before anyone read them.

The replay keeps, per granule of mapped host memory, the transfer whose bytes are still
unread on each side (one slot per device, one for the host). A read consumes the pending
transfer; a write, another copy, a release of the device copy, or (on a device) the end of
the run wastes it. It never over-reports: a partial read of a granule counts as a read, a
partial write as nothing, and bytes still unread on the host when the run ends are not
counted (libc reads them without instrumentation: printf, fwrite, memcpy).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import polars as pl
from quiver.formats import ConstructKind, DataOpKind, EventKind, EventLog, MapType

from quiver.trace import MAPPING_KINDS, SEQ_DTYPE, empty_events, select_events

from .device_to_host import ACCESS, DATA_OP, LiveMappings, apply_data_op, lookup
from .explain import clause_text, load_mapping_frames, match_data_ops, with_map_type_names
from .findings import Finding, FindingKind, Related, Site, merge_findings
from .registry import CheckOptions

FREE = int(EventKind.FREE)
TO, FROM = int(DataOpKind.TRANSFER_TO), int(DataOpKind.TRANSFER_FROM)
ALLOC_OP, DELETE_OP = int(DataOpKind.ALLOC), int(DataOpKind.DELETE)

# Why bytes were wasted (bits of the per-transfer reason mask).
DEV_RECOPIED, DEV_RELEASED, DEV_OVERWRITTEN, DEV_AT_END = 1, 2, 4, 8
HOST_RECOPIED, HOST_OVERWRITTEN = 16, 32
REASONS = {
    DEV_OVERWRITTEN: "overwritten on the device before any read",
    DEV_RECOPIED: "copied to the device again before any read",
    DEV_RELEASED: "the device copy was released before any read",
    DEV_AT_END: "still unread on the device when the run ended",
    HOST_OVERWRITTEN: "overwritten on the host before any read",
    HOST_RECOPIED: "copied back again before any host read",
}
MAX_GRANULE = 8
READ_COLUMNS = ("kind", "rank", "device", "addr", "addr2", "size", "op")


def _low_bit(x: int) -> int:
    return x & -x if x else 1 << 62


@dataclass
class Survey:
    """What one pass over the log tells before the replay: the control events (mapping kinds,
    allocations, frees) and, per access alignment class, the address span of the accesses."""

    events: pl.DataFrame
    boxes: np.ndarray       # [class (1, 2, 4, 8-byte aligned), side (host, device), (lowest, highest end)]

    def alignment(self, ops: pl.DataFrame) -> int:
        """Largest power of two (at most MAX_GRANULE) dividing the address and size of every access
        whose class span meets the mapped span of its side: host ranges for host accesses,
        device ranges for device ones."""
        if ops.is_empty():
            return MAX_GRANULE
        spans = ops.select(pl.col("host_addr").min().alias("h0"), (pl.col("host_addr") + pl.col("bytes")).max()
                           .alias("h1"), pl.col("device_addr").min().alias("d0"),
                           (pl.col("device_addr") + pl.col("bytes")).max().alias("d1")).row(0)
        sides = ((spans[0], spans[1]), (spans[2], spans[3]))
        for c in range(len(self.boxes)):
            for side, (lo, hi) in enumerate(sides):
                b_lo, b_hi = self.boxes[c, side]
                if b_lo < b_hi and b_lo < hi and lo < b_hi:
                    return 1 << c
        return MAX_GRANULE


SURVEY_KINDS = np.array([int(k) for k in (*MAPPING_KINDS, EventKind.ALLOC, EventKind.FREE)], dtype=np.int16)


def survey(log: EventLog) -> Survey:
    """One streaming pass: keep the control events, and bound the accesses per alignment class."""
    classes = MAX_GRANULE.bit_length()
    boxes = np.zeros((classes, 2, 2), dtype=np.uint64)
    boxes[:, :, 0] = np.iinfo(np.uint64).max
    parts: list[pl.DataFrame] = []
    offset = 0
    for batch in log.batches():
        kind = batch["kind"]
        keep = np.flatnonzero(np.isin(kind, SURVEY_KINDS))
        if len(keep):
            cols = {"seq": pl.Series((keep + offset).astype(np.int64)).cast(SEQ_DTYPE)}
            cols.update({name: col[keep] for name, col in batch.items()})
            parts.append(pl.DataFrame(cols))
        offset += len(kind)
        acc = kind == ACCESS
        if acc.any():
            addr, size, side = batch["addr"][acc], batch["size"][acc], (batch["device"][acc] >= 0).astype(np.int64)
            v = addr | size
            low = v & (~v + np.uint64(1))
            cls = np.minimum(np.log2(np.maximum(low, 1).astype(np.float64)).astype(np.int64), classes - 1)
            ends = addr + np.maximum(size, 1)
            for c in np.unique(cls):
                for s in (0, 1):
                    m = (cls == c) & (side == s)
                    if m.any():
                        boxes[c, s, 0] = min(boxes[c, s, 0], addr[m].min())
                        boxes[c, s, 1] = max(boxes[c, s, 1], ends[m].max())
    events = pl.concat(parts, rechunk=True) if parts else empty_events()
    return Survey(events, boxes)


class Shadow:
    """Pending-transfer slots over the mapped host memory of every rank, in granules: the largest
    power of two (at most 8 bytes) that divides every mapped range and every access to it, so
    granules are exact."""

    def __init__(self, ops: pl.DataFrame, nranks: int, ndev: int, alignment: int) -> None:
        # granule: the largest power of two (<= MAX_GRANULE) dividing every mapped range and access
        ranges = ops.filter(pl.col("op").is_in(["transfer_to", "transfer_from", "alloc", "delete"])).select(
            "rank", pl.col("host_addr").alias("lo"), (pl.col("host_addr") + pl.col("bytes")).alias("hi"))
        ranges = ranges.filter(pl.col("hi") > pl.col("lo"))
        bits = 0
        if ranges.height:
            bits = int(np.bitwise_or.reduce(ranges["lo"].to_numpy() | ranges["hi"].to_numpy()))
        self.granule = min(_low_bit(bits), alignment, MAX_GRANULE)
        merged = (ranges.sort("rank", "lo")
                  .with_columns(pl.col("hi").cum_max().shift(1).over("rank").alias("prev_hi"))
                  .with_columns((pl.col("prev_hi").is_null() | (pl.col("lo") > pl.col("prev_hi")))
                                .cum_sum().over("rank").alias("seg"))
                  .group_by("rank", "seg").agg(pl.col("lo").min(), pl.col("hi").max())
                  .sort("rank", "lo"))
        self.seg_rank = merged["rank"].to_numpy().astype(np.int64)
        self.seg_lo = merged["lo"].to_numpy().astype(np.uint64)
        self.seg_hi = merged["hi"].to_numpy().astype(np.uint64)
        lengths = (self.seg_hi - self.seg_lo + np.uint64(self.granule - 1)) // np.uint64(self.granule)
        self.seg_off = np.concatenate([[0], np.cumsum(lengths.astype(np.int64))]).astype(np.int64)
        self.rank_first = np.searchsorted(self.seg_rank, np.arange(nranks + 1)).astype(np.int64)
        total = int(self.seg_off[-1])
        self.host = np.full(total, -1, dtype=np.int32)
        self.dev = np.full((max(ndev, 1), total), -1, dtype=np.int32)


@numba.njit(cache=True, nogil=True)
def _waste(t, g, addr, wasted, reason, first, why):  # pragma: no cover
    wasted[t] += g
    reason[t] |= why
    if first[t] < 0 or addr < first[t]:
        first[t] = addr


@numba.njit(cache=True, nogil=True)
def _step(code, rank, dev, lo, size, xfer, seg_lo, seg_hi, seg_off, rank_first, g, host, devp,
          wasted, used, reason, first):  # pragma: no cover
    """Apply events (codes below) to the pending-transfer slots.

    0 copy to device, 1 copy to host, 2 device copy allocated, 3 device copy released,
    4 host read, 5 host write, 6 device read, 7 device write, 8 host block freed.
    """
    for i in range(code.shape[0]):
        c = code[i]
        r = rank[i]
        if r < 0 or r + 1 >= rank_first.shape[0]:
            continue
        a = lo[i]
        e = a + size[i]
        s = rank_first[r]
        s_end = rank_first[r + 1]
        # first segment of this rank whose end lies beyond a
        lo_i, hi_i = s, s_end
        while lo_i < hi_i:
            mid = (lo_i + hi_i) // 2
            if seg_hi[mid] <= a:
                lo_i = mid + 1
            else:
                hi_i = mid
        s = lo_i
        d = dev[i]
        t = xfer[i]
        while s < s_end and seg_lo[s] < e:
            base = np.int64(seg_lo[s])
            x0 = np.int64(max(a, seg_lo[s])) - base
            x1 = np.int64(min(e, seg_hi[s])) - base
            if c == 5 or c == 7:   # a write wastes only the granules it covers whole
                k0 = seg_off[s] + (x0 + g - 1) // g
                k1 = seg_off[s] + x1 // g
            else:                  # anything else touches every granule it overlaps
                k0 = seg_off[s] + x0 // g
                k1 = seg_off[s] + (x1 + g - 1) // g
            for k in range(k0, k1):
                haddr = base + (k - seg_off[s]) * g
                if c == 0:
                    p = devp[d, k]
                    if p >= 0:
                        _waste(p, g, haddr, wasted, reason, first, 1)
                    devp[d, k] = t
                    q = host[k]
                    if q >= 0:
                        used[q] += g
                        host[k] = -1
                elif c == 1:
                    p = devp[d, k]
                    if p >= 0:
                        used[p] += g
                        devp[d, k] = -1
                    q = host[k]
                    if q >= 0:
                        _waste(q, g, haddr, wasted, reason, first, 16)
                    host[k] = t
                elif c == 2:
                    devp[d, k] = -1
                elif c == 3:
                    p = devp[d, k]
                    if p >= 0:
                        _waste(p, g, haddr, wasted, reason, first, 2)
                        devp[d, k] = -1
                elif c == 4:
                    q = host[k]
                    if q >= 0:
                        used[q] += g
                        host[k] = -1
                elif c == 5:
                    q = host[k]
                    if q >= 0:
                        _waste(q, g, haddr, wasted, reason, first, 32)
                        host[k] = -1
                elif c == 6:
                    p = devp[d, k]
                    if p >= 0:
                        used[p] += g
                        devp[d, k] = -1
                elif c == 7:
                    p = devp[d, k]
                    if p >= 0:
                        _waste(p, g, haddr, wasted, reason, first, 4)
                        devp[d, k] = -1
                else:
                    host[k] = -1
            s += 1


@numba.njit(cache=True, nogil=True)
def _encode(kind, rank, device, addr, addr2, size, op, free_size, dev_index,
            l_rank, l_dev, l_d0, l_d1, l_h0, l_n):  # pragma: no cover
    """Turn one batch of raw events into (code, device index, host address, size, transfer) rows,
    translating kernel accesses to host addresses through the live mapping table."""
    n = kind.shape[0]
    code = np.full(n, -1, dtype=np.int8)
    dev = np.zeros(n, dtype=np.int64)
    lo = np.zeros(n, dtype=np.uint64)
    sz = np.zeros(n, dtype=np.uint64)
    for i in range(n):
        k = kind[i]
        if k == DATA_OP:
            o = op[i]
            apply_data_op(o, rank[i], device[i], addr[i], addr2[i], size[i], l_rank, l_dev, l_d0, l_d1, l_h0, l_n)
            if o == TO or o == FROM or o == ALLOC_OP or o == DELETE_OP:
                code[i] = 0 if o == TO else (1 if o == FROM else (2 if o == ALLOC_OP else 3))
                dev[i] = dev_index[device[i]] if 0 <= device[i] < dev_index.shape[0] else 0
                lo[i] = addr[i]
                sz[i] = size[i]
        elif k == ACCESS:
            write = (op[i] & 1) == 1 and (op[i] & 2) == 0  # an atomic update reads too
            if device[i] < 0:
                code[i] = 5 if write else 4
                lo[i] = addr[i]
                sz[i] = size[i]
            else:
                j = lookup(rank[i], device[i], addr[i], l_rank, l_dev, l_d0, l_d1, l_h0, l_n)
                if j >= 0:
                    code[i] = 7 if write else 6
                    dev[i] = dev_index[device[i]] if device[i] < dev_index.shape[0] else 0
                    lo[i] = l_h0[j] + (addr[i] - l_d0[j])
                    end = l_d1[j] - addr[i]
                    sz[i] = min(end, size[i])
        elif k == FREE and free_size[i] > 0:
            code[i] = 8
            lo[i] = addr[i]
            sz[i] = free_size[i]
    return code, dev, lo, sz


def free_sizes(log: EventLog, events: pl.DataFrame | None = None) -> pl.DataFrame:
    """(seq, bytes) of every FREE whose block was allocated in the log (``events``: raw events
    with ``seq`` including the ALLOC and FREE rows, read from the log when None)."""
    ev = events if events is not None else select_events(log, [EventKind.ALLOC, EventKind.FREE],
                                                         columns=("kind", "rank", "addr", "size"))
    allocs = ev.filter(pl.col("kind") == int(EventKind.ALLOC)).select("rank", "addr", "seq", "size").sort("seq")
    frees = ev.filter(pl.col("kind") == FREE).select("rank", "addr", "seq").sort("seq")
    if frees.is_empty() or allocs.is_empty():
        return pl.DataFrame({"seq": pl.Series([], dtype=frees["seq"].dtype), "size": pl.Series([], dtype=pl.UInt64)})
    return frees.join_asof(allocs, on="seq", by=["rank", "addr"], strategy="backward",
                           check_sortedness=False).drop_nulls("size").select("seq", "size")


def transfer_waste(log: EventLog, first: Survey | None = None) -> pl.DataFrame:
    """Every transfer with the bytes of it that were read on the other side and the bytes wasted."""
    first = first if first is not None else survey(log)
    _cons, _maps, ops = load_mapping_frames(log, first.events)
    xfers = ops.filter(pl.col("op").is_in(["transfer_to", "transfer_from"])).sort("seq")
    if xfers.is_empty():
        return xfers.with_columns(pl.lit(0, pl.Int64).alias("used_bytes"), pl.lit(0, pl.Int64).alias("wasted_bytes"),
                                  pl.lit(0, pl.Int32).alias("reason"), pl.lit(-1, pl.Int64).alias("first_wasted"))
    devices = sorted(set(ops["device"].to_list()) | {0})
    dev_index = np.zeros(max(max(devices), 0) + 1, dtype=np.int64)
    for i, d in enumerate(d for d in devices if d >= 0):
        dev_index[d] = i
    nranks = int(max(ops["rank"].max() or 0, 0)) + 1
    shadow = Shadow(ops, nranks, len(devices), first.alignment(ops))
    live = LiveMappings(ops.filter(pl.col("op").is_in(["alloc", "associate"])).height)
    xfer_seq = xfers["seq"].to_numpy().astype(np.int64)
    frees = free_sizes(log, first.events)
    free_seq = frees["seq"].to_numpy().astype(np.int64)
    free_bytes = frees["size"].to_numpy().astype(np.uint64)
    n = len(xfer_seq)
    wasted = np.zeros(n, dtype=np.int64)
    used = np.zeros(n, dtype=np.int64)
    reason = np.zeros(n, dtype=np.int32)
    first_addr = np.full(n, -1, dtype=np.int64)
    offset = 0
    kinds = np.array([int(EventKind.DATA_OP), ACCESS, FREE], dtype=np.int16)
    for batch in log.batches():
        rows = np.flatnonzero(np.isin(batch["kind"], kinds))
        seqs = rows.astype(np.int64) + offset
        offset += len(batch["kind"])
        if not len(rows):
            continue
        cols = {k: np.ascontiguousarray(batch[k][rows]) for k in READ_COLUMNS}
        pos = np.searchsorted(xfer_seq, seqs)
        hit = (pos < n) & (xfer_seq[np.minimum(pos, n - 1)] == seqs)
        xfer = np.where(hit, pos, -1).astype(np.int64)
        fpos = np.searchsorted(free_seq, seqs)
        fhit = (fpos < len(free_seq)) & (free_seq[np.minimum(fpos, max(len(free_seq) - 1, 0))] == seqs) \
            if len(free_seq) else np.zeros(len(seqs), dtype=bool)
        fsize = np.where(fhit, free_bytes[np.minimum(fpos, max(len(free_seq) - 1, 0))] if len(free_seq) else 0,
                         0).astype(np.uint64)
        code, dev, lo, sz = _encode(cols["kind"], cols["rank"], cols["device"], cols["addr"], cols["addr2"],
                                    cols["size"], cols["op"], fsize, dev_index, *live.arrays())
        keep = code >= 0
        _step(code[keep], cols["rank"][keep].astype(np.int64), dev[keep], lo[keep], sz[keep], xfer[keep],
              shadow.seg_lo, shadow.seg_hi, shadow.seg_off, shadow.rank_first, np.int64(shadow.granule),
              shadow.host, shadow.dev, wasted, used, reason, first_addr)
    if not log.truncated:
        _unread_at_end(shadow, wasted, reason, first_addr)
    return xfers.with_columns(
        pl.Series("used_bytes", np.minimum(used, xfers["bytes"].to_numpy().astype(np.int64))),
        pl.Series("wasted_bytes", np.minimum(wasted, xfers["bytes"].to_numpy().astype(np.int64))),
        pl.Series("reason", reason), pl.Series("first_wasted", first_addr))


def _unread_at_end(shadow: Shadow, wasted: np.ndarray, reason: np.ndarray, first: np.ndarray) -> None:
    """Bytes still pending on a device when the run ended were never read there."""
    pending = shadow.dev[shadow.dev >= 0]
    if not len(pending):
        return
    counts = np.bincount(pending, minlength=len(wasted))
    wasted += counts * shadow.granule
    reason[counts > 0] |= DEV_AT_END
    # first unread byte: the lowest granule still pending, per transfer
    _d, ks = np.nonzero(shadow.dev >= 0)
    seg = np.searchsorted(shadow.seg_off, ks, side="right") - 1
    addrs = shadow.seg_lo[seg].astype(np.int64) + (ks - shadow.seg_off[seg]) * shadow.granule
    owners = shadow.dev[_d, ks]
    for_min = np.full(len(wasted), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(for_min, owners, addrs)
    take = (counts > 0) & ((first < 0) | (for_min < first))
    first[take] = for_min[take]


def _fix(direction: str, kind_code: int, map_type: int | None, map_name: str, clause: str, full: bool,
         where: str, used: int, moved: int) -> str:
    """The change that stops the wasted transfer."""
    if not full:
        side = "the device" if direction == "to" else "the host"
        return (f"only {used} of {moved} bytes copied were read on {side}: narrow the section "
                f"`{clause}` at {where} to the part that is used")
    if kind_code == ConstructKind.TARGET_UPDATE:
        return f"remove `target update {direction}({clause})` at {where}: nothing reads these bytes"
    bits = int(map_type or 0)
    implicit = bool(bits & MapType.IMPLICIT)
    keep_to, keep_from = bool(bits & MapType.TO), bool(bits & MapType.FROM)
    if direction == "to":
        keep_to = False
    else:
        keep_from = False
    if kind_code in (ConstructKind.TARGET_EXIT_DATA, ConstructKind.TARGET_DATA_END) and not keep_from:
        new = "release"
    else:
        new = "tofrom" if keep_to and keep_from else "to" if keep_to else "from" if keep_from else "alloc"
    if implicit:
        return f"add `map({new}: {clause})` to the construct at {where} (the implicit map is `{map_name}`)"
    return f"change `map({map_name}: {clause})` to `map({new}: {clause})` at {where}"


def check_redundant_transfers(log: EventLog, options: CheckOptions) -> list[Finding]:
    """Findings of kind ``redundant-transfer``: one per (construct site, variable, direction, clause)."""
    return redundant_findings(log, options)


def redundant_findings(log: EventLog, options: CheckOptions, first: Survey | None = None) -> list[Finding]:
    """``check_redundant_transfers`` reusing a ``survey`` the caller already made."""
    if not log.run.get("has_accesses", True):
        return []
    first = first if first is not None else survey(log)
    waste = transfer_waste(log, first)
    if waste.is_empty():
        return []
    min_fraction = float(options.extra.get("redundant_min_fraction", 0.5))
    cons, maps, _ops = load_mapping_frames(log, first.events)
    matched = match_data_ops(maps, waste.drop("clause_index", strict=False))
    begins = cons.filter(pl.col("event") == "construct_begin").select(
        "rank", "construct", "construct_kind", "construct_kind_code", pl.col("file").alias("c_file"),
        pl.col("line").alias("c_line"), pl.col("function").alias("c_function"), pl.col("thread").alias("c_thread"))
    clauses = maps.select("rank", "construct", "clause_index", pl.col("variable").alias("m_variable"), "clause",
                          "map_type", pl.col("file").alias("m_file"), pl.col("line").alias("m_line"))
    df = (matched.join(begins, on=["rank", "construct"], how="left")
          .join(clauses, on=["rank", "construct", "clause_index"], how="left")
          .with_columns(pl.coalesce("m_variable", "variable").alias("var"),
                        pl.when(pl.col("op") == "transfer_to").then(pl.lit("to")).otherwise(pl.lit("from"))
                        .alias("direction"),
                        pl.col("construct_kind_code").fill_null(0)))
    df = with_map_type_names(df)
    keys = ["rank", "c_file", "c_line", "c_function", "construct_kind", "construct_kind_code", "device", "var",
            "direction", "clause", "map_type", "map_type_name", "m_file", "m_line"]
    groups = (df.group_by(keys).agg(
        pl.col("bytes").sum().alias("moved"), pl.col("wasted_bytes").sum().alias("wasted"),
        pl.col("used_bytes").sum().alias("used"), pl.len().alias("transfers"),
        (pl.col("wasted_bytes") > 0).sum().alias("wasteful"),
        pl.col("reason").fill_null(0).bitwise_or().alias("reason"),
        pl.col("seq").min().alias("first_seq"), pl.col("time_ns").min().alias("first_ns"),
        pl.col("first_wasted").filter(pl.col("first_wasted") >= 0).min().alias("first_wasted"),
        pl.col("c_thread").first().alias("thread"))
        .filter((pl.col("wasted") > 0) & (pl.col("wasted") >= pl.col("moved") * min_fraction))
        .sort("rank", "c_file", "c_line", "var", "direction"))
    findings = [_finding(row) for row in groups.iter_rows(named=True)]
    return merge_findings(findings)


def _finding(row: dict) -> Finding:
    direction = row["direction"]
    where_file = row["c_file"] or "??"
    line = int(row["c_line"] or 0)
    where = f"{where_file}:{line}" if line else where_file
    var = row["var"] or "?"
    clause = row["clause"] or var
    device = int(row["device"])
    full = row["wasted"] >= row["moved"]
    reasons = [text for bit, text in REASONS.items() if int(row["reason"] or 0) & bit]
    verb = f"copied to device {device}" if direction == "to" else f"copied back to the host from device {device}"
    moved = int(row["moved"])
    message = (f"{int(row['wasted'])} of {moved} bytes of '{var}' {verb} were never read there"
               f" ({'; '.join(reasons)})")
    kind_code = int(row["construct_kind_code"] or 0)
    map_name = row["map_type_name"] or ""
    related = []
    if row["m_file"] is not None:
        implicit = bool((row["map_type"] or 0) & MapType.IMPLICIT)
        related.append(Related("map-clause", Site(file=row["m_file"], line=int(row["m_line"] or 0),
                                                  rank=int(row["rank"])),
                               clause_text(map_name, clause, kind_code, implicit)))
    return Finding(
        kind=FindingKind.REDUNDANT_TRANSFER,
        message=message,
        access=Site(file=where_file, line=line, function=row["c_function"] or "",
                    side="device" if direction == "to" else "host", device=device, rank=int(row["rank"]),
                    thread=int(row["thread"] or 0)),
        variable=var,
        related=related,
        fix=_fix(direction, kind_code, row["map_type"], map_name, clause, full, where, int(row["used"]), moved),
        bytes=int(row["wasted"]),
        occurrences=int(row["wasteful"]),
        details={"direction": direction, "construct": row["construct_kind"] or "", "transferred_bytes": moved,
                 "transfers": int(row["transfers"]), "read_bytes": int(row["used"]),
                 "first_wasted_addr": int(row["first_wasted"]) if row["first_wasted"] is not None else None,
                 "seq": int(row["first_seq"]), "time_ns": int(row["first_ns"])},
    )
