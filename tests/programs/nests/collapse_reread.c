/* collapse(2) over the interior of a grid: one loop with div/mod, so every access is its own call
 * site with a cache, and each array's rows (n-2 elements, halo left out) form one strided run.
 * Each point reads its left neighbour, which the thread wrote one iteration before (except in the
 * first column): per access those reads are dropped (bytes of the thread's own pending writes), so
 * a site appending to the row of a strided run may not append them either. One thread: the
 * recurrence along a row is then well defined. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  size_t total = (size_t)n * n;
  double *a = malloc(total * sizeof(double)), *b = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) { a[i] = (double)(i % 9); b[i] = 1.0; }
#pragma omp target data map(to: a[0:total]) map(tofrom: b[0:total])
  {
#pragma omp target teams distribute parallel for collapse(2) num_teams(1) num_threads(1)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++) {
        size_t c = (size_t)i * n + j;
        b[c] = a[c] + 0.5 * b[c - 1];
      }
  }
  double s = 0;
  for (size_t i = 0; i < total; i++) s += b[i];
  printf("%.3f\n", s);
  free(a); free(b);
  return 0;
}
