/* Device memory from omp_target_alloc passed with is_device_ptr, and use_device_ptr: no finding. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define N 1024
int main(void) {
  int dev = omp_get_default_device();
  double *d = omp_target_alloc(N * sizeof(double), dev);
  double *x = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) x[i] = i;
#pragma omp target is_device_ptr(d)
  for (int i = 0; i < N; i++) d[i] = 3.0 * i;
#pragma omp target data map(tofrom: x[0:N])
  {
#pragma omp target data use_device_ptr(x)
    {
#pragma omp target is_device_ptr(x, d)
      for (int i = 0; i < N; i++) x[i] += d[i];
    }
  }
  printf("%f\n", x[10]);
  omp_target_free(d, dev);
  free(x);
  return 0;
}
