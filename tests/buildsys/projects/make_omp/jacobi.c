#include "jacobi.h"

/* Bug: the result `unew` is mapped `to`, so it is never copied back to the host. */
void sweep(double *u, double *unew, int n, int steps) {
#pragma omp target data map(to: u[0:n]) map(to: unew[0:n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      unew[i] = 0.5 * (u[i - 1] + u[i + 1]);
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      u[i] = unew[i];
  }
}
