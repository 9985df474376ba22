/* qv_buffer.c - per-thread event buffers and raw chunk files (see qv_raw.h).
 *
 * Why this shape: the access path must never take a global lock, so each
 * thread appends to its own mmap'd buffer and writes it with one write(2)
 * when full; a fatal-signal handler and an atexit hook write what is left so
 * a crash still leaves every event that happened before it. Memory comes
 * from mmap, never malloc, because the OpenMP tracer interposes malloc.
 *
 * Crashes: the fatal-signal handler runs on a per-thread alternate stack
 * (a stack overflow still flushes), and asks every other thread that has a
 * buffer to flush its own pending state (access runs live in each thread's
 * TLS: only that thread can emit them) with a real-time "flush" signal; each
 * flushes, acknowledges and parks until the process dies. The same signal is
 * the recorded process's PR_SET_PDEATHSIG: when its parent (`trace record`,
 * or the MPI launcher's proxy) dies, it flushes everything and kills itself,
 * so no process of a run outlives the launcher and nothing recorded is lost.
 */
#define _GNU_SOURCE
#include "qv_raw.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define QV_MAX_THREADS 4096
#define QV_BUF_EVENTS 8192 /* 768 KiB per thread */
#define QV_PATH_MAX 4096

typedef struct qv_tbuf {
  _Atomic uint32_t n;
  _Atomic int busy; /* 1 while the buffer is being written to its file */
  int fd;
  int tid;
  int64_t last; /* last stamp handed out: stamps are strictly increasing per thread */
  int64_t flushed_at; /* time of the last write: a busy thread writes at least every 200 ms */
  _Atomic int ktid;   /* kernel thread id of the owner (0 once it exited): flush requests go there */
  _Atomic int acked;  /* the owner flushed its pending state at a crash and parked */
  qv_event_t ev[QV_BUF_EVENTS];
} qv_tbuf;

static int g_state; /* 0 = not initialised, 1 = recording, 2 = off */
static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_dir[QV_PATH_MAX];
static int g_rank;
static int g_rank_locked; /* set once the first file was opened */
static _Atomic int g_nthreads;
static qv_tbuf *_Atomic g_bufs[QV_MAX_THREADS];
static __thread qv_tbuf *t_buf;
__thread uintptr_t __quiver_skip[4] __attribute__((tls_model("initial-exec")));
__thread int64_t qv_last_stamp __attribute__((tls_model("initial-exec")));
static pthread_key_t g_key;
#define QV_MAX_HOOKS 4
static void (*_Atomic g_hooks[QV_MAX_HOOKS])(void); /* per-thread flushes of the tracer libraries */
static int g_flush_sig;        /* real-time signal: flush request at a crash, and parent death */
static _Atomic int g_crashing; /* a crash flush is under way (flush signals are requests) */
static uintptr_t g_text[8][2]; /* code of the quiver libraries: a thread stopped there is mid-update */
static int g_ntext;
static _Atomic int g_finalized;
/* Disk guard: past QUIVER_RAW_LIMIT_MB of events (default 4096), memory accesses are
 * dropped (everything else is kept) and the run is marked with access_limit=1. */
static uint64_t g_limit_bytes = 4096ull << 20;
static _Atomic uint64_t g_written;
static _Atomic int g_drop_access;

/* ---- small async-signal-safe helpers ---- */

static void write_all(int fd, const void *p, size_t n) {
  const char *c = (const char *)p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    c += w;
    n -= (size_t)w;
  }
}

static void *qv_mmap(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static int open_rank_file(const char *suffix, int flags) {
  char path[QV_PATH_MAX];
  snprintf(path, sizeof path, "%s/r%d.%s", g_dir, g_rank, suffix);
  g_rank_locked = 1;
  return open(path, flags | O_CLOEXEC, 0644);
}

/* ---- strings ---- */

typedef struct {
  uint64_t hash;
  const char *s;
  uint32_t len;
  int32_t id;
} qv_str_slot;

static pthread_mutex_t g_str_mu = PTHREAD_MUTEX_INITIALIZER;
static qv_str_slot *g_str_tab;
static size_t g_str_cap, g_str_count;
static char *g_arena;
static size_t g_arena_left;
static int g_str_fd = -1;

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
  return h | 1; /* 0 marks an empty slot */
}

