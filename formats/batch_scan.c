/* One pass over a decoded column of a record batch: its XXH3-64 digest (the checksum of
 * formats/integrity.py), its minimum and maximum (the range checks of formats/validate.py) and, for
 * `kind`, which kinds occur; for `addr` (format version 4) the running sum that turns
 * the stored differences back into addresses, digested as it is written.
 *
 * Why one pass in C: numpy needs a pass per reduction (min, max, digest, cumsum, a table lookup),
 * each reading the whole column from memory; here each chunk of CHUNK values is hashed and reduced
 * while it is in the L1 cache. formats/batch_scan.py calls it through ctypes; the numpy code it
 * replaces stays the reference (tests/formats/test_batch_scan.py proves they agree).
 */
#include <stdint.h>
#include <string.h>

#define XXH_INLINE_ALL
#define XXH_STATIC_LINKING_ONLY
#include "arrow/vendored/xxhash/xxhash.h"

#define CHUNK 16384  /* values hashed and reduced together (128 KiB of 8-byte values: in L2) */

typedef struct {
    int64_t min;      /* uint64 columns: the bit pattern of the unsigned value */
    int64_t max;
    uint64_t digest;
    uint64_t kinds[2];  /* `kind`: bit k set when a row has kind k in [0, 128) */
} qv_scan;

/* min/max only when `ranges` (a column validate.py has no range rule for is only digested); then one
 * XXH3 call over the column (faster than its streaming state; a batch's column, at most 2 MiB at
 * 2^18 rows, is still in the cache) */
#define DEFINE_SCAN(NAME, T)                                                                 \
    void NAME(const T *v, int64_t n, qv_scan *out, int ranges) {                             \
        T lo = n ? v[0] : 0, hi = lo;                                                        \
        if (ranges) {                                                                        \
            for (int64_t i = 0; i < n; i++) {                                                \
                T x = v[i];                                                                  \
                lo = x < lo ? x : lo;                                                        \
                hi = x > hi ? x : hi;                                                        \
            }                                                                                \
        }                                                                                    \
        out->min = ranges ? (int64_t)lo : 0;                                                 \
        out->max = ranges ? (int64_t)hi : 0;                                                 \
        out->digest = XXH3_64bits(v, (size_t)n * sizeof(T));                                 \
        out->kinds[0] = out->kinds[1] = 0;                                                   \
    }

DEFINE_SCAN(qv_scan_i32, int32_t)
DEFINE_SCAN(qv_scan_i64, int64_t)
DEFINE_SCAN(qv_scan_u64, uint64_t)

/* seen[v[i]] = 1 for kinds known to be in [0, 128): one store per row, kept scalar (vectorised, gcc
 * makes it a scatter, twice slower). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
static void mark_kinds(const int16_t *v, int64_t s, int64_t e, uint8_t *seen) {
    for (int64_t i = s; i < e; i++) seen[v[i]] = 1;
}

/* `kind` (int16): min, max, digest and which kinds in [0, 128) occur. */
void qv_scan_kind(const int16_t *v, int64_t n, qv_scan *out) {
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    int16_t lo = n ? v[0] : 0, hi = lo;
    uint8_t seen[129] = {0};   /* [128]: any kind outside [0, 128) */
    for (int64_t s = 0; s < n; s += CHUNK) {
        int64_t e = s + CHUNK < n ? s + CHUNK : n;
        int16_t clo = lo, chi = hi;
        for (int64_t i = s; i < e; i++) {
            int16_t x = v[i];
            clo = x < clo ? x : clo;
            chi = x > chi ? x : chi;
        }
        lo = clo; hi = chi;
        /* which kinds occur: one store per row into a table, no dependency from row to row */
        if (clo >= 0 && chi < 128) {
            mark_kinds(v, s, e, seen);
        } else {
            for (int64_t i = s; i < e; i++) {
                int16_t x = v[i];
                seen[x >= 0 && x < 128 ? x : 128] = 1;
            }
        }
        XXH3_64bits_update(&st, v + s, (size_t)(e - s) * sizeof(int16_t));
    }
    out->min = lo;
    out->max = hi;
    out->digest = XXH3_64bits_digest(&st);
    out->kinds[0] = out->kinds[1] = 0;
    for (int k = 0; k < 128; k++)
        if (seen[k]) out->kinds[k >> 6] |= 1ULL << (k & 63);
}

