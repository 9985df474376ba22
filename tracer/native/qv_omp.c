/* qv_omp.c - OpenMP offloading events: OMPT tool + offload entry-point wrappers.
 *
 * Why both: OMPT EMI callbacks say what the runtime really did (data ops with
 * device addresses, kernels, tasks, syncs) but their code pointers do not give
 * the construct's line; the entry points (__tgt_target_*_mapper,
 * __tgt_target_kernel) carry ident_t.psource ";file;function;line;col;;" and
 * the map names ";clause;file;line;col;;". A wrapper stores its arguments in
 * thread-local `pend`; the OMPT callbacks that fire nested inside the real call,
 * on the same thread, emit the events with both. Quirks (LLVM 19, host plugin):
 *  - `target data` arrives as enter-data + exit-data: a begin/end mapper pair
 *    with the same psource on one thread is turned into DATA / DATA_END;
 *  - nowait regions arrive with kind `target` on hidden-helper threads, inside
 *    the target task: the target task id comes from target_task_data;
 *  - a delete data op carries only the device address: the host side comes
 *    from the alloc it undoes;
 *  - the device image is written to /tmp/tmpfile_* and never removed: it is
 *    copied into the raw directory and unlinked once loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <omp-tools.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qv_omp_int.h"

typedef struct {
  int32_t r1, flags, r2, r3;
  const char *psource;
} qv_ident_t;

/* libomptarget KernelArgsTy (version 3, LLVM 17-19) */
typedef struct {
  uint32_t version, nargs;
  void **bases, **ptrs;
  int64_t *sizes, *types;
  void **names, **mappers;
  uint64_t tripcount;
  uint64_t flags; /* bit 0: nowait */
  uint32_t num_teams[3], thread_limit[3];
  uint32_t dyn_mem;
} qv_kargs_t;

/* a thread's buffer is written at the end of a construct when its last write is older than this:
 * a SIGKILL of the program loses at most the constructs of the last millisecond (docs/record.md) */
#define QV_CONSTRUCT_FLUSH_NS 1000000

static _Atomic int64_t g_construct_id;
static _Atomic int64_t g_task_id;
static _Atomic int64_t g_region_id;
static int g_ompt_on;
/* the PMPI tracer's pending window-access runs (when it is loaded): flushed before every OpenMP
 * sync event, so a thread's window loads/stores keep their place around barriers and locks */
static void (*g_qvm_flush)(void);
/* ... all but a pending atomic read (at `flush`: a spin loop's reads stay one event) */
static void (*g_qvm_flush_at_flush)(void);

/* ---- small helpers ---- */

#define CB_ENTER(t)                 \
  qv_tls *t = &qv_t;                \
  if (!qv_rec) return;              \
  qv_runs_flush(t);                 \
  if (g_qvm_flush) g_qvm_flush()

/* Task ids in ompt_data_t.value: (id << 1) | is_target_task. */
static inline int64_t task_of(const ompt_data_t *d) {
  return d && d->value ? (int64_t)(d->value >> 1) : -1;
}
static inline int64_t target_task_of(const ompt_data_t *d) {
  return d && (d->value & 1) ? (int64_t)(d->value >> 1) : -1;
}

/* tasks that have `depend` items (bitmap by task id) */
#define QV_DEP_BITS (1u << 22)
static _Atomic uint64_t g_has_dep[QV_DEP_BITS / 64];
static void mark_dep(int64_t task) {
  if (task >= 0) atomic_fetch_or(&g_has_dep[(task % QV_DEP_BITS) / 64], 1ull << (task % 64));
}
static int has_dep(int64_t task) {
  return task >= 0 && (atomic_load(&g_has_dep[(task % QV_DEP_BITS) / 64]) >> (task % 64)) & 1;
}

/* device address -> host range of live device copies (for delete data ops) */
#define QV_DEVMAP 4096
static struct { uintptr_t dev, host, size; } g_devmap[QV_DEVMAP];
static pthread_mutex_t g_devmap_mu = PTHREAD_MUTEX_INITIALIZER;

#define QV_TOMB ((uintptr_t)-1)

static void devmap_put(uintptr_t dev, uintptr_t host, uintptr_t size) {
  pthread_mutex_lock(&g_devmap_mu);
  size_t h = (dev >> 4) % QV_DEVMAP, free_slot = QV_DEVMAP;
  for (size_t i = 0; i < QV_DEVMAP; i++, h = (h + 1) % QV_DEVMAP) {
    uintptr_t d = g_devmap[h].dev;
    if (d == dev) { /* already there: update */
      free_slot = h;
      break;
    }
    if (d == QV_TOMB && free_slot == QV_DEVMAP) free_slot = h; /* reuse the first tombstone */
    if (!d) {
      if (free_slot == QV_DEVMAP) free_slot = h;
      break;
    }
  }
  if (free_slot != QV_DEVMAP) {
    g_devmap[free_slot].dev = dev;
    g_devmap[free_slot].host = host;
    g_devmap[free_slot].size = size;
  }
  pthread_mutex_unlock(&g_devmap_mu);
}

