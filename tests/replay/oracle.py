"""The test oracle for the mapping checker: the same rules as ``vsm``, written as plainly as possible.

Why: the numba VSM is fast but intricate (compacted shadow, sorted tables, caches, hashing). This
module re-implements its documented semantics byte by byte with dicts and lists, one event at a
time, so tests can check that both give identical detections on random logs. Only the event
decoding (``mapping_events``) is shared. It is slow on purpose; never use it on real logs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from quiver.formats import AccessFlag, DataOpKind, EventKind, MapType
from quiver.replay.mapping.events import (
    HISTORY_MAX,
    OVERFLOW,
    S_CV_INIT,
    S_CV_VALID,
    S_OV_INIT,
    S_OV_VALID,
    SECTION_OVERFLOW,
    STALE,
    UNMAPPED,
    UUM,
    Detection,
)

NO_DATA = int(MapType.LITERAL) | int(MapType.PRIVATE)


@dataclass
class Entry:
    """One CV mapping: host [host, host+size) on (rank, device) at device address dev."""

    rank: int
    device: int
    host: int
    dev: int
    size: int
    clause: dict | None
    name: int
    create: int
    release: int = -1


@dataclass
class Record:
    det: dict
    last_event: int
    epoch: int


@dataclass
class Oracle:
    ov_valid: dict = field(default_factory=dict)     # (rank, addr) -> bool, default True
    ov_init: dict = field(default_factory=dict)
    cv_valid: dict = field(default_factory=dict)     # (rank, device, addr) -> bool, default False
    cv_init: dict = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    allocs: list[tuple[int, int, int]] = field(default_factory=list)  # live (rank, lo, hi)
    clauses: dict = field(default_factory=dict)      # (rank, construct) -> [clause dict]
    records: dict = field(default_factory=dict)
    history: dict = field(default_factory=dict)      # (rank, addr) -> [(event, full state)]
    epoch: int = 0      # event index of the last control event (vsm_layout.C_EPOCH)

    # ---- state of one host byte -------------------------------------------------------------
    def state(self, rank: int, a: int) -> dict:
        return {"ov": (self.ov_valid.get((rank, a), True), self.ov_init.get((rank, a), True)),
                "cv": {d: (self.cv_valid.get((rank, d, a), False), self.cv_init.get((rank, d, a), False))
                       for d in self.all_devices}}

    def touched(self, rank: int, a: int, g: int) -> None:
        self.history.setdefault((rank, a), []).append((g, self.state(rank, a)))

    def live(self, rank: int, device: int) -> list[Entry]:
        return [e for e in self.entries if e.release < 0 and e.rank == rank and e.device == device]

    def live_at(self, rank: int, device: int, dev_addr: int) -> Entry | None:
        for e in self.live(rank, device):
            if e.dev <= dev_addr < e.dev + e.size:
                return e
        return None

    def host_object(self, rank: int, a: int) -> tuple[int, int] | None:
        for r, lo, hi in self.allocs:
            if r == rank and lo <= a < hi:
                return lo, hi
        return None

    def devices_of(self, rank: int) -> set[int]:
        return {e.device for e in self.entries if e.rank == rank}

    # ---- findings ------------------------------------------------------------------------------
    def record(self, kind: str, rank: int, device: int, loc: int, entry: Entry | None, clause: dict | None,
               g: int, host: int, dev: int, nbytes: int, last: int, width: int, asize: int, name: int,
               release: int, entry_device: int, obj: tuple[int, int] | None = None) -> None:
        # a clause is keyed by its site and variable: a construct run in a loop gives one finding;
        # unmapped memory by its host object
        key_part = (clause["loc"], clause["name"]) if clause else (-2 - name if entry is not None else -1)
        if kind == UNMAPPED:
            key_part = ("object", obj)
        key = (kind, rank, device, loc, key_part)
        rec = self.records.get(key)
        if rec is None:
            self.records[key] = Record({
                "kind": kind, "rank": rank, "device": device, "event": g, "loc": loc,
                "clause_event": clause["event"] if clause else -1,
                "entry_event": entry.create if entry is not None else -1, "release_event": release,
                "name": name, "entry_device": entry_device, "host_addr": host, "device_addr": dev,
                "bytes": nbytes, "occurrences": 1, "last_host_addr": last, "width": width,
                "access_size": asize, "object_lo": obj[0] if obj else -1, "object_hi": obj[1] if obj else -1,
                "first_byte": (rank, host) if kind in (UUM, STALE) else None}, g, self.epoch)
            return
        rec.det["bytes"] += nbytes
        if host < rec.det["host_addr"] and rec.epoch == self.epoch:   # same epoch, lower byte
            rec.det.update({
                "event": g, "clause_event": clause["event"] if clause else -1,
                "entry_event": entry.create if entry is not None else -1, "release_event": release,
                "entry_device": entry_device, "host_addr": host, "device_addr": dev, "access_size": asize,
                "first_byte": (rank, host) if kind in (UUM, STALE) else None})
        if rec.last_event != g:
            rec.det["occurrences"] += 1
            rec.last_event = g
        rec.det["last_host_addr"] = max(rec.det["last_host_addr"], last)
        if rec.det["width"] == 0:
            rec.det["width"] = width

    def entry_info(self, e: Entry | None) -> tuple[dict | None, int]:
        if e is None:
            return None, -1
        return e.clause, (e.clause["name"] if e.clause else e.name)

    # ---- events --------------------------------------------------------------------------------
    def clause_of(self, rank: int, construct: int, host: int, name: int) -> dict | None:
        if construct < 0:
            return None
        cands = self.clauses.get((rank, construct), [])
        holding = [c for c in cands if c["host"] <= host < c["host"] + c["size"]]
        for c in holding:
            if c["bits"] & (MapType.TO | MapType.FROM):
                return c
        if holding:
            return holding[0]
        for c in cands:
            if name >= 0 and c["name"] == name:
                return c
        return None

    def section_overflow(self, g: int, rank: int, device: int, loc: int, clause: dict | None, name: int,
                         host: int, size: int) -> None:
        obj = self.host_object(rank, host)
        if obj is None or size <= 0:
            return
        outside = [a for a in range(host, host + size) if not obj[0] <= a < obj[1]]
        if outside:
            self.record(SECTION_OVERFLOW, rank, device, loc, None, clause, g, outside[0], -1, len(outside),
                        outside[-1], 0, size, name, -1, -1, obj)

    def alloc(self, g: int, ev: dict) -> None:
        rank, lo, size = ev["rank"], ev["addr"], ev["size"]
        if size <= 0 or (rank, lo, lo + size) in self.allocs:
            return
        self.allocs = [(r, a, b) for (r, a, b) in self.allocs if r != rank or b <= lo or a >= lo + size]
        self.allocs.append((rank, lo, lo + size))
        tracked = self.tracked
        for a in range(lo, lo + size):
            if (rank, a) in tracked:
                self.ov_valid[(rank, a)] = True
                self.ov_init[(rank, a)] = True
                for d in self.devices_of(rank) | self.all_devices:
                    self.cv_valid[(rank, d, a)] = False
                    self.cv_init[(rank, d, a)] = False
                self.touched(rank, a, g)

    def data_op(self, g: int, ev: dict) -> None:
        op, rank, d = ev["op"], ev["rank"], ev["device"]
        if d < 0:
            return
        h, v, size = ev["addr"], ev["addr2"], ev["size"]
        if op in (DataOpKind.ALLOC, DataOpKind.ASSOCIATE):
            if size <= 0 or h == 0:   # omp_target_alloc: device memory without a host copy
                return
            for e in self.live(rank, d):
                if e.dev < v + size and v < e.dev + e.size:
                    e.release = g
            clause = self.clause_of(rank, ev["id"], h, ev["name"])
            self.entries.append(Entry(rank, d, h, v, size, clause, ev["name"], g))
            declare_target = op == DataOpKind.ASSOCIATE and ev["aux"] == 1   # device copy from the image
            for a in range(h, h + size):
                self.cv_valid[(rank, d, a)] = declare_target
                self.cv_init[(rank, d, a)] = declare_target
                self.touched(rank, a, g)
        elif op in (DataOpKind.DELETE, DataOpKind.DISASSOCIATE):
            e = self.live_at(rank, d, v)
            if e is None:
                return
            e.release = g
            for a in range(e.host, e.host + e.size):
                self.cv_valid[(rank, d, a)] = False
                self.cv_init[(rank, d, a)] = False
                self.touched(rank, a, g)
        elif op in (DataOpKind.TRANSFER_TO, DataOpKind.TRANSFER_FROM):
            if self.clause_of(rank, ev["id"], h, ev["name"]) is None:
                self.section_overflow(g, rank, d, ev["loc"], None, ev["name"], h, size)
            e = self.live_at(rank, d, v)
            if size <= 0:
                return
            off = v - e.dev if e is not None else 0
            n = min(size, e.size - off) if e is not None else 0
            direct = e is not None and e.host + off == h
            if e is None or (not direct and ev["id"] < 0):
                # no live CV on the device side, or omp_target_memcpy (id -1) between another host buffer and
                # a CV: a host read (to device) or write (from device) of [h, h + size); a copy from a CV
                # reads that CV first
                if e is not None and op == DataOpKind.TRANSFER_FROM:
                    self.device_access(g, {**ev, "addr": v, "size": n, "op": 0, "aux": 0, "id": -1})
                self.host_access(g, {**ev, "size": size, "aux": 0,
                                     "op": int(AccessFlag.WRITE) if op == DataOpKind.TRANSFER_FROM else 0})
                if e is None or op == DataOpKind.TRANSFER_FROM:
                    return
            if op == DataOpKind.TRANSFER_FROM and not direct:
                return
            for i in range(n):
                a = e.host + off + i
                if op == DataOpKind.TRANSFER_TO and direct:
                    self.cv_valid[(rank, d, a)] = self.ov_valid.get((rank, a), True)
                    self.cv_init[(rank, d, a)] = self.ov_init.get((rank, a), True)
                elif op == DataOpKind.TRANSFER_TO:   # pointer attachment initialises the CV
                    self.cv_valid[(rank, d, a)] = True
                    self.cv_init[(rank, d, a)] = True
                else:
                    self.ov_valid[(rank, a)] = self.cv_valid.get((rank, d, a), False)
                    self.ov_init[(rank, a)] = self.cv_init.get((rank, d, a), False)
                self.touched(rank, a, g)

    def latest_entry(self, rank: int, a: int) -> Entry | None:
        for e in reversed(self.entries):
            if e.rank == rank and e.host <= a < e.host + e.size:
                return e
        return None

    def host_access(self, g: int, ev: dict) -> None:
        rank, lo, size = ev["rank"], ev["addr"], ev["size"]
        asize = ev.get("slot_size", size)   # a run of a masked row's contiguous slots: a slot's size
        if ev["op"] & AccessFlag.WRITE:
            for a in range(lo, lo + size):
                if (rank, a) in self.tracked:
                    self.ov_valid[(rank, a)] = True
                    self.ov_init[(rank, a)] = True
                    for d in self.all_devices:
                        self.cv_valid[(rank, d, a)] = False
                    self.touched(rank, a, g)
            return
        runs: list[list] = []   # [kind, entry, first, last, count]
        for a in range(lo, lo + size):
            if (rank, a) not in self.tracked or self.ov_valid.get((rank, a), True):
                runs.append(None)
                continue
            kind = STALE if self.ov_init.get((rank, a), True) else UUM
            e = self.latest_entry(rank, a)
            last = runs[-1] if runs else None
            if last is not None and last[0] == kind and last[1] is e and last[3] == a - 1:
                last[3] = a
                last[4] += 1
            else:
                runs.append([kind, e, a, a, 1])
        for run in runs:
            if run is None:
                continue
            kind, e, first, last, count = run
            clause, name = self.entry_info(e)
            self.record(kind, rank, -1, ev["loc"], e, clause, g, first, -1, count, last, ev["aux"], asize, name,
                        e.release if e is not None else -1, e.device if e is not None else -1,
                        clause["object"] if clause else None)

    def windows(self, rank: int, d: int, construct: int) -> list[tuple[int, int, Entry]]:
        cands = self.clauses.get((rank, construct), []) if construct >= 0 else []
        picked: list[tuple[Entry, tuple[int, int] | None]] = []
        if cands:
            for c in cands:
                best = None
                end = c["host"] + max(c["size"], 1)
                for e in self.live(rank, d):   # the newest live mapping holding a byte of the clause's section
                    if e.host < end and c["host"] < e.host + e.size:
                        best = e
                if best is not None and all(best is not p[0] for p in picked):
                    obj = c["object"] or (best.clause["object"] if best.clause else None)
                    picked.append((best, obj))
        else:
            for e in self.live(rank, d):
                picked.append((e, e.clause["object"] if e.clause else None))
        out = []
        for e, obj in picked:
            lo, hi = e.dev - e.size, e.dev + 2 * e.size
            dev_obj = None
            if obj is not None:
                dev_obj = (e.dev + obj[0] - e.host, e.dev + obj[1] - e.host)
                lo, hi = min(lo, dev_obj[0]), max(hi, dev_obj[1])
            out.append((lo, hi, e, dev_obj))
        return out

    @staticmethod
    def pick_window(windows: list, g0: int, g1: int) -> tuple | None:
        """The window of gap bytes [g0, g1): object beats band, then the nearest CV, then clause order."""
        starts = [max(g0, lo) for lo, hi, _e, _o in windows if lo < g1 and hi > g0]
        if not starts:
            return None
        x = min(starts)
        ranked = []
        for i, (lo, hi, e, obj) in enumerate(windows):
            if lo <= x < hi:
                tier = 0 if obj is not None and obj[0] <= x < obj[1] else 1
                dist = e.dev - x if x < e.dev else x - (e.dev + e.size)
                ranked.append((tier, dist, i))
        return windows[min(ranked)[2]]

    def device_access(self, g: int, ev: dict, row: list | None = None) -> None:
        rank, d, lo, size = ev["rank"], ev["device"], ev["addr"], ev["size"]
        asize = ev.get("slot_size", size)   # a run of a masked row's contiguous slots: a slot's size
        if d not in self.all_devices:
            return
        write = bool(ev["op"] & AccessFlag.WRITE)
        if row and row[0] is not None and not (row[0].dev <= lo < row[0].dev + row[0].size):
            # a later block of a strided row outside the first block's CV: that variable's overflow
            e = row[0]
            clause, name = self.entry_info(e)
            host = e.host + (lo - e.dev)
            self.record(OVERFLOW, rank, d, ev["loc"], e, clause, g, host, lo, size, host + size - 1, ev["aux"],
                        asize, name, e.release, e.device, clause["object"] if clause else None)
            return
        first = self.live_at(rank, d, lo)
        if row is not None and not row:
            row.append(first)
        split = lo + size
        if first is not None:   # an access that begins in a CV and runs past its end overflows that variable
            split = min(split, first.dev + first.size)
        runs: list = []   # per byte: ("bad", kind, entry, x, a) / ("gap", x) / None
        for x in range(lo, split):
            e = self.live_at(rank, d, x)
            if e is None:
                runs.append(("gap", x))
                continue
            a = e.host + (x - e.dev)
            if write:
                self.cv_valid[(rank, d, a)] = True
                self.cv_init[(rank, d, a)] = True
                self.ov_valid[(rank, a)] = False
                for other in self.all_devices - {d}:
                    self.cv_valid[(rank, other, a)] = False
                self.touched(rank, a, g)
                runs.append(None)
            elif not self.cv_valid.get((rank, d, a), False):
                kind = STALE if self.cv_init.get((rank, d, a), False) else UUM
                runs.append(("bad", kind, e, x, a))
            else:
                runs.append(None)
        # bad reads: group consecutive bytes with the same kind (one entry per run of the access)
        i = 0
        while i < len(runs):
            r = runs[i]
            if r is None:
                i += 1
                continue
            j = i + 1
            if r[0] == "bad":
                while j < len(runs) and runs[j] is not None and runs[j][0] == "bad" and runs[j][1] == r[1] \
                        and runs[j][2] is r[2]:
                    j += 1
                kind, e = r[1], r[2]
                clause, name = self.entry_info(e)
                self.record(kind, rank, d, ev["loc"], e, clause, g, r[4], r[3], j - i, runs[j - 1][4],
                            ev["aux"], asize, name, e.release, e.device, clause["object"] if clause else None)
            else:
                while j < len(runs) and runs[j] is not None and runs[j][0] == "gap":
                    j += 1
                g0, g1 = r[1], runs[j - 1][1] + 1
                win = self.pick_window(self.windows(rank, d, ev["id"]), g0, g1)
                own = win is not None and win[3] is not None and win[3][0] <= max(g0, win[0]) < win[3][1]
                ho = None if own else self.host_object(rank, g0)
                pname = -1
                if ho is None and not own:   # else the memory a firstprivate pointer of the construct points to
                    ptrs = [c for c in self.clauses.get((rank, ev["id"]), []) if c["size"] == 0 and g0 - (1 << 32) < c["host"] <= g0] if ev["id"] >= 0 else []
                    if ptrs:
                        best = max(ptrs, key=lambda c: (c["host"], -c["event"]))
                        ho, pname = (best["host"], best["host"]), best["name"]
                if ho is not None:   # host memory of the program that no live mapping covers
                    n = min(g1 - g0, ho[1] - g0) if ho[1] > ho[0] else g1 - g0
                    self.record(UNMAPPED, rank, d, ev["loc"], None, None, g, g0, g0, n, g0 + n - 1, ev["aux"],
                                asize, pname, -1, -1, ho)
                elif win is not None:
                    wlo, whi, e, _obj = win
                    x0, x1 = max(g0, wlo), min(g1, whi)
                    clause, name = self.entry_info(e)
                    host = e.host + (x0 - e.dev)
                    self.record(OVERFLOW, rank, d, ev["loc"], e, clause, g, host, x0, x1 - x0,
                                host + (x1 - 1 - x0), ev["aux"], asize, name, e.release, e.device,
                                clause["object"] if clause else None)
            i = j
        if split < lo + size:
            clause, name = self.entry_info(first)
            host = first.host + (split - first.dev)
            self.record(OVERFLOW, rank, d, ev["loc"], first, clause, g, host, split, lo + size - split,
                        host + (lo + size - 1 - split), ev["aux"], asize, name, first.release, first.device,
                        clause["object"] if clause else None)

    def run(self, events: list[dict], log: list[dict]) -> list[Detection]:
        """Apply ``events`` in order; devices, tracked bytes and clauses come from the whole ``log``."""
        made = [ev for ev in log if ev["kind"] == EventKind.DATA_OP and ev["device"] >= 0 and ev["addr"] > 0
                and ev["op"] in (DataOpKind.ALLOC, DataOpKind.ASSOCIATE)]
        self.all_devices = {ev["device"] for ev in log if ev["kind"] == EventKind.DATA_OP and ev["device"] >= 0}
        self.tracked = {(ev["rank"], a) for ev in made for a in range(ev["addr"], ev["addr"] + ev["size"])}
        for ev in log:
            if ev["kind"] == EventKind.MAP_CLAUSE:
                wide = _wide(ev)
                self.clauses.setdefault((ev["rank"], ev["id"]), []).append(
                    {"event": ev["g"], "host": -2 if wide else ev["addr"], "size": 0 if wide else ev["size"],
                     "name": ev["name"], "loc": ev["loc"], "bits": ev["op"], "object": None})
        by_event = {c["event"]: c for cs in self.clauses.values() for c in cs}
        for ev in events:
            g, k = ev["g"], ev["kind"]
            if k == EventKind.ACCESS:
                row: list = []   # the CV entry the row's (a plane's) first block began in (device rows)
                for plane in _planes(ev):   # planes (format version 5): each as its strided run, all as event g
                    if not ev["op"] & AccessFlag.MASKED:
                        row = []
                    for block in _blocks(plane):   # a strided run: its blocks in order, all as event g
                        if block["size"] > 0 and not _wide(block):
                            if block["device"] < 0:
                                self.host_access(g, block)
                            else:
                                self.device_access(g, block, row)
                continue
            if k not in (EventKind.ALLOC, EventKind.FREE, EventKind.MAP_CLAUSE, EventKind.DATA_OP):
                continue   # constructs, kernels, ...: change no state and end no epoch (vsm_layout.C_EPOCH)
            if k != EventKind.DATA_OP and _wide(ev):
                self.epoch = g
                continue   # values, not addresses (firstprivate literals); still an epoch boundary
            if k == EventKind.ALLOC:
                self.alloc(g, ev)
            elif k == EventKind.FREE:
                self.allocs = [x for x in self.allocs if not (x[0] == ev["rank"] and x[1] == ev["addr"])]
            elif k == EventKind.MAP_CLAUSE:
                c = by_event[g]
                c["object"] = self.host_object(ev["rank"], ev["addr"])
                if not ev["op"] & NO_DATA:
                    d = ev["device"] if ev["device"] in self.all_devices else -1
                    self.section_overflow(g, ev["rank"], d, ev["loc"], c, ev["name"], ev["addr"], ev["size"])
            elif k == EventKind.DATA_OP:
                self.data_op(g, ev)
            self.epoch = g
        return self.detections()

    def detections(self) -> list[Detection]:
        out = []
        for rec in self.records.values():
            det = dict(rec.det)
            first = det.pop("first_byte")
            if det["kind"] == SECTION_OVERFLOW:
                det["device"] = -1
            dev = det["device"] if det["device"] >= 0 else det["entry_device"]
            hist = ()
            if first is not None:
                steps = [(g, s) for g, s in self.history.get(first, ()) if g != det["event"]]
                steps = _before(steps, det["event"], self.order)
                hist = tuple((g, _state4(s, dev)) for g, s in steps[-HISTORY_MAX:])
            out.append(Detection(**det, history=hist))
        return sorted(out, key=Detection.sort_key)


def _planes(ev: dict) -> list[dict]:
    """The planes of an ACCESS row (FORMAT.md, format version 5: ``name`` >= 2 copies of a strided run, ``id2``
    bytes apart), each a plain strided row."""
    if ev["op"] & AccessFlag.MASKED and ev["aux2"] >= 2:   # masked (format version 6): its runs of set bits
        return _masked_runs(ev)
    n = ev["name"] if ev["name"] >= 2 and ev["aux2"] >= 2 else 1
    return [{**ev, "addr": ev["addr"] + p * ev["id2"], "name": -1, "id2": -1} for p in range(n)] if n > 1 else [ev]


def _masked_runs(ev: dict) -> list[dict]:
    """The runs of set bits of a masked ACCESS row (FORMAT.md, format version 6: ``aux2`` slots every ``addr2``
    bytes, slot i present iff bit i of ``id2``), each a plain row (contiguous slots: one range) or strided row."""
    bits, n, stride, size = ev["id2"] & ((1 << 64) - 1), ev["aux2"], ev["addr2"], ev["size"]
    out, i = [], 0
    while i < n:
        if not bits >> i & 1:
            i += 1
            continue
        k = 1
        while i + k < n and bits >> (i + k) & 1:
            k += 1
        a = ev["addr"] + i * stride
        if stride == size or k == 1:
            out.append({**ev, "addr": a, "size": size * k if stride == size else size, "addr2": 0, "aux2": 0,
                        "slot_size": size})
        else:
            out.append({**ev, "addr": a, "addr2": stride, "aux2": k})
        i += k
    return out


def _blocks(ev: dict) -> list[dict]:
    """The blocks of an ACCESS row (FORMAT.md: ``aux2`` >= 2 blocks of ``size`` bytes every ``addr2``)."""
    n = ev["aux2"] if ev["aux2"] >= 2 else 1
    stride = ev["addr2"] if n > 1 else 0
    return [{**ev, "addr": ev["addr"] + i * stride, "addr2": 0, "aux2": 0} for i in range(n)]


def _wide(ev: dict) -> bool:
    """Addresses beyond 48 bits are not addresses (a firstprivate clause carries the value itself)."""
    limit = 1 << 48
    return ev["addr"] >= limit or ev["addr"] + ev["size"] >= limit or ev["addr2"] >= limit


def _before(steps: list, event: int, order: dict[int, int]) -> list:
    """Steps applied before ``event`` in processing order."""
    pos = order[event]
    return [(g, s) for g, s in steps if order[g] < pos]


def _state4(state: dict, device: int) -> int:
    ov_valid, ov_init = state["ov"]
    cv_valid, cv_init = state["cv"].get(device, (False, False))
    return ((S_OV_VALID if ov_valid else 0) | (S_OV_INIT if ov_init else 0)
            | (S_CV_VALID if cv_valid else 0) | (S_CV_INIT if cv_init else 0))


def oracle_detections(columns: Mapping[str, np.ndarray], order: Sequence[int] | None = None) -> list[Detection]:
    """Detections for an in-memory column set applied in row order (or ``order``)."""
    names = ("kind", "rank", "device", "loc", "addr", "addr2", "size", "id", "id2", "op", "name", "aux", "aux2")
    log = [{"g": r, **{c: int(columns[c][r]) for c in names}} for r in range(len(columns["kind"]))]
    rows = list(range(len(log))) if order is None else [int(i) for i in order]
    o = Oracle()
    o.order = {r: i for i, r in enumerate(rows)}
    return o.run([log[r] for r in rows], log)
