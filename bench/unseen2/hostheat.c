#include <stdio.h>
#include <stdlib.h>
/* A host-only OpenMP 2-D heat sweep (no target): parallel for over rows, a one-cell halo. */
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1500, steps = argc > 2 ? atoi(argv[2]) : 20;
  double *u = malloc(sizeof(double) * n * n), *v = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) u[i] = v[i] = (i % 11) * 0.1;
  for (int s = 0; s < steps; s++) {
    #pragma omp parallel for
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        v[i * n + j] = u[i * n + j] + 0.1 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                             u[i * n + j + 1] - 4 * u[i * n + j]);
    double *t = u; u = v; v = t;
  }
  printf("u[mid]=%f\n", u[n * n / 2 + 7]);
  free(u); free(v);
  return 0;
}
