"""The race searches over one shard's accesses: numba kernels (formats/jit.py: interpreted on small logs).

Both use the same sorted interval structure: the distinct access boundaries of an epoch/phase
split the shard's memory into elementary intervals (Algorithm 1's splitting, done once per
epoch with a sort, so lookups are binary searches and the structure is balanced by
construction); every access visits the intervals it covers.

- ``paper_pairs``: seed 001 exactly: per epoch, each interval holds one access type and
  Table 2 gives the transition or an error (the access that set the type is the other side).
- ``race_pairs``: per phase, each interval holds a *frontier* of earlier accesses that later
  ones may still race with. A pair races when the two conflict (a write, not both local, not
  two compatible accumulates), are unordered by happens-before + completion (vector clocks)
  and are not in two different lock epochs of which one is exclusive. An earlier access leaves
  the frontier once a later one is ordered after it and covers every conflict it could have;
  a later access with the same signature (site, issuer, type, epoch, completion) folds into
  the earlier one, so loops do not grow the frontier.
"""

from __future__ import annotations

import numpy as np
from quiver.formats.jit import kernel

NO_OP = 12
INF = np.int64(1) << 40

# Table 2: rows O_GET, O_PUT, T_GET, T_PUT, LOAD, STORE; columns local read, local write, read,
# write (states 1..4); -1 = error. FIRST: the state of an interval an operation creates.
ERR = -1
TABLE2 = np.array([
    [4, 4, ERR, ERR],
    [3, 3, 3, ERR],
    [3, ERR, 3, ERR],
    [ERR, ERR, ERR, ERR],
    [1, 2, 3, ERR],
    [2, 2, ERR, ERR],
], dtype=np.int64)
FIRST = np.array([4, 3, 3, 4, 1, 2], dtype=np.int64)


@kernel
def _grow(a, n):
    if n < len(a):
        return a
    b = np.empty(max(2 * len(a), 16), dtype=a.dtype)
    b[: len(a)] = a
    return b


@kernel
def _boundaries(lo, hi, a0, a1):
    b = np.empty(2 * (a1 - a0), dtype=np.int64)
    for i in range(a0, a1):
        b[2 * (i - a0)] = lo[i]
        b[2 * (i - a0) + 1] = hi[i]
    # np.unique(b), which (interpreted, on a small log) would import numpy.ma: ~8 ms of `trace analyze`
    b = np.sort(b)
    if len(b) < 2:
        return b
    keep = np.empty(len(b), dtype=np.bool_)
    keep[0] = True
    keep[1:] = b[1:] != b[:-1]
    return b[keep]


@kernel
def paper_pairs(lo, hi, cls, bounds, table, first):
    """Seed 001 Algorithm 1 + Table 2 per epoch; accesses sorted by (epoch, order).

    Returns (x, y, lo, hi) arrays: y hit an error against the access x that set the interval's type.
    """
    n_out = 0
    ox = np.empty(16, dtype=np.int64)
    oy = np.empty(16, dtype=np.int64)
    olo = np.empty(16, dtype=np.int64)
    ohi = np.empty(16, dtype=np.int64)
    for e in range(len(bounds) - 1):
        a0, a1 = bounds[e], bounds[e + 1]
        if a1 <= a0:
            continue
        b = _boundaries(lo, hi, a0, a1)
        nseg = len(b) - 1
        state = np.zeros(max(nseg, 1), dtype=np.int64)
        owner = np.full(max(nseg, 1), -1, dtype=np.int64)
        for y in range(a0, a1):
            s0 = np.searchsorted(b, lo[y])
            s1 = np.searchsorted(b, hi[y])
            c = cls[y]
            for s in range(s0, s1):
                st = state[s]
                if st == 0:
                    state[s] = first[c]
                    owner[s] = y
                    continue
                new = table[c, st - 1]
                if new == ERR:
                    ox = _grow(ox, n_out)
                    oy = _grow(oy, n_out)
                    olo = _grow(olo, n_out)
                    ohi = _grow(ohi, n_out)
                    ox[n_out] = owner[s]
                    oy[n_out] = y
                    olo[n_out] = b[s]
                    ohi[n_out] = b[s + 1]
                    n_out += 1
                    if first[c] == 2 or first[c] == 4:   # the new access writes: it now defines the interval
                        state[s] = 4
                        owner[s] = y
                else:
                    if new != st and new == first[c]:
                        owner[s] = y
                    state[s] = new
    return ox[:n_out], oy[:n_out], olo[:n_out], ohi[:n_out]


@kernel
def _ordered(x, y, local, issuer, seg, row, end_rank, end_cut, vc, vc_off):
    """Is x complete before y starts (happens-before + completion)?"""
    iy = issuer[y]
    sy = seg[y]
    if local[x] == 1 and issuer[x] == iy and seg[x] == sy:
        return row[x] < row[y]
    ec = end_cut[x]
    if ec >= INF:
        return False
    er = end_rank[x]
    if er == iy:
        return sy >= ec
    return vc[vc_off[iy] + sy, er] >= ec


