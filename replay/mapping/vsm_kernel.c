/* The hot path of the variable state machine (VSM): applies events to the byte shadow.
 *
 * Why C: a log holds millions of accesses, every event (access or control) is applied here, with ranges
 * applied as slices of the shadow; and `trace analyze` of a small log must not pay numba's start-up
 * (~0.3 s CPU). replay/mapping/vsm_native.py compiles this file on first use (formats/native_build.py)
 * and calls it through ctypes; replay/mapping/vsm.py owns the state arrays and the Python API. Nothing
 * in here allocates (but the rare overflow-window sort) or knows about strings, locations or findings'
 * wording. Keys, shadow bits and table columns are those of vsm_layout.py, passed in as -D flags.
 *
 * Compiled with -fwrapv: int64 arithmetic wraps as it did in numba (an access's address is a uint64
 * read as int64; a key past 2^63 is "not a real address", see vsm.build_static).
 *
 * The shadow's element type follows the device count (uint8 for up to 3 devices, ... uint64 for 31):
 * vsm_shadow.h holds the functions that touch shadow bytes and is compiled once per type. */

#include <stdlib.h>
#include <string.h>

#include "vsm_kernel.h"

#define CT(t, c, col) ((t)->ct[(c) * CT_N + (col)])
#define CL(st, c, col) ((st)->cl[(c) * CL_N + (col)])
#define EN(st, e, col) ((st)->en[(e) * EN_N + (col)])
#define FD(st, i, col) ((st)->fd[(i) * F_N + (col)])
#define WIN(st, w, col) ((st)->win[(w) * 5 + (col)])

static inline i64 imin(i64 a, i64 b) { return a < b ? a : b; }
static inline i64 imax(i64 a, i64 b) { return a > b ? a : b; }

/* The CV-valid and CV-initialised bits of dense device di (bits up to 63: built unsigned). */
static inline i64 cv_valid(i64 di) { return (i64)((uint64_t)4 << (2 * di)); }
static inline i64 cv_init(i64 di) { return (i64)((uint64_t)8 << (2 * di)); }

/* The new value of one shadow byte v under a bit map. */
static inline i64 fmap(i64 v, i64 keep, i64 set_bits, i64 mode, i64 shift) {
    i64 r = (v & keep) | set_bits;
    if (mode == MAP_TO)
        r |= (i64)((uint64_t)(v & (OVV | OVI)) << shift);
    else if (mode == MAP_FROM)
        r |= (v >> shift) & (OVV | OVI);
    return r;
}

/* Whether the plain map (keep, set) changes no byte of a block with bounds lb, ub. */
static inline int unchanged(i64 lb, i64 ub, i64 keep, i64 set_bits) {
    return ((lb & keep) | set_bits) == lb && ((ub & keep) | set_bits) == ub;
}

/* Whether an access to any bytes of shadow [s0, s1) needs nothing: for a write, every block is uniform
 * and already in the written state; for a read, every byte has bit (one check per block of the span
 * instead of one per block of a strided run). */
static inline int span_settled(const i64 *blo, const i64 *bhi, i64 lgb, i64 s0, i64 s1, int write, i64 keep,
                               i64 set_bits, i64 bit) {
    for (i64 b = s0 >> lgb; b <= (s1 - 1) >> lgb; b++) {
        i64 lb = blo[b];
        if (write) {
            if (lb != bhi[b] || !unchanged(lb, lb, keep, set_bits))
                return 0;
        } else if ((lb & bit) == 0) {
            return 0;
        }
    }
    return 1;
}

