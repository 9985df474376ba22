// Tiled out-of-place transpose, 32x32 tiles: reads rows of a tile, writes columns.
#include <stdio.h>
#include <stdlib.h>
#define T 32
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096, iters = argc > 2 ? atoi(argv[2]) : 5;
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n);
  for (size_t k = 0; k < (size_t)n * n; k++) a[k] = k % 101;
#pragma omp target data map(to: a[0:n*n]) map(from: b[0:n*n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int ii = 0; ii < n; ii += T)
      for (int jj = 0; jj < n; jj += T)
        for (int i = ii; i < ii + T; i++)
          for (int j = jj; j < jj + T; j++) b[(size_t)j * n + i] = a[(size_t)i * n + j];
  }
  double sum = 0;
  for (size_t k = 0; k < (size_t)n * n; k += 97) sum += b[k];
  printf("tiledtr %.1f\n", sum);
  return 0;
}
