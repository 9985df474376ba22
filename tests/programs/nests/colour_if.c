/* Updates of one residue class of the index under an `if` in the full loop: a 1D smoother over the cells
 * i % 3 == c (the class changing per sweep) and a red-black sweep `if ((i + j) % 2 == colour)` over rows of
 * nx doubles (the red cells only). Each access runs every third (every second) iteration. `g` is mapped `alloc` and read by the
 * red-black sweep before anything wrote it on the device. */
#include <stdio.h>
#include <stdlib.h>
static void smooth(double *x, const double *f, int n, int c) {
#pragma omp target teams distribute parallel for
  for (int i = 1; i < n - 1; i++)
    if (i % 3 == c) x[i] = 0.5 * (x[i - 1] + x[i + 1] + f[i]);
}
static void redblack(double *u, const double *g, int nx, int ny, int colour) {
#pragma omp target teams distribute parallel for
  for (int i = 1; i < ny - 1; i++)
    for (int j = 1; j < nx - 1; j++)
      if ((i + j) % 2 == colour)
        u[i * nx + j] = 0.25 * (u[(i - 1) * nx + j] + u[(i + 1) * nx + j] + u[i * nx + j - 1] + u[i * nx + j + 1]) -
                        g[i * nx + j]; /* expect use-of-uninitialized-memory g */
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3000, nx = 70, ny = argc > 1 ? atoi(argv[1]) / 40 : 40;
  double *x = malloc(sizeof(double) * n), *f = malloc(sizeof(double) * n);
  double *u = malloc(sizeof(double) * nx * ny), *g = malloc(sizeof(double) * nx * ny);
  for (int i = 0; i < n; i++) x[i] = 0, f[i] = (i % 11) * 0.1;
  for (int i = 0; i < nx * ny; i++) u[i] = (i % 7) * 0.5, g[i] = 0.01;
#pragma omp target data map(tofrom: x[0:n], u[0:nx * ny]) map(to: f[0:n]) map(alloc: g[0:nx * ny])
  {
  for (int s = 0; s < 3; s++) {
    smooth(x, f, n, s % 2); /* (classes 0 and 1 of 3: the bytes written tell the classes apart) */
    redblack(u, g, nx, ny, 1);
  }
  smooth(x, f, n, 5); /* (no cell: per access, the class out of range; 5 % 3 is class 2, which no sweep writes) */
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += x[i];
  for (int i = 0; i < nx * ny; i++) sum += u[i];
  printf("%.6f\n", sum);
  free(x); free(f); free(u); free(g);
  return 0;
}
