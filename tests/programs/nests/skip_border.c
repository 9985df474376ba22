/* A 2D 5-point stencil written as one loop over a flattened index (size_t k), the border columns left
 * by a `continue` on k % nx: every access of the body is conditional, and rows of nx doubles are read by
 * four streams, a[k - 1] two elements behind a[k + 1] in the same row. `b` is mapped `alloc`: the second
 * sweep reads its border columns, which no sweep writes on the device. */
#include <stdio.h>
#include <stdlib.h>
static void sweep(const double *a, double *b, size_t nx, size_t ny) {
#pragma omp target teams distribute parallel for
  for (size_t k = nx; k < nx * (ny - 1); k++) {
    size_t j = k % nx;
    if (j == 0 || j == nx - 1) continue;
    b[k] = 0.25 * (a[k - 1] + a[k + 1] + a[k - nx] + a[k + nx]); /* expect use-of-uninitialized-memory b */
  }
}
int main(int argc, char **argv) {
  size_t nx = 520, ny = argc > 1 ? (size_t)atol(argv[1]) : 8, n = nx * ny;
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
  for (size_t k = 0; k < n; k++) a[k] = b[k] = (double)(k % 17);
#pragma omp target data map(tofrom: a[0:n]) map(alloc: b[0:n])
  {
    sweep(a, b, nx, ny);
    sweep(b, a, nx, ny);
  }
  double sum = 0;
  for (size_t k = nx; k < n - nx; k++)
    if (k % nx && k % nx != nx - 1) sum += a[k];
  printf("%.3f\n", sum);
  free(a); free(b);
  return 0;
}
