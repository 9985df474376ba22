/* Correct: rows through pointers to arrays, `double (*a)[N]` and the VLA type `double (*b)[n]`, on
 * the heap, mapped as a[0:N][0:N] and b[0:n][0:n]. The locals a and b are pointers (debug info types
 * "double (*)[16]", "double (*)[]"): the mapped objects are their pointees, not 8-byte stack objects. */
#include <stdio.h>
#include <stdlib.h>
#define N 16
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 12;
  double (*a)[N] = malloc(sizeof(double) * N * N);
  double (*b)[n] = malloc(sizeof(double) * n * n);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) a[i][j] = i + j;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) b[i][j] = i - j;
#pragma omp target map(tofrom: a[0:N][0:N]) map(tofrom: b[0:n][0:n])
  {
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) a[i][j] *= 2;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) b[i][j] += 1;
  }
  printf("%g %g\n", a[N - 1][N - 1], b[n - 1][0]);
  free(a);
  free(b);
  return 0;
}
