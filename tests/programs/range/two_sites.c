/* Two loads of `a` per iteration with an indexed store between them: two call sites feed one run
 * of `a` in turn (each site appends to it without calling while the other does too). The last
 * element of `a` is never written on the device; the run, and so the finding, has the line of its
 * first access. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
  int *idx = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++) idx[i] = i;
#pragma omp target data map(to: idx[0:n]) map(alloc: a[0:n]) map(from: b[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n - 1; i++) a[i] = i;
#pragma omp target teams distribute parallel for
    for (int j = 0; j < n / 2; j++) {
      b[idx[2 * j]] = a[2 * j]; /* expect use-of-uninitialized-memory a */
      b[idx[2 * j + 1]] = a[2 * j + 1];
    }
  }
  printf("%.1f\n", b[n - 2]);
  free(a); free(b); free(idx);
  return 0;
}
