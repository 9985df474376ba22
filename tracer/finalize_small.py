"""finalize of a small raw directory without numpy: the same log, byte for byte, as tracer/finalize.py.

Why: importing numpy costs ~0.1-0.2 s of CPU, most of what `trace record` adds to a short program,
while a small run has a few hundred records. A run of many small kernels (12,000 target regions,
~180,000 records) fits in one record batch too: its numpy import, in a thread while the program ran,
competed with the program's threads for the cores (2 here), and the passes below take a few ns per
record, so such runs take this path as well, up to SMALL_MAX_ROWS (one record batch). The per-record passes are the C library's (finalize_clib,
called on bytearray and array.array buffers), the control rows' passes and the metadata are
finalize_control's (both paths use them); what is left here is the glue: the log order of a run that
fits in one batch is a stable sort by time (finalize_order's merge gives exactly that order), object
rows merge in by time, and the log is written without pyarrow (formats/ipc_file.py): uncompressed up
to PLAIN_MAX_ROWS rows, zstd-compressed above (formats/zstd.py), as finalize writes them. Bigger runs
(or above PLAIN_MAX_ROWS without libzstd), or no C library, return None: finalize.py does them.
"""

from __future__ import annotations

import ctypes
import mmap
import threading
from array import array
from bisect import bisect_left
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quiver.formats.schema import COLUMN_NAMES, COLUMNS, TYPE_CODES, ConstructKind, EventKind
from quiver.formats.stats import KINDS, LogStats
from quiver.formats.writer import BATCH_ROWS, LogWriter, plain_engine_for
from quiver.tracer.finalize_clib import CONSTS, Maps, library
from quiver.tracer.finalize_control import (
    MAP_FIELDS,
    Interner,
    locations,
    module_renames,
    object_rows,
    run_metadata,
    stack_objects_of,
    task_locations,
)
from quiver.tracer.rawread import (
    RAW_BYTES,
    Module,
    RankRaw,
    map_event_bytes,
    ranks_in,
    raw_event_bytes,
    read_rank,
)
from quiver.tracer.symbolize import dedup_modules, symbolize_with_objects

# Logs of up to this many rows are written uncompressed without pyarrow (formats/ipc_file.py), by both
# finalize paths: its import would cost a small run more than the whole finalize; at ~100 bytes a row
# the file stays small.
PLAIN_MAX_ROWS = 1 << 14
# Runs of up to this many rows (one record batch) take this path when the log can be compressed without
# pyarrow (small_max_rows)
SMALL_MAX_ROWS = BATCH_ROWS
# the output blocks of qv_fin_fill, in row order (finalize_kernels.COLS64 / COLS32)
COLS64 = ("time_ns", "addr", "addr2", "size", "id", "id2", "aux", "aux2")
COLS32 = ("rank", "thread", "device", "loc", "op", "name", "src")
_TYPES = dict(COLUMNS)
_UNSIGNED = ("addr", "addr2", "size")


def _addr(buf: array | bytearray | mmap.mmap) -> int:
    """Address of a buffer's first byte (0 when empty: the C code then reads nothing)."""
    if not len(buf):
        return 0
    if isinstance(buf, array):
        return buf.buffer_info()[0]
    return ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))


def _zeros(code: str, n: int) -> array:
    return array(code, [0]) * n


def small_max_rows() -> int:
    """The most rows this path finalizes: SMALL_MAX_ROWS where the log can be written compressed
    without pyarrow (libzstd), else PLAIN_MAX_ROWS (uncompressed)."""
    return max(SMALL_MAX_ROWS, PLAIN_MAX_ROWS) if plain_engine_for("zstd") else PLAIN_MAX_ROWS


class _Stream:
    """One thread file: its records (mapped copy-on-write, or a bytearray), its rank, its rank's string table,
    first global row."""

    def __init__(self, rank: int, data: mmap.mmap | bytearray, table: array, start: int) -> None:
        self.rank, self.data, self.table, self.start = rank, data, table, start
        self.rows = len(data) // RAW_BYTES


