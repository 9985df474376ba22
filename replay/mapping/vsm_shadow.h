/* The part of the VSM kernel that touches shadow bytes, instantiated once per shadow element type by
 * vsm_kernel.c (SH: the element type, F(name): name with the type's suffix). The rules themselves are
 * written once, here and in vsm_kernel.c. */

/* The shadow and its block bounds, passed by value so that the hot loop keeps them in registers. */
typedef struct {
    SH *shadow;
    i64 *blo;
    i64 *bhi;
    i64 *bcnt;
    i64 lgb;
    i64 *memo;      /* the strided memo (vsm_kernel.c): every change of bytes drops what it says of them */
    i64 *ctr;
} F(shv);

/* Apply a bit map to shadow bytes [s0, s1); (AND, OR) of the new values. In the shadow's own width, so
 * that it vectorises (a copy-out of a big array maps every byte of its split blocks): every bit a map
 * sets or moves is a bit of this shadow type (the OV bits moved to or from a device's CV bits). */
static void F(map_bytes)(SH *a, i64 s0, i64 s1, i64 keep, i64 set_bits, i64 mode, i64 shift, i64 *lo_out,
                         i64 *hi_out) {
    SH k = (SH)keep, set = (SH)set_bits, ov = (SH)(OVV | OVI), lo = (SH)-1, hi = 0;
    if (mode == MAP_TO) {
        for (i64 i = s0; i < s1; i++) {
            SH v = a[i];
            v = (SH)((v & k) | set | (SH)((v & ov) << shift));
            a[i] = v;
            lo &= v;
            hi |= v;
        }
    } else if (mode == MAP_FROM) {
        for (i64 i = s0; i < s1; i++) {
            SH v = a[i];
            v = (SH)((v & k) | set | ((v >> shift) & ov));
            a[i] = v;
            lo &= v;
            hi |= v;
        }
    } else {
        for (i64 i = s0; i < s1; i++) {
            SH v = (SH)((a[i] & k) | set);
            a[i] = v;
            lo &= v;
            hi |= v;
        }
    }
    /* the AND of no bytes is all ones (-1 as int64) */
    *lo_out = s1 > s0 ? (i64)lo : -1;
    *hi_out = (i64)hi;
}

/* Whether the plain map (keep, set) leaves every shadow byte in [s0, s1) as it is: a byte v is
 * unchanged iff (v & m) == set with m = ~keep | set; in the shadow's own width, so that it vectorises. */
static int F(bytes_unchanged)(const SH *a, i64 s0, i64 s1, i64 keep, i64 set_bits) {
    SH m = (SH)(~keep | set_bits), want = (SH)set_bits, diff = 0;
    for (i64 i = s0; i < s1; i++)
        diff |= (SH)((a[i] & m) ^ want);
    return diff == 0;
}

/* (AND, OR) of shadow bytes [s0, s1). */
static void F(bounds_bytes)(const SH *a, i64 s0, i64 s1, i64 *lo_out, i64 *hi_out) {
    SH lo = (SH)-1, hi = 0;
    for (i64 i = s0; i < s1; i++) {
        lo &= a[i];
        hi |= a[i];
    }
    /* the AND of no bytes is all ones (-1 as int64) */
    *lo_out = s1 > s0 ? (i64)lo : -1;
    *hi_out = (i64)hi;
}

static void F(fill)(SH *a, i64 s0, i64 s1, i64 v) {
    for (i64 i = s0; i < s1; i++)
        a[i] = (SH)v;
}

/* The plain map (keep, set) on bytes a[0:n] in one scalar pass (few bytes: no vector set-up): whether any
 * byte changed (an unchanged byte is stored as it was); *lo_out, *hi_out: AND and OR of the new values. */
static inline int F(write_few)(SH *a, i64 n, i64 keep, i64 set_bits, i64 *lo_out, i64 *hi_out) {
    i64 lo = -1, hi = 0, changed = 0;
    for (i64 i = 0; i < n; i++) {
        i64 v = (i64)a[i], nv = (v & keep) | set_bits;
        changed |= nv ^ v;
        a[i] = (SH)nv;
        lo &= nv;
        hi |= nv;
    }
    *lo_out = lo;
    *hi_out = hi;
    return changed != 0;
}

/* Block b's bounds after a write changed bytes [s0, e) of it, not the whole block, to values of AND lo and
 * OR hi (lb, ub: its bounds before): bcnt[b] counts bytes changed by partial operations since the bounds
 * were last made exact; when it reaches the block size (or the write reaches the block's end: a sweep
 * leaving it) the bounds are recomputed, so a block that scattered writes have made uniform again is
 * seen as uniform (amortised O(1) per byte). */
static inline void F(partial_bounds)(F(shv) s, i64 b, i64 s0, i64 e, i64 lb, i64 ub, i64 lo, i64 hi) {
    i64 bsz = (i64)1 << s.lgb, bs = b << s.lgb;
    if (e == bs + bsz || s.bcnt[b] + (e - s0) >= bsz) {
        F(bounds_bytes)(s.shadow, bs, bs + bsz, &lo, &hi);
        s.blo[b] = lo;
        s.bhi[b] = hi;
        s.bcnt[b] = 0;
    } else {
        s.blo[b] = lb & lo;
        s.bhi[b] = ub | hi;
        s.bcnt[b] += e - s0;
    }
}

/* Apply a bit map to shadow bytes [s0, s1), block by block.
 *
 * bcnt[b]: bytes changed by partial operations since block b's bounds were last made exact; when it
 * reaches the block size (or a write leaves the block at its end) the bounds are recomputed, so a
 * block that scattered writes have made uniform again is seen as uniform. */
static inline void F(map_range)(F(shv) s, i64 s0, i64 s1, i64 keep, i64 set_bits, i64 mode, i64 shift) {
    i64 lgb = s.lgb, bsz = (i64)1 << lgb, b = s0 >> lgb;
    while (s0 < s1) {
        i64 bs = b << lgb, be = bs + bsz, e = s1 < be ? s1 : be;
        int full = s0 == bs && e == be;
        i64 lb = s.blo[b], ub = s.bhi[b], lo, hi;
        if (lb == ub) {
            i64 nv = fmap(lb, keep, set_bits, mode, shift);
            if (nv != lb) {
                if (s.ctr[C_NMEMO])
                    memo_drop(s.memo, s.ctr, s0, e);
                if (full) {
                    s.blo[b] = nv;
                    s.bhi[b] = nv;
                } else {   /* split a uniform block: its bytes become the truth */
                    F(fill)(s.shadow, bs, be, lb);
                    F(map_bytes)(s.shadow, s0, e, keep, set_bits, mode, shift, &lo, &hi);
                    s.blo[b] = lb & lo;
                    s.bhi[b] = ub | hi;
                    s.bcnt[b] = e - s0;
                }
            }
        } else if (!(mode == MAP_PLAIN && (unchanged(lb, ub, keep, set_bits)
                                           || F(bytes_unchanged)(s.shadow, s0, e, keep, set_bits)))) {
            /* (else no byte changes: a sweep rewriting what it wrote last time only reads the bytes) */
            if (s.ctr[C_NMEMO])
                memo_drop(s.memo, s.ctr, s0, e);
            F(map_bytes)(s.shadow, s0, e, keep, set_bits, mode, shift, &lo, &hi);
            if (full) {
                s.blo[b] = lo;
                s.bhi[b] = hi;
                s.bcnt[b] = 0;
            } else {
                F(partial_bounds)(s, b, s0, e, lb, ub, lo, hi);
            }
        }
        s0 = e;
        b++;
    }
}

