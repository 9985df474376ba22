"""Turn a raw directory (all ranks) into one event log in global sequence order.

Why a separate step: the program only appends raw records; here string ids are remapped to one
table, PCs and psource strings become location ids, rows are merged across threads and ranks by
time, and `target data` pairs get their kind. It runs on whatever exists, so a crashed run still
gives a (truncated) log. The raw files are memory-mapped, read by the kernels of finalize_kernels
(one scan per thread file, one pass per batch of log rows), and the log is written one batch at a
time while the next is filled.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from quiver.formats import COLUMN_NAMES, AllocKind, ConstructKind, EventKind, LogWriter
from quiver.formats.schema import COLUMN_DEFAULTS, COLUMN_DTYPES
from quiver.formats.sets import sorted_unique
from quiver.formats.stats import LogStats
from quiver.tracer.finalize_kernels import COLS32, COLS64, Kernels, kernels
from quiver.tracer.finalize_order import Scan, Stream, log_order, scan
from quiver.tracer.objects import stack_objects
from quiver.tracer.rawread import (
    RAW_WORDS,
    Module,
    RankRaw,
    ranks_in,
    read_rank,
)
from quiver.tracer.symbolize import UNKNOWN, Location, dedup_modules, parse_psource, symbolize_with_objects


class Interner:
    """One string table for the whole log."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self.ids: dict[str, int] = {}

    def add(self, s: str) -> int:
        i = self.ids.get(s)
        if i is None:
            i = self.ids[s] = len(self.strings)
            self.strings.append(s)
        return i

    def remap(self, local: list[str]) -> np.ndarray:
        """Global id of each local string id (array index = local id)."""
        return np.array([self.add(s) for s in local] + [-1], dtype=np.int64)


def _module_renames(info: dict[str, str]) -> dict[str, str]:
    out = {}
    for line in info.get("devimg[]", "").splitlines():
        orig, _, copy = line.partition(" ")
        if copy:
            out[orig] = copy
    return out


def _normalize_files(locs: list[Location]) -> list[Location]:
    """Give relative psource files the absolute path the debug info has for the same file."""
    absolute = [f for f, *_ in locs if f.startswith("/")]
    fix = {}
    for f, *_ in locs:
        if f.startswith("/") or f in fix or f == "??":
            continue
        tail = "/" + f.lstrip("./")
        cands = sorted({a for a in absolute if a.endswith(tail)})
        if len(cands) == 1:
            fix[f] = cands[0]
    return [(fix.get(f, f), ln, col, fn) for f, ln, col, fn in locs]


BATCH = 1 << 20
# Logs of up to this many rows are written uncompressed without pyarrow (formats/ipc_file.py): its
# import would cost a small run more than the whole finalize; at ~100 bytes a row the file stays small.
PLAIN_MAX_ROWS = 1 << 14


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


def _locations(uniq_src: np.ndarray, uniq_pc: np.ndarray, pc_locs: list[Location], strings: Interner) -> _Locations:
    """The location table from the parsed psource strings and the symbolised PCs (`pc_locs`)."""
    raw_locs: list[Location | None] = [parse_psource(strings.strings[int(i)]) for i in uniq_src]
    known = [x for x in raw_locs if x] + [x for x in pc_locs if x != UNKNOWN]
    fix = dict(zip(known, _normalize_files(known), strict=True))
    table = sorted(set(fix.values()))
    index = {x: i for i, x in enumerate(table)}
    by_string = np.full(len(strings.strings) + 1, -1, np.int64)
    for sid, loc in zip(uniq_src, raw_locs, strict=True):
        if loc:
            by_string[int(sid)] = index[fix[loc]]
    by_pc = np.array([index[fix[x]] if x != UNKNOWN else -1 for x in pc_locs], dtype=np.int64)
    return _Locations(table, by_string, uniq_pc, by_pc)


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


