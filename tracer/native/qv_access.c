/* qv_access.c - memory accesses from -fsanitize-coverage=trace-loads,trace-stores and the
 * `trace cc` pass plugin (pass/quiver_range.cpp).
 *
 * Why this shape: these callbacks run for every load/store of host and device
 * code, so they take no lock and allocate nothing, and the common cases cost a
 * few compares.
 *  - host side: only accesses to memory that has been mapped are kept; the
 *    mapped host ranges are a sorted array published through an atomic pointer
 *    (writers copy-on-write under a mutex, readers binary-search); each thread
 *    caches the range or gap it last looked up;
 *  - device side: everything except the kernel threads' own stacks;
 *  - adjacent same-kind accesses from one PC are coalesced into runs, several
 *    runs per thread at once, found by the address each run continues at (a
 *    small hash). A run is stamped with its start time, so a run may only grow
 *    while no later-started run of the thread holds a conflicting access to the
 *    same bytes: the per-byte read/write order of the log then matches what the
 *    thread really did;
 *  - an access to bytes the thread itself wrote in a pending run is dropped
 *    (`c[i] += ...` in an inner loop at -O0 costs one run, not two per iteration);
 *  - one access whose successive executions interleave several streams (a
 *    scatter `dst[(c + 7*q) * Q + q]` over q inside a loop over c) becomes one
 *    run per stream (a "family"), not one strided run per outer iteration.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "qv_omp_int.h"
#include "qv_rangeset.h"

__thread qv_tls qv_t __attribute__((tls_model("initial-exec"))) = {.dev = -1, .slot_idx = -1};
int qv_rec;

/* Whether the skip intervals are published to the program (__quiver_skip): not when the MPI
 * tracer is loaded too, since it sees every access first (window memory) and passes the rest on. */
static int g_publish_skip;

void qv_access_init(void) { g_publish_skip = !dlsym(RTLD_DEFAULT, "qvm_access_init"); }

#define QV_LIKELY(x) __builtin_expect(!!(x), 1)
#define QV_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- mapped host ranges (qv_rangeset.h) ---- */

static qv_rangeset g_host = QV_RANGESET_INIT; /* mapped host memory */
static qv_rangeset g_dev = QV_RANGESET_INIT;  /* live device copies */

void qv_track_host(uintptr_t lo, uintptr_t hi) { qv_ranges_add(&g_host, lo, hi); }
void qv_untrack_host(uintptr_t lo, uintptr_t hi) { qv_ranges_remove(&g_host, lo, hi); }
void qv_track_device(uintptr_t lo, uintptr_t hi) { qv_ranges_add(&g_dev, lo, hi); }
void qv_untrack_device(uintptr_t lo, uintptr_t hi) { qv_ranges_remove(&g_dev, lo, hi); }

/* ---- kernel stacks (device side) ---- */

#define QV_KSTK 4096
static _Atomic uintptr_t g_kstk[QV_KSTK][2];
static _Atomic int g_kstk_n;
static _Atomic uint64_t g_kstk_gen = 1; /* bumped at every change of g_kstk (filter caches compare it) */

static uintptr_t stack_base_lo(qv_tls *t) {
  if (!t->stk_base_lo) {
    pthread_attr_t attr;
    t->in_tool++;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void *addr;
      size_t size;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) t->stk_base_lo = (uintptr_t)addr;
      pthread_attr_destroy(&attr);
    }
    t->in_tool--;
    if (!t->stk_base_lo) t->stk_base_lo = (uintptr_t)__builtin_frame_address(0) - (8u << 20);
  }
  return t->stk_base_lo;
}

void qv_device_enter(qv_tls *t, int32_t dev, int64_t construct, uintptr_t frame, int strided) {
  qv_runs_flush(t);
  t->dev = dev;
  t->strided = strided;
  t->construct = construct;
  t->stk_lo = stack_base_lo(t);
  t->stk_hi = frame;
  t->fgen = 0; /* the filter cache was the host side's */
  if (t->slot_idx < 0) {
    int tid = qv_thread_id();
    if (tid >= 0 && tid < QV_KSTK) {
      t->slot_idx = tid;
      int n = atomic_load(&g_kstk_n);
      while (n < tid + 1 && !atomic_compare_exchange_weak(&g_kstk_n, &n, tid + 1)) {
      }
    }
  }
  if (t->slot_idx >= 0) {
    atomic_store_explicit(&g_kstk[t->slot_idx][0], t->stk_lo, memory_order_relaxed);
    atomic_store_explicit(&g_kstk[t->slot_idx][1], t->stk_hi, memory_order_release);
    atomic_fetch_add_explicit(&g_kstk_gen, 1, memory_order_release);
  }
}

void qv_device_leave(qv_tls *t) {
  qv_runs_flush(t);
  t->dev = -1;
  t->strided = 0;
  t->construct = -1;
  t->stk_lo = t->stk_hi = 0;
  t->fgen = 0;
  if (t->slot_idx >= 0) {
    atomic_store_explicit(&g_kstk[t->slot_idx][1], 0, memory_order_release);
    atomic_fetch_add_explicit(&g_kstk_gen, 1, memory_order_release);
  }
}

/* ---- which accesses are kept ---- */

static inline void filter_cache(qv_tls *t, uint64_t gen, uintptr_t lo, uintptr_t hi, int keep) {
  t->flo = lo;
  t->fhi = hi;
  t->fkeep = keep;
  t->fgen = gen;
}

/* Host side: whether [a, a+n) touches mapped memory. Caches the mapped range a lies in, or the
 * gap between two ranges. */
static int __attribute__((noinline)) host_keep_slow(qv_tls *t, uintptr_t a, uintptr_t n) {
  uint64_t gen = atomic_load_explicit(&g_host.gen, memory_order_acquire); /* before the array */
  const qv_ranges *R = atomic_load_explicit(&g_host.cur, memory_order_acquire);
  if (!R || !R->n) {
    filter_cache(t, gen, 0, UINTPTR_MAX, 0);
    return 0;
  }
  size_t lo = 0, hi = R->n;
  while (lo < hi) { /* first range whose end is above a */
    size_t m = (lo + hi) >> 1;
    if (R->r[2 * m + 1] <= a) lo = m + 1; else hi = m;
  }
  if (lo < R->n && R->r[2 * lo] <= a) { /* inside range lo */
    filter_cache(t, gen, R->r[2 * lo], R->r[2 * lo + 1], 1);
    return 1;
  }
  uintptr_t gap_lo = lo ? R->r[2 * lo - 1] : 0, gap_hi = lo < R->n ? R->r[2 * lo] : UINTPTR_MAX;
  filter_cache(t, gen, gap_lo, gap_hi, 0);
  return a + n > gap_hi; /* reaches into the next range */
}

