/* qv_omp_int.h - state shared by the parts of libquiver_omp.so
 * (qv_omp.c: OMPT + offload entry wrappers, qv_access.c: sanitizer-coverage
 * access callbacks, qv_alloc.c: heap and mem* interposition).
 *
 * Why one thread-local struct: the access callback runs for every instrumented
 * load/store, so everything it reads (host/device side, enclosing construct,
 * own kernel stack, pending access runs) sits in one initial-exec TLS block.
 */
#ifndef QV_OMP_INT_H
#define QV_OMP_INT_H

#include <stdint.h>

#include "qv_raw.h"

/* formats/schema.py codes used natively */
enum {
  QV_K_ALLOC = 10, QV_K_FREE = 11, QV_K_CONSTRUCT_BEGIN = 20, QV_K_CONSTRUCT_END = 21,
  QV_K_MAP_CLAUSE = 22, QV_K_DATA_OP = 23, QV_K_KERNEL = 24, QV_K_TASK_CREATE = 30,
  QV_K_TASK_DEPEND = 31, QV_K_TASK_BEGIN = 32, QV_K_TASK_END = 33, QV_K_SYNC = 40,
  QV_K_ACCESS = 50
};
/* formats/schema.py SyncKind codes (`op` of QV_K_SYNC) */
enum {
  QV_S_TASKWAIT = 1, QV_S_BARRIER = 2, QV_S_TASKGROUP_BEGIN = 3, QV_S_TASKGROUP_END = 4, QV_S_PARALLEL_BEGIN = 5,
  QV_S_IMPLICIT_TASK_BEGIN = 6, QV_S_PARALLEL_END = 7, QV_S_MUTEX_ACQUIRED = 8, QV_S_MUTEX_RELEASED = 9,
  QV_S_FLUSH = 10, QV_S_WORK_BEGIN = 11, QV_S_WORK_END = 12, QV_S_MASKED_BEGIN = 13, QV_S_MASKED_END = 14
};
enum { QV_C_TARGET = 1, QV_C_DATA = 2, QV_C_ENTER = 3, QV_C_EXIT = 4, QV_C_UPDATE = 5, QV_C_DATA_END = 6 };
enum { QV_ALLOC_MALLOC = 1, QV_ALLOC_CALLOC = 2, QV_ALLOC_REALLOC = 3, QV_ALLOC_ALIGNED = 4, QV_ALLOC_NEW = 7,
       QV_ALLOC_NEW_ARRAY = 8 };

/* Pending access runs per thread (qv_access.c): at most QV_RUN_GENERAL ordinary ones, the other
 * slots hold the interleaved streams of one access split from a strided run (a "family"). */
#define QV_RUN_SLOTS 32
#define QV_RUN_GENERAL 8
#define QV_RUN_HASH_BITS 8
#define QV_MAX_ARGS 64

/* A call site's cache, in the program's thread-local storage (pass/quiver_range.cpp makes one per
 * call site in a loop): an access of the site at `next` whose end is at most `lim` the program
 * records itself, without a call: next = end + step. step 0: it belongs to the run the site fed
 * last (contiguous); else to the next run of a chain of family members (qv_access.c). */
typedef struct qv_site {
  uintptr_t next, lim, step;
} qv_site;

#define QV_CHAIN_MAX 24

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
  qv_site *site;    /* the call site that grows it without calls (NULL none) */
} qv_run;

/* What an offload entry wrapper tells the OMPT callbacks nested in it. */
typedef struct qv_pending {
  int active;
  int entry;              /* QV_C_* guess from the entry point */
  int nowait;             /* entry point or kernel flags say nowait */
  const char *psource;
  int32_t nargs;
  void **bases, **ptrs;
  int64_t *sizes, *types;
  void **names;
  int data_end_of;        /* end_mapper closing the `target data` begun by construct data_end_id */
  int64_t data_end_id;
} qv_pending;

