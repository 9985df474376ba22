/* All-pairs loops that skip the pair of an element with itself, `if (j != i)`: `offdiag` writes every
 * entry of a row of m but the diagonal, `pairsum` reads the same entries (no finding), `rowsum` reads the
 * whole row, diagonal included, which nothing wrote (m is mapped `alloc`). `selfonly`'s inner loop runs
 * only the iteration j == i, so neither y[j] nor the invariant y[i] is ever read (y is never written). */
#include <stdio.h>
#include <stdlib.h>
static void offdiag(double *m, const double *x, int n) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (j != i) m[i * n + j] = x[j] - x[i];
}
static void pairsum(const double *m, double *out, int n) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++)
      if (j != i) s += m[i * n + j];
    out[i] = s;
  }
}
static void rowsum(const double *m, double *out, int n) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += m[i * n + j]; /* expect use-of-uninitialized-memory m */
    out[i] += s;
  }
}
static void selfonly(const double *y, const int *lo, const int *hi, double *out, int n) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = lo[i]; j < hi[i]; j++)
      if (j != i) s += y[i] * y[j];
    out[i] += s;
  }
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 90;
  double *m = malloc(sizeof(double) * n * n), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  double *out = malloc(sizeof(double) * n);
  int *lo = malloc(sizeof(int) * n), *hi = malloc(sizeof(int) * n);
  int all = argc > 2; /* (selfonly over every pair: the call counts of tests/tracer/test_call_site_caches.py) */
  for (int i = 0; i < n; i++) x[i] = i % 7, y[i] = 1, out[i] = 0, lo[i] = all ? 0 : i, hi[i] = all ? n : i + 1;
#pragma omp target data map(alloc: m[0:n * n], y[0:n]) map(to: x[0:n], lo[0:n], hi[0:n]) map(tofrom: out[0:n])
  {
    offdiag(m, x, n);
    pairsum(m, out, n);
    selfonly(y, lo, hi, out, n);
    rowsum(m, out, n);
  }
  printf("%d\n", n);
  free(m); free(x); free(y); free(out); free(lo); free(hi);
  return 0;
}
