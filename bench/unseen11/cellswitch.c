// Cell types dispatched by a switch inside the loop: fluid cells average their neighbours, walls copy,
// inflow cells are set (data-dependent branches, each storing into the same output).
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 22, iters = argc > 2 ? atoi(argv[2]) : 20;
  double *u = malloc(sizeof(double) * n), *v = malloc(sizeof(double) * n);
  unsigned char *type = malloc(n);
  for (int i = 0; i < n; i++) u[i] = i % 5, type[i] = (i % 97 == 0) ? 1 : (i % 1013 == 0) ? 2 : 0;
#pragma omp target data map(tofrom: u[0:n]) map(alloc: v[0:n]) map(to: type[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++) {
      switch (type[i]) {
      case 0: v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]); break;
      case 1: v[i] = u[i]; break;
      default: v[i] = 1.0; break;
      }
    }
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++) u[i] = v[i];
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += u[i];
  printf("cellswitch %.3f\n", sum);
  return 0;
}
