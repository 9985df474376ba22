/* qv_access.c - memory accesses from -fsanitize-coverage=trace-loads,trace-stores and the
 * `trace cc` pass plugin (pass/quiver_range.cpp).
 *
 * Why this shape: these callbacks run for every load/store of host and device
 * code, so they take no lock and allocate nothing, and the common cases cost a
 * few compares. This file decides which accesses are kept; the runs they are
 * coalesced into are the shared coalescer's (qv_coalesce.inc):
 *  - host side: only accesses to memory that has been mapped are kept; the
 *    mapped host ranges are a qv_rangeset (writers copy-on-write under a mutex,
 *    readers binary-search); each thread caches the range or gap it last looked up;
 *  - device side: everything except the kernel threads' own stacks;
 *  - accesses to bytes the thread wrote in a pending run are dropped; on the
 *    device side of a kernel that is not nowait also re-reads, and runs may
 *    become strided and split into families (qv_tls.c.strided).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "qv_omp_int.h"
#include "qv_coalesce.h"
#include "qv_rangeset.h"

__thread qv_tls qv_t __attribute__((tls_model("initial-exec"))) = {
    .dev = -1, .slot_idx = -1, .cur_construct = -1, .cur_loc_str = -1, .cur_task = -1};
int qv_rec;

/* Whether the skip intervals are published to the program (__quiver_skip): not when the MPI
 * tracer is loaded too, since it sees every access first (window memory) and passes the rest on. */
static int g_publish_skip;

void qv_access_init(void) { g_publish_skip = !dlsym(RTLD_DEFAULT, "qvm_access_init"); }


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
  t->c.strided = strided;
  t->construct = construct;
  t->stk_lo = stack_base_lo(t);
  t->stk_hi = frame;
  t->c.fgen = 0; /* the filter cache was the host side's */
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
  t->c.strided = 0;
  t->construct = -1;
  t->stk_lo = t->stk_hi = 0;
  t->c.fgen = 0;
  if (t->slot_idx >= 0) {
    atomic_store_explicit(&g_kstk[t->slot_idx][1], 0, memory_order_release);
    atomic_fetch_add_explicit(&g_kstk_gen, 1, memory_order_release);
  }
}

/* ---- which accesses are kept (the coalescer's hooks) ---- */

static inline uint64_t coal_gen(qv_coal *c) {
  (void)c;
  return atomic_load_explicit(qv_t.dev < 0 ? &g_host.gen : &g_kstk_gen, memory_order_acquire);
}

/* Device side, outside the thread's own stack: dropped when on another kernel thread's stack
 * (shared loop bounds ...) unless a live device copy is there. Caches the gap between stacks. */
