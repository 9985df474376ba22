/* A strided read of b runs past its mapped section into the next device copy (c, not yet written). */
#include <stdio.h>
#include <stdlib.h>
#define N 256
int main(void) {
  double *b = malloc(N * sizeof(double));
  double *c = malloc(N * sizeof(double));
  double *out = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) b[i] = i;
#pragma omp target map(to: b[0:N]) map(from: c[0:N], out[0:N])
  {
    for (int i = 0; i < N; i++) out[i] = b[2 * i]; /* expect buffer-overflow b */
    for (int i = 0; i < N; i++) c[i] = out[i];
  }
  printf("%f %f\n", out[3], c[2]);
  free(b); free(c); free(out);
  return 0;
}
