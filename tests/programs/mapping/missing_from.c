/* Table III: a data region maps the result `to` only: the device result never comes back. */
#include <stdio.h>
#define N 64
int main(void) {
  float v[N];
  for (int i = 0; i < N; i++) v[i] = 1.0f;
#pragma omp target data map(to: v[0:N])
  {
#pragma omp target
    for (int i = 0; i < N; i++) v[i] += 1.0f;
  }
  float s = 0;
  for (int i = 0; i < N; i++) s += v[i]; /* expect use-of-stale-data v */
  printf("%g\n", s);
  return 0;
}
