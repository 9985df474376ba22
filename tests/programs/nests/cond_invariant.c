/* A row's value read under a data-dependent test inside the inner loop, `if (a[k] > t) b[k] += s[i]`: the
 * compiler may not hoist s[i] above the test, so each true test reads it again. `u` is mapped `alloc` and
 * never written: `spread` reads it (one finding), however many times per row. */
#include <stdio.h>
#include <stdlib.h>
static void scale(const double *a, double *b, const double *s, int n, int m) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      if (a[i * n + j] > 0.3) b[i * n + j] += s[i];
}
static void spread(const double *a, double *c, const double *u, int n, int m) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      if (a[i * n + j] > 0.6) c[i * n + j] = u[i]; /* expect use-of-uninitialized-memory u */
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200, m = 16;
  double *a = malloc(sizeof(double) * n * m), *b = calloc((size_t)n * m, sizeof(double));
  double *c = calloc((size_t)n * m, sizeof(double)), *s = malloc(sizeof(double) * m), *u = malloc(sizeof(double) * m);
  for (int k = 0; k < n * m; k++) a[k] = (k * 7919 % 1000) * 0.001;
  for (int i = 0; i < m; i++) s[i] = 1.0 / (1 + i), u[i] = 0;
#pragma omp target data map(to: a[0:n * m], s[0:m]) map(alloc: u[0:m]) map(tofrom: b[0:n * m]) map(from: c[0:n * m])
  {
    scale(a, b, s, n, m);
    spread(a, c, u, n, m);
  }
  double sum = 0;
  for (int k = 0; k < n * m; k++) sum += b[k];
  printf("%.4f\n", sum);
  free(a); free(b); free(c); free(s); free(u);
  return 0;
}
