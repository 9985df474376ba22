/* collapse(3) over a 3D box (no loop of its own left in the body: each row is one access per
 * iteration) and collapse(2) over a host `parallel for` on the same data. The device copy of `w`
 * leaves out the planes from n-2 on: the last plane of the box reads past it. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 12;
  size_t total = (size_t)n * n * n;
  double *a = malloc(total * sizeof(double)), *w = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) { a[i] = (double)(i % 7); w[i] = 1.0 / (double)(1 + i % 5); }
#pragma omp target data map(tofrom: a[0:total]) map(to: w[0:total - 2 * (size_t)n * n])
  {
#pragma omp target teams distribute parallel for collapse(3)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 2; k < n - 2; k++) {
          size_t c = ((size_t)i * n + j) * n + k;
          a[c] = a[c] * w[c + n] + 0.5; /* expect buffer-overflow w */
        }
  }
#pragma omp parallel for collapse(2)
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      for (int k = 1; k < n - 1; k++) {
        size_t c = ((size_t)i * n + j) * n + k;
        a[c] += w[c - 1] + w[c + 1];
      }
  double s = 0;
  for (size_t i = 0; i < total - 2 * (size_t)n * n; i++) s += a[i]; /* (the last plane read past w) */
  printf("%.3f\n", s);
  free(a); free(w);
  return 0;
}
