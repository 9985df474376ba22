/* qv_raw.h - raw chunk format and writer API shared by the quiver tracers
 * (OpenMP tracer in this folder, PMPI tracer in mpi/).
 *
 * Why: the native side must be cheap and crash-safe, so it only appends
 * fixed-size records to per-thread files; all interpretation (sorting,
 * symbolising, string remapping) happens in Python at finalize
 * (quiver.tracer.rawread reads these files with one numpy structured dtype).
 *
 * Raw directory (env QUIVER_RAW_DIR; recording is off when unset), per rank R
 * (env QUIVER_RANK, else PMI_RANK, else OMPI_COMM_WORLD_RANK, else 0):
 *   r<R>.t<T>.ev  events of tracer thread T: flat array of qv_event_t
 *                 (native little-endian, QV_EVENT_SIZE bytes each), appended
 *                 one chunk at a time with write(2). A trailing partial
 *                 record (killed mid-write) is ignored by the reader.
 *   r<R>.str      interned strings: records {uint32 id; uint32 len; bytes[len]},
 *                 id = order of first qv_strintern() call in that rank.
 *   r<R>.mod      loaded ELF objects (appended, may repeat), text lines "<bias hex> <lo hex> <hi hex> <path>"
 *                 (lo/hi = executable segment range); used to symbolise pc.
 *   r<R>.info     text "key=value" lines appended as the run goes
 *                 (pid, start_mono_ns, start_unix_ns, threads, signal, clean_exit;
 *                 parent_died: the launcher died; mpi_abort: the MPI_Abort error code).
 *   launcher.json written by `trace record` (not the tracer): the log it writes, for `trace recover`.
 *
 * Linking: qv_buffer.c is built once, into libquiver_rt.so (quiver.tracer.native
 * builds it); every tracer library (libquiver_omp.so, the PMPI library) links
 * -lquiver_rt so one process has exactly one writer, whatever is loaded.
 *
 * Column meaning is the one of formats/FORMAT.md; a raw event differs from a
 * log row only in: absolute CLOCK_MONOTONIC time, `pc`/`loc_str` instead of a
 * location id, and string ids local to the rank (flag bits say which extra
 * columns hold string ids).
 */
#ifndef QV_RAW_H
#define QV_RAW_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QV_RAW_VERSION 1
#define QV_EVENT_SIZE 96

/* qv_event_t.flags (raw only) */
#define QV_F_AUX_STR 0x1     /* aux holds a string id */
#define QV_F_AUX2_STR 0x2    /* aux2 holds a string id (MAP_CLAUSE clause text) */
#define QV_F_PC_RET 0x4      /* pc is a return address: symbolise pc-1 */
#define QV_F_ID2_STR 0x8     /* id2 holds a string id */
#define QV_F_NAME_INT 0x10   /* name holds an integer code, not a string id (RMA: MPI_Op code) */

typedef struct qv_event {
  int64_t time_ns;  /* CLOCK_MONOTONIC ns; qv_emit stamps it when 0 */
  uint64_t addr;
  uint64_t addr2;
  uint64_t size;
  int64_t id;
  int64_t id2;
  int64_t aux;
  int64_t aux2;
  uint64_t pc;      /* code address to symbolise into `loc`, 0 = none */
  int32_t loc_str;  /* string id of ";file;function;line;col;;" (wins over pc), -1 = none */
  int32_t op;
  int32_t name;     /* string id, -1 = none */
  int32_t device;   /* -1 = host */
  int32_t thread;   /* set by qv_emit */
  int16_t kind;     /* formats.schema.EventKind */
  int16_t flags;    /* QV_F_* */
} qv_event_t;

_Static_assert(sizeof(qv_event_t) == QV_EVENT_SIZE, "qv_event_t layout");

/* An event with every column at its "unused" value (FORMAT.md defaults). */
#define QV_EVENT_INIT                                                                    \
  {.time_ns = 0, .addr = 0, .addr2 = 0, .size = 0, .id = -1, .id2 = -1, .aux = 0,        \
   .aux2 = 0, .pc = 0, .loc_str = -1, .op = 0, .name = -1, .device = -1, .thread = 0,    \
   .kind = 0, .flags = 0}

static inline int64_t qv_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Writer API (qv_buffer.c). Everything is a no-op when recording is off. */
int qv_init(void);                 /* idempotent; 1 when recording (QUIVER_RAW_DIR set) */
int qv_active(void);
int qv_rank(void);
void qv_set_rank(int rank);        /* before the first event only (e.g. MPI after MPI_Init) */
int qv_thread_id(void);            /* tracer thread index of the caller (allocates its buffer) */
void qv_emit(const qv_event_t *e); /* append to the caller's buffer; stamps thread and time */
/* Append an event of thread `thread` (its own time_ns, non-zero) to the caller's buffer: what one
 * thread recorded for another (the MPI tracer's recent accesses of every thread, qv_mpi_access.c). */
void qv_emit_as(const qv_event_t *e, int thread);
/* The time of the calling thread's last event stamped by qv_emit (0 before any): a time before now
 * with no event of the thread after it, without reading the clock (the MPI tracer's recent-access
 * rings). Initial-exec TLS: one load. */
extern __thread int64_t qv_last_stamp __attribute__((tls_model("initial-exec")));
int64_t qv_stamp(void);            /* a time stamp strictly after the caller's previous one */
int32_t qv_strintern(const char *s);            /* NULL -> -1 */
int32_t qv_strintern_n(const char *s, size_t n);
void qv_flush_thread(void);        /* write the caller's buffer */
void qv_flush_all(void);           /* write every buffer; async-signal-safe (best effort) */
void qv_info(const char *key, const char *value);     /* append "key=value" to r<R>.info */
void qv_info_i64(const char *key, int64_t value);
void qv_write_modules(void);       /* append the loaded objects to r<R>.mod (reader dedups) */
const char *qv_raw_dir(void);
void qv_finalize(void);            /* flush all, modules, clean_exit=1; idempotent */
/* Per thread: [read lo, read hi, write lo, write hi): an access of that kind inside the interval
 * would be dropped by the access tracer (its bytes are in a pending run). Code built by `trace cc`
 * tests it inline and skips the callback (pass/quiver_range.cpp); empty (0, 0) unless the OpenMP
 * tracer publishes it (qv_access.c). Initial-exec TLS: read from the program and its device image. */
extern __thread uintptr_t __quiver_skip[4] __attribute__((tls_model("initial-exec")));
/* Add a hook that emits the calling thread's pending state (e.g. its access runs); at a crash it runs
 * on every thread that has a buffer (each one in a flush-signal handler on that thread). One per
 * library, up to 4. */
void qv_set_crash_hook(void (*hook)(void));
/* Before the process is ended from outside (MPI_Abort): the caller's pending state, every buffer,
 * then "key=value" appended to r<R>.info. */
void qv_flush_process(const char *key, int64_t value);

#ifdef __cplusplus
}
#endif
#endif
