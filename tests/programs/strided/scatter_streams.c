/* A lattice-Boltzmann-like stream step: cell c writes its Q values at dst[(c + 7*q) * Q + q], one
 * store instruction for all q. Consecutive stores are Q*7+1 elements apart, while each q on its
 * own moves one cell (Q elements) per c: the tracer keeps one strided run per q, not one run per
 * cell. Cell 0 writes nothing, so the second kernel reads exactly Q uninitialised elements. */
#include <stdio.h>
#include <stdlib.h>
#define Q 19
int main(int argc, char **argv) {
  size_t cells = argc > 1 ? (size_t)atoi(argv[1]) : 512, total = cells * Q;
  double *src = malloc(total * sizeof(double)), *dst = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) src[i] = 1.0;
  double sum = 0.0;
#pragma omp target data map(to: src[0:total]) map(alloc: dst[0:total])
  {
#pragma omp target teams distribute parallel for
    for (size_t c = 1; c < cells; c++)
      for (int q = 0; q < Q; q++) {
        size_t to = ((c + (size_t)q * 7) % cells) * Q + q;
        dst[to] = src[c * Q + q] * 0.5;
      }
#pragma omp target teams distribute parallel for map(tofrom: sum) reduction(+: sum)
    for (size_t i = 0; i < total; i++)
      sum += dst[i]; /* expect use-of-uninitialized-memory dst */
  }
  printf("%.1f\n", sum);
  free(src);
  free(dst);
  return 0;
}
