"""Event decoding shared by the two mapping engines (the C VSM kernel and the pure-Python oracle).

Why: the two engines must not share logic, only input and output. Input is the log decoded into
(1) the *control events* (allocations, constructs, map clauses, data ops, kernels: few, kept whole in
memory with their global row index) and (2) record batches of all events, streamed. Output is a list
of :class:`Detection`, the engine-independent record that ``mapping_diagnosis`` turns into findings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from quiver.formats import COLUMN_NAMES, EventKind, EventLog
from quiver.formats.sets import sorted_unique

CONTROL_KINDS = np.array([int(k) for k in (
    EventKind.ALLOC, EventKind.FREE, EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END,
    EventKind.MAP_CLAUSE, EventKind.DATA_OP, EventKind.KERNEL)], dtype=np.int16)
CONTROL_KIND_BITS = sum(1 << int(k) for k in CONTROL_KINDS)   # as in EventLog.kinds_in_batch (kinds < 128)

# Detection kinds (engine output); mapping_diagnosis maps them to FindingKind.
UUM, STALE, OVERFLOW, SECTION_OVERFLOW, UNMAPPED = "uum", "stale", "overflow", "section-overflow", "unmapped"
DETECTION_KINDS = (UUM, STALE, OVERFLOW, SECTION_OVERFLOW, UNMAPPED)

# State of one byte as reported in histories: bits for the OV and the CV on the finding's device.
S_OV_VALID, S_OV_INIT, S_CV_VALID, S_CV_INIT = 1, 2, 4, 8
HISTORY_MAX = 32  # history keeps the last this many operations on the first bad byte


@dataclass
class ControlEvents:
    """All control events of a log, in row order; ``event`` is the global row index of each."""

    event: np.ndarray
    cols: Mapping[str, np.ndarray]     # column name -> values (read lazily for a log)

    def __len__(self) -> int:
        return len(self.event)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name]

    def select(self, kinds: np.ndarray) -> ControlEvents:
        """The control events of the given kinds (for a log, columns are then read only from the
        record batches that hold some)."""
        keep = np.isin(self.cols["kind"], kinds)
        if keep.all():
            return self
        if isinstance(self.cols, _LogColumns):
            return ControlEvents(self.event[keep], self.cols.subset(keep))
        return ControlEvents(self.event[keep], {c: v[keep] for c, v in self.cols.items()})


def _control_rows(columns: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.flatnonzero(np.isin(columns["kind"], CONTROL_KINDS))


def control_events_from_columns(columns: Mapping[str, np.ndarray], offset: int = 0) -> ControlEvents:
    rows = _control_rows(columns)
    return ControlEvents(rows.astype(np.int64) + offset, {c: np.asarray(columns[c])[rows] for c in COLUMN_NAMES})


class _LogColumns(Mapping):
    """Columns of some rows of a log, each read (decompressed) from the log the first time it is used.

    Why: the control rows are spread over every record batch, and decompressing a column costs the
    same whatever rows are kept; the mapping checker needs 11 of the 15 columns (not ``time_ns``,
    the costliest), the report the others only when there is something to report.
    """

    def __init__(self, log: EventLog, parts: list[tuple[int, np.ndarray]]) -> None:
        self._log = log
        self._parts = parts           # (record batch, rows in it)
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        col = self._cache.get(name)
        if col is None:
            if name not in COLUMN_NAMES:
                raise KeyError(name)
            col = np.concatenate([self._log.batch(i, [name])[name][rows] for i, rows in self._parts])
            self._cache[name] = col
        return col

    def subset(self, keep: np.ndarray) -> _LogColumns:
        """The rows where ``keep`` is true (a mask over these rows)."""
        bounds = np.cumsum([0] + [len(rows) for _i, rows in self._parts])
        parts = [(i, rows[keep[a:b]]) for (i, rows), a, b in zip(self._parts, bounds[:-1], bounds[1:])
                 if keep[a:b].any()]
        out = _LogColumns(self._log, parts)
        out._cache = {name: col[keep] for name, col in self._cache.items()}
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(COLUMN_NAMES)

    def __len__(self) -> int:
        return len(COLUMN_NAMES)


def read_control_events(log: EventLog) -> ControlEvents:
    """The control events of a log: a scan of the ``kind`` column; other columns are read on first use."""
    parts: list[tuple[int, np.ndarray]] = []
    events: list[np.ndarray] = []
    offset = 0
    for i, kinds in enumerate(log.batches(["kind"])):
        present = log.kinds_in_batch(i)   # a batch of accesses only needs no per-row lookup
        rows = _control_rows(kinds) if present is None or present & CONTROL_KIND_BITS else np.zeros(0, np.intp)
        if rows.size:
            parts.append((i, rows))
            events.append(rows.astype(np.int64) + offset)
        offset += len(kinds["kind"])
    if not parts:
        return control_events_from_columns({c: np.zeros(0, dtype=np.int64) for c in COLUMN_NAMES})
    return ControlEvents(np.concatenate(events), _LogColumns(log, parts))


# What the VSM kernel reads from every event (control events come from ControlEvents).
# name, id2: the planes of strided ACCESS rows (format version 5; older logs are read without them)
VSM_COLUMNS = ["rank", "kind", "device", "loc", "addr", "addr2", "size", "id", "op", "aux", "aux2", "name", "id2"]
PLANE_COLUMNS = ("name", "id2")


@dataclass(frozen=True)
class Detection:
    """One distinct mapping problem as an engine found it (before any wording or advice).

    Distinct means one per (kind, rank, device, access site, clause or variable); counts are summed
    over all accesses with that key. Addresses are raw (no rank bits). Events are global row indices.
    """

    kind: str                 # one of DETECTION_KINDS
    rank: int
    device: int               # device number of the access, -1 = host access
    event: int                # first access with this key (MAP_CLAUSE / DATA_OP for section-overflow)
    loc: int                  # location id of the access site
    clause_event: int         # MAP_CLAUSE behind it (the one that created the CV mapping), -1 unknown
    entry_event: int          # DATA_OP that created that CV mapping, -1 none
    release_event: int        # DATA_OP that released it before the first access, -1 still live
    name: int                 # string id of the variable, -1 unknown
    entry_device: int         # device of that mapping, -1 none
    host_addr: int            # first bad byte: the lowest one of the first epoch, vsm_layout.C_EPOCH (device
                              # accesses: the host byte it stands for)
    device_addr: int          # first bad byte on the device, -1 for host accesses and sections
    bytes: int
    occurrences: int
    last_host_addr: int       # highest bad byte over all occurrences (host-equivalent)
    width: int                # element width recorded with the first access (ACCESS aux), 0 unknown
    access_size: int          # bytes of the first access (section bytes for section-overflow)
    object_lo: int            # host object (live ALLOC) behind the clause, -1 unknown
    object_hi: int
    history: tuple[tuple[int, int], ...] = ()  # (event, S_* state after it) for the first bad byte

    def sort_key(self) -> tuple:
        return (self.event, self.kind, self.host_addr, self.clause_event, self.name)


def fetch_rows(log: EventLog, events: set[int] | list[int]) -> dict[int, dict[str, int]]:
    """The given rows (global indices) as dicts of ints: one streaming pass, memory bounded by len(events).
    A batch holding none of them is measured by its ``kind`` column alone (the findings' few rows are in a few
    batches of a long log: decoding every column of every batch up to the last was most of a diagnosis)."""
    wanted = sorted_unique(np.asarray(sorted(events), dtype=np.int64))
    out: dict[int, dict[str, int]] = {}
    if not len(wanted):
        return out
    offset = 0
    for i in range(log.num_batches):
        n = len(log.batch(i, ["kind"])["kind"])
        lo, hi = np.searchsorted(wanted, [offset, offset + n])
        if hi > lo:
            batch = log.batch(i)
            for g in wanted[lo:hi].tolist():
                out[g] = {c: int(batch[c][g - offset]) for c in COLUMN_NAMES}
        if hi == len(wanted):
            break
        offset += n
    return out
