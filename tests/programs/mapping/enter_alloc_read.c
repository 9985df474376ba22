/* Table III: a read after `alloc` (target enter data) of a device copy nobody initialised. */
#include <stdio.h>
#include <stdlib.h>
#define N 64
int main(void) {
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target enter data map(alloc: a[0:N])
  int s = 0;
#pragma omp target map(tofrom: s)
  for (int i = 0; i < N; i++) s += a[i]; /* expect use-of-uninitialized-memory a */
#pragma omp target exit data map(delete: a[0:N])
  printf("%d\n", s);
  free(a);
  return 0;
}
