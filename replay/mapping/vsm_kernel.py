"""The numba hot path of the variable state machine: applies events to the byte shadow.

Why a kernel: a log holds millions of accesses; every event (access or control) is applied here,
in compiled code, with ranges applied as slices of the shadow. ``quiver.replay.mapping.vsm`` owns the state
arrays and the Python API; nothing in here allocates or knows about strings, locations or findings'
wording. Keys, shadow bits and table columns are in ``vsm_layout``. ``vsm_aot`` compiles the same
functions ahead of time, so small runs need not load numba.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from quiver.replay.mapping.vsm_layout import (  # the layout shared with quiver.replay.mapping.vsm
    A_WRITE,
    ADDR_MASK,
    BIG,
    C_DROPPED,
    C_EPOCH,
    C_GEN,
    C_LE_E,
    C_LE_HI,
    C_LE_LO,
    C_LE_N,
    C_NALLOC,
    C_NENT,
    C_NFIND,
    C_NLIVE,
    C_NWIN,
    C_STOP,
    C_WIN_DEV,
    C_WIN_GEN,
    C_WIN_KEY,
    CKEY_SHIFT,
    CL_EVENT,
    CL_HOST,
    CL_LOC,
    CL_NAME,
    CL_OBJHI,
    CL_OBJLO,
    CL_SIZE,
    CL_TYPE,
    CT_ADDR,
    CT_ADDR2,
    CT_AUX,
    CT_CLROW,
    CT_DI,
    CT_ID,
    CT_KIND,
    CT_LOC,
    CT_NAME,
    CT_OP,
    CT_RANK,
    CT_SIZE,
    D_ALLOC,
    D_ASSOC,
    D_DELETE,
    D_DISASSOC,
    D_FROM,
    D_TO,
    EN_CLAUSE,
    EN_CREATE,
    EN_DEV,
    EN_DI,
    EN_HOST,
    EN_NAME,
    EN_RANK,
    EN_RELEASE,
    EN_SHADOW,
    EN_SIZE,
    F_ASIZE,
    F_BYTES,
    F_CLAUSE,
    F_DEV,
    F_DI,
    F_ENTRY,
    F_EPOCH,
    F_EVENT,
    F_HOST,
    F_KIND,
    F_KX,
    F_LASTEV,
    F_LASTHOST,
    F_LOC,
    F_NAME,
    F_OBJHI,
    F_OBJLO,
    F_OCC,
    F_RANK,
    F_RELEASE,
    F_SHADOW,
    F_WIDTH,
    FK_OVERFLOW,
    FK_SECTION,
    FK_STALE,
    FK_UNMAPPED,
    FK_UUM,
    K_ACCESS,
    K_ALLOC,
    K_DATA,
    K_FREE,
    K_MAP,
    KX_OBJECT,
    M_MOTION,
    M_NO_DATA,
    MAP_FROM,
    MAP_PLAIN,
    MAP_TO,
    OVI,
    OVV,
    SHIFT,
)


class CachedCV(NamedTuple):
    """A live CV the kernel looked up last: its device keys [lo, hi), where its bytes start in the
    shadow, its entry (a tuple of scalars: it stays in registers)."""

    lo: np.int64
    hi: np.int64
    shadow: np.int64
    entry: np.int64


NO_CV = CachedCV(np.int64(0), np.int64(0), np.int64(0), np.int64(-1))


@njit(cache=True, inline="always")
def _cv_bits(di):
    return np.int64(4) << np.int64(2 * di), np.int64(8) << np.int64(2 * di)


@njit(cache=True, inline="always")
def _fmap(v, keep, set_bits, mode, shift):
    """The new value of one shadow byte ``v`` under a bit map."""
    r = (v & keep) | set_bits
    if mode == MAP_TO:
        r |= (v & np.int64(OVV | OVI)) << shift
    elif mode == MAP_FROM:
        r |= (v >> shift) & np.int64(OVV | OVI)
    return r


@njit(cache=True, inline="always")
def _unchanged(lb, ub, keep, set_bits):
    """Whether the plain map (keep, set) changes no byte of a block with bounds lb, ub."""
    return ((lb & keep) | set_bits) == lb and ((ub & keep) | set_bits) == ub


@njit(cache=True)
def _map_bytes(shadow, s0, s1, keep, set_bits, mode, shift):
    """Apply a bit map to shadow bytes [s0, s1); (AND, OR) of the new values."""
    a = shadow[s0:s1]
    lo = np.int64(-1)
    hi = np.int64(0)
    if mode == MAP_TO:
        for i in range(len(a)):
            v = np.int64(a[i])
            v = (v & keep) | set_bits | ((v & np.int64(OVV | OVI)) << shift)
            a[i] = v
            lo &= v
            hi |= v
    elif mode == MAP_FROM:
        for i in range(len(a)):
            v = np.int64(a[i])
            v = (v & keep) | set_bits | ((v >> shift) & np.int64(OVV | OVI))
            a[i] = v
            lo &= v
            hi |= v
    else:
        for i in range(len(a)):
            v = (np.int64(a[i]) & keep) | set_bits
            a[i] = v
            lo &= v
            hi |= v
    return lo, hi


@njit(cache=True)
def _bytes_unchanged(shadow, s0, s1, keep, set_bits):
    """Whether the plain map (keep, set) leaves every shadow byte in [s0, s1) as it is.

    A byte v is unchanged iff (v & m) == set with m = ~keep | set; the test runs in the shadow's
    own width so that it vectorises, and reads without writing."""
    a = shadow[s0:s1]
    m = a.dtype.type(~keep | set_bits)
    want = a.dtype.type(set_bits)
    diff = a.dtype.type(0)
    for i in range(len(a)):
        diff |= (a[i] & m) ^ want
    return diff == 0


@njit(cache=True)
def _bounds_bytes(shadow, s0, s1):
    """(AND, OR) of shadow bytes [s0, s1)."""
    a = shadow[s0:s1]
    lo = np.int64(-1)
    hi = np.int64(0)
    for i in range(len(a)):
        v = np.int64(a[i])
        lo &= v
        hi |= v
    return lo, hi


@njit(cache=True, inline="always")
def _map_range(shadow, blo, bhi, bcnt, lgb, s0, s1, keep, set_bits, mode, shift):
    """Apply a bit map to shadow bytes [s0, s1), block by block.

    ``bcnt[b]``: bytes changed by partial operations since block b's bounds were last made exact;
    when it reaches the block size (or a write leaves the block at its end) the bounds are
    recomputed, so a block that scattered writes have made uniform again is seen as uniform.
    """
    bsz = np.int64(1) << lgb
    b = s0 >> lgb
    while s0 < s1:
        bs = b << lgb
        be = bs + bsz
        e = min(s1, be)
        full = s0 == bs and e == be
        lb = blo[b]
        ub = bhi[b]
        if lb == ub:
            nv = _fmap(lb, keep, set_bits, mode, shift)
            if nv != lb:
                if full:
                    blo[b] = nv
                    bhi[b] = nv
                else:   # split a uniform block: its bytes become the truth
                    shadow[bs:be] = lb
                    lo, hi = _map_bytes(shadow, s0, e, keep, set_bits, mode, shift)
                    blo[b] = lb & lo
                    bhi[b] = ub | hi
                    bcnt[b] = e - s0
        elif not (mode == MAP_PLAIN and (_unchanged(lb, ub, keep, set_bits)
                                         or _bytes_unchanged(shadow, s0, e, keep, set_bits))):
            # (else no byte changes: a sweep rewriting what it wrote last time only reads the bytes)
            lo, hi = _map_bytes(shadow, s0, e, keep, set_bits, mode, shift)
            if full:
                blo[b] = lo
                bhi[b] = hi
                bcnt[b] = 0
            elif e == be or bcnt[b] + (e - s0) >= bsz:
                # a partial write reaching the block's end (a sweep leaving it), or as many bytes
                # written as the block holds: make its bounds exact (amortised O(1) per byte)
                lo, hi = _bounds_bytes(shadow, bs, be)
                blo[b] = lo
                bhi[b] = hi
                bcnt[b] = 0
            else:
                blo[b] = lb & lo
                bhi[b] = ub | hi
                bcnt[b] += e - s0
        s0 = e
        b += 1


@njit(cache=True)
def _map_range_ctl(shadow, blo, bhi, bcnt, lgb, s0, s1, keep, set_bits, mode, shift):
    """``_map_range`` as a function call (control events: rare, big ranges; keeps the kernel small)."""
    _map_range(shadow, blo, bhi, bcnt, lgb, s0, s1, keep, set_bits, mode, shift)


@njit(cache=True, inline="always")
def _all_have(shadow, blo, bhi, lgb, s0, s1, bit):
    """Whether every shadow byte in [s0, s1) has ``bit`` (a read finds its copy valid)."""
    bsz = np.int64(1) << lgb
    b = s0 >> lgb
    while s0 < s1:
        bs = b << lgb
        e = min(s1, bs + bsz)
        lb = blo[b]
        if (lb & bit) == 0:
            if lb == bhi[b]:
                return False
            lo, hi = _bounds_bytes(shadow, s0, e)
            if s0 == bs and e == bs + bsz:   # a whole block scanned: its bounds become exact
                blo[b] = lo
                bhi[b] = hi
            if (lo & bit) == 0:
                return False
        s0 = e
        b += 1
    return True


@njit(cache=True, inline="always")
def _write_piece(shadow, blo, bhi, bcnt, lgb, s0, s1, b0, one, keep, set_bits):
    """An access's write to shadow bytes [s0, s1) (first block b0; ``one``: it is the only one):
    nothing to do when that block already has the written state."""
    if not (one and _unchanged(blo[b0], bhi[b0], keep, set_bits)):
        _map_range(shadow, blo, bhi, bcnt, lgb, s0, s1, keep, set_bits, MAP_PLAIN, np.int64(0))


@njit(cache=True, inline="always")
def _span_settled(blo, bhi, lgb, s0, s1, write, keep, set_bits, bit):
    """Whether an access to any bytes of shadow [s0, s1) needs nothing: for a write, every block is
    uniform and already in the written state; for a read, every byte has ``bit`` (one check per
    block of the span instead of one per block of a strided run)."""
    for b in range(s0 >> lgb, ((s1 - 1) >> lgb) + 1):
        lb = blo[b]
        if write:
            if lb != bhi[b] or not _unchanged(lb, lb, keep, set_bits):
                return False
        elif (lb & bit) == 0:
            return False
    return True


@njit(cache=True)
def copy_split_blocks(src, dst, blo, bhi, lgb):
    """Copy the bytes of the blocks that are not uniform (the only bytes that hold state)."""
    bsz = np.int64(1) << lgb
    for b in range(len(blo)):
        if blo[b] != bhi[b]:
            bs = b << lgb
            dst[bs:bs + bsz] = src[bs:bs + bsz]


@njit(cache=True, inline="always")
def _value(shadow, blo, bhi, lgb, s):
    """The state of shadow byte s."""
    b = s >> lgb
    if blo[b] == bhi[b]:
        return blo[b]
    return np.int64(shadow[s])


@njit(cache=True)
def _run_end(shadow, blo, bhi, lgb, s, s1, mask, want):
    """First shadow byte t in [s, s1) with (state & mask) != want; s1 when none."""
    bsz = np.int64(1) << lgb
    b = s >> lgb
    while s < s1:
        bs = b << lgb
        e = min(s1, bs + bsz)
        lb = blo[b] & mask
        ub = bhi[b] & mask
        if lb != want or ub != want:
            if blo[b] == bhi[b]:
                return s
            a = shadow[s:e]
            for i in range(len(a)):
                if (np.int64(a[i]) & mask) != want:
                    return s + i
        s = e
        b += 1
    return s1


@njit(cache=True)
def _search(keys, n, key):
    """Index of the last key <= ``key`` among keys[:n] (sorted), or -1."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] <= key:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@njit(cache=True)
