/* A tall narrow grid: rows x 8 floats, a 5-point stencil over the interior (the inner loop of 6 is
 * unrolled), pointer swap between sweeps. The reads of rows i-1 and i+1 are strided records of one
 * stride and phase: each holds the other's rows but its ends. `b` is only allocated: its border,
 * never written by a sweep, is read by the second one. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  const int w = 8;
  int rows = argc > 1 ? atoi(argv[1]) : 64, sweeps = argc > 2 ? atoi(argv[2]) : 2;
  float *a = malloc(sizeof(float) * rows * w), *b = malloc(sizeof(float) * rows * w);
  for (int i = 0; i < rows * w; i++) a[i] = (float)(i % 7);
#pragma omp target enter data map(to: a[0:rows*w]) map(alloc: b[0:rows*w])
  for (int s = 0; s < sweeps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < rows - 1; i++)
      for (int j = 1; j < w - 1; j++)
        b[i * w + j] = 0.2f * (a[(i - 1) * w + j] + a[(i + 1) * w + j] + a[i * w + j - 1] + a[i * w + j + 1] + a[i * w + j]); /* expect use-of-uninitialized-memory b */
    float *t = a; a = b; b = t;
  }
#pragma omp target exit data map(from: a[0:rows*w]) map(delete: b[0:rows*w])
  printf("%.4f\n", a[(rows / 2) * w + 3]);
  free(a); free(b);
  return 0;
}