/* Device side, outside the thread's own stack: dropped when on another kernel thread's stack
 * (shared loop bounds ...) unless a live device copy is there. Caches the gap between stacks. */
static int __attribute__((noinline)) dev_keep_slow(qv_tls *t, uintptr_t a, uintptr_t n) {
  uint64_t gen = atomic_load_explicit(&g_kstk_gen, memory_order_acquire);
  if (a >= t->stk_lo && a < t->stk_hi) { /* the kernel's own locals */
    filter_cache(t, gen, t->stk_lo, t->stk_hi, 0);
    return 0;
  }
  uintptr_t gap_lo = 0, gap_hi = UINTPTR_MAX;
  int k = atomic_load_explicit(&g_kstk_n, memory_order_relaxed);
  for (int i = 0; i < k; i++) {
    uintptr_t hi = atomic_load_explicit(&g_kstk[i][1], memory_order_acquire);
    if (!hi) continue;
    uintptr_t lo = atomic_load_explicit(&g_kstk[i][0], memory_order_relaxed);
    if (a < hi && a >= lo) return qv_in_ranges(&g_dev, a, n);
    if (hi <= a && hi > gap_lo) gap_lo = hi;
    if (lo > a && lo < gap_hi) gap_hi = lo;
  }
  if (t->stk_hi <= a && t->stk_hi > gap_lo) gap_lo = t->stk_hi;
  if (t->stk_lo > a && t->stk_lo < gap_hi) gap_hi = t->stk_lo;
  filter_cache(t, gen, gap_lo, gap_hi, 1);
  return 1;
}

static inline int keep(qv_tls *t, uintptr_t a, uintptr_t n) {
  int host = t->dev < 0;
  uint64_t gen = atomic_load_explicit(host ? &g_host.gen : &g_kstk_gen, memory_order_acquire);
  if (QV_LIKELY(a >= t->flo && a + n <= t->fhi && t->fgen == gen)) return t->fkeep;
  return host ? host_keep_slow(t, a, n) : dev_keep_slow(t, a, n);
}


/* ---- runs ---- */

/* Code addresses this close are one loop body (unrolled or vectorised copies of one access). */
#define QV_NEAR_PC 512
/* run_seq advances by this per new run: the runs split from one take the numbers in between */
#define QV_SEQ_STEP 32
#define QV_FAMILY_MAX (QV_RUN_SLOTS - QV_RUN_GENERAL)

static inline uint32_t bit(int i) { return 1u << i; }
static inline int slot_of(const qv_tls *t, const qv_run *r) { return (int)(r - t->runs); }

/* floor(x / stride) without a division for offsets below 4 GiB */
static inline uint64_t block_of(const qv_run *r, uintptr_t x) {
  if (QV_LIKELY(!(x >> 32))) return (uint64_t)(((unsigned __int128)r->recip * x) >> 64);
  return x / r->stride;
}

/* The address a run continues at: after its last byte, or its next block (or tail) when strided. */
static inline uintptr_t run_next(const qv_run *r) {
  return !r->stride ? r->hi : r->thi > r->tlo ? r->thi : r->tlo;
}

static inline unsigned next_hash(uintptr_t a, int w) {
  return (unsigned)((((uint64_t)a ^ ((uint64_t)w << 63)) * 0x9E3779B97F4A7C15ull) >> (64 - QV_RUN_HASH_BITS));
}

static inline void next_put(qv_tls *t, const qv_run *r) {
  t->next[next_hash(run_next(r), r->write)] = (uint8_t)(slot_of(t, r) + 1);
}

