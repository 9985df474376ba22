// 2D thermal step with clamped neighbour indices (the edge cells read themselves): reads through
// index selects, a power array, rows of n floats.
#include <stdio.h>
#include <stdlib.h>
static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 512, steps = argc > 2 ? atoi(argv[2]) : 50;
  float *t = malloc(sizeof(float) * n * n), *tn = malloc(sizeof(float) * n * n), *p = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; i++) { t[i] = 300.0f + (i % 13); p[i] = (i % 101) * 0.01f; }
#pragma omp target data map(tofrom: t[0:n*n]) map(alloc: tn[0:n*n]) map(to: p[0:n*n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        int N = clampi(i - 1, 0, n - 1), S = clampi(i + 1, 0, n - 1), W = clampi(j - 1, 0, n - 1), E = clampi(j + 1, 0, n - 1);
        float c = t[i * n + j];
        tn[i * n + j] = c + 0.1f * (p[i * n + j] + t[N * n + j] + t[S * n + j] + t[i * n + W] + t[i * n + E] - 4.0f * c);
      }
    float *x = t; t = tn; tn = x;
  }
  double sum = 0;
  for (int i = 0; i < n * n; i++) sum += t[i];
  printf("hotspot %.3f\n", sum);
  return 0;
}
