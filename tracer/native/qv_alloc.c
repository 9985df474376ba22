/* qv_alloc.c - heap allocations and mem* calls of the program.
 *
 * Why: the checkers need the extent and site of the host object behind a
 * mapped section (a section larger than its object is a bug), frees to forget
 * reused memory, and mem*() calls because the compiler turns loops into them
 * at -O1/-O2 and sanitizer coverage does not see inside libc.
 * Allocations made by the offload runtime (inside the entry-point wrappers,
 * flagged by qv_t.in_rt) are not the program's and are not recorded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "qv_omp_int.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static _Atomic int64_t g_alloc_id;

/* ---- who is calling: the program, or a system/runtime library ---- */

#define QV_SYS_MAX 128
static uintptr_t g_sys[QV_SYS_MAX][2];
static _Atomic int g_nsys;

static int is_system_path(const char *p) {
  return !strncmp(p, "/lib", 4) || !strncmp(p, "/usr/lib", 8) || strstr(p, "linux-vdso") ||
         strstr(p, "libquiver_");
}

static int sys_cb(struct dl_phdr_info *info, size_t sz, void *arg) {
  (void)sz;
  int *n = arg;
  if (!info->dlpi_name || !*info->dlpi_name || !is_system_path(info->dlpi_name)) return 0;
  for (int i = 0; i < info->dlpi_phnum && *n < QV_SYS_MAX; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    g_sys[*n][0] = info->dlpi_addr + ph->p_vaddr;
    g_sys[*n][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    (*n)++;
  }
  return 0;
}

/* (Re)build the table of system-library code ranges; called when libraries may have been loaded. */
void qv_modules_refresh(void) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  qv_t.in_tool++;
  pthread_mutex_lock(&mu);
  int n = 0;
  dl_iterate_phdr(sys_cb, &n);
  atomic_store(&g_nsys, n);
  pthread_mutex_unlock(&mu);
  qv_t.in_tool--;
}

static inline int from_program(uintptr_t pc) {
  int n = atomic_load_explicit(&g_nsys, memory_order_relaxed);
  for (int i = 0; i < n; i++)
    if (pc >= g_sys[i][0] && pc < g_sys[i][1]) return 0;
  return 1;
}

#define QV_RA ((uintptr_t)__builtin_return_address(0))

static inline int want(uintptr_t pc) { return qv_rec && !qv_t.in_tool && !qv_t.in_rt && from_program(pc); }

static void rec_alloc(void *p, size_t n, int op, uintptr_t pc) {
  qv_tls *t = &qv_t;
  t->in_tool++;
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_ALLOC;
  e.addr = (uintptr_t)p;
  e.size = n;
  e.op = op;
  e.id = atomic_fetch_add_explicit(&g_alloc_id, 1, memory_order_relaxed);
  e.pc = pc;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
  t->in_tool--;
}

static void rec_free(void *p, uintptr_t pc) {
  qv_tls *t = &qv_t;
  t->in_tool++;
  qv_untrack_host((uintptr_t)p, (uintptr_t)p + malloc_usable_size(p));
  qv_event_t e = QV_EVENT_INIT;
  e.kind = QV_K_FREE;
  e.addr = (uintptr_t)p;
  e.pc = pc;
  e.flags = QV_F_PC_RET;
  qv_emit(&e);
  t->in_tool--;
}

void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  if (p && want(QV_RA)) rec_alloc(p, n, QV_ALLOC_MALLOC, QV_RA);
  return p;
}

void *calloc(size_t k, size_t n) {
  void *p = __libc_calloc(k, n);
  if (p && want(QV_RA)) rec_alloc(p, k * n, QV_ALLOC_CALLOC, QV_RA);
  return p;
}

void *realloc(void *old, size_t n) {
  int w = want(QV_RA);
  if (old && w) rec_free(old, QV_RA);
  void *p = __libc_realloc(old, n);
  if (p && w) rec_alloc(p, n, QV_ALLOC_REALLOC, QV_RA);
  return p;
}

void free(void *p) {
  if (p && want(QV_RA)) rec_free(p, QV_RA);
  __libc_free(p);
}

void *aligned_alloc(size_t al, size_t n) {
  void *p = __libc_memalign(al, n);
  if (p && want(QV_RA)) rec_alloc(p, n, QV_ALLOC_ALIGNED, QV_RA);
  return p;
}

void *memalign(size_t al, size_t n) {
  void *p = __libc_memalign(al, n);
  if (p && want(QV_RA)) rec_alloc(p, n, QV_ALLOC_ALIGNED, QV_RA);
  return p;
}

int posix_memalign(void **out, size_t al, size_t n) {
  if (al < sizeof(void *) || (al & (al - 1))) return EINVAL;
  void *p = __libc_memalign(al, n);
  if (!p) return ENOMEM;
  *out = p;
  if (want(QV_RA)) rec_alloc(p, n, QV_ALLOC_ALIGNED, QV_RA);
  return 0;
}

