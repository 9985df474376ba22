// Device 8-bit image pipeline: a 3x3 Sobel magnitude over `unsigned char` pixels with `short`
// intermediates (`size_t` rows, `unsigned` columns), a manually 4-way unrolled threshold pass over
// `signed char`/`int16_t` planes, and a per-row `unsigned` column sum.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  size_t w = argc > 1 ? strtoul(argv[1], 0, 10) : 2000, iters = argc > 2 ? strtoul(argv[2], 0, 10) : 20;
  size_t h = w, np = w * h;
  unsigned char *img = malloc(np), *out = malloc(np);
  int16_t *gx = malloc(sizeof(int16_t) * np);
  signed char *mask = malloc(np);
  unsigned *rows = malloc(sizeof(unsigned) * h);
  for (size_t i = 0; i < np; i++) img[i] = (unsigned char)((i * 2654435761u) >> 24);
  unsigned long sum = 0;
#pragma omp target data map(to: img[0:np]) map(alloc: gx[0:np], mask[0:np], out[0:np]) map(from: rows[0:h])
  for (size_t t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (size_t y = 1; y < h - 1; y++)
      for (unsigned x = 1; x < w - 1; x++) {
        const unsigned char *p = img + y * w + x;
        short sx = (short)(p[-w + 1] + 2 * p[1] + p[w + 1] - p[-w - 1] - 2 * p[-1] - p[w - 1]);
        short sy = (short)(p[w - 1] + 2 * p[w] + p[w + 1] - p[-w - 1] - 2 * p[-w] - p[-w + 1]);
        gx[y * w + x] = (int16_t)(sx < 0 ? -sx : sx) + (int16_t)(sy < 0 ? -sy : sy);
      }
#pragma omp target teams distribute parallel for
    for (size_t y = 1; y < h - 1; y++) {
      size_t x = 1;
      for (; x + 4 <= w - 1; x += 4) {
        mask[y * w + x] = (signed char)(gx[y * w + x] > 200 ? 1 : -1);
        mask[y * w + x + 1] = (signed char)(gx[y * w + x + 1] > 200 ? 1 : -1);
        mask[y * w + x + 2] = (signed char)(gx[y * w + x + 2] > 200 ? 1 : -1);
        mask[y * w + x + 3] = (signed char)(gx[y * w + x + 3] > 200 ? 1 : -1);
      }
      for (; x < w - 1; x++) mask[y * w + x] = (signed char)(gx[y * w + x] > 200 ? 1 : -1);
    }
#pragma omp target teams distribute parallel for
    for (size_t y = 1; y < h - 1; y++) {
      unsigned s = 0;
      for (unsigned x = 1; x < w - 1; x++) {
        unsigned char o = (unsigned char)(mask[y * w + x] > 0 ? img[y * w + x] : 0);
        out[y * w + x] = o;
        s += o;
      }
      rows[y] = s;
    }
  }
#pragma omp target update from(rows[1:h-2])
  for (size_t y = 1; y < h - 1; y++) sum += rows[y];
  printf("pix8 %lu\n", sum);
  return 0;
}
