"""Turn a raw directory (all ranks) into one event log in global sequence order.

Why a separate step: the program only appends raw records; here string ids are remapped to one
table, PCs and psource strings become location ids, rows are merged across threads and ranks by
time, and `target data` pairs get their kind. It runs on whatever exists, so a crashed run still
gives a (truncated) log. The raw files are memory-mapped, read by the kernels of finalize_kernels
(one scan per thread file, one pass per batch of log rows), and the log is written one batch at a
time while the next is filled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from quiver.formats import COLUMN_NAMES, EventKind, LogWriter
from quiver.formats.schema import COLUMN_DTYPES
from quiver.formats.sets import sorted_unique
from quiver.formats.stats import LogStats
from quiver.formats.writer import BATCH_ROWS, plain_engine_for
from quiver.tracer.finalize_control import (
    Interner,
    locations,
    module_renames,
    object_rows,
    run_metadata,
    stack_objects_of,
)
from quiver.tracer.finalize_control_arrays import construct_fixes, first_clauses, map_clauses, task_locations
from quiver.tracer.finalize_kernels import COLS32, COLS64, Kernels, kernels
from quiver.tracer.finalize_order import Scan, Stream, log_order, scan
from quiver.tracer.finalize_small import PLAIN_MAX_ROWS  # written uncompressed without pyarrow up to this
from quiver.tracer.rawread import RAW_WORDS, Module, ranks_in, read_rank
from quiver.tracer.symbolize import Location, dedup_modules, symbolize_with_objects

# Rows filled at a time: the log's own record batches (writer.BATCH_ROWS). Each batch's output arrays
# are fresh memory whose first touch costs as much as filling them (a page fault per 4 KiB, ~2.4 ms a
# MiB on these VMs); 2^18 rows (26 MiB a buffer) instead of 2^20 made finalize of a 970 k-row red-black
# log 0.46-0.63 s -> 0.31-0.39 s and halved the peak memory of `trace record` (docs/bench.md).
BATCH = BATCH_ROWS


@dataclass
class _RowSpace:
    """All thread files of the run in one global row space, and the kernels that read them."""

    streams: list[Stream]
    starts: np.ndarray     # first global row of each stream
    t0: int                # time 0 of the log
    kern: Kernels


@dataclass
class _Locations:
    """Location ids of psource strings (by global string id) and of PCs (sorted unique)."""

    table: list[Location]
    by_string: np.ndarray
    pcs: np.ndarray
    by_pc: np.ndarray


_NO_KEYS = (np.zeros(0, np.int64), np.zeros(0, np.int64))
_NO_FIXES = (np.zeros(0, np.int64), np.zeros(0, np.int32))


def _used_sources(streams: list[Stream], scans: list[Scan]) -> tuple[np.ndarray, np.ndarray]:
    """The psource string ids (global) and the adjusted PCs of rows without psource, sorted unique."""
    src_ids = [st.table[np.nonzero(sc.used_src)[0]] for st, sc in zip(streams, scans, strict=True)]
    uniq_src = sorted_unique(np.concatenate(src_ids)) if src_ids else np.zeros(0, np.int64)
    uniq_pc = sorted_unique(np.concatenate([sc.pcs for sc in scans])) if scans else np.zeros(0, np.uint64)
    return uniq_src, uniq_pc.astype(np.uint64)


class _Buffers:
    """Output arrays of one batch, reused: first touches of fresh memory (page faults) cost as much
    as filling it."""

    def __init__(self, rows: int) -> None:
        self.out64 = np.empty(len(COLS64) * rows, np.int64)
        self.out32 = np.empty(len(COLS32) * rows, np.int32)
        self.out16 = np.empty(rows, np.int16)
        self.pos = np.empty(rows, np.int64)

    def blocks(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The first k rows, C-contiguous (one numba type for full and partial batches)."""
        return (self.out64[:len(COLS64) * k].reshape(len(COLS64), k), self.out32[:len(COLS32) * k].reshape(len(COLS32), k),
                self.out16[:k], self.pos[:k])


