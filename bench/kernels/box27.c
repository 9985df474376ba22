// A 27-point box filter on a 3D grid, written the plain way: loops over z, y, x and, per point, a
// sum over the 3x3x3 neighbourhood in three more loops of 3 iterations (dz, dy, dx). -O2 unrolls the
// small loops; -O1 keeps them, so the innermost loop of the nest is the 3-iteration dx loop.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64, iters = argc > 2 ? atoi(argv[2]) : 10;
  size_t total = (size_t)n * n * n;
  float *in = malloc(total * sizeof(float)), *out = malloc(total * sizeof(float));
  for (size_t c = 0; c < total; c++) { in[c] = (float)(c % 17); out[c] = 0.0f; }
#pragma omp target data map(tofrom: in[0:total], out[0:total])
  for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for
    for (int z = 1; z < n - 1; z++)
      for (int y = 1; y < n - 1; y++)
        for (int x = 1; x < n - 1; x++) {
          float s = 0.0f;
          for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++)
                s += in[((size_t)(z + dz) * n + (y + dy)) * n + (x + dx)];
          out[((size_t)z * n + y) * n + x] = s * (1.0f / 27.0f);
        }
    float *t = in; in = out; out = t;
  }
  double sum = 0;
  for (size_t c = 0; c < total; c++) sum += in[c];
  printf("box27 sum %.3f\n", sum);
  free(in); free(out);
  return 0;
}
