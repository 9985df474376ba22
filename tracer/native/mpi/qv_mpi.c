/* qv_mpi.c - the PMPI tracer: records windows, RMA calls, RMA synchronisation,
 * request completion and the point-to-point / collective calls that order
 * ranks, as formats/FORMAT.md (MPI section) describes them.
 *
 * Why PMPI: every MPI implementation offers it, and linking this library
 * before libmpi (or LD_PRELOAD) catches every call of the program, including
 * the MPI-4 large-count `_c` variants that mpi4py uses.
 * Ranks are comm-world ranks everywhere in the log: targets, PSCW groups and
 * message peers are translated here, once, while the communicator is known.
 * Window ids are agreed on by the ranks of the window (an allreduce at
 * creation), so they are the same on every rank.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qv_mpi_int.h"

#define API __attribute__((visibility("default")))
#define RA ((uintptr_t)__builtin_return_address(0))
#define ON (__builtin_expect(qvm_on, 0))

enum { RMA_PUT = 1, RMA_GET, RMA_ACC, RMA_GET_ACC, RMA_FOP, RMA_CAS, RMA_RPUT, RMA_RGET, RMA_RACC, RMA_RGET_ACC };
enum {
  S_FENCE = 1, S_LOCK, S_UNLOCK, S_LOCK_ALL, S_UNLOCK_ALL, S_FLUSH, S_FLUSH_LOCAL, S_FLUSH_ALL,
  S_FLUSH_LOCAL_ALL, S_POST, S_START, S_COMPLETE, S_WAIT, S_SYNC
};
enum { M_SEND = 1, M_RECV, M_BARRIER, M_COLL };
enum { FL_CREATE = 1, FL_ALLOCATE, FL_DYNAMIC, FL_SHARED };

/* ---------------------------------------------------------------- events */

static void emit(qv_event_t *e, uintptr_t pc) {
  e->pc = pc;
  e->flags |= QV_F_PC_RET;
  qv_emit(e);
}

/* Write everything this thread recorded so far. Called around synchronising calls: when a rank
 * crashes, the launcher kills the others while they wait in MPI, and their events must be on
 * disk by then (one write(2) per synchronising call). */
static void durable(void) {
  qvm_runs_flush();
  qv_flush_thread();
}

static void emit_durable(qv_event_t *e, uintptr_t pc) {
  emit(e, pc);
  qv_flush_thread();
}

/* ---------------------------------------------------------------- communicators */

#define QVM_MAX_COMMS 256

typedef struct {
  int used;
  MPI_Comm comm;
  int64_t id;
  int n;
  int *world; /* comm rank -> comm-world rank */
} qvm_comm;

static qvm_comm g_comms[QVM_MAX_COMMS];
static pthread_mutex_t g_comm_mu = PTHREAD_MUTEX_INITIALIZER;
static MPI_Group g_world_group = MPI_GROUP_NULL;

static int *translate_group(MPI_Group g, int n) {
  int *in = malloc(sizeof(int) * (size_t)(n ? n : 1)), *out = malloc(sizeof(int) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) in[i] = i;
  PMPI_Group_translate_ranks(g, n, in, g_world_group, out);
  free(in);
  return out;
}

/* The comm's entry (created on first use). Ids: world 0, others a hash of their member list. */
static qvm_comm *comm_info(MPI_Comm comm) {
  pthread_mutex_lock(&g_comm_mu);
  qvm_comm *free_slot = NULL, *c = NULL;
  for (int i = 0; i < QVM_MAX_COMMS; i++) {
    if (g_comms[i].used && g_comms[i].comm == comm) {
      c = &g_comms[i];
      goto out;
    }
    if (!g_comms[i].used && !free_slot) free_slot = &g_comms[i];
  }
  if (!free_slot) goto out;
  c = free_slot;
  MPI_Group g;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) PMPI_Comm_remote_group(comm, &g); else PMPI_Comm_group(comm, &g);
  PMPI_Group_size(g, &c->n);
  c->world = translate_group(g, c->n);
  PMPI_Group_free(&g);
  if (comm == MPI_COMM_WORLD) {
    c->id = 0;
  } else {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)inter;
    for (int i = 0; i < c->n; i++) h = (h ^ (uint64_t)(uint32_t)c->world[i]) * 1099511628211ULL;
    c->id = (int64_t)(h & 0x7fffffffffffULL) | 1;
  }
  c->comm = comm;
  c->used = 1;
out:
  pthread_mutex_unlock(&g_comm_mu);
  return c;
}

static int world_of(MPI_Comm comm, int r) {
  if (r < 0) return -1;
  qvm_comm *c = comm_info(comm);
  return c && r < c->n ? c->world[r] : r;
}

static void comm_forget(MPI_Comm comm) {
  pthread_mutex_lock(&g_comm_mu);
  for (int i = 0; i < QVM_MAX_COMMS; i++)
    if (g_comms[i].used && g_comms[i].comm == comm) {
      free(g_comms[i].world);
      g_comms[i].used = 0;
    }
  pthread_mutex_unlock(&g_comm_mu);
}

/* ---------------------------------------------------------------- windows */

#define QVM_MAX_WINS 256
#define QVM_MAX_ATTACH 64

typedef struct {
  int used;
  MPI_Win win;
  int64_t id;
  int flavor;
  int n;
  int *world;       /* window comm rank -> comm-world rank */
  MPI_Aint *du;     /* disp_unit of every rank of the window */
  uintptr_t att_lo[QVM_MAX_ATTACH], att_hi[QVM_MAX_ATTACH];
  int natt;
} qvm_win;

static qvm_win g_wins[QVM_MAX_WINS];
static pthread_mutex_t g_win_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t g_next_win;

static qvm_win *win_info(MPI_Win win) {
  for (int i = 0; i < QVM_MAX_WINS; i++)
    if (g_wins[i].used && g_wins[i].win == win) return &g_wins[i];
  return NULL;
}

static void win_register(MPI_Win win, MPI_Comm comm, void *base, MPI_Aint size, MPI_Aint du, int flavor,
                         uintptr_t pc) {
  int64_t mine = g_next_win, id = 0;
  PMPI_Allreduce(&mine, &id, 1, MPI_INT64_T, MPI_MAX, comm);
  g_next_win = id + 1;
  int n = 0;
  PMPI_Comm_size(comm, &n);
  MPI_Aint *dus = malloc(sizeof(MPI_Aint) * (size_t)n);
  PMPI_Allgather(&du, 1, MPI_AINT, dus, 1, MPI_AINT, comm);
  MPI_Group g;
  PMPI_Comm_group(comm, &g);
  int *world = translate_group(g, n);
  PMPI_Group_free(&g);
  pthread_mutex_lock(&g_win_mu);
  qvm_win *w = NULL;
  for (int i = 0; i < QVM_MAX_WINS && !w; i++)
    if (!g_wins[i].used) w = &g_wins[i];
  if (w) {
    memset(w, 0, sizeof *w);
    *w = (qvm_win){.used = 1, .win = win, .id = id, .flavor = flavor, .n = n, .world = world, .du = dus};
  } else {
    free(world);
    free(dus);
  }
  pthread_mutex_unlock(&g_win_mu);
  if (!ON) return;
  qvm_runs_flush();
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QVM_K_WIN_CREATE;
  e.id = id;
  e.addr = (uint64_t)(uintptr_t)base;
  e.size = (uint64_t)size;
  e.aux = du;
  e.op = flavor;
  e.aux2 = n;
  emit(&e, pc);
  if (base && size > 0) qvm_track((uintptr_t)base, (uintptr_t)base + (uintptr_t)size, QVM_TAG_WINDOW, id, -1, -1);
}

