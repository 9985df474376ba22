"""finalize_control's per-row passes over numpy columns, for the numpy finalize of big runs.

Why a second form: a run of many short kernels has a few control rows per kernel (12,000 kernels:
~72,000 rows), and the list passes of finalize_control cost ~1 us per row in Python. These give the
same answers (tests/tracer/test_finalize_control_arrays.py holds them to the list passes) as array
operations; what follows the per-row selection (per distinct clause, per rank) stays in
finalize_control and is shared.
"""

from __future__ import annotations

import numpy as np
from quiver.formats.schema import ConstructKind, EventKind
from quiver.tracer.finalize_control import MAP_FIELDS
from quiver.tracer.rawread import Module, RankRaw

Arrays = dict[str, np.ndarray]


def construct_fixes(control: Arrays) -> tuple[np.ndarray, np.ndarray]:
    """finalize_control.construct_fixes: global rows whose op must change (ascending), new ops."""
    kind, op, rank, ids, aux2 = (control[c].astype(np.int64, copy=False) for c in ("kind", "op", "rank", "id", "aux2"))
    begin = kind == int(EventKind.CONSTRUCT_BEGIN)
    sel = begin | (kind == int(EventKind.CONSTRUCT_END))
    ends = begin & (op == int(ConstructKind.TARGET_DATA_END))
    opened = np.unique((rank[ends] << 40) | aux2[ends])
    closed = np.unique((rank[ends] << 40) | ids[ends])
    key = (rank << 40) | ids
    enter = sel & (op == int(ConstructKind.TARGET_ENTER_DATA)) & np.isin(key, opened)
    leave = sel & (op == int(ConstructKind.TARGET_EXIT_DATA)) & np.isin(key, closed)
    take = enter | leave
    pos = control["row"][take].astype(np.int64)
    new = np.where(enter[take], int(ConstructKind.TARGET_DATA), int(ConstructKind.TARGET_DATA_END)).astype(np.int32)
    order = np.argsort(pos, kind="stable")
    return pos[order], new[order]


def task_locations(control: Arrays) -> tuple[np.ndarray, np.ndarray]:
    """finalize_control.task_locations: sorted (rank << 40 | task id) keys and their locations."""
    kind, rank, loc = control["kind"], control["rank"].astype(np.int64), control["loc"].astype(np.int64)
    cons = (kind == int(EventKind.CONSTRUCT_BEGIN)) & (control["id2"] >= 0)
    tasks = kind == int(EventKind.TASK_CREATE)
    keys = np.concatenate([(rank[cons] << 40) | control["id2"][cons].astype(np.int64),
                           (rank[tasks] << 40) | control["id"][tasks].astype(np.int64)])
    locs = np.concatenate([loc[cons], loc[tasks]])   # constructs first: they win over the creation's address
    known = locs >= 0
    keys, first = np.unique(keys[known], return_index=True)
    return keys, locs[known][first]


def map_clauses(raws: list[RankRaw], control: Arrays,
                modules_by_rank: dict[int, list[Module]]) -> list[tuple[int, Module | None, Arrays]]:
    """finalize_control.map_clauses: (rank, its executable, its map clause rows) of each rank."""
    out = []
    clause = control["kind"] == int(EventKind.MAP_CLAUSE)
    for rr in raws:
        sel = clause & (control["rank"] == rr.rank)
        if sel.any():
            maps = {c: control[c][sel] for c in MAP_FIELDS}
            exe = next((m for m in modules_by_rank.get(rr.rank, []) if m.path == rr.info.get("exe")), None)
            out.append((rr.rank, exe, maps))
    return out


def first_clauses(maps: Arrays) -> list[int]:
    """finalize_control.first_clauses: the earliest clause of each (construct source, variable)."""
    order = np.argsort(maps["time_ns"], kind="stable")
    pair = (maps["src"].astype(np.int64)[order] << 32) | (maps["name"].astype(np.int64)[order] & 0xFFFFFFFF)
    _, first = np.unique(pair, return_index=True)
    return sorted(order[first].tolist())