def _find_live(lv_key, lv_en, en, n_live, dk):
    """(live index, entry) of the CV containing device key ``dk``; entry -1 when none."""
    i = _search(lv_key, n_live, dk)
    if i >= 0:
        e = lv_en[i]
        if dk < lv_key[i] + en[e, EN_SIZE]:
            return i, e
    return i, -1


@njit(cache=True)
def _remove_live(lv_key, lv_en, ctr, i):
    n = ctr[C_NLIVE]
    for j in range(i, n - 1):
        lv_key[j] = lv_key[j + 1]
        lv_en[j] = lv_en[j + 1]
    ctr[C_NLIVE] = n - 1
    ctr[C_GEN] += 1


@njit(cache=True)
def _insert_live(lv_key, lv_en, ctr, dk, e):
    n = ctr[C_NLIVE]
    i = _search(lv_key, n, dk) + 1
    for j in range(n, i, -1):
        lv_key[j] = lv_key[j - 1]
        lv_en[j] = lv_en[j - 1]
    lv_key[i] = dk
    lv_en[i] = e
    ctr[C_NLIVE] = n + 1
    ctr[C_GEN] += 1


@njit(cache=True)
def _tracked(tr_lo, tr_hi, tr_base, key):
    """(shadow index or -1, end of the run starting at key: tracked-interval end or next start)."""
    i = _search(tr_lo, len(tr_lo), key)
    if i >= 0 and key < tr_hi[i]:
        return tr_base[i] + (key - tr_lo[i]), tr_hi[i]
    if i + 1 < len(tr_lo):
        return -1, tr_lo[i + 1]
    return -1, BIG


