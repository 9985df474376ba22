"""Lifetimes of device copies: from the data op that allocates a CV to the one that releases it.

Why: device addresses are reused (the runtime's allocator hands a released block to the next
mapping), so "the same device byte" only means the same copy within one lifetime. The race
checker keys device bytes by lifetime; the schedule model translates device bytes to the host bytes
they stand for, keeps every device use inside its lifetime, and keeps the order of lifetimes that
cover the same host bytes on one device (the runtime never maps host bytes twice on a device).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from quiver.formats import DataOpKind, EventKind
from quiver.formats.jit import kernel


def space_key(rank: np.ndarray, device: np.ndarray) -> np.ndarray:
    """One memory space per (rank, host or device number)."""
    return (rank.astype(np.int64) << 20) | (device.astype(np.int64) + 1)


@kernel
def lifetime_of(space, addr, row, l_space, l_lo, l_hi, l_alloc, l_end, max_size):
    """Index of the device-copy lifetime holding (space, addr) at ``row`` (-1); latest alloc wins.

    Lifetimes are sorted by (space, lo); only those starting within ``max_size`` below addr can hold it.
    """
    n = len(space)
    out = np.full(n, -1, dtype=np.int64)
    nl = len(l_space)
    for i in range(n):
        a, b = 0, nl           # first lifetime with (space, lo) > (space[i], addr[i])
        while a < b:
            mid = (a + b) // 2
            if l_space[mid] < space[i] or (l_space[mid] == space[i] and l_lo[mid] <= addr[i]):
                a = mid + 1
            else:
                b = mid
        best = -1
        j = a - 1
        while j >= 0 and l_space[j] == space[i] and l_lo[j] > addr[i] - max_size:
            if addr[i] < l_hi[j] and l_alloc[j] <= row[i] <= l_end[j] and (best < 0 or l_alloc[j] > l_alloc[best]):
                best = j
            j -= 1
        out[i] = best
    return out


@kernel
def _present_order(space, h_lo, h_hi, alloc, release, max_size):
    """For each lifetime, the latest earlier one of the same device over overlapping host bytes (-1).

    The runtime never maps host bytes twice on one device, so that one's release must stay before this
    one's allocation in every schedule. Lifetimes sorted by (space, h_lo).
    """
    n = len(space)
    out = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        best = -1
        j = i - 1
        while j >= 0 and space[j] == space[i] and h_lo[j] > h_lo[i] - max_size:
            if h_hi[j] > h_lo[i] and alloc[j] < alloc[i] and (best < 0 or alloc[j] > alloc[best]):
                best = j
            j -= 1
        j = i + 1
        while j < n and space[j] == space[i] and h_lo[j] < h_hi[i]:
            if alloc[j] < alloc[i] and (best < 0 or alloc[j] > alloc[best]):
                best = j
            j += 1
        out[i] = best
    return out


@dataclass(frozen=True)
class DeviceCopies:
    """One entry per lifetime, sorted by (space, device begin)."""

    space: np.ndarray     # space_key(rank, device)
    lo: np.ndarray        # device begin / end
    hi: np.ndarray
    host: np.ndarray      # host begin it mirrors
    alloc: np.ndarray     # row of the ALLOC / ASSOCIATE
    end: np.ndarray       # row of the release (number of rows when never released)
    release: np.ndarray   # row of the release, -1 when never released

    def __len__(self) -> int:
        return len(self.alloc)

    def of(self, recs: dict[str, np.ndarray]) -> np.ndarray:
        """Lifetime index of each device-side record (``races.access_records``); -1 elsewhere."""
        out = np.full(len(recs["row"]), -1, dtype=np.int64)
        dev = recs["device_part"]
        if dev.any() and len(self):
            out[dev] = lifetime_of(recs["space"][dev], recs["lo"][dev], recs["row"][dev], self.space, self.lo,
                                   self.hi, self.alloc, self.end, int((self.hi - self.lo).max()))
        return out

    def direct_edges(self, recs: dict[str, np.ndarray], li: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Keep device accesses that bypassed every copy outside the lifetimes of copies of those bytes.

        A kernel that touched host bytes directly (with host offloading: the process's memory, e.g. a
        ``nowait`` region that ran after its data was unmapped) did so because no copy was present;
        in every schedule it stays before the allocation or after the release of such a copy.
        """
        direct = np.flatnonzero(recs["device_part"] & (li < 0))
        if not len(direct) or not len(self):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        o = np.lexsort((self.host, self.space))
        h_hi = (self.host + (self.hi - self.lo))[o]
        r, j = _mirrors(recs["space"][direct], recs["lo"][direct], self.space[o], self.host[o], h_hi,
                        int((self.hi - self.lo).max()))
        rows, lt = recs["row"][direct[r]], o[j]
        after = (self.release[lt] >= 0) & (rows > self.release[lt])
        before = rows < self.alloc[lt]
        return (np.concatenate([self.release[lt][after], rows[before]]),
                np.concatenate([rows[after], self.alloc[lt][before]]))

    def present_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Release of a device copy -> the next allocation over the same host bytes on that device."""
        if not len(self):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        h_hi = self.host + (self.hi - self.lo)
        o = np.lexsort((self.host, self.space))
        prev = _present_order(self.space[o], self.host[o], h_hi[o], self.alloc[o], self.release[o],
                              int((self.hi - self.lo).max()))
        ok = prev >= 0
        rel = self.release[o][prev[ok]]
        has = rel >= 0
        return rel[has], self.alloc[o][ok][has]


@kernel
def _mirrors(space, addr, l_space, l_host, l_host_hi, max_size):
    """(record, lifetime) pairs: a record's address lies in the host bytes a lifetime mirrors.

    Lifetimes sorted by (space, host).
    """
    cap = 64
    out_r = np.empty(cap, np.int64)
    out_l = np.empty(cap, np.int64)
    n = 0
    nl = len(l_space)
    for i in range(len(space)):
        a, b = 0, nl
        while a < b:
            mid = (a + b) // 2
            if l_space[mid] < space[i] or (l_space[mid] == space[i] and l_host[mid] <= addr[i]):
                a = mid + 1
            else:
                b = mid
        j = a - 1
        while j >= 0 and l_space[j] == space[i] and l_host[j] > addr[i] - max_size:
            if addr[i] < l_host_hi[j]:
                if n == cap:
                    cap *= 2
                    out_r = np.concatenate((out_r, np.empty(cap - n, np.int64)))
                    out_l = np.concatenate((out_l, np.empty(cap - n, np.int64)))
                out_r[n] = i
                out_l[n] = j
                n += 1
            j -= 1
    return out_r[:n], out_l[:n]


def device_copies(cols: dict[str, np.ndarray]) -> DeviceCopies:
    """Pair each ALLOC/ASSOCIATE with the next DELETE/DISASSOCIATE at the same device address."""
    kind, op = cols["kind"], cols["op"]
    dop = kind == int(EventKind.DATA_OP)
    new = dop & np.isin(op, [int(DataOpKind.ALLOC), int(DataOpKind.ASSOCIATE)])
    rel = dop & np.isin(op, [int(DataOpKind.DELETE), int(DataOpKind.DISASSOCIATE)])
    rows = np.flatnonzero(new | rel)
    space = space_key(cols["rank"][rows], cols["device"][rows])
    addr = cols["addr2"][rows].astype(np.int64)
    o = np.lexsort((rows, addr, space))
    rows, space, addr = rows[o], space[o], addr[o]
    is_new = new[rows]
    nxt_same = np.r_[(space[1:] == space[:-1]) & (addr[1:] == addr[:-1]) & ~is_new[1:], False]
    a = np.flatnonzero(is_new)
    end = np.where(nxt_same[a], rows[np.minimum(a + 1, len(rows) - 1)], len(kind)).astype(np.int64)
    r = rows[a]
    return DeviceCopies(space=space[a], lo=addr[a], hi=addr[a] + cols["size"][r].astype(np.int64),
                        host=cols["addr"][r].astype(np.int64), alloc=r.astype(np.int64), end=end,
                        release=np.where(nxt_same[a], end, -1).astype(np.int64))
