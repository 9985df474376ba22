/* A small 1-D Jacobi solver offloaded with OpenMP: the arrays stay on the device for the
 * whole solve (target enter/exit data), the host looks at the solution every few sweeps
 * (target update from), and a histogram is computed on the device with map(tofrom:)
 * although the device only writes it (a transfer that `trace explain` flags as never needed). */
#include <stdio.h>
#include <stdlib.h>
#define N 4096
#define SWEEPS 6
#define BINS 16

int main(void) {
  double *u = malloc(N * sizeof(double)), *v = malloc(N * sizeof(double));
  int hist[BINS];
  for (int i = 0; i < N; i++) u[i] = (i == N / 2) ? 1000.0 : 0.0;
  for (int b = 0; b < BINS; b++) hist[b] = 0;

#pragma omp target enter data map(to: u[0:N]) map(alloc: v[0:N])
  for (int s = 0; s < SWEEPS; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < N - 1; i++)
      v[i] = 0.5 * (u[i - 1] + u[i + 1]);
#pragma omp target teams distribute parallel for
    for (int i = 1; i < N - 1; i++)
      u[i] = v[i];
    if (s % 3 == 2) {
#pragma omp target update from(u[0:N])
      printf("sweep %d: u[N/2] = %.3f\n", s, u[N / 2]);
    }
  }
#pragma omp target map(tofrom: hist[0:BINS])
  for (int b = 0; b < BINS; b++) {
    int count = 0;
    for (int i = 0; i < N; i++) count += (int)(u[i] * (BINS - 1) / 1000.0) == b;
    hist[b] = count;
  }
#pragma omp target exit data map(from: u[0:N]) map(release: v[0:N])
  printf("hist[0] = %d, u[N/2] = %.3f\n", hist[0], u[N / 2]);
  free(u);
  free(v);
  return 0;
}
