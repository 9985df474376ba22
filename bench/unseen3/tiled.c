/* Device tiled matrix copy-scale B = 2 A^T with 32x32 tiles: collapse(2) over tiles, two inner loops
 * over a tile (a loop nest four deep; rows of 32 elements, strided columns). */
#include <stdio.h>
#include <stdlib.h>
#define T 32
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048, reps = argc > 2 ? atoi(argv[2]) : 10;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) a[i] = i % 101;
#pragma omp target data map(to: a[0:n*n]) map(from: b[0:n*n])
  for (int r = 0; r < reps; r++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int ii = 0; ii < n; ii += T)
      for (int jj = 0; jj < n; jj += T)
        for (int i = ii; i < ii + T && i < n; i++)
          for (int j = jj; j < jj + T && j < n; j++)
            b[j * n + i] = 2.0 * a[i * n + j];
  }
  printf("tiled %.1f\n", b[5 * n + 7]);
  free(a); free(b);
  return 0;
}
