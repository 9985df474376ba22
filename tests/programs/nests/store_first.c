/* A red-black update with a bit test for the colour, `if (((i + j) & 1) == colour)`, and in the same inner
 * loop a probe of every fourth column, `if (j % 4 == (i & 1)) probe[k] = w[k]`: in `fresh` the probe reads
 * only cells the colour wrote earlier in the same iteration (no finding: the load must be reported after
 * the store), in `stale` cells of the other colour, which nothing wrote (`v` is mapped `alloc`). */
#include <stdio.h>
#include <stdlib.h>
static void fresh(double *w, double *probe, const double *f, int nx, int ny) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < ny; i++)
    for (int j = 0; j < nx; j++) {
      if (((i + j) & 1) == 0) w[i * nx + j] = 2.0 * f[i * nx + j];
      if (j % 4 == (i & 1)) probe[i * nx + j] = w[i * nx + j];
    }
}
static void stale(double *v, double *probe, const double *f, int nx, int ny) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < ny; i++)
    for (int j = 0; j < nx; j++) {
      if (((i + j) & 1) == 1) v[i * nx + j] = 3.0 * f[i * nx + j];
      if (j % 4 == (i & 1)) probe[i * nx + j] += v[i * nx + j]; /* expect use-of-uninitialized-memory v */
    }
}
int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 68, ny = argc > 2 ? atoi(argv[2]) : 30;
  double *w = malloc(sizeof(double) * nx * ny), *v = malloc(sizeof(double) * nx * ny);
  double *probe = calloc((size_t)nx * ny, sizeof(double)), *f = malloc(sizeof(double) * nx * ny);
  for (int k = 0; k < nx * ny; k++) f[k] = (k % 9) * 0.5, w[k] = v[k] = 1.0;
#pragma omp target data map(alloc: w[0:nx * ny], v[0:nx * ny]) map(to: f[0:nx * ny]) map(tofrom: probe[0:nx * ny])
  {
    fresh(w, probe, f, nx, ny);
    stale(v, probe, f, nx, ny);
  }
  double sum = 0;
  for (int k = 0; k < nx * ny; k++) sum += (k % 4 == 0 || k % 4 == 1) ? 0 : probe[k];
  printf("%.3f\n", sum);
  free(w); free(v); free(probe); free(f);
  return 0;
}
