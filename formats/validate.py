"""Every value of a record batch checked before any consumer sees it.

Why here, once: the checkers index arrays by rank, device, location and string ids, loop over the
blocks of strided runs and size shadows from ``size``; a damaged or crafted log must not turn any
of that into an internal error, a wrong report, a multi-GiB allocation or an endless loop. Rules
(FORMAT.md "Validation"): codes in their enums, ids in range, sizes within the 48-bit address space,
strided runs that fit in it, and blocks of strided runs within a budget: proportional to the events,
and beyond that to the run time the batch's events claim (one strided record may stand for a whole
loop nest, so events alone cannot bound it; no run makes more than ``BLOCKS_PER_NS`` accesses per
nanosecond). ``QUIVER_MAX_BLOCKS`` raises the fixed part.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import batch_scan
from .batch_scan import ColumnScan
from .errors import LogFormatError
from .schema import (
    FORMAT_VERSION,
    MASKED_VERSION,
    MAX_MASK_SLOTS,
    PLANES_VERSION,
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

MAX_RANKS = 1 << 20        # ranks and threads per rank a log may name
MAX_DEVICES = 1 << 16      # when the run does not say how many devices it saw (and RMA datatype sizes)
ADDRESS_LIMIT = 1 << 48    # sizes and strided spans live in a 48-bit address space
BLOCKS_PER_EVENT = 1024    # strided-run blocks a log may hold per event, on average ...
BLOCKS_BASE = 1 << 26      # ... plus this many (a real stencil log has ~254 per strided row) ...
BLOCKS_PER_NS = 64         # ... plus this many per ns of run time (above any machine's access rate)
RMA_CAS = 15               # RMA op of MPI_Compare_and_swap (FORMAT.md)

_KIND_TABLE_SIZE = 128
VALID_KIND = np.zeros(_KIND_TABLE_SIZE, dtype=bool)
VALID_KIND[[int(k) for k in EventKind]] = True

# kind -> the `op` codes it may carry (kinds not listed: op is free-form bits or unused)
_OPS: dict[int, list[int]] = {
    EventKind.CONSTRUCT_BEGIN: [int(c) for c in ConstructKind],
    EventKind.CONSTRUCT_END: [int(c) for c in ConstructKind],
    EventKind.DATA_OP: [int(c) for c in DataOpKind],
    EventKind.TASK_DEPEND: [int(c) for c in DependKind],
    EventKind.SYNC: [int(c) for c in SyncKind],
    EventKind.WIN_CREATE: [int(c) for c in WinFlavor],
    EventKind.RMA: [int(c) for c in RmaOp] + [RMA_CAS],
    EventKind.MPI_SYNC: [int(c) for c in MpiSyncKind],
    EventKind.MPI_REQUEST: [0, 1, 2],   # 0: not said (synthetic logs)
    EventKind.MPI_MESSAGE: [int(c) for c in MessageKind],
}
MAX_OP = 64
VALID_OP = np.ones((_KIND_TABLE_SIZE, MAX_OP), dtype=bool)
CHECKS_OP = np.zeros(_KIND_TABLE_SIZE, dtype=bool)
for _kind, _codes in _OPS.items():
    VALID_OP[int(_kind)] = False
    VALID_OP[int(_kind), _codes] = True
    CHECKS_OP[int(_kind)] = True
# kinds whose `id2` is a peer rank, and whose `name` is not a string id (RMA: the MPI_Op code)
PEER_KINDS = [int(EventKind.RMA), int(EventKind.MPI_MESSAGE)]
NAME_NOT_STRING = int(EventKind.RMA)
ACCESS = int(EventKind.ACCESS)   # its `name` is a plane count (format version 5), not a string id
MASKED = int(AccessFlag.MASKED)  # ACCESS `op` bit of a masked run (format version 6)
VALID_OP_FLAT = VALID_OP.ravel()
# the same tables as bit sets of kinds (a batch scan's ``kinds``: formats/batch_scan.py)
VALID_KIND_BITS = sum(1 << k for k in np.flatnonzero(VALID_KIND).tolist())
CHECKS_OP_BITS = sum(1 << k for k in np.flatnonzero(CHECKS_OP).tolist())
# the columns with a range rule below (the reader asks batch_scan for their min and max)
# (`op`: its max below MASKED says no row is a masked run, without a pass over the column)
RANGE_COLUMNS = frozenset({"rank", "thread", "loc", "device", "size", "kind", "name", "id2", "aux2", "op"})


def _within(values: np.ndarray, lo: int, hi: int) -> bool:
    """Every value in [lo, hi) (two reductions, no temporary array)."""
    return bool(int(values.min()) >= lo and int(values.max()) < hi)


def _int_meta(run: dict[str, Any], key: str, limit: int, path: Path) -> int | None:
    value = run.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return None    # absent, or not a count (a synthetic log's free-form metadata): no bound from it
    if not 0 <= value <= limit:
        raise LogFormatError(f"{path}: damaged run metadata ({key} = {str(value)[:40]!r})")
    return value


@dataclass
class BatchRules:
    """The bounds of one log, from its metadata; ``check`` applies them to a batch."""

    path: Path
    n_strings: int
    n_locations: int
    ranks: int
    devices: int
    block_budget: int            # blocks per batch: BLOCKS_PER_EVENT per row + a share of BLOCKS_BASE
    version: int = FORMAT_VERSION  # the log's format version: planes exist from PLANES_VERSION on

    @classmethod
    def of(cls, path: Path, run: dict[str, Any], n_strings: int, n_locations: int, num_batches: int,
           version: int = FORMAT_VERSION) -> BatchRules:
        # rank ids are only bounded (a synthetic log's `ranks` need not cover its peers); the run's own
        # counts must be sane numbers
        _int_meta(run, "ranks", MAX_RANKS, path)
        _int_meta(run, "rank", MAX_RANKS, path)
        _int_meta(run, "threads", MAX_RANKS * 1024, path)
        devices = _int_meta(run, "devices", MAX_DEVICES, path)
        try:
            base = int(os.environ.get("QUIVER_MAX_BLOCKS", BLOCKS_BASE))
        except ValueError:
            base = BLOCKS_BASE
        return cls(path, n_strings, n_locations, MAX_RANKS,
                   devices + 1 if devices is not None else MAX_DEVICES,   # + the host fallback's number
                   base // max(num_batches, 1), version)

    def check(self, cols: dict[str, np.ndarray], batch: int,
              time_ns: Callable[[], np.ndarray] | None = None, scans: Mapping[str, ColumnScan] | None = None) -> None:
        """Raise LogFormatError naming the batch and the first rule a row breaks. ``time_ns`` reads the
        batch's times when ``cols`` lacks them (only a batch beyond its event budget needs them).
        ``scans``: the columns' ranges and kind counts when already known (formats/batch_scan.py).

        Fast path: each column's range (min/max), and which kinds occur; the per-row masks are built
        only for a column whose range is not plainly valid, to find the offending row."""
        n = len(next(iter(cols.values()))) if cols else 0
        if n == 0:
            return
        scans = scans or {}

        def within(name: str, lo: int, hi: int) -> bool:
            """Every value of column ``name`` in [lo, hi)."""
            s = scans.get(name)
            return bool(s.min >= lo and s.max < hi) if s is not None and s.min is not None \
                else _within(cols[name], lo, hi)

        for name, lo, hi, what in (("rank", 0, self.ranks, "rank out of range"),
                                   ("thread", 0, MAX_RANKS, "thread out of range"),
                                   ("loc", -1, self.n_locations, "location id out of range")):
            if name in cols and not within(name, lo, hi):
                self._fail_if((cols[name] < lo) | (cols[name] >= hi), batch, what, cols[name])
        if "device" in cols and not within("device", -1, self.devices):
            # an OpenMP device number for OpenMP kinds; MPI kinds reuse the column (RMA: a datatype code, -2 for
            # the local-buffer row of a derived datatype, -3 for a block of a derived local buffer)
            device = cols["device"]
            openmp = cols["kind"] < int(EventKind.WIN_CREATE) if "kind" in cols else np.zeros(n, dtype=bool)
            low, high = np.where(openmp, -1, -3), np.where(openmp, self.devices, MAX_DEVICES)
            self._fail_if((device < low) | (device >= high), batch, "unknown device number", device)
        if "size" in cols and not within("size", 0, ADDRESS_LIMIT + 1):
            self._fail_if(cols["size"] > ADDRESS_LIMIT, batch, "size beyond the 48-bit address space", cols["size"])
        kind = cols.get("kind")
        if kind is None:
            return
        if not within("kind", 0, _KIND_TABLE_SIZE):
            self._fail_if((kind < 0) | (kind >= _KIND_TABLE_SIZE), batch, "unknown event kind", kind)
        present = scans["kind"].kinds if "kind" in scans else None
        # kinds are in [0, 128) now: table lookups with take (fancy indexing is slower); the kinds a
        # scan found say without a lookup whether every kind is known and whether any row has an enum op
        k = None if present is not None else kind.astype(np.intp)
        if present is not None and present & ~VALID_KIND_BITS or \
                k is not None and not VALID_KIND.take(k).all():
            self._fail_if(~VALID_KIND.take(kind.astype(np.intp)), batch, "unknown event kind", kind)
        if "op" in cols and (present is None or present & CHECKS_OP_BITS):
            op = cols["op"]
            if present is None:
                k = kind.astype(np.intp) if k is None else k
                rows = np.flatnonzero(CHECKS_OP.take(k))    # kinds whose op is an enum (few rows: no ACCESS)
            else:   # the few enum-op kinds the batch holds, compared in int16 (no intp copy of the column)
                enum = np.zeros(n, dtype=bool)
                for code in np.flatnonzero(CHECKS_OP).tolist():
                    if present >> code & 1:
                        enum |= kind == code
                rows = np.flatnonzero(enum)
            if len(rows):
                k_rows = kind[rows].astype(np.intp)
                op_k = np.clip(op[rows], -1, MAX_OP)
                bad_k = (op_k < 0) | (op_k >= MAX_OP)
                bad_k |= ~VALID_OP_FLAT.take(k_rows * MAX_OP + np.clip(op_k, 0, MAX_OP - 1))
                if bad_k.any():
                    bad = np.zeros(n, dtype=bool)
                    bad[rows[bad_k]] = True
                    self._fail_if(bad, batch, "unknown operation code for its event kind", op)
        if "name" in cols and not within("name", -1, self.n_strings):
            name = cols["name"]
            string = (kind != NAME_NOT_STRING) & (kind != ACCESS)
            self._fail_if(string & ((name < -1) | (name >= self.n_strings)), batch, "string id out of range", name)
        planes = "name" in cols and not within("name", -1, 2)     # ACCESS rows of planes (format version 5)
        if planes:
            self._fail_if((kind == ACCESS) & (cols["name"] < -1), batch, "negative plane count", cols["name"])
            if self.version < PLANES_VERSION:   # no writer of an older version wrote a plane count
                self._fail_if((kind == ACCESS) & (cols["name"] >= 2), batch,
                              f"planes of an access run in a version {self.version} log (planes: version "
                              f"{PLANES_VERSION} on)", cols["name"])
        # rows of several blocks (strided runs, planes, masked runs) may be present: their shape rules, in one
        # C pass when it proves the batch clean (batch_scan.access_shapes), else the numpy rules below
        multi = "aux2" in cols and (not within("aux2", 0, 2) or planes)
        shapes = batch_scan.access_shapes(cols, ACCESS, MASKED, MAX_MASK_SLOTS, ADDRESS_LIMIT) if multi else None
        fast = shapes is not None and shapes.clean and (not shapes.masked or self.version >= MASKED_VERSION)
        masked = None   # ACCESS rows that are masked runs (format version 6), None when there is none
        if not fast and "op" in cols and not within("op", -(1 << 31), MASKED):
            m = (kind == ACCESS) & ((cols["op"] & MASKED) != 0)
            if m.any():
                masked = m
                if self.version < MASKED_VERSION:   # no writer of an older version wrote one
                    self._fail_if(m, batch, f"masked access run in a version {self.version} log (masked runs: "
                                            f"version {MASKED_VERSION} on)", cols["op"])
                self._check_masked(cols, m, batch)
        if "id2" in cols and not within("id2", -1, self.ranks):
            peer = (kind == PEER_KINDS[0]) | (kind == PEER_KINDS[1])
            self._fail_if(peer & ((cols["id2"] < -1) | (cols["id2"] >= self.ranks)), batch,
                          "peer rank out of range", cols["id2"])
        if "aux2" in cols:
            aux2 = cols["aux2"]
            if not within("aux2", -1, max(self.n_strings, 2)):
                is_map = kind == int(EventKind.MAP_CLAUSE)
                self._fail_if(is_map & ((aux2 < -1) | (aux2 >= self.n_strings)), batch,
                              "clause-text string id out of range", aux2)
            if fast:
                self._check_blocks(cols, shapes.blocks, batch, time_ns)
            elif multi:
                self._check_strided(cols, kind == ACCESS, batch, time_ns, planes, masked)

    def _check_masked(self, cols: dict[str, np.ndarray], masked: np.ndarray, batch: int) -> None:
        """The shape of masked runs (FORMAT.md, format version 6): 2-64 slots, the bitmap's first and last
        slot present and no bit past them, slots no narrower than their stride says, no planes."""
        rows = np.flatnonzero(masked)
        n = len(masked)
        if "aux2" in cols:
            slots = cols["aux2"][rows]
            bad = (slots < 2) | (slots > MAX_MASK_SLOTS)
            self._fail_at(rows, bad, n, batch, f"masked access run of a slot count outside 2-{MAX_MASK_SLOTS}", slots)
            if "id2" in cols:
                bits = cols["id2"][rows].view(np.uint64)
                last = (slots - 1).astype(np.uint64)
                self._fail_at(rows, (bits & np.uint64(1)) == 0, n, batch,
                              "masked access run whose first slot is absent (bit 0 clear)", cols["id2"][rows])
                self._fail_at(rows, ((bits >> last) & np.uint64(1)) == 0, n, batch,
                              "masked access run whose last slot is absent (bit slots - 1 clear)", cols["id2"][rows])
                beyond = np.where(slots < MAX_MASK_SLOTS, bits >> np.minimum(slots, 63).astype(np.uint64),
                                  np.uint64(0))
                self._fail_at(rows, beyond != 0, n, batch, "masked access run with a bit beyond its slots",
                              cols["id2"][rows])
        if "addr2" in cols and "size" in cols:
            stride, size = cols["addr2"][rows], cols["size"][rows]
            self._fail_at(rows, stride < size, n, batch, "masked access run whose slot stride is below its size",
                          stride.astype(np.int64))
        if "name" in cols:
            name = cols["name"][rows]
            self._fail_at(rows, name >= 2, n, batch, "planes of a masked access run", name)

    def _check_strided(self, cols: dict[str, np.ndarray], access: np.ndarray, batch: int,
                       time_ns: Callable[[], np.ndarray] | None, planes: bool,
                       masked: np.ndarray | None = None) -> None:
        blocks = cols["aux2"]
        if bool((access & (blocks < 0)).any()):
            self._fail_if(access & (blocks < 0), batch, "negative block count", blocks)
        if planes:
            # planes (format version 5): each plane a real strided run, the planes disjoint, in address order
            # and at the same phase; the stride rules below then hold for every plane
            name = cols["name"]
            self._fail_if(access & (name >= 2) & (blocks < 2), batch, "planes of an access run that is not strided",
                          name)
        rows = np.flatnonzero(access & (blocks >= 2))
        if not len(rows):
            return
        nb = blocks[rows]
        np_ = np.maximum(cols["name"][rows], 1).astype(np.float64) if planes else np.ones(len(rows))
        if "addr2" in cols and "size" in cols:
            # float64 is exact enough for a bound at 2^48 (and cannot overflow like uint64 products)
            stride, size = cols["addr2"][rows].astype(np.float64), cols["size"][rows].astype(np.float64)
            span = (nb - 1).astype(np.float64) * stride + size
            # a masked run's stride may equal its size (contiguous slots): its shape is _check_masked's; columns
            # read without `op` cannot tell one from a strided run, so there only a stride below the size is damage
            if masked is not None:
                thin = (stride <= size) & ~masked[rows]
            else:
                thin = (stride <= size) if "op" in cols else (stride < size)
            bad = thin | (span > ADDRESS_LIMIT)
            if planes and "id2" in cols:
                multi = np_ >= 2
                pstride = cols["id2"][rows]
                self._fail_at(rows, multi & (pstride.astype(np.float64) <= span), len(blocks), batch,
                              "planes of a strided access run that overlap (plane stride within the plane's span)",
                              pstride)
                self._fail_at(rows, multi & (pstride % np.maximum(cols["addr2"][rows], 1).astype(np.int64) != 0),
                              len(blocks), batch, "planes of a strided access run at another phase (plane stride "
                              "not a multiple of the stride)", pstride)
                bad |= multi & ((np_ - 1) * pstride.astype(np.float64) + span > ADDRESS_LIMIT)
            self._fail_at(rows, bad, len(blocks), batch, "strided access run outside the 48-bit address space", nb)
        # planes x blocks; float64: the products of a crafted row overflow int64, and any sum past 2^53 is far
        # beyond every budget
        per_row = np.minimum(nb, ADDRESS_LIMIT).astype(np.float64) * np.minimum(np_, ADDRESS_LIMIT)
        if masked is not None:   # a masked run stands for its present slots
            m = masked[rows]
            per_row[m] = np.bitwise_count(cols["id2"][rows][m].view(np.uint64)) if "id2" in cols else per_row[m]
        self._check_blocks(cols, float(per_row.sum()), batch, time_ns)

    def _check_blocks(self, cols: dict[str, np.ndarray], total_f: float, batch: int,
                      time_ns: Callable[[], np.ndarray] | None) -> None:
        """The blocks a batch's rows stand for (``total_f``) within its budget: per event, and per ns of run time."""
        blocks = cols["aux2"]
        total = int(total_f)
        budget = self.block_budget + BLOCKS_PER_EVENT * len(blocks)
        if total <= budget:
            return
        times = cols["time_ns"] if "time_ns" in cols else time_ns() if time_ns is not None else None
        elapsed = max(int(times.max()), 0) if times is not None and len(times) else 0
        budget += BLOCKS_PER_NS * elapsed
        if total > budget:
            raise LogFormatError(
                f"{self.path}: damaged log (batch {batch}): its strided access runs stand for {total} blocks, more "
                f"than {budget} for {len(blocks)} events in {elapsed} ns of run time (set QUIVER_MAX_BLOCKS to "
                f"allow more for a real log)")

    def _fail_at(self, rows: np.ndarray, bad: np.ndarray, n: int, batch: int, what: str, values: np.ndarray) -> None:
        """``_fail_if`` of a mask over ``rows`` (indices into the batch's n rows); ``values`` over ``rows`` too."""
        if bad.any():
            full = np.zeros(n, dtype=bool)
            full[rows[bad]] = True
            at = np.zeros(n, dtype=np.asarray(values).dtype)
            at[rows] = values
            self._fail_if(full, batch, what, at)

    def _fail_if(self, bad: np.ndarray, batch: int, what: str, values: np.ndarray) -> None:
        if bad.any():
            row = int(np.argmax(bad))
            raise LogFormatError(f"{self.path}: damaged log (batch {batch}, row {row}): {what} "
                                 f"({int(values[row])})")
