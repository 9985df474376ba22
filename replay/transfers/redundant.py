"""Transfers that were never needed: bytes copied to a device and never read there, or copied
back to the host and overwritten there before anyone read them.

The replay keeps, per granule of mapped host memory, the transfer whose bytes are still
unread on each side (one slot per device, one for the host; ``pending_runs`` keeps them as
uniform ranges, so an event costs about the same whatever its byte count). It streams the log
twice, reading only the columns it needs: a survey (control events, access alignment) and the
replay; a strided ACCESS row counts as its blocks, taken a run at a time (a row of planes plane by
plane, each plane's blocks translated on their own; ``_strided_op``); a masked row (format version 6)
as its present slots, one by one (at most 64; absent slots are not accessed). A read consumes the pending
transfer; a write, another copy, a release of the device copy, or (on a device) the end of
the run wastes it. It never over-reports: a partial read of a granule counts as a read, a
partial write as nothing, and bytes still unread on the host when the run ends are not
counted (libc reads them without instrumentation: printf, fwrite, memcpy).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from quiver.formats import AccessFlag, DataOpKind, EventKind, EventLog
from quiver.formats.blocks import row_blocks
from quiver.formats.jit import kernel, sized_for_work
from quiver.formats.schema import COLUMN_NAMES
from quiver.formats.select import MAPPING_KINDS, SEQ_DTYPE, empty_events, select_events
from quiver.replay.transfers.constructs import (
    load_mapping_frames,
)
from quiver.replay.transfers.device_to_host import ACCESS, DATA_OP, LiveMappings, apply_data_op, lookup
from quiver.replay.transfers.pending_runs import ACT_NONE, ACT_USED, ACT_WASTED, Ops, RunMaps
from quiver.replay.transfers.versions import Versions, apply_versioned

FREE = int(EventKind.FREE)
MASKED = int(AccessFlag.MASKED)   # ACCESS op bit of a masked run: its slots one by one, absent ones skipped
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
# name, id2: the planes of strided ACCESS rows (format version 5)
READ_COLUMNS = ["kind", "rank", "device", "addr", "addr2", "size", "op", "aux2", "name", "id2"]


def _low_bit(x: int) -> int:
    return x & -x if x else 1 << 62


@dataclass
class Survey:
    """What one pass over the log tells before the replay: the control events (mapping kinds,
    allocations, frees) and, per access alignment class, the address span of the accesses."""

    events: pl.DataFrame
    boxes: np.ndarray       # [class (1, 2, 4, 8-byte aligned), side (host, device), (lowest, highest end)]
    work: int = 0           # rows, an ACCESS row counted as the blocks it stands for: what the replay loops over

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
SCAN_COLUMNS = ["kind", "device", "addr", "addr2", "size", "aux2", "name", "id2"]


def survey(log: EventLog) -> Survey:
    """One streaming pass: keep the control events (whole rows, read only from the batches that
    hold some), and bound the accesses per alignment class (their address columns only)."""
    classes = MAX_GRANULE.bit_length()
    boxes = np.zeros((classes, 2, 2), dtype=np.uint64)
    boxes[:, :, 0] = np.iinfo(np.uint64).max
    parts: list[pl.DataFrame] = []
    offset = 0
    work = 0
    rest = [c for c in COLUMN_NAMES if c not in SCAN_COLUMNS]
    for i, batch in enumerate(log.batches(SCAN_COLUMNS)):
        kind = batch["kind"]
        keep = np.flatnonzero(np.isin(kind, SURVEY_KINDS))
        if len(keep):
            rows = {**batch, **log.batch(i, rest)}
            cols = {"seq": pl.Series((keep + offset).astype(np.int64)).cast(SEQ_DTYPE)}
            cols.update({name: rows[name][keep] for name in COLUMN_NAMES})
            parts.append(pl.DataFrame(cols))
        offset += len(kind)
        acc = kind == ACCESS
        work += len(kind) - int(np.count_nonzero(acc)) + int(row_blocks(batch["aux2"][acc], batch["name"][acc]).sum())
        _bound_accesses(boxes, kind, batch["device"], batch["addr"], batch["addr2"], batch["size"], batch["aux2"],
                        batch["name"], batch["id2"])
    events = pl.concat(parts, rechunk=True) if parts else empty_events()
    return Survey(events, boxes, work)


@kernel(nogil=True)
def _bound_accesses(boxes, kind, device, addr, addr2, size, aux2, name, id2):  # pragma: no cover
    """Widen ``boxes`` (per alignment class and side) by the accesses of one batch; a strided row's
    class also divides its stride (and its plane stride), and its span ends with its last plane's last block."""
    top = boxes.shape[0] - 1
    one = np.uint64(1)
    for i in range(kind.shape[0]):
        if kind[i] != ACCESS:
            continue
        blocks = max(1, aux2[i])
        stride = addr2[i] if blocks > 1 else np.uint64(0)
        planes = name[i] if blocks > 1 and name[i] > 1 else 1
        pstride = np.uint64(id2[i]) if planes > 1 else np.uint64(0)
        v = addr[i] | size[i] | stride | pstride
        c = 0
        while v != 0 and c < top and (v >> np.uint64(c)) & one == 0:
            c += 1
        s = 1 if device[i] >= 0 else 0
        end = addr[i] + np.uint64(planes - 1) * pstride + np.uint64(blocks - 1) * stride + max(size[i], one)
        boxes[c, s, 0] = min(boxes[c, s, 0], addr[i])
        boxes[c, s, 1] = max(boxes[c, s, 1], end)


