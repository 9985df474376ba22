// Sparse CG iterations on a 2D Laplacian in CSR form (554.pcg shape).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int m = argc > 1 ? atoi(argv[1]) : 400, iters = argc > 2 ? atoi(argv[2]) : 40;
  int n = m * m, nnz = 0;
  int *rowp = malloc((n + 1) * sizeof(int)), *col = malloc(5 * n * sizeof(int));
  double *val = malloc(5 * n * sizeof(double));
  double *x = calloc(n, sizeof(double)), *r = malloc(n * sizeof(double));
  double *p = malloc(n * sizeof(double)), *q = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) {
    rowp[i] = nnz;
    int gi = i / m, gj = i % m;
    int nb[5] = {i - m, i - 1, i, i + 1, i + m};
    int ok[5] = {gi > 0, gj > 0, 1, gj < m - 1, gi < m - 1};
    for (int k = 0; k < 5; k++) if (ok[k]) { col[nnz] = nb[k]; val[nnz] = k == 2 ? 4.0 : -1.0; nnz++; }
    r[i] = 1.0; p[i] = 1.0;
  }
  rowp[n] = nnz;
  double rr = n;
#pragma omp target data map(to: rowp[0:n+1], col[0:nnz], val[0:nnz]) map(tofrom: x[0:n], r[0:n], p[0:n]) map(alloc: q[0:n])
  for (int it = 0; it < iters; it++) {
    double pq = 0.0, rr_new = 0.0;
#pragma omp target teams distribute parallel for map(tofrom: pq) reduction(+: pq)
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int k = rowp[i]; k < rowp[i + 1]; k++) s += val[k] * p[col[k]];
      q[i] = s;
      pq += p[i] * s;
    }
    double alpha = rr / pq;
#pragma omp target teams distribute parallel for map(tofrom: rr_new) reduction(+: rr_new)
    for (int i = 0; i < n; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr_new += r[i] * r[i];
    }
    double beta = rr_new / rr;
    rr = rr_new;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) p[i] = r[i] + beta * p[i];
  }
  printf("cg residual %.6e\n", sqrt(rr));
  free(rowp); free(col); free(val); free(x); free(r); free(p); free(q);
  return 0;
}
