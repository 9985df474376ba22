/* Correct copies: `target update` brings the host copy (from) or the device copy (to) up to date
 * before omp_target_memcpy reads it; device-to-device and host-to-host copies are no host accesses. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#define N 32
int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  double x[N], y[N], h[N];
  for (int i = 0; i < N; i++) x[i] = y[i] = i;
  double *d = omp_target_alloc(sizeof x, dev), *d2 = omp_target_alloc(sizeof x, dev);
#pragma omp target data map(to: x[0:N], y[0:N])
  {
#pragma omp target
    for (int i = 0; i < N; i++) x[i] += 1.0;
    omp_target_memcpy(h, x, sizeof x, 0, 0, host, host);
#pragma omp target update from(x[0:N])
    omp_target_memcpy(d, x, sizeof x, 0, 0, dev, host);
    omp_target_memcpy(d2, d, sizeof x, 0, 0, dev, dev);
    for (int i = 0; i < N; i++) y[i] = 2.0 * i;
#pragma omp target update to(y[0:N])
    omp_target_memcpy(h, omp_get_mapped_ptr(y, dev), sizeof y, 0, 0, host, dev);
  }
  double s = 0;
#pragma omp target is_device_ptr(d2) map(tofrom: s)
  for (int i = 0; i < N; i++) s += d2[i];
  for (int i = 0; i < N; i++) s += x[i] + h[i];
  printf("%g\n", s);
  omp_target_free(d, dev);
  omp_target_free(d2, dev);
  return 0;
}