static int devmap_take(uintptr_t dev, uintptr_t *host, uintptr_t *size) {
  int found = 0;
  pthread_mutex_lock(&g_devmap_mu);
  size_t h = (dev >> 4) % QV_DEVMAP;
  for (size_t i = 0; i < QV_DEVMAP && g_devmap[h].dev; i++, h = (h + 1) % QV_DEVMAP) {
    if (g_devmap[h].dev == dev) {
      *host = g_devmap[h].host;
      *size = g_devmap[h].size;
      /* keep the probe chain intact: a tombstone, reused by the next put */
      g_devmap[h].dev = QV_TOMB;
      found = 1;
      break;
    }
  }
  pthread_mutex_unlock(&g_devmap_mu);
  return found;
}

/* parallel regions that run on the device side: region id -> construct */
#define QV_REGIONS 65536
static struct { _Atomic int64_t region; int32_t dev; int32_t strided; int64_t construct; uintptr_t unused; } g_regions[QV_REGIONS];

/* ---- psource and map names ---- */

/* ";file;function;line;col;;" with real content (not the "unknown" of builds without -g) */
static int32_t intern_psource(const char *ps) {
  if (!ps || !*ps || strstr(ps, ";unknown;unknown;")) return -1;
  return qv_strintern(ps);
}

/* ";<clause text>;file;line;col;;" -> clause text and the variable it names */
static void map_name(const void *raw, int32_t *var, int32_t *clause) {
  *var = *clause = -1;
  const char *s = (const char *)raw;
  if (!s || s[0] != ';') return;
  const char *b = s + 1, *e = strchr(b, ';');
  if (!e || (e - b == 7 && !strncmp(b, "unknown", 7))) return; /* implicit parent entries */
  *clause = qv_strintern_n(b, (size_t)(e - b));
  const char *v = b;
  size_t n = 0;
  while (v + n < e && v[n] != '[') n++;
  while (n && v[n - 1] == ' ') n--;
  *var = qv_strintern_n(v, n);
}

static void set_pending(qv_tls *t, int entry, int nowait, qv_ident_t *loc, int32_t n, void **bases,
                        void **ptrs, int64_t *sizes, int64_t *types, void **names) {
  t->pend.active = 1;
  t->pend.entry = entry;
  t->pend.nowait = nowait;
  t->pend.psource = loc ? loc->psource : NULL;
  t->pend.nargs = n;
  t->pend.bases = bases;
  t->pend.ptrs = ptrs;
  t->pend.sizes = sizes;
  t->pend.types = types;
  t->pend.names = names;
  t->pend.data_end_of = 0;
  t->pend.data_end_id = -1;
}

/* ---- device images ---- */

static pthread_mutex_t g_img_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_img_seen[16][64];
static int g_nimg;

static int img_cb(struct dl_phdr_info *info, size_t sz, void *arg) {
  (void)sz;
  int *added = arg;
  const char *name = info->dlpi_name;
  if (!name || strncmp(name, "/tmp/tmpfile_", 13) != 0 || strlen(name) >= 64) return 0;
  for (int i = 0; i < g_nimg; i++)
    if (strcmp(g_img_seen[i], name) == 0) return 0;
  if (g_nimg >= 16) return 0;
  strcpy(g_img_seen[g_nimg], name);
  char dst[4096];
  snprintf(dst, sizeof dst, "%s/r%d.devimg%d.so", qv_raw_dir(), qv_rank(), g_nimg);
  g_nimg++;
  int in = open(name, O_RDONLY | O_CLOEXEC);
  if (in >= 0) {
    struct stat st;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out >= 0 && fstat(in, &st) == 0) {
      off_t off = 0;
      while (off < st.st_size && sendfile(out, in, &off, (size_t)(st.st_size - off)) > 0) {
      }
    }
    if (out >= 0) close(out);
    close(in);
    char kv[4200];
    snprintf(kv, sizeof kv, "%s %s", name, dst);
    qv_info("devimg[]", kv);
    unlink(name); /* mapped already; the runtime never removes it */
  }
  (*added)++;
  return 0;
}

static void scan_device_images(void) {
  if (!qv_rec) return;
  qv_t.in_tool++;
  pthread_mutex_lock(&g_img_mu);
  int added = 0;
  dl_iterate_phdr(img_cb, &added);
  pthread_mutex_unlock(&g_img_mu);
  if (added) qv_write_modules();
  qv_t.in_tool--;
  qv_modules_refresh();
}

/* ---- OMPT callbacks ---- */

/* HOST_SYNC_ONLY: SYNC rows (fork, implicit task, barriers, join, mutexes, taskwait/taskgroup,
 * flush, worksharing, masked) are written for host threads only, never inside a kernel. The
 * checkers order only host-side rows with them (replay/threads/omp_order.py, happens_before.py);
 * every device-side event of a kernel belongs to the context of its construct, which its
 * CONSTRUCT_BEGIN/END (or its target task) already orders. A many-kernel program otherwise wrote
 * 13 such rows per `teams distribute parallel for` region on 2 threads, half of its log
 * (docs/record.md). The callbacks still run: they end the thread's pending access runs and
 * switch a worker between the host and the device side. */

static int g_devices;

static void on_device_initialize(int device_num, const char *type, ompt_device_t *device,
                                 ompt_function_lookup_t lookup, const char *documentation) {
  (void)type, (void)device, (void)lookup, (void)documentation;
  qv_modules_refresh();
  if (device_num + 1 > g_devices) {
    g_devices = device_num + 1;
    qv_info_i64("devices", g_devices);
  }
}

