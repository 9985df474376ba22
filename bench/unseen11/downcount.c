// Unsigned loops counting down, `for (size_t i = n; i-- > 0;)`, a backward recurrence-free update and a
// reversed prefix over each row.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1 << 22;
  int iters = argc > 2 ? atoi(argv[2]) : 20;
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) x[i] = i % 11, y[i] = 0;
#pragma omp target data map(to: x[0:n]) map(tofrom: y[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (size_t b = 0; b < n / 1024; b++)
      for (size_t i = 1024; i-- > 0;) y[b * 1024 + i] = 0.9f * y[b * 1024 + i] + x[b * 1024 + i];
  }
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += y[i];
  printf("downcount %.1f\n", sum);
  return 0;
}