static char *arena_copy(const char *s, size_t n) {
  if (g_arena_left < n + 1) {
    size_t sz = n + 1 > (1u << 20) ? n + 1 : (1u << 20);
    g_arena = qv_mmap(sz);
    if (!g_arena) return NULL;
    g_arena_left = sz;
  }
  char *d = g_arena;
  memcpy(d, s, n);
  d[n] = 0;
  g_arena += n + 1;
  g_arena_left -= n + 1;
  return d;
}

static int str_grow(void) {
  size_t ncap = g_str_cap ? g_str_cap * 2 : 4096;
  qv_str_slot *nt = qv_mmap(ncap * sizeof *nt);
  if (!nt) return -1;
  for (size_t i = 0; i < g_str_cap; i++) {
    if (!g_str_tab[i].hash) continue;
    size_t j = g_str_tab[i].hash & (ncap - 1);
    while (nt[j].hash) j = (j + 1) & (ncap - 1);
    nt[j] = g_str_tab[i];
  }
  if (g_str_tab) munmap(g_str_tab, g_str_cap * sizeof *g_str_tab);
  g_str_tab = nt;
  g_str_cap = ncap;
  return 0;
}

int32_t qv_strintern_n(const char *s, size_t n) {
  if (!s || !qv_init()) return -1;
  uint64_t h = fnv1a(s, n);
  int32_t id = -1;
  pthread_mutex_lock(&g_str_mu);
  if ((g_str_count + 1) * 2 > g_str_cap && str_grow() != 0) goto out;
  size_t j = h & (g_str_cap - 1);
  while (g_str_tab[j].hash) {
    qv_str_slot *e = &g_str_tab[j];
    if (e->hash == h && e->len == n && memcmp(e->s, s, n) == 0) {
      id = e->id;
      goto out;
    }
    j = (j + 1) & (g_str_cap - 1);
  }
  const char *copy = arena_copy(s, n);
  if (!copy) goto out;
  id = (int32_t)g_str_count++;
  g_str_tab[j] = (qv_str_slot){h, copy, (uint32_t)n, id};
  if (g_str_fd < 0) g_str_fd = open_rank_file("str", O_WRONLY | O_CREAT | O_APPEND);
  if (g_str_fd >= 0) {
    uint32_t hdr[2] = {(uint32_t)id, (uint32_t)n};
    char small[512];
    if (n + 8 <= sizeof small) { /* one write keeps the record whole on a crash */
      memcpy(small, hdr, 8);
      memcpy(small + 8, s, n);
      write_all(g_str_fd, small, n + 8);
    } else {
      write_all(g_str_fd, hdr, 8);
      write_all(g_str_fd, s, n);
    }
  }
out:
  pthread_mutex_unlock(&g_str_mu);
  return id;
}

int32_t qv_strintern(const char *s) { return s ? qv_strintern_n(s, strlen(s)) : -1; }

/* ---- info / modules ---- */

static pthread_mutex_t g_info_mu = PTHREAD_MUTEX_INITIALIZER;

void qv_info(const char *key, const char *value) {
  if (!qv_init()) return;
  char line[QV_PATH_MAX + 256];
  int n = snprintf(line, sizeof line, "%s=%s\n", key, value ? value : "");
  if (n <= 0) return;
  if ((size_t)n >= sizeof line) n = sizeof line - 1;
  pthread_mutex_lock(&g_info_mu);
  int fd = open_rank_file("info", O_WRONLY | O_CREAT | O_APPEND);
  if (fd >= 0) {
    write_all(fd, line, (size_t)n);
    close(fd);
  }
  pthread_mutex_unlock(&g_info_mu);
}

void qv_info_i64(const char *key, int64_t value) {
  char v[32];
  snprintf(v, sizeof v, "%lld", (long long)value);
  qv_info(key, v);
}

