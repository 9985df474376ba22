/* qv_planes.h - held strided rows that grow into planes (FORMAT.md, format version 5).
 *
 * Why: a loop nest the range pass hoists one row at a time (a red-black sweep: every grid row's
 * colour is a strided run, the next row of that colour starts one element over) still writes one
 * ACCESS row per grid row. A complete strided row of a call site is held instead of written; a
 * later row of the same site, shape and phase at a fixed distance becomes its next plane. A plane
 * is stamped with the held row's time instead of its run's start, so it may join only when that
 * moves it past no row of the thread it shares a byte with, one of the two a write: the coalescer
 * orders such rows by their runs' starts, and the log must keep that order. The recent rows are
 * kept exactly (a ring per kind), older ones as one hull per kind.
 */
#ifndef QV_PLANES_H
#define QV_PLANES_H

#include <stdint.h>

#define QV_HELD 16       /* held rows per thread (2 per call site of a red-black sweep's body) */
#define QV_RECENT 32     /* rows of each kind remembered exactly (at most 32: a bit mask of the ring) */
#define QV_PLANES_MAX (1u << 30)

typedef struct qv_recent {
  uintptr_t lo, hi, bsize, stride; /* [lo, hi) the hull; stride 0: one block [lo, lo + bsize) */
  uint64_t blocks;
  int64_t tau, start;      /* its time in the log (a plane: its held row's), its run's start */
} qv_recent;

/* rows of a kind that left the ring: their hull, and the latest log time and run start among them */
typedef struct qv_gone {
  uintptr_t lo, hi;
  int64_t tau, start;
} qv_gone;

typedef struct qv_plane_row {
  uintptr_t lo, bsize, stride, pstride;
  uint64_t blocks, planes; /* planes 0: slot free */
  uintptr_t pc;
  int64_t t0, construct;
  uint64_t used;           /* when it last took a plane (eviction order) */
  int32_t write, width, dev, passed; /* passed: a later row of the same site went elsewhere */
} qv_plane_row;

typedef struct qv_planes {
  /* the ring's hulls apart from the rest, so plane_clear's first test is a branch-free pass over
   * two arrays (an empty slot is [0, 0): it meets nothing) */
  int64_t rlo[2][QV_RECENT], rhi[2][QV_RECENT]; /* (user-space addresses: below 2^63) */
  uint32_t n[2], head[2];  /* rows of each kind in the ring, the next slot */
  uint64_t uses;
  uint32_t occ;            /* occupied held slots */
  qv_gone gone[2];
  qv_recent recent[2][QV_RECENT];
  qv_plane_row held[QV_HELD];
} qv_planes;

#endif
