// Bounds tested inside the loop instead of in its range: `if (i > 0 && i < n - 1)` around a 1D
// 3-point update, every index visited.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 22, steps = argc > 2 ? atoi(argv[2]) : 30;
  float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) a[i] = b[i] = (float)(i % 23);
#pragma omp target data map(tofrom: a[0:n], b[0:n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      if (i > 0 && i < n - 1) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0f;
    float *t = a; a = b; b = t;
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += a[i];
  printf("interior1d %.3f\n", sum);
  return 0;
}
