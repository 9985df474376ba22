/* A kernel inside a host time loop updates only the interior of a field on the device; after each
 * step the host copies the whole field back (`target update from`) and reads it. The boundary
 * cells were never written on the device, so the first copy-back makes them uninitialised on the
 * host: the host's read of them is reported, the interior is fine. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000, steps = 3;
  double *u = malloc(n * sizeof(double)), e = 0.0;
#pragma omp target enter data map(alloc: u[0:n])
  for (int t = 0; t < steps; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++) u[i] = 0.5 * i + t;
#pragma omp target update from(u[0:n])
    for (int i = 1; i < n - 1; i++) e += u[i];
    e += u[0] + u[n - 1]; /* expect use-of-uninitialized-memory u */
  }
#pragma omp target exit data map(delete: u[0:n])
  printf("%.1f\n", e);
  free(u);
  return 0;
}
