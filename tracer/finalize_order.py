"""The log's row order (time, then global row) in bounded memory: a merge of the thread files.

Why: sorting the times of every raw record at once held 16-20 bytes per event (1.4 GB on a 10 M-event
run, more with the memory-mapped pages the passes touched). A thread file is almost in time order
already: its records are stamped in order, except the coalesced access runs of qv_access.c, which
carry the time their run started and are written when it ends, mostly a few microseconds late.
So the files are merged window by window: each pass reads every file up to a time until which all
its (not too late) rows are known, emits the rows up to that time in order and carries the rest.
Rows later than LATE_NS behind their thread's clock ("stragglers": a run that stayed open for
milliseconds) are found while scanning and merged in apart (a few thousand on a 20 M-event run).
Memory: a window of ~BATCH rows, the carried rows (those within LATE_NS of the window's end) and the
stragglers; pages of the raw files already read are dropped from the resident set (they stay in the
page cache, so a row read again later costs a page fault, not a disk read).
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from quiver.formats.sets import sorted_unique
from quiver.formats.stats import LogStats
from quiver.tracer.finalize_kernels import W_TIME, Kernels
from quiver.tracer.rawread import RAW_DTYPE

LATE_NS = 1_000_000            # rows more than this behind their thread's clock are merged in apart
SCAN_ROWS = 1 << 20            # rows of a thread file scanned (and then released) at a time
CLOCK_START = np.iinfo(np.int64).min // 2   # a clock before every time (no overflow when LATE_NS is subtracted)
NEVER = np.iinfo(np.int64).max
_PAGE = mmap.PAGESIZE


@dataclass
class Stream:
    """One thread file: its rows (RAW_WORDS int64 words each), its rank's string table (global id of
    each local id, then -1), its place in the global row space, and its mapping (to release pages)."""

    rank: int
    words: np.ndarray
    table: np.ndarray
    start: int
    mapping: mmap.mmap | None = None

    def release(self, first: int, end: int) -> None:
        """Drop the pages of rows [first, end) from this process's resident set (whole pages inside)."""
        size = RAW_DTYPE.itemsize
        lo, hi = -(-first * size // _PAGE) * _PAGE, end * size // _PAGE * _PAGE
        if self.mapping is not None and hi > lo:
            try:
                self.mapping.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
            except (OSError, ValueError):
                self.mapping = None      # not releasable (e.g. not a file mapping): keep going without


    def release_all(self) -> None:
        """Drop every page of the file from this process's resident set: single rows read out of
        order (stragglers, control rows) map far more than their page (a whole large folio of the
        page cache, hundreds of KiB), ahead of where the merge has read."""
        self.release(0, len(self.words))


@dataclass
class Scan:
    """What one pass over a thread file found (finalize_kernels.scan_stream, chunk by chunk), what its
    log rows hold (raw times) and its stragglers."""

    used_src: np.ndarray   # bool by local string id: used as a psource
    pcs: np.ndarray        # unique adjusted PCs of rows without psource
    control: np.ndarray    # local positions of the control rows (CONTROL_KINDS)
    accesses: int
    top_alloc: int         # largest ALLOC id, -1 if none
    stats: LogStats = field(default_factory=LogStats)
    late_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))   # global rows
    late_times: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def scan(kern: Kernels, st: Stream) -> Scan:
    """One pass over a thread file, SCAN_ROWS rows at a time, each released once scanned."""
    n_strings = len(st.table) - 1
    used = np.zeros(n_strings, np.bool_)
    pcs, control, late = [np.zeros(0, np.uint64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    late_t = [np.zeros(0, np.int64)]
    accesses, top_alloc, clock = 0, -1, int(CLOCK_START)
    stats = LogStats()
    for a in range(0, len(st.words), SCAN_ROWS):
        w = st.words[a:a + SCAN_ROWS]
        (u, p, c, n_access, top, counts, t_min, t_max, threads, devices, late_rows,
         clock, blocks) = kern.scan_stream(w, n_strings, LATE_NS, clock)
        used |= u
        pcs.append(p)
        control.append(c + a)
        late.append(late_rows + a)
        late_t.append(w[late_rows, W_TIME])     # now: a gather later would map the pages around each again
        accesses += int(n_access)
        top_alloc = max(top_alloc, int(top))
        stats.merge(LogStats(counts, int(t_min), int(t_max), {(st.rank, int(x)) for x in threads}, {st.rank},
                             {int(d) for d in devices}, len(w), int(blocks)))
        st.release(a, a + len(w))
    return Scan(used, sorted_unique(np.concatenate(pcs)), np.concatenate(control), accesses, top_alloc, stats,
                np.concatenate(late) + st.start, np.concatenate(late_t))


class _Window:
    """Reusable output of read_window."""

    def __init__(self, rows: int) -> None:
        self.g = np.empty(rows, np.int64)
        self.t = np.empty(rows, np.int64)


def log_order(kern: Kernels, streams: list[Stream], scans: list[Scan], batch: int) -> Iterator[np.ndarray]:
    """Global rows in log order (time, then global row: thread files in order, then position),
    ``batch`` at a time (the last one shorter)."""
    late_g = np.concatenate([sc.late_rows for sc in scans] or [np.zeros(0, np.int64)])
    late_t = np.concatenate([sc.late_times for sc in scans] or [np.zeros(0, np.int64)])
    by_time = np.lexsort((late_g, late_t))
    late_g, late_t = late_g[by_time], late_t[by_time]
    taken = 0                                       # stragglers merged in so far
    cursor = [0] * len(streams)
    clock = [int(CLOCK_START)] * len(streams)
    carry_g, carry_t = np.zeros(0, np.int64), np.zeros(0, np.int64)
    window = _Window(max(batch, 1))
    done_until = int(CLOCK_START)
    ready: list[np.ndarray] = []
    n_ready = 0
    while True:
        active = [s for s, st in enumerate(streams) if cursor[s] < len(st.words)]
        step = max(batch // max(len(active), 1), 1)
        # read every file up to the time the first of them reaches after `step` more rows
        bounds = [max(clock[s], int(streams[s].words[cursor[s] + step - 1, W_TIME])) - LATE_NS
                  for s in active if cursor[s] + step < len(streams[s].words)]
        until = max(min(bounds, default=NEVER), done_until)
        parts_g, parts_t = [carry_g], [carry_t]
        for s in active:
            st = streams[s]
            while True:
                cursor[s], clock[s], k = kern.read_window(st.words, cursor[s], clock[s], LATE_NS, until, st.start,
                                                          window.g, window.t)
                parts_g.append(window.g[:k].copy())
                parts_t.append(window.t[:k].copy())
                if k < len(window.g):
                    break
        upto = int(np.searchsorted(late_t, until, side="right"))
        parts_g.append(late_g[taken:upto])
        parts_t.append(late_t[taken:upto])
        taken = upto
        g, t = np.concatenate(parts_g), np.concatenate(parts_t)
        now = t <= until
        carry_g, carry_t = g[~now], t[~now]
        g, t = g[now], t[now]
        ready.append(g[np.lexsort((g, t))])
        n_ready += len(g)
        done_until = until
        finished = not active and not len(carry_g) and taken == len(late_g)
        if n_ready >= batch or finished:
            rows = np.concatenate(ready)
            full = len(rows) if finished else len(rows) // batch * batch
            for b in range(0, full, batch):
                yield rows[b:b + batch]
            ready, n_ready = [rows[full:]], len(rows) - full
            for st in streams:
                st.release_all()
        if finished:
            return