def _columns(space: _RowSpace, rows: np.ndarray, locs: _Locations, task_locs: tuple[np.ndarray, np.ndarray] = _NO_KEYS,
             fixes: tuple[np.ndarray, np.ndarray] = _NO_FIXES, buf: _Buffers | None = None) -> dict[str, np.ndarray]:
    """Log columns of the global rows `rows`, in that order, plus `src` (the psource string id);
    views of `buf` when given."""
    k = len(rows)
    buf = buf or _Buffers(k)
    out64, out32, out16, pos = buf.blocks(k)
    bounds = space.kern.group_by_stream(rows, space.starts, pos)
    for si in np.nonzero(np.diff(bounds))[0]:
        st = space.streams[si]
        at = pos[bounds[si]:bounds[si + 1]]
        space.kern.fill_rows(st.words, rows, at, st.start, st.rank, st.table, space.t0, locs.by_string,
                           locs.pcs, locs.by_pc, task_locs[0], task_locs[1], fixes[0], fixes[1], out64, out32, out16)
    cols = {c: out64[i] for i, c in enumerate(COLS64)} | {c: out32[i] for i, c in enumerate(COLS32)}
    for c in ("addr", "addr2", "size"):
        cols[c] = cols[c].view(np.uint64)
    cols["kind"] = out16
    return cols


def _locations(uniq_src: np.ndarray, uniq_pc: np.ndarray, pc_locs: list[Location], strings: Interner) -> _Locations:
    """The location table from the parsed psource strings and the symbolised PCs (`pc_locs`)."""
    table, by_string, by_pc = locations(uniq_src.tolist(), pc_locs, strings)
    return _Locations(table, np.array(by_string, np.int64), uniq_pc, np.array(by_pc, np.int64))


def _control_rows(space: _RowSpace, scans: list[Scan], locs: _Locations) -> dict[str, np.ndarray]:
    """Log columns (before task locations and `target data` fixes) of the control rows of all
    streams, in stream order, and `row`: their global row ids."""
    rows = np.concatenate([sc.control + st.start for st, sc in zip(space.streams, scans, strict=True)] or
                          [np.zeros(0, np.int64)])
    cols = _columns(space, rows, locs)
    cols["row"] = rows
    return cols


def _raw_words(events: np.ndarray) -> np.ndarray:
    """The raw records as rows of RAW_WORDS int64 words, read-only (one numba type for all)."""
    words = np.asarray(events).view(np.int64).reshape(-1, RAW_WORDS) if len(events) else \
        np.zeros((0, RAW_WORDS), np.int64)
    words.flags.writeable = False
    return words


