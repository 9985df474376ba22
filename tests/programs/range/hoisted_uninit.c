/* A read of a device copy nobody initialised, in an affine loop the range pass hoists. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  double *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) b[i] = i;
#pragma omp target enter data map(alloc: b[0:n])
#pragma omp target map(from: c[0:n])
  for (int i = 0; i < n; i++) c[i] = 2.0 * b[i]; /* expect use-of-uninitialized-memory b */
#pragma omp target exit data map(delete: b[0:n])
  printf("%.1f\n", c[n - 1]);
  free(b); free(c);
  return 0;
}
