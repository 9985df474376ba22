// Per row, the first column whose value passes a threshold (a `break` out of the inner loop), then the
// row's values up to it scaled.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048, iters = argc > 2 ? atoi(argv[2]) : 20;
  double *a = malloc(sizeof(double) * n * n);
  int *first = malloc(sizeof(int) * n);
  for (int k = 0; k < n * n; k++) a[k] = (k * 37 % 1000) * 0.001;
#pragma omp target data map(tofrom: a[0:n*n]) map(from: first[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      int j = 0;
      for (; j < n; j++)
        if (a[(size_t)i * n + j] > 0.998) break;
      first[i] = j;
      for (int k = 0; k < j; k++) a[(size_t)i * n + k] *= 0.999;
    }
  }
  long sum = 0;
  for (int i = 0; i < n; i++) sum += first[i];
  printf("search %ld\n", sum);
  return 0;
}
