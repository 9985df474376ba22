/* Sparse matrix-vector product in CSR form: `p[col[k]]` is a gather, one callback per non-zero;
 * most of them re-read bytes the thread already read, which `trace cc` code skips inline. The last
 * element of `p` is never initialised on the device. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int m = argc > 1 ? atoi(argv[1]) : 24, n = m * m, nnz = 0;
  int *rowp = malloc((n + 1) * sizeof(int)), *col = malloc(5 * n * sizeof(int));
  double *val = malloc(5 * n * sizeof(double)), *p = malloc(n * sizeof(double));
  double *q = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) {
    rowp[i] = nnz;
    int nb[5] = {i - m, i - 1, i, i + 1, i + m};
    int ok[5] = {i >= m, i % m > 0, 1, i % m < m - 1, i < n - m};
    for (int k = 0; k < 5; k++)
      if (ok[k]) { col[nnz] = nb[k]; val[nnz] = k == 2 ? 4.0 : -1.0; nnz++; }
  }
  rowp[n] = nnz;
#pragma omp target data map(to: rowp[0:n+1], col[0:nnz], val[0:nnz]) map(alloc: p[0:n]) map(from: q[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n - 1; i++) p[i] = 1.0;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int k = rowp[i]; k < rowp[i + 1]; k++) s += val[k] * p[col[k]]; /* expect use-of-uninitialized-memory p */
      q[i] = s;
    }
  }
  printf("%.1f\n", q[0]);
  free(rowp); free(col); free(val); free(p); free(q);
  return 0;
}
