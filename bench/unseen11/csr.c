// CSR sparse matrix-vector product: row extents from rowptr (data-dependent inner bounds), a gather x[col[k]].
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 20, iters = argc > 2 ? atoi(argv[2]) : 20;
  int *rowptr = malloc(sizeof(int) * (n + 1)), *col = malloc(sizeof(int) * n * 9);
  double *val = malloc(sizeof(double) * n * 9), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  int nnz = 0;
  for (int i = 0; i < n; i++) {
    rowptr[i] = nnz;
    for (int d = -4 + i % 3; d <= 4; d++)
      if (i + d >= 0 && i + d < n) col[nnz] = i + d, val[nnz++] = 1.0 / (2 + (d < 0 ? -d : d));
    x[i] = i % 10;
  }
  rowptr[n] = nnz;
#pragma omp target data map(to: rowptr[0:n+1], col[0:nnz], val[0:nnz], x[0:n]) map(from: y[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
      y[i] = s;
    }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += y[i];
  printf("csr %.4f\n", sum);
  return 0;
}
