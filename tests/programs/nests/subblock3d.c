/* An update of a sub-box of a 3D array, once as a plain nest (rows of n-4 doubles, planes that do
 * not touch: one strided record per plane) and once under collapse(3). b is mapped with alloc and
 * only its sub-box is ever written: both kernels read it before the first write. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20;
  size_t total = (size_t)n * n * n;
  double *a = malloc(total * sizeof(double)), *b = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) a[i] = (double)(i % 7);
#pragma omp target data map(to: a[0:total]) map(alloc: b[0:total])
  {
#pragma omp target teams distribute parallel for
    for (int i = 2; i < n - 2; i++)
      for (int j = 2; j < n - 2; j++)
        for (int k = 2; k < n - 2; k++) {
          size_t c = ((size_t)i * n + j) * n + k;
          b[c] = a[c] + b[c] * 0.5; /* expect use-of-uninitialized-memory b */
        }
#pragma omp target teams distribute parallel for collapse(3)
    for (int i = 2; i < n - 2; i++)
      for (int j = 2; j < n - 2; j++)
        for (int k = 1; k < n - 1; k++) {
          size_t c = ((size_t)i * n + j) * n + k;
          b[c] = a[c] * 0.5 + b[c]; /* expect use-of-uninitialized-memory b */
        }
#pragma omp target update from(b[0:total])
  }
  double s = 0;
  for (int i = 2; i < n - 2; i++) s += b[((size_t)i * n + i) * n + i];
  printf("%.3f\n", s);
  free(a); free(b);
  return 0;
}
