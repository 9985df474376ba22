/* A kernel writes a stack array of main through a pointer that no map clause covers. */
#include <stdio.h>
#define N 512
int main(void) {
  int hist[N];
  int in[N];
  int *h = hist;
  for (int i = 0; i < N; i++) in[i] = i;
  for (int i = 0; i < N; i++) hist[i] = 0;
#pragma omp target map(to: in[0:N])
  for (int i = 0; i < N; i++) h[i] = in[i] * 2; /* expect unmapped-memory h */
  printf("%d\n", hist[5]);
  return 0;
}
