/* qv_mpi_int.h - state shared by the parts of libquiver_mpi.so
 * (qv_mpi.c: PMPI wrappers, qv_mpi_access.c: load/store callbacks and the
 * tracked address ranges).
 *
 * Why split: the access callbacks must stay tiny and lock-free; everything
 * that knows MPI lives in qv_mpi.c and only tells the access part which
 * ranges to watch and when to flush the pending access runs.
 */
#ifndef QV_MPI_INT_H
#define QV_MPI_INT_H

#include <stdint.h>

#include "../qv_raw.h"

/* formats/schema.py EventKind codes used here */
enum {
  QVM_K_ACCESS = 50, QVM_K_WIN_CREATE = 60, QVM_K_WIN_FREE = 61, QVM_K_WIN_ATTACH = 62,
  QVM_K_WIN_DETACH = 63, QVM_K_RMA = 64, QVM_K_MPI_SYNC = 65, QVM_K_MPI_REQUEST = 66,
  QVM_K_MPI_MESSAGE = 67
};

#ifndef QV_F_NAME_INT
#define QV_F_NAME_INT 0x10 /* raw flag: `name` holds an integer code, not a string id */
#endif

/* Range tags: who asked for a range to be watched (see qvm_track / qvm_untrack). */
#define QVM_TAG_WINDOW 0 /* window memory: watched until MPI_Win_free / detach */
#define QVM_TAG_ORIGIN 1 /* RMA origin/result buffer: watched until the call completes */

/* Watch [lo, hi) for loads and stores; `win`, `target`, `req` say when it may be dropped. */
void qvm_track(uintptr_t lo, uintptr_t hi, int tag, int64_t win, int64_t target, int64_t req);
/* Stop watching ranges of `tag` matching win (and target / req when >= 0). */
void qvm_untrack(int tag, int64_t win, int64_t target, int64_t req);
/* Stop watching one exact window range (detach / free). */
void qvm_untrack_range(uintptr_t lo, uintptr_t hi, int64_t win);
/* Emit the calling thread's pending access runs (before every MPI event, so the
 * log keeps the program order of accesses and MPI calls). */
void qvm_runs_flush(void);
/* The same without the pending atomic read (the OpenMP tracer's `flush` callback). */
void qvm_access_runs_flush(void);
/* Find the OpenMP tracer's access entry point, if loaded (after MPI_Init). */
void qvm_access_init(void);
/* 1 once the program is threaded (MPI_Init_thread above MPI_THREAD_SINGLE): every thread keeps its
 * recent unwatched accesses, logged when an RMA call starts watching their bytes. */
extern int qvm_recent_on;
/* 1 while recording: set once MPI_Init has named the rank. */
extern int qvm_on;

#endif
