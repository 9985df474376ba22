// A pointer the kernel uses without a clause of its own (the compiler maps it implicitly, a
// zero-length section) into a `target data` section one row short: one buffer overflow at the read,
// whose report names the `target data` clause and no "ignored clause" (the user wrote none there).
// (At -O0 its constant `w`, `h` made the range pass crash: an index widened from two constants folds.)
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int w = 64, h = 16;
  double *in = malloc(sizeof(double) * w * h), *out = malloc(sizeof(double) * w * h);
  for (int i = 0; i < w * h; i++) { in[i] = i; out[i] = 0; }
#pragma omp target data map(to: in[0:w*(h-1)]) map(tofrom: out[0:w*h])
  {
#pragma omp target teams distribute parallel for
    for (int y = 1; y < h - 1; y++)
      for (int x = 0; x < w; x++)
        out[y * w + x] = in[(y - 1) * w + x] + in[(y + 1) * w + x]; /* expect buffer-overflow in */
  }
  printf("%f\n", out[w + 1]);
  free(in); free(out);
  return 0;
}
