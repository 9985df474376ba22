// Red-black SOR with a bit test for the colour, `if (((i + j) & 1) == colour)`, and in the same inner
// loop a probe that samples every fourth column of the fresh values, `if (j % 4 == 0) probe[..] = u[..]`:
// the probe's load reads what the colour's store wrote in the same iteration.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1026, iters = argc > 2 ? atoi(argv[2]) : 20;
  double *u = malloc(sizeof(double) * n * n), *f = malloc(sizeof(double) * n * n);
  double *probe = calloc((size_t)n * n, sizeof(double));
  for (int i = 0; i < n * n; i++) { u[i] = 0; f[i] = (i % 11) * 0.01; }
#pragma omp target data map(tofrom: u[0:n*n], probe[0:n*n]) map(to: f[0:n*n])
  for (int t = 0; t < iters; t++)
    for (int colour = 0; colour < 2; colour++) {
#pragma omp target teams distribute parallel for
      for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++) {
          if (((i + j) & 1) == colour)
            u[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1] - f[i * n + j]);
          if (j % 4 == 0)
            probe[i * n + j] = u[i * n + j];
        }
    }
  double sum = 0;
  for (int i = 0; i < n * n; i++) sum += u[i] + probe[i];
  printf("rbprobe %.6f\n", sum);
  return 0;
}
