/* Image rows indexed by `unsigned` columns against `size_t` bounds (`x < w - 1`): the 32-bit column
 * could wrap before it reaches the bound (an endless loop when w - 1 > UINT_MAX), so the loop has no
 * trip count unless it assumes that the column does not wrap. The range pass assumes it and checks
 * it at run time with the widened indices (per access when it fails): each kernel's rows are hoisted.
 * The second kernel reads every row of out, whose border nothing wrote (mapped alloc). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  size_t w = argc > 1 ? strtoul(argv[1], 0, 10) : 40, h = w, np = w * h;
  unsigned char *img = malloc(np), *out = malloc(np);
  unsigned *rows = malloc(sizeof(unsigned) * h);
  for (size_t i = 0; i < np; i++) img[i] = (unsigned char)(i * 7);
#pragma omp target data map(to: img[0:np]) map(alloc: out[0:np]) map(from: rows[0:h])
  {
#pragma omp target teams distribute parallel for
    for (size_t y = 1; y < h - 1; y++)
      for (unsigned x = 1; x < w - 1; x++) {
        const unsigned char *p = img + y * w + x;
        out[y * w + x] = (unsigned char)((p[-w] + p[w] + p[-1] + p[1]) / 4);
      }
#pragma omp target teams distribute parallel for
    for (size_t y = 0; y < h; y++) {
      unsigned s = 0;
      for (unsigned x = 0; x < w; x++) s += out[y * w + x]; /* expect use-of-uninitialized-memory out */
      rows[y] = s;
    }
  }
  printf("unsigned_cols %u\n", rows[h / 2]);
  free(img); free(out); free(rows);
  return 0;
}
