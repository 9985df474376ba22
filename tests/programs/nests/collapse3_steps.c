/* collapse(3) with chunked static schedules (chunks of 7 and 19 start and end in the middle of a line
 * and of a plane; 19 holds whole lines of 8 rows between), a
 * transposed read (rows of one element n*n floats apart: a line is not one interval), a reversed
 * write, and a dynamic schedule. `t` is mapped with alloc and the first kernel writes all of it
 * but its first plane's first line; the third kernel reads that line. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 11;
  size_t total = (size_t)n * n * n;
  float *a = malloc(total * sizeof(float)), *t = malloc(total * sizeof(float)), *r = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; i++) { a[i] = (float)(i % 13); r[i] = 0.0f; }
  for (size_t i = 0; i < (size_t)n; i++) t[i] = 1.0f; /* (never copied: t is mapped alloc) */
#pragma omp target data map(to: a[0:total]) map(alloc: t[0:total]) map(tofrom: r[0:total])
  {
#pragma omp target teams distribute parallel for collapse(3) schedule(static, 7)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        for (int k = 0; k < n; k++)
          if (i + j > 0) t[((size_t)i * n + j) * n + k] = a[((size_t)k * n + j) * n + i] * 0.5f;
#pragma omp target teams distribute parallel for collapse(3) schedule(static, 19)
    for (int i = 1; i < n; i++)
      for (int j = 0; j < n - 2; j += 2)
        for (int k = 0; k < n - 3; k++)
          r[total - 1 - (((size_t)i * n + j) * n + k)] = a[((size_t)k * n + j) * n + i] + 1.0f;
#pragma omp target teams distribute parallel for collapse(3) schedule(dynamic, 5)
    for (int i = 0; i < n - 1; i++)
      for (int j = 0; j < n; j++)
        for (int k = 1; k < n - 1; k++)
          r[((size_t)i * n + j) * n + k] += t[((size_t)i * n + j) * n + k - 1]; /* expect use-of-uninitialized-memory t */
  }
  double s = 0;
  for (size_t i = 0; i < total; i++) s += r[i];
  printf("%.3f\n", s);
  free(a); free(t); free(r);
  return 0;
}
