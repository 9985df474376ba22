// Reversal and a shifted blend over the same arrays: b[i] = a[n - 1 - i], then c[i] = 0.5 * (b[i] + a[n - 1 - i]).
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 22, iters = argc > 2 ? atoi(argv[2]) : 20;
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), *c = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) a[i] = i % 17;
#pragma omp target data map(to: a[0:n]) map(alloc: b[0:n]) map(from: c[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) b[i] = a[n - 1 - i];
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) c[i] = 0.5 * (b[i] + a[n - 1 - i]);
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += c[i] * (i % 3);
  printf("revcopy %.1f\n", sum);
  return 0;
}
