/* A kernel updates v.p on the device; the host then copies v.p's host bytes, which are stale,
 * into an omp_target_alloc buffer (twice: omp_target_memcpy and omp_target_memcpy_rect). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define N 64
typedef struct { int n; double *p; } series_t;
int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  series_t v = {N, malloc(N * sizeof(double))};
  for (int i = 0; i < N; i++) v.p[i] = i;
  double *d = omp_target_alloc(N * sizeof(double), dev);
  size_t vol[1] = {N}, zero[1] = {0}, dims[1] = {N};
#pragma omp target data map(to: v) map(tofrom: v.p[0:N])
  {
#pragma omp target
    for (int i = 0; i < v.n; i++) v.p[i] = 3.0 * v.p[i] + 1.0;
    omp_target_memcpy(d, v.p, N * sizeof(double), 0, 0, dev, host); /* expect use-of-stale-data v.p */
    omp_target_memcpy_rect(d, v.p, sizeof(double), 1, vol, zero, zero, dims, dims, dev, host); /* expect use-of-stale-data v.p */
  }
  double s = 0;
#pragma omp target is_device_ptr(d) map(tofrom: s)
  for (int i = 0; i < N; i++) s += d[i];
  printf("%g %g\n", s, v.p[N - 1]);
  omp_target_free(d, dev);
  free(v.p);
  return 0;
}
