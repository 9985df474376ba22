"""Turn a raw directory (all ranks) into one event log in global sequence order.

Why a separate step: the program only appends raw records; here, with numpy over whole
columns, string ids are remapped to one table, PCs and psource strings become location ids,
rows are merged across threads and ranks by time, and `target data` pairs get their kind.
It runs on whatever exists, so a crashed run still gives a (truncated) log.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
from quiver.formats import COLUMN_NAMES, ConstructKind, EventKind, write_log
from quiver.formats.schema import COLUMN_DTYPES
from quiver.tracer.rawread import (
    F_AUX2_STR,
    F_AUX_STR,
    F_ID2_STR,
    F_NAME_INT,
    F_PC_RET,
    Module,
    RankRaw,
    ranks_in,
    read_rank,
)
from quiver.tracer.symbolize import UNKNOWN, Location, dedup_modules, parse_psource, symbolize

ALLOC_GLOBAL = 5


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
    sel = (values >= 0) & (values < len(table) - 1)
    if mask is not None:
        sel &= mask
    out[sel] = table[values[sel].astype(np.int64)]
    return out


def _module_renames(info: dict[str, str]) -> dict[str, str]:
    out = {}
    for line in info.get("devimg[]", "").splitlines():
        orig, _, copy = line.partition(" ")
        if copy:
            out[orig] = copy
    return out


def _global_objects(exe: Module | None, addrs: np.ndarray) -> list[tuple[int, int, str]]:
    """(start, size, name) of the executable's data symbols that contain any of `addrs`."""
    nm = shutil.which("llvm-nm-19") or shutil.which("nm")
    if exe is None or nm is None or len(addrs) == 0 or not Path(exe.path).exists():
        return []
    proc = subprocess.run([nm, "-S", "--defined-only", exe.path], check=False, capture_output=True, text=True)
    starts, sizes, names = [], [], []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "dDbBrRvV" and len(parts[2]) == 1:
            try:
                starts.append(int(parts[0], 16) + exe.bias)
                sizes.append(int(parts[1], 16))
                names.append(parts[3])
            except ValueError:
                continue
    if not starts:
        return []
    order = np.argsort(np.array(starts, dtype=np.uint64), kind="stable")
    st = np.array(starts, dtype=np.uint64)[order]
    sz = np.array(sizes, dtype=np.uint64)[order]
    i = np.searchsorted(st, addrs, side="right") - 1
    ok = (i >= 0) & (addrs < st[np.maximum(i, 0)] + sz[np.maximum(i, 0)])
    found = []
    for k in np.unique(i[ok]):
        j = int(order[k])
        found.append((starts[j], sizes[j], names[j]))
    return found


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


