/* Device sparse event deposit: about 5% of the cells of a grid see an event in a step (a hash of the
 * cell and the step), and only those are written (long gaps between short runs); a second kernel
 * counts per row where the deposit exceeded a level (a conditional read of a 16-byte struct field
 * pair is avoided: plain doubles). */
#include <stdio.h>
#include <stdlib.h>
static unsigned mix(unsigned x) {
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  x *= 0x297a2d39u;
  x ^= x >> 15;
  return x;
}
int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 2000, ny = argc > 2 ? atoi(argv[2]) : 1000, steps = argc > 3 ? atoi(argv[3]) : 20;
  size_t n = (size_t)nx * ny;
  double *dep = calloc(n, sizeof(double));
  int *hot = calloc(ny, sizeof(int));
#pragma omp target data map(tofrom: dep[0:n]) map(from: hot[0:ny])
  for (int t = 0; t < steps; t++) {
#pragma omp target teams distribute parallel for
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        unsigned h = mix((unsigned)(j * nx + i) * 31u + (unsigned)t);
        if (h % 20 == 0) dep[(size_t)j * nx + i] += (h >> 8) % 100 * 0.01;
      }
#pragma omp target teams distribute parallel for
    for (int j = 0; j < ny; j++) {
      int c = 0;
      for (int i = 0; i < nx; i++)
        if (mix((unsigned)i + 7u * (unsigned)j) % 4 == 0) c += dep[(size_t)j * nx + i] > 0.5;
      hot[j] = c;
    }
  }
  long total = 0;
  for (int j = 0; j < ny; j++) total += hot[j];
  printf("sparse %ld\n", total);
  free(dep); free(hot);
  return 0;
}
