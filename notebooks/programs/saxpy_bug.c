/* seed 000 Fig. 1: `b` is mapped with `alloc`, so the kernel reads a device copy of `b`
 * that was never initialised; the result depends on whatever the device memory held. */
#include <stdio.h>
#define N 1000

int main(void) {
  float a[N], b[N];
  for (int i = 0; i < N; i++) { a[i] = 0.0f; b[i] = (float)i; }

#pragma omp target map(tofrom: a[0:N]) map(alloc: b[0:N])
#pragma omp teams distribute parallel for
  for (int i = 0; i < N; i++)
    a[i] = 2.0f * b[i] + a[i];

  printf("a[10] = %.1f (expected 20.0)\n", a[10]);
  return 0;
}