static inline void emit_one(qv_tls *t, const qv_run *r, uintptr_t lo, uintptr_t size, uintptr_t stride,
                            uint64_t blocks) {
  qv_event_t e = QV_EVENT_INIT;
  e.time_ns = r->t0;
  e.kind = QV_K_ACCESS;
  e.addr = lo;
  e.size = size;
  if (blocks > 1) { /* FORMAT.md: a strided run */
    e.addr2 = stride;
    e.aux2 = (int64_t)blocks;
  }
  e.op = r->write;
  e.aux = r->width;
  e.device = t->dev;
  e.id = t->dev >= 0 ? t->construct : -1;
  e.pc = r->pc;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

/* ---- call-site caches (qv_site): the program grows a run itself ----
 * A contiguous ordinary run a call site in a loop fed last is handed to the site: its next byte
 * and the end of its window (run_window, within the filter cache's kept range). The program then
 * appends the site's accesses at `next` up to `lim` itself; that is exactly what the fast path of
 * access() would do (same pc, no other run there, bytes kept). Every entry into the tracer first
 * pulls what the sites appended; a run that is emitted, changes shape, or whose window another
 * run's bytes enter (windows_cut) is taken back (lim = 0). */

static void skip_set(qv_tls *t, int w, uintptr_t lo, uintptr_t hi);

static inline void tail_add(qv_run *r, uintptr_t a, uintptr_t e);

static void __attribute__((noinline)) pulled(qv_tls *t, qv_run *r, uintptr_t nx) {
  int i = slot_of(t, r);
  if (r->stride) { /* a strided run's last row, up to its end (site_take) */
    tail_add(r, r->thi, nx);
    if (t->hot[r->write] == i) t->gnext[r->write] = run_next(r);
    for (int w = 0; w < 2; w++)
      if (t->skip_slot[w] == i && t->skip_hi[w] > t->skip_lo[w]) {
        uintptr_t lo = r->thi > r->tlo ? r->tlo : r->lo + (r->blocks - 1) * r->stride;
        skip_set(t, w, lo, r->thi > r->tlo ? r->thi : lo + r->bsize);
      }
    return;
  }
  r->hi = nx;
  if (t->hot[r->write] == i) t->gnext[r->write] = nx;
  for (int w = 0; w < 2; w++)
    if (t->skip_slot[w] == i && t->skip_hi[w] > t->skip_lo[w]) skip_set(t, w, r->lo, nx);
}

static void chain_pull(qv_tls *t);

static inline void pull(qv_tls *t) {
  if (t->chain_site) chain_pull(t);
  for (uint32_t m = t->attached; m; m &= m - 1) {
    qv_run *r = &t->runs[__builtin_ctz(m)];
    uintptr_t nx = r->site->next;
    if (QV_UNLIKELY(nx > (r->stride ? r->thi : r->hi))) pulled(t, r, nx);
  }
}

/* Take run r back from its site (after pull). */
static inline void detach(qv_tls *t, qv_run *r) {
  r->site->lim = 0;
  r->site = NULL;
  t->attached &= ~bit(slot_of(t, r));
}


/* The bytes of a pending run where accesses of kind w are dropped (run_add_slow's first rule). */
static void skip_set(qv_tls *t, int w, uintptr_t lo, uintptr_t hi) {
  t->skip_lo[w] = lo;
  t->skip_hi[w] = hi;
  if (g_publish_skip) {
    __quiver_skip[2 * w] = lo;
    __quiver_skip[2 * w + 1] = hi;
  }
}

/* Write the run and free its slot. A run written out while one that started before it is still
 * pending (replaced, evicted, restarted; not at a flush) leaves its bytes in the ghost: the older
 * run may still reach them, and growing over them would stamp accesses made after this run's with
 * a time before it (a read of bytes this run wrote would come before the write in the log). */
static void run_emit(qv_tls *t, qv_run *r) {
  int i = slot_of(t, r);
  t->emits++;
  int member = (t->fam & bit(i)) != 0;
  for (uint32_t m = t->occ & ~bit(i) & (member ? ~t->fam : ~0u); m; m &= m - 1) {
    if (t->runs[__builtin_ctz(m)].seq > r->seq) continue;
    int w = r->write;
    if (t->ghost_hi[w] <= t->ghost_lo[w]) t->ghost_lo[w] = r->lo, t->ghost_hi[w] = r->hi;
    if (r->lo < t->ghost_lo[w]) t->ghost_lo[w] = r->lo;
    if (r->hi > t->ghost_hi[w]) t->ghost_hi[w] = r->hi;
    if (r->seq > t->ghost_seq[w]) t->ghost_seq[w] = r->seq;
    t->ghost_gen[w] |= !member;
    break;
  }
  if (r->site) detach(t, r);
  r->seq = 0;
  t->occ &= ~bit(i);
  t->fam &= ~bit(i);
  for (int w = 0; w < 2; w++) {
    if (t->hot[w] == i) t->gnext[w] = 0;
    if (t->skip_slot[w] == i) skip_set(t, w, 0, 0);
  }
  t->in_tool++;
  if (!r->stride) {
    emit_one(t, r, r->lo, r->hi - r->lo, 0, 1);
  } else { /* the complete blocks, then the partial one (at the run's time, like every byte of it) */
    emit_one(t, r, r->lo, r->bsize, r->stride, r->blocks);
    if (r->thi > r->tlo) emit_one(t, r, r->tlo, r->thi - r->tlo, 0, 1);
  }
  t->in_tool--;
}

static inline uintptr_t run_next(const qv_run *r);

/* Bytes [lo, hi) now belong to run except (a new run, or its new shape): every other run whose
 * window they enter loses the window (recomputed when it next grows) and its call site; a
 * reused chain is rebuilt. Windows they do not enter stay valid. */
static void windows_cut(qv_tls *t, uintptr_t lo, uintptr_t hi, const qv_run *except) {
  for (uint32_t m = t->occ; m; m &= m - 1) {
    qv_run *o = &t->runs[__builtin_ctz(m)];
    if (o == except || !o->lim_ok || lo >= o->lim || hi <= run_next(o)) continue;
    o->lim_ok = 0;
    if (o->site) detach(t, o);
    t->epoch++;
  }
}

/* Emit the runs of mask m in start order. */
static void runs_emit(qv_tls *t, uint32_t m) {
  int idx[QV_RUN_SLOTS], k = 0;
  for (; m; m &= m - 1) { /* insertion sort by seq */
    int i = __builtin_ctz(m), j = k++;
    while (j > 0 && t->runs[idx[j - 1]].seq > t->runs[i].seq) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = i;
  }
  for (int j = 0; j < k; j++) run_emit(t, &t->runs[idx[j]]);
}

void qv_runs_flush(qv_tls *t) {
  if (!t->occ) return;
  pull(t);
  runs_emit(t, t->occ); /* in start order: none of them leaves a ghost */
  t->fam = 0;
  t->run_seq = 0;
  for (int w = 0; w < 2; w++) {
    t->ghost_lo[w] = t->ghost_hi[w] = 0;
    t->ghost_seq[w] = 0;
    t->ghost_gen[w] = 0;
  }
}

/* width: bytes of one access (1..16), 0 for a range or mixed block; with QV_RANGE_OF, a range of
 * accesses of that many bytes each (a hoisted loop, at every -O level: ranged, but reports keep the
 * element). */
#define QV_RANGE_OF 0x200
#define QV_ELEM(width) ((width) & 0xff)
#define QV_IS_RANGE(width) (!QV_ELEM(width) || ((width) & QV_RANGE_OF))

static inline void run_start(qv_tls *t, qv_run *r, uintptr_t a, uintptr_t n, int w, uintptr_t pc,
                             int width) {
  r->lo = a;
  r->width = QV_ELEM(width);
  r->ranged = QV_IS_RANGE(width);
  r->hi = a + n;
  r->stride = 0;
  r->blocks = 1;
  r->pc = pc;
  r->write = w;
  r->t0 = qv_stamp();
  r->seq = t->run_seq += QV_SEQ_STEP;
  r->lim_ok = 0;
  r->succ = 0;
  r->site = NULL;
  t->occ |= bit(slot_of(t, r));
  windows_cut(t, a, a + n, r);
  next_put(t, r);
}

/* Whether [a, e) touches a byte of run r. */
static inline int run_hits(const qv_run *r, uintptr_t a, uintptr_t e) {
  if (a >= r->hi || e <= r->lo) return 0;
  if (!r->stride || a <= r->lo) return 1;
  if (a < r->thi && e > r->tlo) return 1;
  uintptr_t i = block_of(r, a - r->lo), b = r->lo + i * r->stride; /* block at or before a */
  if (i < r->blocks && a < b + r->bsize) return 1;
  return i + 1 < r->blocks && e > b + r->stride;
}

/* Whether [a, e) lies inside one complete block of run r, or inside its tail. */
static inline int run_covers(const qv_run *r, uintptr_t a, uintptr_t e) {
  if (a < r->lo || e > r->hi) return 0;
  if (!r->stride) return 1;
  if (a >= r->tlo && e <= r->thi) return 1;
  uintptr_t i = block_of(r, a - r->lo);
  return i < r->blocks && (a - r->lo) - i * r->stride + (e - a) <= r->bsize;
}

/* Put [a, e) (already known to start at the next block and fit in bsize) into r's tail. */
static inline void tail_add(qv_run *r, uintptr_t a, uintptr_t e) {
  if (r->thi == r->tlo) r->tlo = r->thi = a;
  if (e > r->thi) r->thi = e;
  if (r->thi - r->tlo == r->bsize) { /* the block is complete */
    r->blocks++;
    r->tlo = r->thi = r->lo + r->blocks * r->stride;
    r->hi = r->lo + (r->blocks - 1) * r->stride + r->bsize;
  } else {
    r->hi = r->thi;
  }
}

enum { GROW = 1, IN_TAIL, SECOND_BLOCK };

/* Run r took (or, drop: dropped) an access of kind w: it is the first candidate for the next one
 * of that kind. The skip interval moves to it when it dropped the access, or grew inside it; the
 * interval of a run that drops accesses stays while other runs grow (cg's gather `p[col[k]]`
 * re-reads p between the growths of col, val and q). */
static inline __attribute__((always_inline)) void took(qv_tls *t, const qv_run *r, int w, int drop) {
  int i = slot_of(t, r);
  t->took_slot = drop ? -1 : i;
  if (r->write == w) {
    if (t->hot[w] != i) {
      qv_run *h = &t->runs[t->hot[w]];
      if (h->seq && h->write == w && h->succ != i + 1) {
        /* streams taking turns (cg's rowp, col, val, p; lbm's family) are found through succ; when
         * the turn changes, the run found by gnext so far goes back to being found by its hash
         * (entries of runs that grew while found by succ may be stale: run_add_slow finds them) */
        next_put(t, h);
        h->succ = i + 1;
      }
      t->hot[w] = i;
      const qv_run *p = &t->runs[r->succ ? r->succ - 1 : i];
      t->pslot[w] = r->succ - 1;
      t->pnext[w] = r->succ && p->seq && p->write == w ? run_next(p) : 0;
    }
    t->gnext[w] = run_next(r);
  }
  if ((r->write || (!w && t->strided)) && /* drops accesses of kind w to bytes it holds (run_add_slow) */
      (drop || t->skip_slot[w] == i || t->skip_lo[w] == t->skip_hi[w])) {
    t->skip_slot[w] = i;
    if (!r->stride) {
      skip_set(t, w, r->lo, r->hi);
    } else if (r->thi > r->tlo) {
      skip_set(t, w, r->tlo, r->thi);
    } else {
      uintptr_t lo = r->lo + (r->blocks - 1) * r->stride;
      skip_set(t, w, lo, lo + r->bsize);
    }
  }
}

/* ---- families: one access's interleaved streams ----
 * A strided run of one PC whose next access lands in its first gap (`dst[(c + 7*q) * Q + q]`: the
 * run of q = 0..18 for cell c, then cell c + 1 one element further on) is split into one run per
 * block; each then grows on its own with the outer stride. Members have the same PC, kind, block
 * size and stride, and pairwise disjoint phases (lo mod stride): a member's next block can hit no
 * other member, so the conflict scans skip them. A member that grows any other way leaves. */

static inline int phases_apart(uintptr_t p, uintptr_t q, uintptr_t stride, uintptr_t bsize) {
  uintptr_t d = p >= q ? p - q : p + stride - q; /* (p - q) mod stride */
  return d >= bsize && d <= stride - bsize;
}

/* Member s just became strided: it stays a member if its stride is the family's and its blocks
 * cannot meet any other member's. */
static void family_join(qv_tls *t, qv_run *s) {
  int i = slot_of(t, s);
  if (!t->fam_stride) t->fam_stride = s->stride;
  uintptr_t S = t->fam_stride;
  if (s->stride != S || s->bsize != t->fam_bsize) {
    t->fam &= ~bit(i);
    return;
  }
  s->phase = s->lo % S;
  for (uint32_t m = t->fam & ~bit(i); m; m &= m - 1) {
    const qv_run *o = &t->runs[__builtin_ctz(m)];
    if (!phases_apart(s->phase, o->stride ? o->phase : o->lo % S, S, t->fam_bsize)) {
      t->fam &= ~bit(i);
      return;
    }
  }
}

/* Split strided run r (no tail, at most QV_FAMILY_MAX blocks) into one run per block; 0 when the
 * slots not held by ordinary runs are too few. */
static int family_split(qv_tls *t, qv_run *r) {
  if ((uint64_t)__builtin_popcount(~(t->occ & ~t->fam)) < r->blocks - 1) return 0;
  if (r->site) detach(t, r);
  if (t->fam) runs_emit(t, t->fam); /* one family at a time */
  qv_run R = *r;
  t->gnext[0] = t->gnext[1] = 0;
  skip_set(t, 0, 0, 0);
  skip_set(t, 1, 0, 0);
  t->fam_pc = R.pc;
  t->fam_write = R.write;
  t->fam_bsize = R.bsize;
  t->fam_stride = 0; /* set by the first member that becomes strided */
  t->fam_lo = R.lo;
  t->fam_hi = R.hi;
  t->ghost_gen[0] = t->ghost_gen[1] = 1; /* the old family's bytes are foreign to the new one */
  uint32_t free = ~t->occ; /* (the members hold R's bytes: no other run's window changes) */
  for (uint64_t j = 0; j < R.blocks; j++) {
    qv_run *m = r;
    if (j) {
      m = &t->runs[__builtin_ctz(free)];
      free &= free - 1;
    }
    m->lo = R.lo + j * R.stride;
    m->hi = m->lo + R.bsize;
    m->stride = 0;
    m->blocks = 1;
    m->pc = R.pc;
    m->write = R.write;
    m->width = R.width;
    m->ranged = R.ranged;
    m->t0 = R.t0;
    m->seq = R.seq + j; /* block order: the order they were written in */
    m->lim_ok = 0;
    m->succ = 0;
    m->site = NULL;
    t->occ |= bit(slot_of(t, m));
    t->fam |= bit(slot_of(t, m));
    next_put(t, m);
  }
  return 1;
}

/* A slot for a new run: its old run of the same access, a free slot while fewer than
 * QV_RUN_GENERAL ordinary runs are pending, else the oldest ordinary run (or family member). */
static qv_run *take_slot(qv_tls *t, qv_run *same_pc) {
  if (same_pc) {
    run_emit(t, same_pc);
    return same_pc;
  }
  uint32_t general = t->occ & ~t->fam;
  if (__builtin_popcount(general) < QV_RUN_GENERAL && ~t->occ) return &t->runs[__builtin_ctz(~t->occ)];
  uint32_t m = general ? general : t->fam;
  qv_run *v = NULL;
  for (; m; m &= m - 1) {
    qv_run *r = &t->runs[__builtin_ctz(m)];
    if (!v || r->seq < v->seq) v = r;
  }
  run_emit(t, v);
  return v;
}

/* Where the window above the address run s continues at ends: no other pending run (no other
 * family member, for a member with its stride) touches it. Growing s inside it needs no scan, and
 * changes no other run's window. */
static uintptr_t run_window(const qv_tls *t, const qv_run *s) {
  int si = slot_of(t, s);
  uintptr_t nx = run_next(s), lim = UINTPTR_MAX;
  uint32_t m = t->occ & ~bit(si);
  if (t->fam & bit(si)) {
    if (!s->stride) return nx; /* not yet strided: its next access decides */
    m &= ~t->fam;
  }
  for (; m; m &= m - 1) {
    const qv_run *o = &t->runs[__builtin_ctz(m)];
    if (o->hi <= nx) continue;
    uintptr_t l = o->lo > nx ? o->lo : nx;
    if (l < lim) lim = l;
  }
  for (int w = 0; w < 2; w++) /* bytes of runs written out after s started that s may not meet */
    if ((w || s->write) && s->seq < t->ghost_seq[w] && t->ghost_hi[w] > nx &&
        (t->ghost_gen[w] || !(t->fam & bit(si)))) {
      uintptr_t l = t->ghost_lo[w] > nx ? t->ghost_lo[w] : nx;
      if (l < lim) lim = l;
    }
  return lim;
}

/* Grow run s by [a, e) (how: GROW, IN_TAIL or SECOND_BLOCK) unless another pending run covers the
 * bytes (dropped) or a later-started one holds a conflicting access to them (s is written and a
 * new run starts there). */
static void __attribute__((noinline)) run_grow(qv_tls *t, qv_run *s, int how, uintptr_t a, uintptr_t n, int w, uintptr_t pc,
                            int width) {
  uintptr_t e = a + n;
  int si = slot_of(t, s);
  uint32_t m = t->occ & ~bit(si);
  if (t->fam) {
    if (((t->fam & bit(si)) && s->stride && how == IN_TAIL) || e <= t->fam_lo || a >= t->fam_hi)
      m &= ~t->fam; /* s's phase, or away from the family */
  }
  int conflict = 0;
  for (; m; m &= m - 1) {
    int i = __builtin_ctz(m);
    const qv_run *o = &t->runs[i];
    if (a >= o->hi || e <= o->lo) continue;
    if ((o->write || (!w && t->strided)) && run_covers(o, a, e)) {
      took(t, o, w, 1);
      return;
    }
    if (o->seq > s->seq && (o->write || w) && run_hits(o, a, e)) conflict = 1;
  }
  for (int g = 0; g < 2; g++)
    if ((g || w) && s->seq < t->ghost_seq[g] && a < t->ghost_hi[g] && e > t->ghost_lo[g] &&
        (t->ghost_gen[g] || !(t->fam & bit(si))))
      conflict = 1;
  if (QV_UNLIKELY(conflict)) {
    run_emit(t, s);
    run_start(t, s, a, n, w, pc, width);
    took(t, s, w, 0);
    return;
  }
  if (s->site) detach(t, s);
  if (how == GROW) {
    t->fam &= ~bit(si); /* a member growing past its block leaves the family */
    if (a < s->lo) s->lo = a;
    if (e > s->hi) s->hi = e;
  } else {
    if (how == SECOND_BLOCK) {
      s->bsize = s->hi - s->lo;
      s->stride = a - s->lo;
      s->recip = UINT64_MAX / s->stride + 1;
      s->blocks = 1;
      s->tlo = s->thi = a;
    }
    tail_add(s, a, e);
    if (how == SECOND_BLOCK && (t->fam & bit(si))) family_join(t, s);
  }
  if (s->width != QV_ELEM(width)) s->width = 0;
  if (t->fam & bit(si)) {
    if (s->hi > t->fam_hi) t->fam_hi = s->hi;
  }
  s->lim_ok = 0;
  windows_cut(t, s->lo, s->hi, s);
  next_put(t, s);
  took(t, s, w, 0);
}

/* No run continues exactly at a: look at every run that a touches or that has a's PC. */
static void __attribute__((noinline)) run_add_slow(qv_tls *t, uintptr_t a, uintptr_t n, int w, uintptr_t pc,
                                                   int width, int indexed) {
  uintptr_t e = a + n;
  int split_done = 0;
again:;
  qv_run *s = NULL, *second = NULL, *same_pc = NULL, *split = NULL;
  int how = 0;
  uint32_t m = t->occ;
  if (t->fam && pc != t->fam_pc && (e < t->fam_lo || a > t->fam_hi)) m &= ~t->fam;
  for (; m; m &= m - 1) {
    int i = __builtin_ctz(m);
    qv_run *r = &t->runs[i];
    int near = a <= r->hi && e >= r->lo; /* overlapping or adjacent */
    if (!near && r->pc != pc) continue;
    /* bytes this thread wrote in a pending run: reading or rewriting them changes no validity
     * state and races with nothing the earlier write does not race with. On the device side of a
     * (not nowait) kernel, bytes it read in a pending run: nothing but a data op or a host write
     * can invalidate a device copy while the kernel runs, and either would end the kernel first. */
    if (near && (r->write || (!w && t->strided)) && run_covers(r, a, e)) {
      took(t, r, w, 1);
      return;
    }
    if (r->write != w) continue;
    uintptr_t d = pc > r->pc ? pc - r->pc : r->pc - pc;
    if (d && r->ranged != QV_IS_RANGE(width)) d = QV_NEAR_PC; /* a range and a single access: not one loop body */
    if (!r->stride) {
      if (near && d < QV_NEAR_PC) { /* adjacent or overlapping */
        if (!s) s = r, how = GROW;
      } else if (!indexed && r->pc == pc && t->strided && a > r->hi &&
                 (n == r->hi - r->lo || (!QV_IS_RANGE(width) && n < r->hi - r->lo))) {
        /* the same code again further on: the start of a second block, whole (a hoisted range over
         * the next row) or its first element (single accesses filling the next row); the nearest */
        if (!second || r->lo > second->lo) second = r;
      }
    } else if (r->thi > r->tlo ? d < QV_NEAR_PC && a >= r->tlo && a <= r->thi && e - r->tlo <= r->bsize
                               : r->pc == pc && a == r->tlo && n <= r->bsize) {
      if (!s) s = r, how = IN_TAIL; /* fills the next block */
    } else if (!indexed && r->pc == pc && t->strided && r->thi == r->tlo && n == r->bsize && a >= r->lo + r->bsize &&
               e <= r->lo + r->stride && r->blocks <= QV_FAMILY_MAX && !(t->fam & bit(i)) &&
               !(r->seq % QV_SEQ_STEP)) {
      split = r; /* in the first gap: interleaved streams of this access */
    }
    if (!indexed && r->pc == pc && !(t->fam & bit(i))) same_pc = r;
  }
  if (!s && split && !split_done) {
    split_done = 1;
    if (family_split(t, split)) goto again;
  }
  if (!s && second) s = second, how = SECOND_BLOCK;
  if (s) {
    run_grow(t, s, how, a, n, w, pc, width);
    return;
  }
  if (!indexed && t->fam && pc == t->fam_pc && w == t->fam_write && t->fam_stride && n == t->fam_bsize) {
    /* a stream of the family starts over elsewhere (lbm's `% cells` wraps around): it replaces
     * the member of its phase, which it can never meet again */
    uintptr_t S = t->fam_stride, phase = a % S;
    for (uint32_t m = t->fam; m; m &= m - 1) {
      qv_run *o = &t->runs[__builtin_ctz(m)];
      if ((o->stride ? o->phase : o->lo % S) != phase) continue;
      run_emit(t, o);
      run_start(t, o, a, n, w, pc, width);
      t->fam |= bit(slot_of(t, o));
      took(t, o, w, 0);
      return;
    }
  }
  qv_run *v = take_slot(t, same_pc); /* a new run of the same access replaces its old one */
  run_start(t, v, a, n, w, pc, width);
  took(t, v, w, 0);
}

/* width: bytes of one access (1..16), 0 for a range of many accesses. indexed: the address comes
 * from a value the loop loaded (`p[col[k]]`): the run shapes of one affine walk per PC (a second
 * block, interleaved streams, a new run replacing the PC's old one) are not looked for, so the
 * windows a gather reads (cg: p[i-m], p[i-1..i+1], p[i+m]) each stay one run. */
static inline __attribute__((always_inline)) void access(qv_tls *t, uintptr_t a, uintptr_t n, int w,
                                                         uintptr_t pc, int width, int indexed) {
  uintptr_t e = a + n;
  if (a >= t->skip_lo[w] && e <= t->skip_hi[w]) return; /* the drop rule, for the last run used */
  if (!keep(t, a, n)) return;
  qv_run *s = &t->runs[t->hot[w]];
  if (a != t->gnext[w]) { /* not where the last run continues: the next one in turn, or the run
                             that continues there */
    if (a == t->pnext[w]) {
      s = &t->runs[t->pslot[w]];
    } else {
      int k = t->next[next_hash(a, w)];
      if (!k) goto slow;
      s = &t->runs[k - 1];
    }
    if (!s->seq || s->write != w || run_next(s) != a) goto slow;
  }
  uintptr_t d = pc > s->pc ? pc - s->pc : s->pc - pc;
  if (d && s->ranged != QV_IS_RANGE(width)) goto slow;
  int how;
  if (!s->stride) {
    if (d >= QV_NEAR_PC) goto slow;
    how = GROW;
  } else {
    if (!(s->thi > s->tlo ? d < QV_NEAR_PC && e - s->tlo <= s->bsize : s->pc == pc && n <= s->bsize)) goto slow;
    how = IN_TAIL;
  }
  if (!s->lim_ok) {
    s->lim = run_window(t, s);
    s->lim_ok = 1;
  }
  if (QV_UNLIKELY(e > s->lim)) {
    run_grow(t, s, how, a, n, w, pc, width);
    return;
  }
  if (how == GROW) { /* a is s's end: inside its window, nothing else to look at */
    s->hi = e;
    if (s->site) s->site->next = e; /* grown by another call site: the site continues after it */
  } else {
    tail_add(s, a, e);
    if (s->site) s->site->next = s->thi; /* (a completed block: past the site's limit) */
  }
  if (s->width != QV_ELEM(width)) s->width = 0;
  if ((t->fam & bit(slot_of(t, s))) && s->hi > t->fam_hi) t->fam_hi = s->hi;
  took(t, s, w, 0);
  return;
slow:
  run_add_slow(t, a, n, w, pc, width, indexed);
}

/* After an access from site c: hand the run that took it to c, only as far as the bytes are known
 * to be kept, or tell c to call. An ordinary run: a contiguous one, or a strided one whose last
 * row the access left partly filled (collapse(3): one row of single accesses after the other): the
 * site appends up to the end of that row, and the next row starts with a call. */
static void __attribute__((noinline)) site_take(qv_tls *t, qv_site *c) {
  int i = t->took_slot;
  qv_run *s = &t->runs[i];
  uintptr_t nx = s->stride ? s->thi : s->hi;
  if (s->stride && s->thi <= s->tlo) {
    c->lim = 0;
    return;
  }
  if (s->site != c) {
    for (uint32_t m = t->attached; m; m &= m - 1) { /* the run c fed before */
      qv_run *r = &t->runs[__builtin_ctz(m)];
      if (r->site == c) detach(t, r);
    }
    if (s->site) detach(t, s);
    s->site = c;
    t->attached |= bit(i);
  }
  if (!s->lim_ok) {
    s->lim = run_window(t, s);
    s->lim_ok = 1;
  }
  uintptr_t lim = s->lim;
  uint64_t gen = atomic_load_explicit(t->dev < 0 ? &g_host.gen : &g_kstk_gen, memory_order_acquire);
  if (!(t->fkeep && t->fgen == gen && nx >= t->flo && nx <= t->fhi)) lim = nx;
  else if (t->fhi < lim) lim = t->fhi;
  if (s->stride && s->tlo + s->bsize < lim) lim = s->tlo + s->bsize;
  c->next = nx;
  c->step = 0;
  c->lim = lim;
}

/* The program appended k accesses of the chain: member chain_slot[j] took the block at
 * chain_first + j * chain_step, j < k, exactly as access() would have (IN_TAIL, inside its window).
 * The chain always ends here: the site calls again for its next access. */
static void __attribute__((noinline)) chain_pull(qv_tls *t) {
  qv_site *c = t->chain_site;
  t->chain_site = NULL;
  uintptr_t nx = c->next, at = t->chain_first;
  c->lim = 0;
  c->step = 0;
  qv_run *last = NULL;
  uintptr_t bsize = t->fam_bsize, stride = t->fam_stride;
  int j = 0;
  for (; j < t->chain_len && nx != at; j++, at += t->chain_step) {
    qv_run *m = &t->runs[t->chain_slot[j]]; /* one whole block at its tail: tail_add, shorter */
    m->blocks++;
    m->hi = at + bsize;
    m->tlo = m->thi = at + stride;
    last = m;
  }
  t->chain_full = j == t->chain_len;
  if (last && last->hi > t->fam_hi) t->fam_hi = last->hi; /* (the members ascend) */
  if (last) { /* the last member is the one the next access of the kind continues (succ untouched) */
    int w = last->write, i = slot_of(t, last);
    qv_run *h = &t->runs[t->hot[w]];
    if (t->hot[w] != i && h->seq && h->write == w) next_put(t, h);
    t->hot[w] = i;
    t->gnext[w] = run_next(last);
    const qv_run *p = &t->runs[last->succ ? last->succ - 1 : i];
    t->pslot[w] = last->succ - 1;
    t->pnext[w] = last->succ && p->seq && p->write == w ? run_next(p) : 0;
  }
}

/* After family member s took an access at a from site c: the members that came after it last time
 * (succ), each continuing one step further on, with a whole block inside its window and the kept
 * range: the program appends their next accesses itself (lbm: q = 1..18 of a cell after q = 0). */
static void __attribute__((noinline)) chain_take(qv_tls *t, qv_site *c, uintptr_t a, uintptr_t n, uintptr_t pc) {
  const qv_run *s = &t->runs[t->took_slot];
  int k = 0;
  uint32_t seen = bit(t->took_slot);
  uint64_t g = atomic_load_explicit(t->dev < 0 ? &g_host.gen : &g_kstk_gen, memory_order_acquire);
  if (t->chain_last_site == c && t->chain_full && t->took_slot == t->chain_head &&
      a == t->chain_head_at + t->fam_stride && t->epoch == t->chain_epoch && t->run_seq == t->chain_seq &&
      t->emits == t->chain_emits && t->chain_room >= (intptr_t)t->fam_stride && t->fkeep && t->fgen == g &&
      a + t->chain_step >= t->flo && a + t->chain_len * t->chain_step + n <= t->fhi) {
    /* the same chain one round further: every member moved one block (fam_stride) on */
    t->chain_room -= (intptr_t)t->fam_stride;
    t->chain_head_at = a;
    t->chain_first = a + t->chain_step;
    t->chain_full = 0;
    t->chain_site = c;
    c->next = t->chain_first;
    c->step = t->chain_step - n;
    c->lim = t->chain_first + (t->chain_len - 1) * t->chain_step + n;
    return;
  }
  intptr_t room = INTPTR_MAX;
  uintptr_t step = 0, at = a;
  int kept = t->fkeep && t->fgen == g;
  for (const qv_run *m = s; k < QV_CHAIN_MAX && m->succ;) {
    int i = m->succ - 1;
    m = &t->runs[i];
    if (!m->seq || !(t->fam & bit(i)) || m->stride != t->fam_stride || m->thi != m->tlo || m->pc != pc ||
        m->bsize != n)
      break;
    uintptr_t nx = m->tlo;
    if (!k) step = nx - a;
    if (nx != at + step || nx <= at || !kept || nx < t->flo || nx + n > t->fhi || (seen & bit(i))) break;
    qv_run *mm = &t->runs[i];
    if (!mm->lim_ok) {
      mm->lim = run_window(t, mm);
      mm->lim_ok = 1;
    }
    if (nx + n > mm->lim) break;
    if ((intptr_t)(mm->lim - (nx + n)) < room) room = (intptr_t)(mm->lim - (nx + n));
    seen |= bit(i);
    t->chain_slot[k++] = (int8_t)i;
    at = nx;
  }
  if (!k) {
    c->lim = 0;
    return;
  }
  for (uint32_t m = t->attached; m; m &= m - 1) { /* a run this site fed before */
    qv_run *r = &t->runs[__builtin_ctz(m)];
    if (r->site == c) detach(t, r);
  }
  t->chain_site = c;
  t->chain_first = a + step;
  t->chain_step = step;
  t->chain_bytes = n;
  t->chain_len = k;
  t->chain_last_site = c;
  t->chain_head = t->took_slot;
  t->chain_head_at = a;
  t->chain_full = 0;
  t->chain_room = room;
  t->chain_epoch = t->epoch;
  t->chain_seq = t->run_seq;
  t->chain_emits = t->emits;
  c->next = a + step;
  c->step = step - n;
  c->lim = at + n;
}

static inline __attribute__((always_inline)) void access_at(uintptr_t a, uintptr_t n, int w, uintptr_t pc,
                                                            int width, int indexed, qv_site *c) {
  qv_tls *t = &qv_t;
  if (t->attached || t->chain_site) pull(t);
  if (!c) {
    access(t, a, n, w, pc, width, indexed);
    return;
  }
  t->took_slot = -1;
  access(t, a, n, w, pc, width, indexed);
  int i = t->took_slot;
  if (i >= 0 && !(t->fam & bit(i)))
    site_take(t, c); /* an ordinary run */
  else if (i >= 0 && t->runs[i].stride)
    chain_take(t, c, a, n, pc); /* a family member */
  else
    c->lim = 0;
}

/* Atomic accesses as synchronisation (pass/quiver_range.cpp): only the PMPI tracer records them
 * (hybrid programs, where it is loaded first); the access itself reaches the load/store callbacks. */
void __quiver_atomic(void *p, size_t n, size_t desc) {
  (void)p, (void)n, (void)desc;
}

void qv_access_range(uintptr_t a, uintptr_t n, int write, uintptr_t pc) {
  if (qv_rec && n) access_at(a, n, write, pc, 0, 0, NULL);
}

#define QV_RA ((uintptr_t)__builtin_return_address(0))
#define QV_CB(kind, n, T, w)                                                          \
  void __sanitizer_cov_##kind##n(T *p) {                                              \
    if (__builtin_expect(qv_rec, 1)) access_at((uintptr_t)p, n, w, QV_RA, n, 0, NULL);   \
  }
