// Tiled matrix multiply: 32x32 tiles over i, j, k, the k tile loop innermost of the tiles, C accumulated in place.
#include <stdio.h>
#include <stdlib.h>
#define T 32
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 512;
  double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n), *C = calloc((size_t)n * n, sizeof(double));
  for (int k = 0; k < n * n; k++) A[k] = (k % 7) * 0.1, B[k] = (k % 5) * 0.2;
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n*n], B[0:n*n]) map(tofrom: C[0:n*n])
  for (int ii = 0; ii < n; ii += T)
    for (int jj = 0; jj < n; jj += T)
      for (int kk = 0; kk < n; kk += T)
        for (int i = ii; i < ii + T; i++)
          for (int k = kk; k < kk + T; k++) {
            double a = A[i * n + k];
            for (int j = jj; j < jj + T; j++) C[i * n + j] += a * B[k * n + j];
          }
  double sum = 0;
  for (int k = 0; k < n * n; k++) sum += C[k];
  printf("tiledmm %.3f\n", sum);
  return 0;
}
