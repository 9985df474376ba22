/* For the finalize reference test: host threads, a `target data` region, nowait target tasks
   ordered by depend, a global and a stack array behind map clauses, a heap block. */
#include <stdio.h>
#include <stdlib.h>
#define N 512
double g[N];
int main(void) {
  double s[N];
  double *h = malloc(N * sizeof(double));
#pragma omp parallel for num_threads(3)
  for (int i = 0; i < N; i++) { g[i] = i; s[i] = 2 * i; h[i] = 0; }
#pragma omp target data map(to: g[0:N], s[0:N]) map(from: h[0:N])
  {
#pragma omp target
    for (int i = 0; i < N; i++) h[i] = g[i] + s[i];
  }
#pragma omp target nowait depend(out: g[0]) map(tofrom: g[0:N])
  for (int i = 0; i < N; i++) g[i] += 1;
#pragma omp target nowait depend(in: g[0]) map(to: g[0:N]) map(tofrom: s[0:N])
  for (int i = 0; i < N; i++) s[i] += g[i];
#pragma omp taskwait
  printf("%g %g\n", h[N - 1], s[N - 1]);
  free(h);
  return 0;
}
