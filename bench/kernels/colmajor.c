// A column-major sweep over a row-major matrix: each thread walks one column, so the inner loop
// strides by a whole row (a Fortran-order loop nest written in C, or a transposed access).
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048, iters = argc > 2 ? atoi(argv[2]) : 10;
  size_t total = (size_t)n * n;
  float *a = malloc(total * sizeof(float)), *colsum = malloc(n * sizeof(float));
  for (size_t i = 0; i < total; i++) a[i] = (float)(i % 11) * 0.25f;
#pragma omp target data map(tofrom: a[0:total]) map(from: colsum[0:n])
  for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int i = 0; i < n; i++) {
        s += a[(size_t)i * n + j];
        a[(size_t)i * n + j] = 0.999f * a[(size_t)i * n + j] + 0.001f;
      }
      colsum[j] = s;
    }
  }
  double t = 0;
  for (int j = 0; j < n; j++) t += colsum[j];
  printf("colmajor sum %.3f\n", t);
  free(a); free(colsum);
  return 0;
}