/* ---- mem* ---- */

typedef void *(*memcpy_fn)(void *, const void *, size_t);
typedef void *(*memset_fn)(void *, int, size_t);
static memcpy_fn real_memcpy, real_memmove;
static memset_fn real_memset;

static void *byte_copy(void *d, const void *s, size_t n) {
  volatile unsigned char *dd = d;
  const volatile unsigned char *ss = s;
  if (dd < ss) for (size_t i = 0; i < n; i++) dd[i] = ss[i];
  else for (size_t i = n; i > 0; i--) dd[i - 1] = ss[i - 1];
  return d;
}

static void resolve(void) {
  static _Atomic int busy;
  if (atomic_exchange(&busy, 1)) return; /* dlsym may call mem* itself */
  qv_t.in_tool++;
  real_memmove = (memcpy_fn)dlsym(RTLD_NEXT, "memmove");
  real_memset = (memset_fn)dlsym(RTLD_NEXT, "memset");
  real_memcpy = (memcpy_fn)dlsym(RTLD_NEXT, "memcpy");
  qv_t.in_tool--;
}

/* Kernels run inside the entry-point wrapper (in_rt > 0): their device side is the program's. */
static inline int want_mem(uintptr_t pc) {
  return qv_rec && !qv_t.in_tool && (qv_t.dev >= 0 || !qv_t.in_rt) && from_program(pc);
}

void *memcpy(void *d, const void *s, size_t n) {
  if (want_mem(QV_RA)) {
    qv_access_range((uintptr_t)s, n, 0, QV_RA);
    qv_access_range((uintptr_t)d, n, 1, QV_RA);
  }
  if (!real_memcpy) resolve();
  return real_memcpy ? real_memcpy(d, s, n) : byte_copy(d, s, n);
}

void *memmove(void *d, const void *s, size_t n) {
  if (want_mem(QV_RA)) {
    qv_access_range((uintptr_t)s, n, 0, QV_RA);
    qv_access_range((uintptr_t)d, n, 1, QV_RA);
  }
  if (!real_memmove) resolve();
  return real_memmove ? real_memmove(d, s, n) : byte_copy(d, s, n);
}

void *memset(void *d, int c, size_t n) {
  if (want_mem(QV_RA)) qv_access_range((uintptr_t)d, n, 1, QV_RA);
  if (!real_memset) resolve();
  if (real_memset) return real_memset(d, c, n);
  volatile unsigned char *dd = d;
  for (size_t i = 0; i < n; i++) dd[i] = (unsigned char)c;
  return d;
}

/* ---- C++ operator new/delete: record at the program's call site, not inside libstdc++ ---- */

typedef void *(*new_fn)(size_t);
typedef void (*del_fn)(void *);

static void *lookup(void *_Atomic *cache, const char *sym) {
  void *f = atomic_load_explicit(cache, memory_order_acquire);
  if (!f) {
    qv_t.in_tool++;
    f = dlsym(RTLD_NEXT, sym);
    qv_t.in_tool--;
    atomic_store_explicit(cache, f, memory_order_release);
  }
  return f;
}

static void *cxx_new(void *_Atomic *cache, const char *sym, size_t n, int kind, uintptr_t pc) {
  new_fn real = (new_fn)lookup(cache, sym);
  void *p;
  qv_t.in_tool++; /* the malloc inside libstdc++ is this allocation */
  p = real ? real(n) : __libc_malloc(n ? n : 1); /* the real one throws std::bad_alloc */
  qv_t.in_tool--;
  if (p && want(pc)) rec_alloc(p, n, kind, pc);
  return p;
}

static void cxx_delete(void *_Atomic *cache, const char *sym, void *p, uintptr_t pc) {
  if (!p) return;
  if (want(pc)) rec_free(p, pc);
  del_fn real = (del_fn)lookup(cache, sym);
  qv_t.in_tool++;
  if (real) real(p);
  else __libc_free(p);
  qv_t.in_tool--;
}

static void *_Atomic g_new, *_Atomic g_new_arr, *_Atomic g_del, *_Atomic g_del_arr;
void *_Znwm(size_t n) { return cxx_new(&g_new, "_Znwm", n, QV_ALLOC_NEW, QV_RA); }
void *_Znam(size_t n) { return cxx_new(&g_new_arr, "_Znam", n, QV_ALLOC_NEW_ARRAY, QV_RA); }
void _ZdlPv(void *p) { cxx_delete(&g_del, "_ZdlPv", p, QV_RA); }
void _ZdaPv(void *p) { cxx_delete(&g_del_arr, "_ZdaPv", p, QV_RA); }
void _ZdlPvm(void *p, size_t n) { (void)n; cxx_delete(&g_del, "_ZdlPv", p, QV_RA); }
void _ZdaPvm(void *p, size_t n) { (void)n; cxx_delete(&g_del_arr, "_ZdaPv", p, QV_RA); }
