// Device per-row searches with data-dependent trip counts: a `while` loop that scans a row until a
// threshold (early exit), a `for` loop with `break` on the first negative entry, and a `do-while`
// that walks back over the row's tail; each row then scaled up to its cut point.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000, iters = argc > 2 ? atoi(argv[2]) : 20;
  float *a = malloc(sizeof(float) * n * n);
  int *cut = malloc(sizeof(int) * n), *neg = malloc(sizeof(int) * n);
  for (long i = 0; i < (long)n * n; i++) a[i] = (float)((i * 7919) % 1000) * 0.001f;
  for (int i = 0; i < n; i++) a[(long)i * n + (n - 1 - i % 97)] = -1.0f;
  long total = 0;
#pragma omp target data map(tofrom: a[0:n*n]) map(alloc: cut[0:n], neg[0:n])
  for (int t = 0; t < iters; t++) {
    float thr = 0.9f * n;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      const float *row = a + (long)i * n;
      float s = 0;
      int k = 0;
      while (k < n && s < thr) s += row[k++];
      cut[i] = k;
      int j;
      for (j = 0; j < n; j++)
        if (row[j] < 0) break;
      neg[i] = j;
      int e = n;
      do { e--; } while (e > 0 && row[e] > 0.5f);
      for (int q = 0; q < k && q < j; q++) a[(long)i * n + q] *= 0.999f;
      (void)e;
    }
#pragma omp target update from(cut[0:n], neg[0:n])
    for (int i = 0; i < n; i++) total += cut[i] + neg[i];
  }
  printf("scan %ld %.4f\n", total, a[(long)n * n / 2 + 3]);
  return 0;
}
