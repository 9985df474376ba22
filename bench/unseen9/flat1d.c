// A 2D 5-point stencil written over a flattened index k (size_t), interior cells found by k % n:
// one loop, not a nest.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1024; int steps = argc > 2 ? atoi(argv[2]) : 20;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
  for (size_t k = 0; k < n * n; k++) a[k] = b[k] = (double)(k % 17);
#pragma omp target data map(tofrom: a[0:n*n], b[0:n*n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (size_t k = n; k < n * n - n; k++) {
      size_t j = k % n;
      if (j == 0 || j == n - 1) continue;
      b[k] = 0.25 * (a[k - 1] + a[k + 1] + a[k - n] + a[k + n]);
    }
    double *x = a; a = b; b = x;
  }
  double sum = 0;
  for (size_t k = 0; k < n * n; k++) sum += a[k];
  printf("flat1d %.3f\n", sum);
  return 0;
}