typedef struct qv_tls {
  int32_t dev;            /* -1: host side; else device number of the kernel this thread runs */
  int32_t strided;        /* device side of a kernel that is not nowait: runs may become strided */
  int32_t cur_nowait;     /* the current construct is nowait (set at target_emi begin) */
  int32_t in_tool;        /* >0: inside the tracer itself: nothing is recorded */
  int32_t in_rt;          /* >0: inside an offload entry point: allocations and host-side mem* are the runtime's */
  int64_t construct;      /* construct instance id of the kernel (device side) */
  uintptr_t stk_lo, stk_hi;   /* own kernel stack while on the device side: accesses dropped */
  uintptr_t stk_base_lo;  /* lowest address of this thread's stack (cached) */
  uintptr_t stk_top;      /* highest address of this thread's stack (cached, workers) */
  uint64_t run_seq;
  uint64_t epoch;         /* bumped when a run's window is taken away (windows_cut) */
  /* access fast paths (qv_access.c), per kind (0 read, 1 write) */
  uintptr_t skip_lo[2], skip_hi[2]; /* bytes of a pending run that drops such an access there */
  int32_t skip_slot[2];   /* that run's slot */
  uintptr_t gnext[2];     /* where the run that took the last access of the kind continues (0 none) */
  int32_t hot[2];         /* its slot */
  uintptr_t pnext[2];     /* where the run that came after it last time continues (0 none) */
  int32_t pslot[2];       /* its slot */
  uint32_t occ;           /* occupied run slots */
  uint32_t fam;           /* slots of the family: runs of one access with pairwise disjoint phases */
  uint32_t attached;      /* slots of runs a call site grows (qv_run.site) */
  int32_t took_slot;      /* the run that took the current access (-1: none, or dropped) */
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
  /* filter caches: [flo, fhi) needs no lookup while fgen is current */
  uintptr_t flo, fhi;
  uint64_t fgen;
  int32_t fkeep;          /* 1: accesses there are kept, 0: dropped */
  qv_run runs[QV_RUN_SLOTS];
  int slot_idx;           /* index in the global kernel-stack table, -1 = none */
  /* current construct on this thread (set at target_emi begin, nested in the wrapper) */
  int64_t cur_construct;
  int32_t cur_loc_str;
  int32_t cur_device;
  int64_t cur_task;
  int64_t region;         /* parallel region of the current implicit task */
  uintptr_t kernel_frame;  /* frame of the kernel entry wrapper: the kernel's stack is below it */
  int64_t last_construct; /* id of the construct the last wrapper call performed */
  int32_t arg_names[QV_MAX_ARGS];
  int32_t nargs;
  uintptr_t arg_lo[QV_MAX_ARGS], arg_hi[QV_MAX_ARGS];
  int64_t dop_t0;         /* begin time of the running data op */
  uintptr_t dop_host;     /* host address from the data-op begin callback */
  qv_pending pend;
  /* `target data` pairing: begins still open on this thread */
  const char *open_src[16];
  int64_t open_id[16];
  int nopen;
} qv_tls;

extern __thread qv_tls qv_t __attribute__((tls_model("initial-exec")));
extern int qv_rec; /* 1 while recording */

/* qv_access.c */
void qv_runs_flush(qv_tls *t);
void qv_track_host(uintptr_t lo, uintptr_t hi);
void qv_untrack_host(uintptr_t lo, uintptr_t hi);
void qv_track_device(uintptr_t lo, uintptr_t hi);
void qv_untrack_device(uintptr_t lo, uintptr_t hi);
void qv_access_range(uintptr_t a, uintptr_t n, int write, uintptr_t pc);
void qv_device_enter(qv_tls *t, int32_t dev, int64_t construct, uintptr_t frame, int strided);
void qv_device_leave(qv_tls *t);
void qv_access_init(void);

/* qv_alloc.c */
void qv_modules_refresh(void);

#endif
