/* A 7-point stencil over a 3D nest (no collapse): the range pass reports each access once per nest. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 24;
  size_t total = (size_t)n * n * n;
  float *a = malloc(total * sizeof(float)), *b = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; i++) { a[i] = (float)(i % 7); b[i] = 0.0f; }
#pragma omp target teams distribute parallel for map(to: a[0:total]) map(tofrom: b[0:total])
  for (int z = 1; z < n - 1; z++)
    for (int y = 1; y < n - 1; y++)
      for (int x = 1; x < n - 1; x++) {
        size_t c = ((size_t)z * n + y) * n + x;
        b[c] = 0.4f * a[c] + 0.1f * (a[c - 1] + a[c + 1] + a[c - n] + a[c + n] +
                                     a[c - (size_t)n * n] + a[c + (size_t)n * n]);
      }
  double s = 0;
  for (size_t i = 0; i < total; i++) s += b[i];
  printf("%.3f\n", s);
  free(a); free(b);
  return 0;
}