QV_CB(load, 1, uint8_t, 0)
QV_CB(load, 2, uint16_t, 0)
QV_CB(load, 4, uint32_t, 0)
QV_CB(load, 8, uint64_t, 0)
QV_CB(load, 16, __int128, 0)
QV_CB(store, 1, uint8_t, 1)
QV_CB(store, 2, uint16_t, 1)
QV_CB(store, 4, uint32_t, 1)
QV_CB(store, 8, uint64_t, 1)
QV_CB(store, 16, __int128, 1)

/* Ranges from the `trace cc` pass plugin (tracer/native/pass/quiver_range.cpp): every access of
 * one load or store over a whole loop, reported once before the loop; the return address
 * carries the access's debug location. Same filtering and coalescing as one access of n bytes. */
void __quiver_range_load(void *p, size_t n) {
  if (__builtin_expect(qv_rec, 1) && n) access_at((uintptr_t)p, n, 0, QV_RA, 0, 0, NULL);
}
void __quiver_range_store(void *p, size_t n) {
  if (__builtin_expect(qv_rec, 1) && n) access_at((uintptr_t)p, n, 1, QV_RA, 0, 0, NULL);
}
/* The same, for a range of `width`-byte accesses (hoisted loops): the run keeps the element width. */
void __quiver_range_load_w(void *p, size_t n, size_t width) {
  if (__builtin_expect(qv_rec, 1) && n) access_at((uintptr_t)p, n, 0, QV_RA, (int)(width & 0xff) | QV_RANGE_OF, 0, NULL);
}
void __quiver_range_store_w(void *p, size_t n, size_t width) {
  if (__builtin_expect(qv_rec, 1) && n) access_at((uintptr_t)p, n, 1, QV_RA, (int)(width & 0xff) | QV_RANGE_OF, 0, NULL);
}

