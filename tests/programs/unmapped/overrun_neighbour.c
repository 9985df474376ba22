/* The kernel reads b one block past its end; with both arrays mapped, the overrun lands in c's copy. */
#include <stdio.h>
#include <stdlib.h>
#define N 256
int main(void) {
  float *b = malloc(N * sizeof(float));
  float *c = malloc(N * sizeof(float));
  float *out = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) { b[i] = i; c[i] = -i; }
#pragma omp target map(to: b[0:N], c[0:N]) map(from: out[0:N])
  for (int i = 0; i < N; i++) out[i] = b[i + N / 2] + c[i]; /* expect buffer-overflow b */
  printf("%f\n", out[3]);
  free(b); free(c); free(out);
  return 0;
}
