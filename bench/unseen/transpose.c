// out-of-place blocked transpose on the host threads (target regions executed on the device for the copy-back)
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1500, iters = argc > 2 ? atoi(argv[2]) : 10;
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n);
  for (long i = 0; i < (long)n * n; i++) a[i] = (float)(i % 97);
#pragma omp target data map(tofrom: a[0:n*n]) map(from: b[0:n*n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        b[(long)j * n + i] = a[(long)i * n + j] + 1.0f;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        a[(long)j * n + i] = b[(long)i * n + j] * 0.5f;
  }
  printf("transpose %.3f %.3f\n", a[n + 3], b[2 * n + 1]);
  return 0;
}
