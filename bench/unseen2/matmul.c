#include <stdio.h>
#include <stdlib.h>
/* C = A * B on the device, i-k-j order: a scalar of A, a row of B, a row of C per (i, k). */
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 400, reps = argc > 2 ? atoi(argv[2]) : 2;
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n), *c = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; i++) { a[i] = (i % 13) * 0.25f; b[i] = (i % 7) * 0.5f; }
  #pragma omp target data map(to: a[0:n*n], b[0:n*n]) map(from: c[0:n*n])
  for (int r = 0; r < reps; r++) {
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) c[i * n + j] = 0.0f;
      for (int k = 0; k < n; k++) {
        float aik = a[i * n + k];
        for (int j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
      }
    }
  }
  printf("c[n+1]=%f\n", c[n + 1]);
  free(a); free(b); free(c);
  return 0;
}
