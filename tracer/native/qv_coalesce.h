/* qv_coalesce.h - per-thread access runs: the state of the coalescer both tracers share.
 *
 * Why shared: both tracers turn every instrumented load and store into runs of adjacent accesses
 * (the OpenMP tracer: mapped memory and device copies; the MPI tracer: window memory and RMA
 * buffers). One coalescer (qv_coalesce.inc, included by qv_access.c and mpi/qv_mpi_access.c, in
 * the style of compiler-rt's sanitizer_common_interceptors.inc) keeps their run shapes alike:
 * contiguous and strided runs, interleaved streams ("families"), call-site caches. What differs
 * (which accesses are watched, what a run becomes in the log, which drop rules hold) are hooks
 * each tracer defines before including it.
 */
#ifndef QV_COALESCE_H
#define QV_COALESCE_H

#include <stdatomic.h>
#include <stdint.h>

#include "qv_entry.h"
#include "qv_rangeset.h"

/* Pending runs per thread: at most QV_RUN_GENERAL ordinary ones, the other slots hold the
 * interleaved streams of one access split from a strided run (a "family"). */
#define QV_RUN_SLOTS 48
#define QV_RUN_GENERAL 24
#define QV_RUN_HASH_BITS 8
#define QV_CHAIN_MAX 24
typedef uint64_t qv_slots; /* a set of run slots, bit i = runs[i] (QV_RUN_SLOTS <= 64) */
#define QV_SLOTS_ALL (QV_RUN_SLOTS >= 64 ? ~(qv_slots)0 : ((qv_slots)1 << QV_RUN_SLOTS) - 1)
_Static_assert(QV_RUN_SLOTS <= 64 && QV_RUN_GENERAL < QV_RUN_SLOTS, "run slots are bits of a qv_slots");

/* A call site's cache, in the program's thread-local storage (pass/quiver_range.cpp makes one per
 * call site in a loop): an access of the site at `next` whose end is at most `lim` the program
 * records itself, without a call: next = end + step. step 0: it belongs to the run the site fed
 * last (contiguous); else to the next run of a chain of family members (qv_coalesce.inc).
 * A QV_DESC_MAYBE site (a conditional access) instead takes an access at most `step` bytes past
 * `next` whose offset from `base` is a whole number of accesses: slot k = offset / width,
 * bits[k / 64 % QV_MASK_WORDS] |= 1 << k % 64, next = end (step 0: contiguous; else the masked run the
 * site fed last, bits its mask). */
typedef struct qv_site {
  uintptr_t next, lim, step, base, bits[QV_MASK_WORDS];
} qv_site;

typedef struct qv_run {
  uintptr_t lo, hi; /* [lo, hi): the whole span (tail included) */
  /* stride 0: one contiguous block [lo, hi). Else `blocks` complete blocks [lo + i*stride, + bsize)
   * and a tail [tlo, thi) (empty when equal): the next block, still being filled */
  uintptr_t stride, bsize, tlo, thi;
  uint64_t blocks;
  uint64_t recip;   /* ceil(2^64 / stride): block index of an offset below 2^32 by one multiply */
  uintptr_t phase;  /* family members: lo mod the family stride */
  uintptr_t lim;    /* no other pending run touches [where the run continues, lim) ... */
  int32_t lim_ok;   /* ... when set (cleared when a run's bytes may have entered the window) */
  uintptr_t pc;
  int64_t t0;
  uint64_t seq;     /* start order among this thread's runs (0 = slot empty) */
  int32_t write;
  int32_t width;    /* bytes of each single access in the run; 0 = mixed or a hoisted range */
  int32_t succ;     /* 1 + slot of the run that took the next access of the kind last time (0 none) */
  int32_t ranged;   /* started by a range (width 0: a hoisted loop, mem*): grows with another PC's
                       accesses only when they are ranges too (a range call sits in a loop's
                       preheader, near code that is not that loop's body) */
  int32_t cond;     /* started by a single access its loop skips on some iterations (QV_DESC_MAYBE) */
  uintptr_t pitch;  /* bytes from one slot of a masked run to the next: width, or its access's
                       QV_DESC_PITCH (a field of an array of structs; such a run only ever takes its slots) */
  qv_site *site;    /* the call site that grows it without calls (NULL none) */
  uintptr_t site_ov;/* bytes each access of that site rereads of the one before (`f[i] + f[i + 1]` as one
                       load per i): its next access starts this far before the run's end */
  uint64_t mask;    /* 0, or a masked run (qv_coalesce.inc): slot i = [lo + i*width, + width) was
                       accessed when bit i of word i / 64 is set (mask: word 0, whose bit 0, the run's
                       first slot, is always set; mask_hi: words 1..); hi is the end of the last such slot */
  uint64_t mask_hi[QV_MASK_WORDS - 1];
} qv_run;

