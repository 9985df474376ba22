/* A collapse(3) kernel launched `nowait` (its writes are one nest3 record per thread chunk) and a
 * `target update from` that does not wait for it: the copy may run before the kernel's writes end. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  size_t total = (size_t)n * n * n;
  double *x = malloc(total * sizeof(double)), *y = malloc(total * sizeof(double));
  for (size_t c = 0; c < total; c++) { x[c] = 0.0; y[c] = (double)(c % 9); }
#pragma omp target enter data map(to: x[0:total], y[0:total])
#pragma omp target teams distribute parallel for collapse(3) nowait
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      for (int k = 0; k < n - 2; k++)
        x[((size_t)i * n + j) * n + k] = y[((size_t)i * n + j) * n + k + 1] * 0.5;
#pragma omp target update from(x[0:total]) /* line 16: missing depend / taskwait */
  printf("%.1f\n", x[total / 2] >= 0.0 ? 1.0 : 0.0);
#pragma omp taskwait
#pragma omp target exit data map(release: x[0:total], y[0:total])
  free(x); free(y);
  return 0;
}