/* ---------------------------------------------------------------- completed local buffers */

/* With threads (MPI_Init_thread above MPI_THREAD_SINGLE), another thread may touch an RMA call's
 * buffer after the call completed in real time but unordered with the completion: the buffers stay
 * watched until MPI_Win_free, and the replay decides with happens-before. */
static int g_keep_origins;

static void origin_done(int64_t win, int64_t target, int64_t req) {
  if (!g_keep_origins) qvm_untrack(QVM_TAG_ORIGIN, win, target, req);
}

/* ---------------------------------------------------------------- requests */

#define QVM_REQ_CAP 4096 /* power of two */

enum { RQ_RMA = 1, RQ_RGET = 2, RQ_IRECV = 3 };

typedef struct {
  MPI_Request h;
  int kind;   /* 0 = empty slot, -1 = tombstone */
  int64_t id; /* request id in the log (RMA) */
  MPI_Comm comm;
} qvm_req;

static qvm_req g_reqs[QVM_REQ_CAP];
static _Atomic int g_nreqs;
static pthread_mutex_t g_req_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int64_t g_next_req;

static inline size_t req_hash(MPI_Request h) { return ((uint32_t)(uintptr_t)h * 2654435761u) & (QVM_REQ_CAP - 1); }

static void req_add(MPI_Request h, int kind, int64_t id, MPI_Comm comm) {
  if (h == MPI_REQUEST_NULL) return;
  pthread_mutex_lock(&g_req_mu);
  if (g_nreqs < QVM_REQ_CAP / 2) {
    size_t j = req_hash(h);
    while (g_reqs[j].kind > 0 && g_reqs[j].h != h) j = (j + 1) & (QVM_REQ_CAP - 1);
    if (g_reqs[j].kind <= 0) g_nreqs++;
    g_reqs[j] = (qvm_req){h, kind, id, comm};
  }
  pthread_mutex_unlock(&g_req_mu);
}

/* Take the entry of handle h out of the table (kind 0 when not tracked). */
static qvm_req req_take(MPI_Request h) {
  qvm_req out = {0};
  if (!atomic_load_explicit(&g_nreqs, memory_order_relaxed) || h == MPI_REQUEST_NULL) return out;
  pthread_mutex_lock(&g_req_mu);
  size_t j = req_hash(h);
  for (size_t k = 0; k < QVM_REQ_CAP && g_reqs[j].kind != 0; k++, j = (j + 1) & (QVM_REQ_CAP - 1)) {
    if (g_reqs[j].kind > 0 && g_reqs[j].h == h) {
      out = g_reqs[j];
      g_reqs[j].kind = -1;
      g_nreqs--;
      break;
    }
  }
  if (!g_nreqs) memset(g_reqs, 0, sizeof g_reqs); /* clear tombstones */
  pthread_mutex_unlock(&g_req_mu);
  return out;
}

static int req_peek_kind(MPI_Request h) {
  if (!atomic_load_explicit(&g_nreqs, memory_order_relaxed) || h == MPI_REQUEST_NULL) return 0;
  int kind = 0;
  pthread_mutex_lock(&g_req_mu);
  size_t j = req_hash(h);
  for (size_t k = 0; k < QVM_REQ_CAP && g_reqs[j].kind != 0; k++, j = (j + 1) & (QVM_REQ_CAP - 1))
    if (g_reqs[j].kind > 0 && g_reqs[j].h == h) {
      kind = g_reqs[j].kind;
      break;
    }
  pthread_mutex_unlock(&g_req_mu);
  return kind;
}

static void message(int kind, int peer_world, int tag, int64_t comm_id, uintptr_t pc) {
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QVM_K_MPI_MESSAGE;
  e.op = kind;
  e.id2 = peer_world;
  e.aux = tag;
  e.aux2 = comm_id;
  emit_durable(&e, pc);
}

static void recv_done(MPI_Comm comm, const MPI_Status *st, uintptr_t pc) {
  if (!st || st == MPI_STATUS_IGNORE || st->MPI_SOURCE < 0) return;
  qvm_comm *c = comm_info(comm);
  message(M_RECV, world_of(comm, st->MPI_SOURCE), st->MPI_TAG, c ? c->id : -1, pc);
}

/* A request the program completed: log it if it was ours. */
static void req_done(MPI_Request h, const MPI_Status *st, uintptr_t pc) {
  qvm_req r = req_take(h);
  if (r.kind == RQ_RMA || r.kind == RQ_RGET) {
    qv_event_t e = QV_EVENT_INIT;
    e.kind = QVM_K_MPI_REQUEST;
    e.aux2 = r.id;
    e.op = r.kind;
    emit_durable(&e, pc);
    origin_done(-1, -1, r.id);
  } else if (r.kind == RQ_IRECV) {
    recv_done(r.comm, st, pc);
  }
}

/* ---------------------------------------------------------------- RMA calls */

/* [offset, offset+bytes) that count elements of dt touch, relative to the buffer/displacement. */
static void span(MPI_Count count, MPI_Datatype dt, MPI_Aint *off, MPI_Aint *bytes) {
  *off = 0;
  *bytes = 0;
  if (count <= 0 || dt == MPI_DATATYPE_NULL) return;
  MPI_Count lb = 0, ext = 0, tlb = 0, text = 0;
  PMPI_Type_get_extent_x(dt, &lb, &ext);
  PMPI_Type_get_true_extent_x(dt, &tlb, &text);
  *off = (MPI_Aint)tlb;
  *bytes = (MPI_Aint)((count - 1) * ext + text);
}

/* A code per predefined datatype (the `device` column of RMA): accumulates are atomic with each
 * other only with the same basic datatype (MPI-4.0 12.7.1), so MPI_INT and MPI_FLOAT differ. */