static int mod_cb(struct dl_phdr_info *info, size_t sz, void *arg) {
  (void)sz;
  int fd = *(int *)arg;
  char exe[QV_PATH_MAX];
  const char *name = info->dlpi_name;
  if (!name || !*name) {
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return 0;
    exe[k] = 0;
    name = exe;
  }
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    char line[QV_PATH_MAX + 128];
    uint64_t lo = info->dlpi_addr + ph->p_vaddr;
    int n = snprintf(line, sizeof line, "%llx %llx %llx %s\n", (unsigned long long)info->dlpi_addr,
                     (unsigned long long)lo, (unsigned long long)(lo + ph->p_memsz), name);
    if (n > 0 && (size_t)n < sizeof line) write_all(fd, line, (size_t)n);
  }
  return 0;
}

static pthread_mutex_t g_mod_mu = PTHREAD_MUTEX_INITIALIZER;

void qv_write_modules(void) {
  if (!qv_init()) return;
  pthread_mutex_lock(&g_mod_mu);
  /* appended: objects unloaded before exit (device images) keep their lines */
  int fd = open_rank_file("mod", O_WRONLY | O_CREAT | O_APPEND);
  if (fd >= 0) {
    dl_iterate_phdr(mod_cb, &fd);
    close(fd);
  }
  pthread_mutex_unlock(&g_mod_mu);
}

/* ---- thread buffers ---- */

static void buf_write(qv_tbuf *b) {
  if (atomic_exchange_explicit(&b->busy, 1, memory_order_acquire)) return;
  uint32_t n = atomic_load_explicit(&b->n, memory_order_acquire);
  if (n > 0 && b->fd >= 0) write_all(b->fd, b->ev, (size_t)n * sizeof(qv_event_t));
  if (atomic_fetch_add(&g_written, (uint64_t)n * sizeof(qv_event_t)) > g_limit_bytes &&
      !atomic_exchange(&g_drop_access, 1)) {
    static const char msg[] = "access_limit=1\n";
    int fd = open_rank_file("info", O_WRONLY | O_CREAT | O_APPEND);
    if (fd >= 0) {
      write_all(fd, msg, sizeof msg - 1);
      close(fd);
    }
  }
  atomic_store_explicit(&b->n, 0, memory_order_release);
  atomic_store_explicit(&b->busy, 0, memory_order_release);
}

static void thread_exit(void *p) {
  if (!p) return;
  buf_write((qv_tbuf *)p);
  atomic_store(&((qv_tbuf *)p)->ktid, 0);
}

/* The fatal-signal handler must run even when the thread's stack is exhausted (a stack overflow):
 * every thread the tracer sees gets an alternate signal stack, unless the program gave it one. */
#define QV_ALTSTACK (64u << 10)
static void altstack_install(void) {
  stack_t old;
  if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE)) return;
  void *p = qv_mmap(QV_ALTSTACK);
  if (!p) return;
  stack_t ss = {.ss_sp = p, .ss_size = QV_ALTSTACK, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) munmap(p, QV_ALTSTACK);
}

static qv_tbuf *buf_new(void) {
  int tid = atomic_fetch_add(&g_nthreads, 1);
  if (tid >= QV_MAX_THREADS) return NULL;
  qv_tbuf *b = qv_mmap(sizeof *b);
  if (!b) return NULL;
  b->tid = tid;
  char suffix[32];
  snprintf(suffix, sizeof suffix, "t%d.ev", tid);
  b->fd = open_rank_file(suffix, O_WRONLY | O_CREAT | O_APPEND);
  atomic_store(&b->ktid, (int)syscall(SYS_gettid));
  atomic_store(&g_bufs[tid], b);
  pthread_setspecific(g_key, b);
  altstack_install();
  return b;
}

static inline qv_tbuf *my_buf(void) {
  qv_tbuf *b = t_buf;
  if (__builtin_expect(b != NULL, 1)) return b;
  if (!qv_init()) return NULL;
  t_buf = b = buf_new();
  return b;
}

int qv_thread_id(void) {
  qv_tbuf *b = my_buf();
  return b ? b->tid : -1;
}

