/* Device clipping and a thresholded update: values above `hi` or below `lo` are clamped by two
 * conditional stores (two sites), and a decay applies only where a cell is marked active (a
 * conditional read-modify-write), over a 2-D field in `target enter/exit data`. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 1500, ny = argc > 2 ? atoi(argv[2]) : 1000, steps = argc > 3 ? atoi(argv[3]) : 20;
  size_t n = (size_t)nx * ny;
  float *x = malloc(sizeof(float) * n);
  int *active = malloc(sizeof(int) * n);
  unsigned s = 12345u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    x[i] = (float)((s >> 8) % 2000) / 1000.0f - 1.0f;
    active[i] = (s >> 4) % 3 == 0;
  }
#pragma omp target enter data map(to: x[0:n], active[0:n])
  for (int t = 0; t < steps; t++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        float v = x[(size_t)j * nx + i] * 1.7f + 0.01f * t;
        if (v > 0.9f) v = 0.9f;
        x[(size_t)j * nx + i] = v;
        if (x[(size_t)j * nx + i] < -0.8f) x[(size_t)j * nx + i] = -0.8f;
      }
#pragma omp target teams distribute parallel for
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        if (active[(size_t)j * nx + i]) x[(size_t)j * nx + i] *= 0.5f;
  }
#pragma omp target exit data map(from: x[0:n]) map(delete: active[0:n])
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += x[i];
  printf("clip %.3f\n", sum);
  free(x); free(active);
  return 0;
}
