/* collapse(2) with non-unit steps and a chunked static schedule (several chunks per thread, each
 * starting and ending in the middle of a plane), then a dynamic schedule: every other row, every
 * third column block of 4 floats, the rows of a plane a stride of 2n apart. `b` is mapped with
 * alloc and written only where the first kernel writes: the second kernel reads one column block
 * further, bytes nobody wrote. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 37;
  size_t total = (size_t)n * n;
  float *a = malloc(total * sizeof(float)), *b = malloc(total * sizeof(float)), *c = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; i++) { a[i] = (float)(i % 11); c[i] = 0.0f; }
#pragma omp target data map(to: a[0:total]) map(alloc: b[0:total]) map(tofrom: c[0:total])
  {
#pragma omp target teams distribute parallel for collapse(2) schedule(static, 5)
    for (int i = 1; i < n - 1; i += 2)
      for (int j = 0; j < n - 8; j += 3)
        for (int k = 0; k < 4; k++)
          b[(size_t)i * n + j + k] = a[(size_t)i * n + j + k] * 2.0f + a[(size_t)(i + 1) * n + j + k];
#pragma omp target teams distribute parallel for collapse(2) schedule(dynamic, 3)
    for (int i = 1; i < n - 1; i += 2)
      for (int j = 0; j < n - 5; j += 3)
        for (int k = 0; k < 4; k++)
          c[(size_t)i * n + j + k] = b[(size_t)i * n + j + k] + 1.0f; /* expect use-of-uninitialized-memory b */
  }
  double s = 0;
  for (size_t i = 0; i < total; i++) s += c[i];
  printf("%.3f\n", s);
  free(a); free(b); free(c);
  return 0;
}
