"""Shards of a run: which events each checker needs together, and where every event goes.

Why: a run of thousands of ranks does not fit one process, but the checkers do not need it to.
- OpenMP checkers (mapping, race, schedules, transfers) look at one process at a time:
  each process's host and device copies are its own. **OMP shard = one rank's events.**
- The MPI-RMA checker races accesses to one rank's memory: that rank's loads/stores and the
  RMA calls of every rank that target it (plus the origin sides of its own calls).
  **RMA shard = one memory rank**; inside it the checker works per (window, rank) as always.
  Every RMA shard also needs the happens-before of the whole run: the small set of
  synchronisation and window events (``GLOBAL_KINDS``) goes to every shard, and their vector
  clocks are computed once (quiver.replay.distributed.run).

A *destination* is one shard as an int64 key ``family << 32 | rank``; a *partition* is a run of
consecutive destinations that one task checks together. Findings never depend on the partitioning.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from quiver.formats import EventKind
from quiver.replay.rma.sync import SYNC_KINDS

OMP, RMA = 0, 1
FAMILY_SHIFT = 32
RANK_MASK = (1 << FAMILY_SHIFT) - 1
GLOBAL_KINDS = tuple(int(k) for k in (*SYNC_KINDS, EventKind.WIN_CREATE, EventKind.WIN_ATTACH,
                                      EventKind.WIN_DETACH))
KEY_COLUMNS = ("_k0", "_k1", "_k2")   # order keys: rows of any shard sort into the run's order


def destination(family: int, rank: np.ndarray | int) -> np.ndarray:
    return (np.int64(family) << FAMILY_SHIFT) | np.asarray(rank, dtype=np.int64)


def is_global(kind: np.ndarray) -> np.ndarray:
    return np.isin(kind, np.array(GLOBAL_KINDS, dtype=kind.dtype))


def route(cols: dict[str, np.ndarray], families: frozenset[int]) -> tuple[np.ndarray, np.ndarray]:
    """(row, destination) pairs: every row that some shard of ``families`` needs, with numpy only.

    RMA: host accesses go to their rank; an RMA call goes to its origin (origin and result
    buffers) and to its target (window memory). OMP: every row goes to its rank. Global rows
    are not routed (every RMA shard gets them).
    """
    kind, rank = cols["kind"], cols["rank"].astype(np.int64)
    rows: list[np.ndarray] = []
    dsts: list[np.ndarray] = []
    if RMA in families:
        acc = np.flatnonzero((kind == EventKind.ACCESS) & (cols["device"] < 0) & (cols["size"] > 0))
        rma = np.flatnonzero(kind == EventKind.RMA)
        target = cols["id2"][rma].astype(np.int64)
        remote = rma[(target >= 0) & (target < (1 << 31)) & (target != rank[rma])]
        rows += [acc, rma, remote]
        dsts += [destination(RMA, rank[acc]), destination(RMA, rank[rma]),
                 destination(RMA, cols["id2"][remote].astype(np.int64))]
    if OMP in families:
        every = np.arange(len(kind), dtype=np.int64)
        rows.append(every)
        dsts.append(destination(OMP, rank))
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(rows).astype(np.int64), np.concatenate(dsts)


@dataclass(frozen=True)
class Source:
    """What one map task reads: a rank file of a split log, or a run of record batches of one file."""

    index: int
    path: str
    first_batch: int = 0
    end_batch: int = -1             # -1: to the end of the file
    split: bool = False             # order keys from (time, rank, position) instead of the row
    loc_map: np.ndarray | None = None   # this file's location ids -> the run's (split logs)
    str_map: np.ndarray | None = None   # this file's string ids -> the run's (split logs)


@dataclass(frozen=True)
class Piece:
    """Rows of one destination in one fragment file: record batches ``batches`` of ``path``."""

    path: str
    batches: tuple[int, ...]


@dataclass(frozen=True)
class Partition:
    """Destinations one task checks together, and where their rows are."""

    index: int
    family: int
    ranks: tuple[int, ...]
    pieces: tuple[tuple[int, tuple[Piece, ...]], ...] = ()   # (rank, its pieces) for routed shards
    files: tuple[str, ...] = ()     # OMP shards read whole: the rank files of a split log, or the log

    @property
    def shards(self) -> int:
        return len(self.ranks)


def plan_partitions(family: int, sizes: dict[int, int], parts_hint: int, max_rows: int) -> list[list[int]]:
    """Consecutive ranks grouped into about ``parts_hint`` partitions of at most ``max_rows`` rows
    (a single rank above the cap stays one partition)."""
    ranks = sorted(sizes)
    if not ranks:
        return []
    total = sum(sizes.values())
    target = min(max(total // max(parts_hint, 1), 1), max_rows)
    out: list[list[int]] = [[]]
    rows = 0
    for r in ranks:
        if out[-1] and rows + sizes[r] > target:
            out.append([])
            rows = 0
        out[-1].append(r)
        rows += sizes[r]
    return out