static int basic_code(MPI_Datatype dt) {
  static const MPI_Datatype known[] = {
      MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
      MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
      MPI_LONG_DOUBLE, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
      MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_WCHAR, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_C_FLOAT_COMPLEX,
      MPI_C_DOUBLE_COMPLEX, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (dt == known[i]) return (int)i + 1;
  int s = 0;
  PMPI_Type_size(dt, &s);
  return 1000 + s; /* another named type: by size */
}

/* The type map of a datatype as blocks {offset, bytes, basic code}, adjacent blocks of one code
 * merged. Walks the constructors (MPI_Type_get_envelope / get_contents): contiguous, vector,
 * hvector, indexed, hindexed, indexed_block, hindexed_block, struct, resized, dup. */
#define QVM_MAX_BLOCKS 4096
typedef struct {
  MPI_Aint off[QVM_MAX_BLOCKS], len[QVM_MAX_BLOCKS];
  int code[QVM_MAX_BLOCKS];
  int n, overflow;
} qvm_typemap;

static void tm_add(qvm_typemap *m, MPI_Aint off, MPI_Aint len, int code) {
  if (len <= 0) return;
  if (m->n && m->code[m->n - 1] == code && m->off[m->n - 1] + m->len[m->n - 1] == off) {
    m->len[m->n - 1] += len;
    return;
  }
  if (m->n == QVM_MAX_BLOCKS) {
    m->overflow = 1;
    return;
  }
  m->off[m->n] = off;
  m->len[m->n] = len;
  m->code[m->n] = code;
  m->n++;
}

static MPI_Aint extent_of(MPI_Datatype dt) {
  MPI_Aint lb = 0, ext = 0;
  PMPI_Type_get_extent(dt, &lb, &ext);
  return ext;
}

static void tm_walk(qvm_typemap *m, MPI_Datatype dt, MPI_Aint at, int depth) {
  if (m->overflow || depth > 16) {
    m->overflow = 1;
    return;
  }
  int ni, na, nd, comb;
  if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
    m->overflow = 1;
    return;
  }
  if (comb == MPI_COMBINER_NAMED) {
    int s = 0;
    PMPI_Type_size(dt, &s);
    tm_add(m, at, s, basic_code(dt));
    return;
  }
  int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
  MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
  MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
  PMPI_Type_get_contents(dt, ni, na, nd, ints, aints, types);
  MPI_Aint ext = nd ? extent_of(types[0]) : 0;
  switch (comb) {
    case MPI_COMBINER_DUP: tm_walk(m, types[0], at, depth + 1); break;
    case MPI_COMBINER_RESIZED: tm_walk(m, types[0], at, depth + 1); break; /* lb/extent: only where copies start */
    case MPI_COMBINER_CONTIGUOUS:
      for (int i = 0; i < ints[0]; i++) tm_walk(m, types[0], at + i * ext, depth + 1);
      break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      MPI_Aint stride = comb == MPI_COMBINER_VECTOR ? ints[2] * ext : aints[0];
      for (int i = 0; i < ints[0]; i++)
        for (int j = 0; j < ints[1]; j++) tm_walk(m, types[0], at + i * stride + j * ext, depth + 1);
      break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
      for (int i = 0; i < ints[0]; i++) {
        MPI_Aint d = comb == MPI_COMBINER_INDEXED ? ints[1 + ints[0] + i] * ext : aints[i];
        for (int j = 0; j < ints[1 + i]; j++) tm_walk(m, types[0], at + d + j * ext, depth + 1);
      }
      break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
      for (int i = 0; i < ints[0]; i++) {
        MPI_Aint d = comb == MPI_COMBINER_INDEXED_BLOCK ? ints[2 + i] * ext : aints[i];
        for (int j = 0; j < ints[1]; j++) tm_walk(m, types[0], at + d + j * ext, depth + 1);
      }
      break;
    case MPI_COMBINER_STRUCT:
      for (int i = 0; i < ints[0]; i++) {
        MPI_Aint e = extent_of(types[i]);
        for (int j = 0; j < ints[1 + i]; j++) tm_walk(m, types[i], at + aints[i] + j * e, depth + 1);
      }
      break;
    default: m->overflow = 1; /* subarray, darray, ...: the call's whole span */
  }
  for (int i = 0; i < nd; i++) {
    int ci, ca, cd, cc;
    PMPI_Type_get_envelope(types[i], &ci, &ca, &cd, &cc);
    if (cc != MPI_COMBINER_NAMED) PMPI_Type_free(&types[i]);
  }
  free(ints);
  free(aints);
  free(types);
}

/* count elements of dt: their blocks (0 blocks = overflow: use the span) */
static void typemap(qvm_typemap *m, MPI_Count count, MPI_Datatype dt) {
  m->n = 0;
  m->overflow = 0;
  if (count <= 0 || dt == MPI_DATATYPE_NULL) return;
  MPI_Aint ext = extent_of(dt);
  for (MPI_Count i = 0; i < count && !m->overflow; i++) tm_walk(m, dt, (MPI_Aint)i * ext, 0);
  if (m->overflow) m->n = 0;
}

static int is_named(MPI_Datatype dt) {
  int ni, na, nd, comb;
  return dt != MPI_DATATYPE_NULL && PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
         comb == MPI_COMBINER_NAMED;
}

/* The type map of count elements of a derived datatype when it has at least `min` blocks (a single
 * block covers the span: no need to split), else 0. */
static int blocks_of(qvm_typemap *m, MPI_Count count, MPI_Datatype dt, int min) {
  if (is_named(dt)) return 0;
  typemap(m, count, dt);
  return m->n >= min;
}

enum { QVM_SIDE_TARGET, QVM_SIDE_ORIGIN, QVM_SIDE_RESULT };

/* One RMA event per block of a type map, copies of the call's row: a target block at displacement
 * base + offset (`aux`) with its basic-datatype code in `device` and no local buffers; an origin
 * (`addr`) or result (`addr2`) block at address base + offset with `device` -3 and no target bytes. */
static void emit_blocks(const qv_event_t *call, int side, const qvm_typemap *m, int64_t base, uintptr_t pc) {
  for (int b = 0; b < m->n; b++) {
    qv_event_t be = *call;
    be.addr = be.addr2 = 0;
    be.size = (uint64_t)m->len[b];
    if (side == QVM_SIDE_TARGET) {
      be.aux = base + m->off[b];
      be.device = m->code[b];
    } else {
      be.device = -3;
      if (side == QVM_SIDE_ORIGIN) be.addr = (uint64_t)(base + m->off[b]);
      else be.addr2 = (uint64_t)(base + m->off[b]);
    }
    emit(&be, pc);
  }
}

static int op_code(MPI_Op op) {
  if (op == MPI_SUM) return 1;
  if (op == MPI_PROD) return 2;
  if (op == MPI_MAX) return 3;
  if (op == MPI_MIN) return 4;
  if (op == MPI_BAND) return 5;
  if (op == MPI_BOR) return 6;
  if (op == MPI_BXOR) return 7;
  if (op == MPI_LAND) return 8;
  if (op == MPI_LOR) return 9;
  if (op == MPI_LXOR) return 10;
  if (op == MPI_REPLACE) return 11;
  if (op == MPI_NO_OP) return 12;
  if (op == MPI_MINLOC) return 13;
  if (op == MPI_MAXLOC) return 14;
  return 100; /* user-defined */
}

