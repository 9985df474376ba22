/* qv_finalize.c - finalize's per-record passes (tracer/finalize_kernels.py) in C, called with ctypes
 * (tracer/finalize_c.py).
 *
 * Why: finalize reads every raw record twice (a scan of each thread file, then the log row it
 * becomes). As numpy passes that costs ~0.5-1 us per record (a 12000-kernel run's 180 k records:
 * ~0.1 s of CPU); numba does it in ~10 ns but costs ~0.4 s to start. This library is built with the
 * tracer (tracer/native LIBS), so it is there whenever a run is recorded; the numba and numpy
 * kernels stay for logs finalized where it cannot be loaded. Same semantics as finalize_kernels.py,
 * whose docstrings are the specification (tests/tracer/test_finalize_reference.py checks all three
 * against a reference).
 *
 * A raw record is 12 int64 words (rawread.RAW_DTYPE): time, addr, addr2, size, id, id2, aux, aux2,
 * pc, loc_str | op << 32, name | device << 32, thread | kind << 32 | flags << 48. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RAW_WORDS 12
enum { W_TIME, W_ADDR, W_ADDR2, W_SIZE, W_ID, W_ID2, W_AUX, W_AUX2, W_PC, W_LOCSTR_OP, W_NAME_DEVICE,
       W_THREAD_KIND_FLAGS };
/* formats/schema.py EventKind values and rawread F_* flags (passed in by finalize_c.py, which checks
 * them against the Python constants when it loads the library) */
typedef struct {
  int64_t access, alloc, construct_begin, construct_end, map_clause, task_create, task_depend, win_create;
  int64_t f_pc_ret, f_name_int, f_id2_str, f_aux_str, f_aux2_str;
  int64_t kinds; /* counted kind values */
  int64_t masked; /* AccessFlag.MASKED: the op bit of a masked ACCESS run */
} qv_fin_consts;

static inline int64_t lo32(int64_t w) { return (int64_t)(int32_t)(uint32_t)w; }
static inline int64_t kind_of(int64_t w) { return (int64_t)(int16_t)(uint16_t)(w >> 32); }

static inline uint64_t adjusted_pc(const int64_t *row, const qv_fin_consts *k) {
  uint64_t pc = (uint64_t)row[W_PC];
  if (((row[W_THREAD_KIND_FLAGS] >> 48) & k->f_pc_ret) && pc != 0) pc -= 1;
  return pc;
}

static inline uint64_t slot(uint64_t pc, uint64_t size) { return (pc ^ (pc >> 9) ^ (pc >> 21)) & (size - 1); }

static inline int64_t add_distinct(int64_t *values, int64_t n, int64_t v) {
  for (int64_t j = 0; j < n; j++)
    if (values[j] == v) return n;
  values[n] = v;
  return n + 1;
}

/* io (in/out): [0] clock; out: [1] accesses, [2] top alloc, [3] t_min, [4] t_max, [5] PCs, [6] control
 * rows, [7] late rows, [8] threads, [9] devices, [10] the blocks the accesses stand for (planes x blocks). `keys`: a zeroed open-addressing set of `key_cap`
 * (a power of two > 2 n) entries, of which only the slots used are touched; the distinct PCs go to
 * pcs[0 .. io[5]). pcs, threads, devices, control and late_rows have room for n values. */
