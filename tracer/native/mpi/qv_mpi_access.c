/* qv_mpi_access.c - loads and stores to window memory and RMA buffers, from
 * -fsanitize-coverage=trace-loads,trace-stores.
 *
 * Why this shape: the callbacks run for every instrumented load and store, so
 * they take no lock and allocate nothing. The watched ranges (window memory,
 * plus origin/result buffers of RMA calls that have not completed yet) are a
 * qv_rangeset (../qv_rangeset.c, shared with the OpenMP tracer): writers
 * rebuild it under a mutex, readers binary-search it. Watched accesses are
 * coalesced into runs by the coalescer the OpenMP tracer uses too
 * (../qv_coalesce.inc: contiguous and strided runs, interleaved streams,
 * call-site caches); every MPI wrapper flushes the runs first, so accesses keep
 * their place between MPI calls in the log. Unlike the OpenMP tracer, only one
 * PC's accesses form a run and no access is dropped (an RMA finding names the
 * line of every access it involves).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "qv_mpi_int.h"
#include "../qv_coalesce.h"
#include "../qv_rangeset.h"

int qvm_on;

/* The OpenMP tracer's access entry point, when it is loaded too: accesses this library does
 * not watch are handed to it (with the program's PC), so hybrid programs lose nothing. */
typedef void (*qvm_next_fn)(uintptr_t, uintptr_t, int, uintptr_t);
static qvm_next_fn g_next;

void qvm_access_init(void) { g_next = (qvm_next_fn)dlsym(RTLD_DEFAULT, "qv_access_range"); }

/* ---- published ranges (../qv_rangeset.h) ---- */

static qv_rangeset g_set = QV_RANGESET_INIT;

/* ---- the entries behind them (mutex) ---- */

typedef struct {
  uintptr_t lo, hi;
  int64_t win, target, req;
  int tag;
} qvm_entry;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static qvm_entry *g_ent;
static size_t g_nent, g_capent;