def finalize(raw_dir: Path, out: Path, run: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the log `out` from `raw_dir`; returns the run metadata written."""
    raw_dir = Path(raw_dir)
    ranks = ranks_in(raw_dir) if raw_dir.is_dir() else []
    raws: list[RankRaw] = [read_rank(raw_dir, r) for r in ranks]
    strings = Interner()
    parts: dict[str, list[np.ndarray]] = {}
    pcs_parts, psrc_parts, renames, modules = [], [], {}, []
    for rr in raws:
        ev = rr.events
        table = strings.remap(rr.strings)
        flags = ev["flags"]
        cols = {
            "time_ns": ev["time_ns"], "rank": np.full(len(ev), rr.rank, np.int32), "thread": ev["thread"],
            "kind": ev["kind"], "device": ev["device"], "addr": ev["addr"], "addr2": ev["addr2"],
            "size": ev["size"], "id": ev["id"], "op": ev["op"],
            "name": _remap(ev["name"], table, (flags & F_NAME_INT) == 0),
            "id2": _remap(ev["id2"], table, (flags & F_ID2_STR) != 0),
            "aux": _remap(ev["aux"], table, (flags & F_AUX_STR) != 0),
            "aux2": _remap(ev["aux2"], table, (flags & F_AUX2_STR) != 0),
        }
        for k, v in cols.items():
            parts.setdefault(k, []).append(v)
        pc = ev["pc"].copy()
        ret = ((flags & F_PC_RET) != 0) & (pc > 0)
        pc[ret] -= np.uint64(1)
        pcs_parts.append(pc)
        psrc_parts.append(_remap(ev["loc_str"], table))
        renames.update(_module_renames(rr.info))
        modules += rr.modules
    n = sum(len(rr.events) for rr in raws)
    cols = {k: np.concatenate(v) for k, v in parts.items()}
    if not cols:  # the program never loaded the tracer (or died before its first event)
        cols = {k: np.zeros(0, COLUMN_DTYPES[k]) for k in COLUMN_NAMES if k != "loc"}
    pcs = np.concatenate(pcs_parts) if pcs_parts else np.zeros(0, np.uint64)
    psrc = np.concatenate(psrc_parts) if psrc_parts else np.zeros(0, np.int64)
    modules = dedup_modules(modules, renames)

    # locations: psource strings first, then PCs
    locations: list[Location] = []
    loc = np.full(n, -1, np.int64)
    uniq_src, inv_src = np.unique(psrc, return_inverse=True)
    src_loc = np.full(len(uniq_src), -1, np.int64)
    for i, sid in enumerate(uniq_src):
        parsed = parse_psource(strings.strings[sid]) if sid >= 0 else None
        if parsed:
            src_loc[i] = len(locations)
            locations.append(parsed)
    loc = src_loc[inv_src] if n else loc
    need_pc = (loc < 0) & (pcs > 0)
    uniq_pc, inv_pc = np.unique(pcs[need_pc], return_inverse=True)
    pc_locs = symbolize(uniq_pc, modules)
    base = len(locations)
    pc_ids = np.arange(base, base + len(uniq_pc), dtype=np.int64)
    locations += pc_locs
    unknown = np.array([p == UNKNOWN for p in pc_locs], dtype=bool)
    pc_ids[unknown] = -1
    loc[need_pc] = pc_ids[inv_pc]
    locations = _normalize_files(locations)
    # one id per distinct location
    uniq_locs = sorted(set(locations))
    loc_index = {x: i for i, x in enumerate(uniq_locs)}
    relabel = np.array([loc_index[x] for x in locations] + [-1], dtype=np.int64)
    loc = np.where(loc >= 0, relabel[np.where(loc >= 0, loc, len(locations))], -1)
    cols["loc"] = loc

    _pair_target_data(cols)
    cols, _ = _add_globals(cols, modules, raws, strings)

    # global sequence order
    t_start = min((int(rr.info["start_mono_ns"]) for rr in raws if "start_mono_ns" in rr.info),
                  default=int(cols["time_ns"].min()) if len(cols["time_ns"]) else 0)
    order = np.lexsort((np.arange(len(cols["time_ns"])), cols["thread"], cols["rank"], cols["time_ns"]))
    cols = {k: v[order] for k, v in cols.items()}
    cols["time_ns"] = np.maximum(cols["time_ns"] - t_start, 0)

    meta = _run_metadata(raws, cols, run or {})
    write_log(out, cols, strings=strings.strings, locations=uniq_locs, run=meta)
    return meta


def _pair_target_data(cols: dict[str, np.ndarray]) -> None:
    """Enter/exit constructs that open/close a `target data` region become DATA / DATA_END."""
    kind, op = cols["kind"], cols["op"]
    is_end = (kind == EventKind.CONSTRUCT_BEGIN) & (op == ConstructKind.TARGET_DATA_END)
    if not is_end.any():
        return
    key = cols["rank"].astype(np.int64) << 40
    opened = np.unique(key[is_end] | cols["aux2"][is_end])
    cons = (kind == EventKind.CONSTRUCT_BEGIN) | (kind == EventKind.CONSTRUCT_END)
    hit = cons & (op == ConstructKind.TARGET_ENTER_DATA) & np.isin(key | cols["id"], opened)
    op[hit] = ConstructKind.TARGET_DATA
    ends = (kind == EventKind.CONSTRUCT_END) & (op == ConstructKind.TARGET_EXIT_DATA)
    ends_of = np.isin(key | cols["id"], key[is_end] | cols["id"][is_end])
    op[ends & ends_of] = ConstructKind.TARGET_DATA_END


def _add_globals(cols: dict[str, np.ndarray], modules: list[Module], raws: list[RankRaw],
                 strings: Interner) -> tuple[dict[str, np.ndarray], int]:
    """ALLOC (op 5) rows, at time 0, for the executable's global objects behind mapped sections."""
    maps = cols["kind"] == EventKind.MAP_CLAUSE
    if not maps.any() or not raws:
        return cols, 0
    exe_path = raws[0].info.get("exe")
    exe = next((m for m in modules if m.path == exe_path), None)
    found = _global_objects(exe, np.unique(cols["addr"][maps]))
    if not found:
        return cols, 0
    k = len(found)
    next_id = int(cols["id"][cols["kind"] == EventKind.ALLOC].max(initial=-1)) + 1
    t0 = min((int(rr.info["start_mono_ns"]) for rr in raws if "start_mono_ns" in rr.info),
             default=int(cols["time_ns"].min()))
    new = {
        "time_ns": np.full(k, t0, np.int64), "rank": np.zeros(k, np.int32), "thread": np.zeros(k, np.int32),
        "kind": np.full(k, EventKind.ALLOC, np.int16), "device": np.full(k, -1, np.int32),
        "addr": np.array([f[0] for f in found], np.uint64), "addr2": np.zeros(k, np.uint64),
        "size": np.array([f[1] for f in found], np.uint64), "id": np.arange(next_id, next_id + k),
        "op": np.full(k, ALLOC_GLOBAL, np.int32),
        "name": np.array([strings.add(f[2]) for f in found], np.int64),
        "id2": np.full(k, -1, np.int64), "aux": np.zeros(k, np.int64), "aux2": np.zeros(k, np.int64),
        "loc": np.full(k, -1, np.int64),
    }
    return {c: np.concatenate([new[c].astype(v.dtype), v]) for c, v in cols.items()}, k


def _run_metadata(raws: list[RankRaw], cols: dict[str, np.ndarray], run: dict[str, Any]) -> dict[str, Any]:
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
        "events": len(cols["kind"]),
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
    meta.setdefault("truncated", not clean)
    meta["truncated"] = bool(meta["truncated"]) or not clean
    meta.setdefault("has_accesses", bool((cols["kind"] == EventKind.ACCESS).any()))
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