/* thread -1: the caller's */
static inline void emit_as(const qv_event_t *e, int thread) {
  if (__builtin_expect(__atomic_load_n(&g_state, __ATOMIC_RELAXED) == 2, 0)) return;
  qv_tbuf *b = my_buf();
  if (!b) return;
  if (__builtin_expect(e->kind == 50, 1) && atomic_load_explicit(&g_drop_access, memory_order_relaxed)) return;
  uint32_t n = atomic_load_explicit(&b->n, memory_order_relaxed);
  if (n >= QV_BUF_EVENTS) {
    buf_write(b);
    n = atomic_load_explicit(&b->n, memory_order_relaxed);
    if (n >= QV_BUF_EVENTS) return; /* buffer busy in a crash flush: drop */
  }
  qv_event_t *d = &b->ev[n];
  *d = *e;
  d->thread = thread < 0 ? b->tid : thread;
  if (d->time_ns == 0) {
    int64_t now = qv_now();
    d->time_ns = b->last = now > b->last ? now : b->last + 1;
    if (thread < 0) qv_last_stamp = b->last;
  }
  atomic_store_explicit(&b->n, n + 1, memory_order_release);
  if (__builtin_expect(((n + 1) & 255) == 0, 0)) { /* a SIGKILL loses at most ~200 ms */
    int64_t now = d->time_ns;
    if (now - b->flushed_at > 200000000LL) {
      b->flushed_at = now;
      buf_write(b);
    }
  }
}

void qv_emit(const qv_event_t *e) { emit_as(e, -1); }

void qv_emit_as(const qv_event_t *e, int thread) {
  if (e->time_ns) emit_as(e, thread); /* its own time: this stream's clock (b->last) is not touched */
}

int64_t qv_stamp(void) {
  qv_tbuf *b = my_buf();
  int64_t now = qv_now();
  if (!b) return now;
  return qv_last_stamp = b->last = now > b->last ? now : b->last + 1;
}

void qv_flush_thread(void) {
  if (t_buf) buf_write(t_buf);
}

void qv_flush_all(void) {
  int n = atomic_load(&g_nthreads);
  if (n > QV_MAX_THREADS) n = QV_MAX_THREADS;
  for (int i = 0; i < n; i++) {
    qv_tbuf *b = atomic_load(&g_bufs[i]);
    if (b) buf_write(b);
  }
}

/* ---- crash and exit ---- */

static const int k_fatal[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT, SIGQUIT,
                              SIGHUP, SIGXCPU, SIGXFSZ, SIGSYS};

static void run_hooks(void) {
  for (int i = 0; i < QV_MAX_HOOKS; i++) {
    void (*h)(void) = atomic_load(&g_hooks[i]);
    if (h) h();
  }
}

static void append_info(const char *line, size_t n) {
  int fd = open_rank_file("info", O_WRONLY | O_CREAT | O_APPEND);
  if (fd >= 0) {
    write_all(fd, line, n);
    close(fd);
  }
}

static void sleep_ns(long ns) {
  struct timespec ts = {0, ns};
  nanosleep(&ts, NULL);
}

/* The caller's pending state and buffer, then every other thread's: each is asked (flush signal)
 * to emit its own pending access runs and write its buffer, and parks; a thread that does not
 * answer within ~300 ms (signal blocked, stuck) has its buffer written from here.
 * Async-signal-safe. */
static void flush_everything(void) {
  atomic_store(&g_crashing, 1);
  run_hooks();
  qv_tbuf *self = t_buf;
  if (self) {
    buf_write(self);
    atomic_store(&self->acked, 1);
  }
  int n = atomic_load(&g_nthreads);
  if (n > QV_MAX_THREADS) n = QV_MAX_THREADS;
  if (g_flush_sig) {
    pid_t pid = getpid();
    for (int round = 0; round < 150; round++) { /* 150 x 2 ms */
      int waiting = 0;
      for (int i = 0; i < n; i++) {
        qv_tbuf *b = atomic_load(&g_bufs[i]);
        if (!b || b == self || atomic_load(&b->acked)) continue;
        int ktid = atomic_load(&b->ktid);
        if (ktid <= 0) continue;
        if (syscall(SYS_tgkill, pid, ktid, g_flush_sig) == 0) waiting++;
        else atomic_store(&b->ktid, 0); /* gone */
      }
      if (!waiting) break;
      sleep_ns(2000000);
    }
  }
  qv_flush_all();
}

static int stopped_in_tracer(void *uc) {
  uintptr_t pc = 0;
#if defined(__x86_64__)
  pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.pc;
#endif
  for (int i = 0; i < g_ntext; i++)
    if (pc >= g_text[i][0] && pc < g_text[i][1]) return 1;
  return 0;
}

