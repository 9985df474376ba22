// Device 2-D Jacobi through variable-length array types `double (*u)[n]`, the inner loop a `simd`
// loop, inside `target data` with a `target update from` of two boundary rows every iteration and,
// every 5th iteration, new west/east boundary columns packed on the host, sent with `target update
// to` and unpacked by a kernel. (A strided `target update to(u[0:n][0:1])` through the VLA type is
// not used: clang 19 sends the whole hull u[0][0]..u[n-1][0] for it, overwriting the device's
// interior with stale host data, which `trace analyze` rightly reports as use-of-stale-data.)
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 20;
  double (*u)[n] = malloc(sizeof(double) * n * n), (*v)[n] = malloc(sizeof(double) * n * n);
  double *col = malloc(sizeof(double) * 2 * n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) u[i][j] = v[i][j] = (i == 0 || j == 0) ? 1.0 : 0.0;
  double edge = 0;
#pragma omp target data map(tofrom: u[0:n][0:n]) map(to: v[0:n][0:n]) map(alloc: col[0:2*n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++) {
#pragma omp simd
      for (int j = 1; j < n - 1; j++)
        v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
    }
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++) {
#pragma omp simd
      for (int j = 1; j < n - 1; j++) u[i][j] = v[i][j];
    }
#pragma omp target update from(u[1:1][0:n])
#pragma omp target update from(u[n-2:1][0:n])
    edge += u[1][n / 2] + u[n - 2][n / 2];
    if (t % 5 == 4) { // new boundary values, packed on the host and unpacked on the device
      for (int i = 0; i < n; i++) { col[i] = 1.0; col[n + i] = 0.5; }
#pragma omp target update to(col[0:2*n])
#pragma omp target teams distribute parallel for
      for (int i = 0; i < n; i++) { u[i][0] = col[i]; u[i][n - 1] = col[n + i]; }
    }
  }
  printf("vla %.6e %.6e\n", edge, u[n / 2][n / 2]);
  return 0;
}