void qv_fin_scan(const int64_t *words, int64_t n, int64_t n_strings, int64_t late, const qv_fin_consts *k,
                 int64_t *io, uint8_t *used_src, uint64_t *keys, int64_t key_cap, uint64_t *pcs, int64_t *control,
                 int64_t *late_rows, int64_t *counts, int64_t *threads, int64_t *devices) {
  int64_t clock = io[0], n_access = 0, n_blocks = 0, top_alloc = -1, t_min = INT64_MAX, t_max = -INT64_MAX;
  int64_t n_pcs = 0, n_control = 0, n_late = 0, n_threads = 0, n_devices = 0;
  int64_t last_thread = -((int64_t)1 << 40), last_device = -((int64_t)1 << 40);
  uint64_t last_pc = 0, mask = (uint64_t)key_cap - 1;
  for (int64_t i = 0; i < n; i++) {
    const int64_t *row = words + i * RAW_WORDS;
    int64_t t = row[W_TIME];
    if (t < t_min) t_min = t;
    if (t > t_max) t_max = t;
    if (t > clock) clock = t;
    if (t < clock - late) late_rows[n_late++] = i;
    int64_t w11 = row[W_THREAD_KIND_FLAGS], kind = kind_of(w11);
    if (kind >= 0 && kind < k->kinds) counts[kind]++;
    int64_t thread = lo32(w11);
    if (thread != last_thread) {
      last_thread = thread;
      n_threads = add_distinct(threads, n_threads, thread);
    }
    if (kind < k->win_create) {
      int64_t device = row[W_NAME_DEVICE] >> 32;
      if (device >= 0 && device != last_device) {
        last_device = device;
        n_devices = add_distinct(devices, n_devices, device);
      }
    }
    if (kind == k->access) {
      n_access++;
      int64_t b = row[W_AUX2] > 1 ? row[W_AUX2] : 1, planes = lo32(row[W_NAME_DEVICE]);
      if ((row[W_LOCSTR_OP] >> 32) & k->masked) b = __builtin_popcountll((uint64_t)row[W_ID2]); /* format 6 */
      n_blocks += ((w11 >> 48) & k->f_name_int) && b > 1 && planes > 1 ? b * planes : b;
    }
    else if (kind == k->alloc) {
      if (row[W_ID] > top_alloc) top_alloc = row[W_ID];
    } else if (kind == k->construct_begin || kind == k->construct_end || kind == k->map_clause ||
               kind == k->task_create)
      control[n_control++] = i;
    int64_t s = lo32(row[W_LOCSTR_OP]);
    if (s >= 0 && s < n_strings) {
      used_src[s] = 1;
      continue;
    }
    uint64_t pc = adjusted_pc(row, k);
    if (pc != 0 && pc != last_pc) {
      last_pc = pc;
      uint64_t h = slot(pc, (uint64_t)key_cap);
      while (keys[h] != 0 && keys[h] != pc) h = (h + 1) & mask;
      if (keys[h] == 0) {
        keys[h] = pc;
        pcs[n_pcs++] = pc;
      }
    }
  }
  io[0] = clock;
  io[1] = n_access;
  io[2] = top_alloc;
  io[3] = n ? t_min : 0;
  io[4] = n ? t_max : -1;
  io[5] = n_pcs;
  io[6] = n_control;
  io[7] = n_late;
  io[8] = n_threads;
  io[9] = n_devices;
  io[10] = n_blocks;
}

/* finalize_kernels.group_by_stream: bounds has n_starts + 1 entries */
void qv_fin_group(const int64_t *rows, int64_t n, const int64_t *starts, int64_t n_starts, int64_t *pos,
                  int64_t *bounds, int64_t *fill) {
  memset(bounds, 0, (size_t)(n_starts + 1) * sizeof *bounds);
  int64_t s = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t i = 0; i < n; i++) {
      int64_t r = rows[i];
      if (!(starts[s] <= r && (s + 1 == n_starts || r < starts[s + 1]))) {
        int64_t lo = 0, hi = n_starts; /* the last start <= r */
        while (lo < hi) {
          int64_t mid = (lo + hi) / 2;
          if (starts[mid] <= r) lo = mid + 1;
          else hi = mid;
        }
        s = lo - 1;
      }
      if (pass == 0) bounds[s + 1]++;
      else pos[fill[s]++] = i;
    }
    if (pass == 0) {
      for (int64_t j = 0; j < n_starts; j++) bounds[j + 1] += bounds[j];
      memcpy(fill, bounds, (size_t)n_starts * sizeof *fill);
    }
  }
}

