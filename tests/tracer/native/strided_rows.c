/* strided_rows.c - the coalescer (tracer/native/qv_coalesce.inc) on its own, for
 * tests/tracer/test_strided_clip.py: a strided record (strided_at) must leave the same bytes per kind
 * in the log as one access per row, and cost O(1) per record where rows overlap pending runs.
 *
 *   strided_rows fuzz N SEED   N random scenarios (device-kernel drop rules): both ways, bytes compared;
 *                              and with the conditional accesses as plain ones (masked runs: same bytes)
 *   strided_rows evict         a run that holds rows is written out while the record is taken: both ways
 *   strided_rows tall ROWS     the tall-grid stencil's reads of rows i-1, i+1, i: lookups of the keep filter
 *
 * A scenario: a few pending runs (single accesses, ranges, strided records of strides 32 and 48, a
 * record's next row partly: a tail, a conditional access's elements: a masked run) over a 4 KiB arena, then one strided record; the log is the byte set of each kind (coal_emit). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qv_coalesce.h"

__thread uintptr_t __quiver_skip[4];
static qv_coal g_t;
static uint64_t g_gen_calls;
#define ARENA 32768
static uintptr_t g_base;
static unsigned char g_bytes[2][ARENA];

static inline uint64_t coal_gen(qv_coal *c) {
  (void)c;
  g_gen_calls++; /* one per access() (keep), O(1) per batched stretch */
  return 1;
}
static int coal_keep_slow(qv_coal *c, uintptr_t a, uintptr_t n) {
  (void)a, (void)n;
  qv_filter_cache(c, 1, 0, UINTPTR_MAX, 1);
  return 1;
}
static inline void coal_unkept(uintptr_t a, uintptr_t n, int w, uintptr_t pc) { (void)a, (void)n, (void)w, (void)pc; }
static void coal_emit(const qv_run *r, uintptr_t lo, uintptr_t size, uintptr_t stride, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; b++)
    for (uintptr_t x = 0; x < size; x++) {
      uintptr_t a = lo + b * stride + x - g_base;
      if (a < ARENA) g_bytes[r->write][a] = 1;
    }
}
static void coal_emit_mask(const qv_run *r, uintptr_t lo, uintptr_t width, uintptr_t pitch, uint64_t slots, uint64_t mask,
                           int last) {
  (void)last;
  for (uint64_t i = 0; i < slots; i++)
    if (mask >> i & 1) coal_emit(r, lo + i * pitch, width, 0, 1);
}
static inline void coal_atomic(void *p, size_t n, size_t desc, uintptr_t pc) { (void)p, (void)n, (void)desc, (void)pc; }

static uint64_t g_now;
#define QV_COAL_TLS() (&g_t)
#define QV_COAL_ON 1
#define QV_COAL_EXPORT __attribute__((unused))
#define QV_COAL_NEAR_PC 512
#define QV_COAL_DROP_WRITTEN 1
#define QV_COAL_DROP_READS(t) 1
#define QV_COAL_SHAPES(t) 1
#define QV_COAL_PUBLISH_SKIP 0
#define QV_COAL_BUSY() 0
#define QV_COAL_NOW() (++g_now)
#include "qv_coalesce.inc"

static void reset(void) {
  memset(&g_t, 0, sizeof g_t);
  memset(g_bytes, 0, sizeof g_bytes);
  for (int w = 0; w < 2; w++) skip_set(&g_t, w, 0, 0);
  g_now = 0;
}

static uint64_t g_rng;
static int g_maybe = QV_DESC_MAYBE; /* 0: the conditional accesses as plain ones (their runs without gaps) */
static unsigned rnd(unsigned n) {
  g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)((g_rng >> 33) % n);
}

