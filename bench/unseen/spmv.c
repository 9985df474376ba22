// CSR sparse matrix-vector product on the device (indexed loads x[col[k]]), a 2-D Laplacian matrix
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int g = argc > 1 ? atoi(argv[1]) : 300, iters = argc > 2 ? atoi(argv[2]) : 20;
  int n = g * g, nnz = 0;
  int *rowp = malloc(sizeof(int) * (n + 1)), *col = malloc(sizeof(int) * 5 * n);
  double *val = malloc(sizeof(double) * 5 * n), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    rowp[i] = nnz;
    int r = i / g, c = i % g;
    if (r > 0) { col[nnz] = i - g; val[nnz++] = -1; }
    if (c > 0) { col[nnz] = i - 1; val[nnz++] = -1; }
    col[nnz] = i; val[nnz++] = 4;
    if (c < g - 1) { col[nnz] = i + 1; val[nnz++] = -1; }
    if (r < g - 1) { col[nnz] = i + g; val[nnz++] = -1; }
    x[i] = (i % 11) * 0.1;
  }
  rowp[n] = nnz;
#pragma omp target data map(to: rowp[0:n+1], col[0:nnz], val[0:nnz]) map(tofrom: x[0:n]) map(alloc: y[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int k = rowp[i]; k < rowp[i + 1]; k++) s += val[k] * x[col[k]];
      y[i] = s;
    }
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) x[i] = 0.2 * y[i];
  }
  printf("spmv %.6e\n", x[n / 2]);
  return 0;
}
