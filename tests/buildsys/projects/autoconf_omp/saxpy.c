#include <stdio.h>
#ifdef HAVE_STDLIB_H
#include <stdlib.h>
#endif

int main(void) {
  int n = 1000;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int i = 0; i < n; i++) {
    x[i] = 1.0f;
    y[i] = 2.0f;
  }
  /* Bug: y is read and written on the device but mapped `from`: its old values never arrive. */
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(from: y[0:n])
  for (int i = 0; i < n; i++)
    y[i] = 3.0f * x[i] + y[i];
  printf("%g\n", y[0]);
  free(x);
  free(y);
  return 0;
}
