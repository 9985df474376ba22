/* A row loop bounded by what a data-dependent loop before it found (`while (k < n && row[k] >= 0) k++;`
 * then `for (q = 0; q < k; q++)`): at -O0 the bound is the `while` loop's counter after it, a value the
 * promoted copy names as that loop's recurrence; the range call rebuilds it from the counter's stack
 * slot, so each row is one range instead of one call per element. The second kernel reads each row
 * of v up to its cut and one element past it, which nothing wrote (mapped alloc). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64, m = 16;
  float *a = malloc(sizeof(float) * n * m), *v = malloc(sizeof(float) * n * m);
  int *cut = malloc(sizeof(int) * m);
  for (int i = 0; i < n * m; i++) a[i] = (i % n == n - 1 - (i / n) % 7) ? -1.0f : 0.5f;
#pragma omp target data map(to: a[0:n*m]) map(alloc: v[0:n*m]) map(from: cut[0:m])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < m; i++) {
      const float *row = a + (long)i * n;
      int k = 0;
      while (k < n && row[k] >= 0) k++;
      for (int q = 0; q < k; q++) v[(long)i * n + q] = 2.0f * row[q];
      cut[i] = k;
    }
#pragma omp target teams distribute parallel for
    for (int i = 0; i < m; i++) {
      float s = 0;
      for (int q = 0; q <= cut[i] && q < n; q++) s += v[(long)i * n + q]; /* expect use-of-uninitialized-memory v */
      cut[i] = s > 0;
    }
  }
  printf("after_scan %d\n", cut[3]);
  free(a); free(v); free(cut);
  return 0;
}
