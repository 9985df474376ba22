// A 1D advection step on a ring: periodic neighbours through `%` (a[(i + 1) % n], a[(i + n - 1) % n]).
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 21, steps = argc > 2 ? atoi(argv[2]) : 30;
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) a[i] = (i % 101) * 0.01;
#pragma omp target data map(tofrom: a[0:n]) map(alloc: b[0:n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) b[i] = a[i] - 0.3 * (a[i] - a[(i + n - 1) % n]) + 0.1 * (a[(i + 1) % n] - a[i]);
    double *t = a; a = b; b = t;
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += a[i];
  printf("periodic %.6f\n", sum);
  return 0;
}