/* map_range as a function call (control events: rare, big ranges; the hot loop's writes that change
 * bytes: keeps the kernel small and the hot loop's values in registers). */
static __attribute__((noinline)) void F(map_range_call)(F(shv) s, i64 s0, i64 s1, i64 keep, i64 set_bits,
                                                       i64 mode, i64 shift) {
    F(map_range)(s, s0, s1, keep, set_bits, mode, shift);
}

/* map_range (MAP_PLAIN) of shadow bytes [s0, s1) inside block b, for the hot loop's small writes into a
 * split block (a sweep's first pass writing its elements one by one): the check that no byte changes and
 * the write in one scalar pass instead of map_range's vector loops, which cost more than they save on a
 * few bytes. A uniform block (the write splits it) and long writes go to map_range. */
static __attribute__((noinline)) void F(write_in_block)(F(shv) s, i64 s0, i64 s1, i64 b, i64 keep,
                                                        i64 set_bits) {
    i64 lgb = s.lgb, bsz = (i64)1 << lgb, bs = b << lgb;
    i64 lb = s.blo[b], ub = s.bhi[b];
    if (lb == ub || s1 - s0 > 64) {
        F(map_range)(s, s0, s1, keep, set_bits, MAP_PLAIN, 0);
        return;
    }
    i64 lo, hi;
    if (F(write_few)(s.shadow + s0, s1 - s0, keep, set_bits, &lo, &hi)) {
        if (s.ctr[C_NMEMO])   /* (dropped after the write: the memo is not read in between) */
            memo_drop(s.memo, s.ctr, s0, s1);
        F(partial_bounds)(s, b, s0, s1, lb, ub, lo, hi);   /* (a whole block written: its bounds recomputed) */
    }
}

/* Whether every shadow byte of a masked row's present slots has (byte & m) == want (format version 6): `sz`
 * shadow elements per slot from sb, slot i at sb + i * step when bit i of `bits` is set (step = sz: contiguous
 * slots; more: a field of an array of structs), all in one CV. A write
 * that changes none of them is m = ~keep | set, want = set; a read that finds them all valid m = want = the
 * valid bit. Shadow blocks whose bounds already say so are not read; the others 8 bytes at a time, the gaps'
 * bytes masked out (a gap keeps other bits: a conditional store leaves the host copy of what it skipped
 * valid). Why: a conditional access rereading or rewriting what it touched before (sweep after sweep) is
 * settled in one pass over its window instead of one map_range or check per run of slots. */
static __attribute__((noinline)) int F(slots_hold)(F(shv) s, i64 sb, i64 sz, i64 step, uint64_t bits, i64 m,
                                                   i64 want) {
    i64 lgb = s.lgb, nslots = 64 - __builtin_clzll(bits), span = (nslots - 1) * step + sz;
    SH mm = (SH)m, ww = (SH)want;
    if ((ww & ~mm) != 0)
        return 0;
    int settled = 1;
    for (i64 b = sb >> lgb; b <= (sb + span - 1) >> lgb && settled; b++)
        settled = ((SH)s.blo[b] & ww) == ww && ((SH)s.bhi[b] & (SH)(mm & ~ww)) == 0;
    if (settled)
        return 1;
    int uniform = 0;   /* a uniform block's bytes in memory are not its truth (map_range keeps only its bounds) */
    for (i64 b = sb >> lgb; b <= (sb + span - 1) >> lgb && !uniform; b++)
        uniform = s.blo[b] == s.bhi[b];
    const unsigned char *base = (const unsigned char *)(s.shadow + sb);
    i64 slot_bytes = sz * (i64)sizeof(SH), nbytes = span * (i64)sizeof(SH);
    uint64_t rep = sizeof(SH) == 1 ? 0x0101010101010101ull : sizeof(SH) == 2 ? 0x0001000100010001ull
                                                                                : 0x0000000100000001ull;
    uint64_t M = (uint64_t)mm * rep, W = (uint64_t)ww * rep;
    if (!uniform && step == sz && slot_bytes <= 8 && !(slot_bytes & (slot_bytes - 1))) {
        int per = (int)(8 / slot_bytes);   /* slots per 8-byte word */
        for (i64 k = 0; 8 * k < nbytes; k++) {
            uint64_t q = (bits >> (k * per)) & (per == 64 ? ~0ull : (1ull << per) - 1), lanes;
            if (!q)
                continue;
            /* bit j of q -> the bytes of slot j of the word */
            if (slot_bytes == 8) {
                lanes = ~0ull;
            } else if (slot_bytes == 4) {
                lanes = ((q | q << 31) & 0x0000000100000001ull) * 0xFFFFFFFFull;
            } else if (slot_bytes == 2) {
                q = (q | q << 30) & 0x0000000300000003ull;
                lanes = ((q | q << 15) & 0x0001000100010001ull) * 0xFFFFull;
            } else {
                q = (q | q << 28) & 0x0000000F0000000Full;
                q = (q | q << 14) & 0x0003000300030003ull;
                lanes = ((q | q << 7) & 0x0101010101010101ull) * 0xFFull;
            }
            uint64_t v = 0;
            if (8 * k + 8 <= nbytes)
                __builtin_memcpy(&v, base + 8 * k, 8);
            else   /* (the window's last word: no byte past it is read) */
                for (i64 j = 0; 8 * k + j < nbytes; j++)
                    v |= (uint64_t)base[8 * k + j] << (8 * j);
            if (((v & M) ^ W) & lanes)
                return 0;
        }
        return 1;
    }
    SH diff = 0;
    for (uint64_t q = bits; q; q &= q - 1)
        for (i64 x = sb + __builtin_ctzll(q) * step, x1 = x + sz; x < x1; x++) {
            i64 b = x >> lgb;
            diff |= (SH)(((s.blo[b] == s.bhi[b] ? (SH)s.blo[b] : s.shadow[x]) & mm) ^ ww);
        }
    return diff == 0;
}

/* Whether every shadow byte in [s0, s1) has bit (a read finds its copy valid). */
static inline int F(all_have)(F(shv) s, i64 s0, i64 s1, i64 bit) {
    i64 lgb = s.lgb, bsz = (i64)1 << lgb, b = s0 >> lgb;
    while (s0 < s1) {
        i64 bs = b << lgb, e = s1 < bs + bsz ? s1 : bs + bsz;
        i64 lb = s.blo[b];
        if ((lb & bit) == 0) {
            if (lb == s.bhi[b])
                return 0;
            i64 lo, hi;
            F(bounds_bytes)(s.shadow, s0, e, &lo, &hi);
            if (s0 == bs && e == bs + bsz) {   /* a whole block scanned: its bounds become exact */
                s.blo[b] = lo;
                s.bhi[b] = hi;
            }
            if ((lo & bit) == 0)
                return 0;
        }
        s0 = e;
        b++;
    }
    return 1;
}

