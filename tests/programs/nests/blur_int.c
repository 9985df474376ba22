/* A 3x3 box blur over an image struct written the way users write it: `int` width, row, column
 * and offsets (the index `(y + dy) * w + x + dx` is 32-bit, sign-extended once), a parallel
 * collapse(2) loop over (y, x) in a target region and dy, dx loops of 3 iterations that -O1 keeps. The source image is mapped
 * without its last row: the blur of the last interior row reads past it. */
#include <stdio.h>
#include <stdlib.h>
typedef struct { int w, h; float *px; } image;
static void blur(const image *in, image *out) {
  int w = in->w, h = in->h;
  const float *p = in->px;
  float *q = out->px;
#pragma omp target map(to: p[0:(h - 1) * w]) map(tofrom: q[0:h * w])
#pragma omp parallel for collapse(2) schedule(static)
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      float s = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) s += p[(y + dy) * w + x + dx]; /* expect buffer-overflow p */
      q[y * w + x] = s / 9.0f;
    }
}
int main(int argc, char **argv) {
  int w = argc > 1 ? atoi(argv[1]) : 12, h = argc > 2 ? atoi(argv[2]) : 7;
  image a = {w, h, malloc((size_t)w * h * sizeof(float))}, b = {w, h, malloc((size_t)w * h * sizeof(float))};
  for (int i = 0; i < w * h; i++) a.px[i] = (float)(i % 11), b.px[i] = 0.0f;
  blur(&a, &b);
  double s = 0;
  for (int i = 0; i < w * (h - 2); i++) s += b.px[i]; /* (not the row that read past the map) */
  printf("%.3f\n", s);
  free(a.px); free(b.px);
  return 0;
}
