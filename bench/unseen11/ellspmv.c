// ELLPACK sparse matrix-vector product: column-major slabs of width w, a gather through the column index,
// y[i] accumulated over the slab columns (zero-padded entries point at column 0 with value 0).
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 20, iters = argc > 2 ? atoi(argv[2]) : 20, w = 7;
  double *val = malloc(sizeof(double) * n * w), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  int *col = malloc(sizeof(int) * n * w);
  for (int i = 0; i < n; i++) {
    x[i] = 1.0 / (1 + i % 17);
    for (int k = 0; k < w; k++) {
      int c = i + (k - 3) * 5;
      col[k * n + i] = c >= 0 && c < n ? c : 0;
      val[k * n + i] = c >= 0 && c < n ? 0.1 * (k + 1) : 0.0;
    }
  }
#pragma omp target data map(to: val[0:n*w], col[0:n*w], x[0:n]) map(from: y[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int k = 0; k < w; k++) s += val[k * n + i] * x[col[k * n + i]];
      y[i] = s;
    }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += y[i];
  printf("ellspmv %.6f\n", sum);
  return 0;
}
