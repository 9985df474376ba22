/* A lower-triangular nest: the rows grow with i, so the nest is never one rectangle (the upper
 * triangle is never written, never read: reporting the rows' hull would read uninitialised bytes).
 * No finding. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  size_t total = (size_t)n * n;
  double *l = malloc(total * sizeof(double)), s = 0;
#pragma omp target data map(alloc: l[0:total]) map(tofrom: s)
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      for (int j = 0; j <= i; j++) l[(size_t)i * n + j] = 1.0 / (i + j + 1);
#pragma omp target teams distribute parallel for reduction(+: s)
    for (int i = 0; i < n; i++)
      for (int j = 0; j <= i; j++) s += l[(size_t)i * n + j];
  }
  printf("%.3f\n", s);
  free(l);
  return 0;
}
