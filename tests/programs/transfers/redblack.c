/* Red-black sweeps: their device accesses are recorded as strided runs (8 bytes every 16) and, a
 * colour of the rows a thread sweeps, as planes of them; the transfers checker must account them
 * block by block (tests/explore/test_transfers_strided.py).
 * h: mapped tofrom, the kernel writes only its red cells: the copy in is never read there (the red
 *    cells overwritten, the black ones released unread) and the black half comes back unchanged.
 * u: red-black Gauss-Seidel (each colour reads its neighbours of the other), mapped tofrom with f;
 *    the red cells of u are overwritten before any read of them, the border of f is never read. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64, iters = argc > 2 ? atoi(argv[2]) : 2;
  double *u = malloc(sizeof(double) * n * n), *f = malloc(sizeof(double) * n * n);
  double *h = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) { u[i] = 0; f[i] = (i % 7) * 0.1; h[i] = i; }
#pragma omp target teams distribute parallel for map(tofrom: h[0:n*n])
  for (int i = 0; i < n; i++)
    for (int j = i % 2; j < n; j += 2)
      h[i * n + j] = -1.0;
#pragma omp target data map(tofrom: u[0:n*n]) map(to: f[0:n*n])
  for (int t = 0; t < iters; t++) {
    for (int color = 0; color < 2; color++) {
#pragma omp target teams distribute parallel for
      for (int i = 1; i < n - 1; i++)
        for (int j = 1 + (i + color) % 2; j < n - 1; j += 2)
          u[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1] - f[i * n + j]);
    }
  }
  double s = 0;
  for (int i = 0; i < n * n; i++) s += u[i] + h[i];
  printf("redblack %.6f\n", s);
  free(u); free(f); free(h);
  return 0;
}