def _scan(lib: ctypes.CDLL, st: _Stream) -> tuple[list[int], list[int], list[int], int, int, LogStats]:
    """qv_fin_scan over the whole file: (used psource ids (local), PCs, control rows (local), accesses,
    largest ALLOC id, stats)."""
    n, n_strings = st.rows, len(st.table) - 1
    io = _zeros("q", 11)
    used = _zeros("B", n_strings)
    cap = 1 << max(6, int(2 * n + 2).bit_length())
    # calloc'd (ctypes): of these only the slots used are touched (a run of 180 k records: ~10 MB not cleared)
    keys, pcs = (ctypes.c_uint64 * cap)(), (ctypes.c_uint64 * max(n, 1))()
    control, late, threads, devices = ((ctypes.c_int64 * max(n, 1))() for _ in range(4))
    counts = _zeros("q", KINDS)
    lib.qv_fin_scan(_addr(st.data), n, n_strings, 0, ctypes.byref(CONSTS), _addr(io), _addr(used), keys, cap,
                    pcs, control, late, _addr(counts), threads, devices)
    _clock, n_access, top_alloc, t_min, t_max, n_pcs, n_control, _late, n_threads, n_devices, blocks = io.tolist()
    stats = LogStats()
    if n:   # finalize_order.scan merges nothing for an empty file
        stats = LogStats(counts.tolist(), t_min, t_max, {(st.rank, t) for t in threads[:n_threads]}, {st.rank},
                         set(devices[:n_devices]), n, blocks)
    return ([i for i, u in enumerate(used) if u], pcs[:n_pcs], control[:n_control], n_access, top_alloc, stats)


class _Fill:
    """qv_fin_fill over rows of any streams, with the location, task and fix tables."""

    def __init__(self, lib: ctypes.CDLL, streams: list[_Stream], t0: int) -> None:
        self.lib, self.streams, self.t0 = lib, streams, t0

    def columns(self, rows: list[int] | array, by_string: list[int], pcs: list[int], by_pc: list[int],
                tasks: tuple[list[int], list[int]] = ([], []), fixes: tuple[list[int], list[int]] = ([], [])) -> dict[str, array]:
        """Log columns (and `src`) of global rows `rows`, in that order."""
        k = len(rows)
        rows_a = rows if isinstance(rows, array) and rows.typecode == "q" else array("q", rows)
        held = [array("q", by_string), array("Q", pcs), array("q", by_pc), array("q", tasks[0]), array("q", tasks[1]),
                array("q", fixes[0]), array("q", fixes[1])]
        by_s, pcs_a, by_pc_a, task_keys, task_locs, fix_pos, fix_op = held
        maps = Maps(0, 0, _addr(by_s), len(by_s), _addr(pcs_a), _addr(by_pc_a), len(pcs_a), _addr(task_keys),
                    _addr(task_locs), len(task_keys), _addr(fix_pos), _addr(fix_op), len(fix_pos))
        # one array per column, of the log's type (uint64 for addr, addr2, size), filled in place
        cols = {c: _zeros("Q" if c in _UNSIGNED else "q", k) for c in COLS64}
        cols |= {c: _zeros("i", k) for c in COLS32}
        cols["kind"] = _zeros("h", k)
        c64 = (ctypes.c_void_p * len(COLS64))(*(_addr(cols[c]) for c in COLS64))
        c32 = (ctypes.c_void_p * len(COLS32))(*(_addr(cols[c]) for c in COLS32))
        # the positions of each stream's rows (qv_fin_group: positions grouped by stream, bounds per stream)
        starts = array("q", [st.start for st in self.streams])
        pos, bounds, fill = _zeros("q", k), _zeros("q", len(starts) + 1), _zeros("q", len(starts))
        if k and len(starts):
            self.lib.qv_fin_group(_addr(rows_a), k, _addr(starts), len(starts), _addr(pos), _addr(bounds), _addr(fill))
        for si, st in enumerate(self.streams):
            lo, hi = bounds[si], bounds[si + 1]
            if lo == hi:
                continue
            maps.table, maps.n_table = _addr(st.table), len(st.table)
            self.lib.qv_fin_fill_cols(_addr(st.data), _addr(rows_a), _addr(pos) + 8 * lo, hi - lo, st.start, st.rank,
                                      self.t0, ctypes.byref(maps), ctypes.byref(CONSTS), c64, c32,
                                      _addr(cols["kind"]))
        return cols


def _lists(cols: dict[str, array]) -> dict[str, list[int]]:
    return {c: v.tolist() for c, v in cols.items()}