/* An access's write to shadow bytes [s0, s1) (first block b0; one: it is the only one): nothing to do
 * when that block already has the written state. */
static inline void F(write_piece)(F(shv) s, i64 s0, i64 s1, i64 b0, int one, i64 keep, i64 set_bits) {
    if (!(one && unchanged(s.blo[b0], s.bhi[b0], keep, set_bits)))
        F(map_range)(s, s0, s1, keep, set_bits, MAP_PLAIN, 0);
}

/* The plain map (keep, set) on rows r0..r1 of shadow elements [a + r * step, + sz) whose bytes are a whole
 * number of 64-bit words, a word at a time (the map is per element, so it is the same map on every lane):
 * the short rows of a strided write (8 bytes every 16: a red-black sweep's colour) took a scalar pass per
 * element. lo, hi: AND and OR of the new values; nbytes: sz more for each row that changed. */
static inline void F(write_rows_words)(SH *a, i64 r0, i64 r1, i64 step, i64 sz, i64 keep, i64 set_bits,
                                       i64 *lo, i64 *hi, i64 *nbytes) {
    uint64_t k = (uint64_t)(SH)keep, set = (uint64_t)(SH)set_bits;
    for (unsigned w = 8 * sizeof(SH); w < 64; w *= 2) {
        k |= k << w;
        set |= set << w;
    }
    uint64_t wlo = ~(uint64_t)0, whi = 0;
    i64 words = sz * (i64)sizeof(SH) / 8, changed_rows = 0;
    for (i64 r = r0; r <= r1; r++) {
        unsigned char *p = (unsigned char *)(a + r * step);
        uint64_t changed = 0;
        for (i64 j = 0; j < words; j++) {
            uint64_t v, nv;
            memcpy(&v, p + 8 * j, 8);
            nv = (v & k) | set;
            changed |= nv ^ v;
            memcpy(p + 8 * j, &nv, 8);
            wlo &= nv;
            whi |= nv;
        }
        changed_rows += changed != 0;
    }
    for (unsigned l = 0; l < 8 / sizeof(SH); l++) {
        SH x, y;
        memcpy(&x, (unsigned char *)&wlo + l * sizeof(SH), sizeof(SH));
        memcpy(&y, (unsigned char *)&whi + l * sizeof(SH), sizeof(SH));
        *lo &= (i64)x;
        *hi |= (i64)y;
    }
    *nbytes += changed_rows * sz;
}

/* The plain map (keep, set) on the rows [sb + i * step, + sz), i < rows, of a strided write (step > sz):
 * a shadow block at a time. A block that the map leaves as it is (by its bounds) is skipped with all its
 * rows; the rows inside a split block are written in one scalar pass and its bounds updated once (as
 * map_range's partial_bounds would: exact again once that many bytes were written or the write reaches
 * the block's end); a uniform block the map changes, and a row across a block edge, go to map_range.
 * The strided memo loses what it says of these rows once, up front (memo_drop_strided), so map_range
 * runs without it. */
static __attribute__((noinline)) void F(write_strided)(F(shv) s, i64 sb, i64 step, i64 sz, i64 rows, i64 keep,
                                                       i64 set_bits) {
    if (s.ctr[C_NMEMO])
        memo_drop_strided(s.memo, s.ctr, sb, step, sz, rows);
    i64 no_memo[C_N] = {0};
    F(shv) q = s;
    q.ctr = no_memo;
    i64 lgb = s.lgb, bsz = (i64)1 << lgb;
    i64 i = 0;
    while (i < rows) {
        i64 s0 = sb + i * step, b = s0 >> lgb, bs = b << lgb, be = bs + bsz;
        if (s0 + sz > be) {   /* a row across a block edge */
            F(map_range)(q, s0, s0 + sz, keep, set_bits, MAP_PLAIN, 0);
            i++;
            continue;
        }
        i64 last = imin(rows - 1, (be - sz - sb) / step);   /* the last row inside block b */
        i64 lb = s.blo[b], ub = s.bhi[b];
        if (unchanged(lb, ub, keep, set_bits)) {
            i = last + 1;
            continue;
        }
        if (lb == ub) {   /* the first row splits the block; the others are written into the split block */
            F(map_range)(q, s0, s0 + sz, keep, set_bits, MAP_PLAIN, 0);
            i++;
            continue;
        }
        i64 lo = -1, hi = 0, nbytes = 0;
        if (sz > 64) {   /* long rows: the vectorised read-only check first (a sweep rewriting its rows) */
            for (i64 r = i; r <= last; r++) {
                i64 r0 = sb + r * step, l, h;
                if (F(bytes_unchanged)(s.shadow, r0, r0 + sz, keep, set_bits))
                    continue;
                F(map_bytes)(s.shadow, r0, r0 + sz, keep, set_bits, MAP_PLAIN, 0, &l, &h);
                lo &= l;
                hi |= h;
                nbytes += sz;
            }
        } else if ((sz * (i64)sizeof(SH)) % 8 == 0) {
            F(write_rows_words)(s.shadow + sb, i, last, step, sz, keep, set_bits, &lo, &hi, &nbytes);
        } else {
            for (i64 r = i; r <= last; r++) {
                SH *a = s.shadow + sb + r * step;
                i64 changed = 0;
                for (i64 k = 0; k < sz; k++) {
                    i64 v = (i64)a[k], nv = (v & keep) | set_bits;
                    changed |= nv ^ v;
                    a[k] = (SH)nv;
                    lo &= nv;
                    hi |= nv;
                }
                nbytes += changed ? sz : 0;
            }
        }
        if (nbytes) {
            i64 e = sb + last * step + sz;
            if (e == be || s.bcnt[b] + nbytes >= bsz) {
                F(bounds_bytes)(s.shadow, bs, be, &lo, &hi);
                s.blo[b] = lo;
                s.bhi[b] = hi;
                s.bcnt[b] = 0;
            } else {
                s.blo[b] = lb & lo;
                s.bhi[b] = ub | hi;
                s.bcnt[b] += nbytes;
            }
        }
        i = last + 1;
    }
}

/* The state of shadow byte i. */
static inline i64 F(value)(F(shv) s, i64 i) {
    i64 b = i >> s.lgb;
    if (s.blo[b] == s.bhi[b])
        return s.blo[b];
    return (i64)s.shadow[i];
}

