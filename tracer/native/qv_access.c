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
static void coal_emit(const qv_run *r, uintptr_t lo, uintptr_t size, uintptr_t stride, uint64_t blocks) {
  qv_tls *t = &qv_t;
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
  t->in_tool++;
  qv_emit(&e);
  t->in_tool--;
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

void qv_runs_flush(qv_tls *t) { coal_flush(&t->c); }

void qv_access_range(uintptr_t a, uintptr_t n, int write, uintptr_t pc) {
  if (qv_rec && n) access_at(a, n, write, pc, 0, 0, NULL);
}
