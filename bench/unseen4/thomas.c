// Batched tridiagonal solves (Thomas algorithm, ADI-style) on the device: each system is a
// contiguous segment; a forward elimination recurrence, then a back substitution counting down
// with a `long` induction variable (x[i] needs x[i+1]); a residual dot product under
// `target teams loop reduction(+:)`.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  long m = argc > 1 ? atol(argv[1]) : 256, iters = argc > 2 ? atol(argv[2]) : 20;
  long nsys = 2048, n = nsys * m;
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), *c = malloc(sizeof(double) * n);
  double *d = malloc(sizeof(double) * n), *cp = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
  for (long i = 0; i < n; i++) {
    a[i] = -1.0; b[i] = 4.0 + (i % 7) * 0.01; c[i] = -1.0; d[i] = (i % 13) * 0.1; x[i] = 0;
  }
  double res = 0;
#pragma omp target data map(to: a[0:n], b[0:n], c[0:n]) map(tofrom: d[0:n], x[0:n]) map(alloc: cp[0:n])
  for (long t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (long s = 0; s < nsys; s++) {
      double *as = a + s * m, *bs = b + s * m, *cs = c + s * m, *ds = d + s * m;
      double *cps = cp + s * m, *xs = x + s * m;
      cps[0] = cs[0] / bs[0];
      xs[0] = ds[0] / bs[0];
      for (long i = 1; i < m; i++) {
        double w = 1.0 / (bs[i] - as[i] * cps[i - 1]);
        cps[i] = cs[i] * w;
        xs[i] = (ds[i] - as[i] * xs[i - 1]) * w;
      }
      for (long i = m - 2; i >= 0; i--) xs[i] -= cps[i] * xs[i + 1];
    }
    double r = 0;
#pragma omp target teams loop reduction(+: r) map(tofrom: r)
    for (long i = 0; i < n; i++) r += x[i] * d[i];
    res += r;
#pragma omp target teams distribute parallel for
    for (long i = 0; i < n; i++) d[i] = 0.5 * d[i] + 0.01 * x[i];
  }
  printf("thomas %.6e %.6e\n", res, x[n / 2]);
  return 0;
}