/* First shadow byte t in [i, s1) with (state & mask) != want; s1 when none. */
static i64 F(run_end)(F(shv) s, i64 i, i64 s1, i64 mask, i64 want) {
    i64 lgb = s.lgb, bsz = (i64)1 << lgb, b = i >> lgb;
    while (i < s1) {
        i64 bs = b << lgb, e = s1 < bs + bsz ? s1 : bs + bsz;
        if ((s.blo[b] & mask) != want || (s.bhi[b] & mask) != want) {
            if (s.blo[b] == s.bhi[b])
                return i;
            for (i64 k = i; k < e; k++)
                if (((i64)s.shadow[k] & mask) != want)
                    return k;
        }
        i = e;
        b++;
    }
    return s1;
}

/* Append (event, state after) to the history of every watched byte in shadow[s0:s1]. */
static void F(watch)(F(shv) s, const qv_watch *w, i64 s0, i64 s1, i64 g) {
    i64 nw = w->n_wa;
    if (nw == 0)
        return;
    i64 k = search(w->wa_sh, nw, s0 - 1) + 1;
    while (k < nw && w->wa_sh[k] < s1) {
        i64 id = w->wa_id[k];
        if (w->wa_done[id] == 0) {
            i64 slot = w->wn[id] % w->hmax;
            w->wh[(id * w->hmax + slot) * 2] = g;
            w->wh[(id * w->hmax + slot) * 2 + 1] = F(value)(s, w->wa_sh[k]);
            w->wn[id]++;
        }
        k++;
    }
}

/* Whether no watched shadow byte lies in [s0, s1): the shortcuts that settle a row without looking at its
 * bytes one by one (and so without F(watch)) apply. Why: the history pass watches a few bytes; every other
 * row takes the same shortcuts as the first pass. */
static inline int F(quiet)(const qv_watch *w, i64 s0, i64 s1) {
    i64 nw = w->n_wa;
    if (nw == 0)
        return 1;
    i64 k = search(w->wa_sh, nw, s0 - 1) + 1;
    return k >= nw || w->wa_sh[k] >= s1;
}

/* Copy the bytes of the blocks that are not uniform (the only bytes that hold state). */
static void F(copy_split)(const SH *src, SH *dst, const i64 *blo, const i64 *bhi, i64 nblocks, i64 lgb) {
    i64 bsz = (i64)1 << lgb;
    for (i64 b = 0; b < nblocks; b++)
        if (blo[b] != bhi[b])
            memcpy(dst + (b << lgb), src + (b << lgb), (size_t)bsz * sizeof(SH));
}

/* Record the runs of invalid bytes of a host read of shadow[s0:s1] (host key key0). */
static void F(host_read_findings)(F(shv) s, qv_state *st, i64 s0, i64 s1, i64 key0, i64 g, i64 rk, i64 loc,
                                  i64 width, i64 sz) {
    i64 i = s0;
    while (i < s1) {
        i = F(run_end)(s, i, s1, OVV, OVV);   /* next invalid byte */
        if (i >= s1)
            break;
        i64 v = F(value)(s, i);
        i64 k = key0 + (i - s0), hi;
        i64 e = latest_entry(st, k, &hi);
        int uum = (v & OVI) == 0;
        i64 lim = s0 + (hi - key0);
        i64 t = F(run_end)(s, i + 1, s1 < lim ? s1 : lim, OVV | OVI, v & (OVV | OVI));
        entry_key_t ek = entry_key(st, e);
        i64 release = e >= 0 ? EN(st, e, EN_RELEASE) : -1;
        record(st, uum ? FK_UUM : FK_STALE, rk, -1, loc, ek.kx, e, ek.clause_ev, g, k & ADDR_MASK, -1, i, t - i,
               (k + (t - 1 - i)) & ADDR_MASK, width, sz, release, ek.name, ek.olo, ek.ohi);
        i = t;
    }
}

/* Record the runs of invalid bytes of a device read of shadow[s0:s1] (device key key0, entry e). */
static void F(device_read_findings)(F(shv) s, qv_state *st, i64 s0, i64 s1, i64 key0, i64 g, i64 rk, i64 di,
                                    i64 cvv, i64 cvi, i64 e, i64 loc, i64 width, i64 sz) {
    entry_key_t ek = entry_key(st, e);
    i64 i = s0;
    while (i < s1) {
        i = F(run_end)(s, i, s1, cvv, cvv);   /* next invalid byte */
        if (i >= s1)
            break;
        i64 v = F(value)(s, i);
        int uum = (v & cvi) == 0;
        i64 t = F(run_end)(s, i + 1, s1, cvv | cvi, v & (cvv | cvi));
        i64 dk = key0 + (i - s0);
        i64 host = EN(st, e, EN_HOST) + (dk - EN(st, e, EN_DEV));
        record(st, uum ? FK_UUM : FK_STALE, rk, di, loc, ek.kx, e, ek.clause_ev, g, host & ADDR_MASK,
               dk & ADDR_MASK, i, t - i, (host + (t - 1 - i)) & ADDR_MASK, width, sz, EN(st, e, EN_RELEASE),
               ek.name, ek.olo, ek.ohi);
        i = t;
    }
}

/* The host side [hk, hk + size) of a data op that is a host access (apply_control, D_TO / D_FROM): a read
 * (write = 0) or a write of its tracked bytes, as an ACCESS row of event g at loc would be. */
static void F(host_side)(F(shv) s, const qv_tables *t, qv_state *st, const qv_watch *w, i64 hk, i64 size,
                         int write, i64 g, i64 rk, i64 loc) {
    for (i64 key = hk, end = hk + size, s1; key < end;) {
        i64 at = key, s0 = next_piece(t, &key, end, &s1);
        if (s0 < 0)
            continue;
        if (write) {
            F(map_range_call)(s, s0, s1, ~t->all_cvv, OVV | OVI, MAP_PLAIN, 0);
            F(watch)(s, w, s0, s1, g);
        } else if (!F(all_have)(s, s0, s1, OVV)) {
            F(host_read_findings)(s, st, s0, s1, at, g, rk, loc, 0, size);
        }
    }
}

