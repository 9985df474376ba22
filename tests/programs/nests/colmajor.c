/* A column-major sweep of a row-major matrix (the inner loop strides by a row): one strided record
 * of single elements per column for each access. a's section leaves out the last row, which every
 * column reads. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  size_t total = (size_t)n * n;
  float *a = malloc(total * sizeof(float)), *b = malloc(total * sizeof(float)), *colsum = malloc(n * sizeof(float));
  for (size_t i = 0; i < total; i++) a[i] = (float)(i % 11);
#pragma omp target data map(to: a[0:total - n]) map(from: b[0:total], colsum[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int i = 0; i < n; i++) {
        float x = a[(size_t)i * n + j]; /* expect buffer-overflow a */
        s += x;
        b[(size_t)i * n + j] = 0.5f * x;
      }
      colsum[j] = s;
    }
  }
  double t = 0; /* (the last row read bytes past a's device copy: left out) */
  for (size_t i = 0; i < total - n; i++) t += b[i];
  printf("%.3f\n", t);
  free(a); free(b); free(colsum);
  return 0;
}
