// Neighbour-list forces: each atom's up to M neighbours from a list (count per atom), a gather of their
// positions, the force on the atom written once.
#include <stdio.h>
#include <stdlib.h>
#define M 24
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200000, iters = argc > 2 ? atoi(argv[2]) : 10;
  double *x = malloc(sizeof(double) * n), *f = malloc(sizeof(double) * n);
  int *cnt = malloc(sizeof(int) * n), *list = malloc(sizeof(int) * n * M);
  for (int i = 0; i < n; i++) {
    x[i] = i * 0.01 + (i % 7) * 0.001;
    cnt[i] = 12 + i % 13;
    for (int k = 0; k < cnt[i]; k++) list[i * M + k] = (i + k * 37 + 1) % n;
  }
#pragma omp target data map(to: x[0:n], cnt[0:n], list[0:n*M]) map(from: f[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      double s = 0, xi = x[i];
      for (int k = 0; k < cnt[i]; k++) {
        double d = x[list[i * M + k]] - xi;
        s += d / (1.0 + d * d);
      }
      f[i] = s;
    }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += f[i];
  printf("pairlist %.4f\n", sum);
  return 0;
}