static __attribute__((noinline)) void F(apply_control)(F(shv) s, const qv_tables *t, qv_state *st,
                                                       const qv_watch *w, i64 c, i64 g) {
    i64 *ctr = st->ctr;
    i64 kind = CT(t, c, CT_KIND), rk = CT(t, c, CT_RANK);
    i64 hk = (rk << SHIFT) | CT(t, c, CT_ADDR);
    i64 size = CT(t, c, CT_SIZE);
    if (kind == K_ALLOC) {
        if (size <= 0)
            return;
        i64 n = ctr[C_NALLOC];
        i64 *al_lo = st->al_lo, *al_hi = st->al_hi;
        i64 i = search(al_lo, n, hk);
        if (i >= 0 && al_lo[i] == hk && al_hi[i] == hk + size)
            return;   /* the same object recorded again */
        /* drop live objects overlapping the new one, insert it, reset its tracked bytes */
        i64 wr = 0;
        for (i64 j = 0; j < n; j++) {
            if (al_hi[j] <= hk || al_lo[j] >= hk + size) {
                al_lo[wr] = al_lo[j];
                al_hi[wr] = al_hi[j];
                wr++;
            }
        }
        i = search(al_lo, wr, hk) + 1;
        for (i64 j = wr; j > i; j--) {
            al_lo[j] = al_lo[j - 1];
            al_hi[j] = al_hi[j - 1];
        }
        al_lo[i] = hk;
        al_hi[i] = hk + size;
        ctr[C_NALLOC] = wr + 1;
        for (i64 key = hk, end = hk + size, s1; key < end;) {
            i64 s0 = next_piece(t, &key, end, &s1);
            if (s0 >= 0) {
                F(map_range_call)(s, s0, s1, 0, OVV | OVI, MAP_PLAIN, 0);
                F(watch)(s, w, s0, s1, g);
            }
        }
    } else if (kind == K_FREE) {
        i64 n = ctr[C_NALLOC];
        i64 i = search(st->al_lo, n, hk);
        if (i >= 0 && st->al_lo[i] == hk) {
            for (i64 j = i; j < n - 1; j++) {
                st->al_lo[j] = st->al_lo[j + 1];
                st->al_hi[j] = st->al_hi[j + 1];
            }
            ctr[C_NALLOC] = n - 1;
        }
    } else if (kind == K_MAP) {
        i64 r = CT(t, c, CT_CLROW), olo, ohi;
        live_alloc(st, hk, &olo, &ohi);
        CL(st, r, CL_OBJLO) = olo;
        CL(st, r, CL_OBJHI) = ohi;
        ctr[C_GEN]++;   /* overflow windows depend on clause objects */
        if ((CT(t, c, CT_OP) & M_NO_DATA) == 0)
            section_overflow(st, g, rk, CT(t, c, CT_DI), CT(t, c, CT_LOC), g, CT(t, c, CT_NAME), hk, size, olo, ohi);
    } else if (kind == K_DATA) {
        i64 di = CT(t, c, CT_DI);
        if (di < 0)
            return;
        i64 op = CT(t, c, CT_OP);
        i64 dk = ((rk * t->ndev + di) << SHIFT) | CT(t, c, CT_ADDR2);
        i64 ckey = CT(t, c, CT_ID) >= 0 ? (rk << CKEY_SHIFT) | CT(t, c, CT_ID) : -1;
        i64 cvv = cv_valid(di), cvi = cv_init(di);
        if (op == D_ALLOC || op == D_ASSOC) {
            if (size <= 0 || CT(t, c, CT_ADDR) == 0)
                return;   /* device memory with no host side (omp_target_alloc): no OV to track */
            /* a new CV replaces any live CV it overlaps on that device */
            i64 j = 0;
            while (j < ctr[C_NLIVE]) {
                i64 e = st->lv_en[j];
                if (st->lv_key[j] < dk + size && dk < st->lv_key[j] + EN(st, e, EN_SIZE)) {
                    EN(st, e, EN_RELEASE) = g;
                    remove_live(st, j);
                } else {
                    j++;
                }
            }
            i64 e = ctr[C_NENT], run_end;
            i64 s0 = tracked(t, hk, &run_end);
            EN(st, e, EN_HOST) = hk;
            EN(st, e, EN_DEV) = dk;
            EN(st, e, EN_SIZE) = size;
            EN(st, e, EN_SHADOW) = s0;
            EN(st, e, EN_DI) = di;
            EN(st, e, EN_RANK) = rk;
            EN(st, e, EN_CLAUSE) = clause_of(t, st, ckey, hk, CT(t, c, CT_NAME));
            EN(st, e, EN_CREATE) = g;
            EN(st, e, EN_RELEASE) = -1;
            EN(st, e, EN_NAME) = CT(t, c, CT_NAME);
            ctr[C_NENT] = e + 1;
            insert_live(st, dk, e);
            if (op == D_ASSOC && CT(t, c, CT_AUX) == 1)
                /* a declare-target variable's device copy: initialised from the device image */
                F(map_range_call)(s, s0, s0 + size, -1, cvv | cvi, MAP_PLAIN, 0);
            else
                F(map_range_call)(s, s0, s0 + size, ~(cvv | cvi), 0, MAP_PLAIN, 0);
            F(watch)(s, w, s0, s0 + size, g);
        } else if (op == D_DELETE || op == D_DISASSOC) {
            i64 i, e = find_live(st, dk, &i);
            if (e < 0)
                return;
            EN(st, e, EN_RELEASE) = g;
            remove_live(st, i);
            i64 s0 = EN(st, e, EN_SHADOW);
            F(map_range_call)(s, s0, s0 + EN(st, e, EN_SIZE), ~(cvv | cvi), 0, MAP_PLAIN, 0);
            F(watch)(s, w, s0, s0 + EN(st, e, EN_SIZE), g);
        } else if (op == D_TO || op == D_FROM) {
            i64 clause = clause_of(t, st, ckey, hk, CT(t, c, CT_NAME));
            if (clause < 0) {
                i64 olo, ohi;
                live_alloc(st, hk, &olo, &ohi);
                section_overflow(st, g, rk, di, CT(t, c, CT_LOC), -1, CT(t, c, CT_NAME), hk, size, olo, ohi);
            }
            i64 i, e = find_live(st, dk, &i);
            if (size <= 0)
                return;
            i64 off = e >= 0 ? dk - EN(st, e, EN_DEV) : 0;
            i64 n = e >= 0 ? EN(st, e, EN_SIZE) - off : 0;
            n = size < n ? size : n;
            i64 s0 = e >= 0 ? EN(st, e, EN_SHADOW) + off : 0;
            int direct = e >= 0 && EN(st, e, EN_HOST) + off == hk;
            if (e < 0 || (!direct && CT(t, c, CT_ID) < 0)) {
                /* not the runtime copying a CV from or to its own OV: a copy with no live CV on its device
                 * side, or a device memory routine (omp_target_memcpy, id -1) between another host buffer
                 * and a CV: its host side is read (to device) or written (from device) like any host access */
                if (e >= 0 && op == D_FROM)   /* ... and it reads the CV */
                    F(device_read_findings)(s, st, s0, s0 + n, dk, g, rk, di, cvv, cvi, e, CT(t, c, CT_LOC), 0, n);
                F(host_side)(s, t, st, w, hk, size, op == D_FROM, g, rk, CT(t, c, CT_LOC));
                if (e < 0 || op == D_FROM)
                    return;
            }
            i64 shift = 2 + 2 * di;
            if (op == D_TO) {
                if (direct)   /* CV := OV */
                    F(map_range_call)(s, s0, s0 + n, ~(cvv | cvi), 0, MAP_TO, shift);
                else   /* the runtime wrote a device address into this CV (pointer attachment) */
                    F(map_range_call)(s, s0, s0 + n, -1, cvv | cvi, MAP_PLAIN, 0);
            } else {
                if (!direct)
                    return;
                F(map_range_call)(s, s0, s0 + n, ~(i64)(OVV | OVI), 0, MAP_FROM, shift);
            }
            F(watch)(s, w, s0, s0 + n, g);
        }
    }
}