#define QV_DESC_WIDTH 0xff
#define QV_DESC_INDEXED 0x100

/* Strided ranges from the pass plugin: one access of a loop nest whose rows do not touch (a stencil
 * row between halo cells, a column-major sweep), reported once before the nest: `blocks` rows of
 * `bsize` bytes, row i at p + i*stride; width: bytes of each single access when a row is one access or
 * an unrolled group of equal ones, 0 when it is a range over an inner loop. Bytes and order are those of one call per row at the same
 * PC: rows that touch are one range; on the device side of a kernel that is not nowait the first
 * row goes through access() and, when it started a run of its own, every row is kept (the filter's
 * cached range) and no other pending run that could drop a row (a write run; for reads, any run)
 * overlaps them, the rows are added at once as the run's blocks, as run_grow would add them one by
 * one (SECOND_BLOCK then IN_TAIL: the new run is the latest, so nothing conflicts with it).
 * Otherwise one access() per row. */
static void __attribute__((noinline)) strided_at(uintptr_t a, uintptr_t bsize, uintptr_t stride, uintptr_t blocks,
                                                 int w, uintptr_t pc, int width) {
  if (stride <= bsize || blocks == 1) {
    access_at(a, (blocks - 1) * stride + bsize, w, pc, width, 0, NULL);
    return;
  }
  qv_tls *t = &qv_t;
  if (t->attached || t->chain_site) pull(t);
  uintptr_t i = 0;
  if (t->strided) {
    t->took_slot = -1;
    access(t, a, bsize, w, pc, width, 0);
    i = 1;
    int k = t->took_slot;
    qv_run *s = k >= 0 ? &t->runs[k] : NULL;
    uintptr_t end = a + (blocks - 1) * stride + bsize;
    uint64_t gen = atomic_load_explicit(&g_kstk_gen, memory_order_acquire);
    if (s && s->lo == a && s->hi == a + bsize && !s->stride && !s->site && s->pc == pc && s->write == w &&
        !(t->fam & bit(k)) && t->dev >= 0 && t->fkeep && t->fgen == gen && a >= t->flo && end <= t->fhi &&
        (stride >> 32) == 0) {
      /* s is the newest run: no later-started run or ghost conflicts with it (run_grow); only a
       * pending run that would drop rows of kind w stops the batch */
      int clear = !(t->fam && end > t->fam_lo && a < t->fam_hi);
      for (uint32_t m = t->occ & ~bit(k); m && clear; m &= m - 1) { /* (run_covers, per run) */
        const qv_run *o = &t->runs[__builtin_ctz(m)];
        if (a >= o->hi || end <= o->lo || !(o->write || !w)) continue;
        if (o->stride && o->bsize < bsize) continue; /* no block (or tail) of o holds a whole row */
        if (o->stride == stride) { /* the same stride: blocks of o at another phase never meet ours */
          uintptr_t d = o->lo >= a ? (o->lo - a) % stride : (stride - (a - o->lo) % stride) % stride;
          if (d >= bsize && d <= stride - o->bsize) continue;
        }
        clear = 0;
      }
      if (clear) {
        s->bsize = bsize;
        s->stride = stride;
        s->recip = UINT64_MAX / stride + 1;
        s->blocks = blocks;
        s->tlo = s->thi = a + blocks * stride;
        s->hi = end;
        s->lim_ok = 0;
        windows_cut(t, s->lo, s->hi, s);
        next_put(t, s);
        took(t, s, w, 0);
        return;
      }
    }
  }
  for (; i < blocks; i++) access(t, a + i * stride, bsize, w, pc, width, 0);
}

