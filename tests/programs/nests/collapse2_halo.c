/* A 7-point stencil over the interior of an n^3 grid with collapse(2) over z and y (the compiler
 * recovers z and y from one induction variable by iv / m and iv % m): rows of n-2 floats between
 * halo cells, one plane of rows after the other. The range pass records each access of a thread's
 * chunk as one call (rows of each plane, the first and last plane partial). `in`'s section leaves
 * out the last plane, which the reads of the plane above the last interior plane reach. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 14, iters = 2;
  size_t plane = (size_t)n * n, total = plane * n;
  float *in = malloc(total * sizeof(float)), *out = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; i++) { in[i] = (float)(i % 13); out[i] = 0.0f; }
#pragma omp target data map(to: in[0:total - plane]) map(tofrom: out[0:total])
  for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int z = 1; z < n - 1; z++)
      for (int y = 1; y < n - 1; y++)
        for (int x = 1; x < n - 1; x++) {
          size_t c = (size_t)z * plane + (size_t)y * n + x;
          out[c] = 0.5f * in[c] + 0.0625f * (in[c - 1] + in[c + 1] + in[c - n] + in[c + n] + in[c - plane]
                                             + in[c + plane]); /* expect buffer-overflow in */
        }
  }
  double s = 0;
  for (size_t i = 0; i < total - 2 * plane; i++) s += out[i]; /* (the last interior plane read past in) */
  printf("%.3f\n", s);
  free(in); free(out);
  return 0;
}
