"""What finalize derives from a run's control rows and metadata, in plain Python (no numpy).

Why apart from finalize.py: the control rows (constructs, map clauses, task creations: a few per
construct, not per access) and the string, module and location tables are small, and both finalize
paths use these same functions: the numpy one for big runs (tracer/finalize.py, columns passed as
lists) and the one of small runs (tracer/finalize_small.py), which must not import numpy.
Control columns: dicts of equal-length lists by log column name, plus `row` (global row) and `src`
(psource string id).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from quiver.formats.schema import COLUMN_DEFAULTS, COLUMN_NAMES, AllocKind, ConstructKind, EventKind
from quiver.tracer.objects import stack_objects
from quiver.tracer.rawread import Module, RankRaw
from quiver.tracer.symbolize import UNKNOWN, Location, parse_psource

Columns = dict[str, list[int]]


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

    def remap(self, local: list[str]) -> list[int]:
        """Global id of each local string id (list index = local id), then -1."""
        return [self.add(s) for s in local] + [-1]


def module_renames(info: dict[str, str]) -> dict[str, str]:
    out = {}
    for line in info.get("devimg[]", "").splitlines():
        orig, _, copy = line.partition(" ")
        if copy:
            out[orig] = copy
    return out


def normalize_files(locs: list[Location]) -> list[Location]:
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


def locations(uniq_src: Sequence[int], pc_locs: list[Location],
              strings: Interner) -> tuple[list[Location], list[int], list[int]]:
    """The location table from the parsed psource strings (global ids `uniq_src`, sorted unique) and
    the symbolised PCs; the location id of each string id (then -1) and of each PC (-1: none)."""
    raw_locs: list[Location | None] = [parse_psource(strings.strings[int(i)]) for i in uniq_src]
    known = [x for x in raw_locs if x] + [x for x in pc_locs if x != UNKNOWN]
    fix = dict(zip(known, normalize_files(known), strict=True))
    table = sorted(set(fix.values()))
    index = {x: i for i, x in enumerate(table)}
    by_string = [-1] * (len(strings.strings) + 1)
    for sid, loc in zip(uniq_src, raw_locs, strict=True):
        if loc:
            by_string[int(sid)] = index[fix[loc]]
    by_pc = [index[fix[x]] if x != UNKNOWN else -1 for x in pc_locs]
    return table, by_string, by_pc


def construct_fixes(control: Columns) -> tuple[list[int], list[int]]:
    """Global row positions whose op must change (ascending), and the new ops: enter/exit constructs
    that open/close a `target data` region become TARGET_DATA / TARGET_DATA_END."""
    begin, end = int(EventKind.CONSTRUCT_BEGIN), int(EventKind.CONSTRUCT_END)
    sel = [i for i, k in enumerate(control["kind"]) if k in (begin, end)]
    rank, kind, op, ids, aux2 = (control[c] for c in ("rank", "kind", "op", "id", "aux2"))
    ends = [i for i in sel if kind[i] == begin and op[i] == ConstructKind.TARGET_DATA_END]
    opened = {(rank[i] << 40) | aux2[i] for i in ends}
    closed = {(rank[i] << 40) | ids[i] for i in ends}
    fixes = []
    for i in sel:
        key = (rank[i] << 40) | ids[i]
        if op[i] == ConstructKind.TARGET_ENTER_DATA and key in opened:
            fixes.append((control["row"][i], int(ConstructKind.TARGET_DATA)))
        elif op[i] == ConstructKind.TARGET_EXIT_DATA and key in closed:
            fixes.append((control["row"][i], int(ConstructKind.TARGET_DATA_END)))
    fixes.sort()
    return [p for p, _ in fixes], [o for _, o in fixes]


def task_locations(control: Columns) -> tuple[list[int], list[int]]:
    """(rank << 40 | task id) -> location of the task's creation, sorted keys.

    OMPT's code address for a target task's creation has no line: the psource of the construct
    the target task ran is used instead. TASK_DEPEND rows take their task's location."""
    begin, create = int(EventKind.CONSTRUCT_BEGIN), int(EventKind.TASK_CREATE)
    kind, rank, loc = control["kind"], control["rank"], control["loc"]
    cons = [((rank[i] << 40) | control["id2"][i], loc[i]) for i, k in enumerate(kind)
            if k == begin and control["id2"][i] >= 0]
    tasks = [((rank[i] << 40) | control["id"][i], loc[i]) for i, k in enumerate(kind) if k == create]
    first: dict[int, int] = {}
    for key, v in cons + tasks:   # constructs first: they win over the creation's code address
        if v >= 0:
            first.setdefault(key, v)
    keys = sorted(first)
    return keys, [first[k] for k in keys]


