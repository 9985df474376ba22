/* The same sweep as uninit_interior.c in a `nowait` kernel: its runs stay plain (no strides),
 * because the race and schedule checkers read nowait kernels' accesses. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 32;
  float *in = malloc(sizeof(float) * n * n), *out = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; i++) { in[i] = 1.0f; out[i] = 0.0f; }
#pragma omp target teams distribute parallel for map(alloc: in[0:n*n]) map(tofrom: out[0:n*n]) nowait
  for (int y = 1; y < n - 1; y++)
    for (int x = 1; x < n - 1; x++)
      out[y * n + x] = in[y * n + x];
#pragma omp taskwait
  printf("%.1f\n", out[n + 1]);
  free(in); free(out);
  return 0;
}
