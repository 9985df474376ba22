/* Two nowait kernels ordered by depend, then taskwait. */
#include <stdio.h>
#include <stdlib.h>
#define N 256
int main(void) {
  int *x = malloc(N * sizeof(int)), *y = malloc(N * sizeof(int));
#pragma omp target nowait depend(out: x[0]) map(from: x[0:N])
  for (int i = 0; i < N; i++) x[i] = i;
#pragma omp target nowait depend(in: x[0]) depend(out: y[0]) map(to: x[0:N]) map(from: y[0:N])
  for (int i = 0; i < N; i++) y[i] = 2 * x[i];
#pragma omp taskwait
  printf("%d\n", y[N - 1]);
  free(x);
  free(y);
  return 0;
}
