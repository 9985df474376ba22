/* A kernel whose threads read a device copy nobody initialised, each its own chunk from the top down:
   which thread's read comes first changes from run to run, the report must not. */
#include <stdio.h>
#include <stdlib.h>
#define N 4096
int main(void) {
  float *b = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) b[i] = 1.0f;
  double s = 0;
#pragma omp target map(alloc: b[0:N]) map(tofrom: s)
#pragma omp parallel for reduction(+: s) num_threads(4) schedule(static)
  for (int i = N - 1; i >= 0; i--) s += b[i]; /* expect use-of-uninitialized-memory b */
  printf("%f\n", s);
  free(b);
  return 0;
}