def _control_rows(space: _RowSpace, scans: list[Scan], locs: _Locations) -> dict[str, np.ndarray]:
    """Log columns (before task locations and `target data` fixes) of the control rows of all
    streams, in stream order, and `row`: their global row ids."""
    rows = np.concatenate([sc.control + st.start for st, sc in zip(space.streams, scans, strict=True)] or
                          [np.zeros(0, np.int64)])
    cols = _columns(space, rows, locs)
    cols["row"] = rows
    return cols


def _construct_fixes(control: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Global row positions whose op must change, and the new ops: enter/exit constructs that
    open/close a `target data` region become TARGET_DATA / TARGET_DATA_END."""
    sel = (control["kind"] == EventKind.CONSTRUCT_BEGIN) | (control["kind"] == EventKind.CONSTRUCT_END)
    pos_a = control["row"][sel]
    rank_a, kind_a, op_a, id_a, aux2_a = (control[c][sel].astype(np.int64) for c in ("rank", "kind", "op", "id", "aux2"))
    key = (rank_a << 40) | id_a
    is_end = (kind_a == EventKind.CONSTRUCT_BEGIN) & (op_a == ConstructKind.TARGET_DATA_END)
    opened = sorted_unique((rank_a[is_end] << 40) | aux2_a[is_end])
    to_data = (op_a == ConstructKind.TARGET_ENTER_DATA) & np.isin(key, opened)
    to_end = (op_a == ConstructKind.TARGET_EXIT_DATA) & np.isin(key, key[is_end])
    new_op = np.where(to_data, ConstructKind.TARGET_DATA, ConstructKind.TARGET_DATA_END)
    change = to_data | to_end
    order = np.argsort(pos_a[change])
    return pos_a[change][order], new_op[change][order].astype(np.int32)


def _task_locations(control: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(rank << 40 | task id) -> location of the task's creation, sorted keys.

    OMPT's code address for a target task's creation has no line: the psource of the construct
    the target task ran is used instead. TASK_DEPEND rows take their task's location."""
    rank = control["rank"].astype(np.int64) << 40
    cons = (control["kind"] == EventKind.CONSTRUCT_BEGIN) & (control["id2"] >= 0)
    task = control["kind"] == EventKind.TASK_CREATE
    # constructs first: they win over the creation's code address
    k = np.concatenate([rank[cons] | control["id2"][cons], rank[task] | control["id"][task]])
    v = np.concatenate([control["loc"][cons], control["loc"][task]]).astype(np.int64)
    k, v = k[v >= 0], v[v >= 0]
    k, first = np.unique(k, return_index=True)
    return k, v[first]


def _stack_objects(exe: Module | None, maps: dict[str, np.ndarray], strings: Interner) -> list[tuple[int, str, int]]:
    """(map row, variable, size) of the locals named by map clauses: the first clause of each
    (function of the construct, variable) that the debug info knows as a local of that function."""
    if exe is None:
        return []
    # first clause of each distinct (construct source, variable): a loop over distinct pairs only
    by_time = np.argsort(maps["time_ns"], kind="stable")
    pair = (maps["src"][by_time].astype(np.int64) << 32) | (maps["name"][by_time].astype(np.int64) & 0xFFFFFFFF)
    _, first_of_pair = np.unique(pair, return_index=True)
    first: dict[tuple[str, str], int] = {}
    for i in sorted(by_time[first_of_pair]):
        src, name = int(maps["src"][i]), int(maps["name"][i])
        ps = parse_psource(strings.strings[src]) if src >= 0 else None
        var = strings.strings[name].split(".")[0] if name >= 0 else ""
        if ps and var.isidentifier():
            key = (ps[3], var)
            if key not in first or maps["time_ns"][i] < maps["time_ns"][first[key]]:
                first[key] = int(i)
    return [(first[(func, var)], var, size) for (func, var), size in stack_objects(exe.path, set(first)).items()]


def _map_clauses(raws: list[RankRaw], control: dict[str, np.ndarray],
                 modules_by_rank: dict[int, list[Module]]) -> list[tuple[int, Module | None, dict[str, np.ndarray]]]:
    """(rank, its executable, its map clause rows) of each rank with map clauses."""
    out = []
    for rr in raws:
        sel = (control["kind"] == EventKind.MAP_CLAUSE) & (control["rank"] == rr.rank)
        maps = {c: control[c][sel] for c in ("time_ns", "thread", "addr", "addr2", "name", "src")}
        if len(maps["addr"]):
            exe = next((m for m in modules_by_rank.get(rr.rank, []) if m.path == rr.info.get("exe")), None)
            out.append((rr.rank, exe, maps))
    return out


def _object_rows(clauses: list[tuple[int, Module | None, dict[str, np.ndarray]]],
                 globals_by_clauses: list[list[tuple[int, int, str]]], stacks: list[list[tuple[int, str, int]]],
                 strings: Interner, top_alloc: int) -> dict[str, np.ndarray] | None:
    """ALLOC rows for each rank's global (op 5, at the start) and stack (op 6, just before the first
    map clause naming them) objects behind mapped sections: `globals_by_clauses` and `stacks` are those
    of each entry of `clauses` (_map_clauses)."""
    rows: list[tuple[int, int, int, int, int, int, int]] = []  # rank, thread, time, op, addr, size, name
    for (rank, _exe, maps), symbols, stack in zip(clauses, globals_by_clauses, stacks, strict=True):
        for start, size, name in symbols:
            rows.append((rank, 0, 0, int(AllocKind.GLOBAL), start, size, strings.add(name)))
        for i, var, size in stack:
            rows.append((rank, int(maps["thread"][i]), int(maps["time_ns"][i]) - 1, int(AllocKind.STACK),
                         int(maps["addr2"][i]), size, strings.add(var)))
    if not rows:
        return None
    k = len(rows)
    cols = {c: np.full(k, COLUMN_DEFAULTS[c], COLUMN_DTYPES[c]) for c in COLUMN_NAMES}
    for j, c in enumerate(("rank", "thread", "time_ns", "op", "addr", "size", "name")):
        cols[c][:] = [r[j] for r in rows]
    cols["time_ns"] = np.maximum(cols["time_ns"], 0)
    cols["kind"][:] = EventKind.ALLOC
    cols["id"][:] = np.arange(top_alloc + 1, top_alloc + 1 + k)  # after the program's allocation ids
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
        table = strings.remap(rr.strings)
        renames.update(_module_renames(rr.info))
        for ev in rr.streams:
            streams.append(Stream(rr.rank, _raw_words(ev), table, start, getattr(ev, "_mmap", None)))
            start += len(ev)
    for rr in raws:
        modules_by_rank[rr.rank] = dedup_modules(rr.modules, renames)
    modules = dedup_modules([m for rr in raws for m in rr.modules], renames)
    n = start
    if n > PLAIN_MAX_ROWS:  # the writer will need pyarrow: import it while the passes below run
        threading.Thread(target=_import_pyarrow, daemon=True).start()
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
    clauses = _map_clauses(raws, control, modules_by_rank)
    with ThreadPoolExecutor(1) as pool:  # one symbolizer batch (code addresses, globals) overlaps the rest
        symbolized = pool.submit(symbolize_with_objects, uniq_pc, modules,
                                 [(exe, sorted_unique(maps["addr"])) for _, exe, maps in clauses if exe is not None])
        fixes = _construct_fixes(control)
        stacks = [_stack_objects(exe, maps, strings) for _, exe, maps in clauses]  # the debug info, meanwhile
        pc_locs, found = symbolized.result()
    found_by_clauses = iter(found)
    globals_by_clauses = [next(found_by_clauses) if exe is not None else [] for _, exe, _ in clauses]
    objects = _object_rows(clauses, globals_by_clauses, stacks, strings, max((sc.top_alloc for sc in scans), default=-1))
    locs = _locations(uniq_src, uniq_pc, pc_locs, strings)
    # only TASK_CREATE / TASK_DEPEND rows read the task locations (fill_rows): without them (most
    # offloading runs: no `nowait`), no second pass over the control rows
    has_tasks = raw.kinds[EventKind.TASK_CREATE] + raw.kinds[EventKind.TASK_DEPEND] > 0
    task_locs = _task_locations(_control_rows(space, scans, locs)) if has_tasks else _NO_KEYS
    for st in streams:
        st.release_all()    # the control rows' pages
    n_objects = len(objects["kind"]) if objects is not None else 0
    has_access = any(sc.accesses for sc in scans)

    meta = _run_metadata(raws, n + n_objects, has_access, run or {})
    meta["last_event_ns"] = last_ns
    stats = LogStats.of(objects) if objects is not None else LogStats()
    if raw.t_min is not None and raw.t_max is not None:   # the log's times: raw - t0, not below 0
        raw.t_min, raw.t_max = max(raw.t_min - t0, 0), max(raw.t_max - t0, 0)
    stats.merge(raw)
    # one thread writes batch k (Arrow compresses its columns on its own threads) while this one fills
    # batch k+1
    plain = n + n_objects <= PLAIN_MAX_ROWS
    with LogWriter(out, strings=strings.strings, locations=locs.table, run=meta, stats=stats,
                   compression=None if plain else "zstd", engine="plain" if plain else "pyarrow") as w, \
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


def truncation_reason(infos: list[dict[str, str]], run: dict[str, Any]) -> str:
    """Why a log is truncated: from what the ranks wrote when they ended (qv_buffer.c), else from
    how the program ended; a recovered run whose ranks said nothing lost its launcher."""
    import signal

    sig = next((i["signal"] for i in infos if "signal" in i), run.get("signal"))
    if sig is not None:
        try:
            return f"signal {sig} ({signal.Signals(int(sig)).name})"
        except ValueError:
            return f"signal {sig}"
    abort = next((i["mpi_abort"] for i in infos if "mpi_abort" in i), None)
    if abort is not None:
        return f"MPI_Abort with error code {abort}"
    if run.get("recovered") or any("parent_died" in i for i in infos):
        return "launcher killed"
    status = run.get("exit_status")
    return "the program ended without flushing the tracer" + (f" (exit status {status})" if status else " (e.g. _exit)")


def _run_metadata(raws: list[RankRaw], events: int, has_access: bool, run: dict[str, Any]) -> dict[str, Any]:
    from quiver.formats.version import __version__

    infos = [rr.info for rr in raws]
    clean = bool(infos) and all(i.get("clean_exit") == "1" for i in infos)
    signals = [int(i["signal"]) for i in infos if "signal" in i]
    meta: dict[str, Any] = {
        "ranks": max(len(raws), 1),
        "threads": int(sum(rr.nthreads for rr in raws)),
        "devices": max((int(i.get("devices", 0)) for i in infos), default=0),
        "start_unix_ns": min((int(i["start_unix_ns"]) for i in infos if "start_unix_ns" in i), default=0),
        "host": os.uname().nodename,  # what gethostname() returns, without importing socket
        "tool_version": __version__,
        "events": events,
        "partial_records": int(sum(rr.partial_records for rr in raws)),
        "exe": infos[0].get("exe", "") if infos else "",
        "pid": int(infos[0].get("pid", 0)) if infos else 0,
        "ompt": any(i.get("ompt") == "1" for i in infos),
        "device_images": sorted({line.partition(" ")[0] for i in infos
                                 for line in i.get("devimg[]", "").splitlines() if line}),
    }
    if signals:
        meta["signal"] = signals[0]
    if any(i.get("access_limit") == "1" for i in infos):
        meta["access_limit_reached"] = True  # QUIVER_RAW_LIMIT_MB: later accesses were dropped
    meta.update({k: v for k, v in run.items() if k != "recovered"})
    meta["truncated"] = bool(meta.get("truncated", False)) or not clean
    if meta["truncated"] and not meta.get("truncated_reason"):
        meta["truncated_reason"] = truncation_reason(infos, run)
    meta.setdefault("has_accesses", has_access)
    meta.setdefault("program", meta["exe"])
    meta.setdefault("argv", [])
    meta.setdefault("exit_status", None)
    meta.setdefault("signal", None)
    return meta
