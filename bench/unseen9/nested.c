// target teams distribute over rows with a nested `parallel for` over columns (not combined), a
// 3D 7-point stencil, grid of k planes of rows.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 128, steps = argc > 2 ? atoi(argv[2]) : 20;
  long nn = (long)n * n * n;
  float *u = malloc(sizeof(float) * nn), *v = malloc(sizeof(float) * nn);
  for (long i = 0; i < nn; i++) u[i] = v[i] = (float)(i % 7);
#pragma omp target data map(tofrom: u[0:nn]) map(to: v[0:nn])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute
    for (int k = 1; k < n - 1; k++) {
#pragma omp parallel for
      for (int j = 1; j < n - 1; j++)
        for (int i = 1; i < n - 1; i++) {
          long c = ((long)k * n + j) * n + i;
          v[c] = u[c] + 0.1f * (u[c - 1] + u[c + 1] + u[c - n] + u[c + n] + u[c - (long)n * n] + u[c + (long)n * n] - 6 * u[c]);
        }
    }
    float *x = u; u = v; v = x;
  }
  double sum = 0;
  for (long i = 0; i < nn; i++) sum += u[i];
  printf("nested %.3f\n", sum);
  return 0;
}
