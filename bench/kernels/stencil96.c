// 7-point float stencil on a small cube (rows of n-2 = 94 floats at n = 96) under `target data`,
// collapse(2) over z and y, pointer swap on the host between sweeps. Not tuned for: rows are short
// and skip the halo, so the rows of one nest do not touch.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 96, iters = argc > 2 ? atoi(argv[2]) : 60;
  size_t total = (size_t)n * n * n, plane = (size_t)n * n;
  float *in = malloc(total * sizeof(float)), *out = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; i++) { in[i] = (float)(i % 23) * 0.5f; out[i] = in[i]; }
#pragma omp target data map(tofrom: in[0:total]) map(tofrom: out[0:total])
  {
    for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for collapse(2)
      for (int z = 1; z < n - 1; z++)
        for (int y = 1; y < n - 1; y++)
          for (int x = 1; x < n - 1; x++) {
            size_t c = (size_t)z * plane + (size_t)y * n + x;
            out[c] = 0.25f * in[c] + 0.125f * (in[c - 1] + in[c + 1] + in[c - n] + in[c + n]
                                             + in[c - plane] + in[c + plane]);
          }
      float *t = in; in = out; out = t;
    }
  }
  double s = 0;
  for (size_t i = 0; i < total; i++) s += in[i];
  printf("stencil96 checksum %.3f\n", s);
  free(in); free(out);
  return 0;
}
