"""Turn a raw directory (all ranks) into one event log in global sequence order.

Why a separate step: the program only appends raw records; here, with numpy over whole
columns, string ids are remapped to one table, PCs and psource strings become location ids,
rows are merged across threads and ranks by time, and `target data` pairs get their kind.
It runs on whatever exists, so a crashed run still gives a (truncated) log. The raw files
are memory-mapped and the log is written one batch of rows at a time.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from quiver.formats import COLUMN_NAMES, ConstructKind, EventKind, LogWriter
from quiver.formats.schema import COLUMN_DEFAULTS, COLUMN_DTYPES
from quiver.tracer.objects import global_objects, stack_objects
from quiver.tracer.rawread import (
    F_AUX2_STR,
    F_AUX_STR,
    F_ID2_STR,
    F_NAME_INT,
    F_PC_RET,
    RAW_DTYPE,
    RAW_WORDS,
    Module,
    RankRaw,
    ranks_in,
    read_rank,
)
from quiver.tracer.symbolize import UNKNOWN, Location, dedup_modules, parse_psource, symbolize

ALLOC_GLOBAL = 5
ALLOC_STACK = 6


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


def _remap(values: np.ndarray, table: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """values -> table[values] where values >= 0 (and mask), else unchanged."""
    out = values.astype(np.int64, copy=True)
    sel = np.nonzero((values >= 0) & (values < len(table) - 1))[0]  # few rows carry strings
    if mask is not None:
        sel = sel[mask[sel]]
    out[sel] = table[out[sel]]
    return out


def _remap_flagged(values: np.ndarray, flags: np.ndarray, bit: int, when_set: bool, table: np.ndarray) -> np.ndarray:
    """`_remap` where the flag `bit` is set (when_set) or clear; the flag is tested on candidates only."""
    out = values.astype(np.int64, copy=True)
    sel = np.nonzero((values >= 0) & (values < len(table) - 1))[0]
    sel = sel[((flags[sel] & bit) != 0) == when_set]
    out[sel] = table[out[sel]]
    return out


def _rank_table(streams: list[_Stream], rank: int) -> np.ndarray:
    return next(st.table for st in streams if st.rank == rank)


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


@dataclass
class _Stream:
    """One thread file: its rows, its rank's string table, its place in the global row space."""

    rank: int
    events: np.ndarray
    table: np.ndarray
    start: int


@dataclass
class _Locations:
    """Location ids of psource strings (by global string id) and of PCs (sorted unique)."""

    table: list[Location]
    by_string: np.ndarray
    pcs: np.ndarray
    by_pc: np.ndarray

    def of(self, rows: np.ndarray, loc_str: np.ndarray) -> np.ndarray:
        loc = np.full(len(rows), -1, np.int64)
        has_src = loc_str >= 0
        loc[has_src] = self.by_string[loc_str[has_src]]
        pc = _adjusted_pcs(rows)
        need = (loc < 0) & (pc > 0)
        if need.any() and len(self.pcs):
            i = np.clip(np.searchsorted(self.pcs, pc[need]), 0, len(self.pcs) - 1)
            loc[need] = np.where(self.pcs[i] == pc[need], self.by_pc[i], -1)
        return loc


def _adjusted_pcs(rows: np.ndarray) -> np.ndarray:
    pc = rows["pc"].copy()
    ret = ((rows["flags"] & F_PC_RET) != 0) & (pc > 0)
    pc[ret] -= np.uint64(1)
    return pc


