// D2Q9 lattice-Boltzmann streaming on a periodic nx x ny grid, structure of arrays (f[q*nx*ny + k]):
// neighbours found with conditional wrap-around (`jp = j + 1 == nx ? 0 : j + 1`), a select in the address.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 512, ny = nx, iters = argc > 2 ? atoi(argv[2]) : 10;
  size_t cells = (size_t)nx * ny;
  double *f = malloc(sizeof(double) * 9 * cells), *g = malloc(sizeof(double) * 9 * cells);
  for (size_t k = 0; k < 9 * cells; k++) f[k] = (k % 23) * 0.01;
  const int cx[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1}, cy[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
#pragma omp target data map(tofrom: f[0:9*cells]) map(alloc: g[0:9*cells])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int i = 0; i < ny; i++)
      for (int j = 0; j < nx; j++) {
        int jp = j + 1 == nx ? 0 : j + 1, jm = j == 0 ? nx - 1 : j - 1;
        int ip = i + 1 == ny ? 0 : i + 1, im = i == 0 ? ny - 1 : i - 1;
        size_t k = (size_t)i * nx + j;
        g[0 * cells + k] = f[0 * cells + k];
        g[1 * cells + k] = f[1 * cells + (size_t)i * nx + jm];
        g[2 * cells + k] = f[2 * cells + (size_t)im * nx + j];
        g[3 * cells + k] = f[3 * cells + (size_t)i * nx + jp];
        g[4 * cells + k] = f[4 * cells + (size_t)ip * nx + j];
        g[5 * cells + k] = f[5 * cells + (size_t)im * nx + jm];
        g[6 * cells + k] = f[6 * cells + (size_t)im * nx + jp];
        g[7 * cells + k] = f[7 * cells + (size_t)ip * nx + jp];
        g[8 * cells + k] = f[8 * cells + (size_t)ip * nx + jm];
      }
#pragma omp target teams distribute parallel for
    for (size_t k = 0; k < 9 * cells; k++) f[k] = g[k];
  }
  double sum = 0;
  for (size_t k = 0; k < 9 * cells; k++) sum += f[k] * (1 + k % 3);
  printf("lbmstream %.6f %d %d\n", sum, cx[1], cy[2]);
  return 0;
}
