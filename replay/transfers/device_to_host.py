"""Translate device-copy (CV) addresses of kernel accesses back to host (OV) addresses.

A kernel touches device memory; users think in host variables. The live mapping table is
rebuilt from the runtime's own data ops (alloc/associate open a mapping, delete/disassociate
close it), replayed in sequence order, so a device address reused after a release translates
to the variable mapped at that time. The table is a few arrays that numba code carries from
one record batch to the next (``LiveMappings``), so callers can stream a log.
"""

from __future__ import annotations

import numpy as np
from quiver.formats import DataOpKind, EventKind
from quiver.formats.jit import kernel

ACCESS = int(EventKind.ACCESS)
DATA_OP = int(EventKind.DATA_OP)
OPEN_A, OPEN_B = int(DataOpKind.ALLOC), int(DataOpKind.ASSOCIATE)
CLOSE_A, CLOSE_B = int(DataOpKind.DELETE), int(DataOpKind.DISASSOCIATE)


class LiveMappings:
    """The mappings alive at one point of the replay: (rank, device, device range, host begin)."""

    def __init__(self, capacity: int) -> None:
        cap = max(int(capacity), 1)
        self.rank = np.empty(cap, dtype=np.int64)
        self.device = np.empty(cap, dtype=np.int64)
        self.dev_begin = np.empty(cap, dtype=np.uint64)
        self.dev_end = np.empty(cap, dtype=np.uint64)
        self.host_begin = np.empty(cap, dtype=np.uint64)
        self.count = np.zeros(1, dtype=np.int64)

    def arrays(self) -> tuple:
        return self.rank, self.device, self.dev_begin, self.dev_end, self.host_begin, self.count


@kernel(nogil=True)
def apply_data_op(op, rank, device, host, dev, size, l_rank, l_dev, l_d0, l_d1, l_h0, l_n):  # pragma: no cover
    """Open or close a mapping for one DATA_OP; other data ops leave the table alone."""
    n = l_n[0]
    if op == OPEN_A or op == OPEN_B:
        if n < l_rank.shape[0]:
            l_rank[n] = rank
            l_dev[n] = device
            l_d0[n] = dev
            l_d1[n] = dev + size
            l_h0[n] = host
            l_n[0] = n + 1
    elif op == CLOSE_A or op == CLOSE_B:
        # the most recent mapping of this device block (or host block) is the one released
        for j in range(n - 1, -1, -1):
            if l_rank[j] == rank and l_dev[j] == device and (l_d0[j] == dev or (dev == 0 and l_h0[j] == host)):
                for m in range(j, n - 1):
                    l_rank[m] = l_rank[m + 1]
                    l_dev[m] = l_dev[m + 1]
                    l_d0[m] = l_d0[m + 1]
                    l_d1[m] = l_d1[m + 1]
                    l_h0[m] = l_h0[m + 1]
                l_n[0] = n - 1
                break


@kernel(nogil=True)
def lookup(rank, device, addr, l_rank, l_dev, l_d0, l_d1, l_h0, l_n):  # pragma: no cover
    """Index of the live mapping whose device range holds ``addr`` (-1 if none)."""
    for j in range(l_n[0] - 1, -1, -1):
        if l_rank[j] == rank and l_dev[j] == device and l_d0[j] <= addr < l_d1[j]:
            return j
    return -1


@kernel(nogil=True)
def _translate(kind, rank, device, addr, addr2, size, op, first, pstride, l_rank, l_dev, l_d0, l_d1, l_h0,
               l_n):  # pragma: no cover
    """Host address of each plane of each device ACCESS row: plane p of row i at ``first[i] + p``."""
    out = np.zeros(first[-1], dtype=np.uint64)
    for i in range(kind.shape[0]):
        if kind[i] == DATA_OP:
            apply_data_op(op[i], rank[i], device[i], addr[i], addr2[i], size[i], l_rank, l_dev, l_d0, l_d1, l_h0,
                          l_n)
        elif kind[i] == ACCESS and device[i] >= 0:
            for p in range(first[i + 1] - first[i]):
                a = addr[i]
                if p:           # a later plane of a row of planes (pstride > 0)
                    a += np.uint64(p) * np.uint64(pstride[i])
                j = lookup(rank[i], device[i], a, l_rank, l_dev, l_d0, l_d1, l_h0, l_n)
                if j >= 0:
                    out[first[i] + p] = l_h0[j] + (a - l_d0[j])
    return out


def mapping_capacity(cols: dict[str, np.ndarray]) -> int:
    """How many mappings can be alive at once, at most: the number of alloc/associate data ops."""
    ops = cols["op"][cols["kind"] == DATA_OP]
    return int(np.count_nonzero((ops == OPEN_A) | (ops == OPEN_B)))


def device_to_host(cols: dict[str, np.ndarray], live: LiveMappings | None = None) -> np.ndarray:
    """Host address of every device ACCESS row in ``cols`` (0 when no live mapping covers it).

    For a strided run (FORMAT.md, ``aux2`` >= 2) it is the host address of its first block; the
    other blocks follow at the same stride on the host while they stay in that mapping (one
    contiguous range), so callers expand the blocks from it (``quiver.formats.blocks``). For a row
    of planes (format version 5) it is its first plane's: ``device_to_host_planes`` translates each
    plane (a later plane may lie in another mapping, or in none).

    ``cols`` holds raw event columns in sequence order, including the DATA_OP rows that precede
    the accesses. Pass the same ``live`` for consecutive batches of one log.
    """
    host, first = device_to_host_planes(cols, live)
    return host[first[:-1]] if len(host) else host


def device_to_host_planes(cols: dict[str, np.ndarray],
                          live: LiveMappings | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(host address of the first block of every plane of every row, where each row's planes start in it:
    ``first``, one more than rows). One plane a row but for ACCESS rows of planes (``name`` >= 2 of a
    strided row, format version 5; columns without ``name``/``id2``: one plane each); 0 when no live
    mapping covers the plane's first block, and for every row but device accesses."""
    if live is None:
        live = LiveMappings(mapping_capacity(cols))
    n = len(cols["kind"])
    planes = np.ones(n, dtype=np.int64)
    pstride = np.zeros(n, dtype=np.int64)
    if n and "name" in cols and "id2" in cols:
        multi = (cols["kind"] == ACCESS) & (cols["aux2"] >= 2) & (cols["name"] >= 2)
        planes[multi] = cols["name"][multi]
        pstride[multi] = cols["id2"][multi]
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(planes, out=first[1:])
    if n == 0:
        return np.zeros(0, dtype=np.uint64), first
    c = {k: np.ascontiguousarray(cols[k]) for k in ("kind", "rank", "device", "addr", "addr2", "size", "op")}
    return _translate(c["kind"], c["rank"], c["device"], c["addr"], c["addr2"], c["size"], c["op"], first, pstride,
                      *live.arrays()), first
