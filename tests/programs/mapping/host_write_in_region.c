/* Stale data on the device: the host updates the array inside a data region, no `target update to`. */
#include <stdio.h>
#define N 64
int main(void) {
  int a[N], s = 0;
  for (int i = 0; i < N; i++) a[i] = 1;
#pragma omp target data map(to: a[0:N])
  {
    for (int i = 0; i < N; i++) a[i] = 2;
#pragma omp target map(tofrom: s)
    for (int i = 0; i < N; i++) s += a[i]; /* expect use-of-stale-data a */
  }
  printf("%d\n", s);
  return 0;
}