static void park(void) {
  for (int i = 0; i < 5000; i++) sleep_ns(1000000); /* the crashing thread ends the process */
}

/* A crash on another thread: flush this thread's pending state, acknowledge, park. A thread stopped
 * inside the tracer's own code or while writing its buffer is mid-update: it returns and is asked
 * again 2 ms later. Otherwise
 * (no crash under way) it is the parent-death signal: the launcher or the MPI proxy is gone. */
static void flush_signal(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  if (!atomic_load(&g_crashing)) {
    static _Atomic int once;
    if (atomic_exchange(&once, 1) == 0) {
      flush_everything();
      static const char line[] = "parent_died=1\n";
      append_info(line, sizeof line - 1);
    }
    kill(getpid(), SIGKILL);
    return;
  }
  qv_tbuf *b = t_buf;
  if (!b || atomic_load(&b->acked)) {
    park();
    return;
  }
  if (stopped_in_tracer(uc) || atomic_load(&b->busy)) return;
  run_hooks();
  buf_write(b);
  atomic_store(&b->acked, 1);
  park();
}

static void fatal_handler(int sig) {
  static _Atomic int once;
  if (atomic_exchange(&once, 1) == 0) {
    flush_everything();
    char line[48];
    int n = snprintf(line, sizeof line, "signal=%d\n", sig);
    append_info(line, (size_t)n);
  } else {
    /* another thread is flushing (two faults at once): this one's pending state too, then wait */
    qv_tbuf *b = t_buf;
    if (b && !atomic_exchange(&b->acked, 1)) {
      run_hooks();
      buf_write(b);
    }
    park();
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void qv_set_crash_hook(void (*hook)(void)) {
  for (int i = 0; i < QV_MAX_HOOKS; i++) {
    void (*expected)(void) = NULL;
    if (atomic_load(&g_hooks[i]) == hook) return;
    if (atomic_compare_exchange_strong(&g_hooks[i], &expected, hook)) return;
  }
}

void qv_flush_process(const char *key, int64_t value) {
  if (!qv_active()) return;
  run_hooks(); /* other threads keep running: one may hold a lock the caller's next call needs */
  qv_flush_all();
  char line[96];
  int n = snprintf(line, sizeof line, "%s=%lld\n", key, (long long)value);
  if (n > 0 && (size_t)n < sizeof line) append_info(line, (size_t)n);
}

static int text_cb(struct dl_phdr_info *info, size_t sz, void *arg) {
  (void)sz;
  (void)arg;
  if (!info->dlpi_name || !strstr(info->dlpi_name, "/libquiver_")) return 0;
  for (int i = 0; i < info->dlpi_phnum && g_ntext < 8; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    g_text[g_ntext][0] = info->dlpi_addr + ph->p_vaddr;
    g_text[g_ntext][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    g_ntext++;
  }
  return 0;
}

/* A free real-time signal for flush requests (the highest one nobody handles). */
static int pick_flush_signal(void) {
  for (int s = SIGRTMAX - 1; s >= SIGRTMIN + 4; s--) {
    struct sigaction old;
    if (sigaction(s, NULL, &old) == 0 && old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO)) return s;
  }
  return 0;
}

/* No process of a run outlives `trace record` (QUIVER_LAUNCHER_PID): the recording process flushes
 * and dies when its parent dies; the launcher's own processes (mpiexec's proxies) are killed. */
static void guard_parent(int recording) {
  if (recording) {
    g_flush_sig = pick_flush_signal();
    if (g_flush_sig) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_sigaction = flush_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
      sigaction(g_flush_sig, &sa, NULL);
    }
    dl_iterate_phdr(text_cb, NULL);
  }
  const char *lp = getenv("QUIVER_LAUNCHER_PID");
  if (!lp || !*lp) return;
  prctl(PR_SET_PDEATHSIG, recording && g_flush_sig ? g_flush_sig : SIGKILL);
  pid_t launcher = (pid_t)atoi(lp);
  if (launcher > 0 && kill(launcher, 0) != 0 && errno == ESRCH) kill(getpid(), SIGKILL); /* gone already */
}

static void at_exit(void) { qv_finalize(); }

/* Events emitted by other libraries' exit handlers after qv_finalize (e.g. the
 * offload runtime unregistering its images) still reach the files. */
__attribute__((destructor)) static void at_unload(void) {
  if (qv_active()) qv_flush_all();
}

/* A forked child must not write into the parent's files (same fds, same rank). */
static void fork_child(void) {
  __atomic_store_n(&g_state, 2, __ATOMIC_RELEASE);
  t_buf = NULL;
}

static int env_int(const char *name, int *out) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  *out = atoi(v);
  return 1;
}

