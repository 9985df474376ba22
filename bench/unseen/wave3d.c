// 3-D 13-point (order-4 star) wave stencil, collapse(2) over z,y on the device, rows of nx-4 floats
#include <stdio.h>
#include <stdlib.h>
#define IDX(z, y, x) (((size_t)(z) * ny + (y)) * nx + (x))
int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 160, ny = nx, nz = nx, iters = argc > 2 ? atoi(argv[2]) : 20;
  size_t n = (size_t)nx * ny * nz;
  float *p0 = calloc(n, sizeof(float)), *p1 = calloc(n, sizeof(float)), *v = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) v[i] = 0.1f + (i % 3) * 0.01f;
  p1[IDX(nz / 2, ny / 2, nx / 2)] = 1.0f;
  const float c0 = -2.5f, c1 = 1.333f, c2 = -0.0833f;
#pragma omp target data map(to: v[0:n]) map(tofrom: p0[0:n], p1[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int z = 2; z < nz - 2; z++)
      for (int y = 2; y < ny - 2; y++)
        for (int x = 2; x < nx - 2; x++) {
          float lap = 3 * c0 * p1[IDX(z, y, x)]
            + c1 * (p1[IDX(z, y, x - 1)] + p1[IDX(z, y, x + 1)] + p1[IDX(z, y - 1, x)] + p1[IDX(z, y + 1, x)] + p1[IDX(z - 1, y, x)] + p1[IDX(z + 1, y, x)])
            + c2 * (p1[IDX(z, y, x - 2)] + p1[IDX(z, y, x + 2)] + p1[IDX(z, y - 2, x)] + p1[IDX(z, y + 2, x)] + p1[IDX(z - 2, y, x)] + p1[IDX(z + 2, y, x)]);
          p0[IDX(z, y, x)] = 2 * p1[IDX(z, y, x)] - p0[IDX(z, y, x)] + v[IDX(z, y, x)] * lap;
        }
    float *tmp = p0; p0 = p1; p1 = tmp;
  }
  printf("wave3d %.6e\n", p1[IDX(nz / 2, ny / 2, nx / 2 + 3)]);
  free(p0); free(p1); free(v);
  return 0;
}
