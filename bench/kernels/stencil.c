// 7-point 3D stencil with a pointer swap between iterations (503.postencil shape).
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 96, iters = argc > 2 ? atoi(argv[2]) : 20;
  size_t total = (size_t)n * n * n;
  float *a = malloc(total * sizeof(float)), *b = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; i++) { a[i] = (float)(i % 17); b[i] = 0.0f; }
#pragma omp target enter data map(to: a[0:total], b[0:total])
  for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int z = 1; z < n - 1; z++)
      for (int y = 1; y < n - 1; y++)
        for (int x = 1; x < n - 1; x++) {
          size_t c = ((size_t)z * n + y) * n + x;
          b[c] = 0.4f * a[c] + 0.1f * (a[c - 1] + a[c + 1] + a[c - n] + a[c + n] +
                                        a[c - (size_t)n * n] + a[c + (size_t)n * n]) - 0.0f;
        }
    float *t = a; a = b; b = t;
  }
#pragma omp target exit data map(from: a[0:total]) map(delete: b[0:total])
  double s = 0;
  for (size_t i = 0; i < total; i++) s += a[i];
  printf("stencil checksum %.3f\n", s);
  free(a); free(b);
  return 0;
}