int qv_init(void) {
  int s = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
  if (__builtin_expect(s != 0, 1)) return s == 1;
  pthread_mutex_lock(&g_init_mu);
  if (g_state == 0) {
    const char *dir = getenv("QUIVER_RAW_DIR");
    if (!dir || !*dir || strlen(dir) >= sizeof g_dir) {
      __atomic_store_n(&g_state, 2, __ATOMIC_RELEASE);
    } else {
      strcpy(g_dir, dir);
      const char *lim = getenv("QUIVER_RAW_LIMIT_MB");
      if (lim && *lim && atoll(lim) >= 0) g_limit_bytes = (uint64_t)atoll(lim) << 20;
      mkdir(g_dir, 0755);
      int have_rank = env_int("QUIVER_RANK", &g_rank) || env_int("PMI_RANK", &g_rank) ||
                      env_int("OMPI_COMM_WORLD_RANK", &g_rank);
      if (!have_rank) g_rank = 0;
      /* One process per rank records: not the launcher (QUIVER_EXPECT_RANK set by `trace record
       * -n` and no rank in the environment), not a program the recorded one starts. */
      char own[QV_PATH_MAX + 32];
      snprintf(own, sizeof own, "%s/r%d.owner", g_dir, g_rank);
      int ofd = -1;
      if (have_rank || !getenv("QUIVER_EXPECT_RANK"))
        ofd = open(own, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (ofd < 0) {
        /* the launcher's processes (mpiexec and its proxies) die with it */
        if (!have_rank && getenv("QUIVER_EXPECT_RANK")) guard_parent(0);
        __atomic_store_n(&g_state, 2, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&g_init_mu);
        return 0;
      }
      char pid[24];
      int pn = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
      write_all(ofd, pid, (size_t)pn);
      close(ofd);
      g_rank_locked = 1;
      pthread_atfork(NULL, NULL, fork_child);
      pthread_key_create(&g_key, thread_exit);
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = fatal_handler;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_NODEFER | SA_ONSTACK;
      for (size_t i = 0; i < sizeof k_fatal / sizeof k_fatal[0]; i++) {
        struct sigaction old;
        /* leave handlers the program installed before us alone */
        if (sigaction(k_fatal[i], NULL, &old) == 0 && old.sa_handler != SIG_DFL) continue;
        sigaction(k_fatal[i], &sa, NULL);
      }
      atexit(at_exit);
      altstack_install();
      guard_parent(1);
      __atomic_store_n(&g_state, 1, __ATOMIC_RELEASE);
    }
  }
  pthread_mutex_unlock(&g_init_mu);
  if (g_state == 1) {
    static _Atomic int info_once;
    if (atomic_exchange(&info_once, 1) == 0) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      qv_info_i64("raw_version", QV_RAW_VERSION);
      qv_info_i64("pid", getpid());
      qv_info_i64("start_mono_ns", qv_now());
      qv_info_i64("start_unix_ns", (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    }
  }
  return g_state == 1;
}

int qv_active(void) { return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == 1; }
int qv_rank(void) { return g_rank; }
const char *qv_raw_dir(void) { return qv_active() ? g_dir : NULL; }

void qv_set_rank(int rank) {
  if (!g_rank_locked) g_rank = rank;
}

void qv_finalize(void) {
  if (!qv_active() || atomic_exchange(&g_finalized, 1)) return;
  qv_flush_all();
  qv_write_modules();
  qv_info_i64("threads", atomic_load(&g_nthreads));
  qv_info_i64("end_mono_ns", qv_now());
  qv_info("clean_exit", "1");
}
