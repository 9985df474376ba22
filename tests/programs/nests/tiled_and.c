/* Tiles whose loops test two terms (`i < ii + T && i < n`: the last tile of a row is partial). At -O0
 * a `&&` is a chain of blocks meeting in a phi, the loop's one exit, which the range pass's copy folds
 * into one test at the top: each tile is hoisted as at -O1. The first kernel writes c only in rows
 * below m (a while loop of three terms); the second sweeps a row's first elements of d while `j < i % 3 ||
 * j < 2`, then leaves its rows at a `break` (a second exit before the store: per access); the third reads
 * every row of c, mapped alloc. */
#include <stdio.h>
#include <stdlib.h>
#define T 8
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 37, m = argc > 2 ? atoi(argv[2]) : n - 5;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n), *c = malloc(sizeof(double) * n * n);
  double *d = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) a[i] = d[i] = i % 11;
  double s = 0;
#pragma omp target data map(to: a[0:n*n]) map(from: b[0:n*n]) map(alloc: c[0:n*n]) map(tofrom: s, d[0:n*n])
  {
#pragma omp target teams distribute parallel for collapse(2)
    for (int ii = 0; ii < n; ii += T)
      for (int jj = 0; jj < n; jj += T) {
        for (int i = ii; i < ii + T && i < n; i++)
          for (int j = jj; j < jj + T && j < n; j++) b[j * n + i] = 2.0 * a[i * n + j];
        int i = ii;
        while (i < ii + T && i < n && i < m) {
          for (int j = jj; j < jj + T && j < n; j++) c[i * n + j] = a[i * n + j] + 1.0;
          i++;
        }
      }
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < i % 3 || j < 2; j++) d[i * n + j] -= 1.0;
      for (int j = 0; j < n; j++) {
        if (j == i + 3) break; /* an exit before the store: its iterations store */
        b[i * n + j] += 1.0;
      }
    }
#pragma omp target teams distribute parallel for reduction(+: s)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) s += c[i * n + j]; /* expect use-of-uninitialized-memory c */
  }
  printf("tiled_and %.1f %.1f %.1f\n", b[5 * n + 7], d[n + 1], s > 0 ? 1.0 : 0.0);
  free(a); free(b); free(c); free(d);
  return 0;
}