typedef struct {
  int op;
  MPI_Win win;
  int target;
  MPI_Aint disp;
  MPI_Count tcount;
  MPI_Datatype tdt;
  const void *origin;
  MPI_Count ocount;
  MPI_Datatype odt;
  void *result;
  MPI_Count rcount;
  MPI_Datatype rdt;
  int mop; /* op_code, 0 = none */
  int64_t req;
} qvm_rma;

/* Log one RMA call (before it is issued) and watch its local buffers until it completes. */
static void rma_event(const qvm_rma *c, uintptr_t pc) {
  qvm_runs_flush();
  if (c->target == MPI_PROC_NULL) return;
  qvm_win *w = win_info(c->win);
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QVM_K_RMA;
  e.op = c->op;
  MPI_Aint toff, tbytes, ooff, obytes, roff, rbytes;
  span(c->tcount, c->tdt, &toff, &tbytes);
  span(c->ocount, c->odt, &ooff, &obytes);
  span(c->rcount, c->rdt, &roff, &rbytes);
  int64_t tw = c->target;
  MPI_Aint dispb = c->disp;
  if (w) {
    e.id = w->id;
    if (c->target >= 0 && c->target < w->n) {
      tw = w->world[c->target];
      if (w->flavor != FL_DYNAMIC) dispb = c->disp * w->du[c->target];
    }
  }
  e.id2 = tw;
  e.aux = (int64_t)(dispb + toff);
  e.size = (uint64_t)tbytes;
  int reads_origin = !(c->mop == 12 && (c->op == RMA_GET_ACC || c->op == RMA_FOP || c->op == RMA_RGET_ACC));
  e.addr = reads_origin && c->origin ? (uint64_t)(uintptr_t)c->origin + ooff : 0;
  e.addr2 = c->result ? (uint64_t)(uintptr_t)c->result + roff : 0;
  e.name = c->mop; /* an MPI_Op code, not a string id (QV_F_NAME_INT) */
  e.flags = QV_F_NAME_INT;
  e.aux2 = c->req;
  /* derived datatypes: one RMA event per block of their type maps (blocks_of), after the call's own
   * row, so strided buffers touch only their bytes. The call's row keeps what is not split: the
   * target bytes of a basic target datatype (`device` = its code; -2: none, the target's blocks follow
   * with their own codes), the local buffers that are not split (0 = split) */
  static __thread qvm_typemap tmap, omap, rmap;
  int tsplit = !is_named(c->tdt) && blocks_of(&tmap, c->tcount, c->tdt, 1);
  int osplit = e.addr && blocks_of(&omap, c->ocount, c->odt, 2);
  int rsplit = e.addr2 && blocks_of(&rmap, c->rcount, c->rdt, 2);
  e.device = tsplit ? -2 : is_named(c->tdt) ? basic_code(c->tdt) : 0;
  if (tsplit) e.size = (uint64_t)(obytes > 0 && !osplit ? obytes : rbytes); /* the local buffers' span */
  qv_event_t call = e;
  if (osplit) e.addr = 0;
  if (rsplit) e.addr2 = 0;
  emit(&e, pc);
  if (tsplit) emit_blocks(&call, QVM_SIDE_TARGET, &tmap, dispb, pc);
  if (osplit) emit_blocks(&call, QVM_SIDE_ORIGIN, &omap, (int64_t)(uintptr_t)c->origin, pc);
  if (rsplit) emit_blocks(&call, QVM_SIDE_RESULT, &rmap, (int64_t)(uintptr_t)c->result, pc);
  int64_t id = w ? w->id : -1;
  int64_t tt = g_keep_origins ? -1 : tw, rq = g_keep_origins ? -1 : c->req; /* kept until MPI_Win_free */
  if (call.addr && obytes > 0) qvm_track(call.addr, call.addr + (uint64_t)obytes, QVM_TAG_ORIGIN, id, tt, rq);
  if (call.addr2 && rbytes > 0) qvm_track(call.addr2, call.addr2 + (uint64_t)rbytes, QVM_TAG_ORIGIN, id, tt, rq);
}

static int64_t new_req(void) { return atomic_fetch_add(&g_next_req, 1); }

#define RMA_CALL(...)                                                                                  \
  do {                                                                                                 \
    qvm_rma c_ = {__VA_ARGS__};                                                                        \
    rma_event(&c_, pc_);                                                                               \
  } while (0)

#define PUTGET(NAME, CNT, OPC)                                                                                   \
  API int NAME(ORIGIN_CONST void *oa, CNT oc, MPI_Datatype odt, int tr, MPI_Aint td, CNT tc, MPI_Datatype tdt, \
               MPI_Win win) {                                                                                    \
    uintptr_t pc_ = RA;                                                                                          \
    if (ON) RMA_CALL(.op = OPC, .win = win, .target = tr, .disp = td, .tcount = tc, .tdt = tdt, .origin = oa,   \
                     .ocount = oc, .odt = odt, .req = -1);                                                       \
    return P##NAME(oa, oc, odt, tr, td, tc, tdt, win);                                                           \
  }
#define ORIGIN_CONST const
PUTGET(MPI_Put, int, RMA_PUT)
PUTGET(MPI_Put_c, MPI_Count, RMA_PUT)
#undef ORIGIN_CONST
#define ORIGIN_CONST
PUTGET(MPI_Get, int, RMA_GET)
PUTGET(MPI_Get_c, MPI_Count, RMA_GET)
#undef ORIGIN_CONST

#define RPUTGET(NAME, CNT, OPC, KIND)                                                                           \
  API int NAME(ORIGIN_CONST void *oa, CNT oc, MPI_Datatype odt, int tr, MPI_Aint td, CNT tc, MPI_Datatype tdt, \
               MPI_Win win, MPI_Request *req) {                                                                  \
    uintptr_t pc_ = RA;                                                                                          \
    if (!ON) return P##NAME(oa, oc, odt, tr, td, tc, tdt, win, req);                                             \
    int64_t id = new_req();                                                                                      \
    RMA_CALL(.op = OPC, .win = win, .target = tr, .disp = td, .tcount = tc, .tdt = tdt, .origin = oa,           \
             .ocount = oc, .odt = odt, .req = id);                                                               \
    int rc = P##NAME(oa, oc, odt, tr, td, tc, tdt, win, req);                                                    \
    if (rc == MPI_SUCCESS) req_add(*req, KIND, id, MPI_COMM_NULL);                                               \
    return rc;                                                                                                   \
  }