def finalize_small(raw_dir: Path, out: Path, run: dict[str, Any] | None = None,
                   progress: Callable[[int, int], None] | None = None) -> dict[str, Any] | None:
    """finalize.finalize(raw_dir, out, run, progress=progress) for a run whose log has at most
    PLAIN_MAX_ROWS rows; None (nothing written) for a bigger one or without the C library."""
    raw_dir = Path(raw_dir)
    lib = library()
    most = small_max_rows()
    if lib is None or raw_event_bytes(raw_dir) > most * RAW_BYTES:  # before reading
        return None
    raws: list[RankRaw] = [read_rank(raw_dir, r, map_event_bytes) for r in (ranks_in(raw_dir) if raw_dir.is_dir() else [])]
    n = sum(len(ev) for rr in raws for ev in rr.streams) // RAW_BYTES
    if n > most:
        return None
    strings = Interner()
    streams: list[_Stream] = []
    renames: dict[str, str] = {}
    start = 0
    for rr in raws:
        table = array("q", strings.remap(rr.strings))
        renames.update(module_renames(rr.info))
        for ev in rr.streams:
            streams.append(_Stream(rr.rank, ev, table, start))
            start += streams[-1].rows
    modules_by_rank = {rr.rank: dedup_modules(rr.modules, renames) for rr in raws}
    modules: list[Module] = dedup_modules([m for rr in raws for m in rr.modules], renames)
    scans = [_scan(lib, st) for st in streams]
    raw = LogStats()
    for sc in scans:
        raw.merge(sc[5])
    t0 = min((int(rr.info["start_mono_ns"]) for rr in raws if "start_mono_ns" in rr.info),
             default=raw.t_min if raw.t_min is not None else 0)
    last_ns = raw.t_max - t0 if raw.t_max is not None else None
    fill = _Fill(lib, streams, t0)
    uniq_src = sorted({st.table[j] for st, sc in zip(streams, scans, strict=True) for j in sc[0]})
    uniq_pc = sorted({pc for sc in scans for pc in sc[1]})
    control_rows = array("q", [c + st.start for st, sc in zip(streams, scans, strict=True) for c in sc[2]])
    control = fill.columns(control_rows, [-1] * (len(strings.strings) + 1), [], [])
    fixes = _construct_fixes(lib, control, control_rows)
    clauses = _map_clauses(lib, raws, control, modules_by_rank)
    answer: list[Any] = []
    symbolizer = threading.Thread(target=lambda: answer.append(symbolize_with_objects(
        uniq_pc, modules, [(exe, maps["addr"]) for _, exe, maps in clauses if exe is not None])))
    symbolizer.start()    # the symbolizer's answer overlaps the fixes and the debug info
    try:
        stacks = [stack_objects_of(exe, maps, strings) for _, exe, maps in clauses]
    finally:
        symbolizer.join()
    pc_locs, found = answer[0]
    found_by_clauses = iter(found)
    globals_by_clauses = [next(found_by_clauses) if exe is not None else [] for _, exe, _ in clauses]
    object_lists = object_rows(clauses, globals_by_clauses, stacks, strings, max((sc[4] for sc in scans), default=-1))
    n_objects = len(object_lists["kind"]) if object_lists is not None else 0
    if n + n_objects > most:
        return None
    table, by_string, by_pc = locations(uniq_src, pc_locs, strings)
    has_tasks = raw.kinds[EventKind.TASK_CREATE] + raw.kinds[EventKind.TASK_DEPEND] > 0
    tasks = task_locations(_lists(fill.columns(control_rows, by_string, uniq_pc, by_pc))) if has_tasks else ([], [])
    meta = run_metadata(raws, n + n_objects, any(sc[3] for sc in scans), run or {})
    meta["last_event_ns"] = last_ns
    objects = None if object_lists is None else {c: array(TYPE_CODES[_TYPES[c]], v) for c, v in object_lists.items()}
    stats = LogStats.of(objects) if objects is not None else LogStats()
    if raw.t_min is not None and raw.t_max is not None:   # the log's times: raw - t0, not below 0
        raw.t_min, raw.t_max = max(raw.t_min - t0, 0), max(raw.t_max - t0, 0)
    stats.merge(raw)
    # log order: time, then global row (a stable sort of the global rows by their raw time)
    times, order, scratch = _zeros("q", n), _zeros("q", n), _zeros("q", n)
    for st in streams:
        lib.qv_fin_times(_addr(st.data), st.rows, _addr(times) + 8 * st.start)
    lib.qv_fin_order(_addr(times), n, _addr(order), _addr(scratch))
    del times, scratch
    cols = fill.columns(order, by_string, uniq_pc, by_pc, tasks, fixes)
    del cols["src"]
    if objects is not None:   # object rows merge in by time, before the rows of the same time
        cols = _merge_objects(objects, cols)
    compression = None if n + n_objects <= PLAIN_MAX_ROWS else "zstd"
    stored_addr = _zeros("Q", len(cols["addr"]))   # addr as the log stores it (formats/addr_delta.py)
    lib.qv_fin_delta(_addr(cols["addr"]), len(stored_addr), _addr(stored_addr))
    with LogWriter(out, strings=strings.strings, locations=table, run=meta, stats=stats, compression=compression,
                   engine="plain") as w:
        w.write_columns(cols, stored_addr=stored_addr, time_sorted=True)   # log order: by time
    if progress is not None and n:
        progress(n, n)
    return meta


