// FIR filter with 31 taps: y[i] = sum_k h[k] * x[i + k], the taps loop innermost (short, fixed trip count).
#include <stdio.h>
#include <stdlib.h>
#define K 31
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 21, iters = argc > 2 ? atoi(argv[2]) : 5;
  float *x = malloc(sizeof(float) * (n + K)), *y = malloc(sizeof(float) * n), h[K];
  for (int i = 0; i < n + K; i++) x[i] = (i % 13) * 0.1f;
  for (int k = 0; k < K; k++) h[k] = 1.0f / (k + 1);
#pragma omp target data map(to: x[0:n+K], h[0:K]) map(from: y[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      float s = 0;
      for (int k = 0; k < K; k++) s += h[k] * x[i + k];
      y[i] = s;
    }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += y[i];
  printf("fir %.3f\n", sum);
  return 0;
}
