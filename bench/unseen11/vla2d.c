// A 2D grid through a pointer to variable-length rows, `double (*u)[n]`, 5-point Jacobi with a swap.
#include <stdio.h>
#include <stdlib.h>
static void step(int n, double (*restrict out)[n], double (*restrict in)[n]) {
#pragma omp target teams distribute parallel for
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++) out[i][j] = 0.25 * (in[i - 1][j] + in[i + 1][j] + in[i][j - 1] + in[i][j + 1]);
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 40;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
  for (int k = 0; k < n * n; k++) a[k] = b[k] = (k % n == 0) ? 1.0 : 0.0;
#pragma omp target data map(tofrom: a[0:n*n], b[0:n*n])
  for (int t = 0; t < iters; t++) {
    step(n, (double (*)[n])b, (double (*)[n])a);
    double *x = a; a = b; b = x;
  }
  double sum = 0;
  for (int k = 0; k < n * n; k++) sum += a[k];
  printf("vla2d %.6f\n", sum);
  return 0;
}
