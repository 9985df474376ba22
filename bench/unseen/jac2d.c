#include <stdio.h>
#include <stdlib.h>
#define N 66
int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 1000;
  double *a = malloc(sizeof(double) * N * N), *b = malloc(sizeof(double) * N * N);
  for (int i = 0; i < N * N; i++) { a[i] = (i % 7) * 0.5; b[i] = 0; }
  #pragma omp target data map(tofrom: a[0:N*N]) map(alloc: b[0:N*N])
  {
    #pragma omp target teams distribute parallel for collapse(2)
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) b[i*N+j] = a[i*N+j];
    for (int t = 0; t < iters; t++) {
      #pragma omp target teams distribute parallel for collapse(2)
      for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
          b[i*N+j] = 0.25 * (a[(i-1)*N+j] + a[(i+1)*N+j] + a[i*N+j-1] + a[i*N+j+1]);
      double *tmp = a; a = b; b = tmp;
    }
  }
  printf("%f\n", a[N*N/2+3]);
  free(a); free(b);
  return 0;
}
