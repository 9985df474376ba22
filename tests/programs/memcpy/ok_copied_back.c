/* Correct: the kernel writes its result to an omp_target_alloc buffer (is_device_ptr) and to v.p's
 * device copy; v.p is mapped `to` only, but omp_target_memcpy copies the result back into v.p's
 * host bytes before the host reads them. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define N 64
typedef struct { int n; double *p; } series_t;
int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  double *d = omp_target_alloc(N * sizeof(double), dev);
  series_t v = {N, malloc(N * sizeof(double))};
  for (int i = 0; i < N; i++) v.p[i] = i;
#pragma omp target data map(to: v) map(to: v.p[0:N])
  {
#pragma omp target is_device_ptr(d)
    for (int i = 0; i < v.n; i++) {
      v.p[i] = 2.0 * v.p[i];
      d[i] = v.p[i];
    }
    omp_target_memcpy(v.p, d, N * sizeof(double), 0, 0, host, dev);
  }
  double s = 0;
  for (int i = 0; i < N; i++) s += v.p[i];
  printf("%g\n", s);
  omp_target_free(d, dev);
  free(v.p);
  return 0;
}
