/* Out-of-place transposes: each kernel reads rows and writes columns (the store strides by a row,
 * one strided record of single elements per row of the read; the load one range per row). The
 * first kernel leaves b's last column unwritten (i < n - 1), which the second reads with every
 * row; c is mapped `to` instead of `from`, so the host transpose reads the old c. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  size_t total = (size_t)n * n;
  float *a = malloc(total * sizeof(float)), *b = malloc(total * sizeof(float));
  float *c = malloc(total * sizeof(float)), *d = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; i++) a[i] = (float)(i % 11), c[i] = 0.0f;
#pragma omp target data map(to: a[0:total], c[0:total]) map(alloc: b[0:total])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n - 1; i++)
      for (int j = 0; j < n; j++) b[(size_t)j * n + i] = a[(size_t)i * n + j] + 1.0f;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) c[j * n + i] = b[i * n + j] * 0.5f; /* expect use-of-uninitialized-memory b */
  }
  double t = 0;
#pragma omp parallel for reduction(+: t)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      d[(size_t)j * n + i] = c[(size_t)i * n + j]; /* expect use-of-stale-data c */
      t += d[(size_t)j * n + i];
    }
  printf("%.3f\n", t);
  free(a); free(b); free(c); free(d);
  return 0;
}
