/* Table III: reference counting suppresses the inner `tofrom`; the outer region releases with alloc. */
#include <stdio.h>
#define N 64
int main(void) {
  int a[N];
  for (int i = 0; i < N; i++) a[i] = 0;
#pragma omp target data map(alloc: a[0:N])
  {
#pragma omp target map(tofrom: a[0:N])
    for (int i = 0; i < N; i++) a[i] = i;
  }
  int s = 0;
  for (int i = 0; i < N; i++) s += a[i]; /* expect use-of-stale-data a */
  printf("%d\n", s);
  return 0;
}
