// An update of the interior of a 3D box with collapse(3): the compiler fuses the three loops into
// one, so the body has no loop of its own and recomputes i, j, k from one induction variable.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 128, iters = argc > 2 ? atoi(argv[2]) : 20;
  size_t total = (size_t)n * n * n;
  double *a = malloc(total * sizeof(double)), *b = malloc(total * sizeof(double)), *w = malloc(n * sizeof(double));
  for (size_t i = 0; i < total; i++) { a[i] = (double)(i % 7); b[i] = 0.0; }
  for (int k = 0; k < n; k++) w[k] = 1.0 / (k + 1);
#pragma omp target enter data map(to: a[0:total], w[0:n]) map(alloc: b[0:total])
  for (int it = 0; it < iters; it++) {
#pragma omp target teams distribute parallel for collapse(3)
    for (int i = 2; i < n - 2; i++)
      for (int j = 2; j < n - 2; j++)
        for (int k = 2; k < n - 2; k++) {
          size_t c = ((size_t)i * n + j) * n + k;
          b[c] = a[c] * w[k] + b[c] * 0.5;
        }
  }
#pragma omp target exit data map(from: b[0:total]) map(delete: a[0:total], w[0:n])
  double s = 0;
  for (size_t i = 0; i < total; i++) s += b[i];
  printf("collapse3 sum %.6f\n", s);
  free(a); free(b); free(w);
  return 0;
}