/* One thread's coalescer (in the tracer's initial-exec TLS block). */
typedef struct qv_coal {
  int32_t strided;        /* the OpenMP tracer: device side of a kernel that is not nowait */
  int32_t took_slot;      /* the run that took the current access (-1: none, or dropped) */
  uintptr_t front;        /* bytes of the current access's front a run held and dropped (access()) */
  uint64_t run_seq;
  uint64_t epoch;         /* bumped when a run's window is taken away (windows_cut) */
  /* access fast paths, per kind (0 read, 1 write) */
  uintptr_t skip_lo[2], skip_hi[2]; /* bytes of a pending run that drops such an access there */
  int32_t skip_slot[2];   /* that run's slot */
  uintptr_t gnext[2];     /* where the run that took the last access of the kind continues (0 none) */
  int32_t hot[2];         /* its slot */
  uintptr_t pnext[2];     /* where the run that came after it last time continues (0 none) */
  int32_t pslot[2];       /* its slot */
  qv_slots occ;           /* occupied run slots */
  qv_slots fam;           /* slots of the family: runs of one access with pairwise disjoint phases */
  qv_slots attached;      /* slots of runs a call site grows (qv_run.site) */
  /* the chain of family members a call site appends to (chain_site NULL: none): member
   * chain_slot[j] takes the access at chain_first + j * chain_step (chain_bytes bytes) */
  qv_site *chain_site;
  uintptr_t chain_first, chain_step, chain_bytes;
  int32_t chain_len;
  int8_t chain_slot[QV_CHAIN_MAX];
  /* the last chain, for the next round (lbm: the next cell) when nothing else changed */
  qv_site *chain_last_site;
  int32_t chain_head, chain_full;
  uintptr_t chain_head_at;
  intptr_t chain_room;    /* how much further every member's block may move and stay in its window */
  uint64_t chain_epoch, chain_seq, chain_emits;
  uint64_t emits;         /* runs emitted so far (a chain's members are still pending while unchanged) */
  uintptr_t fam_pc, fam_stride, fam_bsize;
  int32_t fam_write;
  uintptr_t fam_lo, fam_hi;   /* hull of the family's runs (never shrinks until it is emitted) */
  /* per kind (0 read, 1 write): hull of the runs written out while a run that started before them
   * was still pending, and the latest start among them: such an older run may not grow into it
   * (its time would put the new bytes before those runs' accesses) when one of the two writes;
   * ghost_gen: one of them was not a member of the current family (else the members, whose phases
   * never meet, need not look) */
  uintptr_t ghost_lo[2], ghost_hi[2];
  uint64_t ghost_seq[2];
  int32_t ghost_gen[2];
  uint8_t next[1 << QV_RUN_HASH_BITS]; /* 1 + slot of the run that continues at an address (by hash), 0 none */
  /* filter cache: [flo, fhi) needs no lookup while fgen is the watched set's generation */
  uintptr_t flo, fhi;
  uint64_t fgen;
  int32_t fkeep;          /* 1: accesses there are kept, 0: dropped */
  qv_run runs[QV_RUN_SLOTS];
} qv_coal;

static inline void qv_filter_cache(qv_coal *t, uint64_t gen, uintptr_t lo, uintptr_t hi, int keep) {
  t->flo = lo;
  t->fhi = hi;
  t->fkeep = keep;
  t->fgen = gen;
}

/* Whether [a, a+n) touches a range of `set`; caches the range a lies in, or the gap between two. */
static inline int qv_set_keep_slow(qv_coal *t, qv_rangeset *set, uintptr_t a, uintptr_t n) {
  uint64_t gen = atomic_load_explicit(&set->gen, memory_order_acquire); /* before the array */
  const qv_ranges *R = atomic_load_explicit(&set->cur, memory_order_acquire);
  if (!R || !R->n) {
    qv_filter_cache(t, gen, 0, UINTPTR_MAX, 0);
    return 0;
  }
  size_t lo = 0, hi = R->n;
  while (lo < hi) { /* first range whose end is above a */
    size_t m = (lo + hi) >> 1;
    if (R->r[2 * m + 1] <= a) lo = m + 1; else hi = m;
  }
  if (lo < R->n && R->r[2 * lo] <= a) { /* inside range lo */
    qv_filter_cache(t, gen, R->r[2 * lo], R->r[2 * lo + 1], 1);
    return 1;
  }
  uintptr_t gap_lo = lo ? R->r[2 * lo - 1] : 0, gap_hi = lo < R->n ? R->r[2 * lo] : UINTPTR_MAX;
  qv_filter_cache(t, gen, gap_lo, gap_hi, 0);
  return a + n > gap_hi; /* reaches into the next range */
}

#endif