/* Lookup caches of one F(apply) call, invalidated whenever a control event changes the tables: host: the
 * tracked interval [h_lo, h_hi) at shadow h_base; device: the last two live CVs looked up (kernels
 * alternate between a few arrays: a hit in cv2 swaps the two). */
typedef struct {
    i64 h_lo, h_hi, h_base;
    cached_cv cv, cv2;
} F(caches);

/* One row that F(apply)'s hot loop does not settle (a control event, a host access, a strided run, a
 * device access outside the two cached CVs, a bad read; every row while watching): all the rules.
 * Returns 1 when the kernel must stop at this row (it needs the lazy columns), else 0. Not inlined, so
 * that the hot loop keeps its few values in registers. */
static __attribute__((noinline)) int F(apply_row)(F(shv) s, const qv_columns *cols, const qv_tables *t,
                                                  qv_state *st, const qv_watch *w, F(caches) *c, i64 r, i64 g,
                                                  int watching) {
    const int16_t *kind = cols->kind;
    const int32_t *rank = cols->rank, *device = cols->device, *op = cols->op;
    const uint64_t *addr = cols->addr, *size = cols->size, *stride = cols->stride;
    const int64_t *blocks = cols->blocks;
    i64 *ctr = st->ctr;
    i64 *blo = s.blo, *bhi = s.bhi, lgb = s.lgb;
    int lazy = cols->lazy != 0;
    const i64 *devmap = t->devmap, *ct_event = t->ct_event;
    i64 n_ct = t->n_ct, ndevmap = t->n_devmap, ndev = t->ndev;
    i64 keep_host = ~t->all_cvv;
    i64 keep_dev = ~((i64)OVV | t->all_cvv);
    i64 set_host = (OVV | OVI) & keep_host;
    i64 h_lo = c->h_lo, h_hi = c->h_hi, h_base = c->h_base;
    cached_cv cv = c->cv, cv2 = c->cv2, tmp;
    int stop_here = 0;
    i64 kd = kind[r];
    if (kd != K_ACCESS) {
        if (kd == K_ALLOC || kd == K_FREE || kd == K_MAP || kd == K_DATA) {
            i64 ci = search(ct_event, n_ct, g);
            if (ci >= 0 && ct_event[ci] == g) {
                F(apply_control)(s, t, st, w, ci, g);
                ctr[C_EPOCH] = g;
                h_hi = 0;
                h_lo = 0;
                cv = cv2 = NO_CV;
            }
        }
        goto out;
    }
    i64 sz = (i64)size[r];
    if (sz <= 0)
        goto out;
    i64 nblk = blocks[r] > 1 ? blocks[r] : 1;
    i64 step = nblk > 1 ? (i64)stride[r] : 0;
    /* planes (format version 5, name >= 2 of a strided row): plane p is the strided run moved by p * id2
     * bytes, applied as the run is, all as the row's event (the caches, the memo and an overflow's "first
     * block" as for consecutive rows) */
    i64 nplanes = 1, pstride = 0;
    /* a masked run (format version 6, op bit A_MASKED): nblk slots of sz bytes every step bytes, slot i present
     * iff bit i of id2 is set; applied one run of set bits at a time (a run of contiguous slots as one range,
     * else as a strided run of its slots), all as the row's event, the first present slot deciding which
     * variable a later one overflows (as the blocks of one strided run) */
    int masked = (op[r] & A_MASKED) != 0 && nblk > 1;
    uint64_t bits = 0;
    i64 slot_sz = sz, slot_step = step;
    const i64 asz = sz;   /* the access size findings record: a block's, a slot's (not a run of contiguous slots') */
    if (masked) {
        bits = cols->pstride ? (uint64_t)cols->pstride[r] : ~(uint64_t)0;
        if (nblk < 64)
            bits &= ((uint64_t)1 << nblk) - 1;
    } else if (cols->planes && cols->pstride && nblk > 1 && cols->planes[r] > 1) {
        nplanes = cols->planes[r];
        pstride = cols->pstride[r];
    }
    i64 rk = rank[r];
    i64 dv = device[r];
    int write = (op[r] & A_WRITE) != 0;
    i64 di = -1;
    if (dv >= 0) {
        if (dv >= ndevmap)
            goto out;
        di = devmap[dv];
        if (di < 0)
            goto out;
    }
    i64 row_e = -1;   /* CV entry the row's first block began in: later blocks outside it overflow it */
    int row_first = 1;
    if (masked && di >= 0) {
        /* slots wholly inside a cached CV, a write that changes none of them or a read that finds them all
         * valid: settled at once */
        i64 a = (i64)addr[r], span = (63 - __builtin_clzll(bits)) * slot_step + slot_sz;
        i64 key0 = ((rk * ndev + di) << SHIFT) | a;
        if (a >= 0 && ((a + span) >> SHIFT) == 0) {
            if (!(cv.lo <= key0 && key0 + span <= cv.hi) && cv2.lo <= key0 && key0 + span <= cv2.hi) {
                tmp = cv;
                cv = cv2;
                cv2 = tmp;
            }
            i64 set = cv_valid(di) | cv_init(di);
            if (cv.lo <= key0 && key0 + span <= cv.hi &&
                F(quiet)(w, cv.shadow + (key0 - cv.lo), cv.shadow + (key0 - cv.lo) + span) &&
                F(slots_hold)(s, cv.shadow + (key0 - cv.lo), slot_sz, slot_step, bits, write ? ~keep_dev | set : cv_valid(di),
                              write ? set : cv_valid(di)))
                bits = 0;
        }
    }
    for (i64 plane = 0; masked ? bits != 0 : plane < nplanes; plane++) {
        i64 a0 = (i64)addr[r] + plane * pstride;
        if (masked) {   /* the next run of set bits: slots i .. i + k - 1 */
            int i = __builtin_ctzll(bits);
            uint64_t rest = ~(bits >> i);
            int k = rest ? __builtin_ctzll(rest) : 64 - i;
            bits = i + k >= 64 ? 0 : bits & ~((((uint64_t)1 << k) - 1) << i);
            a0 = (i64)addr[r] + i * slot_step;
            if (slot_step == slot_sz || k == 1) {
                nblk = 1;
                step = 0;
                sz = slot_step == slot_sz ? k * slot_sz : slot_sz;
            } else {
                nblk = k;
                step = slot_step;
                sz = slot_sz;
            }
        } else {
            row_e = -1;   /* planes: each plane's first block decides for the plane */
            row_first = 1;
        }
        if (di >= 0 && a0 >= 0 && (nblk == 1 || step > 0)) {
            /* a device range or strided run wholly inside one of the two cached CVs: its blocks map to
             * shadow bytes at the same stride, so only the per-block state checks remain */
            i64 key0 = ((rk * ndev + di) << SHIFT) | a0;
            i64 span = (nblk - 1) * step + sz;
            int inside = ((a0 + span) >> SHIFT) == 0;
            if (inside && !(cv.lo <= key0 && key0 + span <= cv.hi) && cv2.lo <= key0 && key0 + span <= cv2.hi) {
                tmp = cv;
                cv = cv2;
                cv2 = tmp;
            }
            if (inside && nblk > 1 && !(cv.lo <= key0 && key0 + span <= cv.hi)) {
                /* a strided run in neither cached CV (the first after a control event): its CV looked up here,
                 * as the general path below would on its first block, so that the shortcuts below apply */
                i64 li, e = find_live(st, key0, &li);
                if (e >= 0 && key0 + span <= EN(st, e, EN_DEV) + EN(st, e, EN_SIZE)) {
                    cv2 = cv;
                    cv.lo = EN(st, e, EN_DEV);
                    cv.hi = cv.lo + EN(st, e, EN_SIZE);
                    cv.shadow = EN(st, e, EN_SHADOW);
                    cv.entry = e;
                }
            }
            if (inside && cv.lo <= key0 && key0 + span <= cv.hi) {
                i64 cvv = cv_valid(di), cvi = cv_init(di);
                if (masked && row_first) {   /* the row's first run is in this CV: later runs past it overflow it */
                    row_first = 0;
                    row_e = cv.entry;
                }
                i64 sb = cv.shadow + (key0 - cv.lo);
                if (nblk == 1) {
                    /* the common row: one shadow block whose bounds decide it (else the general path) */
                    i64 b0 = sb >> lgb;
                    int one = (sb + sz - 1) >> lgb == b0;
                    int quiet = F(quiet)(w, sb, sb + sz);
                    if (quiet && one) {
                        if (write) {
                            if (unchanged(blo[b0], bhi[b0], keep_dev, cvv | cvi))
                                goto next_plane;
                        } else if ((blo[b0] & cvv) != 0) {
                            goto next_plane;
                        }
                    }
                    if (masked && quiet) {   /* a run of a masked row's slots: as a strided run's block */
                        if (write) {
                            F(write_piece)(s, sb, sb + sz, b0, one, keep_dev, cvv | cvi);
                            goto next_plane;
                        }
                        if (F(all_have)(s, sb, sb + sz, cvv))
                            goto next_plane;
                    }
                } else {
                    /* a strided run: settled at once when the strided memo says its rows already hold what a
                     * write would set (or the valid bit a read needs), or when every shadow block of its span
                     * does (when the span has fewer shadow blocks than the run's blocks touch); else its
                     * blocks one by one, and the memo then remembers them */
                    i64 need = write ? ~keep_dev | cvv | cvi : cvv, want = write ? cvv | cvi : cvv;
                    int memo = nblk >= SM_MIN_ROWS;
                    int quiet = F(quiet)(w, sb, sb + span);
                    if (quiet && ((memo && memo_covers(st->memo, ctr, sb, step, sz, nblk, need, want))
                                      || (span >> lgb <= nblk * ((sz >> lgb) + 1)
                                          && span_settled(blo, bhi, lgb, sb, sb + span, write, keep_dev, cvv | cvi,
                                                          cvv)))) {
                        ctr[C_STRIDED_FAST]++;
                        goto next_plane;
                    }
                    ctr[C_STRIDED_ROWS] += nblk;
                    int done = 1;
                    if (write && quiet)
                        F(write_strided)(s, sb, step, sz, nblk, keep_dev, cvv | cvi);
                    else for (i64 blk = 0; blk < nblk; blk++) {
                        i64 s0 = sb + blk * step, s1 = s0 + sz, b0 = s0 >> lgb;
                        int one = (s1 - 1) >> lgb == b0;
                        if (write) {
                            F(write_piece)(s, s0, s1, b0, one, keep_dev, cvv | cvi);
                            if (watching)
                                F(watch)(s, w, s0, s1, g);
                        } else if (!(one && (blo[b0] & cvv) != 0) && !F(all_have)(s, s0, s1, cvv)) {
                            done = 0;   /* a bad read: the general path below records it, block by block */
                            break;
                        }
                    }
                    if (done) {
                        if (memo)
                            memo_add(st->memo, ctr, sb, step, sz, nblk, need, want);
                        goto next_plane;
                    }
                }
            }
        }
        for (i64 blk = 0; blk < nblk; blk++) {
            i64 a = a0 + blk * step;
            if (((a | (a + sz)) >> SHIFT) != 0)
                continue;   /* not a real address (see build_static) */
            if (di < 0) {
                /* ---------------- host access: pieces in tracked memory ---------------- */
                i64 key = (rk << SHIFT) | a, end = key + sz;
                while (key < end) {
                    if (!(h_lo <= key && key < h_hi)) {
                        i64 i = search(t->tr_lo, t->n_tr, key);
                        if (i >= 0 && key < t->tr_hi[i]) {
                            h_lo = t->tr_lo[i];
                            h_hi = t->tr_hi[i];
                            h_base = t->tr_base[i];
                        } else {   /* untracked memory up to the next tracked interval */
                            i64 next = i + 1 < t->n_tr ? t->tr_lo[i + 1] : BIG;
                            key = end < next ? end : next;
                            continue;
                        }
                    }
                    i64 stop = end < h_hi ? end : h_hi;
                    i64 s0 = h_base + (key - h_lo), s1 = s0 + (stop - key), b0 = s0 >> lgb;
                    int one = (s1 - 1) >> lgb == b0;   /* the piece is in one block: decide from its bounds */
                    if (write) {
                        F(write_piece)(s, s0, s1, b0, one, keep_host, set_host);
                        if (watching)
                            F(watch)(s, w, s0, s1, g);
                    } else if (one && (blo[b0] & OVV) != 0) {
                    } else if (!F(all_have)(s, s0, s1, OVV)) {
                        if (lazy) {
                            stop_here = 1;
                            goto out;
                        }
                        F(host_read_findings)(s, st, s0, s1, key, g, rk, cols->loc[r], cols->aux[r], asz);
                    }
                    key = stop;
                }
            } else {
                /* ---------------- device access: pieces in live CVs, gaps checked for overflow ---------------- */
                i64 cvv = cv_valid(di), cvi = cv_init(di);
                i64 key = ((rk * ndev + di) << SHIFT) | a, start = key, start_lo = -1, start_e = -1, end = key + sz;
                if (row_e >= 0 && !(EN(st, row_e, EN_DEV) <= key
                                    && key < EN(st, row_e, EN_DEV) + EN(st, row_e, EN_SIZE))) {
                    /* one strided access: a block past the section of the first is that variable's overflow,
                     * wherever it lands (another variable's device copy, a gap) */
                    if (lazy) {
                        stop_here = 1;
                        goto out;
                    }
                    overflow_of(st, row_e, key, end, g, rk, di, cols->loc[r], cols->aux[r], asz);
                    continue;
                }
                if (row_first) {
                    i64 row_i;
                    row_first = 0;
                    row_e = find_live(st, key, &row_i);
                }
                while (key < end) {
                    if (key != start && cv.lo == start_lo) {
                        /* one access that began in a CV runs past its end: the rest overflows that variable */
                        if (lazy) {
                            stop_here = 1;
                            goto out;
                        }
                        overflow_of(st, start_e, key, end, g, rk, di, cols->loc[r], cols->aux[r], asz);
                        break;
                    }
                    if (!(cv.lo <= key && key < cv.hi)) {
                        i64 i = -1, e;
                        if (cv2.lo <= key && key < cv2.hi) {
                            tmp = cv;
                            cv = cv2;
                            cv2 = tmp;
                            e = cv.entry;
                        } else {
                            e = find_live(st, key, &i);
                        }
                        if (e >= 0 && !(cv.lo <= key && key < cv.hi)) {
                            cv2 = cv;
                            cv.lo = EN(st, e, EN_DEV);
                            cv.hi = cv.lo + EN(st, e, EN_SIZE);
                            cv.shadow = EN(st, e, EN_SHADOW);
                            cv.entry = e;
                        } else if (e < 0) {
                            i64 stop = i + 1 < ctr[C_NLIVE] ? (end < st->lv_key[i + 1] ? end : st->lv_key[i + 1]) : end;
                            if (lazy) {
                                stop_here = 1;
                                goto out;
                            }
                            overflow(t, st, key, stop, g, rk, di, cols->eid[r], cols->loc[r], cols->aux[r], asz);
                            key = stop;
                            continue;
                        }
                    }
                    if (key == start) {
                        start_lo = cv.lo;
                        start_e = cv.entry;
                    }
                    i64 stop = end < cv.hi ? end : cv.hi;
                    i64 s0 = cv.shadow + (key - cv.lo), s1 = s0 + (stop - key), b0 = s0 >> lgb;
                    int one = (s1 - 1) >> lgb == b0;
                    if (write) {
                        F(write_piece)(s, s0, s1, b0, one, keep_dev, cvv | cvi);
                        if (watching)
                            F(watch)(s, w, s0, s1, g);
                    } else if (one && (blo[b0] & cvv) != 0) {
                    } else if (!F(all_have)(s, s0, s1, cvv)) {
                        if (lazy) {
                            stop_here = 1;
                            goto out;
                        }
                        F(device_read_findings)(s, st, s0, s1, key, g, rk, di, cvv, cvi, cv.entry, cols->loc[r],
                                                cols->aux[r], asz);
                    }
                    key = stop;
                }
            }
        }
    next_plane:;
    }
out:
    c->h_lo = h_lo;
    c->h_hi = h_hi;
    c->h_base = h_base;
    c->cv = cv;
    c->cv2 = cv2;
    return stop_here;
}

