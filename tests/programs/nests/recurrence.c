/* Recurrences in the rows of worksharing loops (one kernel each): forward a[i] = a[i-1] ..., back
 * substitutions counting down with a `long` index, a[i] += a[i+1] ... and x[i] -= c[i] * x[i+2].
 * The load reads what the store wrote one or two iterations before (but in its first iterations),
 * so the range pass reports the load's other bytes, the stores, then the rest (recurrence()), per
 * row, instead of the loop's per-access copy. Each row's last x is never written on the device: its
 * read is the one finding (the other loads read a[0] and what the loops wrote). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  long rows = argc > 1 ? atol(argv[1]) : 16, n = argc > 2 ? atol(argv[2]) : 100;
  double *x = malloc(sizeof(double) * rows * n), *a = malloc(sizeof(double) * rows * n);
  double *c = malloc(sizeof(double) * rows * n);
  for (long i = 0; i < rows * n; i++) c[i] = 0.25 + (i % 7) * 0.01;
#pragma omp target enter data map(to: c[0:rows*n]) map(alloc: x[0:rows*n], a[0:rows*n])
#pragma omp target teams distribute parallel for
  for (long r = 0; r < rows; r++) {
    for (long i = 0; i < n - 1; i++) x[r * n + i] = c[r * n + i];
    a[r * n] = 1.0;
  }
#pragma omp target teams distribute parallel for
  for (long r = 0; r < rows; r++) {
    double *ar = a + r * n, *cr = c + r * n;
    for (long i = 1; i < n; i++) ar[i] = ar[i - 1] * 0.5 + cr[i];
  }
#pragma omp target teams distribute parallel for
  for (long r = 0; r < rows; r++) {
    double *ar = a + r * n;
    for (long i = n - 2; i >= 0; i--) ar[i] += 0.125 * ar[i + 1];
  }
#pragma omp target teams distribute parallel for
  for (long r = 0; r < rows; r++) {
    double *xr = x + r * n, *cr = c + r * n;
    for (long i = n - 3; i >= 0; i--) xr[i] -= cr[i] * xr[i + 2]; /* expect use-of-uninitialized-memory x */
  }
#pragma omp target exit data map(from: x[0:rows*n], a[0:rows*n]) map(delete: c[0:rows*n])
  printf("%.4f %.4f\n", a[rows * n - 1], x[0]);
  free(x); free(a); free(c);
  return 0;
}