#define ORIGIN_CONST const
RPUTGET(MPI_Rput, int, RMA_RPUT, RQ_RMA)
RPUTGET(MPI_Rput_c, MPI_Count, RMA_RPUT, RQ_RMA)
#undef ORIGIN_CONST
#define ORIGIN_CONST
RPUTGET(MPI_Rget, int, RMA_RGET, RQ_RGET)
RPUTGET(MPI_Rget_c, MPI_Count, RMA_RGET, RQ_RGET)
#undef ORIGIN_CONST

#define ACC(NAME, CNT)                                                                                         \
  API int NAME(const void *oa, CNT oc, MPI_Datatype odt, int tr, MPI_Aint td, CNT tc, MPI_Datatype tdt,       \
               MPI_Op op, MPI_Win win) {                                                                       \
    uintptr_t pc_ = RA;                                                                                        \
    if (ON) RMA_CALL(.op = RMA_ACC, .win = win, .target = tr, .disp = td, .tcount = tc, .tdt = tdt,           \
                     .origin = oa, .ocount = oc, .odt = odt, .mop = op_code(op), .req = -1);                   \
    return P##NAME(oa, oc, odt, tr, td, tc, tdt, op, win);                                                     \
  }
ACC(MPI_Accumulate, int)
ACC(MPI_Accumulate_c, MPI_Count)

#define RACC(NAME, CNT)                                                                                        \
  API int NAME(const void *oa, CNT oc, MPI_Datatype odt, int tr, MPI_Aint td, CNT tc, MPI_Datatype tdt,       \
               MPI_Op op, MPI_Win win, MPI_Request *req) {                                                     \
    uintptr_t pc_ = RA;                                                                                        \
    if (!ON) return P##NAME(oa, oc, odt, tr, td, tc, tdt, op, win, req);                                       \
    int64_t id = new_req();                                                                                    \
    RMA_CALL(.op = RMA_RACC, .win = win, .target = tr, .disp = td, .tcount = tc, .tdt = tdt, .origin = oa,    \
             .ocount = oc, .odt = odt, .mop = op_code(op), .req = id);                                         \
    int rc = P##NAME(oa, oc, odt, tr, td, tc, tdt, op, win, req);                                              \
    if (rc == MPI_SUCCESS) req_add(*req, RQ_RMA, id, MPI_COMM_NULL);                                           \
    return rc;                                                                                                 \
  }
RACC(MPI_Raccumulate, int)
RACC(MPI_Raccumulate_c, MPI_Count)

#define GACC(NAME, CNT)                                                                                        \
  API int NAME(const void *oa, CNT oc, MPI_Datatype odt, void *ra, CNT rc_, MPI_Datatype rdt, int tr,         \
               MPI_Aint td, CNT tc, MPI_Datatype tdt, MPI_Op op, MPI_Win win) {                                \
    uintptr_t pc_ = RA;                                                                                        \
    if (ON) RMA_CALL(.op = RMA_GET_ACC, .win = win, .target = tr, .disp = td, .tcount = tc, .tdt = tdt,       \
                     .origin = oa, .ocount = oc, .odt = odt, .result = ra, .rcount = rc_, .rdt = rdt,         \
                     .mop = op_code(op), .req = -1);                                                           \
    return P##NAME(oa, oc, odt, ra, rc_, rdt, tr, td, tc, tdt, op, win);                                       \
  }
GACC(MPI_Get_accumulate, int)
GACC(MPI_Get_accumulate_c, MPI_Count)

#define RGACC(NAME, CNT)                                                                                       \
  API int NAME(const void *oa, CNT oc, MPI_Datatype odt, void *ra, CNT rc_, MPI_Datatype rdt, int tr,         \
               MPI_Aint td, CNT tc, MPI_Datatype tdt, MPI_Op op, MPI_Win win, MPI_Request *req) {              \
    uintptr_t pc_ = RA;                                                                                        \
    if (!ON) return P##NAME(oa, oc, odt, ra, rc_, rdt, tr, td, tc, tdt, op, win, req);                         \
    int64_t id = new_req();                                                                                    \
    RMA_CALL(.op = RMA_RGET_ACC, .win = win, .target = tr, .disp = td, .tcount = tc, .tdt = tdt,              \
             .origin = oa, .ocount = oc, .odt = odt, .result = ra, .rcount = rc_, .rdt = rdt,                 \
             .mop = op_code(op), .req = id);                                                                   \
    int rc = P##NAME(oa, oc, odt, ra, rc_, rdt, tr, td, tc, tdt, op, win, req);                                \
    if (rc == MPI_SUCCESS) req_add(*req, RQ_RMA, id, MPI_COMM_NULL);                                           \
    return rc;                                                                                                 \
  }
RGACC(MPI_Rget_accumulate, int)
RGACC(MPI_Rget_accumulate_c, MPI_Count)

API int MPI_Fetch_and_op(const void *oa, void *ra, MPI_Datatype dt, int tr, MPI_Aint td, MPI_Op op, MPI_Win win) {
  uintptr_t pc_ = RA;
  if (ON) RMA_CALL(.op = RMA_FOP, .win = win, .target = tr, .disp = td, .tcount = 1, .tdt = dt, .origin = oa,
                   .ocount = 1, .odt = dt, .result = ra, .rcount = 1, .rdt = dt, .mop = op_code(op), .req = -1);
  return PMPI_Fetch_and_op(oa, ra, dt, tr, td, op, win);
}

API int MPI_Compare_and_swap(const void *oa, const void *ca, void *ra, MPI_Datatype dt, int tr, MPI_Aint td,
                             MPI_Win win) {
  uintptr_t pc_ = RA;
  /* mop 15: compare-and-swap (atomic with other compare-and-swaps of the same type) */
  if (ON) RMA_CALL(.op = RMA_CAS, .win = win, .target = tr, .disp = td, .tcount = 1, .tdt = dt, .origin = oa,
                   .ocount = 1, .odt = dt, .result = ra, .rcount = 1, .rdt = dt, .mop = 15, .req = -1);
  return PMPI_Compare_and_swap(oa, ca, ra, dt, tr, td, win);
}

/* ---------------------------------------------------------------- RMA synchronisation */

static void sync_event(int kind, MPI_Win win, int64_t target_world, int lock_type, int32_t group, uintptr_t pc) {
  qvm_win *w = win_info(win);
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QVM_K_MPI_SYNC;
  e.op = kind;
  e.id = w ? w->id : -1;
  e.id2 = target_world;
  e.aux = lock_type;
  e.name = group;
  emit_durable(&e, pc);
}

static int64_t win_target(MPI_Win win, int rank) {
  qvm_win *w = win_info(win);
  return w && rank >= 0 && rank < w->n ? w->world[rank] : rank;
}

static int64_t win_id(MPI_Win win) {
  qvm_win *w = win_info(win);
  return w ? w->id : -1;
}

