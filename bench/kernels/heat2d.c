// 2D heat equation, Jacobi sweeps over the interior of an n x n grid with a fixed halo of one cell;
// the two grids stay mapped (`target data`), the host swaps the pointers.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 50;
  size_t total = (size_t)n * n;
  double *u = malloc(total * sizeof(double)), *v = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) u[i] = v[i] = 0.0;
  for (int j = 0; j < n; j++) u[j] = v[j] = 100.0;  // hot top edge
#pragma omp target data map(tofrom: u[0:total]) map(tofrom: v[0:total])
  {
    for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for
      for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
          v[(size_t)i * n + j] = 0.25 * (u[(size_t)(i - 1) * n + j] + u[(size_t)(i + 1) * n + j]
                                         + u[(size_t)i * n + j - 1] + u[(size_t)i * n + j + 1]);
      double *t = u; u = v; v = t;
    }
  }
  double s = 0;
  for (size_t i = 0; i < total; i++) s += u[i];
  printf("heat2d sum %.6f\n", s);
  free(u); free(v);
  return 0;
}