MAP_FIELDS = ("time_ns", "thread", "addr", "addr2", "name", "src")


def map_clauses(raws: list[RankRaw], control: Columns,
                modules_by_rank: dict[int, list[Module]]) -> list[tuple[int, Module | None, Columns]]:
    """(rank, its executable, its map clause rows) of each rank with map clauses."""
    out = []
    clause = int(EventKind.MAP_CLAUSE)
    for rr in raws:
        sel = [i for i, (k, r) in enumerate(zip(control["kind"], control["rank"], strict=True))
               if k == clause and r == rr.rank]
        if sel:
            maps = {c: [control[c][i] for i in sel] for c in MAP_FIELDS}
            exe = next((m for m in modules_by_rank.get(rr.rank, []) if m.path == rr.info.get("exe")), None)
            out.append((rr.rank, exe, maps))
    return out


def first_clauses(maps: Columns) -> list[int]:
    """Positions (ascending) of the earliest clause of each distinct (construct source, variable)."""
    times = maps["time_ns"]
    seen: set[tuple[int, int]] = set()
    firsts = []
    for i in sorted(range(len(times)), key=times.__getitem__):
        pair = (maps["src"][i], maps["name"][i])
        if pair not in seen:
            seen.add(pair)
            firsts.append(i)
    return sorted(firsts)


def stack_objects_of(exe: Module | None, maps: Columns, strings: Interner,
                     firsts: Sequence[int] | None = None) -> list[tuple[int, str, int]]:
    """(map row, variable, size) of the locals named by map clauses: the first clause of each
    (function of the construct, variable) that the debug info knows as a local of that function.
    ``firsts``: first_clauses(maps) when the caller computed it (the array form)."""
    if exe is None:
        return []
    times = maps["time_ns"]
    first: dict[tuple[str, str], int] = {}   # a loop over distinct (source, variable) pairs only
    for i in first_clauses(maps) if firsts is None else firsts:
        src, name = int(maps["src"][i]), int(maps["name"][i])
        ps = parse_psource(strings.strings[src]) if src >= 0 else None
        var = strings.strings[name].split(".")[0] if name >= 0 else ""
        if ps and var.isidentifier():
            key = (ps[3], var)
            if key not in first or times[i] < times[first[key]]:
                first[key] = i
    return [(first[(func, var)], var, size) for (func, var), size in stack_objects(exe.path, set(first)).items()]


def object_rows(clauses: list[tuple[int, Module | None, Columns]], globals_by_clauses: list[list[tuple[int, int, str]]],
                stacks: list[list[tuple[int, str, int]]], strings: Interner, top_alloc: int) -> Columns | None:
    """ALLOC rows (every log column) for each rank's global (op 5, at the start) and stack (op 6, just
    before the first map clause naming them) objects behind mapped sections: `globals_by_clauses` and
    `stacks` are those of each entry of `clauses` (map_clauses)."""
    rows: list[tuple[int, int, int, int, int, int, int]] = []  # rank, thread, time, op, addr, size, name
    for (rank, _exe, maps), symbols, stack in zip(clauses, globals_by_clauses, stacks, strict=True):
        for start, size, name in symbols:
            rows.append((rank, 0, 0, int(AllocKind.GLOBAL), start, size, strings.add(name)))
        for i, var, size in stack:
            rows.append((rank, maps["thread"][i], maps["time_ns"][i] - 1, int(AllocKind.STACK),
                         maps["addr2"][i], size, strings.add(var)))
    if not rows:
        return None
    k = len(rows)
    cols = {c: [COLUMN_DEFAULTS[c]] * k for c in COLUMN_NAMES}
    for j, c in enumerate(("rank", "thread", "time_ns", "op", "addr", "size", "name")):
        cols[c] = [r[j] for r in rows]
    cols["time_ns"] = [max(t, 0) for t in cols["time_ns"]]
    cols["kind"] = [int(EventKind.ALLOC)] * k
    cols["id"] = list(range(top_alloc + 1, top_alloc + 1 + k))  # after the program's allocation ids
    return cols


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


def run_metadata(raws: list[RankRaw], events: int, has_access: bool, run: dict[str, Any]) -> dict[str, Any]:
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
