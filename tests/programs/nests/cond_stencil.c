/* A conditional 5-point stencil on a narrow grid (rows of 96 floats): only the cells a scattered mask
 * keeps (~70%, from a hash of the index) are updated, and each reads its four neighbours and itself,
 * two grids swapped between the steps. The row a cell reads below it was read, a row earlier, by the
 * stream of the row below of the cell above it, and is read again by the cells of that row (three
 * streams) and of the row after: one row, five conditional read streams. `b` is mapped one row short:
 * the second step reads the last row of its source, which is `b` (the values it read there reach only row
 * ny - 2 of `a`, which the program does not print). */
#include <stdio.h>
#include <stdlib.h>
static unsigned mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x45d9f3bu;
  x ^= x >> 16;
  return x;
}
static void step(const float *src, float *dst, const unsigned char *keep, int nx, int ny) {
#pragma omp target teams distribute parallel for
  for (int i = 1; i < ny - 1; i++)
    for (int j = 1; j < nx - 1; j++) {
      int k = i * nx + j;
      if (keep[k])
        dst[k] = src[k] + 0.1f * (src[k - 1] + src[k + 1] + src[k - nx] + src[k + nx] - 4.0f * src[k]); /* expect buffer-overflow b */
    }
}
int main(int argc, char **argv) {
  int nx = 96, ny = argc > 1 ? atoi(argv[1]) : 64, n = nx * ny;
  float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
  unsigned char *keep = malloc(n);
  for (int k = 0; k < n; k++) {
    a[k] = b[k] = (float)(mix(k) % 100) * 0.01f;
    keep[k] = mix(3 * (k / 8) + 1) % 10 < 7; /* in stretches of 8 cells */
  }
#pragma omp target data map(tofrom: a[0:n], b[0:n - nx]) map(to: keep[0:n])
  for (int s = 0; s < 2; s++) step(s % 2 ? b : a, s % 2 ? a : b, keep, nx, ny);
  double sum = 0;
  for (int k = 0; k < n - 2 * nx; k++) sum += a[k] + b[k]; /* (row ny - 2 of `a` read past `b`) */
  printf("%.3f\n", sum);
  free(a); free(b); free(keep);
  return 0;
}
