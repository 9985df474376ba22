/* The host refreshes a mapped array the device last wrote, two elements per iteration and ahead
 * of a read of the same array: every element is written before it is read, so no read is stale.
 * Each iteration's pair of stores is a new run (it does not touch the last one), so the run of the
 * reads grows over bytes whose write run has already been written out. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  double *a = malloc(2 * n * sizeof(double)), s = 0.0;
  for (int i = 0; i < 2 * n; i++) a[i] = 0.0;
#pragma omp target enter data map(to: a[0:2 * n])
#pragma omp target teams distribute parallel for
  for (int i = 0; i < 2 * n; i++) a[i] = i;
  for (int i = 0; i < n; i++) {
    a[2 * i + 1] = 1.0;
    a[2 * i] = 2.0;
    s += a[i];
  }
#pragma omp target exit data map(delete: a[0:2 * n])
  printf("%.1f\n", s);
  free(a);
  return 0;
}
