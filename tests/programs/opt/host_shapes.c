/* Accesses the load/store instrumentation must see at every optimisation level: loops that
 * become memset/memcpy, struct copies, long double (10-byte) stores, small constant memsets,
 * a conditional store, a reduction (tests/tracer/test_opt_levels.py). */
#include <stdio.h>
#include <string.h>
#define N 1000
struct P { double x, y, z; };
static float a[N], b[N];
static struct P ps[8], qs[8];
static long double ld[16];
static int small[4];
static char bytes[24];
int main(int argc, char **argv) {
  int k = argc;
#pragma omp target enter data map(alloc: a[0:N], b[0:N], ps[0:8], qs[0:8], ld[0:16], small[0:4], bytes[0:24])
  for (int i = 0; i < N; i++) a[i] = 0.0f;          /* memset idiom */
  for (int i = 0; i < N; i++) b[i] = a[i];          /* memcpy idiom */
  for (int i = 0; i < N; i++) if (a[i] > k) b[i] = 1.0f; /* conditional: masked when vectorised */
  for (int i = 0; i < 8; i++) ps[i] = qs[i];        /* struct copy */
  for (int i = 0; i < 16; i++) ld[i] = i * 0.5L;    /* 10-byte long double */
  small[0] = 0; small[1] = 0; small[2] = 0; small[3] = 0; /* small memset */
  memset(bytes, k, 24);                              /* small constant memset intrinsic */
  qs[3] = ps[argc];                                  /* 24-byte struct copy */
  float s = 0; for (int i = 0; i < N; i++) s += b[i] * a[i];
  printf("%g %g %d %d\n", s, (double)ld[3], small[2], bytes[5]);
#pragma omp target exit data map(delete: a[0:N], b[0:N], ps[0:8], qs[0:8], ld[0:16], small[0:4], bytes[0:24])
  return 0;
}