@njit(cache=True)
def _watch(s0, s1, g, shadow, blo, bhi, lgb, wa_sh, wa_id, wa_done, wh, wn):
    """Append (event, state after) to the history of every watched byte in shadow[s0:s1]."""
    nw = len(wa_sh)
    if nw == 0:
        return
    k = _search(wa_sh, nw, s0 - 1) + 1
    hmax = wh.shape[1]
    while k < nw and wa_sh[k] < s1:
        w = wa_id[k]
        if wa_done[w] == 0:
            slot = wn[w] % hmax
            wh[w, slot, 0] = g
            wh[w, slot, 1] = _value(shadow, blo, bhi, lgb, wa_sh[k])
            wn[w] += 1
        k += 1


@njit(cache=True)
def _record(fd, fd_hash, ctr, fk, rk, di, loc, kx, e, clause_ev, g, host, dev, sh, nbytes, last_host,
            width, asize, release, name, olo, ohi):
    """Add one run of bad bytes to the finding with key (fk, rk, di, loc, kx)."""
    h = (fk * 1000003) ^ (rk * 7919) ^ ((di + 2) * 104729) ^ (loc * 1299709) ^ (kx * 15485863)
    mask = len(fd_hash) - 1
    slot = h & mask
    while True:
        v = fd_hash[slot]
        if v == 0:
            n = ctr[C_NFIND]
            if n >= fd.shape[0]:
                ctr[C_DROPPED] += 1
                return
            fd_hash[slot] = n + 1
            fd[n, F_KIND] = fk
            fd[n, F_RANK] = rk
            fd[n, F_DI] = di
            fd[n, F_LOC] = loc
            fd[n, F_KX] = kx
            fd[n, F_ENTRY] = e
            fd[n, F_CLAUSE] = clause_ev
            fd[n, F_EVENT] = g
            fd[n, F_HOST] = host
            fd[n, F_DEV] = dev
            fd[n, F_SHADOW] = sh
            fd[n, F_BYTES] = nbytes
            fd[n, F_OCC] = 1
            fd[n, F_LASTEV] = g
            fd[n, F_LASTHOST] = last_host
            fd[n, F_WIDTH] = width
            fd[n, F_ASIZE] = asize
            fd[n, F_RELEASE] = release
            fd[n, F_NAME] = name
            fd[n, F_OBJLO] = olo & ADDR_MASK if olo >= 0 else -1
            fd[n, F_OBJHI] = ohi & ADDR_MASK if olo >= 0 else -1
            fd[n, F_EPOCH] = ctr[C_EPOCH]
            ctr[C_NFIND] = n + 1
            return
        i = v - 1
        if (fd[i, F_KIND] == fk and fd[i, F_RANK] == rk and fd[i, F_DI] == di and fd[i, F_LOC] == loc
                and fd[i, F_KX] == kx):
            fd[i, F_BYTES] += nbytes
            if host < fd[i, F_HOST] and fd[i, F_EPOCH] == ctr[C_EPOCH]:
                # same epoch, lower byte: it stands for the finding (see C_EPOCH)
                fd[i, F_ENTRY] = e
                fd[i, F_CLAUSE] = clause_ev
                fd[i, F_EVENT] = g
                fd[i, F_HOST] = host
                fd[i, F_DEV] = dev
                fd[i, F_SHADOW] = sh
                fd[i, F_ASIZE] = asize
                fd[i, F_RELEASE] = release
            if fd[i, F_LASTEV] != g:
                fd[i, F_OCC] += 1
                fd[i, F_LASTEV] = g
            fd[i, F_LASTHOST] = max(fd[i, F_LASTHOST], last_host)
            if fd[i, F_WIDTH] == 0:   # element counts use the width as soon as any access knows it
                fd[i, F_WIDTH] = width
            return
        slot = (slot + 1) & mask


@njit(cache=True, inline="always")
def _clause_key(loc, name):
    """Dedup key part of a clause: its site and variable (a construct run in a loop is one finding)."""
    return (loc + 2) * np.int64(4294967296) + (name + 1)


@njit(cache=True)
def _entry_key(en, cl, e):
    """(dedup key part, clause event, variable name, host object lo, hi) of mapping entry e."""
    if e < 0:
        return -1, -1, -1, np.int64(-1), np.int64(-1)
    c = en[e, EN_CLAUSE]
    if c >= 0:
        return (_clause_key(cl[c, CL_LOC], cl[c, CL_NAME]), cl[c, CL_EVENT], cl[c, CL_NAME], cl[c, CL_OBJLO],
                cl[c, CL_OBJHI])
    return -2 - en[e, EN_NAME], -1, en[e, EN_NAME], np.int64(-1), np.int64(-1)


@njit(cache=True)
def _latest_entry(en, ctr, key):
    """(entry, end of the key range where it stays the latest) of the newest mapping covering key."""
    n = ctr[C_NENT]
    if ctr[C_LE_N] == n and ctr[C_LE_LO] <= key < ctr[C_LE_HI]:
        return ctr[C_LE_E], ctr[C_LE_HI]
    lo = np.int64(-1)
    hi = BIG
    res = -1
    for e in range(n - 1, -1, -1):
        h0 = en[e, EN_HOST]
        h1 = h0 + en[e, EN_SIZE]
        if h0 <= key < h1:
            res = e
            lo = max(lo, h0)
            hi = min(hi, h1)
            break
        if h1 <= key:
            lo = max(lo, h1)
        else:
            hi = min(hi, h0)
    ctr[C_LE_N] = n
    ctr[C_LE_LO] = lo
    ctr[C_LE_HI] = hi
    ctr[C_LE_E] = res
    return res, hi