def _locations(streams: list[_Stream], strings: Interner, modules: list[Module]) -> _Locations:
    """Parse psource strings and symbolise every PC that has no psource, one batch per object."""
    src_ids, pcs = [], []
    for st in streams:
        ev = st.events
        ls = _remap(ev["loc_str"], st.table)
        src_ids.append(np.unique(ls[ls >= 0]))
        pc = _adjusted_pcs(ev)
        pcs.append(np.unique(pc[(ls < 0) & (pc > 0)]))
    uniq_src = np.unique(np.concatenate(src_ids)) if src_ids else np.zeros(0, np.int64)
    uniq_pc = np.unique(np.concatenate(pcs)) if pcs else np.zeros(0, np.uint64)
    raw_locs: list[Location | None] = [parse_psource(strings.strings[int(i)]) for i in uniq_src]
    pc_locs = symbolize(uniq_pc, modules)
    known = [x for x in raw_locs if x] + [x for x in pc_locs if x != UNKNOWN]
    fix = dict(zip(known, _normalize_files(known), strict=True))
    table = sorted(set(fix.values()))
    index = {x: i for i, x in enumerate(table)}
    by_string = np.full(len(strings.strings) + 1, -1, np.int64)
    for sid, loc in zip(uniq_src, raw_locs, strict=True):
        if loc:
            by_string[int(sid)] = index[fix[loc]]
    by_pc = np.array([index[fix[x]] if x != UNKNOWN else -1 for x in pc_locs], dtype=np.int64)
    return _Locations(table, by_string, uniq_pc.astype(np.uint64), by_pc)


def _construct_fixes(streams: list[_Stream]) -> tuple[np.ndarray, np.ndarray]:
    """Global row positions whose op must change, and the new ops: enter/exit constructs that
    open/close a `target data` region become TARGET_DATA / TARGET_DATA_END."""
    pos, rank, kind, op, cid, aux2 = [], [], [], [], [], []
    for st in streams:
        ev = st.events
        sel = np.nonzero((ev["kind"] == EventKind.CONSTRUCT_BEGIN) | (ev["kind"] == EventKind.CONSTRUCT_END))[0]
        pos.append(sel + st.start)
        rank.append(np.full(len(sel), st.rank, np.int64))
        for lst, col in ((kind, "kind"), (op, "op"), (cid, "id"), (aux2, "aux2")):
            lst.append(ev[col][sel].astype(np.int64))
    if not pos:
        return np.zeros(0, np.int64), np.zeros(0, np.int32)
    pos_a, rank_a, kind_a, op_a, id_a, aux2_a = (np.concatenate(x) for x in (pos, rank, kind, op, cid, aux2))
    key = (rank_a << 40) | id_a
    is_end = (kind_a == EventKind.CONSTRUCT_BEGIN) & (op_a == ConstructKind.TARGET_DATA_END)
    opened = np.unique((rank_a[is_end] << 40) | aux2_a[is_end])
    to_data = (op_a == ConstructKind.TARGET_ENTER_DATA) & np.isin(key, opened)
    to_end = (op_a == ConstructKind.TARGET_EXIT_DATA) & np.isin(key, key[is_end])
    new_op = np.where(to_data, ConstructKind.TARGET_DATA, ConstructKind.TARGET_DATA_END)
    change = to_data | to_end
    order = np.argsort(pos_a[change])
    return pos_a[change][order], new_op[change][order].astype(np.int32)


def _map_rows(streams: list[_Stream], rank: int) -> dict[str, np.ndarray]:
    """The MAP_CLAUSE rows of one rank (few): time, thread, base, begin, name, psource ids."""
    cols: dict[str, list[np.ndarray]] = {c: [] for c in ("time_ns", "thread", "addr", "addr2", "name", "loc_str")}
    for st in streams:
        if st.rank != rank:
            continue
        ev = st.events[st.events["kind"] == EventKind.MAP_CLAUSE]
        for c, parts in cols.items():
            parts.append(_remap(ev[c], st.table) if c in ("name", "loc_str") else ev[c])
    return {c: np.concatenate(v) if v else np.zeros(0) for c, v in cols.items()}


def _task_locations(streams: list[_Stream], locs: _Locations) -> tuple[np.ndarray, np.ndarray]:
    """(rank << 40 | task id) -> location of the task's creation, sorted keys.

    OMPT's code address for a target task's creation has no line: the psource of the construct
    the target task ran is used instead. TASK_DEPEND rows take their task's location."""
    keys, vals = [], []
    for st in streams:  # constructs first: they win over the creation's code address
        ev = st.events[(st.events["kind"] == EventKind.CONSTRUCT_BEGIN) & (st.events["id2"] >= 0)]
        keys.append((np.int64(st.rank) << 40) | ev["id2"].astype(np.int64))
        vals.append(locs.of(ev, _remap(ev["loc_str"], st.table)))
    for st in streams:
        ev = st.events[st.events["kind"] == EventKind.TASK_CREATE]
        keys.append((np.int64(st.rank) << 40) | ev["id"].astype(np.int64))
        vals.append(locs.of(ev, _remap(ev["loc_str"], st.table)))
    if not keys:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    k, v = np.concatenate(keys), np.concatenate(vals)
    k, v = k[v >= 0], v[v >= 0]
    k, first = np.unique(k, return_index=True)
    return k, v[first]


