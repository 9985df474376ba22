/* seed 000 (ARBALEST) Fig. 1: b is mapped with alloc but read on the device (UUM). */
#include <stdio.h>
#define N 64
int a[N], b[N * N], c[N];
static void init(int *a, int *b, int *c) { for (int i = 0; i < N; i++) { a[i] = 1; c[i] = 0; for (int j = 0; j < N; j++) b[j + i * N] = 1; } }
int main(void) {
  init(a, b, c);
#pragma omp target map(to: a[0:N]) map(alloc: b[0:N * N]) map(tofrom: c[0:N])
  {
#pragma omp teams distribute parallel for
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        c[i] += b[j + i * N] * a[j]; /* line 13: reads b's uninitialised CV */
  }
  printf("done\n");
  return 0;
}