@njit(cache=True)
def _live_alloc(al_lo, al_hi, ctr, hk):
    """(lo, hi) of the live host allocation containing host key hk, (-1, -1) if none."""
    i = _search(al_lo, ctr[C_NALLOC], hk)
    if i >= 0 and hk < al_hi[i]:
        return al_lo[i], al_hi[i]
    return np.int64(-1), np.int64(-1)


@njit(cache=True)
def _clause_of(cl, clk_keys, clk_rows, ckey, hk, name):
    """Clause of construct ``ckey`` behind a data op at host key hk.

    The first clause holding hk that moves data (to/from), else the first holding hk (a struct's
    combined entry, an alloc), else the first with the data op's variable name.
    """
    if ckey < 0:
        return -1
    n = len(clk_keys)
    i = _search(clk_keys, n, ckey - 1) + 1
    by_name = -1
    holding = -1
    while i < n and clk_keys[i] == ckey:
        c = clk_rows[i]
        if cl[c, CL_HOST] <= hk < cl[c, CL_HOST] + cl[c, CL_SIZE]:
            if cl[c, CL_TYPE] & M_MOTION:
                return c
            if holding < 0:
                holding = c
        if by_name < 0 and name >= 0 and cl[c, CL_NAME] == name:
            by_name = c
        i += 1
    return holding if holding >= 0 else by_name


@njit(cache=True)
def _windows(cl, clk_keys, clk_rows, en, lv_en, ctr, win, ckey, rk, di, ndev):
    """Fill ``win`` with the overflow windows (device-key ranges) of construct ckey on (rk, di)."""
    wkey = ckey
    wdev = rk * ndev + di
    if ctr[C_WIN_GEN] == ctr[C_GEN] and ctr[C_WIN_KEY] == wkey and ctr[C_WIN_DEV] == wdev:
        return ctr[C_NWIN]
    nwin = 0
    n_live = ctr[C_NLIVE]
    n = len(clk_keys)
    start = _search(clk_keys, n, ckey - 1) + 1 if ckey >= 0 else n
    has_clauses = start < n and clk_keys[start] == ckey
    if has_clauses:
        i = start
        while i < n and clk_keys[i] == ckey:
            c = clk_rows[i]
            hk = cl[c, CL_HOST]
            best = -1
            for j in range(n_live):
                e = lv_en[j]
                holds = en[e, EN_HOST] <= hk < en[e, EN_HOST] + en[e, EN_SIZE]
                if en[e, EN_RANK] == rk and en[e, EN_DI] == di and holds and e > best:
                    best = e
            if best >= 0:
                dup = False
                for w in range(nwin):
                    if win[w, 2] == best:
                        dup = True
                if not dup and nwin < win.shape[0]:
                    olo = cl[c, CL_OBJLO]
                    ohi = cl[c, CL_OBJHI]
                    if olo < 0 and en[best, EN_CLAUSE] >= 0:
                        olo = cl[en[best, EN_CLAUSE], CL_OBJLO]
                        ohi = cl[en[best, EN_CLAUSE], CL_OBJHI]
                    _set_window(win, nwin, en, best, olo, ohi)
                    nwin += 1
            i += 1
    else:   # no clause events: every live CV of (rank, device), in creation order
        for e in np.sort(lv_en[:n_live]):
            if en[e, EN_RANK] == rk and en[e, EN_DI] == di and nwin < win.shape[0]:
                olo = np.int64(-1)
                ohi = np.int64(-1)
                if en[e, EN_CLAUSE] >= 0:
                    olo = cl[en[e, EN_CLAUSE], CL_OBJLO]
                    ohi = cl[en[e, EN_CLAUSE], CL_OBJHI]
                _set_window(win, nwin, en, e, olo, ohi)
                nwin += 1
    ctr[C_WIN_GEN] = ctr[C_GEN]
    ctr[C_WIN_KEY] = wkey
    ctr[C_WIN_DEV] = wdev
    ctr[C_NWIN] = nwin
    return nwin


@njit(cache=True)
def _set_window(win, w, en, e, olo, ohi):
    """Window of entry e: one section length around its CV, widened to its host object on the device.

    Columns: 0-1 the whole window, 2 the entry, 3-4 the host object on the device (-1 unknown).
    """
    d0 = en[e, EN_DEV]
    h0 = en[e, EN_HOST]
    sz = en[e, EN_SIZE]
    win[w, 0] = d0 - sz
    win[w, 1] = d0 + 2 * sz
    win[w, 3] = -1
    win[w, 4] = -1
    if olo >= 0:
        win[w, 3] = d0 + (olo - h0)
        win[w, 4] = d0 + (ohi - h0)
        win[w, 0] = min(win[w, 0], win[w, 3])
        win[w, 1] = max(win[w, 1], win[w, 4])
    win[w, 2] = e


@njit(cache=True)
def _pick_window(win, nwin, en, key, stop):
    """The window an out-of-CV device piece [key, stop) belongs to, or -1.

    Decided at x, the piece's first byte inside any window: windows whose host object holds x beat
    windows that only hold it in their one-section band; then the nearest CV; then clause order.
    """
    x = stop
    for w in range(nwin):
        if win[w, 0] < stop and win[w, 1] > key:
            x = min(x, max(key, win[w, 0]))
    if x >= stop:
        return -1
    best = -1
    best_tier = 2
    best_dist = BIG
    for w in range(nwin):
        if not (win[w, 0] <= x < win[w, 1]):
            continue
        tier = 0 if win[w, 3] <= x < win[w, 4] else 1
        e = win[w, 2]
        d0 = en[e, EN_DEV]
        dist = d0 - x if x < d0 else x - (d0 + en[e, EN_SIZE])
        if tier < best_tier or (tier == best_tier and dist < best_dist):
            best = w
            best_tier = tier
            best_dist = dist
    return best


@njit(cache=True)
def _section_overflow(fd, fd_hash, ctr, g, rk, di, loc, clause_ev, name, hk, size, olo, ohi):
    """Record the bytes of [hk, hk+size) outside the host object [olo, ohi) (at a clause or a bare copy)."""
    if olo < 0 or size <= 0:
        return
    end = hk + size
    before = max(np.int64(0), min(end, olo) - hk)
    after = max(np.int64(0), end - max(hk, ohi))
    nbytes = before + after
    if nbytes <= 0:
        return
    first = hk if before > 0 else max(hk, ohi)
    last = end - 1 if after > 0 else min(end, olo) - 1
    kx = _clause_key(loc, name) if clause_ev >= 0 else np.int64(-1)
    _record(fd, fd_hash, ctr, FK_SECTION, rk, di, loc, kx, -1, clause_ev, g, first & ADDR_MASK, -1, -1,
            nbytes, last & ADDR_MASK, 0, size, -1, name, olo, ohi)


