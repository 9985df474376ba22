// host-parallel 2-D sweep over a tall, narrow grid (rows of 6 interior floats), device copy-back each step
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  long rows = argc > 1 ? atol(argv[1]) : 20000; int iters = argc > 2 ? atoi(argv[2]) : 40;
  const int w = 8;
  float *a = malloc(sizeof(float) * rows * w), *b = malloc(sizeof(float) * rows * w);
  for (long i = 0; i < rows * w; i++) { a[i] = (float)(i % 5); b[i] = 0; }
#pragma omp target enter data map(to: a[0:rows*w], b[0:rows*w])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (long i = 1; i < rows - 1; i++)
      for (int j = 1; j < w - 1; j++)
        b[i * w + j] = 0.2f * (a[i * w + j] + a[(i - 1) * w + j] + a[(i + 1) * w + j] + a[i * w + j - 1] + a[i * w + j + 1]);
    float *tmp = a; a = b; b = tmp;
  }
#pragma omp target exit data map(from: a[0:rows*w]) map(delete: b[0:rows*w])
  printf("narrow %.4f\n", a[(rows / 2) * w + 3]);
  free(a); free(b);
  return 0;
}