/* index of the first element >= q in sorted a[0 .. n), for each element type used */
#define LOWER_BOUND(name, T)                                  \
  static inline int64_t name(const T *a, int64_t n, T q) {    \
    int64_t lo = 0, hi = n;                                   \
    while (lo < hi) {                                         \
      int64_t mid = (lo + hi) / 2;                            \
      if (a[mid] < q) lo = mid + 1;                           \
      else hi = mid;                                          \
    }                                                         \
    return lo;                                                \
  }
LOWER_BOUND(lower_bound_i64, int64_t)
LOWER_BOUND(lower_bound_u64, uint64_t)

#define PC_CACHE 256

typedef struct {
  const int64_t *table;
  int64_t n_table; /* len(table): rank-local string ids, then -1 */
  const int64_t *by_string;
  int64_t n_by_string;
  const uint64_t *pcs;
  const int64_t *by_pc;
  int64_t n_pcs;
  const int64_t *task_keys, *task_locs;
  int64_t n_tasks;
  const int64_t *fix_pos, *fix_op;
  int64_t n_fix;
} qv_fin_maps;

/* finalize_kernels.fill_rows into separate columns: c64[0..8) (time_ns, addr, addr2, size, id, id2, aux,
 * aux2), c32[0..7) (rank, thread, device, loc, op, name, src), c16 (kind) */
void qv_fin_fill_cols(const int64_t *words, const int64_t *rows, const int64_t *out_pos, int64_t n, int64_t start,
                      int64_t rank, int64_t t0, const qv_fin_maps *m, const qv_fin_consts *k, int64_t *const *c64,
                      int32_t *const *c32, int16_t *c16) {
  int64_t n_strings = m->n_table - 1;
  uint64_t seen_pc[PC_CACHE];
  int64_t seen_loc[PC_CACHE];
  memset(seen_pc, 0, sizeof seen_pc);
  for (int64_t i = 0; i < n; i++) {
    int64_t o = out_pos[i], g = rows[o];
    const int64_t *row = words + (g - start) * RAW_WORDS;
    int64_t w9 = row[W_LOCSTR_OP], w10 = row[W_NAME_DEVICE], w11 = row[W_THREAD_KIND_FLAGS];
    int64_t flags = w11 >> 48, kind = kind_of(w11), op = w9 >> 32, name = lo32(w10);
    int64_t id2 = row[W_ID2], aux = row[W_AUX], aux2 = row[W_AUX2];
    if (!(flags & k->f_name_int) && name >= 0 && name < n_strings) name = m->table[name];
    if ((flags & k->f_id2_str) && id2 >= 0 && id2 < n_strings) id2 = m->table[id2];
    if ((flags & k->f_aux_str) && aux >= 0 && aux < n_strings) aux = m->table[aux];
    if ((flags & k->f_aux2_str) && aux2 >= 0 && aux2 < n_strings) aux2 = m->table[aux2];
    int64_t src = lo32(w9), loc = -1;
    if (src >= 0 && src < n_strings) {
      src = m->table[src];
      if (src < m->n_by_string) loc = m->by_string[src];
    } else {
      src = -1;
    }
    if (loc < 0) {
      uint64_t pc = adjusted_pc(row, k), c = slot(pc, PC_CACHE);
      if (pc == 0) {
        loc = -1;
      } else if (seen_pc[c] == pc) {
        loc = seen_loc[c];
      } else {
        int64_t j = lower_bound_u64(m->pcs, m->n_pcs, pc);
        loc = j < m->n_pcs && m->pcs[j] == pc ? m->by_pc[j] : -1;
        seen_pc[c] = pc;
        seen_loc[c] = loc;
      }
    }
    if ((kind == k->task_create || kind == k->task_depend) && m->n_tasks) {
      int64_t key = (rank << 40) | row[W_ID];
      int64_t j = lower_bound_i64(m->task_keys, m->n_tasks, key);
      if (j < m->n_tasks && m->task_keys[j] == key) loc = m->task_locs[j];
    }
    if ((kind == k->construct_begin || kind == k->construct_end) && m->n_fix) {
      int64_t j = lower_bound_i64(m->fix_pos, m->n_fix, g);
      if (j < m->n_fix && m->fix_pos[j] == g) op = m->fix_op[j];
    }
    int64_t t = row[W_TIME] - t0;
    c64[0][o] = t > 0 ? t : 0;
    c64[1][o] = row[W_ADDR];
    c64[2][o] = row[W_ADDR2];
    c64[3][o] = row[W_SIZE];
    c64[4][o] = row[W_ID];
    c64[5][o] = id2;
    c64[6][o] = aux;
    c64[7][o] = aux2;
    c32[0][o] = (int32_t)rank;
    c32[1][o] = (int32_t)lo32(w11);
    c32[2][o] = (int32_t)(w10 >> 32);
    c32[3][o] = (int32_t)loc;
    c32[4][o] = (int32_t)op;
    c32[5][o] = (int32_t)name;
    c32[6][o] = (int32_t)src;
    c16[o] = (int16_t)kind;
  }
}

