#include <stdio.h>
#include <stdlib.h>
#include "jacobi.h"

int main(void) {
  int n = 128;
  double *u = malloc(n * sizeof *u), *unew = malloc(n * sizeof *unew);
  for (int i = 0; i < n; i++)
    u[i] = unew[i] = i == 0 || i == n - 1;
  sweep(u, unew, n, 4);
  printf("%g\n", unew[n / 2]);
  free(u);
  free(unew);
  return 0;
}
