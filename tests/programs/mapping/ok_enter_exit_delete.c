/* Correct: unstructured mapping with update from and delete; firstprivate scalar; device-local array. */
#include <stdio.h>
#include <stdlib.h>
#define N 64
int main(void) {
  double *x = malloc(N * sizeof(double));
  int scale = 3;
  for (int i = 0; i < N; i++) x[i] = i;
#pragma omp target enter data map(to: x[0:N])
#pragma omp target firstprivate(scale)
  {
    double tmp[N];
    for (int i = 0; i < N; i++) tmp[i] = x[i] * scale;
    for (int i = 0; i < N; i++) x[i] = tmp[N - 1 - i];
  }
#pragma omp target update from(x[0:N])
#pragma omp target exit data map(delete: x[0:N])
  double s = 0;
  for (int i = 0; i < N; i++) s += x[i];
  printf("%g\n", s);
  free(x);
  return 0;
}