void __quiver_range_load_strided(void *p, size_t bsize, size_t stride, size_t blocks, size_t width) {
  if (__builtin_expect(qv_rec, 1) && bsize && blocks)
    strided_at((uintptr_t)p, bsize, stride, blocks, 0, QV_RA, (int)(width & QV_DESC_WIDTH));
}
void __quiver_range_store_strided(void *p, size_t bsize, size_t stride, size_t blocks, size_t width) {
  if (__builtin_expect(qv_rec, 1) && bsize && blocks)
    strided_at((uintptr_t)p, bsize, stride, blocks, 1, QV_RA, (int)(width & QV_DESC_WIDTH));
}

/* Block calls from the pass plugin: single accesses of `width` bytes each (0: mixed) over n
 * adjacent bytes, one after the other in straight-line code (an unrolled loop), reported at the
 * first: the same as their per-access callbacks. */
void __quiver_block_load(void *p, size_t n, size_t width) {
  if (__builtin_expect(qv_rec, 1) && n) access_at((uintptr_t)p, n, 0, QV_RA, (int)width, 0, NULL);
}
void __quiver_block_store(void *p, size_t n, size_t width) {
  if (__builtin_expect(qv_rec, 1) && n) access_at((uintptr_t)p, n, 1, QV_RA, (int)width, 0, NULL);
}

