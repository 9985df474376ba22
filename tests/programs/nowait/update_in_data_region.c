/* `target update from` inside a data region may run before the nowait kernel (implicit map) ends. */
#include <stdio.h>
#include <stdlib.h>
#define N 4096
int main(void) {
  double *a = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) a[i] = 1.0;
#pragma omp target data map(tofrom: a[0:N])
  {
#pragma omp target teams distribute parallel for nowait
    for (int i = 0; i < N; i++) a[i] = a[i] * 3.0;
#pragma omp target update from(a[0:N])
    double s = 0;
    for (int i = 0; i < N; i++) s += a[i];
    printf("%f\n", s);
  }
#pragma omp taskwait
  free(a);
  return 0;
}
