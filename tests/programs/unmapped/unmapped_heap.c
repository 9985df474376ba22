/* A kernel dereferences a heap array that no map clause covers: w is only firstprivate. */
#include <stdio.h>
#include <stdlib.h>
#define N 2048
int main(void) {
  double *w = malloc(N * sizeof(double));
  double *b = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) w[i] = i;
#pragma omp target map(from: b[0:N])
  for (int i = 0; i < N; i++) b[i] = 2.0 * w[i]; /* expect unmapped-memory w */
  printf("%f\n", b[3]);
  free(w);
  free(b);
  return 0;
}