@njit(cache=True)
def _apply_control(c, g, ct, cl, clk_keys, clk_rows, ndev, tr_lo, tr_hi, tr_base, shadow, blo, bhi, bcnt, lgb, en,
                   lv_key, lv_en, al_lo, al_hi, ctr, fd, fd_hash, wa_sh, wa_id, wa_done, wh, wn):
    kind = ct[c, CT_KIND]
    rk = ct[c, CT_RANK]
    hk = (rk << SHIFT) | ct[c, CT_ADDR]
    size = ct[c, CT_SIZE]
    if kind == K_ALLOC:
        if size <= 0:
            return
        n = ctr[C_NALLOC]
        i = _search(al_lo, n, hk)
        if i >= 0 and al_lo[i] == hk and al_hi[i] == hk + size:
            return  # the same object recorded again
        # drop live objects overlapping the new one, insert it, reset its tracked bytes
        w = 0
        for j in range(n):
            if al_hi[j] <= hk or al_lo[j] >= hk + size:
                al_lo[w] = al_lo[j]
                al_hi[w] = al_hi[j]
                w += 1
        i = _search(al_lo, w, hk) + 1
        for j in range(w, i, -1):
            al_lo[j] = al_lo[j - 1]
            al_hi[j] = al_hi[j - 1]
        al_lo[i] = hk
        al_hi[i] = hk + size
        ctr[C_NALLOC] = w + 1
        key = hk
        end = hk + size
        while key < end:
            s0, run_end = _tracked(tr_lo, tr_hi, tr_base, key)
            stop = min(end, run_end)
            if s0 >= 0:
                s1 = s0 + (stop - key)
                _map_range_ctl(shadow, blo, bhi, bcnt, lgb, s0, s1, np.int64(0), np.int64(OVV | OVI), MAP_PLAIN, np.int64(0))
                _watch(s0, s1, g, shadow, blo, bhi, lgb, wa_sh, wa_id, wa_done, wh, wn)
            key = stop
    elif kind == K_FREE:
        n = ctr[C_NALLOC]
        i = _search(al_lo, n, hk)
        if i >= 0 and al_lo[i] == hk:
            for j in range(i, n - 1):
                al_lo[j] = al_lo[j + 1]
                al_hi[j] = al_hi[j + 1]
            ctr[C_NALLOC] = n - 1
    elif kind == K_MAP:
        r = ct[c, CT_CLROW]
        olo, ohi = _live_alloc(al_lo, al_hi, ctr, hk)
        cl[r, CL_OBJLO] = olo
        cl[r, CL_OBJHI] = ohi
        ctr[C_GEN] += 1  # overflow windows depend on clause objects
        if (ct[c, CT_OP] & M_NO_DATA) == 0:
            _section_overflow(fd, fd_hash, ctr, g, rk, ct[c, CT_DI], ct[c, CT_LOC], g, ct[c, CT_NAME], hk, size,
                              olo, ohi)
    elif kind == K_DATA:
        di = ct[c, CT_DI]
        if di < 0:
            return
        op = ct[c, CT_OP]
        dk = ((rk * ndev + di) << SHIFT) | ct[c, CT_ADDR2]
        ckey = (rk << CKEY_SHIFT) | ct[c, CT_ID] if ct[c, CT_ID] >= 0 else np.int64(-1)
        cvv, cvi = _cv_bits(di)
        if op == D_ALLOC or op == D_ASSOC:
            if size <= 0 or ct[c, CT_ADDR] == 0:
                return  # device memory with no host side (omp_target_alloc): no OV to track
            # a new CV replaces any live CV it overlaps on that device
            j = 0
            while j < ctr[C_NLIVE]:
                e = lv_en[j]
                if lv_key[j] < dk + size and dk < lv_key[j] + en[e, EN_SIZE]:
                    en[e, EN_RELEASE] = g
                    _remove_live(lv_key, lv_en, ctr, j)
                else:
                    j += 1
            e = ctr[C_NENT]
            s0, run_end = _tracked(tr_lo, tr_hi, tr_base, hk)
            en[e, EN_HOST] = hk
            en[e, EN_DEV] = dk
            en[e, EN_SIZE] = size
            en[e, EN_SHADOW] = s0
            en[e, EN_DI] = di
            en[e, EN_RANK] = rk
            en[e, EN_CLAUSE] = _clause_of(cl, clk_keys, clk_rows, ckey, hk, ct[c, CT_NAME])
            en[e, EN_CREATE] = g
            en[e, EN_RELEASE] = -1
            en[e, EN_NAME] = ct[c, CT_NAME]
            ctr[C_NENT] = e + 1
            _insert_live(lv_key, lv_en, ctr, dk, e)
            if op == D_ASSOC and ct[c, CT_AUX] == 1:
                # a declare-target variable's device copy: initialised from the device image
                _map_range_ctl(shadow, blo, bhi, bcnt, lgb, s0, s0 + size, np.int64(-1), cvv | cvi, MAP_PLAIN, np.int64(0))
            else:
                _map_range_ctl(shadow, blo, bhi, bcnt, lgb, s0, s0 + size, ~(cvv | cvi), np.int64(0), MAP_PLAIN, np.int64(0))
            _watch(s0, s0 + size, g, shadow, blo, bhi, lgb, wa_sh, wa_id, wa_done, wh, wn)
        elif op == D_DELETE or op == D_DISASSOC:
            i, e = _find_live(lv_key, lv_en, en, ctr[C_NLIVE], dk)
            if e < 0:
                return
            en[e, EN_RELEASE] = g
            _remove_live(lv_key, lv_en, ctr, i)
            s0 = en[e, EN_SHADOW]
            _map_range_ctl(shadow, blo, bhi, bcnt, lgb, s0, s0 + en[e, EN_SIZE], ~(cvv | cvi), np.int64(0), MAP_PLAIN, np.int64(0))
            _watch(s0, s0 + en[e, EN_SIZE], g, shadow, blo, bhi, lgb, wa_sh, wa_id, wa_done, wh, wn)
        elif op == D_TO or op == D_FROM:
            clause = _clause_of(cl, clk_keys, clk_rows, ckey, hk, ct[c, CT_NAME])
            if clause < 0:
                olo, ohi = _live_alloc(al_lo, al_hi, ctr, hk)
                _section_overflow(fd, fd_hash, ctr, g, rk, di, ct[c, CT_LOC], -1, ct[c, CT_NAME], hk, size,
                                  olo, ohi)
            i, e = _find_live(lv_key, lv_en, en, ctr[C_NLIVE], dk)
            if e < 0 or size <= 0:
                return
            off = dk - en[e, EN_DEV]
            n = min(size, en[e, EN_SIZE] - off)
            s0 = en[e, EN_SHADOW] + off
            direct = en[e, EN_HOST] + off == hk
            shift = np.int64(2 + 2 * di)
            if op == D_TO:
                if direct:   # CV := OV
                    _map_range_ctl(shadow, blo, bhi, bcnt, lgb, s0, s0 + n, ~(cvv | cvi), np.int64(0), MAP_TO, shift)
                else:  # the runtime wrote a device address into this CV (pointer attachment)
                    _map_range_ctl(shadow, blo, bhi, bcnt, lgb, s0, s0 + n, np.int64(-1), cvv | cvi, MAP_PLAIN, np.int64(0))
            else:
                if not direct:
                    return
                _map_range_ctl(shadow, blo, bhi, bcnt, lgb, s0, s0 + n, ~np.int64(OVV | OVI), np.int64(0), MAP_FROM, shift)
            _watch(s0, s0 + n, g, shadow, blo, bhi, lgb, wa_sh, wa_id, wa_done, wh, wn)


