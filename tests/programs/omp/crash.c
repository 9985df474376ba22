/* Crashes after one target region: segv (default), abort ("abort"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define N 64
int main(int argc, char **argv) {
  double *x = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) x[i] = i;
#pragma omp target map(tofrom: x[0:N])
  for (int i = 0; i < N; i++) x[i] *= 2;
  printf("x[1]=%g\n", x[1]);
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "abort") == 0) abort();
  volatile int *p = (int *)16;
  *p = 1;
  return 0;
}
