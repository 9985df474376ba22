/* A sparse gather on the device, y[i] = sum of v[col[k]] over a row's entries: the callbacks of the
 * re-read elements are skipped inline and the windows of v are appended through the call-site
 * caches. One column index (a corrupted entry of the last row) points one element past v's section. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 900, nnz = 0;
  int *row = malloc((n + 1) * sizeof(int)), *col = malloc(3 * n * sizeof(int));
  double *v = malloc((n + 2) * sizeof(double)), *y = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) {
    row[i] = nnz;
    for (int d = -1; d <= 1; d++)
      if (i + d >= 0 && i + d < n) col[nnz++] = i + d;
  }
  row[n] = nnz;
  col[nnz - 1] = n;
  for (int i = 0; i < n + 2; i++) v[i] = 1.0;
#pragma omp target data map(to: row[0:n + 1], col[0:nnz], v[0:n]) map(from: y[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int k = row[i]; k < row[i + 1]; k++) s += v[col[k]]; /* expect buffer-overflow v */
      y[i] = s;
    }
  }
  printf("%.1f\n", y[n / 2]);
  free(row); free(col); free(v); free(y);
  return 0;
}