class Shadow:
    """Where pending transfers are kept: the mapped host memory of every rank as merged segments,
    numbered in granules (the largest power of two, at most 8 bytes, that divides every mapped range
    and every access to it, so granules are exact), and one run-length map per device plus one for
    the host over those granule numbers."""

    def __init__(self, ops: pl.DataFrame, nranks: int, ndev: int, alignment: int) -> None:
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
        self.devices = max(ndev, 1)
        self.maps = RunMaps(self.devices + 1, int(self.seg_off[-1]))   # slot ``devices`` is the host

    def segments(self) -> tuple:
        return self.seg_lo, self.seg_hi, self.seg_off, self.rank_first, np.int64(self.granule)


# What each event code does to the device slot and to the host slot: what happens to the bytes
# pending there (-1: the slot is left alone), whether the slot then holds the event's transfer, why
# bytes are wasted. Codes: 0 copy to device, 1 copy to host, 2 device copy allocated, 3 device copy
# released, 4 host read, 5 host write, 6 device read, 7 device write, 8 host block freed.
_N, _U, _W = ACT_NONE, ACT_USED, ACT_WASTED
DEV_ACT = np.array([_W, _U, _N, _W, -1, -1, _U, _W, -1], dtype=np.int64)
DEV_SET = np.array([1, 0, 0, 0, 0, 0, 0, 0, 0], dtype=np.int64)
DEV_WHY = np.array([DEV_RECOPIED, 0, 0, DEV_RELEASED, 0, 0, 0, DEV_OVERWRITTEN, 0], dtype=np.int64)
HOST_ACT = np.array([_U, _W, -1, -1, _U, _W, -1, -1, _N], dtype=np.int64)
HOST_SET = np.array([0, 1, 0, 0, 0, 0, 0, 0, 0], dtype=np.int64)
HOST_WHY = np.array([0, HOST_RECOPIED, 0, 0, 0, HOST_OVERWRITTEN, 0, 0, 0], dtype=np.int64)


