"""What a log holds, summarised: event counts by kind, time span, (rank, thread) pairs, devices.

Why: `trace info` prints exactly this; scanning the columns of a 10^8-event log for it takes tens of
seconds, so the writers that know it (finalize, write_log) store it in the run metadata (under
``STATS_KEY``, covered by the metadata checksum of formats/integrity.py) and `trace info` reads it
from the footer. ``LogStats.add`` is also the scan that computes it from record batches (older logs,
damaged logs, `trace info --verify`), so both paths count the same way.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .integrity import ranges_of
from .schema import AccessFlag, EventKind

MASKED = int(AccessFlag.MASKED)   # ACCESS op bit of a masked run: it counts its present slots

if TYPE_CHECKING:
    import numpy as np

STATS_KEY = "stats"
KINDS = 256     # kind values counted (int16 column; every defined kind is below this)


def distinct(values: np.ndarray) -> np.ndarray:
    """Distinct values of a column that changes rarely from row to row (rank, thread, device):
    runs are collapsed first, so the sort sees a handful of values instead of the whole batch."""
    import numpy as np

    from .sets import sorted_unique

    if len(values) < 2:
        return sorted_unique(values)
    starts = np.empty(len(values), dtype=bool)
    starts[0] = True
    np.not_equal(values[1:], values[:-1], out=starts[1:])
    return sorted_unique(values[starts])


def _ranges(values: set[int]) -> str:
    """``"0-3,7"``: distinct ints as ranges, all of them (integrity.ranges without its limit)."""
    return ranges_of(sorted(values), limit=None)


_RANGE = re.compile(r"^(-?\d+)(?:-(-?\d+))?$")


def _parse_ranges(text: str) -> set[int]:
    out: set[int] = set()
    for part in filter(None, text.split(",")):
        m = _RANGE.match(part)
        if m is None:
            raise ValueError(part)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo or hi - lo > 1 << 24:
            raise ValueError(part)
        out.update(range(lo, hi + 1))
    return out


class LogStats:
    """Counts by kind value, time bounds, (rank, thread) pairs, ranks and OpenMP devices of some events.
    Plain Python values (a small run's finalize does without numpy), in a plain class: `trace record`
    imports this module while a small program runs, and `dataclasses` costs ~7 ms of CPU there."""

    FIELDS = ("kinds", "t_min", "t_max", "threads", "ranks", "devices", "rows", "blocks")

    def __init__(self, kinds: Iterable[int] | None = None, t_min: int | None = None, t_max: int | None = None,
                 threads: set[tuple[int, int]] | None = None, ranks: set[int] | None = None,
                 devices: set[int] | None = None, rows: int = 0, blocks: int | None = None) -> None:
        # counts may come as a numpy array (a scan's)
        self.kinds: list[int] = [int(k) for k in kinds] if kinds is not None else [0] * KINDS
        self.t_min, self.t_max = t_min, t_max
        self.threads: set[tuple[int, int]] = threads if threads is not None else set()
        self.ranks: set[int] = ranks if ranks is not None else set()
        self.devices: set[int] = devices if devices is not None else set()
        self.rows = rows        # rows added, counted or not (kind values outside 0..KINDS-1 are not)
        # blocks the ACCESS rows stand for (a strided row its blocks, a row of planes planes x blocks:
        # formats/blocks.py); None: not counted (columns without aux2, stats of a writer that did not count them)
        self.blocks = blocks

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LogStats):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    def __repr__(self) -> str:
        return f"LogStats({', '.join(f'{f}={getattr(self, f)!r}' for f in self.FIELDS)})"

    def add(self, cols: Mapping[str, np.ndarray]) -> None:
        """Count the rows of ``cols`` (needs kind, time_ns, rank, thread, device; with aux2, and name for
        planes, the blocks of the ACCESS rows too)."""
        kind = cols["kind"]
        if not len(kind):
            return
        first = self.empty
        self.rows += len(kind)
        if isinstance(kind, array):
            self._add_plain(cols, first)
            return
        import numpy as np

        from .blocks import row_blocks, row_masks

        if "aux2" in cols and (first or self.blocks is not None):
            acc = kind == int(EventKind.ACCESS)
            name = cols["name"][acc] if "name" in cols else None
            # a masked run (format version 6) stands for its present slots
            masks = row_masks(cols, acc)
            self.blocks = (self.blocks or 0) + int(row_blocks(cols["aux2"][acc], name, masks).sum())
        else:
            self.blocks = None
        kind = kind.astype(np.int64)
        counted = kind if kind.min() >= 0 else kind[kind >= 0]     # invalid kinds: the reader rejects them
        self._count(np.bincount(counted, minlength=KINDS)[:KINDS].tolist())
        t = cols["time_ns"]
        self._span(int(t.min()), int(t.max()))
        rank = cols["rank"].astype(np.int64)
        pairs = distinct((rank << 32) | (cols["thread"].astype(np.int64) & 0xFFFFFFFF))
        self.threads.update(zip((pairs >> 32).tolist(), (pairs & 0xFFFFFFFF).tolist()))
        self.ranks.update(distinct(rank).tolist())
        # `device` is an OpenMP device only for OpenMP kinds (RMA reuses the column for a datatype size)
        dev = cols["device"][kind < int(EventKind.WIN_CREATE)]
        self.devices.update(distinct(dev[dev >= 0]).tolist())

    def _add_plain(self, cols: Mapping[str, array], first: bool) -> None:
        """add() of array.array columns (a small run's object rows), row by row."""
        counts = [0] * KINDS
        for k in cols["kind"]:
            if 0 <= k < KINDS:
                counts[k] += 1
        if "aux2" in cols and (first or self.blocks is not None):
            acc = int(EventKind.ACCESS)
            names = cols["name"] if "name" in cols else [1] * len(cols["kind"])
            ops = cols["op"] if "op" in cols and "id2" in cols else [0] * len(cols["kind"])
            ids = cols["id2"] if "op" in cols and "id2" in cols else [0] * len(cols["kind"])
            # a masked run (format version 6) stands for its present slots
            self.blocks = (self.blocks or 0) + sum(
                (m & (1 << 64) - 1).bit_count() if o & MASKED else max(b, 1) * max(p, 1)
                for k, b, p, o, m in zip(cols["kind"], cols["aux2"], names, ops, ids, strict=True) if k == acc)
        else:
            self.blocks = None
        self._count(counts)
        self._span(min(cols["time_ns"]), max(cols["time_ns"]))
        self.threads.update(zip(cols["rank"], cols["thread"], strict=True))
        self.ranks.update(cols["rank"])
        win = int(EventKind.WIN_CREATE)
        self.devices.update(d for k, d in zip(cols["kind"], cols["device"], strict=True) if k < win and d >= 0)

    def _span(self, lo: int, hi: int) -> None:
        self.t_min = lo if self.t_min is None else min(self.t_min, lo)
        self.t_max = hi if self.t_max is None else max(self.t_max, hi)

    def _count(self, counts: list[int]) -> None:
        self.kinds = [a + b for a, b in zip(self.kinds, counts, strict=True)]

    def merge(self, other: LogStats) -> None:
        if not other.empty:
            self.blocks = other.blocks if self.empty else \
                None if self.blocks is None or other.blocks is None else self.blocks + other.blocks
        self._count(other.kinds)
        self.rows += other.rows
        if other.t_min is not None and other.t_max is not None:
            self._span(other.t_min, other.t_max)
        self.threads |= other.threads
        self.ranks |= other.ranks
        self.devices |= other.devices

    @property
    def empty(self) -> bool:
        """Nothing counted yet (its ``blocks`` say nothing)."""
        return self.rows == 0 and not any(self.kinds)

    @property
    def events(self) -> int:
        return sum(self.kinds)

    def to_json(self) -> dict[str, Any]:
        """The metadata form: kinds by name, ranges of ids (small whatever the number of events)."""
        by_rank: dict[int, list[int]] = {}
        for r, t in self.threads:
            by_rank.setdefault(r, []).append(t)
        names = {int(k): k.name.lower() for k in EventKind}
        out = {
            "kinds": {names.get(k, str(k)): int(self.kinds[k]) for k, n in enumerate(self.kinds) if n},
            "time_ns": [self.t_min, self.t_max] if self.t_min is not None else [],
            "threads": {str(r): _ranges(set(ts)) for r, ts in sorted(by_rank.items())},
            "ranks": _ranges(self.ranks),
            "devices": _ranges(self.devices),
        }
        if self.blocks is not None:
            out["access_blocks"] = int(self.blocks)
        return out

    @classmethod
    def from_json(cls, data: Any) -> LogStats | None:
        """The stats of ``to_json``; None when ``data`` is missing or not of that form (then scan)."""
        if not isinstance(data, dict):
            return None
        try:
            s = cls()
            values = {k.name.lower(): int(k) for k in EventKind}
            for name, n in data["kinds"].items():
                k = values[name] if name in values else int(name)
                if not 0 <= k < KINDS or int(n) < 0:
                    return None
                s.kinds[k] = int(n)
            span = data["time_ns"]
            if span:
                s.t_min, s.t_max = int(span[0]), int(span[1])
            for r, ts in data["threads"].items():
                s.threads.update((int(r), t) for t in _parse_ranges(ts))
            s.ranks = _parse_ranges(data["ranks"])
            s.devices = _parse_ranges(data["devices"])
            s.rows = s.events
            blocks = data.get("access_blocks")
            if blocks is not None:
                s.blocks = int(blocks)
                if s.blocks < 0:
                    return None
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError):
            return None
        return s

    @classmethod
    def of(cls, cols: Mapping[str, np.ndarray]) -> LogStats:
        s = cls()
        s.add(cols)
        return s