def _object_rows(raws: list[RankRaw], streams: list[_Stream], modules_by_rank: dict[int, list[Module]],
                 strings: Interner, t0: int) -> dict[str, np.ndarray] | None:
    """ALLOC rows for each rank's global (op 5, at the start) and stack (op 6, at the first map
    clause naming them) objects behind mapped sections."""
    rows: list[tuple[int, int, int, int, int, int, int]] = []  # rank, thread, time, op, addr, size, name
    for rr in raws:
        maps = _map_rows(streams, rr.rank)
        if not len(maps["addr"]):
            continue
        exe = next((m for m in modules_by_rank.get(rr.rank, []) if m.path == rr.info.get("exe")), None)
        for start, size, name in global_objects(exe, np.unique(maps["addr"])):
            rows.append((rr.rank, 0, t0, ALLOC_GLOBAL, start, size, strings.add(name)))
        if exe is None:
            continue
        # first clause of each distinct (construct source, variable): a loop over distinct pairs only
        by_time = np.argsort(maps["time_ns"], kind="stable")
        pair = (maps["loc_str"][by_time].astype(np.int64) << 32) | (maps["name"][by_time].astype(np.int64) & 0xFFFFFFFF)
        _, first_of_pair = np.unique(pair, return_index=True)
        first: dict[tuple[str, str], int] = {}
        for i in sorted(by_time[first_of_pair]):
            src, name = int(maps["loc_str"][i]), int(maps["name"][i])
            ps = parse_psource(strings.strings[src]) if src >= 0 else None
            var = strings.strings[name].split(".")[0] if name >= 0 else ""
            if ps and var.isidentifier():
                key = (ps[3], var)
                if key not in first or maps["time_ns"][i] < maps["time_ns"][first[key]]:
                    first[key] = int(i)
        for (func, var), size in stack_objects(exe.path, set(first)).items():
            i = first[(func, var)]
            rows.append((rr.rank, int(maps["thread"][i]), int(maps["time_ns"][i]) - 1, ALLOC_STACK,
                         int(maps["addr2"][i]), size, strings.add(var)))
    if not rows:
        return None
    k = len(rows)
    cols = {c: np.full(k, COLUMN_DEFAULTS[c], COLUMN_DTYPES[c]) for c in COLUMN_NAMES}
    for j, c in enumerate(("rank", "thread", "time_ns", "op", "addr", "size", "name")):
        cols[c][:] = [r[j] for r in rows]
    cols["time_ns"] = np.maximum(cols["time_ns"] - t0, 0)
    cols["kind"][:] = EventKind.ALLOC
    top = max((int(st.events["id"][st.events["kind"] == EventKind.ALLOC].max(initial=-1)) for st in streams),
              default=-1)
    cols["id"][:] = np.arange(top + 1, top + 1 + k)  # after the program's allocation ids
    return cols


def _raw_words(events: np.ndarray) -> np.ndarray:
    """The raw records as rows of 12 int64 words: gathering rows of a plain int64 matrix is
    several times faster than fancy-indexing the structured (memory-mapped) array."""
    if not len(events):
        return np.zeros((0, RAW_WORDS), np.int64)
    return np.asarray(events).view(np.int64).reshape(-1, RAW_WORDS)


