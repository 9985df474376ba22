/* Column-wise accesses over an enclosing loop that steps by one element: for one i the inner loop
 * walks column i (a row apart per iteration), and the next i's column is the adjacent one, so over a
 * thread's chunk of i an access touches m rows as wide as the chunk (one strided record per chunk
 * instead of one per column). The first kernel's columns run backwards over doubles under a chunked
 * static schedule and write rows 1..m-1 of g only; the second reads every row of g column-wise (row 0
 * was never written: the bug); the third, one thread, walks its columns from the last one down; the
 * fourth steps by a run-time 1 (checked: one record) and 2 (the check fails: one record per column). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 37, m = argc > 2 ? atoi(argv[2]) : 23; /* n columns of m rows */
  size_t total = (size_t)m * n;
  double *src = malloc(total * sizeof(double)), *g = malloc(total * sizeof(double));
  double *h = malloc(total * sizeof(double)), *w = malloc(total * sizeof(double)), *out = malloc(n * sizeof(double));
  for (size_t k = 0; k < total; k++) src[k] = (double)(k % 13), h[k] = 1.0, w[k] = 2.0;
#pragma omp target data map(to: src[0:total]) map(alloc: g[0:total]) map(from: out[0:n]) \
    map(tofrom: h[0:total], w[0:total])
  {
#pragma omp target teams distribute parallel for schedule(static, 5)
    for (int i = 0; i < n; i++)
      for (int r = m - 1; r >= 1; r--) g[(size_t)r * n + i] = 2.0 * src[(size_t)r * n + i];
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int r = 0; r < m; r++) s += g[(size_t)r * n + i]; /* expect use-of-uninitialized-memory g */
      out[i] = s;
    }
#pragma omp target
    for (int i = n - 1; i >= 0; i--)
      for (int r = 0; r < m; r++) h[(size_t)r * n + i] = 0.5 * src[(size_t)r * n + i] + h[(size_t)r * n + i];
  /* steps known only at run time: 1 element (the check holds: one record), 2 (columns apart: one record each) */
  int st1 = 1 + (n > 1000), st2 = 2 + (n > 1000);
#pragma omp target
  {
    for (int i = 0; i < n / st1; i++)
      for (int r = 1; r < m; r++) h[(size_t)r * n + (size_t)i * st1] += 1.0;
    for (int i = 0; i < (n - 1) / st2; i++)
      for (int r = 1; r < m; r++) w[(size_t)r * n + 1 + (size_t)i * st2] *= 0.5;
  }
  }
  double t = 0.0;
  for (int i = 0; i < n; i++) t += out[i];
  for (size_t k = n; k < total; k++) t += h[k] + w[k];
  printf("%.3f\n", t);
  free(src); free(g); free(h); free(w); free(out);
  return 0;
}