@njit(cache=True)
def apply_events(cols, sel, tables, state, watch):
    """Apply events ``rows[:n_rows]`` (or rows 0..n_rows-1 when ``rows`` is empty) of one column set.

    The arguments are the records of ``vsm_layout``: ``Columns``, ``Selection``, ``Tables``,
    ``State`` and ``Watch``. ``base`` is the global index of row 0. Every piece of state lives in
    the arrays passed in. ``stride`` / ``blocks`` are the ACCESS columns ``addr2`` / ``aux2``: a
    strided row is applied one block after the other, all with the row's event index.

    ``loc``, ``aux`` and ``eid`` (``id``) matter only to findings and overflows; they may be empty
    (not read from the log yet). The kernel then stops at the first row that needs them, before
    changing anything that applying the row again would not set to the same value, and leaves
    that row's position in ``ctr[C_STOP]`` (-1 when every row was applied): the caller reads the
    columns and calls again with ``first`` = that position.
    """
    kind, rank, device, loc, addr, size, eid, op, aux, stride, blocks = cols
    rows, first, n_rows, base = sel
    ct_event, ct, clk_keys, clk_rows, devmap, ndev, all_cvv, tr_lo, tr_hi, tr_base = tables
    cl, shadow, blo, bhi, bcnt, lgb, en, lv_key, lv_en, al_lo, al_hi, ctr, win, fd, fd_hash = state
    wa_sh, wa_id, wa_done, wh, wn, st_ev, st_w = watch
    lazy = len(loc) == 0
    ctr[C_STOP] = -1
    use_rows = len(rows) > 0
    watching = len(wa_sh) > 0
    n_ct = len(ct_event)
    ndevmap = len(devmap)
    keep_host = ~np.int64(all_cvv)
    keep_dev = ~(np.int64(OVV) | np.int64(all_cvv))
    set_host = np.int64(OVV | OVI) & keep_host
    # lookup caches, invalidated whenever a control event changes the tables:
    # host: the tracked interval [h_lo, h_hi) at shadow h_base; device: the last two live CVs looked up
    # (kernels alternate between a few arrays: a hit in ``cv2`` swaps the two)
    h_lo = np.int64(0)
    h_hi = np.int64(0)
    h_base = np.int64(0)
    cv = cv2 = NO_CV
    for j in range(first, n_rows):
        r = rows[j] if use_rows else j
        g = base + r
        if watching:
            k = _search(st_ev, len(st_ev), g - 1) + 1
            while k < len(st_ev) and st_ev[k] == g:
                wa_done[st_w[k]] = 1
                k += 1
        kd = kind[r]
        if kd != K_ACCESS:
            if kd == K_ALLOC or kd == K_FREE or kd == K_MAP or kd == K_DATA:
                c = _search(ct_event, n_ct, g)
                if c >= 0 and ct_event[c] == g:
                    _apply_control(c, g, ct, cl, clk_keys, clk_rows, ndev, tr_lo, tr_hi, tr_base, shadow, blo, bhi, bcnt,
                                   lgb,
                                   en, lv_key, lv_en, al_lo, al_hi, ctr, fd, fd_hash, wa_sh, wa_id, wa_done, wh, wn)
                    ctr[C_EPOCH] = g
                    h_hi = np.int64(0)
                    h_lo = np.int64(0)
                    cv = cv2 = NO_CV
            continue
        sz = np.int64(size[r])
        if sz <= 0:
            continue
        a0 = np.int64(addr[r])
        nblk = max(np.int64(blocks[r]), np.int64(1))
        step = np.int64(stride[r]) if nblk > 1 else np.int64(0)
        rk = np.int64(rank[r])
        dv = device[r]
        write = (op[r] & A_WRITE) != 0
        di = -1
        if dv >= 0:
            if dv >= ndevmap:
                continue
            di = devmap[dv]
            if di < 0:
                continue
        if di >= 0 and a0 >= 0 and (nblk == 1 or step > 0):
            # a device range or strided run wholly inside one of the two cached CVs: its blocks map to
            # shadow bytes at the same stride, so only the per-block state checks remain
            key0 = ((rk * ndev + di) << SHIFT) | a0
            span = (nblk - 1) * step + sz
            inside = ((a0 + span) >> SHIFT) == 0
            if inside and not (cv.lo <= key0 and key0 + span <= cv.hi) and cv2.lo <= key0 and key0 + span <= cv2.hi:
                cv, cv2 = cv2, cv
            if inside and cv.lo <= key0 and key0 + span <= cv.hi:
                cvv, cvi = _cv_bits(di)
                sb = cv.shadow + (key0 - cv.lo)
                if nblk == 1:
                    # the common row: one shadow block whose bounds decide it (else the general path)
                    b0 = sb >> lgb
                    if not watching and (sb + sz - 1) >> lgb == b0:
                        if write:
                            if _unchanged(blo[b0], bhi[b0], keep_dev, cvv | cvi):
                                continue
                        elif (blo[b0] & cvv) != 0:
                            continue
                # the whole span at once when it has fewer shadow blocks than the run's blocks touch
                elif not watching and span >> lgb <= nblk * ((sz >> lgb) + 1) \
                        and _span_settled(blo, bhi, lgb, sb, sb + span, write, keep_dev, cvv | cvi, cvv):
                    continue
                else:
                    done = True
                    for blk in range(nblk):
                        s0 = sb + blk * step
                        s1 = s0 + sz
                        b0 = s0 >> lgb
                        one = (s1 - 1) >> lgb == b0
                        if write:
                            _write_piece(shadow, blo, bhi, bcnt, lgb, s0, s1, b0, one, keep_dev, cvv | cvi)
                            if watching:
                                _watch(s0, s1, g, shadow, blo, bhi, lgb, wa_sh, wa_id, wa_done, wh, wn)
                        elif not (one and (blo[b0] & cvv) != 0) and not _all_have(shadow, blo, bhi, lgb, s0, s1, cvv):
                            done = False   # a bad read: the general path below records it, block by block
                            break
                    if done:
                        continue
        row_e = -1       # CV entry the row's first block began in: later blocks outside it overflow it
        row_first = True
        for blk in range(nblk):
            a = a0 + blk * step
            if ((a | (a + sz)) >> SHIFT) != 0:
                continue  # not a real address (see build_static)
            if di < 0:
                # ---------------- host access: pieces in tracked memory ----------------
                key = (rk << SHIFT) | a
                end = key + sz
                while key < end:
                    if not (h_lo <= key < h_hi):
                        i = _search(tr_lo, len(tr_lo), key)
                        if i >= 0 and key < tr_hi[i]:
                            h_lo = tr_lo[i]
                            h_hi = tr_hi[i]
                            h_base = tr_base[i]
                        else:   # untracked memory up to the next tracked interval
                            key = min(end, tr_lo[i + 1] if i + 1 < len(tr_lo) else BIG)
                            continue
                    stop = min(end, h_hi)
                    s0 = h_base + (key - h_lo)
                    s1 = s0 + (stop - key)
                    b0 = s0 >> lgb
                    one = (s1 - 1) >> lgb == b0   # the piece is in one block: decide from its bounds
                    if write:
                        _write_piece(shadow, blo, bhi, bcnt, lgb, s0, s1, b0, one, keep_host, set_host)
                        if watching:
                            _watch(s0, s1, g, shadow, blo, bhi, lgb, wa_sh, wa_id, wa_done, wh, wn)
                    elif one and (blo[b0] & OVV) != 0:
                        pass
                    elif not _all_have(shadow, blo, bhi, lgb, s0, s1, np.int64(OVV)):
                        if lazy:
                            ctr[C_STOP] = j
                            return
                        _host_read_findings(shadow, blo, bhi, lgb, s0, s1, key, g, rk, loc[r], aux[r], sz, en, cl, ctr,
                                            fd, fd_hash)
                    key = stop
            else:
                # ---------------- device access: pieces in live CVs, gaps checked for overflow ----------------
                cvv, cvi = _cv_bits(di)
                key = ((rk * ndev + di) << SHIFT) | a
                start = key
                start_lo = np.int64(-1)
                start_e = -1
                end = key + sz
                if row_e >= 0 and not (en[row_e, EN_DEV] <= key < en[row_e, EN_DEV] + en[row_e, EN_SIZE]):
                    # one strided access: a block past the section of the first is that variable's overflow,
                    # wherever it lands (another variable's device copy, a gap)
                    if lazy:
                        ctr[C_STOP] = j
                        return
                    _overflow_of(row_e, key, end, g, rk, di, loc[r], aux[r], sz, en, cl, fd, fd_hash, ctr)
                    continue
                if row_first:
                    row_first = False
                    _row_i, row_e = _find_live(lv_key, lv_en, en, ctr[C_NLIVE], key)
                while key < end:
                    if key != start and cv.lo == start_lo:
                        # one access that began in a CV runs past its end: the rest overflows that variable
                        if lazy:
                            ctr[C_STOP] = j
                            return
                        _overflow_of(start_e, key, end, g, rk, di, loc[r], aux[r], sz, en, cl, fd, fd_hash, ctr)
                        break
                    if not (cv.lo <= key < cv.hi):
                        if cv2.lo <= key < cv2.hi:
                            cv, cv2 = cv2, cv
                            e = cv.entry
                        else:
                            i, e = _find_live(lv_key, lv_en, en, ctr[C_NLIVE], key)
                        if e >= 0 and not (cv.lo <= key < cv.hi):
                            cv2 = cv
                            cv = CachedCV(en[e, EN_DEV], en[e, EN_DEV] + en[e, EN_SIZE], en[e, EN_SHADOW], np.int64(e))
                        elif e < 0:
                            stop = min(end, lv_key[i + 1]) if i + 1 < ctr[C_NLIVE] else end
                            if lazy:
                                ctr[C_STOP] = j
                                return
                            _overflow(key, stop, g, rk, di, ndev, eid[r], loc[r], aux[r], sz, cl, clk_keys,
                                      clk_rows, en, lv_en, al_lo, al_hi, ctr, win, fd, fd_hash)
                            key = stop
                            continue
                    if key == start:
                        start_lo = cv.lo
                        start_e = cv.entry
                    stop = min(end, cv.hi)
                    # the piece step is written out here as in the host path and the strided fast path: one
                    # helper for the three (numba-inlined or not) made this kernel 1.6x slower on the 10 M-event
                    # synthetic log (0.28 -> 0.45 s)
                    s0 = cv.shadow + (key - cv.lo)
                    s1 = s0 + (stop - key)
                    b0 = s0 >> lgb
                    one = (s1 - 1) >> lgb == b0
                    if write:
                        _write_piece(shadow, blo, bhi, bcnt, lgb, s0, s1, b0, one, keep_dev, cvv | cvi)
                        if watching:
                            _watch(s0, s1, g, shadow, blo, bhi, lgb, wa_sh, wa_id, wa_done, wh, wn)
                    elif one and (blo[b0] & cvv) != 0:
                        pass
                    elif not _all_have(shadow, blo, bhi, lgb, s0, s1, cvv):
                        if lazy:
                            ctr[C_STOP] = j
                            return
                        _device_read_findings(shadow, blo, bhi, lgb, s0, s1, key, g, rk, di, cvv, cvi, cv.entry, loc[r],
                                              aux[r], sz, en, cl, fd, fd_hash, ctr)
                    key = stop


