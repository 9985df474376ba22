/* qv_rangeset.c - the writers of a qv_rangeset (qv_rangeset.h); readers use qv_in_ranges. */
#define _GNU_SOURCE
#include "qv_rangeset.h"

#include <stdlib.h>
#include <sys/mman.h>

static qv_ranges *ranges_alloc(size_t cap) {
  qv_ranges *R = mmap(NULL, sizeof(qv_ranges) + 2 * cap * sizeof(uintptr_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (R == MAP_FAILED) return NULL;
  R->n = 0;
  R->cap = cap;
  return R;
}

/* The next array to rebuild (never the published one); called with set->mu held. */
static qv_ranges *ranges_slot(qv_rangeset *set, size_t need) {
  qv_ranges **slot = &set->ring[set->next];
  set->next = (set->next + 1) % QV_RING;
  if (!*slot || (*slot)->cap < need) {
    qv_ranges *R = ranges_alloc(need < 64 ? 64 : 2 * need); /* a too-small old array is left mapped */
    if (!R) return NULL;
    *slot = R;
  }
  (*slot)->n = 0;
  return *slot;
}

static void ranges_push(qv_ranges *R, uintptr_t lo, uintptr_t hi) {
  if (lo >= hi) return;
  if (R->n && R->r[2 * R->n - 1] >= lo) { /* touches the previous one: merge */
    if (hi > R->r[2 * R->n - 1]) R->r[2 * R->n - 1] = hi;
    return;
  }
  R->r[2 * R->n] = lo;
  R->r[2 * R->n + 1] = hi;
  R->n++;
}

/* Publish a rebuilt array. */
static void ranges_publish(qv_rangeset *set, qv_ranges *R) {
  R->min = R->n ? R->r[0] : 0;
  R->max = R->n ? R->r[2 * R->n - 1] : 0;
  atomic_store_explicit(&set->cur, R, memory_order_release);
  atomic_fetch_add_explicit(&set->gen, 1, memory_order_release);
}

void qv_ranges_add(qv_rangeset *set, uintptr_t lo, uintptr_t hi) {
  if (lo >= hi) return;
  pthread_mutex_lock(&set->mu);
  qv_ranges *old = atomic_load(&set->cur);
  size_t n = old ? old->n : 0;
  qv_ranges *R = ranges_slot(set, n + 1);
  if (R) {
    int done = 0;
    for (size_t i = 0; i < n; i++) {
      uintptr_t a = old->r[2 * i], b = old->r[2 * i + 1];
      if (!done && lo <= a) {
        ranges_push(R, lo, hi);
        done = 1;
      }
      ranges_push(R, a, b);
    }
    if (!done) ranges_push(R, lo, hi);
    ranges_publish(set, R);
  }
  pthread_mutex_unlock(&set->mu);
}

void qv_ranges_remove(qv_rangeset *set, uintptr_t lo, uintptr_t hi) {
  const qv_ranges *cur = atomic_load(&set->cur);
  if (!cur || hi <= cur->min || lo >= cur->max) return;
  pthread_mutex_lock(&set->mu);
  qv_ranges *old = atomic_load(&set->cur);
  qv_ranges *R = old ? ranges_slot(set, old->n + 2) : NULL;
  if (R) {
    for (size_t i = 0; i < old->n; i++) {
      uintptr_t a = old->r[2 * i], b = old->r[2 * i + 1];
      if (b <= lo || a >= hi) {
        ranges_push(R, a, b);
        continue;
      }
      if (a < lo) ranges_push(R, a, lo);
      if (b > hi) ranges_push(R, hi, b);
    }
    ranges_publish(set, R);
  }
  pthread_mutex_unlock(&set->mu);
}

static int cmp_pair(const void *a, const void *b) {
  const uintptr_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

void qv_ranges_rebuild(qv_rangeset *set, size_t n, void (*fill)(uintptr_t *pairs, void *arg), void *arg) {
  pthread_mutex_lock(&set->mu);
  qv_ranges *R = ranges_slot(set, n);
  if (R) {
    fill(R->r, arg);
    qsort(R->r, n, 2 * sizeof(uintptr_t), cmp_pair);
    for (size_t i = 0; i < n; i++) ranges_push(R, R->r[2 * i], R->r[2 * i + 1]); /* merges in place: n <= i */
    ranges_publish(set, R);
  }
  pthread_mutex_unlock(&set->mu);
}
