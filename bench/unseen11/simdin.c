// `omp simd` inner loops with a reduction inside `target teams distribute`: row norms then normalisation.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048, iters = argc > 2 ? atoi(argv[2]) : 20;
  float *a = malloc(sizeof(float) * n * n);
  for (int k = 0; k < n * n; k++) a[k] = 1 + k % 7;
#pragma omp target data map(tofrom: a[0:n*n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute
    for (int i = 0; i < n; i++) {
      float s = 0;
#pragma omp simd reduction(+: s)
      for (int j = 0; j < n; j++) s += a[i * n + j] * a[i * n + j];
      float inv = 1.0f / sqrtf(s);
#pragma omp simd
      for (int j = 0; j < n; j++) a[i * n + j] *= inv;
    }
  }
  double sum = 0;
  for (int k = 0; k < n * n; k++) sum += a[k];
  printf("simdin %.3f\n", sum);
  return 0;
}