static void *map_bytes(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void fill_pairs(uintptr_t *pairs, void *arg) {
  (void)arg;
  for (size_t i = 0; i < g_nent; i++) {
    pairs[2 * i] = g_ent[i].lo;
    pairs[2 * i + 1] = g_ent[i].hi;
  }
}

/* Rebuild and publish the merged ranges of the entries (called with g_mu held). */
static void publish(void) { qv_ranges_rebuild(&g_set, g_nent, fill_pairs, NULL); }

static void recent_flush(uintptr_t lo, uintptr_t hi, const qv_ranges *old);

void qvm_track(uintptr_t lo, uintptr_t hi, int tag, int64_t win, int64_t target, int64_t req) {
  if (lo >= hi) return;
  pthread_mutex_lock(&g_mu);
  for (size_t i = 0; i < g_nent; i++) {
    qvm_entry *e = &g_ent[i];
    if (e->lo == lo && e->hi == hi && e->tag == tag && e->win == win && e->target == target && e->req == req)
      goto out;
  }
  if (g_nent == g_capent) {
    size_t ncap = g_capent ? 2 * g_capent : 256;
    qvm_entry *ne = map_bytes(ncap * sizeof *ne);
    if (!ne) goto out;
    if (g_ent) {
      memcpy(ne, g_ent, g_nent * sizeof *ne);
      munmap(g_ent, g_capent * sizeof *g_ent);
    }
    g_ent = ne;
    g_capent = ncap;
  }
  g_ent[g_nent++] = (qvm_entry){lo, hi, win, target, req, tag};
  {
    /* coverage may have grown: republish unless [lo,hi) is inside one published range */
    const qv_ranges *R = atomic_load_explicit(&g_set.cur, memory_order_acquire);
    int inside = 0;
    if (R)
      for (size_t i = 0; i < R->n && !inside; i++) inside = R->r[2 * i] <= lo && hi <= R->r[2 * i + 1];
    if (!inside) {
      publish(); /* first: from now on the new bytes' accesses are watched ... */
      if (tag == QVM_TAG_ORIGIN && qvm_recent_on) recent_flush(lo, hi, R); /* ... and the ones before */
    }
  }
out:
  pthread_mutex_unlock(&g_mu);
}

static void remove_where(int (*match)(const qvm_entry *, const void *), const void *arg) {
  pthread_mutex_lock(&g_mu);
  size_t k = 0;
  for (size_t i = 0; i < g_nent; i++)
    if (!match(&g_ent[i], arg)) g_ent[k++] = g_ent[i];
  if (k != g_nent) {
    g_nent = k;
    publish();
  }
  pthread_mutex_unlock(&g_mu);
}

typedef struct {
  int tag;
  int64_t win, target, req;
  uintptr_t lo, hi;
} qvm_match;

static int match_tag(const qvm_entry *e, const void *arg) {
  const qvm_match *m = arg;
  return e->tag == m->tag && (m->win < 0 || e->win == m->win) && (m->target < 0 || e->target == m->target) &&
         (m->req < 0 || e->req == m->req);
}

static int match_range(const qvm_entry *e, const void *arg) {
  const qvm_match *m = arg;
  return e->tag == QVM_TAG_WINDOW && e->win == m->win && e->lo == m->lo && e->hi == m->hi;
}

void qvm_untrack(int tag, int64_t win, int64_t target, int64_t req) {
  if (!g_nent) return;
  qvm_match m = {tag, win, target, req, 0, 0};
  remove_where(match_tag, &m);
}

void qvm_untrack_range(uintptr_t lo, uintptr_t hi, int64_t win) {
  qvm_match m = {QVM_TAG_WINDOW, win, -1, -1, lo, hi};
  remove_where(match_range, &m);
}

/* ---- per-thread access runs (the shared coalescer's hooks) ---- */

static __thread qv_coal t_coal __attribute__((tls_model("initial-exec")));
static __thread int t_in_tool __attribute__((tls_model("initial-exec")));

/* A run of the recent-access rings (below): one PC's adjacent accesses. */
typedef struct {
  uintptr_t lo, hi, pc;
  int64_t t0;
  uint64_t seq; /* start order, 0 = empty */
  int32_t write;
} qvm_run;

#define QVM_RUN_SLOTS 4

/* The access event of bytes [lo, hi) of a run of kind `write` from `pc` that started at t0. */
static qv_event_t run_event(int64_t t0, int write, uintptr_t pc, uintptr_t lo, uintptr_t hi) {
  qv_event_t e = QV_EVENT_INIT;
  e.time_ns = t0;
  e.kind = QVM_K_ACCESS;
  e.addr = lo;
  e.size = hi - lo;
  e.op = write;
  e.pc = pc;
  e.flags = QV_F_PC_RET;
  return e;
}

static inline uint64_t coal_gen(qv_coal *t) {
  (void)t;
  return atomic_load_explicit(&g_set.gen, memory_order_acquire);
}

static int __attribute__((noinline)) coal_keep_slow(qv_coal *t, uintptr_t a, uintptr_t n) {
  return qv_set_keep_slow(t, &g_set, a, n);
}

static inline void recent(uintptr_t a, uintptr_t n, int w, uintptr_t pc);

/* Not watched: kept in the thread's recent-access ring, and handed to the OpenMP tracer. */
static inline void coal_unkept(uintptr_t a, uintptr_t n, int w, uintptr_t pc) {
  if (qvm_recent_on) recent(a, n, w, pc);
  if (g_next) g_next(a, n, w, pc);
}

static void coal_emit(const qv_run *r, uintptr_t lo, uintptr_t size, uintptr_t stride, uint64_t blocks) {
  qv_event_t e = run_event(r->t0, r->write, r->pc, lo, lo + size);
  if (blocks > 1) { /* FORMAT.md: a strided run */
    e.addr2 = stride;
    e.aux2 = (int64_t)blocks;
  }
  t_in_tool++;
  qv_emit(&e);
  t_in_tool--;
}

/* Masked runs form only where QV_COAL_SHAPES holds (never here): written as their stretches. */
static void coal_emit_mask(const qv_run *r, uintptr_t lo, uintptr_t width, uintptr_t pitch, uint64_t slots,
                           uint64_t mask, int last) {
  (void)last;
  for (uint64_t i = 0; i < slots;) {
    if (!(mask >> i & 1)) {
      i++;
      continue;
    }
    uint64_t j = i + 1;
    while (pitch == width && j < slots && (mask >> j & 1)) j++;
    coal_emit(r, lo + i * pitch, (j - i) * width, 0, 1);
    i = j;
  }
}

static void coal_atomic(void *p, size_t n, size_t desc, uintptr_t pc);

#define QV_COAL_TLS() (&t_coal)
#define QV_COAL_ON qvm_on
#define QV_COAL_EXPORT __attribute__((visibility("default")))
#define QV_COAL_NEAR_PC 1         /* one PC: a finding names the line of each access */
#define QV_COAL_DROP_WRITTEN 0    /* every access reaches the log */
#define QV_COAL_DROP_READS(t) 0
#define QV_COAL_SHAPES(t) 1       /* strided runs: a column of a row-major window is one row */
#define QV_COAL_PUBLISH_SKIP 0
#define QV_COAL_BUSY() (t_in_tool)
#define QV_COAL_NOW() qv_now()
#include "../qv_coalesce.inc"

static void atomic_read_flush(void);

void qvm_runs_flush(void) {
  atomic_read_flush();
  qvm_access_runs_flush();
}

/* The access runs only: at an OpenMP `flush` a spin loop's pending atomic read stays pending, so
 * the loop's reads remain one event (logged at the time of the last read, which still comes before
 * the flush that follows it). */
__attribute__((visibility("default"))) void qvm_access_runs_flush(void) { coal_flush(&t_coal); }

/* The slot of a recent-access ring's open runs an access goes to: a run of the same PC and kind
 * that it touches (extended, *extended = 1), else the slot to start a run in (an empty one, else
 * the oldest, which the caller pushes into the ring first). A ring entry is a plain copy, so the
 * ring keeps this small merge of its own rather than the coalescer's shapes. */
static inline qvm_run *run_slot(qvm_run *runs, uintptr_t a, uintptr_t n, int w, uintptr_t pc, int *extended) {
  qvm_run *victim = NULL;
  for (int i = 0; i < QVM_RUN_SLOTS; i++) {
    qvm_run *r = &runs[i];
    if (!r->seq) {
      if (!victim || victim->seq) victim = r;
      continue;
    }
    if (r->pc == pc && r->write == w && a <= r->hi && a + n >= r->lo) {
      if (a < r->lo) r->lo = a;
      if (a + n > r->hi) r->hi = a + n;
      *extended = 1;
      return r;
    }
    if (!victim || (victim->seq && r->seq < victim->seq)) victim = r;
  }
  *extended = 0;
  return victim;
}

/* ---- recent unwatched accesses of every thread (threaded programs) ----
 *
 * Another thread may store into a buffer just before (in real time, unordered) it becomes an RMA
 * buffer: watching starts too late for that store. So, once the program is threaded, every thread
 * keeps its unwatched accesses as runs (run_slot) and the last QVM_RING closed
 * runs in a ring; when an RMA call starts watching new bytes, the calling thread looks through every
 * thread's ring and logs the runs that touch them, as accesses of their own thread at their own
 * time (qv_emit_as), so the log's time order puts them where they happened. Readers race with the
 * owner on purpose: the owner publishes `head` after writing an entry, and a reader drops entries the
 * owner may have overwritten meanwhile. Older accesses than the ring holds are still missed. */

#define QVM_RING 512 /* closed runs per thread, power of two */

typedef struct qvm_ring {
  _Atomic uint64_t head; /* closed runs pushed so far; run i is hist[i % QVM_RING] */
  struct qvm_ring *next;
  int tid;
  uint64_t seq;
  int64_t t0; /* the last run's time */
  qvm_run open[QVM_RUN_SLOTS];
  qvm_run hist[QVM_RING];
} qvm_ring;

int qvm_recent_on;
static _Atomic(qvm_ring *) g_rings;
static __thread qvm_ring *t_ring __attribute__((tls_model("initial-exec")));
static __thread int t_ring_failed __attribute__((tls_model("initial-exec")));

static qvm_ring *ring_new(void) {
  qvm_ring *r = map_bytes(sizeof *r);
  if (!r) {
    t_ring_failed = 1;
    return NULL;
  }
  t_in_tool++;
  r->tid = qv_thread_id();
  t_in_tool--;
  qvm_ring *head = atomic_load(&g_rings);
  do r->next = head;
  while (!atomic_compare_exchange_weak(&g_rings, &head, r));
  return t_ring = r;
}

static inline void recent(uintptr_t a, uintptr_t n, int w, uintptr_t pc) {
  qvm_ring *g = t_ring;
  if (__builtin_expect(!g, 0)) {
    if (t_ring_failed || !(g = ring_new())) return;
  }
  int extended;
  qvm_run *slot = run_slot(g->open, a, n, w, pc, &extended);
  if (extended) return;
  if (slot->seq) {
    uint64_t h = atomic_load_explicit(&g->head, memory_order_relaxed);
    g->hist[h & (QVM_RING - 1)] = *slot;
    atomic_store_explicit(&g->head, h + 1, memory_order_release);
  }
  slot->lo = a;
  slot->hi = a + n;
  slot->pc = pc;
  slot->write = w;
  /* no clock read per run (the vDSO clock's ordered rdtsc stalls a gather loop's misses): the
   * thread's last event time plus one ns per run since, which is not after the access and not
   * after the thread's next event, so the run keeps its place in the thread's order */
  int64_t last = qv_last_stamp;
  slot->t0 = g->t0 = g->t0 >= last ? g->t0 + 1 : last + 1;
  slot->seq = ++g->seq;
}

/* Log a run's bytes inside [lo, hi) for the ring's thread (not those inside `old`, already watched). */
static void recent_emit(const qvm_run *r, int tid, uintptr_t lo, uintptr_t hi, const qv_ranges *old) {
  uintptr_t a = r->lo > lo ? r->lo : lo, b = r->hi < hi ? r->hi : hi;
  if (!r->seq || a >= b || !r->t0) return;
  if (old)
    for (size_t i = 0; i < old->n; i++)
      if (old->r[2 * i] <= a && b <= old->r[2 * i + 1]) return;
  qv_event_t e = run_event(r->t0, r->write, r->pc, a, b);
  qv_emit_as(&e, tid);
}

/* Every thread's recent runs that touch [lo, hi), which is watched from now on (called with g_mu held,
 * `old` = the ranges watched before). */
static void recent_flush(uintptr_t lo, uintptr_t hi, const qv_ranges *old) {
  t_in_tool++;
  for (qvm_ring *g = atomic_load(&g_rings); g; g = g->next) {
    uint64_t h1 = atomic_load_explicit(&g->head, memory_order_acquire);
    uint64_t from = h1 > QVM_RING ? h1 - QVM_RING : 0;
    qvm_run copy[QVM_RUN_SLOTS];
    memcpy(copy, g->open, sizeof copy);
    for (uint64_t i = from; i < h1; i++) {
      qvm_run r = g->hist[i & (QVM_RING - 1)];
      uint64_t h2 = atomic_load_explicit(&g->head, memory_order_acquire);
      if (h2 >= QVM_RING && i <= h2 - QVM_RING) continue; /* overwritten meanwhile */
      recent_emit(&r, g->tid, lo, hi, old);
    }
    for (int i = 0; i < QVM_RUN_SLOTS; i++) recent_emit(&copy[i], g->tid, lo, hi, old);
  }
  t_in_tool--;
}

/* ---- atomic accesses: synchronisation between threads (threaded programs) ----
 *
 * A release write and an acquire read of one flag order the two threads (OpenMP 5.2 flush-sync,
 * C11 release/acquire); the pass reports every atomic access with its LLVM ordering
 * (pass/quiver_range.cpp `instrumentAtomics`). Writes are logged at once (before the write);
 * reads after the read, and the repeated reads of one spin loop (same PC and address) as one event
 * at the time of the last, the one that saw the flag: a thread's pending read is logged at its next
 * other atomic, MPI call or OpenMP event (qvm_runs_flush). */
enum { QVM_K_SYNC = 40, QVM_S_ATOMIC_WRITE = 15, QVM_S_ATOMIC_READ = 16 }; /* formats/schema.py EventKind.SYNC, SyncKind */

typedef struct {
  uintptr_t addr, pc;
  int64_t t;
  size_t n, desc;
} qvm_atomic;

static __thread qvm_atomic t_read __attribute__((tls_model("initial-exec")));

static void atomic_emit(int op, uintptr_t a, size_t n, size_t desc, uintptr_t pc, int64_t t) {
  qv_event_t e = QV_EVENT_INIT;
  e.time_ns = t;
  e.kind = QVM_K_SYNC;
  e.op = op;
  e.addr = a;
  e.size = n;
  e.aux2 = (int64_t)(desc >> 4); /* the LLVM AtomicOrdering */
  e.pc = pc;
  e.flags = QV_F_PC_RET;
  t_in_tool++;
  qv_emit(&e);
  t_in_tool--;
}

static void atomic_read_flush(void) {
  qvm_atomic *r = &t_read;
  if (!r->addr) return;
  atomic_emit(QVM_S_ATOMIC_READ, r->addr, r->n, r->desc, r->pc, r->t);
  r->addr = 0;
}

/* __quiver_atomic (qv_entry_points.inc) */
static void coal_atomic(void *p, size_t n, size_t desc, uintptr_t pc) {
  if (!__builtin_expect(qvm_on, 1) || !qvm_recent_on || t_in_tool) return;
  uintptr_t a = (uintptr_t)p;
  qvm_atomic *r = &t_read;
  if (desc & 1) { /* a read */
    if (r->addr == a && r->pc == pc) {
      r->t = qv_now();
      return;
    }
    atomic_read_flush();
    *r = (qvm_atomic){a, pc, qv_now(), n, desc};
    return;
  }
  atomic_read_flush();
  atomic_emit(QVM_S_ATOMIC_WRITE, a, n, desc, pc, 0);
}