/* finalize_kernels.fill_rows: out64 is 8 x batch, out32 7 x batch (row-major, `batch` columns) */
void qv_fin_fill(const int64_t *words, const int64_t *rows, const int64_t *out_pos, int64_t n, int64_t start,
                 int64_t rank, int64_t t0, const qv_fin_maps *m, const qv_fin_consts *k, int64_t *out64,
                 int32_t *out32, int16_t *out16, int64_t batch) {
  int64_t *c64[8];
  int32_t *c32[7];
  for (int j = 0; j < 8; j++) c64[j] = out64 + j * batch;
  for (int j = 0; j < 7; j++) c32[j] = out32 + j * batch;
  qv_fin_fill_cols(words, rows, out_pos, n, start, rank, t0, m, k, c64, c32, out16);
}

/* finalize_kernels.read_window; io: [0] cursor, [1] clock (in and out); returns the rows written */
int64_t qv_fin_window(const int64_t *words, int64_t n, int64_t *io, int64_t late, int64_t until, int64_t start,
                      int64_t *out_g, int64_t *out_t, int64_t cap) {
  int64_t cursor = io[0], clock = io[1], k = 0;
  while (cursor < n && clock - late <= until && k < cap) {
    int64_t t = words[cursor * RAW_WORDS + W_TIME];
    if (t > clock) clock = t;
    if (t >= clock - late) {
      out_g[k] = start + cursor;
      out_t[k] = t;
      k++;
    }
    cursor++;
  }
  io[0] = cursor;
  io[1] = clock;
  return k;
}

/* The log order of a run that fits in one batch (tracer/finalize_small.py): the global rows sorted by
 * raw time, rows of equal time in global row order (the order finalize_order.log_order merges them in).
 * times[g] is row g's raw time; order gets the n global rows, tmp has room for n. A merge sort that
 * keeps already ordered halves as they are: a thread file is almost in time order, so most merges are
 * skipped and the rest are short. */
static void order_merge(const int64_t *times, int64_t *a, int64_t *tmp, int64_t lo, int64_t hi) {
  if (hi - lo < 2) return;
  int64_t mid = lo + (hi - lo) / 2;
  order_merge(times, a, tmp, lo, mid);
  order_merge(times, a, tmp, mid, hi);
  if (times[a[mid - 1]] <= times[a[mid]]) return; /* in order: equal times keep the left (lower) rows first */
  int64_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) tmp[k++] = times[a[j]] < times[a[i]] ? a[j++] : a[i++];
  while (i < mid) tmp[k++] = a[i++];
  while (j < hi) tmp[k++] = a[j++];
  memcpy(a + lo, tmp + lo, (size_t)(hi - lo) * sizeof *a);
}

void qv_fin_order(const int64_t *times, int64_t n, int64_t *order, int64_t *tmp) {
  for (int64_t g = 0; g < n; g++) order[g] = g;
  order_merge(times, order, tmp, 0, n);
}

/* The raw times of a thread file's n records, into out (contiguous) */
void qv_fin_times(const int64_t *words, int64_t n, int64_t *out) {
  for (int64_t i = 0; i < n; i++) out[i] = words[i * RAW_WORDS + W_TIME];
}