/* `addr` of format version 4: out[i] = stored[0] + ... + stored[i] (modulo 2^64), digested as it is
 * written (no range rule applies to addresses). */
void qv_scan_addr_delta(const uint64_t *stored, uint64_t *out, int64_t n, qv_scan *res) {
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    uint64_t sum = 0;
    for (int64_t s = 0; s < n; s += CHUNK) {
        int64_t e = s + CHUNK < n ? s + CHUNK : n;
        for (int64_t i = s; i < e; i++) {
            sum += stored[i];
            out[i] = sum;
        }
        XXH3_64bits_update(&st, out + s, (size_t)(e - s) * sizeof(uint64_t));
    }
    res->min = res->max = 0;
    res->digest = XXH3_64bits_digest(&st);
    res->kinds[0] = res->kinds[1] = 0;
}

/* The shape rules of ACCESS rows that stand for more than one block (formats/validate.py _check_strided and
 * _check_masked, FORMAT.md): strided runs, their planes (`name` >= 2) and masked runs (op bit `masked_bit`).
 * Returns 1 when no row breaks one, 0 at the first that may (validate.py's numpy rules then name the rule and the
 * row: this pass only proves a batch clean, at least as strictly as they do); *blocks: the blocks the rows stand
 * for (planes x blocks, a masked run its present slots), as validate.py counts them; *masked: whether a row is a
 * masked run. Why: those rules are a dozen numpy passes over a batch's rows (half the decoding of a log of
 * conditional accesses); here one. */
int qv_access_shapes(const int16_t *kind, const int32_t *op, const uint64_t *size, const int64_t *aux2,
                     const uint64_t *addr2, const int64_t *id2, const int32_t *name, int64_t n, int access_kind,
                     int32_t masked_bit, int64_t max_slots, double limit, double *blocks_out, int *masked_out) {
    double total = 0;
    int masked_any = 0, clean = 1;
    for (int64_t i = 0; i < n; i++) {
        if (kind[i] != access_kind)
            continue;
        int64_t nb = aux2[i];
        int32_t np = name[i];
        if (nb < 0 || np < -1 || (np >= 2 && nb < 2))
            clean = 0;
        if (op[i] & masked_bit) {
            masked_any = 1;
            uint64_t bits = (uint64_t)id2[i];
            if (nb < 2 || nb > max_slots || !(bits & 1) || !((bits >> (nb - 1)) & 1) ||
                (nb < 64 && (bits >> nb)) || addr2[i] < size[i] || np >= 2 ||
                (double)(nb - 1) * (double)addr2[i] + (double)size[i] > limit)
                clean = 0;
            total += (double)__builtin_popcountll(bits);
            continue;
        }
        if (nb < 2)   /* one block: validate.py's per-event allowance counts it */
            continue;
        double stride = (double)addr2[i], sz = (double)size[i], span = (double)(nb - 1) * stride + sz;
        if (addr2[i] <= size[i] || span > limit)
            clean = 0;
        double planes = np > 1 ? (double)np : 1;
        if (np >= 2) {
            int64_t ps = id2[i];
            if ((double)ps <= span || addr2[i] == 0 || (uint64_t)ps % addr2[i] != 0 || (planes - 1) * (double)ps + span > limit)
                clean = 0;
        }
        total += (nb < limit ? (double)nb : limit) * (planes < limit ? planes : limit);
    }
    *blocks_out = total;
    *masked_out = masked_any;
    return clean;
}
