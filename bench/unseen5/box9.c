// 2-D 9-point box filter with a row-pointer-free flat layout, wide rows, target data + update (unseen shape)
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int w = argc > 1 ? atoi(argv[1]) : 1500, h = argc > 2 ? atoi(argv[2]) : 400, iters = argc > 3 ? atoi(argv[3]) : 10;
  double *in = malloc(sizeof(double) * w * h), *out = malloc(sizeof(double) * w * h);
  for (int i = 0; i < w * h; i++) { in[i] = (i * 7 % 23) * 0.25; out[i] = 0; }
  double sum = 0;
  #pragma omp target data map(to: in[0:w*h]) map(tofrom: out[0:w*h])
  for (int it = 0; it < iters; it++) {
    #pragma omp target teams distribute parallel for
    for (int y = 1; y < h - 1; y++)
      for (int x = 1; x < w - 1; x++) {
        double s = 0;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) s += in[(y + dy) * w + x + dx];
        out[y * w + x] = s / 9.0;
      }
    #pragma omp target update from(out[w:w])
    sum += out[w + w / 2];
  }
  printf("box9 %.4f\n", sum);
  free(in); free(out);
  return 0;
}