/* "1,2": the comm-world ranks of a PSCW group, interned. */
static int32_t group_string(MPI_Group g) {
  int n = 0;
  PMPI_Group_size(g, &n);
  int *world = translate_group(g, n);
  size_t cap = (size_t)n * 12 + 1;
  char *s = malloc(cap);
  size_t len = 0;
  s[0] = 0;
  for (int i = 0; i < n; i++) len += (size_t)snprintf(s + len, cap - len, i ? ",%d" : "%d", world[i]);
  int32_t id = qv_strintern_n(s, len);
  free(s);
  free(world);
  return id;
}

API int MPI_Win_fence(int assert_, MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_fence(assert_, win);
  if (ON) {
    sync_event(S_FENCE, win, -1, 0, -1, pc);
    origin_done(win_id(win), -1, -1);
  }
  return rc;
}

API int MPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_lock(lock_type, rank, assert_, win);
  if (ON) sync_event(S_LOCK, win, win_target(win, rank), lock_type == MPI_LOCK_EXCLUSIVE ? 1 : 2, -1, pc);
  return rc;
}

API int MPI_Win_unlock(int rank, MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_unlock(rank, win);
  if (ON) {
    int64_t t = win_target(win, rank);
    sync_event(S_UNLOCK, win, t, 0, -1, pc);
    origin_done(win_id(win), t, -1);
  }
  return rc;
}

API int MPI_Win_lock_all(int assert_, MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_lock_all(assert_, win);
  if (ON) sync_event(S_LOCK_ALL, win, -1, 2, -1, pc);
  return rc;
}

API int MPI_Win_unlock_all(MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_unlock_all(win);
  if (ON) {
    sync_event(S_UNLOCK_ALL, win, -1, 0, -1, pc);
    origin_done(win_id(win), -1, -1);
  }
  return rc;
}

#define FLUSH_T(NAME, KIND)                                             \
  API int NAME(int rank, MPI_Win win) {                                 \
    uintptr_t pc = RA;                                                  \
    if (ON) durable();                                                 \
    int rc = P##NAME(rank, win);                                        \
    if (ON) {                                                           \
      int64_t t = win_target(win, rank);                                \
      sync_event(KIND, win, t, 0, -1, pc);                              \
      origin_done(win_id(win), t, -1);                  \
    }                                                                   \
    return rc;                                                          \
  }
FLUSH_T(MPI_Win_flush, S_FLUSH)
FLUSH_T(MPI_Win_flush_local, S_FLUSH_LOCAL)

#define FLUSH_A(NAME, KIND)                                             \
  API int NAME(MPI_Win win) {                                           \
    uintptr_t pc = RA;                                                  \
    if (ON) durable();                                                 \
    int rc = P##NAME(win);                                              \
    if (ON) {                                                           \
      sync_event(KIND, win, -1, 0, -1, pc);                             \
      origin_done(win_id(win), -1, -1);                 \
    }                                                                   \
    return rc;                                                          \
  }
FLUSH_A(MPI_Win_flush_all, S_FLUSH_ALL)
FLUSH_A(MPI_Win_flush_local_all, S_FLUSH_LOCAL_ALL)

API int MPI_Win_sync(MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_sync(win);
  if (ON) sync_event(S_SYNC, win, -1, 0, -1, pc);
  return rc;
}

API int MPI_Win_post(MPI_Group group, int assert_, MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_post(group, assert_, win);
  if (ON) sync_event(S_POST, win, -1, 0, group_string(group), pc);
  return rc;
}

API int MPI_Win_start(MPI_Group group, int assert_, MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_start(group, assert_, win);
  if (ON) sync_event(S_START, win, -1, 0, group_string(group), pc);
  return rc;
}

API int MPI_Win_complete(MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_complete(win);
  if (ON) {
    sync_event(S_COMPLETE, win, -1, 0, -1, pc);
    origin_done(win_id(win), -1, -1);
  }
  return rc;
}

API int MPI_Win_wait(MPI_Win win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_wait(win);
  if (ON) sync_event(S_WAIT, win, -1, 0, -1, pc);
  return rc;
}

API int MPI_Win_test(MPI_Win win, int *flag) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_test(win, flag);
  if (ON && *flag) sync_event(S_WAIT, win, -1, 0, -1, pc);
  return rc;
}

/* ---------------------------------------------------------------- window creation */

API int MPI_Win_create(void *base, MPI_Aint size, int du, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_create(base, size, du, info, comm, win);
  if (ON && rc == MPI_SUCCESS) win_register(*win, comm, base, size, du, FL_CREATE, pc);
  return rc;
}

API int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint du, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_create_c(base, size, du, info, comm, win);
  if (ON && rc == MPI_SUCCESS) win_register(*win, comm, base, size, du, FL_CREATE, pc);
  return rc;
}

#define WALLOC(NAME, DU, FLAVOR)                                                                    \
  API int NAME(MPI_Aint size, DU du, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {   \
    uintptr_t pc = RA;                                                                              \
    if (ON) durable();                                                                             \
    int rc = P##NAME(size, du, info, comm, baseptr, win);                                           \
    if (ON && rc == MPI_SUCCESS) win_register(*win, comm, *(void **)baseptr, size, du, FLAVOR, pc); \
    return rc;                                                                                      \
  }
WALLOC(MPI_Win_allocate, int, FL_ALLOCATE)
WALLOC(MPI_Win_allocate_c, MPI_Aint, FL_ALLOCATE)
WALLOC(MPI_Win_allocate_shared, int, FL_SHARED)
WALLOC(MPI_Win_allocate_shared_c, MPI_Aint, FL_SHARED)

API int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Win_create_dynamic(info, comm, win);
  if (ON && rc == MPI_SUCCESS) win_register(*win, comm, NULL, 0, 1, FL_DYNAMIC, pc);
  return rc;
}

API int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
  uintptr_t pc = RA;
  int rc = PMPI_Win_attach(win, base, size);
  if (ON && rc == MPI_SUCCESS) {
    qvm_runs_flush();
    qvm_win *w = win_info(win);
    qv_event_t e = QV_EVENT_INIT;
    e.kind = QVM_K_WIN_ATTACH;
    e.id = w ? w->id : -1;
    e.addr = (uint64_t)(uintptr_t)base;
    e.size = (uint64_t)size;
    emit(&e, pc);
    if (w && w->natt < QVM_MAX_ATTACH) {
      w->att_lo[w->natt] = (uintptr_t)base;
      w->att_hi[w->natt] = (uintptr_t)base + (uintptr_t)size;
      w->natt++;
    }
    if (size > 0) qvm_track((uintptr_t)base, (uintptr_t)base + (uintptr_t)size, QVM_TAG_WINDOW, e.id, -1, -1);
  }
  return rc;
}

