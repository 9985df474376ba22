// A small test program (the fixed cost of recording): one array mapped, one target region.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  double *a = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) a[i] = i;
#pragma omp target teams distribute parallel for map(tofrom: a[0:n])
  for (int i = 0; i < n; i++) a[i] = 2.0 * a[i] + 1.0;
  printf("small a[n-1] %.1f\n", a[n - 1]);
  free(a);
  return 0;
}