/* one scenario, the record either as strided_at or as one access per row; its byte sets */
static void scenario(uint64_t seed, int per_row, unsigned char out[2][ARENA]) {
  reset();
  g_rng = seed;
  /* up to 12 runs; one scenario in four up to more than QV_RUN_GENERAL: the record's runs evict older ones */
  int ops = 1 + (int)rnd(rnd(4) ? 12 : QV_RUN_GENERAL + 4);
  uintptr_t last_end = 0, last_bsize = 0, last_pc = 0;
  int last_w = 0;
  for (int k = 0; k < ops; k++) {
    int w = rnd(4) == 0, kind = (int)rnd(5);
    uintptr_t pc = 0x1000 + 0x1000 * rnd(4); /* far apart: not one loop body */
    uintptr_t a = g_base + 4 * rnd(512);
    if (kind == 0) {
      access_at(a, 4 * (1 + rnd(4)), w, pc, 4, 0, NULL);
    } else if (kind == 1) {
      access_at(a, 4 * (1 + rnd(64)), w, pc, 0, 0, NULL);
    } else if (kind == 4 && rnd(2)) { /* two conditional fields of an array of structs: slots a pitch apart */
      uintptr_t p = rnd(2) ? 24 : 12, f2 = 4 + 4 * rnd(2);
      int w2 = rnd(3) == 0, d = g_maybe ? g_maybe | (int)(p << QV_DESC_PITCH_SHIFT) : 0;
      for (unsigned j = 0, m = 2 + rnd(rnd(2) ? 40 : 700); j < m; j++)
        if (rnd(10) < 7) {
          access_at(a + p * j, 4, w, pc, 4 | d, 0, NULL);
          if (f2 < p) access_at(a + p * j + f2, 4, w2, pc + 8, 4 | d, 0, NULL);
        }
    } else if (kind == 4) { /* a conditional access's elements, some skipped: a masked run */
      for (unsigned j = 0, m = 2 + rnd(rnd(2) ? 80 : 1400); j < m; j++) /* (past 512 slots: windows roll over) */
        if (rnd(10) < 7) access_at(a + 4 * j, 4, w, pc, 4 | g_maybe, 0, NULL);
    } else if (kind == 2 || !last_bsize) {
      uintptr_t stride = rnd(2) ? 32 : 48, bsize = 4 * (1 + rnd(8)), blocks = rnd(3) ? 2 + rnd(30) : 2;
      strided_at(a, bsize, stride, blocks, w, pc, 4);
      last_end = a + blocks * stride, last_bsize = bsize, last_pc = pc, last_w = w;
    } else { /* part of the next row of the last record: a strided run with a tail */
      access_at(last_end, 4 * (1 + rnd((unsigned)last_bsize / 4)), last_w, last_pc, 4, 0, NULL);
      last_bsize = 0;
    }
  }
  int w = rnd(4) == 0;
  uintptr_t stride = rnd(3) ? 32 : 48, bsize = 4 * (1 + rnd(7)), blocks = 2 + rnd(40);
  uintptr_t a = g_base + 4 * rnd(256), pc = rnd(3) ? 0x9000 : 0x1000 + 0x1000 * rnd(4); /* (or an earlier op's) */
  if (per_row)
    for (uintptr_t i = 0; i < blocks; i++) access_at(a + i * stride, bsize, w, pc, 4, 0, NULL);
  else
    strided_at(a, bsize, stride, blocks, w, pc, 4);
  coal_flush(&g_t);
  memcpy(out, g_bytes, sizeof g_bytes);
}

/* Scripted: a write run holds rows 10..20 of a record of reads (rows of 8 bytes every 32) and a read
 * run rows 0..3; with QV_RUN_GENERAL - 2 other runs, QV_RUN_GENERAL are pending. Row 4, kept, starts a run:
 * the write run, the oldest, is written out, so rows 10..20 are no longer dropped but read. */
