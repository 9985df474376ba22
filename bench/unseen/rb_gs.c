// red-black Gauss-Seidel on a 2-D grid, device, stride-2 inner loop (unseen shape)
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 514, iters = argc > 2 ? atoi(argv[2]) : 50;
  double *u = malloc(sizeof(double) * n * n), *f = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) { u[i] = 0; f[i] = (i % 13) * 0.01; }
  double h2 = 1.0 / ((n - 1) * (n - 1));
#pragma omp target data map(tofrom: u[0:n*n]) map(to: f[0:n*n])
  for (int t = 0; t < iters; t++) {
    for (int color = 0; color < 2; color++) {
#pragma omp target teams distribute parallel for
      for (int i = 1; i < n - 1; i++)
        for (int j = 1 + (i + color) % 2; j < n - 1; j += 2)
          u[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1] - h2 * f[i * n + j]);
    }
  }
  printf("rb_gs %.6f\n", u[(n / 2) * n + n / 2]);
  free(u); free(f);
  return 0;
}