@njit(cache=True)
def _overflow_of(e, key, end, g, rk, di, loc, width, sz, en, cl, fd, fd_hash, ctr):
    """Device bytes [key, end) of an access that began inside entry e's CV: an overflow of e."""
    kx, clause_ev, name, olo, ohi = _entry_key(en, cl, e)
    host = en[e, EN_HOST] + (key - en[e, EN_DEV])
    _record(fd, fd_hash, ctr, FK_OVERFLOW, rk, di, loc, kx, e, clause_ev, g, host & ADDR_MASK, key & ADDR_MASK, -1,
            end - key, (host + (end - 1 - key)) & ADDR_MASK, width, sz, en[e, EN_RELEASE], name, olo, ohi)


@njit(cache=True)
def _overflow(key, stop, g, rk, di, ndev, cid, loc, width, sz, cl, clk_keys, clk_rows, en, lv_en, al_lo, al_hi, ctr,
              win, fd, fd_hash):
    """Device bytes [key, stop) in no live CV: an overflow of a mapped variable, or unmapped memory.

    A piece inside the host object of a variable the construct maps (translated to the device) overflows
    that variable; else a piece on a live host object of the program (heap, global, stack: with host
    offloading the device dereferenced a host address no clause mapped) is unmapped memory of that
    object; else a piece in the one-section band around a mapped CV overflows that variable.
    """
    ckey = (rk << CKEY_SHIFT) | cid if cid >= 0 else np.int64(-1)
    nwin = _windows(cl, clk_keys, clk_rows, en, lv_en, ctr, win, ckey, rk, di, ndev)
    w = _pick_window(win, nwin, en, key, stop)
    x0 = max(key, win[w, 0]) if w >= 0 else key
    if w < 0 or not (win[w, 3] <= x0 < win[w, 4]):
        hk = (rk << SHIFT) | (key & ADDR_MASK)
        olo, ohi = _live_alloc(al_lo, al_hi, ctr, hk)
        name = np.int64(-1)
        if olo < 0:   # no known object: the memory a pointer the construct passes (firstprivate) points to
            c = _pointee(cl, clk_keys, clk_rows, ckey, hk)
            if c >= 0:
                olo = cl[c, CL_HOST]
                ohi = olo
                name = cl[c, CL_NAME]
        if olo >= 0:
            n = min(stop - key, ohi - hk) if ohi > olo else stop - key
            _record(fd, fd_hash, ctr, FK_UNMAPPED, rk, di, loc, KX_OBJECT + olo, -1, -1, g, hk & ADDR_MASK,
                    key & ADDR_MASK, -1, n, (hk + n - 1) & ADDR_MASK, width, sz, -1, name, olo, ohi)
            return
    if w < 0:
        return
    x1 = min(stop, win[w, 1])
    we = win[w, 2]
    kx, clause_ev, name, olo, ohi = _entry_key(en, cl, we)
    host = en[we, EN_HOST] + (x0 - en[we, EN_DEV])
    _record(fd, fd_hash, ctr, FK_OVERFLOW, rk, di, loc, kx, we, clause_ev, g, host & ADDR_MASK, x0 & ADDR_MASK, -1,
            x1 - x0, (host + (x1 - 1 - x0)) & ADDR_MASK, width, sz, en[we, EN_RELEASE], name, olo, ohi)