static void on_device_load(int device_num, const char *filename, int64_t offset, void *vma, size_t bytes,
                           void *host_addr, void *device_addr, uint64_t module_id) {
  (void)device_num, (void)filename, (void)offset, (void)vma, (void)bytes, (void)host_addr;
  (void)device_addr, (void)module_id;
  scan_device_images();
}

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
                          ompt_data_t *task_data, ompt_data_t *target_task_data, ompt_data_t *target_data,
                          ompt_id_t *host_op_id, const void *codeptr_ra) {
  (void)host_op_id, (void)codeptr_ra;
  CB_ENTER(t);
  int base = kind > 8 ? (int)kind - 8 : (int)kind;
  int nowait = kind > 8 || (t->pend.active && t->pend.nowait);
  int ck = base == 1 ? QV_C_TARGET : base == 2 ? QV_C_ENTER : base == 3 ? QV_C_EXIT : QV_C_UPDATE;
  if (ck == QV_C_EXIT && t->pend.active && t->pend.data_end_of) ck = QV_C_DATA_END;
  int64_t task = target_task_of(target_task_data);
  if (task < 0) task = target_task_of(task_data); /* nowait: the helper runs inside the target task */
  qv_event_t e = QV_EVENT_INIT;
  e.device = device_num;
  e.op = ck;
  e.id2 = task;
  if (endpoint == ompt_scope_begin) {
    int64_t id = atomic_fetch_add(&g_construct_id, 1);
    target_data->value = (uint64_t)id;
    t->cur_construct = id;
    t->cur_device = device_num;
    t->cur_task = task;
    t->cur_nowait = nowait;
    t->cur_loc_str = t->pend.active ? intern_psource(t->pend.psource) : -1;
    t->last_construct = id;
    e.kind = QV_K_CONSTRUCT_BEGIN;
    e.id = id;
    e.aux = (nowait ? 1 : 0) | (has_dep(task) ? 2 : 0);
    e.aux2 = ck == QV_C_DATA_END ? t->pend.data_end_id : 0;
    e.loc_str = t->cur_loc_str;
    qv_emit(&e);
    t->nargs = 0;
    if (!t->pend.active) return;
    int n = t->pend.nargs;
    for (int i = 0; i < n; i++) {
      int32_t var = -1, clause = -1;
      if (t->pend.names) map_name(t->pend.names[i], &var, &clause);
      uintptr_t lo = (uintptr_t)t->pend.ptrs[i];
      uint64_t size = (uint64_t)t->pend.sizes[i];
      uint64_t type = (uint64_t)t->pend.types[i];
      if (i < QV_MAX_ARGS) {
        t->arg_names[i] = var;
        t->arg_lo[i] = lo;
        t->arg_hi[i] = lo + size;
        t->nargs = i + 1;
      }
      qv_event_t m = QV_EVENT_INIT;
      m.kind = QV_K_MAP_CLAUSE;
      m.id = id;
      m.device = device_num;
      m.addr = lo;
      m.addr2 = (uintptr_t)t->pend.bases[i];
      m.size = size;
      m.op = (int32_t)(type & 0xffffffffu);
      m.id2 = (int64_t)(type >> 48) - 1; /* MEMBER_OF: index of the parent item, -1 = none */
      m.name = var;
      m.aux = i;
      m.aux2 = clause;
      m.flags = clause >= 0 ? QV_F_AUX2_STR : 0;
      m.loc_str = t->cur_loc_str;
      qv_emit(&m);
    }
  } else {
    e.kind = QV_K_CONSTRUCT_END;
    e.id = (int64_t)target_data->value;
    e.loc_str = t->cur_loc_str;
    qv_emit(&e);
    t->cur_construct = -1;
    t->cur_loc_str = -1;
    t->cur_task = -1;
    t->nargs = 0;
    /* a killed program keeps everything up to its constructs of the last millisecond */
    int64_t now = qv_now();
    if (now - t->flushed_at >= QV_CONSTRUCT_FLUSH_NS) {
      t->flushed_at = now;
      qv_flush_thread();
    }
  }
}

/* Is `dev` inside a live device copy? Linear scan: only asked for transfers, which are rare. */
static int in_any_devmap(uintptr_t dev) {
  int found = 0;
  pthread_mutex_lock(&g_devmap_mu);
  /* the usual case first: a transfer of a whole mapped section starts at its device copy, the key of
   * its entry (one probe chain instead of a scan of all QV_DEVMAP slots at every transfer: a program
   * of many small kernels with map clauses transfers several times per kernel) */
  size_t h = (dev >> 4) % QV_DEVMAP;
  for (size_t i = 0; i < QV_DEVMAP && g_devmap[h].dev; i++, h = (h + 1) % QV_DEVMAP)
    if (g_devmap[h].dev == dev) {
      found = g_devmap[h].size > 0;
      break;
    }
  for (size_t i = 0; i < QV_DEVMAP && !found; i++)
    if (g_devmap[i].dev && g_devmap[i].dev != QV_TOMB && g_devmap[i].dev <= dev &&
        dev < g_devmap[i].dev + g_devmap[i].size)
      found = 1;
  pthread_mutex_unlock(&g_devmap_mu);
  return found;
}

/* A transfer to/from device memory that no alloc produced: a `declare target` variable,
 * whose device copy lives in the device image. Say so once with an ASSOCIATE (aux 1). */
static int32_t name_of_host(const qv_tls *t, uintptr_t h);

