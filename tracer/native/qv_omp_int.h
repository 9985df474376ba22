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

#include "qv_coalesce.h"
#include "qv_planes.h"
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
/* formats/schema.py AccessFlag bits (`op` of QV_K_ACCESS) */
enum { QV_A_WRITE = 1, QV_A_ATOMIC = 2, QV_A_MASKED = 4 };
enum { QV_C_TARGET = 1, QV_C_DATA = 2, QV_C_ENTER = 3, QV_C_EXIT = 4, QV_C_UPDATE = 5, QV_C_DATA_END = 6 };
enum { QV_ALLOC_MALLOC = 1, QV_ALLOC_CALLOC = 2, QV_ALLOC_REALLOC = 3, QV_ALLOC_ALIGNED = 4, QV_ALLOC_NEW = 7,
       QV_ALLOC_NEW_ARRAY = 8 };

#define QV_MAX_ARGS 64

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
  int32_t cur_nowait;     /* the current construct is nowait (set at target_emi begin) */
  int32_t in_tool;        /* >0: inside the tracer itself: nothing is recorded */
  int32_t in_rt;          /* >0: inside an offload entry point: allocations and host-side mem* are the runtime's */
  int64_t construct;      /* construct instance id of the kernel (device side) */
  uintptr_t stk_lo, stk_hi;   /* own kernel stack while on the device side: accesses dropped */
  uintptr_t stk_base_lo;  /* lowest address of this thread's stack (cached) */
  uintptr_t stk_top;      /* highest address of this thread's stack (cached, workers) */
  qv_coal c;              /* pending access runs (qv_coalesce.h); c.strided: device side of a kernel
                             that is not nowait, where runs may become strided */
  qv_planes planes;       /* held strided rows (qv_planes.h), device side of such a kernel only */
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
  int64_t flushed_at;     /* when a construct's end last wrote this thread's buffer (qv_now) */
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
