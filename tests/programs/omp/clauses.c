/* Map-clause shapes: global/stack/heap arrays, several clauses on one line, struct members,
 * pointer attachment by zero-length section, always, release, delete, update to/from. */
#include <stdio.h>
#include <stdlib.h>
#define N 16
typedef struct { int n; double *data; double w[4]; } vec_t;
double g[N];
int main(void) {
  double s[N];
  double *h = malloc(N * sizeof(double));
  vec_t v = {N, malloc(N * sizeof(double)), {1, 2, 3, 4}};
  for (int i = 0; i < N; i++) { g[i] = i; s[i] = 2 * i; h[i] = 0; v.data[i] = 1; }
#pragma omp target enter data map(to: g[0:N], s[0:N]) map(alloc: h[0:N])
#pragma omp target enter data map(to: v, v.data[0:N])
  double *p = h;
#pragma omp target teams distribute parallel for map(p[:0])
  for (int i = 0; i < N; i++) p[i] = g[i] + s[i];
#pragma omp target map(tofrom: v.w[0:4]) map(always, to: g[0:N])
  for (int i = 0; i < 4; i++) v.w[i] += v.data[i] + g[i];
#pragma omp target update from(h[0:N]) to(s[0:N])
  for (int i = 0; i < N; i++) s[i] = h[i];
#pragma omp target exit data map(release: g[0:N]) map(delete: s[0:N]) map(from: h[0:N])
#pragma omp target exit data map(from: v.data[0:N]) map(release: v)
  printf("%g %g %g\n", h[3], s[3], v.w[1]);
  free(v.data);
  free(h);
  return 0;
}
