// Many independent lower-triangular solves (one per team), forward substitution with the inner
// reduction over the row's prefix: x[i] = (b[i] - sum_{j<i} L[i*n+j] * x[j]) / L[i*n+i].
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 256, m = argc > 2 ? atoi(argv[2]) : 64;
  double *L = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * m), *x = malloc(sizeof(double) * n * m);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) L[i * n + j] = j > i ? 0 : (i == j ? 2.0 + i % 3 : 0.01 * ((i + j) % 5));
  for (int k = 0; k < n * m; k++) b[k] = 1.0 + k % 7;
#pragma omp target teams distribute parallel for map(to: L[0:n*n], b[0:n*m]) map(from: x[0:n*m])
  for (int s = 0; s < m; s++) {
    double *xs = x + (size_t)s * n;
    const double *bs = b + (size_t)s * n;
    for (int i = 0; i < n; i++) {
      double acc = bs[i];
      for (int j = 0; j < i; j++) acc -= L[i * n + j] * xs[j];
      xs[i] = acc / L[i * n + i];
    }
  }
  double sum = 0;
  for (int k = 0; k < n * m; k++) sum += x[k];
  printf("trisolve %.6f\n", sum);
  return 0;
}