static void associate_if_unknown(qv_tls *t, const qv_event_t *xfer) {
  if (!xfer->addr || !xfer->addr2 || in_any_devmap(xfer->addr2)) return;
  devmap_put(xfer->addr2, xfer->addr, xfer->size);
  qv_track_host(xfer->addr, xfer->addr + xfer->size);
  qv_track_device(xfer->addr2, xfer->addr2 + xfer->size);
  qv_event_t a = *xfer;
  a.op = 5;
  a.aux = 1;
  a.name = name_of_host(t, a.addr);
  a.time_ns = xfer->time_ns ? xfer->time_ns - 1 : 0;
  qv_emit(&a);
}

static int32_t name_of_host(const qv_tls *t, uintptr_t h) {
  int32_t best = -1;
  uintptr_t best_size = (uintptr_t)-1;
  for (int i = 0; i < t->nargs; i++) {
    if (h >= t->arg_lo[i] && h < t->arg_hi[i] && t->arg_hi[i] - t->arg_lo[i] < best_size) {
      best = t->arg_names[i];
      best_size = t->arg_hi[i] - t->arg_lo[i];
    }
  }
  if (best < 0) /* zero-length sections (pointer attachment) */
    for (int i = 0; i < t->nargs; i++)
      if (h == t->arg_lo[i]) return t->arg_names[i];
  return best;
}

static void on_data_op_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_task_data,
                           ompt_data_t *target_data, ompt_id_t *host_op_id, ompt_target_data_op_t optype,
                           void *src_addr, int src_device_num, void *dest_addr, int dest_device_num,
                           size_t bytes, const void *codeptr_ra) {
  (void)host_op_id, (void)codeptr_ra;
  CB_ENTER(t);
  if (endpoint == ompt_scope_begin) {
    t->dop_t0 = qv_stamp();
    return;
  }
  int op = (int)optype & 0xf;
  int in_construct = t->cur_construct >= 0;
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_DATA_OP;
  e.time_ns = t->dop_t0 ? t->dop_t0 : 0;
  /* the op's duration (FORMAT.md: DATA_OP aux); an associate keeps aux for "inferred" */
  if (t->dop_t0 && op != 5) {
    int64_t now = qv_stamp();
    e.aux = now > t->dop_t0 ? now - t->dop_t0 : 1;
  }
  t->dop_t0 = 0;
  e.op = op;
  e.size = bytes;
  /* device memory routines (omp_target_alloc/memcpy/...) run outside any construct */
  e.id = in_construct && target_data ? (int64_t)target_data->value : -1;
  e.id2 = target_task_of(target_task_data);
  if (e.id2 < 0 && in_construct) e.id2 = t->cur_task;
  e.loc_str = in_construct ? t->cur_loc_str : -1;
  if (!in_construct) {
    e.pc = (uintptr_t)codeptr_ra;
    e.flags = QV_F_PC_RET;
  }
  uintptr_t src = (uintptr_t)src_addr, dst = (uintptr_t)dest_addr;
  switch (op) {
    case 1: /* alloc */
    case 5: /* associate */
      e.addr = src;
      e.addr2 = dst;
      e.device = dest_device_num;
      devmap_put(dst, src, bytes);
      if (src) qv_track_host(src, src + bytes);
      qv_track_device(dst, dst + bytes);
      break;
    case 2: /* to device */
      e.addr = src;
      e.addr2 = dst;
      e.device = dest_device_num;
      associate_if_unknown(t, &e);
      break;
    case 3: /* from device */
      e.addr = dst;
      e.addr2 = src;
      e.device = src_device_num;
      associate_if_unknown(t, &e);
      break;
    default: { /* delete / disassociate: only the device address is given */
      uintptr_t host = 0, size = 0;
      e.addr2 = src;
      e.device = src_device_num;
      if (devmap_take(src, &host, &size)) {
        e.addr = host;
        if (!e.size) e.size = size;
        qv_untrack_device(src, src + size);
      } else if (dst) {
        e.addr = dst;
      }
    }
  }
  if (e.device < 0 || e.device >= 1 << 20) e.device = t->cur_device;
  e.name = name_of_host(t, e.addr);
  qv_emit(&e);
}

static void on_submit_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_data, ompt_id_t *host_op_id,
                          unsigned int requested_num_teams) {
  (void)host_op_id;
  CB_ENTER(t);
  if (endpoint == ompt_scope_begin) {
    qv_event_t e = QV_EVENT_INIT;
    e.kind = QV_K_KERNEL;
    e.op = QV_C_TARGET;
    e.id = target_data ? (int64_t)target_data->value : t->cur_construct;
    e.id2 = t->cur_task;
    e.device = t->cur_device;
    e.loc_str = t->cur_loc_str;
    e.aux = requested_num_teams;
    qv_emit(&e);
    uintptr_t hi = t->kernel_frame ? t->kernel_frame : (uintptr_t)__builtin_frame_address(0) + 256;
    qv_device_enter(t, t->cur_device, e.id, hi, !t->cur_nowait);
  } else {
    qv_device_leave(t);
  }
}

