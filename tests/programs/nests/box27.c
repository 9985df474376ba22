/* A 27-point box filter written the plain way (loops over z, y, x and, per point, dz, dy, dx of 3
 * iterations each; -O1 keeps the small loops), a second sweep that walks dz and dx downwards, and a
 * collapse(2) sweep over (z, y). `in` is mapped without its last plane: the box of the last
 * interior plane reads past it. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 9;
  size_t total = (size_t)n * n * n, plane = (size_t)n * n;
  float *in = malloc(total * sizeof(float)), *out = malloc(total * sizeof(float)), *o2 = malloc(total * sizeof(float));
  for (size_t c = 0; c < total; c++) { in[c] = (float)(c % 17); out[c] = 0.0f; o2[c] = 0.0f; }
#pragma omp target data map(to: in[0:total - plane]) map(tofrom: out[0:total], o2[0:total])
  {
#pragma omp target teams distribute parallel for
    for (int z = 1; z < n - 1; z++)
      for (int y = 1; y < n - 1; y++)
        for (int x = 1; x < n - 1; x++) {
          float s = 0.0f;
          for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++)
                s += in[((size_t)(z + dz) * n + (y + dy)) * n + (x + dx)]; /* expect buffer-overflow in */
          out[((size_t)z * n + y) * n + x] = s / 27.0f;
        }
#pragma omp target teams distribute parallel for
    for (int z = 1; z < n - 2; z++)
      for (int y = 1; y < n - 1; y++)
        for (int x = 2; x < n - 1; x++) {
          float s = 0.0f;
          for (int dz = 1; dz >= -1; dz--)
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = 0; dx >= -2; dx--)
                s += in[((size_t)(z + dz) * n + (y + dy)) * n + (x + dx)] * (float)(dx + 3);
          o2[((size_t)z * n + y) * n + x] = s;
        }
#pragma omp target teams distribute parallel for collapse(2)
    for (int z = 1; z < n - 2; z++)
      for (int y = 1; y < n - 1; y++)
        for (int x = 1; x < n - 1; x++) {
          float s = 0.0f;
          for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++)
                s += in[((size_t)(z + dz) * n + (y + dy)) * n + (x + dx)];
          o2[((size_t)z * n + y) * n + x] += s;
        }
  }
  double sum = 0;
  for (size_t c = 0; c < total; c++) sum += (c < total - 2 * plane ? out[c] : 0.0f) + o2[c]; /* (not the past-the-end box) */
  printf("%.3f\n", sum);
  free(in); free(out); free(o2);
  return 0;
}
