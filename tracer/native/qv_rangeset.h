/* qv_rangeset.h - a set of address ranges that lock-free readers search while writers change it.
 *
 * Why shared: both tracers decide on every load and store whether its address is watched (the
 * OpenMP tracer: mapped host memory and live device copies; the MPI tracer: window memory and RMA
 * buffers). One implementation (qv_rangeset.c, compiled into libquiver_omp.so and
 * libquiver_mpi.so, symbols hidden so the two copies never interpose) keeps them alike.
 *
 * Shape: a sorted array of disjoint [lo, hi) pairs published through an atomic pointer; writers
 * rebuild it under the set's mutex into the next array of a ring, readers binary-search the
 * published one. Arrays are recycled round-robin and never unmapped: a reader still searching an
 * array that is being rebuilt (descheduled through QV_RING updates) gets a wrong answer for one
 * access, never a fault, and a program mapping in a loop does not leak a mapping per update.
 */
#ifndef QV_RANGESET_H
#define QV_RANGESET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct qv_ranges {
  size_t n, cap;
  uintptr_t min, max;
  uintptr_t r[]; /* lo0 hi0 lo1 hi1 ... sorted, disjoint */
} qv_ranges;

#define QV_RING 16

typedef struct qv_rangeset {
  qv_ranges *_Atomic cur;
  _Atomic uint64_t gen; /* bumped at every publish (readers' caches compare it) */
  pthread_mutex_t mu;
  qv_ranges *ring[QV_RING];
  int next;
} qv_rangeset;

#define QV_RANGESET_INIT {.cur = NULL, .gen = 1, .mu = PTHREAD_MUTEX_INITIALIZER}

/* Whether [a, a+n) overlaps a range of the set (lock-free). */
static inline int qv_in_ranges(qv_rangeset *set, uintptr_t a, uintptr_t n) {
  const qv_ranges *R = atomic_load_explicit(&set->cur, memory_order_acquire);
  if (!R || a + n <= R->min || a >= R->max) return 0;
  size_t lo = 0, hi = R->n;
  while (lo < hi) { /* first range whose end is above a */
    size_t m = (lo + hi) >> 1;
    if (R->r[2 * m + 1] <= a) lo = m + 1; else hi = m;
  }
  return lo < R->n && R->r[2 * lo] < a + n;
}

#define QV_HIDDEN __attribute__((visibility("hidden")))

/* Add / remove [lo, hi) (merged with / cut out of the ranges already there). */
QV_HIDDEN void qv_ranges_add(qv_rangeset *set, uintptr_t lo, uintptr_t hi);
QV_HIDDEN void qv_ranges_remove(qv_rangeset *set, uintptr_t lo, uintptr_t hi);
/* Replace the set by n [lo, hi) pairs, in any order and overlapping: `fill(pairs, arg)` writes
 * them into pairs[0 .. 2n). */
QV_HIDDEN void qv_ranges_rebuild(qv_rangeset *set, size_t n, void (*fill)(uintptr_t *pairs, void *arg), void *arg);

#endif
