/* A lattice-Boltzmann-like stream step on the device: cell c writes its Q values at
 * dst[((c + 7*q) % cells) * Q + q], one store instruction for all q (interleaved streams: a family
 * of runs, appended by the program itself as a chain). The section maps one element too few: only
 * the last stream's store for one cell lands past the device copy (into the allocator's slack:
 * 401 cells make the copy an odd number of doubles). */
#include <stdio.h>
#include <stdlib.h>
#define Q 19
int main(int argc, char **argv) {
  size_t cells = argc > 1 ? (size_t)atoi(argv[1]) : 401, total = cells * Q;
  double *src = malloc(total * sizeof(double)), *dst = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) src[i] = dst[i] = 1.0;
#pragma omp target data map(to: src[0:total]) map(tofrom: dst[0:total - 1])
  {
#pragma omp target teams distribute parallel for
    for (size_t c = 0; c < cells; c++)
      for (int q = 0; q < Q; q++) {
        size_t to = ((c + (size_t)q * 7) % cells) * Q + q;
        dst[to] = src[c * Q + q] * 0.5; /* expect buffer-overflow dst */
      }
  }
  printf("%.1f\n", dst[Q]);
  free(src);
  free(dst);
  return 0;
}
