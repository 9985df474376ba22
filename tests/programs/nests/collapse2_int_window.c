/* A 3x3 window over an image with `int` width, row, column and offsets (the index `(y + dy) * w + x
 * + dx` is one 32-bit value, sign-extended once), under collapse(2) on the device with a dynamic
 * schedule (chunks of 5 points, several per thread, starting mid-row) and every other column, then
 * on the host with `parallel for collapse(2) schedule(static, 3)`. The device writes `b`, but only
 * its first rows are copied back (`target update from`) before the host reads all of them: the
 * host reads the rest of `b` stale. */
#include <stdio.h>
#include <stdlib.h>
static void window(const float *p, float *q, int w, int y0, int y1, int x0, int x1) {
#pragma omp parallel for collapse(2) schedule(static, 3)
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) {
      float s = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) s += p[(y + dy) * w + x + dx]; /* expect use-of-stale-data b */
      q[y * w + x] = s / 9.0f;
    }
}
int main(int argc, char **argv) {
  int w = argc > 1 ? atoi(argv[1]) : 23, h = argc > 2 ? atoi(argv[2]) : 13;
  float *a = malloc((size_t)w * h * sizeof(float)), *b = malloc((size_t)w * h * sizeof(float));
  float *c = malloc((size_t)w * h * sizeof(float));
  for (int i = 0; i < w * h; i++) a[i] = (float)(i % 11), b[i] = c[i] = 0.0f;
#pragma omp target data map(to: a[0:w * h]) map(tofrom: b[0:w * h])
  {
#pragma omp target teams distribute parallel for collapse(2) schedule(dynamic, 5)
    for (int y = 1; y < h - 1; y++)
      for (int x = 1; x < w - 1; x += 2) {
        float s = 0;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) s += a[(y + dy) * w + x + dx];
        b[y * w + x] = s / 9.0f;
      }
#pragma omp target update from(b[0:3 * w])
    window(b, c, w, 1, h - 1, 1, w - 1);
  }
  double s = 0;
  for (int i = 0; i < w * h; i++) s += c[i];
  printf("%.3f\n", s);
  free(a); free(b); free(c);
  return 0;
}
