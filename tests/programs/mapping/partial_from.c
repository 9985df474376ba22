/* Table III: a partial `from`: only the first half of the result is copied back. */
#include <stdio.h>
#include <stdlib.h>
#define N 64
int main(void) {
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) a[i] = 0;
#pragma omp target enter data map(to: a[0:N])
#pragma omp target
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target exit data map(from: a[0:N / 2])
  long s = 0;
  for (int i = 0; i < N; i++) s += a[i]; /* expect use-of-stale-data a */
  printf("%ld\n", s);
  free(a);
  return 0;
}
