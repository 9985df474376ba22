/* omp_target_alloc memory reached through a plain pointer (OpenMP 5.1 keeps its value): no finding. */
#include <omp.h>
#include <stdio.h>
#define N 1024
int main(void) {
  int dev = omp_get_default_device();
  double *d = omp_target_alloc(N * sizeof(double), dev);
  double sum = 0;
#pragma omp target map(tofrom: sum)
  for (int i = 0; i < N; i++) { d[i] = i; sum += d[i]; }
  printf("%f\n", sum);
  omp_target_free(d, dev);
  return 0;
}