def finalize(raw_dir: Path, out: Path, run: dict[str, Any] | None = None, t0: int | None = None,
             progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Write the log `out` from `raw_dir`; returns the run metadata written. ``t0``: the monotonic
    time that becomes time 0 (default: the earliest rank start; `--split` gives every rank the same).
    ``progress(rows written, rows)`` is called after each batch.

    Memory: the raw files are memory-mapped, and the pages already read are released
    (finalize_order.py); besides them, the control rows (constructs, map clauses, task creations),
    the merge's window and three batches of rows (one being written, one being filled, one merged)."""
    raw_dir = Path(raw_dir)
    raws = [read_rank(raw_dir, r) for r in (ranks_in(raw_dir) if raw_dir.is_dir() else [])]
    strings = Interner()
    streams: list[Stream] = []
    renames: dict[str, str] = {}
    modules_by_rank: dict[int, list[Module]] = {}
    start = 0
    for rr in raws:
        table = np.array(strings.remap(rr.strings), np.int64)
        renames.update(module_renames(rr.info))
        for ev in rr.streams:
            streams.append(Stream(rr.rank, _raw_words(ev), table, start, getattr(ev, "_mmap", None)))
            start += len(ev)
    for rr in raws:
        modules_by_rank[rr.rank] = dedup_modules(rr.modules, renames)
    modules = dedup_modules([m for rr in raws for m in rr.modules], renames)
    n = start
    importer = None
    if n > PLAIN_MAX_ROWS and not plain_engine_for("zstd"):  # the writer will need pyarrow: import it while the passes below run
        importer = threading.Thread(target=_import_pyarrow, name="quiver-pyarrow-import")
        importer.start()
    kern = kernels(n)

    with ThreadPoolExecutor(2) as pool:  # the compiled kernels release the GIL
        scans = list(pool.map(lambda st: scan(kern, st), streams))
    raw = LogStats()
    for sc in scans:
        raw.merge(sc.stats)
    if t0 is None:
        t0 = min((int(rr.info["start_mono_ns"]) for rr in raws if "start_mono_ns" in rr.info),
                 default=raw.t_min if raw.t_min is not None else 0)
    last_ns = raw.t_max - t0 if raw.t_max is not None else None
    space = _RowSpace(streams, np.array([st.start for st in streams], dtype=np.int64), t0, kern)
    uniq_src, uniq_pc = _used_sources(streams, scans)
    no_locs = _Locations([], np.full(len(strings.strings) + 1, -1, np.int64), uniq_pc[:0], np.zeros(0, np.int64))
    control = _control_rows(space, scans, no_locs)  # what fixes and objects need: all but `loc`
    clauses = map_clauses(raws, control, modules_by_rank)
    with ThreadPoolExecutor(1) as pool:  # one symbolizer batch (code addresses, globals) overlaps the rest
        symbolized = pool.submit(symbolize_with_objects, uniq_pc, modules,
                                 [(exe, np.unique(maps["addr"])) for _, exe, maps in clauses if exe is not None])
        fixes = construct_fixes(control)
        stacks = [stack_objects_of(exe, maps, strings, first_clauses(maps))  # the debug info, meanwhile
                  for _, exe, maps in clauses]
        pc_locs, found = symbolized.result()
    found_by_clauses = iter(found)
    globals_by_clauses = [next(found_by_clauses) if exe is not None else [] for _, exe, _ in clauses]
    object_lists = object_rows(clauses, globals_by_clauses, stacks, strings, max((sc.top_alloc for sc in scans), default=-1))
    objects = None if object_lists is None else {c: np.array(v, COLUMN_DTYPES[c]) for c, v in object_lists.items()}
    locs = _locations(uniq_src, uniq_pc, pc_locs, strings)
    # only TASK_CREATE / TASK_DEPEND rows read the task locations (fill_rows): without them (most
    # offloading runs: no `nowait`), no second pass over the control rows
    has_tasks = raw.kinds[EventKind.TASK_CREATE] + raw.kinds[EventKind.TASK_DEPEND] > 0
    task_locs = task_locations(_control_rows(space, scans, locs)) if has_tasks else _NO_KEYS
    for st in streams:
        st.release_all()    # the control rows' pages
    n_objects = len(objects["kind"]) if objects is not None else 0
    has_access = any(sc.accesses for sc in scans)

    meta = run_metadata(raws, n + n_objects, has_access, run or {})
    meta["last_event_ns"] = last_ns
    stats = LogStats.of(objects) if objects is not None else LogStats()
    if raw.t_min is not None and raw.t_max is not None:   # the log's times: raw - t0, not below 0
        raw.t_min, raw.t_max = max(raw.t_min - t0, 0), max(raw.t_max - t0, 0)
    stats.merge(raw)
    # one thread writes batch k (Arrow compresses its columns on its own threads) while this one fills
    # batch k+1
    plain = n + n_objects <= PLAIN_MAX_ROWS   # uncompressed
    compression = None if plain else "zstd"
    if importer is not None:
        importer.join()     # usually done by now: the passes above overlap it
    with LogWriter(out, strings=strings.strings, locations=locs.table, run=meta, stats=stats,
                   compression=compression, engine="plain" if plain_engine_for(compression) else "pyarrow") as w, \
            ThreadPoolExecutor(1) as writer:
        pending = objects  # object rows merge in by time (few: one per object)
        writing: Future | None = None
        bufs = [_Buffers(min(n, BATCH)) for _ in range(2 if n > BATCH else 1)]
        done = 0
        for b, rows in enumerate(log_order(kern, streams, scans, BATCH)):
            cols = _columns(space, rows, locs, task_locs, fixes, bufs[b % len(bufs)])
            del cols["src"]
            done += len(rows)
            if pending is not None:
                last = cols["time_ns"][-1] if done < n else np.iinfo(np.int64).max
                take = pending["time_ns"] <= last
                if take.any():
                    cols = _merge_by_time({c: v[take] for c, v in pending.items()}, cols)
                    pending = {c: v[~take] for c, v in pending.items()} if (~take).any() else None
            if writing is not None:
                writing.result()
            writing = writer.submit(w.write_columns, cols)
            if progress is not None:
                progress(done, n)
        if writing is not None:
            writing.result()
        if pending is not None:
            w.write_columns(pending)
        if n + n_objects == 0:
            w.write_columns({c: np.zeros(0, COLUMN_DTYPES[c]) for c in COLUMN_NAMES})
    return meta


def _import_pyarrow() -> None:
    """Import what LogWriter's pyarrow engine imports (~0.025 s): in a thread, it overlaps the scans,
    the symbolizer's answer and the row passes, which mostly run without the GIL (C kernels, numpy,
    waiting on pipes). While the program runs it would not: it competes with the program for the
    cores (docs/bench.md, j16k)."""
    try:
        import pyarrow  # noqa: F401
        from pyarrow import ipc  # noqa: F401
    except ImportError:
        pass  # the writer says so


def _merge_by_time(first: dict[str, np.ndarray], second: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Rows of both, by time; at equal times `first` comes first."""
    both = {c: np.concatenate([first[c], second[c]]) for c in second}
    order = np.argsort(both["time_ns"], kind="stable")
    return {c: v[order] for c, v in both.items()}