/* Apply the selected rows of one column set (see qv_vsm_apply in vsm_kernel.c).
 *
 * The hot loop settles the common row itself: a one-block device access (not strided) inside one of the
 * two cached CVs whose block's bounds decide it (a read of a valid copy, a write that changes nothing) or
 * that writes into that CV; every other row goes to F(apply_row). */
static void F(apply)(const qv_columns *cols, const qv_selection *sel, const qv_tables *t, qv_state *st,
                     const qv_watch *w) {
    const int16_t *kind = cols->kind;
    const int32_t *rank = cols->rank, *device = cols->device, *op = cols->op;
    const uint64_t *addr = cols->addr, *size = cols->size;
    const int64_t *blocks = cols->blocks;
    const i64 *rows = sel->rows;
    i64 *ctr = st->ctr;
    F(shv) s = {(SH *)st->shadow, st->blo, st->bhi, st->bcnt, st->lgb, st->memo, st->ctr};
    i64 *blo = s.blo, *bhi = s.bhi;
    const i64 lgb = s.lgb, bsz = (i64)1 << lgb;
    const int watching = w->n_wa > 0;
    const i64 *devmap = t->devmap;
    const i64 ndevmap = t->n_devmap, ndev = t->ndev;
    const i64 keep_dev = ~((i64)OVV | t->all_cvv);
    F(caches) c = {0, 0, 0, NO_CV, NO_CV};
    cached_cv cv = NO_CV, cv2 = NO_CV, tmp;
    ctr[C_STOP] = -1;
    for (i64 j = sel->first; j < sel->n_rows; j++) {
        i64 r = rows ? rows[j] : j;
        i64 g = sel->base + r;
        if (watching) {
            i64 k = search(w->st_ev, w->n_st, g - 1) + 1;
            while (k < w->n_st && w->st_ev[k] == g) {
                w->wa_done[w->st_w[k]] = 1;
                k++;
            }
        }
        if (kind[r] == K_ACCESS && blocks[r] <= 1) {
            i64 sz = (i64)size[r], a0 = (i64)addr[r], dv = device[r];
            i64 di = dv >= 0 && dv < ndevmap ? devmap[dv] : -1;
            if (sz > 0 && di >= 0 && a0 >= 0 && ((a0 + sz) >> SHIFT) == 0) {
                i64 key0 = ((rank[r] * ndev + di) << SHIFT) | a0, key1 = key0 + sz;
                if (!(cv.lo <= key0 && key1 <= cv.hi) && cv2.lo <= key0 && key1 <= cv2.hi) {
                    tmp = cv;
                    cv = cv2;
                    cv2 = tmp;
                }
                if (cv.lo <= key0 && key1 <= cv.hi && F(quiet)(w, cv.shadow + (key0 - cv.lo), cv.shadow + (key1 - cv.lo))) {
                    i64 cvv = cv_valid(di), cvi = cv_init(di);
                    i64 sb = cv.shadow + (key0 - cv.lo), b0 = sb >> lgb;
                    int one = (sb + sz - 1) >> lgb == b0;
                    if (op[r] & A_WRITE) {
                        if (!one)
                            F(map_range_call)(s, sb, sb + sz, keep_dev, cvv | cvi, MAP_PLAIN, 0);
                        else if (!unchanged(blo[b0], bhi[b0], keep_dev, cvv | cvi)) {
                            i64 lb = blo[b0], ub = bhi[b0], set = cvv | cvi;
                            if (lb != ub && sz <= 16 && s.bcnt[b0] + sz < bsz && sb + sz != (b0 + 1) << lgb) {
                                /* a few bytes into a split block, not its last ones: F(write_in_block)'s
                                 * common case, without the call */
                                i64 lo, hi;
                                if (F(write_few)(s.shadow + sb, sz, keep_dev, set, &lo, &hi)) {
                                    if (ctr[C_NMEMO])
                                        memo_drop(s.memo, ctr, sb, sb + sz);
                                    blo[b0] = lb & lo;
                                    bhi[b0] = ub | hi;
                                    s.bcnt[b0] += sz;
                                }
                            } else {
                                F(write_in_block)(s, sb, sb + sz, b0, keep_dev, set);
                            }
                        }
                        continue;
                    }
                    if (one && (blo[b0] & cvv) != 0)
                        continue;   /* (else F(apply_row) checks the bytes, and records a bad read) */
                }
            }
        }
        c.cv = cv;
        c.cv2 = cv2;
        int stop = F(apply_row)(s, cols, t, st, w, &c, r, g, watching);
        cv = c.cv;
        cv2 = c.cv2;
        if (stop) {
            ctr[C_STOP] = j;
            return;
        }
    }
}
