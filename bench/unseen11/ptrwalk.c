// Pointer-walking loops: a row copied with `*d++ = *s++ * c` and a running sum over `for (p = a; p < end; ++p)`.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048, iters = argc > 2 ? atoi(argv[2]) : 20;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n), *r = malloc(sizeof(double) * n);
  for (int k = 0; k < n * n; k++) a[k] = k % 9;
#pragma omp target data map(to: a[0:n*n]) map(alloc: b[0:n*n]) map(from: r[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      const double *s = a + (size_t)i * n, *end = s + n;
      double *d = b + (size_t)i * n;
      while (s < end) *d++ = *s++ * 0.5;
      double acc = 0;
      for (const double *p = b + (size_t)i * n; p < b + (size_t)(i + 1) * n; ++p) acc += *p;
      r[i] = acc;
    }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += r[i];
  printf("ptrwalk %.1f\n", sum);
  return 0;
}
