// Dense matrix-vector products, repeated.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000, iters = argc > 2 ? atoi(argv[2]) : 20;
  double *A = malloc((size_t)n * n * sizeof(double)), *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
  for (size_t i = 0; i < (size_t)n * n; i++) A[i] = (double)(i % 13) / 13.0;
  for (int i = 0; i < n; i++) x[i] = 1.0;
#pragma omp target data map(to: A[0:(size_t)n*n]) map(tofrom: x[0:n]) map(alloc: y[0:n])
  for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int j = 0; j < n; j++) s += A[(size_t)i * n + j] * x[j];
      y[i] = s;
    }
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) x[i] = y[i] / n;
  }
  printf("matvec x[0] %.6f\n", x[0]);
  free(A); free(x); free(y);
  return 0;
}