@kernel(nogil=True)
def _segment_beyond(seg_hi, lo, hi, x):  # pragma: no cover
    """The first of a rank's segments lo..hi-1 (by address) whose end lies beyond x (hi: none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if seg_hi[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(nogil=True)
def _decode(row, block, kind, rank, device, addr, addr2, size, op, aux2, name, id2, offset, xfer_seq, cursor, free_seq,
            free_bytes, dev_index, host, l_rank, l_dev, l_d0, l_d1, l_h0, l_n, seg_lo, seg_hi, seg_off, rank_first, g,
            ops, room):  # pragma: no cover
    """The slot operations (pending_runs.OP_FIELDS) of one record batch (rows ``offset`` ...) from
    row ``row``, block ``block`` on, until ``ops`` has less than ``room`` free columns: data ops,
    accesses (every block of a strided run, plane by plane, runs of them as one strided op; kernel accesses
    translated to the host bytes their device copy stands for, through the live mappings) and frees of
    blocks allocated in the log.
    ``cursor`` carries the next transfer / free across batches. Returns (ops, next row, next block).

    A write wastes only the granules it covers whole; anything else touches every granule it overlaps.
    """
    nd = dev_index.shape[0]
    cap = ops.shape[1]
    nops = 0
    while row < kind.shape[0]:
        if cap - nops < room:
            return nops, row, block
        i = row
        k = kind[i]
        code, d, t, n, blocks, per_plane, masked = -1, 0, -1, size[i], 1, 1, False
        if k == DATA_OP:
            o = op[i]
            apply_data_op(o, rank[i], device[i], addr[i], addr2[i], size[i], l_rank, l_dev, l_d0, l_d1, l_h0, l_n)
            if o == TO or o == FROM or o == ALLOC_OP or o == DELETE_OP:
                seq = offset + i
                while cursor[0] < xfer_seq.shape[0] and xfer_seq[cursor[0]] < seq:
                    cursor[0] += 1
                if cursor[0] < xfer_seq.shape[0] and xfer_seq[cursor[0]] == seq:
                    t = cursor[0]
                code = 0 if o == TO else (1 if o == FROM else (2 if o == ALLOC_OP else 3))
                d = dev_index[device[i]] if 0 <= device[i] < nd else 0
        elif k == ACCESS:
            write = (op[i] & 1) == 1 and (op[i] & 2) == 0  # an atomic update reads too
            if device[i] < 0:
                code = 5 if write else 4
            else:
                code = 7 if write else 6
                d = dev_index[device[i]] if device[i] < nd else 0
            per_plane = max(1, aux2[i])
            masked = (op[i] & MASKED) != 0 and per_plane > 1   # a masked run (format version 6): present slots only
            blocks = per_plane * (name[i] if per_plane > 1 and name[i] > 1 and not masked else 1)   # planes x blocks
        elif k == FREE:
            seq = offset + i
            while cursor[1] < free_seq.shape[0] and free_seq[cursor[1]] < seq:
                cursor[1] += 1
            if cursor[1] < free_seq.shape[0] and free_seq[cursor[1]] == seq and free_bytes[cursor[1]] > 0:
                code, n = 8, free_bytes[cursor[1]]
        r = rank[i]
        if code < 0 or r < 0 or r + 1 >= rank_first.shape[0]:
            blocks = 0
        while block < blocks:
            if cap - nops < room:       # never at block 0: the row's data op is applied once
                return nops, row, block
            if masked and (id2[i] >> np.int64(block)) & 1 == 0:   # an absent slot: not accessed
                block += 1
                continue
            if per_plane > 1 and code >= 4 and not masked:   # the blocks of a strided access, as far as one op holds them
                c = _strided_op(i, block, per_plane, code, d, host, r, device[i], addr[i], addr2[i], n, id2[i], offset,
                                l_rank, l_dev, l_d0, l_d1, l_h0, l_n, seg_lo, seg_hi, seg_off, rank_first, g, ops,
                                nops)
                if c > 1:
                    block += c
                    nops += 1
                    continue
            a = addr[i] + np.uint64(block % per_plane) * addr2[i] if block else addr[i]
            if block >= per_plane:      # a later plane of a row of planes (id2 > 0)
                a += np.uint64(block // per_plane) * np.uint64(id2[i])
            block += 1
            m = n
            if code == 6 or code == 7:
                j = lookup(r, device[i], a, l_rank, l_dev, l_d0, l_d1, l_h0, l_n)
                if j < 0:
                    continue
                m = min(l_d1[j] - a, n)
                a = l_h0[j] + (a - l_d0[j])
            e = a + m
            s_end = rank_first[r + 1]
            s = _segment_beyond(seg_hi, rank_first[r], s_end, a)
            while s < s_end and seg_lo[s] < e:
                base = seg_lo[s]
                x0 = np.int64(max(a, base) - base)
                x1 = np.int64(min(e, seg_hi[s]) - base)
                if code == 5 or code == 7:
                    k0 = seg_off[s] + (x0 + g - 1) // g
                    k1 = seg_off[s] + x1 // g
                else:
                    k0 = seg_off[s] + x0 // g
                    k1 = seg_off[s] + (x1 + g - 1) // g
                for side in range(2):
                    act = DEV_ACT[code] if side == 0 else HOST_ACT[code]
                    if act < 0 or k1 <= k0:
                        continue
                    ops[0, nops] = d if side == 0 else host
                    ops[1, nops] = k0
                    ops[2, nops] = k1
                    ops[3, nops] = t if (DEV_SET[code] if side == 0 else HOST_SET[code]) else -1
                    ops[4, nops] = act
                    ops[5, nops] = DEV_WHY[code] if side == 0 else HOST_WHY[code]
                    ops[6, nops] = seg_off[s]
                    ops[7, nops] = np.int64(base)
                    ops[8, nops] = code
                    ops[9, nops] = offset + i
                    ops[10, nops] = 0
                    ops[11, nops] = 1
                    nops += 1
                s += 1
        row += 1
        block = 0
    return nops, row, block


@kernel(nogil=True)
def _strided_op(i, block, per_plane, code, d, host, r, dev, addr, stride, n, pstride, offset, l_rank, l_dev, l_d0, l_d1,
                l_h0, l_n, seg_lo, seg_hi, seg_off, rank_first, g, ops, nops):  # pragma: no cover
    """Write at column ``nops`` of ``ops`` one strided op for the blocks of access row ``i`` from block
    ``block`` on that give the same ops one by one (``_decode``'s per-block path): whole blocks of one
    plane, through one live mapping (device accesses), inside one segment, granule-exact. Returns how
    many blocks it covers; less than 2: nothing written, the caller takes the block alone.

    Why: a red-black sweep is millions of 8-byte blocks; one op each costs more than the replay's
    work on them. The blocks of an access row are all at the row's time with the row's kind, so
    taking them together changes nothing (versions.py, pending_runs.apply_ops)."""
    b = block % per_plane
    left = np.int64(per_plane - b)
    a = addr + np.uint64(b) * stride
    if block >= per_plane:
        a += np.uint64(block // per_plane) * np.uint64(pstride)
    if n == 0 or stride == 0 or n % np.uint64(g) != 0 or stride % np.uint64(g) != 0:
        return 0
    h = a
    if code == 6 or code == 7:
        j = lookup(r, dev, a, l_rank, l_dev, l_d0, l_d1, l_h0, l_n)
        if j < 0 or a + n > l_d1[j]:
            return 0
        left = min(left, np.int64((l_d1[j] - a - n) // stride) + 1)
        last = a + np.uint64(left - 1) * stride
        for j2 in range(j + 1, l_n[0]):        # a newer mapping over a later block would take it (lookup)
            if l_rank[j2] == r and l_dev[j2] == dev and l_d0[j2] <= last and a < l_d1[j2]:
                return 0
        h = l_h0[j] + (a - l_d0[j])
    s = _segment_beyond(seg_hi, rank_first[r], rank_first[r + 1], h)
    if s >= rank_first[r + 1] or seg_lo[s] > h or h + n > seg_hi[s] or (h - seg_lo[s]) % np.uint64(g) != 0:
        return 0
    left = min(left, np.int64((seg_hi[s] - h - n) // stride) + 1)
    if left < 2:
        return 0
    k0 = seg_off[s] + np.int64(h - seg_lo[s]) // g
    host_side = code == 4 or code == 5
    ops[0, nops] = host if host_side else d
    ops[1, nops] = k0
    ops[2, nops] = k0 + np.int64(n) // g
    ops[3, nops] = -1
    ops[4, nops] = HOST_ACT[code] if host_side else DEV_ACT[code]
    ops[5, nops] = HOST_WHY[code] if host_side else DEV_WHY[code]
    ops[6, nops] = seg_off[s]
    ops[7, nops] = np.int64(seg_lo[s])
    ops[8, nops] = code
    ops[9, nops] = offset + i
    ops[10, nops] = np.int64(stride) // g
    ops[11, nops] = left
    return left


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


@dataclass
class TransferReplay:
    """What the replay found: every transfer (``transfers``: the data-op rows with ``used_bytes``
    read on the other side, ``unused_bytes`` never read there, ``duplicate_bytes`` the destination
    already held or had held (``held_bytes`` of them still there: a no-op copy), ``round_trip_bytes`` copied back unchanged, ``wasted_bytes`` their
    sum, ``reason`` bits, ``first_wasted`` address) and every device allocation (``allocations``:
    the alloc data-op rows with ``touched``, whether a kernel accessed it)."""

    transfers: pl.DataFrame
    allocations: pl.DataFrame


WASTE_COLUMNS = {"used_bytes": pl.Int64, "unused_bytes": pl.Int64, "duplicate_bytes": pl.Int64,
                 "round_trip_bytes": pl.Int64, "wasted_bytes": pl.Int64, "held_bytes": pl.Int64, "reason": pl.Int32, "first_wasted": pl.Int64}


def replay_transfers(log: EventLog, first: Survey | None = None) -> TransferReplay:
    """Stream the log once through the version pass and the pending-transfer maps."""
    first = first if first is not None else survey(log)
    _cons, _maps, ops = load_mapping_frames(log, first.events)
    ops = ops.join(first.events.select("seq", pl.col("aux").cast(pl.Int64).clip(lower_bound=0).alias("duration_ns")),
                   on="seq", how="left")
    xfers = ops.filter(pl.col("op").is_in(["transfer_to", "transfer_from"])).sort("seq")
    allocs = _with_release(ops)
    if xfers.is_empty() and allocs.is_empty():
        return TransferReplay(xfers.with_columns([pl.lit(0, t).alias(c) for c, t in WASTE_COLUMNS.items()]),
                              allocs.with_columns(pl.lit(False).alias("touched")))
    devices = sorted(set(ops["device"].to_list()) | {0})
    dev_index = np.zeros(max(max(devices), 0) + 1, dtype=np.int64)
    for i, d in enumerate(d for d in devices if d >= 0):
        dev_index[d] = i
    nranks = int(max(ops["rank"].max() or 0, 0)) + 1
    shadow = Shadow(ops, nranks, len(devices), first.alignment(ops))
    maps = shadow.maps
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
    versions = Versions(shadow.devices, int(shadow.seg_off[-1]), n, allocs["seq"].to_numpy().astype(np.int64))
    cursor = np.zeros(2, dtype=np.int64)
    per_rank = np.diff(shadow.rank_first)
    room = 2 * max(int(per_rank.max()) if len(per_rank) else 1, 1)     # columns one block may need
    ops = Ops(max(1 << 16, 4 * room))
    out = Ops(ops.capacity)
    offset = 0
    # its loops run per block of strided rows: compiled when those are many, whatever the rows
    with sized_for_work(first.work):
        for batch in log.batches(READ_COLUMNS):
            row, block = 0, 0
            while row < len(batch["kind"]):
                nops, row, block = _decode(
                    row, block, batch["kind"], batch["rank"], batch["device"], batch["addr"], batch["addr2"],
                    batch["size"], batch["op"], batch["aux2"], batch["name"], batch["id2"], np.int64(offset), xfer_seq, cursor, free_seq, free_bytes,
                    dev_index, np.int64(shadow.devices), *live.arrays(), *shadow.segments(), ops.rows, np.int64(room))
                apply_versioned(ops.rows, nops, out.rows, np.int64(shadow.devices), np.int64(shadow.granule),
                                *versions.arrays(), *maps.arrays(), wasted, used, reason, first_addr)
            offset += len(batch["kind"])
        if not log.truncated:
            _unread_at_end(shadow, wasted, reason, first_addr)
    moved = xfers["bytes"].to_numpy().astype(np.int64)
    is_to = (xfers["op"] == "transfer_to").to_numpy()
    unused = np.minimum(wasted, moved)
    duplicate = np.where(is_to, versions.noop_to + np.maximum(versions.resent - unused, 0), versions.noop_from)
    duplicate = np.minimum(duplicate, moved - unused)
    round_trip = np.minimum(np.where(is_to, 0, versions.round_trip), moved - unused - duplicate)
    xfers = xfers.with_columns(
        pl.Series("used_bytes", np.minimum(used, moved)), pl.Series("unused_bytes", unused),
        pl.Series("duplicate_bytes", duplicate), pl.Series("round_trip_bytes", round_trip),
        pl.Series("wasted_bytes", unused + duplicate + round_trip),
        pl.Series("held_bytes", np.minimum(np.where(is_to, versions.noop_to, versions.noop_from), duplicate)),
        pl.Series("reason", reason), pl.Series("first_wasted", first_addr))
    return TransferReplay(xfers, allocs.with_columns(pl.Series("touched", versions.touched.astype(bool))))


def _with_release(ops: pl.DataFrame) -> pl.DataFrame:
    """The alloc data ops with the delete that released each (``release_seq``, ``release_ns``,
    ``release_duration_ns``; null when the copy outlived the run)."""
    allocs = ops.filter(pl.col("op") == "alloc").sort("seq")
    deletes = (ops.filter(pl.col("op") == "delete").sort("seq")
               .select("rank", "device", "device_addr", pl.col("seq").alias("release_seq"),
                       pl.col("time_ns").alias("release_ns"), pl.col("duration_ns").alias("release_duration_ns")))
    return allocs.join_asof(deletes, left_on="seq", right_on="release_seq", by=["rank", "device", "device_addr"],
                            strategy="forward", check_sortedness=False)


def transfer_waste(log: EventLog, first: Survey | None = None) -> pl.DataFrame:
    """Every transfer with the bytes of it that were read on the other side and the bytes wasted
    (``replay_transfers(...).transfers``)."""
    return replay_transfers(log, first).transfers


def _unread_at_end(shadow: Shadow, wasted: np.ndarray, reason: np.ndarray, first: np.ndarray) -> None:
    """Bytes still pending on a device when the run ended were never read there."""
    runs = [shadow.maps.runs(d) for d in range(shadow.devices)]
    k0 = np.concatenate([r[0] for r in runs])
    if not len(k0):
        return
    k1 = np.concatenate([r[1] for r in runs])
    owners = np.concatenate([r[2] for r in runs])
    counts = np.bincount(owners, weights=k1 - k0, minlength=len(wasted)).astype(np.int64)
    wasted += counts * shadow.granule
    reason[counts > 0] |= DEV_AT_END
    # first unread byte of each transfer: the start of its lowest run (a transfer's runs lie in its
    # rank's segments, numbered in address order)
    seg = np.searchsorted(shadow.seg_off, k0, side="right") - 1
    addrs = shadow.seg_lo[seg].astype(np.int64) + (k0 - shadow.seg_off[seg]) * shadow.granule
    for_min = np.full(len(wasted), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(for_min, owners, addrs)
    take = (counts > 0) & ((first < 0) | (for_min < first))
    first[take] = for_min[take]
