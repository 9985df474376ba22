/* Table III / seed 002 Fig. 1: the kernel reads the whole array, the clause maps half of it. */
#include <stdio.h>
#include <stdlib.h>
#define N 64
int main(void) {
  int *a = malloc(N * sizeof(int));
  int *b = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target map(to: a[0:N / 2]) map(from: b[0:N])
  for (int i = 0; i < N; i++) b[i] = a[i]; /* expect buffer-overflow a */
  printf("%d\n", b[1]);
  free(a);
  free(b);
  return 0;
}
