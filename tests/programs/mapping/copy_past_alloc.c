/* Table III: the section claims more than the host allocation holds (copy-in past its end). */
#include <stdio.h>
#include <stdlib.h>
#define N 64
int main(void) {
  int *a = malloc(N * sizeof(int));
  int *b = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target map(to: a[0:N + 8]) map(from: b[0:N]) /* expect buffer-overflow a */
  for (int i = 0; i < N; i++) b[i] = a[i];
  printf("%d\n", b[1]);
  free(a);
  free(b);
  return 0;
}