def _gather(streams: list[_Stream], words: list[np.ndarray], starts: np.ndarray,
            rows_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Raw records of the global rows `rows_idx` (in that order), and each row's stream."""
    which = np.searchsorted(starts, rows_idx, side="right") - 1
    rec = np.empty((len(rows_idx), RAW_WORDS), np.int64)
    used = np.unique(which)
    if len(used) == 1:
        si = int(used[0])
        rec[:] = words[si][rows_idx - streams[si].start]
    else:
        for si in used:
            sel = np.nonzero(which == si)[0]
            rec[sel] = words[int(si)][rows_idx[sel] - streams[int(si)].start]
    return rec.view(RAW_DTYPE).reshape(-1), which


def _batch_columns(streams: list[_Stream], words: list[np.ndarray], starts: np.ndarray, rows_idx: np.ndarray,
                   locs: _Locations, fix_pos: np.ndarray, fix_op: np.ndarray, t0: int,
                   task_locs: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    """Log columns for the global rows `rows_idx` (already in log order)."""
    ev, which = _gather(streams, words, starts, rows_idx)
    flags = ev["flags"]
    stream_rank = np.array([st.rank for st in streams], np.int32)
    cols = {"time_ns": np.maximum(ev["time_ns"] - t0, 0), "rank": stream_rank[which]}
    for c in ("thread", "kind", "device", "addr", "addr2", "size", "id", "op"):
        cols[c] = ev[c].astype(COLUMN_DTYPES[c])
    string_cols = {"name": (F_NAME_INT, False), "id2": (F_ID2_STR, True), "aux": (F_AUX_STR, True),
                   "aux2": (F_AUX2_STR, True), "loc_str": (0, False)}
    ranks = np.unique(cols["rank"])
    for c, (bit, when_set) in string_cols.items():  # each rank's local string ids -> the log's ids
        if len(ranks) == 1:
            out = _remap_flagged(ev[c], flags, bit, when_set, _rank_table(streams, int(ranks[0])))
        else:
            out = ev[c].astype(np.int64)
            for r in ranks:
                sel = cols["rank"] == r
                out[sel] = _remap_flagged(ev[c][sel], flags[sel], bit, when_set, _rank_table(streams, int(r)))
        cols[c] = out
    cols["loc"] = locs.of(ev, cols.pop("loc_str"))
    cols = {c: cols[c].astype(COLUMN_DTYPES[c], copy=False) for c in COLUMN_NAMES}
    tkeys, tlocs = task_locs
    task_rows = (cols["kind"] == EventKind.TASK_CREATE) | (cols["kind"] == EventKind.TASK_DEPEND)
    if len(tkeys) and task_rows.any():
        key = (cols["rank"][task_rows].astype(np.int64) << 40) | cols["id"][task_rows]
        j = np.clip(np.searchsorted(tkeys, key), 0, len(tkeys) - 1)
        found = tkeys[j] == key
        where = np.nonzero(task_rows)[0]
        cols["loc"][where[found]] = tlocs[j[found]]
    if len(fix_pos):
        i = np.clip(np.searchsorted(fix_pos, rows_idx), 0, len(fix_pos) - 1)
        hit = fix_pos[i] == rows_idx
        cols["op"][hit] = fix_op[i[hit]]
    return cols


def finalize(raw_dir: Path, out: Path, run: dict[str, Any] | None = None, t0: int | None = None) -> dict[str, Any]:
    """Write the log `out` from `raw_dir`; returns the run metadata written. ``t0``: the monotonic
    time that becomes time 0 (default: the earliest rank start; `--split` gives every rank the same).

    Memory: the raw files are memory-mapped; besides them, ~20 bytes per event (time, stream,
    order) and one batch of rows at a time."""
    raw_dir = Path(raw_dir)
    raws = [read_rank(raw_dir, r) for r in (ranks_in(raw_dir) if raw_dir.is_dir() else [])]
    strings = Interner()
    streams: list[_Stream] = []
    renames: dict[str, str] = {}
    modules_by_rank: dict[int, list[Module]] = {}
    start = 0
    for rr in raws:
        table = strings.remap(rr.strings)
        renames.update(_module_renames(rr.info))
        for ev in rr.streams:
            streams.append(_Stream(rr.rank, ev, table, start))
            start += len(ev)
    for rr in raws:
        modules_by_rank[rr.rank] = dedup_modules(rr.modules, renames)
    modules = dedup_modules([m for rr in raws for m in rr.modules], renames)
    n = start
    words = [_raw_words(st.events) for st in streams]
    starts = np.array([st.start for st in streams], dtype=np.int64)

    if t0 is None:
        t0 = min((int(rr.info["start_mono_ns"]) for rr in raws if "start_mono_ns" in rr.info),
                 default=min((int(st.events["time_ns"].min()) for st in streams if len(st.events)), default=0))
    times = np.concatenate([st.events["time_ns"] for st in streams]) if streams else np.zeros(0, np.int64)
    stream_of = np.repeat(np.arange(len(streams), dtype=np.int32), [len(st.events) for st in streams])
    order = np.lexsort((stream_of, times))  # stable: ties keep the thread's own order
    del times, stream_of

    locs = _locations(streams, strings, modules)
    fix_pos, fix_op = _construct_fixes(streams)
    task_locs = _task_locations(streams, locs)
    objects = _object_rows(raws, streams, modules_by_rank, strings, t0)
    n_objects = len(objects["kind"]) if objects is not None else 0
    has_access = any(bool((st.events["kind"] == EventKind.ACCESS).any()) for st in streams)

    meta = _run_metadata(raws, n + n_objects, has_access, run or {})
    with LogWriter(out, strings=strings.strings, locations=locs.table, run=meta) as w:
        pending = objects  # object rows merge in by time (few: one per object)
        for b in range(0, n, BATCH):
            cols = _batch_columns(streams, words, starts, order[b:b + BATCH], locs, fix_pos, fix_op, t0, task_locs)
            if pending is not None:
                last = cols["time_ns"][-1] if b + BATCH < n else np.iinfo(np.int64).max
                take = pending["time_ns"] <= last
                if take.any():
                    cols = _merge_by_time({c: v[take] for c, v in pending.items()}, cols)
                    pending = {c: v[~take] for c, v in pending.items()} if (~take).any() else None
            w.write_columns(cols)
        if pending is not None:
            w.write_columns(pending)
        if n + n_objects == 0:
            w.write_columns({c: np.zeros(0, COLUMN_DTYPES[c]) for c in COLUMN_NAMES})
    return meta


def _merge_by_time(first: dict[str, np.ndarray], second: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Rows of both, by time; at equal times `first` comes first."""
    both = {c: np.concatenate([first[c], second[c]]) for c in second}
    order = np.argsort(both["time_ns"], kind="stable")
    return {c: v[order] for c, v in both.items()}


def _run_metadata(raws: list[RankRaw], events: int, has_access: bool, run: dict[str, Any]) -> dict[str, Any]:
    from quiver import __version__

    infos = [rr.info for rr in raws]
    clean = bool(infos) and all(i.get("clean_exit") == "1" for i in infos)
    signals = [int(i["signal"]) for i in infos if "signal" in i]
    meta: dict[str, Any] = {
        "ranks": max(len(raws), 1),
        "threads": int(sum(rr.nthreads for rr in raws)),
        "devices": max((int(i.get("devices", 0)) for i in infos), default=0),
        "start_unix_ns": min((int(i["start_unix_ns"]) for i in infos if "start_unix_ns" in i), default=0),
        "host": socket.gethostname(),
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
    meta.update(run)
    meta["truncated"] = bool(meta.get("truncated", False)) or not clean
    meta.setdefault("has_accesses", has_access)
    meta.setdefault("program", meta["exe"])
    meta.setdefault("argv", [])
    meta.setdefault("exit_status", None)
    meta.setdefault("signal", None)
    return meta


def raw_dir_for(out: Path) -> Path:
    return out.with_name(out.name + ".raw")


def cleanup_device_images(raw_dir: Path) -> None:
    """Remove /tmp/tmpfile_* images the run loaded that are still there (the tracer unlinks them)."""
    if not raw_dir.is_dir():
        return
    names = set()
    for p in raw_dir.glob("r*.mod"):
        names.update(re.findall(r"(/tmp/tmpfile_\w+)", p.read_text(errors="replace")))
    for p in raw_dir.glob("r*.info"):
        names.update(re.findall(r"devimg\[\]=(/tmp/tmpfile_\w+)", p.read_text(errors="replace")))
    for name in names:
        try:
            os.unlink(name)
        except OSError:
            pass
