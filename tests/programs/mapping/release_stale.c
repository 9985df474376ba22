/* Table III: stale host data after `release` (the device result is dropped). */
#include <stdio.h>
#define N 64
double x[N];
int main(void) {
  for (int i = 0; i < N; i++) x[i] = i;
#pragma omp target enter data map(to: x[0:N])
#pragma omp target
  for (int i = 0; i < N; i++) x[i] *= 2;
#pragma omp target exit data map(release: x[0:N])
  double s = 0;
  for (int i = 0; i < N; i++) s += x[i]; /* expect use-of-stale-data x */
  printf("%g\n", s);
  return 0;
}