@njit(cache=True)
def _pointee(cl, clk_keys, clk_rows, ckey, hk):
    """The zero-length clause of construct ckey (a pointer passed firstprivate / implicitly, ``h[:0]``) whose
    value is the nearest address at or below host key hk (within 4 GiB): the pointer through which the
    kernel reached unmapped memory, or -1."""
    if ckey < 0:
        return -1
    n = len(clk_keys)
    i = _search(clk_keys, n, ckey - 1) + 1
    best = -1
    while i < n and clk_keys[i] == ckey:
        c = clk_rows[i]
        v = cl[c, CL_HOST]
        if cl[c, CL_SIZE] == 0 and hk - (np.int64(1) << 32) < v <= hk and (best < 0 or v > cl[best, CL_HOST]):
            best = c
        i += 1
    return best


@njit(cache=True)
def _host_read_findings(shadow, blo, bhi, lgb, s0, s1, key0, g, rk, loc, width, sz, en, cl, ctr, fd, fd_hash):
    """Record the runs of invalid bytes of a host read of shadow[s0:s1] (host key key0)."""
    s = s0
    while s < s1:
        s = _run_end(shadow, blo, bhi, lgb, s, s1, np.int64(OVV), np.int64(OVV))   # next invalid byte
        if s >= s1:
            break
        v = _value(shadow, blo, bhi, lgb, s)
        k = key0 + (s - s0)
        e, hi = _latest_entry(en, ctr, k)
        uum = (v & OVI) == 0
        t = _run_end(shadow, blo, bhi, lgb, s + 1, min(s1, s0 + (hi - key0)), np.int64(OVV | OVI), v & (OVV | OVI))
        kx, clause_ev, name, olo, ohi = _entry_key(en, cl, e)
        release = en[e, EN_RELEASE] if e >= 0 else -1
        _record(fd, fd_hash, ctr, FK_UUM if uum else FK_STALE, rk, -1, loc, kx, e, clause_ev, g, k & ADDR_MASK,
                -1, s, t - s, (k + (t - 1 - s)) & ADDR_MASK, width, sz, release, name, olo, ohi)
        s = t


@njit(cache=True)
def _device_read_findings(shadow, blo, bhi, lgb, s0, s1, key0, g, rk, di, cvv, cvi, e, loc, width, sz, en, cl, fd,
                          fd_hash, ctr):
    """Record the runs of invalid bytes of a device read of shadow[s0:s1] (device key key0, entry e)."""
    kx, clause_ev, name, olo, ohi = _entry_key(en, cl, e)
    s = s0
    while s < s1:
        s = _run_end(shadow, blo, bhi, lgb, s, s1, cvv, cvv)   # next invalid byte
        if s >= s1:
            break
        v = _value(shadow, blo, bhi, lgb, s)
        uum = (v & cvi) == 0
        t = _run_end(shadow, blo, bhi, lgb, s + 1, s1, cvv | cvi, v & (cvv | cvi))
        dk = key0 + (s - s0)
        host = en[e, EN_HOST] + (dk - en[e, EN_DEV])
        _record(fd, fd_hash, ctr, FK_UUM if uum else FK_STALE, rk, di, loc, kx, e, clause_ev, g, host & ADDR_MASK,
                dk & ADDR_MASK, s, t - s, (host + (t - 1 - s)) & ADDR_MASK, width, sz, en[e, EN_RELEASE], name,
                olo, ohi)
        s = t
