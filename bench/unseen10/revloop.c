// A backward sweep (j from n - 2 down to 1) of a 2D grid, rows of n floats: negative inner stride.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024, steps = argc > 2 ? atoi(argv[2]) : 40;
  float *u = malloc(sizeof(float) * n * n), *v = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; i++) u[i] = v[i] = (float)(i % 19);
#pragma omp target data map(tofrom: u[0:n*n], v[0:n*n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      for (int j = n - 2; j >= 1; j--)
        v[i * n + j] = 0.5f * u[i * n + j] + 0.125f * (u[i * n + j + 1] + u[i * n + j - 1] + u[(i - 1) * n + j] + u[(i + 1) * n + j]);
    float *t = u; u = v; v = t;
  }
  double sum = 0;
  for (int i = 0; i < n * n; i++) sum += u[i];
  printf("revloop %.3f\n", sum);
  return 0;
}