API int MPI_Win_detach(MPI_Win win, const void *base) {
  uintptr_t pc = RA;
  if (ON) {
    qvm_runs_flush();
    qvm_win *w = win_info(win);
    uint64_t size = 0;
    if (w)
      for (int i = 0; i < w->natt; i++)
        if (w->att_lo[i] == (uintptr_t)base) {
          size = w->att_hi[i] - w->att_lo[i];
          qvm_untrack_range(w->att_lo[i], w->att_hi[i], w->id);
          w->att_lo[i] = w->att_lo[w->natt - 1];
          w->att_hi[i] = w->att_hi[w->natt - 1];
          w->natt--;
          break;
        }
    qv_event_t e = QV_EVENT_INIT;
    e.kind = QVM_K_WIN_DETACH;
    e.id = w ? w->id : -1;
    e.addr = (uint64_t)(uintptr_t)base;
    e.size = size;
    emit(&e, pc);
  }
  return PMPI_Win_detach(win, base);
}

API int MPI_Win_free(MPI_Win *win) {
  uintptr_t pc = RA;
  if (ON) {
    durable();
    qvm_win *w = win_info(*win);
    qv_event_t e = QV_EVENT_INIT;
    e.kind = QVM_K_WIN_FREE;
    e.id = w ? w->id : -1;
    emit_durable(&e, pc);
    if (w) {
      qvm_untrack(QVM_TAG_ORIGIN, w->id, -1, -1);
      qvm_untrack(QVM_TAG_WINDOW, w->id, -1, -1);
      pthread_mutex_lock(&g_win_mu);
      free(w->world);
      free(w->du);
      w->used = 0;
      pthread_mutex_unlock(&g_win_mu);
    }
  }
  return PMPI_Win_free(win);
}

/* ---------------------------------------------------------------- requests */

API int MPI_Wait(MPI_Request *req, MPI_Status *st) {
  uintptr_t pc = RA;
  if (!ON || !atomic_load_explicit(&g_nreqs, memory_order_relaxed)) return PMPI_Wait(req, st);
  durable();
  MPI_Request h = *req;
  MPI_Status tmp;
  if (st == MPI_STATUS_IGNORE) st = &tmp;
  int rc = PMPI_Wait(req, st);
  req_done(h, st, pc);
  return rc;
}

API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st) {
  uintptr_t pc = RA;
  if (!ON || !atomic_load_explicit(&g_nreqs, memory_order_relaxed)) return PMPI_Test(req, flag, st);
  durable();
  MPI_Request h = *req;
  MPI_Status tmp;
  if (st == MPI_STATUS_IGNORE) st = &tmp;
  int rc = PMPI_Test(req, flag, st);
  if (*flag) req_done(h, st, pc);
  return rc;
}

/* Copies of the handles (completion sets them to MPI_REQUEST_NULL) and statuses we can read. */
typedef struct {
  MPI_Request *h;
  MPI_Status *st;
  int own_st;
} qvm_reqset;

static int reqset_begin(qvm_reqset *s, int n, const MPI_Request *reqs, MPI_Status **st) {
  s->h = NULL;
  s->st = NULL;
  s->own_st = 0;
  if (!ON || !atomic_load_explicit(&g_nreqs, memory_order_relaxed) || n <= 0) return 0;
  int any = 0;
  for (int i = 0; i < n && !any; i++) any = req_peek_kind(reqs[i]) != 0;
  if (!any) return 0;
  durable();
  s->h = malloc(sizeof(MPI_Request) * (size_t)n);
  memcpy(s->h, reqs, sizeof(MPI_Request) * (size_t)n);
  if (st && *st == MPI_STATUSES_IGNORE) {
    *st = malloc(sizeof(MPI_Status) * (size_t)n);
    s->own_st = 1;
  }
  s->st = st ? *st : NULL;
  return 1;
}

static void reqset_done(qvm_reqset *s, int i, uintptr_t pc) {
  req_done(s->h[i], s->st ? &s->st[i] : NULL, pc);
}

static void reqset_end(qvm_reqset *s) {
  free(s->h);
  if (s->own_st) free(s->st);
}

API int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
  uintptr_t pc = RA;
  qvm_reqset s;
  if (!reqset_begin(&s, n, reqs, &sts)) return PMPI_Waitall(n, reqs, sts);
  int rc = PMPI_Waitall(n, reqs, sts);
  for (int i = 0; i < n; i++) reqset_done(&s, i, pc);
  reqset_end(&s);
  return rc;
}

API int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]) {
  uintptr_t pc = RA;
  qvm_reqset s;
  if (!reqset_begin(&s, n, reqs, &sts)) return PMPI_Testall(n, reqs, flag, sts);
  int rc = PMPI_Testall(n, reqs, flag, sts);
  if (*flag)
    for (int i = 0; i < n; i++) reqset_done(&s, i, pc);
  reqset_end(&s);
  return rc;
}

API int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st) {
  uintptr_t pc = RA;
  qvm_reqset s;
  MPI_Status tmp;
  if (!reqset_begin(&s, n, reqs, NULL)) return PMPI_Waitany(n, reqs, idx, st);
  if (st == MPI_STATUS_IGNORE) st = &tmp;
  int rc = PMPI_Waitany(n, reqs, idx, st);
  if (*idx != MPI_UNDEFINED) req_done(s.h[*idx], st, pc);
  reqset_end(&s);
  return rc;
}

API int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st) {
  uintptr_t pc = RA;
  qvm_reqset s;
  MPI_Status tmp;
  if (!reqset_begin(&s, n, reqs, NULL)) return PMPI_Testany(n, reqs, idx, flag, st);
  if (st == MPI_STATUS_IGNORE) st = &tmp;
  int rc = PMPI_Testany(n, reqs, idx, flag, st);
  if (*flag && *idx != MPI_UNDEFINED) req_done(s.h[*idx], st, pc);
  reqset_end(&s);
  return rc;
}

#define SOME(NAME)                                                                          \
  API int NAME(int n, MPI_Request reqs[], int *outc, int idx[], MPI_Status sts[]) {         \
    uintptr_t pc = RA;                                                                      \
    qvm_reqset s;                                                                           \
    if (!reqset_begin(&s, n, reqs, &sts)) return P##NAME(n, reqs, outc, idx, sts);          \
    int rc = P##NAME(n, reqs, outc, idx, sts);                                              \
    if (*outc != MPI_UNDEFINED)                                                             \
      for (int k = 0; k < *outc; k++) req_done(s.h[idx[k]], s.st ? &s.st[k] : NULL, pc);    \
    reqset_end(&s);                                                                         \
    return rc;                                                                              \
  }
SOME(MPI_Waitsome)
SOME(MPI_Testsome)

/* ---------------------------------------------------------------- messages */

static void send_event(MPI_Comm comm, int dest, int tag, uintptr_t pc) {
  if (dest < 0) return;
  durable();
  qvm_comm *c = comm_info(comm);
  message(M_SEND, world_of(comm, dest), tag, c ? c->id : -1, pc);
}