def _map_clauses(lib: ctypes.CDLL, raws: list[RankRaw], control: dict[str, array],
                 modules_by_rank: dict[int, list[Module]]) -> list[tuple[int, Module | None, dict[str, list[int]]]]:
    """finalize_control.map_clauses(raws, control, modules_by_rank) of the control rows' columns, the
    rows of each rank selected and their fields gathered in C (qv_fin_select_kind_rank, qv_fin_gather)."""
    n = len(control["kind"])
    sel = _zeros("q", n)
    out = []
    for rr in raws:
        m = lib.qv_fin_select_kind_rank(_addr(control["kind"]), _addr(control["rank"]), n, int(EventKind.MAP_CLAUSE),
                                        rr.rank, _addr(sel))
        if not m:
            continue
        maps = {}
        for c in MAP_FIELDS:
            col = control[c]
            got = array(col.typecode, [0]) * m
            lib.qv_fin_gather(_addr(col), col.itemsize, _addr(sel), m, _addr(got))
            maps[c] = got.tolist()
        exe = next((mod for mod in modules_by_rank.get(rr.rank, []) if mod.path == rr.info.get("exe")), None)
        out.append((rr.rank, exe, maps))
    return out


_FIX_KINDS = (EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END, ConstructKind.TARGET_DATA,
              ConstructKind.TARGET_ENTER_DATA, ConstructKind.TARGET_EXIT_DATA, ConstructKind.TARGET_DATA_END)


def _construct_fixes(lib: ctypes.CDLL, control: dict[str, array], rows: array) -> tuple[list[int], list[int]]:
    """finalize_control.construct_fixes(control) (qv_fin_fixes) of the control rows' columns."""
    n = len(rows)
    scratch, pos, ops = _zeros("q", 2 * n), _zeros("q", n), _zeros("q", n)
    ck = array("q", [int(k) for k in _FIX_KINDS])
    m = lib.qv_fin_fixes(_addr(control["kind"]), _addr(control["op"]), _addr(control["id"]), _addr(control["aux2"]),
                         _addr(control["rank"]), _addr(rows), n, _addr(ck), _addr(scratch), _addr(pos), _addr(ops))
    return pos[:m].tolist(), ops[:m].tolist()


def _merge_objects(objects: dict[str, array], cols: dict[str, array]) -> dict[str, array]:
    """The rows of both by time, at equal times the object rows first (finalize._merge_by_time's
    stable sort): the few object rows, sorted stably, go in before the first row of `cols` (already
    in time order) that is not earlier; the columns are copied slice by slice."""
    times = cols["time_ns"]
    order = sorted(range(len(objects["time_ns"])), key=objects["time_ns"].__getitem__)
    at = [bisect_left(times, objects["time_ns"][i]) for i in order]
    out = {}
    for c in COLUMN_NAMES:
        v, o = cols[c], objects[c]
        merged, last = array(v.typecode), 0
        for i, p in zip(order, at, strict=True):
            merged += v[last:p]
            merged.append(o[i])
            last = p
        merged += v[last:]
        out[c] = merged
    return out


def finalize_run(raw_dir: Path, out: Path, run: dict[str, Any] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """finalize.finalize(raw_dir, out, run, progress=progress): without numpy when the run is small."""
    meta = finalize_small(raw_dir, out, run, progress)
    if meta is None:    # a big run (or no C library): the numpy path
        from quiver.tracer.finalize import finalize

        meta = finalize(raw_dir, out, run, progress=progress)
    return meta