/* Index of the last key <= key among keys[:n] (sorted), or -1. */
static inline i64 search(const i64 *keys, i64 n, i64 key) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (keys[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* A live CV the kernel looked up last: its device keys [lo, hi), where its bytes start in the shadow,
 * its entry. */
typedef struct {
    i64 lo, hi, shadow, entry;
} cached_cv;

static const cached_cv NO_CV = {0, 0, 0, -1};

/* The entry of the CV containing device key dk (-1 when none); *live: its index among the live CVs
 * (or of the last live CV below dk). */
static i64 find_live(const qv_state *st, i64 dk, i64 *live) {
    i64 i = search(st->lv_key, st->ctr[C_NLIVE], dk);
    *live = i;
    if (i >= 0) {
        i64 e = st->lv_en[i];
        if (dk < st->lv_key[i] + EN(st, e, EN_SIZE))
            return e;
    }
    return -1;
}

static void remove_live(qv_state *st, i64 i) {
    i64 n = st->ctr[C_NLIVE];
    for (i64 j = i; j < n - 1; j++) {
        st->lv_key[j] = st->lv_key[j + 1];
        st->lv_en[j] = st->lv_en[j + 1];
    }
    st->ctr[C_NLIVE] = n - 1;
    st->ctr[C_GEN]++;
}

static void insert_live(qv_state *st, i64 dk, i64 e) {
    i64 n = st->ctr[C_NLIVE];
    i64 i = search(st->lv_key, n, dk) + 1;
    for (i64 j = n; j > i; j--) {
        st->lv_key[j] = st->lv_key[j - 1];
        st->lv_en[j] = st->lv_en[j - 1];
    }
    st->lv_key[i] = dk;
    st->lv_en[i] = e;
    st->ctr[C_NLIVE] = n + 1;
    st->ctr[C_GEN]++;
}

/* Shadow index of host key (-1 if untracked); *run_end: end of the run starting at key (tracked-interval
 * end or next start). */
static i64 tracked(const qv_tables *t, i64 key, i64 *run_end) {
    i64 i = search(t->tr_lo, t->n_tr, key);
    if (i >= 0 && key < t->tr_hi[i]) {
        *run_end = t->tr_hi[i];
        return t->tr_base[i] + (key - t->tr_lo[i]);
    }
    *run_end = i + 1 < t->n_tr ? t->tr_lo[i + 1] : BIG;
    return -1;
}

/* The pieces of host range [*key, end), each all tracked or all untracked, one per call, in order: the
 * shadow index of the piece at *key (-1: untracked), *s1 one past its last; *key moves to the next piece.
 *     for (i64 key = lo, s1; key < end;) { i64 at = key, s0 = next_piece(t, &key, end, &s1); ... } */
static i64 next_piece(const qv_tables *t, i64 *key, i64 end, i64 *s1) {
    i64 run_end;
    i64 s0 = tracked(t, *key, &run_end);
    i64 stop = end < run_end ? end : run_end;
    *s1 = s0 + (stop - *key);
    *key = stop;
    return s0;
}

/* Add one run of bad bytes to the finding with key (fk, rk, di, loc, kx). */
static void record(qv_state *st, i64 fk, i64 rk, i64 di, i64 loc, i64 kx, i64 e, i64 clause_ev, i64 g, i64 host,
                   i64 dev, i64 sh, i64 nbytes, i64 last_host, i64 width, i64 asize, i64 release, i64 name, i64 olo,
                   i64 ohi) {
    i64 *ctr = st->ctr;
    i64 h = (fk * 1000003) ^ (rk * 7919) ^ ((di + 2) * 104729) ^ (loc * 1299709) ^ (kx * 15485863);
    i64 mask = st->fd_hash_len - 1;
    i64 slot = h & mask;
    for (;;) {
        i64 v = st->fd_hash[slot];
        if (v == 0) {
            i64 n = ctr[C_NFIND];
            if (n >= st->fd_cap) {
                ctr[C_DROPPED]++;
                return;
            }
            st->fd_hash[slot] = n + 1;
            FD(st, n, F_KIND) = fk;
            FD(st, n, F_RANK) = rk;
            FD(st, n, F_DI) = di;
            FD(st, n, F_LOC) = loc;
            FD(st, n, F_KX) = kx;
            FD(st, n, F_ENTRY) = e;
            FD(st, n, F_CLAUSE) = clause_ev;
            FD(st, n, F_EVENT) = g;
            FD(st, n, F_HOST) = host;
            FD(st, n, F_DEV) = dev;
            FD(st, n, F_SHADOW) = sh;
            FD(st, n, F_BYTES) = nbytes;
            FD(st, n, F_OCC) = 1;
            FD(st, n, F_LASTEV) = g;
            FD(st, n, F_LASTHOST) = last_host;
            FD(st, n, F_WIDTH) = width;
            FD(st, n, F_ASIZE) = asize;
            FD(st, n, F_RELEASE) = release;
            FD(st, n, F_NAME) = name;
            FD(st, n, F_OBJLO) = olo >= 0 ? olo & ADDR_MASK : -1;
            FD(st, n, F_OBJHI) = olo >= 0 ? ohi & ADDR_MASK : -1;
            FD(st, n, F_EPOCH) = ctr[C_EPOCH];
            ctr[C_NFIND] = n + 1;
            return;
        }
        i64 i = v - 1;
        if (FD(st, i, F_KIND) == fk && FD(st, i, F_RANK) == rk && FD(st, i, F_DI) == di && FD(st, i, F_LOC) == loc
            && FD(st, i, F_KX) == kx) {
            FD(st, i, F_BYTES) += nbytes;
            if (host < FD(st, i, F_HOST) && FD(st, i, F_EPOCH) == ctr[C_EPOCH]) {
                /* same epoch, lower byte: it stands for the finding (see C_EPOCH in vsm_layout.py) */
                FD(st, i, F_ENTRY) = e;
                FD(st, i, F_CLAUSE) = clause_ev;
                FD(st, i, F_EVENT) = g;
                FD(st, i, F_HOST) = host;
                FD(st, i, F_DEV) = dev;
                FD(st, i, F_SHADOW) = sh;
                FD(st, i, F_ASIZE) = asize;
                FD(st, i, F_RELEASE) = release;
            }
            if (FD(st, i, F_LASTEV) != g) {
                FD(st, i, F_OCC)++;
                FD(st, i, F_LASTEV) = g;
            }
            FD(st, i, F_LASTHOST) = imax(FD(st, i, F_LASTHOST), last_host);
            if (FD(st, i, F_WIDTH) == 0)   /* element counts use the width as soon as any access knows it */
                FD(st, i, F_WIDTH) = width;
            return;
        }
        slot = (slot + 1) & mask;
    }
}

/* Dedup key part of a clause: its site and variable (a construct run in a loop is one finding). */
static inline i64 clause_key(i64 loc, i64 name) { return (loc + 2) * (i64)4294967296 + (name + 1); }

/* What a finding records of mapping entry e: dedup key part, clause event, variable name, host object. */
typedef struct {
    i64 kx, clause_ev, name, olo, ohi;
} entry_key_t;

static entry_key_t entry_key(const qv_state *st, i64 e) {
    entry_key_t k = {-1, -1, -1, -1, -1};
    if (e < 0)
        return k;
    i64 c = EN(st, e, EN_CLAUSE);
    if (c >= 0) {
        k.kx = clause_key(CL(st, c, CL_LOC), CL(st, c, CL_NAME));
        k.clause_ev = CL(st, c, CL_EVENT);
        k.name = CL(st, c, CL_NAME);
        k.olo = CL(st, c, CL_OBJLO);
        k.ohi = CL(st, c, CL_OBJHI);
        return k;
    }
    k.kx = -2 - EN(st, e, EN_NAME);
    k.name = EN(st, e, EN_NAME);
    return k;
}

/* The newest mapping entry covering host key (-1 if none); *hi_out: end of the key range where it stays
 * the latest. */
static i64 latest_entry(qv_state *st, i64 key, i64 *hi_out) {
    i64 *ctr = st->ctr;
    i64 n = ctr[C_NENT];
    if (ctr[C_LE_N] == n && ctr[C_LE_LO] <= key && key < ctr[C_LE_HI]) {
        *hi_out = ctr[C_LE_HI];
        return ctr[C_LE_E];
    }
    i64 lo = -1, hi = BIG, res = -1;
    for (i64 e = n - 1; e >= 0; e--) {
        i64 h0 = EN(st, e, EN_HOST), h1 = h0 + EN(st, e, EN_SIZE);
        if (h0 <= key && key < h1) {
            res = e;
            lo = imax(lo, h0);
            hi = imin(hi, h1);
            break;
        }
        if (h1 <= key)
            lo = imax(lo, h1);
        else
            hi = imin(hi, h0);
    }
    ctr[C_LE_N] = n;
    ctr[C_LE_LO] = lo;
    ctr[C_LE_HI] = hi;
    ctr[C_LE_E] = res;
    *hi_out = hi;
    return res;
}

/* (lo, hi) of the live host allocation containing host key hk, (-1, -1) if none. */
static void live_alloc(const qv_state *st, i64 hk, i64 *lo, i64 *hi) {
    i64 i = search(st->al_lo, st->ctr[C_NALLOC], hk);
    if (i >= 0 && hk < st->al_hi[i]) {
        *lo = st->al_lo[i];
        *hi = st->al_hi[i];
    } else {
        *lo = *hi = -1;
    }
}

/* Clause of construct ckey behind a data op at host key hk: the first clause holding hk that moves data
 * (to/from), else the first holding hk (a struct's combined entry, an alloc), else the first with the
 * data op's variable name. */
static i64 clause_of(const qv_tables *t, const qv_state *st, i64 ckey, i64 hk, i64 name) {
    if (ckey < 0)
        return -1;
    i64 n = t->n_clk;
    i64 i = search(t->clk_keys, n, ckey - 1) + 1;
    i64 by_name = -1, holding = -1;
    while (i < n && t->clk_keys[i] == ckey) {
        i64 c = t->clk_rows[i];
        if (CL(st, c, CL_HOST) <= hk && hk < CL(st, c, CL_HOST) + CL(st, c, CL_SIZE)) {
            if (CL(st, c, CL_TYPE) & M_MOTION)
                return c;
            if (holding < 0)
                holding = c;
        }
        if (by_name < 0 && name >= 0 && CL(st, c, CL_NAME) == name)
            by_name = c;
        i++;
    }
    return holding >= 0 ? holding : by_name;
}

/* Window of entry e: one section length around its CV, widened to its host object on the device.
 * Columns: 0-1 the whole window, 2 the entry, 3-4 the host object on the device (-1 unknown). */
static void set_window(qv_state *st, i64 w, i64 e, i64 olo, i64 ohi) {
    i64 d0 = EN(st, e, EN_DEV), h0 = EN(st, e, EN_HOST), sz = EN(st, e, EN_SIZE);
    WIN(st, w, 0) = d0 - sz;
    WIN(st, w, 1) = d0 + 2 * sz;
    WIN(st, w, 3) = -1;
    WIN(st, w, 4) = -1;
    if (olo >= 0) {
        WIN(st, w, 3) = d0 + (olo - h0);
        WIN(st, w, 4) = d0 + (ohi - h0);
        WIN(st, w, 0) = imin(WIN(st, w, 0), WIN(st, w, 3));
        WIN(st, w, 1) = imax(WIN(st, w, 1), WIN(st, w, 4));
    }
    WIN(st, w, 2) = e;
}

static int cmp_i64(const void *a, const void *b) {
    i64 x = *(const i64 *)a, y = *(const i64 *)b;
    return (x > y) - (x < y);
}

/* Fill win with the overflow windows (device-key ranges) of construct ckey on (rk, di). */
static i64 windows(const qv_tables *t, qv_state *st, i64 ckey, i64 rk, i64 di) {
    i64 *ctr = st->ctr;
    i64 wkey = ckey, wdev = rk * t->ndev + di;
    if (ctr[C_WIN_GEN] == ctr[C_GEN] && ctr[C_WIN_KEY] == wkey && ctr[C_WIN_DEV] == wdev)
        return ctr[C_NWIN];
    i64 nwin = 0, n_live = ctr[C_NLIVE], n = t->n_clk;
    i64 start = ckey >= 0 ? search(t->clk_keys, n, ckey - 1) + 1 : n;
    if (start < n && t->clk_keys[start] == ckey) {
        for (i64 i = start; i < n && t->clk_keys[i] == ckey; i++) {
            i64 c = t->clk_rows[i];
            /* the CV that holds the clause's section: a struct whose pointer member alone was mapped
             * before (`map(to: x.v[0:n])`) has a CV of that member only, which the implicit map of the
             * whole struct at the kernel finds present: its window is still that struct's */
            i64 hk = CL(st, c, CL_HOST), hend = hk + imax(CL(st, c, CL_SIZE), 1), best = -1;
            for (i64 j = 0; j < n_live; j++) {
                i64 e = st->lv_en[j];
                int holds = EN(st, e, EN_HOST) < hend && hk < EN(st, e, EN_HOST) + EN(st, e, EN_SIZE);
                if (EN(st, e, EN_RANK) == rk && EN(st, e, EN_DI) == di && holds && e > best)
                    best = e;
            }
            if (best >= 0) {
                int dup = 0;
                for (i64 w = 0; w < nwin; w++)
                    if (WIN(st, w, 2) == best)
                        dup = 1;
                if (!dup && nwin < st->n_win) {
                    i64 olo = CL(st, c, CL_OBJLO), ohi = CL(st, c, CL_OBJHI);
                    if (olo < 0 && EN(st, best, EN_CLAUSE) >= 0) {
                        olo = CL(st, EN(st, best, EN_CLAUSE), CL_OBJLO);
                        ohi = CL(st, EN(st, best, EN_CLAUSE), CL_OBJHI);
                    }
                    set_window(st, nwin, best, olo, ohi);
                    nwin++;
                }
            }
        }
    } else if (n_live > 0) {   /* no clause events: every live CV of (rank, device), in creation order */
        i64 *sorted = malloc((size_t)n_live * sizeof(i64));
        if (sorted == NULL)
            abort();
        memcpy(sorted, st->lv_en, (size_t)n_live * sizeof(i64));
        qsort(sorted, (size_t)n_live, sizeof(i64), cmp_i64);
        for (i64 j = 0; j < n_live; j++) {
            i64 e = sorted[j];
            if (EN(st, e, EN_RANK) == rk && EN(st, e, EN_DI) == di && nwin < st->n_win) {
                i64 olo = -1, ohi = -1;
                if (EN(st, e, EN_CLAUSE) >= 0) {
                    olo = CL(st, EN(st, e, EN_CLAUSE), CL_OBJLO);
                    ohi = CL(st, EN(st, e, EN_CLAUSE), CL_OBJHI);
                }
                set_window(st, nwin, e, olo, ohi);
                nwin++;
            }
        }
        free(sorted);
    }
    ctr[C_WIN_GEN] = ctr[C_GEN];
    ctr[C_WIN_KEY] = wkey;
    ctr[C_WIN_DEV] = wdev;
    ctr[C_NWIN] = nwin;
    return nwin;
}

/* The window an out-of-CV device piece [key, stop) belongs to, or -1. Decided at x, the piece's first
 * byte inside any window: windows whose host object holds x beat windows that only hold it in their
 * one-section band; then the nearest CV; then clause order. */
static i64 pick_window(const qv_state *st, i64 nwin, i64 key, i64 stop) {
    i64 x = stop;
    for (i64 w = 0; w < nwin; w++)
        if (WIN(st, w, 0) < stop && WIN(st, w, 1) > key)
            x = imin(x, imax(key, WIN(st, w, 0)));
    if (x >= stop)
        return -1;
    i64 best = -1, best_tier = 2, best_dist = BIG;
    for (i64 w = 0; w < nwin; w++) {
        if (!(WIN(st, w, 0) <= x && x < WIN(st, w, 1)))
            continue;
        i64 tier = WIN(st, w, 3) <= x && x < WIN(st, w, 4) ? 0 : 1;
        i64 e = WIN(st, w, 2), d0 = EN(st, e, EN_DEV);
        i64 dist = x < d0 ? d0 - x : x - (d0 + EN(st, e, EN_SIZE));
        if (tier < best_tier || (tier == best_tier && dist < best_dist)) {
            best = w;
            best_tier = tier;
            best_dist = dist;
        }
    }
    return best;
}

/* Record the bytes of [hk, hk+size) outside the host object [olo, ohi) (at a clause or a bare copy). */
static void section_overflow(qv_state *st, i64 g, i64 rk, i64 di, i64 loc, i64 clause_ev, i64 name, i64 hk,
                             i64 size, i64 olo, i64 ohi) {
    if (olo < 0 || size <= 0)
        return;
    i64 end = hk + size;
    i64 before = imax(0, imin(end, olo) - hk), after = imax(0, end - imax(hk, ohi));
    i64 nbytes = before + after;
    if (nbytes <= 0)
        return;
    i64 first = before > 0 ? hk : imax(hk, ohi);
    i64 last = after > 0 ? end - 1 : imin(end, olo) - 1;
    i64 kx = clause_ev >= 0 ? clause_key(loc, name) : -1;
    record(st, FK_SECTION, rk, di, loc, kx, -1, clause_ev, g, first & ADDR_MASK, -1, -1, nbytes, last & ADDR_MASK,
           0, size, -1, name, olo, ohi);
}

/* Device bytes [key, end) of an access that began inside entry e's CV: an overflow of e. */
static void overflow_of(qv_state *st, i64 e, i64 key, i64 end, i64 g, i64 rk, i64 di, i64 loc, i64 width, i64 sz) {
    entry_key_t k = entry_key(st, e);
    i64 host = EN(st, e, EN_HOST) + (key - EN(st, e, EN_DEV));
    record(st, FK_OVERFLOW, rk, di, loc, k.kx, e, k.clause_ev, g, host & ADDR_MASK, key & ADDR_MASK, -1, end - key,
           (host + (end - 1 - key)) & ADDR_MASK, width, sz, EN(st, e, EN_RELEASE), k.name, k.olo, k.ohi);
}

/* The zero-length clause of construct ckey (a pointer passed firstprivate / implicitly, h[:0]) whose value
 * is the nearest address at or below host key hk (within 4 GiB): the pointer through which the kernel
 * reached unmapped memory, or -1. */
static i64 pointee(const qv_tables *t, const qv_state *st, i64 ckey, i64 hk) {
    if (ckey < 0)
        return -1;
    i64 n = t->n_clk;
    i64 best = -1;
    for (i64 i = search(t->clk_keys, n, ckey - 1) + 1; i < n && t->clk_keys[i] == ckey; i++) {
        i64 c = t->clk_rows[i];
        i64 v = CL(st, c, CL_HOST);
        if (CL(st, c, CL_SIZE) == 0 && hk - ((i64)1 << 32) < v && v <= hk
            && (best < 0 || v > CL(st, best, CL_HOST)))
            best = c;
    }
    return best;
}

/* Device bytes [key, stop) in no live CV: an overflow of a mapped variable, or unmapped memory.
 *
 * A piece inside the host object of a variable the construct maps (translated to the device) overflows
 * that variable; else a piece on a live host object of the program (heap, global, stack: with host
 * offloading the device dereferenced a host address no clause mapped) is unmapped memory of that
 * object; else a piece in the one-section band around a mapped CV overflows that variable. */
static __attribute__((noinline)) void overflow(const qv_tables *t, qv_state *st, i64 key, i64 stop, i64 g, i64 rk,
                                               i64 di, i64 cid, i64 loc, i64 width, i64 sz) {
    i64 ckey = cid >= 0 ? (rk << CKEY_SHIFT) | cid : -1;
    i64 nwin = windows(t, st, ckey, rk, di);
    i64 w = pick_window(st, nwin, key, stop);
    i64 x0 = w >= 0 ? imax(key, WIN(st, w, 0)) : key;
    if (w < 0 || !(WIN(st, w, 3) <= x0 && x0 < WIN(st, w, 4))) {
        i64 hk = (rk << SHIFT) | (key & ADDR_MASK), olo, ohi;
        live_alloc(st, hk, &olo, &ohi);
        i64 name = -1;
        if (olo < 0) {   /* no known object: the memory a pointer the construct passes (firstprivate) points to */
            i64 c = pointee(t, st, ckey, hk);
            if (c >= 0) {
                olo = CL(st, c, CL_HOST);
                ohi = olo;
                name = CL(st, c, CL_NAME);
            }
        }
        if (olo >= 0) {
            i64 n = ohi > olo ? imin(stop - key, ohi - hk) : stop - key;
            record(st, FK_UNMAPPED, rk, di, loc, KX_OBJECT + olo, -1, -1, g, hk & ADDR_MASK, key & ADDR_MASK, -1, n,
                   (hk + n - 1) & ADDR_MASK, width, sz, -1, name, olo, ohi);
            return;
        }
    }
    if (w < 0)
        return;
    i64 x1 = imin(stop, WIN(st, w, 1)), we = WIN(st, w, 2);
    entry_key_t k = entry_key(st, we);
    i64 host = EN(st, we, EN_HOST) + (x0 - EN(st, we, EN_DEV));
    record(st, FK_OVERFLOW, rk, di, loc, k.kx, we, k.clause_ev, g, host & ADDR_MASK, x0 & ADDR_MASK, -1, x1 - x0,
           (host + (x1 - 1 - x0)) & ADDR_MASK, width, sz, EN(st, we, EN_RELEASE), k.name, k.olo, k.ohi);
}

/* ---------------- the strided memo (SM_* in vsm_layout.py) ----------------
 * Entry k says: every shadow byte v of the rows [s0 + j * pstep + i * step, + sz), i < rows, j < planes,
 * has (v & mask) == want (planes: the same run of rows repeated every pstep bytes, e.g. the interior
 * rows of a 3-D grid's planes; one plane when planes is 1). A strided row whose rows an entry covers, and
 * whose check or bit map that entry decides, costs O(entries) instead of a pass over its blocks; every
 * change of shadow bytes goes through memo_drop first, so an entry never claims a byte that changed. */
#define SMV(memo, k, col) ((memo)[(k) * SM_COLS + (col)])

static inline i64 fdiv(i64 a, i64 b) {   /* floor(a / b), b > 0 */
    i64 q = a / b;
    return q * b > a ? q - 1 : q;
}

/* The end of entry k's span (one past its last byte). */
static inline i64 memo_end(const i64 *memo, i64 k) {
    return SMV(memo, k, SM_S0) + (SMV(memo, k, SM_PLANES) - 1) * SMV(memo, k, SM_PSTEP)
           + (SMV(memo, k, SM_ROWS) - 1) * SMV(memo, k, SM_STEP) + SMV(memo, k, SM_SZ);
}

/* The units (rows of a one-plane entry, planes of the others) u_lo..u_hi of entry k that shadow bytes
 * [a, b) touch; 0 when they touch none (they fall in the gaps between rows). */
static int memo_touched(const i64 *memo, i64 k, i64 a, i64 b, i64 *u_lo, i64 *u_hi) {
    i64 p0 = SMV(memo, k, SM_S0), step = SMV(memo, k, SM_STEP), sz = SMV(memo, k, SM_SZ);
    i64 rows = SMV(memo, k, SM_ROWS), planes = SMV(memo, k, SM_PLANES), pstep = SMV(memo, k, SM_PSTEP);
    if (planes > 1) {
        i64 phull = (rows - 1) * step + sz;
        i64 j_lo = imax(0, fdiv(a - p0 - phull, pstep) + 1), j_hi = imin(planes - 1, fdiv(b - p0 - 1, pstep));
        if (j_lo > j_hi)
            return 0;
        *u_lo = j_lo;
        *u_hi = j_hi;
        if (j_lo < j_hi)
            return 1;
        p0 += j_lo * pstep;   /* one plane: do [a, b) touch its rows? */
    }
    /* rows i with p0 + i * step < b and p0 + i * step + sz > a */
    i64 i_lo = imax(0, fdiv(a - p0 - sz, step) + 1), i_hi = imin(rows - 1, fdiv(b - p0 - 1, step));
    if (i_lo > i_hi)
        return 0;
    if (planes == 1) {
        *u_lo = i_lo;
        *u_hi = i_hi;
    }
    return 1;
}

/* Drop the units of entry k that shadow bytes [a, b) touch (it keeps its units before and after them;
 * when the memo is full, the larger of the two): the index of the next entry to look at. */
static i64 memo_cut(i64 *memo, i64 *ctr, i64 k, i64 a, i64 b) {
    i64 u_lo, u_hi;
    if (!memo_touched(memo, k, a, b, &u_lo, &u_hi))
        return k + 1;
    i64 n = ctr[C_NMEMO];
    int by_plane = SMV(memo, k, SM_PLANES) > 1;
    i64 col = by_plane ? SM_PLANES : SM_ROWS, unit = by_plane ? SMV(memo, k, SM_PSTEP) : SMV(memo, k, SM_STEP);
    i64 p0 = SMV(memo, k, SM_S0), units = SMV(memo, k, col);
    i64 before = u_lo, after = units - 1 - u_hi;
    if (before > 0 && after > 0 && n < SM_CAP) {
        for (i64 c = 0; c < SM_COLS; c++)
            SMV(memo, n, c) = SMV(memo, k, c);
        SMV(memo, n, SM_S0) = p0 + (u_hi + 1) * unit;
        SMV(memo, n, col) = after;
        ctr[C_NMEMO] = ++n;
        after = 0;
    }
    if (before >= after && before > 0) {
        SMV(memo, k, col) = before;
        return k + 1;
    }
    if (after > 0) {
        SMV(memo, k, SM_S0) = p0 + (u_hi + 1) * unit;
        SMV(memo, k, col) = after;
        return k + 1;
    }
    /* nothing left: the last entry takes its slot (and is looked at next) */
    ctr[C_NMEMO] = --n;
    for (i64 c = 0; c < SM_COLS; c++)
        SMV(memo, k, c) = SMV(memo, n, c);
    if (ctr[C_MEMO_NEXT] >= n)
        ctr[C_MEMO_NEXT] = 0;
    return k;
}

/* Shadow bytes [a, b) are about to change: drop the units of every entry they touch. */
static __attribute__((noinline)) void memo_drop(i64 *memo, i64 *ctr, i64 a, i64 b) {
    for (i64 k = 0; k < ctr[C_NMEMO];) {
        if (b <= SMV(memo, k, SM_S0) || a >= memo_end(memo, k))
            k++;
        else
            k = memo_cut(memo, ctr, k, a, b);
    }
}

/* The bytes of rows [s0 + i * step, + sz), i < rows, are about to change: drop the units of every entry
 * in their span, but for entries of the same step (and planes a whole number of steps apart) whose rows
 * fall in the gaps between these (another field of the same array of structs). */
static void memo_drop_strided(i64 *memo, i64 *ctr, i64 s0, i64 step, i64 sz, i64 rows) {
    i64 a = s0, b = s0 + (rows - 1) * step + sz;
    for (i64 k = 0; k < ctr[C_NMEMO];) {
        i64 p0 = SMV(memo, k, SM_S0), ksz = SMV(memo, k, SM_SZ);
        if (b <= p0 || a >= memo_end(memo, k)) {
            k++;
            continue;
        }
        if (SMV(memo, k, SM_STEP) == step && (SMV(memo, k, SM_PLANES) == 1 || SMV(memo, k, SM_PSTEP) % step == 0)) {
            i64 d = s0 - p0, r = d - fdiv(d, step) * step;   /* (s0 - p0) mod step, in [0, step) */
            if (r >= ksz && step - r >= sz) {   /* these rows start past entry k's and end before its next */
                k++;
                continue;
            }
        }
        k = memo_cut(memo, ctr, k, a, b);
    }
}

/* Whether an entry says that every byte of rows [s0 + i * step, + sz), i < rows, has (v & need) == want. */
static int memo_covers(const i64 *memo, const i64 *ctr, i64 s0, i64 step, i64 sz, i64 rows, i64 need, i64 want) {
    i64 n = ctr[C_NMEMO];
    for (i64 k = 0; k < n; k++) {
        if (SMV(memo, k, SM_STEP) != step || (need & ~SMV(memo, k, SM_MASK)) != 0
            || (SMV(memo, k, SM_WANT) & need) != want)
            continue;
        i64 d = s0 - SMV(memo, k, SM_S0);
        if (d < 0)
            continue;
        if (SMV(memo, k, SM_PLANES) > 1) {   /* the rows must lie in one plane */
            i64 j = d / SMV(memo, k, SM_PSTEP);
            if (j >= SMV(memo, k, SM_PLANES))
                continue;
            d -= j * SMV(memo, k, SM_PSTEP);
        }
        if (d % step + sz > SMV(memo, k, SM_SZ) || d / step + rows > SMV(memo, k, SM_ROWS))
            continue;
        return 1;
    }
    return 0;
}

/* Remember that every byte of rows [s0 + i * step, + sz), i < rows, has (v & mask) == want. They join an
 * entry of the same shape when they can: a one-plane entry whose rows they overlap or adjoin grows (the
 * threads of one kernel each leave a run of rows); an entry of the same run of rows one plane before or
 * after them (at most twice their span away: a 3-D grid's next plane) gets one more plane. Else a new
 * entry (over the oldest one when the memo is full). */
static void memo_add(i64 *memo, i64 *ctr, i64 s0, i64 step, i64 sz, i64 rows, i64 mask, i64 want) {
    i64 n = ctr[C_NMEMO], hull = (rows - 1) * step + sz;
    for (i64 k = 0; k < n; k++) {
        if (SMV(memo, k, SM_STEP) != step || SMV(memo, k, SM_SZ) != sz || SMV(memo, k, SM_MASK) != mask
            || SMV(memo, k, SM_WANT) != want || SMV(memo, k, SM_PLANES) != 1)
            continue;
        i64 d = s0 - SMV(memo, k, SM_S0);
        if (d % step != 0)
            continue;
        i64 i0 = d / step, krows = SMV(memo, k, SM_ROWS);
        if (i0 > krows || i0 + rows < 0)
            continue;
        i64 lo = imin(0, i0), hi = imax(krows, i0 + rows);
        SMV(memo, k, SM_S0) += lo * step;
        SMV(memo, k, SM_ROWS) = hi - lo;
        return;
    }
    for (i64 k = 0; k < n; k++) {
        if (SMV(memo, k, SM_STEP) != step || SMV(memo, k, SM_SZ) != sz || SMV(memo, k, SM_MASK) != mask
            || SMV(memo, k, SM_WANT) != want || SMV(memo, k, SM_ROWS) != rows)
            continue;
        i64 p0 = SMV(memo, k, SM_S0), planes = SMV(memo, k, SM_PLANES), pstep = SMV(memo, k, SM_PSTEP);
        if (planes == 1) {
            i64 d = s0 - p0, ad = d < 0 ? -d : d;
            if (ad < hull || ad > 4 * hull)   /* (a red-black colour: planes two grid rows apart, 2 hulls and the halo) */
                continue;
            SMV(memo, k, SM_PSTEP) = ad;
            SMV(memo, k, SM_PLANES) = 2;
            if (d < 0)
                SMV(memo, k, SM_S0) = s0;
            return;
        }
        if (s0 == p0 + planes * pstep || s0 == p0 - pstep) {
            SMV(memo, k, SM_PLANES) = planes + 1;
            if (s0 < p0)
                SMV(memo, k, SM_S0) = s0;
            return;
        }
    }
    i64 k = n;
    if (n < SM_CAP) {
        ctr[C_NMEMO] = n + 1;
    } else {
        k = ctr[C_MEMO_NEXT];
        ctr[C_MEMO_NEXT] = (k + 1) % SM_CAP;
    }
    SMV(memo, k, SM_S0) = s0;
    SMV(memo, k, SM_STEP) = step;
    SMV(memo, k, SM_SZ) = sz;
    SMV(memo, k, SM_ROWS) = rows;
    SMV(memo, k, SM_PSTEP) = 0;
    SMV(memo, k, SM_PLANES) = 1;
    SMV(memo, k, SM_MASK) = mask;
    SMV(memo, k, SM_WANT) = want;
}

#define SH uint8_t
#define F(name) name##_u8
#include "vsm_shadow.h"
#undef SH
#undef F
#define SH uint16_t
#define F(name) name##_u16
#include "vsm_shadow.h"
#undef SH
#undef F
#define SH uint32_t
#define F(name) name##_u32
#include "vsm_shadow.h"
#undef SH
#undef F
#define SH uint64_t
#define F(name) name##_u64
#include "vsm_shadow.h"
#undef SH
#undef F

/* Apply events rows[first:n_rows] (or rows first..n_rows-1 when rows is NULL) of one column set.
 *
 * base is the global index of row 0; every piece of state lives in the arrays passed in; a strided ACCESS
 * row (stride/blocks: the columns addr2/aux2) is applied one block after the other, all with the row's
 * event index. loc, aux and eid matter only to findings and overflows; when they are not given (lazy)
 * the kernel stops at the first row that needs them, before changing anything that applying the row again
 * would not set to the same value, and leaves that row's position in ctr[C_STOP] (-1 when every row was
 * applied): the caller reads the columns and calls again with first = that position.
 * shadow_bytes: the size of a shadow element (1, 2, 4, 8). */
void qv_vsm_apply(const qv_columns *cols, const qv_selection *sel, const qv_tables *t, qv_state *st,
                  const qv_watch *w, i64 shadow_bytes) {
    switch (shadow_bytes) {
    case 1: apply_u8(cols, sel, t, st, w); break;
    case 2: apply_u16(cols, sel, t, st, w); break;
    case 4: apply_u32(cols, sel, t, st, w); break;
    default: apply_u64(cols, sel, t, st, w); break;
    }
}

/* Copy the shadow bytes of the blocks that are not uniform (a session's snapshot). */
void qv_vsm_copy_split_blocks(const void *src, void *dst, const i64 *blo, const i64 *bhi, i64 nblocks, i64 lgb,
                              i64 shadow_bytes) {
    switch (shadow_bytes) {
    case 1: copy_split_u8(src, dst, blo, bhi, nblocks, lgb); break;
    case 2: copy_split_u16(src, dst, blo, bhi, nblocks, lgb); break;
    case 4: copy_split_u32(src, dst, blo, bhi, nblocks, lgb); break;
    default: copy_split_u64(src, dst, blo, bhi, nblocks, lgb); break;
    }
}