static void on_parallel_begin(ompt_data_t *encountering_task_data, const ompt_frame_t *encountering_task_frame,
                              ompt_data_t *parallel_data, unsigned int requested_parallelism, int flags,
                              const void *codeptr_ra) {
  (void)encountering_task_data, (void)encountering_task_frame, (void)requested_parallelism, (void)flags;
  CB_ENTER(t);
  int64_t id = atomic_fetch_add(&g_region_id, 1) + 1;
  parallel_data->value = (uint64_t)id;
  size_t k = (size_t)id % QV_REGIONS;
  g_regions[k].dev = t->dev;
  g_regions[k].construct = t->construct;
  g_regions[k].strided = t->c.strided;
  atomic_store_explicit(&g_regions[k].region, id, memory_order_release);
  if (t->dev >= 0) return; /* SYNC rows are host-side only (see HOST_SYNC_ONLY) */
  /* the fork: everything the team does is ordered after what this thread did before */
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_SYNC;
  e.op = QV_S_PARALLEL_BEGIN;
  e.id = id;
  e.aux = t->dev >= 0 ? t->construct : -1;
  e.device = t->dev;
  e.pc = (uintptr_t)codeptr_ra;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

/* the join: the encountering thread continues after every thread of the team arrived at the
 * region's closing barrier (the replay orders those arrivals before this event) */
static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data, int flags,
                            const void *codeptr_ra) {
  (void)encountering_task_data, (void)flags;
  CB_ENTER(t);
  if (t->dev >= 0) return; /* HOST_SYNC_ONLY */
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_SYNC;
  e.op = QV_S_PARALLEL_END;
  e.id = parallel_data ? (int64_t)parallel_data->value : -1;
  e.aux = t->dev >= 0 ? t->construct : -1;
  e.device = t->dev;
  e.pc = (uintptr_t)codeptr_ra;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

/* locks, critical, ordered, atomic (when the runtime implements it with a lock): the k-th
 * release of a mutex happens before its (k+1)-th acquisition; `id` = wait id, `aux2` = the
 * ompt_mutex_t kind */
static void mutex_event(int op, ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra) {
  CB_ENTER(t);
  if (t->dev >= 0) return; /* HOST_SYNC_ONLY */
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_SYNC;
  e.op = op;
  e.id = (int64_t)wait_id;
  e.aux = t->dev >= 0 ? t->construct : -1;
  e.aux2 = (int64_t)kind;
  e.device = t->dev;
  e.pc = (uintptr_t)codeptr_ra;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra) {
  mutex_event(QV_S_MUTEX_ACQUIRED, kind, wait_id, codeptr_ra);
}

static void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra) {
  mutex_event(QV_S_MUTEX_RELEASED, kind, wait_id, codeptr_ra);
}

static void on_flush(ompt_data_t *thread_data, const void *codeptr_ra) {
  (void)thread_data;
  qv_tls *t = &qv_t;
  if (!qv_rec) return;
  qv_runs_flush(t);
  if (g_qvm_flush_at_flush) g_qvm_flush_at_flush();
  if (t->dev >= 0) return; /* host threads only: inside kernels they would only add volume */
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_SYNC;
  e.op = QV_S_FLUSH;
  e.id = t->region;
  e.aux = t->dev >= 0 ? t->construct : -1;
  e.device = t->dev;
  e.pc = (uintptr_t)codeptr_ra;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

/* worksharing constructs (for, sections, single executor / other, ...): `aux2` = ompt_work_t,
 * `size` = iteration / section count; their ordering comes from the barriers that end them
 * (absent with nowait) */
static void on_work(ompt_work_t work_type, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                    ompt_data_t *task_data, uint64_t count, const void *codeptr_ra) {
  (void)task_data;
  CB_ENTER(t);
  if (t->dev >= 0) return; /* host threads only: inside kernels they would only add volume */
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_SYNC;
  e.op = endpoint == ompt_scope_begin ? QV_S_WORK_BEGIN : QV_S_WORK_END;
  e.id = parallel_data && parallel_data->value ? (int64_t)parallel_data->value : t->region;
  e.aux = t->dev >= 0 ? t->construct : -1;
  e.aux2 = (int64_t)work_type;
  e.size = count;
  e.device = t->dev;
  e.pc = (uintptr_t)codeptr_ra;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

/* master / masked: no ordering of its own (no barrier), recorded for the reports */
static void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data,
                      const void *codeptr_ra) {
  (void)task_data;
  CB_ENTER(t);
  if (t->dev >= 0) return; /* host threads only: inside kernels they would only add volume */
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_SYNC;
  e.op = endpoint == ompt_scope_begin ? QV_S_MASKED_BEGIN : QV_S_MASKED_END;
  e.id = parallel_data && parallel_data->value ? (int64_t)parallel_data->value : t->region;
  e.aux = t->dev >= 0 ? t->construct : -1;
  e.device = t->dev;
  e.pc = (uintptr_t)codeptr_ra;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data,
                             unsigned int actual_parallelism, unsigned int index, int flags) {
  (void)actual_parallelism;
  CB_ENTER(t);
  if (flags & ompt_task_initial) return;
  if (endpoint == ompt_scope_begin) {
    t->region = parallel_data ? (int64_t)parallel_data->value : -1;
    /* remember the side this thread was on, restored at the end */
    task_data->value =
        t->dev >= 0 ? ((uint64_t)t->construct << 8) | ((uint64_t)(t->c.strided != 0) << 7) | (uint64_t)(t->dev + 1) : 0;
    int32_t dev = -1, strided = 0;
    int64_t construct = -1;
    if (parallel_data) {
      int64_t id = (int64_t)parallel_data->value;
      size_t k = (size_t)id % QV_REGIONS;
      if (atomic_load_explicit(&g_regions[k].region, memory_order_acquire) == id) {
        dev = g_regions[k].dev;
        construct = g_regions[k].construct;
        strided = g_regions[k].strided;
      }
    }
    if (dev >= 0 && t->dev < 0) { /* a worker joins a parallel region inside a kernel */
      if (!t->stk_top) { /* its whole stack is the kernel's: cached once per thread */
        pthread_attr_t attr;
        void *addr;
        size_t size;
        t->in_tool++;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
          if (pthread_attr_getstack(&attr, &addr, &size) == 0) t->stk_top = (uintptr_t)addr + size;
          pthread_attr_destroy(&attr);
        }
        t->in_tool--;
        if (!t->stk_top) t->stk_top = (uintptr_t)__builtin_frame_address(0) + 4096;
      }
      qv_device_enter(t, dev, construct, t->stk_top, strided);
    } else if (dev < 0 && t->dev >= 0) {
      qv_device_leave(t);
    }
    if (t->dev >= 0) return; /* HOST_SYNC_ONLY */
    /* this thread starts its part of the region (ordered after the fork) */
    qv_event_t e = QV_EVENT_INIT;
    e.kind = QV_K_SYNC;
    e.op = QV_S_IMPLICIT_TASK_BEGIN;
    e.id = t->region;
    e.aux = t->dev >= 0 ? t->construct : -1;
    e.aux2 = index;
    e.device = t->dev;
    qv_emit(&e);
  } else {
    uint64_t saved = task_data ? task_data->value : 0;
    if (saved) {
      if (t->dev < 0)
        qv_device_enter(t, (int32_t)(saved & 0x7f) - 1, (int64_t)(saved >> 8), t->stk_hi, (int)((saved >> 7) & 1));
    } else if (t->dev >= 0) {
      qv_device_leave(t);
    }
  }
}

