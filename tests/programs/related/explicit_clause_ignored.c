// The same read through an explicit clause on the kernel's construct that had no effect (`in` was
// already present; the clause asks for the same rows): the report names it as the ignored clause.
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int w = 64, h = 16;
  double *in = malloc(sizeof(double) * w * h), *out = malloc(sizeof(double) * w * h);
  for (int i = 0; i < w * h; i++) { in[i] = i; out[i] = 0; }
#pragma omp target data map(to: in[0:w*(h-1)]) map(tofrom: out[0:w*h])
  {
#pragma omp target teams distribute parallel for map(to: in[0:w*(h-1)])
    for (int y = 1; y < h - 1; y++)
      for (int x = 0; x < w; x++)
        out[y * w + x] = in[(y - 1) * w + x] + in[(y + 1) * w + x]; /* expect buffer-overflow in */
  }
  printf("%f\n", out[w + 1]);
  free(in); free(out);
  return 0;
}