static void scripted(int per_row, unsigned char out[2][ARENA]) {
  reset();
  uintptr_t a = g_base, stride = 32, bsize = 8, blocks = 30, pc = 0x9000;
  access_at(a + 10 * stride, 11 * stride, 1, 0x2000, 0, 0, NULL); /* the write run */
  access_at(a, 4 * stride, 0, 0x3000, 0, 0, NULL);                 /* rows 0..3 */
  for (int k = 0; k < QV_RUN_GENERAL - 2; k++) access_at(a + 2048 + 64 * k, 16, 0, 0x10000 + 0x1000 * k, 0, 0, NULL);
  if (per_row)
    for (uintptr_t i = 0; i < blocks; i++) access_at(a + i * stride, bsize, 0, pc, 4, 0, NULL);
  else
    strided_at(a, bsize, stride, blocks, 0, pc, 4);
  coal_flush(&g_t);
  memcpy(out, g_bytes, sizeof g_bytes);
}

int main(int argc, char **argv) {
  static unsigned char arena[ARENA + 8192];
  g_base = ((uintptr_t)arena + 4095) & ~(uintptr_t)4095;
  if (argc == 4 && !strcmp(argv[1], "fuzz")) {
    int n = atoi(argv[2]), bad = 0, fewer = 0;
    static unsigned char x[2][ARENA], y[2][ARENA];
    for (int s = 0; s < n; s++) {
      uint64_t seed = strtoull(argv[3], NULL, 10) * 1000003u + (uint64_t)s;
      uint64_t g0 = g_gen_calls;
      scenario(seed, 0, x);
      uint64_t g1 = g_gen_calls;
      scenario(seed, 1, y);
      fewer += g1 - g0 < g_gen_calls - g1; /* the record took fewer lookups than its rows */
      if (memcmp(x, y, sizeof x)) {
        if (bad++ < 5) printf("differs: scenario %d\n", s);
      }
      g_maybe = 0; /* masked runs hold exactly the bytes plain runs would; reads differ only where the
                      thread wrote (a read of them is dropped while a run that wrote them is pending) */
      scenario(seed, 1, y);
      g_maybe = QV_DESC_MAYBE;
      int plain = 0;
      for (int i = 0; i < ARENA; i++) plain |= x[1][i] != y[1][i] || (x[0][i] != y[0][i] && !x[1][i]);
      if (plain && bad++ < 5) printf("differs from plain runs: scenario %d\n", s);
    }
    printf("scenarios %d differ %d fewer %d\n", n, bad, fewer);
    return bad != 0;
  }
  if (argc == 2 && !strcmp(argv[1], "evict")) {
    static unsigned char x[2][ARENA], y[2][ARENA];
    scripted(0, x);
    scripted(1, y);
    int bad = memcmp(x, y, sizeof x) != 0;
    printf("evict differ %d\n", bad);
    return bad;
  }
  if (argc == 3 && !strcmp(argv[1], "tall")) { /* rows of 8 floats, one thread's chunk of rows 1..R-2 */
    uintptr_t rows = strtoull(argv[2], NULL, 10), rb = 32;
    static unsigned char *grid;
    grid = malloc(rows * rb + 64);
    reset();
    g_base = (uintptr_t)grid;
    uintptr_t a = ((uintptr_t)grid + 31) & ~(uintptr_t)31;
    uint64_t before = g_gen_calls;
    strided_at(a + 4, 24, rb, rows - 2, 0, 0x100, 4);            /* a[(i-1)*w + 1..6] */
    strided_at(a + 2 * rb + 4, 24, rb, rows - 2, 0, 0x140, 4);   /* a[(i+1)*w + 1..6] */
    strided_at(a + rb, rb, rb, rows - 2, 0, 0x180, 4);           /* a[i*w + 0..7] */
    strided_at(a + rb + 4 + (uintptr_t)rows * rb, 24, rb, rows - 2, 1, 0x1c0, 4); /* b[i*w + 1..6] */
    printf("keep lookups %llu\n", (unsigned long long)(g_gen_calls - before));
    coal_flush(&g_t);
    free(grid);
    return 0;
  }
  fprintf(stderr, "usage: strided_rows fuzz N SEED | evict | tall ROWS\n");
  return 2;
}