static void on_task_create(ompt_data_t *encountering_task_data, const ompt_frame_t *encountering_task_frame,
                           ompt_data_t *new_task_data, int flags, int has_dependences, const void *codeptr_ra) {
  (void)encountering_task_frame, (void)has_dependences;
  CB_ENTER(t);
  int64_t id = atomic_fetch_add(&g_task_id, 1) + 1;
  int is_target = (flags & ompt_task_target) != 0;
  new_task_data->value = ((uint64_t)id << 1) | (uint64_t)is_target;
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_TASK_CREATE;
  e.id = id;
  e.id2 = task_of(encountering_task_data);
  e.op = ((flags & ompt_task_explicit) ? 1 : 0) | (is_target ? 2 : 0) | ((flags & ompt_task_undeferred) ? 4 : 0) |
         ((flags & ompt_task_initial) ? 8 : 0) | ((flags & ompt_task_implicit) ? 16 : 0);
  e.pc = (uintptr_t)codeptr_ra;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

static void on_dependences(ompt_data_t *task_data, const ompt_dependence_t *deps, int ndeps) {
  CB_ENTER(t);
  int64_t task = task_of(task_data);
  mark_dep(task);
  for (int i = 0; i < ndeps; i++) {
    qv_event_t e = QV_EVENT_INIT;
    e.kind = QV_K_TASK_DEPEND;
    e.id = task;
    e.addr = (uintptr_t)deps[i].variable.ptr;
    switch (deps[i].dependence_type) {
      case ompt_dependence_type_in: e.op = 1; break;
      case ompt_dependence_type_out: e.op = 2; break;
      case ompt_dependence_type_mutexinoutset: e.op = 4; break;
      case ompt_dependence_type_inoutset: e.op = 5; break;
      default: e.op = 3;
    }
    qv_emit(&e);
  }
}

static void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
                             ompt_data_t *next_task_data) {
  CB_ENTER(t);
  qv_event_t e = QV_EVENT_INIT;
  int64_t prior = task_of(prior_task_data), next = task_of(next_task_data);
  if (prior >= 0 && (prior_task_status == ompt_task_complete || prior_task_status == ompt_task_cancel ||
                     prior_task_status == ompt_task_late_fulfill)) {
    e.kind = QV_K_TASK_END;
    e.id = prior;
    qv_emit(&e);
  }
  if (next >= 0 && prior_task_status != ompt_task_late_fulfill) {
    e.kind = QV_K_TASK_BEGIN;
    e.id = next;
    e.time_ns = 0;
    qv_emit(&e);
  }
}

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                           ompt_data_t *task_data, const void *codeptr_ra) {
  CB_ENTER(t);
  int op;
  if (kind == ompt_sync_region_taskwait) op = 1;
  else if (kind == ompt_sync_region_taskgroup) op = endpoint == ompt_scope_begin ? 3 : 4;
  else if (kind == ompt_sync_region_reduction) return;
  else op = 2;
  /* taskwait: at its end (everything awaited is done); taskgroup: begin and end;
   * barriers: arrival (aux2 0) and departure (aux2 1); a worker's departure from the
   * implicit barrier closing a parallel region is only seen when it is next woken. */
  if (op == 1 && endpoint == ompt_scope_begin) return;
  if (t->dev >= 0) return; /* HOST_SYNC_ONLY */
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_SYNC;
  e.op = op;
  e.id = op == 2 ? (parallel_data && parallel_data->value ? (int64_t)parallel_data->value : t->region)
                 : task_of(task_data);
  e.aux = t->dev >= 0 ? t->construct : -1;
  e.aux2 = endpoint == ompt_scope_begin ? 0 : 1;
  e.id2 = (int64_t)kind; /* ompt_sync_region_t: explicit / implicit (workshare, parallel) barrier ... */
  e.device = t->dev;
  e.pc = (uintptr_t)codeptr_ra;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
}

