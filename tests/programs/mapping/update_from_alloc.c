/* An output mapped `alloc` that a kernel writes only where a condition holds, copied back with
 * `target update from`: the elements it skipped come back uninitialised. The fix is the map clause
 * (`alloc` -> `to`, so the device copy starts from the host's values), not the motion clause. */
#include <stdio.h>
#include <stdlib.h>
#define N 256
int main(void) {
  float *in = malloc(N * sizeof(float)), *out = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) { in[i] = (i % 10) * 0.1f; out[i] = 0; }
#pragma omp target data map(to: in[0:N]) map(alloc: out[0:N])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < N; i++)
      if (in[i] > 0.45f) out[i] = 2 * in[i];
#pragma omp target update from(out[0:N])
  }
  double s = 0;
  for (int i = 0; i < N; i++) s += out[i]; /* expect use-of-uninitialized-memory out */
  printf("%.1f\n", s);
  free(in); free(out);
  return 0;
}
