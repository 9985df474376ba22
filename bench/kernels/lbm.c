// Lattice-Boltzmann-like sweep: 19 distributions per cell, collide and stream (504.polbm shape).
#include <stdio.h>
#include <stdlib.h>
#define Q 19

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 48, iters = argc > 2 ? atoi(argv[2]) : 10;
  size_t cells = (size_t)n * n * n, total = cells * Q;
  double *src = malloc(total * sizeof(double)), *dst = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) { src[i] = 1.0 / Q; dst[i] = 0.0; }
#pragma omp target data map(tofrom: src[0:total]) map(alloc: dst[0:total])
  for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for
    for (size_t c = 0; c < cells; c++) {
      double rho = 0.0;
      for (int q = 0; q < Q; q++) rho += src[c * Q + q];
      for (int q = 0; q < Q; q++) {
        size_t to = ((c + (size_t)q * 7) % cells) * Q + q;
        dst[to] = src[c * Q + q] + 0.6 * (rho / Q - src[c * Q + q]);
      }
    }
#pragma omp target teams distribute parallel for
    for (size_t i = 0; i < total; i++) src[i] = dst[i];
  }
  double s = 0;
  for (size_t i = 0; i < total; i++) s += src[i];
  printf("lbm mass %.6f\n", s);
  free(src); free(dst);
  return 0;
}