static void on_thread_end(ompt_data_t *thread_data) {
  (void)thread_data;
  CB_ENTER(t);
  qv_flush_thread();
}

static int tool_init(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
  (void)initial_device_num, (void)tool_data;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  if (!set) return 0;
#define SET(ev, fn) set(ompt_callback_##ev, (ompt_callback_t)fn)
  SET(device_initialize, on_device_initialize);
  SET(device_load, on_device_load);
  SET(target_emi, on_target_emi);
  SET(target_data_op_emi, on_data_op_emi);
  SET(target_submit_emi, on_submit_emi);
  SET(parallel_begin, on_parallel_begin);
  SET(implicit_task, on_implicit_task);
  SET(task_create, on_task_create);
  SET(dependences, on_dependences);
  SET(task_schedule, on_task_schedule);
  SET(sync_region, on_sync_region);
  SET(thread_end, on_thread_end);
  SET(parallel_end, on_parallel_end);
  SET(mutex_acquired, on_mutex_acquired);
  SET(mutex_released, on_mutex_released);
  SET(flush, on_flush);
  SET(work, on_work);
  SET(masked, on_masked);
#undef SET
  g_qvm_flush = (void (*)(void))dlsym(RTLD_DEFAULT, "qvm_runs_flush");
  g_qvm_flush_at_flush = (void (*)(void))dlsym(RTLD_DEFAULT, "qvm_access_runs_flush");
  if (!g_qvm_flush_at_flush) g_qvm_flush_at_flush = g_qvm_flush;
  g_ompt_on = 1;
  qv_info("ompt", "1");
  return 1;
}

static void tool_fini(ompt_data_t *tool_data) {
  (void)tool_data;
  if (qv_rec) qv_runs_flush(&qv_t);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  (void)omp_version, (void)runtime_version;
  static ompt_start_tool_result_t result = {tool_init, tool_fini, {0}};
  return qv_init() ? &result : NULL;
}

/* ---- offload entry-point wrappers ---- */

static void *real_sym(const char *name) {
  qv_t.in_tool++;
  void *p = dlvsym(RTLD_NEXT, name, "VERS1.0");
  if (!p) p = dlsym(RTLD_NEXT, name);
  qv_t.in_tool--;
  if (!p) {
    fprintf(stderr, "quiver: %s not found in the offload runtime\n", name);
    _exit(127);
  }
  return p;
}

