// 3x3 blur of an 8-bit image with clamped borders: neighbour indices through min/max (selects), the
// sum in int, the result saturated back to unsigned char.
#include <stdio.h>
#include <stdlib.h>
static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
int main(int argc, char **argv) {
  int w = argc > 1 ? atoi(argv[1]) : 2048, h = w, iters = argc > 2 ? atoi(argv[2]) : 10;
  unsigned char *in = malloc((size_t)w * h), *out = malloc((size_t)w * h);
  for (size_t k = 0; k < (size_t)w * h; k++) in[k] = (unsigned char)(k * 7 % 251);
#pragma omp target data map(tofrom: in[0:w*h]) map(alloc: out[0:w*h])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        int s = 0;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) s += in[clampi(y + dy, 0, h - 1) * w + clampi(x + dx, 0, w - 1)];
        out[y * w + x] = (unsigned char)(s / 9);
      }
#pragma omp target teams distribute parallel for
    for (int k = 0; k < w * h; k++) in[k] = out[k];
  }
  long sum = 0;
  for (size_t k = 0; k < (size_t)w * h; k++) sum += in[k];
  printf("clampblur %ld\n", sum);
  return 0;
}
