/* 16 nowait kernels on disjoint arrays, one taskwait: no issue, one schedule. */
#include <stdio.h>
#define K 16
#define N 4096
static double v[K][N];
int main(void) {
  for (int k = 0; k < K; k++)
    for (int i = 0; i < N; i++) v[k][i] = k + i;
  for (int k = 0; k < K; k++) {
    double *p = v[k];
#pragma omp target nowait map(tofrom: p[0:N])
    for (int i = 0; i < N; i++) p[i] = 2.0 * p[i];
  }
#pragma omp taskwait
  double s = 0;
  for (int k = 0; k < K; k++) s += v[k][N - 1];
  printf("%f\n", s);
  return 0;
}