#define SEND(NAME, CNT)                                                                        \
  API int NAME(const void *buf, CNT n, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {   \
    uintptr_t pc = RA;                                                                         \
    if (ON) send_event(comm, dest, tag, pc);                                                   \
    return P##NAME(buf, n, dt, dest, tag, comm);                                               \
  }
SEND(MPI_Send, int)
SEND(MPI_Send_c, MPI_Count)
SEND(MPI_Ssend, int)
SEND(MPI_Ssend_c, MPI_Count)
SEND(MPI_Rsend, int)
SEND(MPI_Bsend, int)

#define ISEND(NAME, CNT)                                                                                 \
  API int NAME(const void *buf, CNT n, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r) { \
    uintptr_t pc = RA;                                                                                   \
    if (ON) send_event(comm, dest, tag, pc);                                                             \
    return P##NAME(buf, n, dt, dest, tag, comm, r);                                                      \
  }
ISEND(MPI_Isend, int)
ISEND(MPI_Isend_c, MPI_Count)
ISEND(MPI_Issend, int)

#define RECV(NAME, CNT)                                                                                 \
  API int NAME(void *buf, CNT n, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st) {    \
    uintptr_t pc = RA;                                                                                  \
    if (!ON) return P##NAME(buf, n, dt, src, tag, comm, st);                                            \
    durable();                                                                                          \
    MPI_Status tmp;                                                                                     \
    if (st == MPI_STATUS_IGNORE) st = &tmp;                                                             \
    int rc = P##NAME(buf, n, dt, src, tag, comm, st);                                                   \
    recv_done(comm, st, pc);                                                                            \
    return rc;                                                                                          \
  }
RECV(MPI_Recv, int)
RECV(MPI_Recv_c, MPI_Count)

#define IRECV(NAME, CNT)                                                                                \
  API int NAME(void *buf, CNT n, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r) {    \
    int rc = P##NAME(buf, n, dt, src, tag, comm, r);                                                    \
    if (ON && rc == MPI_SUCCESS) req_add(*r, RQ_IRECV, -1, comm);                                       \
    return rc;                                                                                          \
  }
IRECV(MPI_Irecv, int)
IRECV(MPI_Irecv_c, MPI_Count)

API int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype sdt, int dest, int stag, void *rb, int rcount,
                     MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st) {
  uintptr_t pc = RA;
  if (!ON) return PMPI_Sendrecv(sb, sc, sdt, dest, stag, rb, rcount, rdt, src, rtag, comm, st);
  send_event(comm, dest, stag, pc);
  MPI_Status tmp;
  if (st == MPI_STATUS_IGNORE) st = &tmp;
  int rc = PMPI_Sendrecv(sb, sc, sdt, dest, stag, rb, rcount, rdt, src, rtag, comm, st);
  recv_done(comm, st, pc);
  return rc;
}

API int MPI_Sendrecv_replace(void *b, int c, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                             MPI_Comm comm, MPI_Status *st) {
  uintptr_t pc = RA;
  if (!ON) return PMPI_Sendrecv_replace(b, c, dt, dest, stag, src, rtag, comm, st);
  send_event(comm, dest, stag, pc);
  MPI_Status tmp;
  if (st == MPI_STATUS_IGNORE) st = &tmp;
  int rc = PMPI_Sendrecv_replace(b, c, dt, dest, stag, src, rtag, comm, st);
  recv_done(comm, st, pc);
  return rc;
}

static void collective(int kind, MPI_Comm comm, uintptr_t pc) {
  qvm_comm *c = comm_info(comm);
  message(kind, -1, 0, c ? c->id : -1, pc);
}

API int MPI_Barrier(MPI_Comm comm) {
  uintptr_t pc = RA;
  if (ON) durable();
  int rc = PMPI_Barrier(comm);
  if (ON) collective(M_BARRIER, comm, pc);
  return rc;
}

/* Collectives every member needs every other member's data for: ordered like a barrier. */
#define ALLRED(NAME, CNT)                                                                                  \
  API int NAME(const void *sb, void *rb, CNT n, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {               \
    uintptr_t pc = RA;                                                                                     \
    if (ON) durable();                                                                                    \
    int rc = P##NAME(sb, rb, n, dt, op, comm);                                                             \
    if (ON) collective(M_COLL, comm, pc);                                                                  \
    return rc;                                                                                             \
  }
ALLRED(MPI_Allreduce, int)
ALLRED(MPI_Allreduce_c, MPI_Count)

#define ALLX(NAME, CNT)                                                                                    \
  API int NAME(const void *sb, CNT sc, MPI_Datatype sdt, void *rb, CNT rc_, MPI_Datatype rdt,              \
               MPI_Comm comm) {                                                                            \
    uintptr_t pc = RA;                                                                                     \
    if (ON) durable();                                                                                    \
    int rc = P##NAME(sb, sc, sdt, rb, rc_, rdt, comm);                                                     \
    if (ON) collective(M_COLL, comm, pc);                                                                  \
    return rc;                                                                                             \
  }
ALLX(MPI_Allgather, int)
ALLX(MPI_Allgather_c, MPI_Count)
ALLX(MPI_Alltoall, int)
ALLX(MPI_Alltoall_c, MPI_Count)

API int MPI_Comm_free(MPI_Comm *comm) {
  if (ON) comm_forget(*comm);
  return PMPI_Comm_free(comm);
}

/* ---------------------------------------------------------------- init / finalize */

static void after_init(void) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  qv_set_rank(rank);
  if (!qv_init()) return;
  PMPI_Comm_group(MPI_COMM_WORLD, &g_world_group);
  qvm_access_init();
  qv_set_crash_hook(qvm_runs_flush); /* window accesses pending on each thread */
  qv_info_i64("mpi_rank", rank);
  qv_info_i64("mpi_size", size);
  qv_info("mpi_tracer", "quiver-pmpi");
  qvm_on = 1;
}

API int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) after_init();
  return rc;
}

API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) {
    g_keep_origins = *provided > MPI_THREAD_SINGLE;
    /* QUIVER_MPI_NO_RECENT=1: no recent-access rings (gather-heavy threaded codes pay ~1.5x for them) */
    const char *no_recent = getenv("QUIVER_MPI_NO_RECENT");
    qvm_recent_on = g_keep_origins && !(no_recent && *no_recent && strcmp(no_recent, "0") != 0);
    after_init();
  }
  return rc;
}

/* The launcher kills the other ranks when one aborts: everything this rank recorded goes to disk
 * first, with the reason. */
API int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (ON) {
    qvm_runs_flush();
    qv_flush_process("mpi_abort", errorcode);
  }
  return PMPI_Abort(comm, errorcode);
}

API int MPI_Finalize(void) {
  if (ON) {
    qvm_runs_flush();
    qvm_on = 0;
    qv_info("mpi_finalized", "1");
    qv_flush_all();
  }
  return PMPI_Finalize();
}