@kernel
def _conflict(x, y, write, local, atomic, mop, dsize, issuer, lock, excl):
    if write[x] == 0 and write[y] == 0:
        return False
    if local[x] == 1 and local[y] == 1:
        return False
    if atomic[x] == 1 and atomic[y] == 1:
        if issuer[x] == issuer[y]:          # same-origin accumulates are ordered (MPI default)
            return False
        if dsize[x] == dsize[y] and dsize[x] > 0 and (mop[x] == mop[y] or mop[x] == NO_OP or mop[y] == NO_OP):
            return False
    # two lock epochs, one of them exclusive: serialised
    return not (lock[x] >= 0 and lock[y] >= 0 and lock[x] != lock[y] and (excl[x] == 1 or excl[y] == 1))


@kernel
def _dominates(y, x, write, local, atomic, mop, dsize, issuer, lock):
    """Does every access that conflicts with x also conflict with y?"""
    if write[x] == 1 and write[y] == 0:
        return False
    if local[y] == 1 and local[x] == 0:
        return False
    if lock[y] >= 0 and lock[y] != lock[x]:
        return False
    same_atomic = atomic[x] == 1 and mop[x] == mop[y] and dsize[x] == dsize[y] and issuer[x] == issuer[y]
    return atomic[y] == 0 or same_atomic


@kernel
def race_pairs(lo, hi, write, local, atomic, mop, dsize, issuer, seg, row, end_rank, end_cut, lock, excl,
               sig, bounds, vc, vc_off, max_pairs):
    """Every racing pair of one shard; accesses sorted by (phase, order), `bounds` = phase starts.

    Returns (x, y, lo, hi, truncated): per elementary interval, x earlier than y.
    """
    n_out = 0
    ox = np.empty(16, dtype=np.int64)
    oy = np.empty(16, dtype=np.int64)
    olo = np.empty(16, dtype=np.int64)
    ohi = np.empty(16, dtype=np.int64)
    truncated = False
    for p in range(len(bounds) - 1):
        a0, a1 = bounds[p], bounds[p + 1]
        if a1 <= a0:
            continue
        b = _boundaries(lo, hi, a0, a1)
        nseg = max(len(b) - 1, 1)
        head = np.full(nseg, -1, dtype=np.int64)
        node_acc = np.empty(64, dtype=np.int64)
        node_next = np.empty(64, dtype=np.int64)
        n_nodes = 0
        free = -1
        for y in range(a0, a1):
            s0 = np.searchsorted(b, lo[y])
            s1 = np.searchsorted(b, hi[y])
            for s in range(s0, s1):
                prev = -1
                node = head[s]
                folded = False
                while node != -1:
                    x = node_acc[node]
                    nxt = node_next[node]
                    x_before_y = _ordered(x, y, local, issuer, seg, row, end_rank, end_cut, vc, vc_off)
                    if (not x_before_y and _conflict(x, y, write, local, atomic, mop, dsize, issuer, lock, excl)
                            and not _ordered(y, x, local, issuer, seg, row, end_rank, end_cut, vc, vc_off)):
                        if n_out < max_pairs:
                            ox = _grow(ox, n_out)
                            oy = _grow(oy, n_out)
                            olo = _grow(olo, n_out)
                            ohi = _grow(ohi, n_out)
                            ox[n_out] = x
                            oy[n_out] = y
                            olo[n_out] = b[s]
                            ohi[n_out] = b[s + 1]
                            n_out += 1
                        else:
                            truncated = True
                    if x_before_y and _dominates(y, x, write, local, atomic, mop, dsize, issuer, lock):
                        if prev == -1:
                            head[s] = nxt
                        else:
                            node_next[prev] = nxt
                        node_next[node] = free
                        free = node
                    else:
                        if sig[x] == sig[y]:
                            folded = True
                        prev = node
                    node = nxt
                if not folded:
                    if free != -1:
                        nn = free
                        free = node_next[nn]
                    else:
                        node_acc = _grow(node_acc, n_nodes)
                        node_next = _grow(node_next, n_nodes)
                        nn = n_nodes
                        n_nodes += 1
                    node_acc[nn] = y
                    node_next[nn] = head[s]
                    head[s] = nn
    return ox[:n_out], oy[:n_out], olo[:n_out], ohi[:n_out], truncated


@kernel
def merge_ranges(x, y, lo, hi):
    """Pairs sorted by (x, y, lo): adjacent byte ranges of the same pair become one."""
    n = len(x)
    keep = np.zeros(n, dtype=np.bool_)
    mlo = lo.copy()
    mhi = hi.copy()
    last = -1
    for i in range(n):
        if last >= 0 and x[i] == x[last] and y[i] == y[last] and lo[i] <= mhi[last]:
            mhi[last] = max(mhi[last], hi[i])
        else:
            keep[i] = True
            last = i
    return keep, mlo, mhi