/* Calls of the pass plugin from loops, with the call site's cache c (qv_site): n bytes at p, as
 * one access (desc bits 0-7: its width, 0 for a range or mixed block), bit 8: indexed (the address
 * depends on a value the loop loaded, `p[col[k]]`), bit 9 (QV_RANGE_OF): a range of accesses of
 * that width. */
void __quiver_range_load_c(void *p, size_t n, size_t desc, qv_site *c) {
  if (__builtin_expect(qv_rec, 1) && n)
    access_at((uintptr_t)p, n, 0, QV_RA, (int)(desc & (QV_DESC_WIDTH | QV_RANGE_OF)), (desc & QV_DESC_INDEXED) != 0, c);
}
void __quiver_range_store_c(void *p, size_t n, size_t desc, qv_site *c) {
  if (__builtin_expect(qv_rec, 1) && n)
    access_at((uintptr_t)p, n, 1, QV_RA, (int)(desc & (QV_DESC_WIDTH | QV_RANGE_OF)), (desc & QV_DESC_INDEXED) != 0, c);
}

/* Not used with func,trace-loads,trace-stores, but harmless if a build adds trace-pc-guard. */
void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) { (void)start; (void)stop; }
void __sanitizer_cov_trace_pc_guard(uint32_t *guard) { (void)guard; }
