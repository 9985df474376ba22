/* 2D Jacobi sweeps over the interior of an n x n grid with a one-cell halo: the rows of n-2 doubles
 * do not touch, so each access of the nest is one strided record. u's section leaves out the bottom
 * halo row, which the reads of the row below the last interior row reach. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 48, iters = 3;
  size_t total = (size_t)n * n;
  double *u = malloc(total * sizeof(double)), *v = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) { u[i] = (double)(i % 5); v[i] = 0.0; }
#pragma omp target data map(to: u[0:total - n]) map(tofrom: v[0:total])
  for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        v[(size_t)i * n + j] = 0.25 * (u[(size_t)(i - 1) * n + j] + u[(size_t)i * n + j - 1] + u[(size_t)i * n + j + 1]
                                       + u[(size_t)(i + 1) * n + j]); /* expect buffer-overflow u */
  }
  double s = 0; /* (the last interior row read bytes past u's device copy: left out) */
  for (size_t i = 0; i < total - 2 * (size_t)n; i++) s += v[i];
  printf("%.3f\n", s);
  free(u); free(v);
  return 0;
}