/* formats/addr_delta.encode: out[0] = in[0], out[i] = in[i] - in[i-1] (wrapping) */
void qv_fin_delta(const uint64_t *in, int64_t n, uint64_t *out) {
  uint64_t prev = 0;
  for (int64_t i = 0; i < n; i++) {
    out[i] = in[i] - prev;
    prev = in[i];
  }
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int has_key(const int64_t *keys, int64_t n, int64_t key) {
  int64_t j = lower_bound_i64(keys, n, key);
  return j < n && keys[j] == key;
}

/* finalize_control.construct_fixes over control columns (n rows, in global row order): the rows (row[i])
 * whose op becomes TARGET_DATA (a `target enter data` that opens a `target data` region: its id is the
 * aux2 of a TARGET_DATA_END construct begin of the rank) or TARGET_DATA_END (a `target exit data` that
 * closes one: its id is the id of such a row). ck: CONSTRUCT_BEGIN, CONSTRUCT_END kinds, then the
 * ConstructKind values TARGET_DATA, TARGET_ENTER_DATA, TARGET_EXIT_DATA, TARGET_DATA_END. scratch has
 * room for 2 n keys; out_pos / out_op for n fixes, ascending by position. Returns the fixes. */
int64_t qv_fin_fixes(const int16_t *kind, const int32_t *op, const int64_t *id, const int64_t *aux2,
                     const int32_t *rank, const int64_t *row, int64_t n, const int64_t *ck, int64_t *scratch,
                     int64_t *out_pos, int64_t *out_op) {
  int64_t begin = ck[0], end = ck[1], t_data = ck[2], t_enter = ck[3], t_exit = ck[4], t_end = ck[5];
  int64_t *opened = scratch, *closed = scratch + n, n_ends = 0;
  for (int64_t i = 0; i < n; i++)
    if (kind[i] == begin && op[i] == t_end) {
      opened[n_ends] = ((int64_t)rank[i] << 40) | aux2[i];
      closed[n_ends] = ((int64_t)rank[i] << 40) | id[i];
      n_ends++;
    }
  if (!n_ends) return 0;
  qsort(opened, (size_t)n_ends, sizeof *opened, cmp_i64);
  qsort(closed, (size_t)n_ends, sizeof *closed, cmp_i64);
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    if (kind[i] != begin && kind[i] != end) continue;
    int64_t key = ((int64_t)rank[i] << 40) | id[i];
    if (op[i] == t_enter && has_key(opened, n_ends, key)) {
      out_pos[m] = row[i];
      out_op[m++] = t_data;
    } else if (op[i] == t_exit && has_key(closed, n_ends, key)) {
      out_pos[m] = row[i];
      out_op[m++] = t_end;
    }
  }
  for (int64_t i = 1; i < m; i++) /* rows come in global order: this only guards it */
    for (int64_t j = i; j > 0 && out_pos[j - 1] > out_pos[j]; j--) {
      int64_t p = out_pos[j], o = out_op[j];
      out_pos[j] = out_pos[j - 1];
      out_op[j] = out_op[j - 1];
      out_pos[j - 1] = p;
      out_op[j - 1] = o;
    }
  return m;
}

/* The positions i in [0, n) with kind[i] == want and rank[i] == r, into out; returns how many */
int64_t qv_fin_select_kind_rank(const int16_t *kind, const int32_t *rank, int64_t n, int64_t want, int64_t r,
                                int64_t *out) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (kind[i] == want && rank[i] == r) out[m++] = i;
  return m;
}

/* out[j] = src[idx[j]] for elements of `width` bytes (2, 4 or 8) */
void qv_fin_gather(const void *src, int64_t width, const int64_t *idx, int64_t n, void *out) {
  if (width == 8)
    for (int64_t j = 0; j < n; j++) ((int64_t *)out)[j] = ((const int64_t *)src)[idx[j]];
  else if (width == 4)
    for (int64_t j = 0; j < n; j++) ((int32_t *)out)[j] = ((const int32_t *)src)[idx[j]];
  else
    for (int64_t j = 0; j < n; j++) ((int16_t *)out)[j] = ((const int16_t *)src)[idx[j]];
}