#define REAL(type, name)                     \
  static type real;                          \
  if (!real) real = (type)real_sym(#name)

typedef void (*mapper_fn)(qv_ident_t *, int64_t, int32_t, void **, void **, int64_t *, int64_t *, void **,
                          void **);
typedef void (*mapper_nowait_fn)(qv_ident_t *, int64_t, int32_t, void **, void **, int64_t *, int64_t *,
                                 void **, void **, int32_t, void *, int32_t, void *);
typedef int (*kernel_fn)(qv_ident_t *, int64_t, int32_t, int32_t, void *, qv_kargs_t *);
typedef int (*kernel_nowait_fn)(qv_ident_t *, int64_t, int32_t, int32_t, void *, qv_kargs_t *, int32_t, void *,
                                int32_t, void *);

static void open_push(qv_tls *t, const char *src, int64_t id) {
  if (!src) return;
  if (t->nopen == 16) {
    memmove(t->open_src, t->open_src + 1, 15 * sizeof t->open_src[0]);
    memmove(t->open_id, t->open_id + 1, 15 * sizeof t->open_id[0]);
    t->nopen = 15;
  }
  t->open_src[t->nopen] = src;
  t->open_id[t->nopen] = id;
  t->nopen++;
}

/* An end mapper with the psource of a still-open begin closes a `target data` region. */
static void open_match(qv_tls *t, const char *src) {
  if (!src || strstr(src, ";unknown;unknown;")) return;
  for (int i = t->nopen - 1; i >= 0; i--) {
    if (t->open_src[i] == src || strcmp(t->open_src[i], src) == 0) {
      t->pend.data_end_of = 1;
      t->pend.data_end_id = t->open_id[i];
      t->nopen = i;
      return;
    }
  }
}

#define WRAP_PRE(entry, nowait)                                                            \
  qv_tls *t = &qv_t;                                                                       \
  qv_pending saved = t->pend;                                                              \
  uintptr_t saved_frame = t->kernel_frame;                                                 \
  set_pending(t, entry, nowait, loc, n, bases, ptrs, sizes, types, names);               \
  t->last_construct = -1;                                                                  \
  t->in_rt++
#define WRAP_POST()          \
  t->in_rt--;                \
  t->pend = saved;           \
  t->kernel_frame = saved_frame

void __tgt_target_data_begin_mapper(qv_ident_t *loc, int64_t dev, int32_t n, void **bases, void **ptrs,
                                    int64_t *sizes, int64_t *types, void **names, void **mappers) {
  REAL(mapper_fn, __tgt_target_data_begin_mapper);
  WRAP_PRE(QV_C_ENTER, 0);
  real(loc, dev, n, bases, ptrs, sizes, types, names, mappers);
  if (t->last_construct >= 0 && loc) open_push(t, loc->psource, t->last_construct);
  WRAP_POST();
}

void __tgt_target_data_begin_nowait_mapper(qv_ident_t *loc, int64_t dev, int32_t n, void **bases, void **ptrs,
                                           int64_t *sizes, int64_t *types, void **names, void **mappers,
                                           int32_t dn, void *dl, int32_t nadn, void *nadl) {
  REAL(mapper_nowait_fn, __tgt_target_data_begin_nowait_mapper);
  WRAP_PRE(QV_C_ENTER, 1);
  real(loc, dev, n, bases, ptrs, sizes, types, names, mappers, dn, dl, nadn, nadl);
  WRAP_POST();
}

void __tgt_target_data_end_mapper(qv_ident_t *loc, int64_t dev, int32_t n, void **bases, void **ptrs,
                                  int64_t *sizes, int64_t *types, void **names, void **mappers) {
  REAL(mapper_fn, __tgt_target_data_end_mapper);
  WRAP_PRE(QV_C_EXIT, 0);
  if (loc) open_match(t, loc->psource);
  real(loc, dev, n, bases, ptrs, sizes, types, names, mappers);
  WRAP_POST();
}

void __tgt_target_data_end_nowait_mapper(qv_ident_t *loc, int64_t dev, int32_t n, void **bases, void **ptrs,
                                         int64_t *sizes, int64_t *types, void **names, void **mappers,
                                         int32_t dn, void *dl, int32_t nadn, void *nadl) {
  REAL(mapper_nowait_fn, __tgt_target_data_end_nowait_mapper);
  WRAP_PRE(QV_C_EXIT, 1);
  real(loc, dev, n, bases, ptrs, sizes, types, names, mappers, dn, dl, nadn, nadl);
  WRAP_POST();
}

void __tgt_target_data_update_mapper(qv_ident_t *loc, int64_t dev, int32_t n, void **bases, void **ptrs,
                                     int64_t *sizes, int64_t *types, void **names, void **mappers) {
  REAL(mapper_fn, __tgt_target_data_update_mapper);
  WRAP_PRE(QV_C_UPDATE, 0);
  real(loc, dev, n, bases, ptrs, sizes, types, names, mappers);
  WRAP_POST();
}

void __tgt_target_data_update_nowait_mapper(qv_ident_t *loc, int64_t dev, int32_t n, void **bases,
                                            void **ptrs, int64_t *sizes, int64_t *types, void **names,
                                            void **mappers, int32_t dn, void *dl, int32_t nadn, void *nadl) {
  REAL(mapper_nowait_fn, __tgt_target_data_update_nowait_mapper);
  WRAP_PRE(QV_C_UPDATE, 1);
  real(loc, dev, n, bases, ptrs, sizes, types, names, mappers, dn, dl, nadn, nadl);
  WRAP_POST();
}

int __tgt_target_kernel(qv_ident_t *loc, int64_t dev, int32_t nteams, int32_t tlimit, void *host_ptr,
                        qv_kargs_t *args) {
  REAL(kernel_fn, __tgt_target_kernel);
  int32_t n = args ? (int32_t)args->nargs : 0;
  void **bases = args ? args->bases : NULL, **ptrs = args ? args->ptrs : NULL;
  int64_t *sizes = args ? args->sizes : NULL, *types = args ? args->types : NULL;
  void **names = args ? args->names : NULL;
  WRAP_PRE(QV_C_TARGET, args && (args->flags & 1));
  /* frames below this one belong to the runtime and the kernel: the kernel's own stack */
  t->kernel_frame = (uintptr_t)__builtin_frame_address(0);
  int rc = real(loc, dev, nteams, tlimit, host_ptr, args);
  WRAP_POST();
  return rc;
}

int __tgt_target_kernel_nowait(qv_ident_t *loc, int64_t dev, int32_t nteams, int32_t tlimit, void *host_ptr,
                               qv_kargs_t *args, int32_t dn, void *dl, int32_t nadn, void *nadl) {
  REAL(kernel_nowait_fn, __tgt_target_kernel_nowait);
  int32_t n = args ? (int32_t)args->nargs : 0;
  void **bases = args ? args->bases : NULL, **ptrs = args ? args->ptrs : NULL;
  int64_t *sizes = args ? args->sizes : NULL, *types = args ? args->types : NULL;
  void **names = args ? args->names : NULL;
  WRAP_PRE(QV_C_TARGET, 1);
  t->kernel_frame = (uintptr_t)__builtin_frame_address(0);
  int rc = real(loc, dev, nteams, tlimit, host_ptr, args, dn, dl, nadn, nadl);
  WRAP_POST();
  return rc;
}

/* ---- library life cycle ---- */

static void crash_hook(void) { qv_runs_flush(&qv_t); }

static void at_exit_runs(void) {
  if (qv_rec) {
    qv_runs_flush(&qv_t);
    scan_device_images();
  }
}

__attribute__((constructor)) static void qv_omp_init(void) {
  if (!qv_init()) return;
  qv_set_crash_hook(crash_hook);
  char exe[4096];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (k > 0) {
    exe[k] = 0;
    qv_info("exe", exe);
  }
  qv_write_modules();
  qv_modules_refresh();
  atexit(at_exit_runs);
  qv_access_init();
  qv_rec = 1;
}
