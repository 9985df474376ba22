/* Indices clamped by min/max, a monotone function of the counter that moves by at most one element: the
 * loop touches every element between its values at the first and the last iteration, no more. `a[0]` and
 * `b[m]` are never written (both mapped `alloc`): `a[max(i, 1)]` never reads a[0], `b[min(i, m)]` reads b[m]
 * from i = m on, and the backward loop's `a[max(i - 2, 1)]` stops at a[1]. `c[2 * min(i, m)]` moves by two
 * elements: it reads the even elements only (the odd ones are never written). `blur` reads a 3x3
 * neighbourhood with clamped rows and columns of g, which is written whole. */
#include <stdio.h>
#include <stdlib.h>
static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static void fill(double *a, double *b, double *c, int n, int m) {
#pragma omp target teams distribute parallel for
  for (int i = 1; i < n; i++) a[i] = i;
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++) c[2 * i] = i;
#pragma omp target teams distribute parallel for
  for (int i = 0; i < m; i++) b[i] = 2 * i;
}
static void clamps(const double *a, const double *b, double *out, int n, int m) {
#pragma omp target teams distribute parallel for
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < n; i++) {
      int lo = i < 1 ? 1 : i, hi = i > m ? m : i;
      out[r * n + i] = a[lo] + b[hi]; /* expect use-of-uninitialized-memory b */
    }
}
static void evens(const double *c, double *out, int n, int m) {
#pragma omp target teams distribute parallel for
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < n; i++) out[r * n + i] += c[2 * (i > m ? m : i)];
}
static void backward(const double *a, double *out, int n) {
#pragma omp target teams distribute parallel for
  for (int r = 0; r < 4; r++)
    for (int i = n - 1; i >= 0; i--) out[r * n + i] += a[i - 2 < 1 ? 1 : i - 2];
}
static void blur(const double *g, double *h, int w, int ht) {
#pragma omp target teams distribute parallel for
  for (int y = 0; y < ht; y++)
    for (int x = 0; x < w; x++) {
      double s = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) s += g[clampi(y + dy, 0, ht - 1) * w + clampi(x + dx, 0, w - 1)];
      h[y * w + x] = s / 9;
    }
}
int main(int argc, char **argv) {
  /* with a second argument, the blur alone on an image of argv[1] columns (the call counts of
   * tests/tracer/test_call_site_caches.py) */
  int counts = argc > 2, n = argc > 1 && !counts ? atoi(argv[1]) : 300, m = n / 3;
  int w = counts ? atoi(argv[1]) : 40, ht = 30;
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), *out = calloc(4 * (size_t)n, sizeof(double));
  double *c = malloc(sizeof(double) * 2 * n);
  double *g = malloc(sizeof(double) * w * ht), *h = malloc(sizeof(double) * w * ht);
  for (int i = 0; i < n; i++) a[i] = b[i] = -1;
  for (int k = 0; k < w * ht; k++) g[k] = k % 5;
#pragma omp target data map(alloc: a[0:n], b[0:n], c[0:2 * n]) map(tofrom: out[0:4 * n]) map(to: g[0:w * ht]) map(from: h[0:w * ht])
  {
    if (!counts) {
      fill(a, b, c, n, m);
      clamps(a, b, out, n, m);
      evens(c, out, n, m);
      backward(a, out, n);
    }
    blur(g, h, w, ht);
  }
  double s = 0;
  for (int k = 0; k < w * ht; k++) s += h[k];
  printf("%.3f\n", s);
  free(a); free(b); free(c); free(out); free(g); free(h);
  return 0;
}
