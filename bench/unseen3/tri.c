/* Device symmetric rank-1 updates on the upper triangle: row i touches columns i..n-1 (a triangular
 * nest: the row length and start move with the outer index). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1200, reps = argc > 2 ? atoi(argv[2]) : 10;
  double *a = malloc(sizeof(double) * n * n), *x = malloc(sizeof(double) * n);
  for (int i = 0; i < n * n; i++) a[i] = 0;
  for (int i = 0; i < n; i++) x[i] = 1.0 / (i + 1);
#pragma omp target data map(tofrom: a[0:n*n]) map(to: x[0:n])
  for (int r = 0; r < reps; r++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      for (int j = i; j < n; j++)
        a[i * n + j] += x[i] * x[j];
  }
  printf("tri %.6f\n", a[(n / 2) * n + n - 1]);
  free(a); free(x);
  return 0;
}
