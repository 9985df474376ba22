/* A row loop whose inner loop of W reads is unrolled by the compiler: the W loads of a row are one
 * block call (element width kept). Row 3 of `in` is never written on the device. */
#include <stdio.h>
#include <stdlib.h>
#define W 8
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64;
  double *in = malloc(sizeof(double) * n * W), *out = malloc(sizeof(double) * n);
#pragma omp target data map(alloc: in[0:n*W]) map(from: out[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n * W; i++)
      if (i / W != 3) in[i] = i;
#pragma omp target teams distribute parallel for
    for (int r = 0; r < n; r++) {
      double s = 0.0;
      for (int k = 0; k < W; k++) s += in[r * W + k] * (k + 1); /* expect use-of-uninitialized-memory in */
      out[r] = s;
    }
  }
  printf("%.1f\n", out[n - 1]);
  free(in); free(out);
  return 0;
}
