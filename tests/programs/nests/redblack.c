/* Red-black Gauss-Seidel: per colour, row i updates every second point from 1 + (i + colour) % 2.
 * The store u[i*n+j] and the loads u[i*n+j-1], u[i*n+j+1] of one row interleave (stride 16,
 * residues 0 and 8): their hulls overlap, their bytes do not. Row 5 of f is never written on the
 * device. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 34, sweeps = argc > 2 ? atoi(argv[2]) : 1;
  double *u = malloc(sizeof(double) * n * n), *f = malloc(sizeof(double) * n * n);
  double h2 = 1.0 / ((n - 1) * (n - 1));
  for (int i = 0; i < n * n; i++) u[i] = 0.0;
#pragma omp target data map(tofrom: u[0:n*n]) map(alloc: f[0:n*n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n * n; i++)
      if (i / n != 5) f[i] = 1.0;
    for (int s = 0; s < sweeps; s++)
      for (int color = 0; color < 2; color++) {
#pragma omp target teams distribute parallel for
        for (int i = 1; i < n - 1; i++)
          for (int j = 1 + (i + color) % 2; j < n - 1; j += 2)
            u[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1] - h2 * f[i * n + j]); /* expect use-of-uninitialized-memory f */
      }
  }
  printf("%.6f\n", u[(n / 2) * n + n / 2]);
  free(u); free(f);
  return 0;
}
