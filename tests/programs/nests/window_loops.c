/* A 9-point window summed in two loops of 3 inside the row loop (-O1 keeps those loops): over the
 * row loop the window's rows grow into 3 whole rows, one box record per row of the grid instead of
 * one strided record per point. The first sweep hands rows out one at a time (schedule(static, 1):
 * at -O0 its loop counter steps by the team's threads), the second in chunks. The second sweep reads
 * v's border, which the first never wrote. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 24, m = argc > 2 ? atoi(argv[2]) : n; /* m < 3: no points in the second */
  float *u = malloc(sizeof(float) * n * n), *v = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; i++) u[i] = (float)(i % 7);
  float s = 0;
#pragma omp target data map(to: u[0:n*n]) map(alloc: v[0:n*n]) map(tofrom: s)
  {
#pragma omp target teams distribute parallel for schedule(static, 1)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++) {
        float acc = 0;
        for (int di = -1; di <= 1; di++)
          for (int dj = -1; dj <= 1; dj++) acc += u[(i + di) * n + j + dj];
        v[i * n + j] = acc / 9.0f;
      }
#pragma omp target teams distribute parallel for reduction(+: s)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < m - 1; j++) {
        float acc = 0;
        for (int di = -1; di <= 1; di++)
          for (int dj = -1; dj <= 1; dj++) acc += v[(i + di) * n + j + dj]; /* expect use-of-uninitialized-memory v */
        s += acc > 0;
      }
  }
  printf("window_loops %d\n", n);
  free(u);
  free(v);
  return 0;
}
