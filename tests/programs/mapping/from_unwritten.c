/* Table III: `from` copies back a device copy the kernel only half wrote. */
#include <stdio.h>
#include <stdlib.h>
#define N 64
int main(void) {
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) a[i] = 1;
#pragma omp target map(from: a[0:N])
  for (int i = 0; i < N / 2; i++) a[i] = 2;
  long s = 0;
  for (int i = 0; i < N; i++) s += a[i]; /* expect use-of-uninitialized-memory a */
  printf("%ld\n", s);
  free(a);
  return 0;
}