static int __attribute__((noinline)) dev_keep_slow(qv_tls *t, uintptr_t a, uintptr_t n) {
  uint64_t gen = atomic_load_explicit(&g_kstk_gen, memory_order_acquire);
  if (a >= t->stk_lo && a < t->stk_hi) { /* the kernel's own locals */
    qv_filter_cache(&t->c, gen, t->stk_lo, t->stk_hi, 0);
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
  qv_filter_cache(&t->c, gen, gap_lo, gap_hi, 1);
  return 1;
}

/* Host side: whether [a, a+n) touches mapped memory. */
static int __attribute__((noinline)) coal_keep_slow(qv_coal *c, uintptr_t a, uintptr_t n) {
  (void)c;
  return qv_t.dev < 0 ? qv_set_keep_slow(&qv_t.c, &g_host, a, n) : dev_keep_slow(&qv_t, a, n);
}

static inline void coal_unkept(uintptr_t a, uintptr_t n, int w, uintptr_t pc) { (void)a, (void)n, (void)w, (void)pc; }

/* A run's ACCESS rows: of the kernel's construct on the device side. */
static void row_write(const qv_tls *t, int64_t t0, uintptr_t lo, uintptr_t size, uintptr_t stride, uint64_t blocks,
                      uint64_t planes, uintptr_t pstride, int write, int width, uintptr_t pc, int dev, int64_t construct,
                      uint64_t mask) {
  (void)t;
  qv_event_t e = QV_EVENT_INIT;
  e.time_ns = t0;
  e.kind = QV_K_ACCESS;
  e.addr = lo;
  e.size = size;
  if (blocks > 1) { /* FORMAT.md: a strided run */
    e.addr2 = stride;
    e.aux2 = (int64_t)blocks;
  }
  e.op = write;
  e.aux = width;
  e.device = dev;
  e.id = dev >= 0 ? construct : -1;
  e.pc = pc;
  e.flags = QV_F_PC_RET;
  if (planes > 1) { /* FORMAT.md: planes of a strided run (version 5) */
    e.name = (int32_t)planes;
    e.id2 = (int64_t)pstride;
    e.flags |= QV_F_NAME_INT;
  } else if (mask) { /* FORMAT.md: a masked run (version 6): the slots of the `blocks` whose bit is set */
    e.op |= QV_A_MASKED;
    e.id2 = (int64_t)mask;
  }
  qv_t.in_tool++;
  qv_emit(&e);
  qv_t.in_tool--;
}

/* ---- planes (qv_planes.h) ---- */

static inline uintptr_t span_of(uintptr_t bsize, uintptr_t stride, uint64_t blocks) {
  return blocks > 1 ? (blocks - 1) * stride + bsize : bsize;
}

/* Whether `blocks` blocks of `bsize` bytes every `stride` from lo may share a byte with [a, e). */
static int blocks_hit(uintptr_t lo, uintptr_t bsize, uintptr_t stride, uint64_t blocks, uintptr_t a, uintptr_t e) {
  if (a >= lo + span_of(bsize, stride, blocks) || e <= lo) return 0;
  if (blocks < 2 || a <= lo) return 1;
  uint64_t k = (a - lo) / stride; /* the block at or before a */
  if (a < lo + k * stride + bsize) return 1;
  return k + 1 < blocks && e > lo + (k + 1) * stride;
}

/* Whether two block sets may share a byte (exact for few blocks against any and for equal strides,
 * else by their hulls). */
#define QV_FEW_BLOCKS 8
static int rows_meet(uintptr_t alo, uintptr_t abs, uintptr_t ast, uint64_t ab,
                     uintptr_t blo, uintptr_t bbs, uintptr_t bst, uint64_t bb) {
  uintptr_t ahi = alo + span_of(abs, ast, ab), bhi = blo + span_of(bbs, bst, bb);
  if (alo >= bhi || blo >= ahi) return 0;
  if (ab <= QV_FEW_BLOCKS) { /* (a family's few members: a block at each of a few rows) */
    for (uint64_t i = 0; i < ab; i++)
      if (blocks_hit(blo, bbs, bst, bb, alo + i * ast, alo + i * ast + abs)) return 1;
    return 0;
  }
  if (bb <= QV_FEW_BLOCKS) return rows_meet(blo, bbs, bst, bb, alo, abs, ast, ab);
  if (ast != bst) return 1;
  uintptr_t d = blo >= alo ? (blo - alo) % ast : (ast - (alo - blo) % ast) % ast;
  return !(d >= abs && d <= ast - bbs);
}

static inline void hull_add(uintptr_t *lo, uintptr_t *hi, uintptr_t a, uintptr_t e) {
  if (*hi <= *lo) *lo = a, *hi = e;
  if (a < *lo) *lo = a;
  if (e > *hi) *hi = e;
}

/* Remember a row of kind w this thread recorded (written or held) at log time tau, its run started
 * at start; the one leaving the ring joins the kind's gone summary. */
static void recent_put(qv_planes *P, int w, uintptr_t lo, uintptr_t bsize, uintptr_t stride, uint64_t blocks,
                       int64_t tau, int64_t start) {
  qv_recent *e = &P->recent[w][P->head[w]];
  if (P->n[w] == QV_RECENT) {
    qv_gone *g = &P->gone[w];
    hull_add(&g->lo, &g->hi, e->lo, e->hi);
    if (e->tau > g->tau) g->tau = e->tau;
    if (e->start > g->start) g->start = e->start;
  } else {
    P->n[w]++;
  }
  uintptr_t hi = lo + span_of(bsize, stride, blocks);
  P->rlo[w][P->head[w]] = (int64_t)lo, P->rhi[w][P->head[w]] = (int64_t)hi;
  P->head[w] = (P->head[w] + 1) % QV_RECENT;
  *e = (qv_recent){lo, hi, bsize, stride, blocks, tau, start};
}

/* Ring slots whose hull meets [lo, hi): a bit each. Compiled twice, the AVX2 copy chosen at load
 * time where the CPU has it (eight 4-lane compares instead of 32 scalar ones: this ran before every
 * plane a red-black sweep adds). */
__attribute__((target_clones("avx2", "default"))) static uint32_t ring_meets(const int64_t *rlo, const int64_t *rhi,
                                                                             int64_t lo, int64_t hi) {
  uint32_t meet = 0;
  for (uint32_t k = 0; k < QV_RECENT; k++) meet |= (uint32_t)((rlo[k] < hi) & (rhi[k] > lo)) << k;
  return meet;
}

/* Whether the row [lo, + span) of held row h's shape, whose run started at start, may be stamped
 * with h's time: every row of the thread it shares a byte with (one of the two a write; a read row
 * looks at the writes only) stays on the side of it the runs' starts put it on. */
static int plane_clear(const qv_tls *t, const qv_plane_row *h, uintptr_t lo, int64_t start) {
  const qv_planes *P = &t->planes;
  uintptr_t hi = lo + span_of(h->bsize, h->stride, h->blocks);
  for (int w = !h->write; w < 2; w++) {
    const qv_gone *g = &P->gone[w];
    if (g->hi > g->lo && lo < g->hi && hi > g->lo && (g->tau >= h->t0 || g->start > start)) return 0;
    for (uint32_t meet = ring_meets(P->rlo[w], P->rhi[w], (int64_t)lo, (int64_t)hi); meet; meet &= meet - 1) {
      const qv_recent *e = &P->recent[w][__builtin_ctz(meet)];
      if ((e->start < start) != (e->tau < h->t0) &&
          rows_meet(e->lo, e->bsize, e->stride, e->blocks, lo, h->bsize, h->stride, h->blocks))
        return 0;
    }
  }
  for (uint32_t m = t->c.occ; m; m &= m - 1) { /* pending runs, written later at their start */
    const qv_run *r = &t->c.runs[__builtin_ctz(m)];
    if (r->t0 <= h->t0 || r->t0 >= start || !(r->write || h->write) || r->lo >= hi || r->hi <= lo) continue;
    if (!r->stride ? rows_meet(r->lo, r->hi - r->lo, 0, 1, lo, h->bsize, h->stride, h->blocks)
                   : rows_meet(r->lo, r->bsize, r->stride, r->blocks, lo, h->bsize, h->stride, h->blocks) ||
                         (r->thi > r->tlo && rows_meet(r->tlo, r->thi - r->tlo, 0, 1, lo, h->bsize, h->stride, h->blocks)))
      return 0;
  }
  return 1;
}

static void held_write(const qv_tls *t, qv_plane_row *h) {
  if (h->blocks == 1 && h->planes > 1) /* planes of one block: a strided run (version 2) */
    row_write(t, h->t0, h->lo, h->bsize, h->pstride, h->planes, 1, 0, h->write, h->width, h->pc, h->dev, h->construct, 0);
  else
    row_write(t, h->t0, h->lo, h->bsize, h->stride, h->blocks, h->planes, h->pstride, h->write, h->width, h->pc, h->dev,
              h->construct, 0);
  h->planes = 0;
}

/* Write every held row (at every point the coalescer flushes: kernel end, sync, a crash). */
static void planes_flush(qv_tls *t) {
  qv_planes *P = &t->planes;
  for (uint32_t m = P->occ; m; m &= m - 1) held_write(t, &P->held[__builtin_ctz(m)]);
  P->occ = 0;
  for (int w = 0; w < 2; w++) { /* (what comes next is later than all of it) */
    if (P->n[w]) memset(P->rlo[w], 0, sizeof P->rlo[w]), memset(P->rhi[w], 0, sizeof P->rhi[w]);
    P->n[w] = P->head[w] = 0;
    P->gone[w] = (qv_gone){0, 0, 0, 0};
  }
}

/* The held row of call site pc a row [lo, ...) of this shape may join as its next plane (NULL none),
 * with the plane distance in *d. A row of one plane pairs only once another row of its site went
 * elsewhere (so a red-black colour's rows i, i+2, ... pair, and i+1, i+3, ... form the other held
 * row), with the oldest such row first. */
static qv_plane_row *plane_of(qv_tls *t, uintptr_t pc, int write, int width, uintptr_t lo, uintptr_t bsize,
                              uintptr_t stride, uint64_t blocks, int64_t start, uintptr_t *d) {
  qv_planes *P = &t->planes;
  uintptr_t span = span_of(bsize, stride, blocks);
  qv_plane_row *take = NULL;
  for (uint32_t m = P->occ; m; m &= m - 1) {
    qv_plane_row *h = &P->held[__builtin_ctz(m)];
    if (h->pc != pc || h->write != write || h->width != width || h->bsize != bsize || h->stride != stride ||
        h->blocks != blocks || h->dev != t->dev || h->construct != t->construct || (take && take->t0 <= h->t0))
      continue;
    uintptr_t dh;
    if (h->planes == 1) {
      if (!h->passed || lo <= h->lo) continue;
      dh = lo - h->lo;
      if (dh <= span || (blocks > 1 && dh % stride)) continue;
    } else {
      dh = h->pstride;
      if (h->planes >= QV_PLANES_MAX || lo != h->lo + h->planes * dh) continue;
    }
    if (!plane_clear(t, h, lo, start)) continue;
    take = h, *d = dh;
  }
  return take;
}

/* A row of h's site went to h: the other held rows of the site were passed by. */
static void went_to(qv_planes *P, qv_plane_row *h) {
  h->used = ++P->uses;
  for (uint32_t m = P->occ; m; m &= m - 1) {
    qv_plane_row *o = &P->held[__builtin_ctz(m)];
    if (o != h && o->pc == h->pc) o->passed = 1;
  }
}

/* Row [lo, ...) of a run that started at start joins held row h as its next plane, d from the
 * previous one. */
static void plane_add(qv_tls *t, qv_plane_row *h, uintptr_t d, uintptr_t lo, int64_t start) {
  qv_planes *P = &t->planes;
  h->planes++;
  h->pstride = d;
  recent_put(P, h->write, lo, h->bsize, h->stride, h->blocks, h->t0, start);
  went_to(P, h);
}

/* A row of run r (a complete strided run, or one block): a plane of a held row, or held itself
 * (planes of one block are written as one strided run, version 2). */
static void plane_offer(qv_tls *t, const qv_run *r, uintptr_t lo, uintptr_t bsize, uintptr_t stride, uint64_t blocks) {
  qv_planes *P = &t->planes;
  uintptr_t d = 0;
  qv_plane_row *take = plane_of(t, r->pc, r->write, r->width, lo, bsize, stride, blocks, r->t0, &d);
  if (take) {
    plane_add(t, take, d, lo, r->t0);
    return;
  }
  int k;
  if (P->occ != (uint32_t)((1ull << QV_HELD) - 1)) {
    k = __builtin_ctz(~P->occ);
  } else { /* the row that took a plane longest ago is written out */
    k = 0;
    for (int i = 1; i < QV_HELD; i++)
      if (P->held[i].used < P->held[k].used) k = i;
    held_write(t, &P->held[k]);
  }
  take = &P->held[k];
  *take = (qv_plane_row){.lo = lo, .bsize = bsize, .stride = stride, .blocks = blocks, .planes = 1, .pc = r->pc,
                         .t0 = r->t0, .construct = t->construct, .write = r->write, .width = r->width,
                         .dev = t->dev};
  P->occ |= 1u << k;
  recent_put(P, r->write, lo, bsize, stride, blocks, r->t0, r->t0);
  went_to(P, take);
}

/* A held row of two blocks of run r's site and shape, that a later such row at lo cannot join as a
 * plane (its distance is no multiple of the stride: two blocks of a family's diagonal), is split
 * into two held rows of one block each, which the later row's blocks join one by one (and so do the
 * rows after it). A row of two blocks stays whole until then (a finding's variable is decided by a
 * row's first block). */
static int split_pair(qv_tls *t, const qv_run *r, uintptr_t lo, uintptr_t bsize, uintptr_t stride) {
  qv_planes *P = &t->planes;
  uintptr_t d = 0;
  if (plane_of(t, r->pc, r->write, r->width, lo, bsize, stride, 2, r->t0, &d)) return 0;
  for (uint32_t m = P->occ; m; m &= m - 1) {
    int i = __builtin_ctz(m);
    qv_plane_row *h = &P->held[i];
    if (h->pc != r->pc || h->write != r->write || h->width != r->width || h->blocks != 2 || h->planes != 1 ||
        h->bsize != bsize || h->stride != stride || h->dev != t->dev || h->construct != t->construct ||
        lo <= h->lo + stride + bsize)
      continue;
    int k = -1;
    if (P->occ != (uint32_t)((1ull << QV_HELD) - 1)) {
      k = __builtin_ctz(~P->occ);
    } else {
      for (int j = 0; j < QV_HELD; j++)
        if (j != i && (k < 0 || P->held[j].used < P->held[k].used)) k = j;
      held_write(t, &P->held[k]);
    }
    h->blocks = 1;
    h->stride = 0;
    h->passed = 1;
    P->held[k] = *h;
    P->held[k].lo = h->lo + stride;
    P->occ |= 1u << k;
    return 1;
  }
  return 0;
}

static void coal_emit(const qv_run *r, uintptr_t lo, uintptr_t size, uintptr_t stride, uint64_t blocks) {
  qv_tls *t = &qv_t;
  if (t->c.strided) {
    uintptr_t d;
    if (blocks == 2 && (plane_of(t, r->pc, r->write, r->width, lo, size, 0, 1, r->t0, &d) ||
                        split_pair(t, r, lo, size, stride))) {
      plane_offer(t, r, lo, size, 0, 1);
      plane_offer(t, r, lo + stride, size, 0, 1);
    } else {
      plane_offer(t, r, lo, size, blocks > 1 ? stride : 0, blocks);
    }
    return;
  }
  row_write(t, r->t0, lo, size, stride, blocks, 1, 0, r->write, r->width, r->pc, t->dev, t->construct, 0);
}

/* A masked run's row, written at once (no planes); the run is remembered by its hull for the planes' order
 * checks (plane_clear) with its last one. Only the device side of a kernel makes them (QV_COAL_SHAPES). */
static void coal_emit_mask(const qv_run *r, uintptr_t lo, uintptr_t width, uintptr_t pitch, uint64_t slots, uint64_t mask,
                           int last) {
  qv_tls *t = &qv_t;
  row_write(t, r->t0, lo, width, pitch, slots, 1, 0, r->write, r->width, r->pc, t->dev, t->construct, mask);
  if (last) recent_put(&t->planes, r->write, r->lo, r->hi - r->lo, 0, 1, r->t0, r->t0);
}

/* Atomic accesses as synchronisation (pass/quiver_range.cpp): only the PMPI tracer records them
 * (hybrid programs, where it is loaded first); the access itself reaches the load/store callbacks. */
static inline void coal_atomic(void *p, size_t n, size_t desc, uintptr_t pc) { (void)p, (void)n, (void)desc, (void)pc; }

#define QV_COAL_TLS() (&qv_t.c)
#define QV_COAL_ON qv_rec
#define QV_COAL_EXPORT
#define QV_COAL_NEAR_PC 512 /* unrolled or vectorised copies of one access */
#define QV_COAL_DROP_WRITTEN 1
#define QV_COAL_DROP_READS(t) ((t)->strided) /* nothing but the host can invalidate a device copy then */
#define QV_COAL_SHAPES(t) ((t)->strided)
#define QV_COAL_PUBLISH_SKIP g_publish_skip
#define QV_COAL_BUSY() 0
#define QV_COAL_NOW() qv_stamp()
#include "qv_coalesce.inc"

void qv_runs_flush(qv_tls *t) {
  coal_flush(&t->c);
  planes_flush(t);
}

void qv_access_range(uintptr_t a, uintptr_t n, int write, uintptr_t pc) {
  if (qv_rec && n) access_at(a, n, write, pc, 0, 0, NULL);
}
