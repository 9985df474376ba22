// Under a data-dependent test, a row's scale read inside the inner loop: `if (a[k] > t) b[k] += s[i]`
// (the compiler may not hoist s[i] above the test).
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 20;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n), *s = malloc(sizeof(double) * n);
  for (int k = 0; k < n * n; k++) a[k] = (k * 7919 % 1000) * 0.001, b[k] = 0;
  for (int i = 0; i < n; i++) s[i] = 1.0 / (1 + i);
#pragma omp target data map(to: a[0:n*n], s[0:n]) map(tofrom: b[0:n*n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        if (a[i * n + j] > 0.3) b[i * n + j] += s[i];
  }
  double sum = 0;
  for (int k = 0; k < n * n; k++) sum += b[k];
  printf("condinv %.3f\n", sum);
  return 0;
}
