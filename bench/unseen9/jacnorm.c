// Jacobi with a convergence check every sweep: reduction(max: err) over the grid, the update into a
// second array, then a copy back in a second kernel (no pointer swap).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 512, m = argc > 2 ? atoi(argv[2]) : 512, iters = argc > 3 ? atoi(argv[3]) : 30;
  double *A = malloc(sizeof(double) * n * m), *An = malloc(sizeof(double) * n * m);
  for (int i = 0; i < n * m; i++) A[i] = An[i] = 0;
  for (int j = 0; j < m; j++) A[j] = An[j] = 1.0;
  double err = 1.0; int it = 0;
#pragma omp target data map(tofrom: A[0:n*m]) map(to: An[0:n*m])
  while (err > 1e-9 && it < iters) {
    err = 0.0;
#pragma omp target teams distribute parallel for reduction(max: err)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < m - 1; j++) {
        An[i * m + j] = 0.25 * (A[i * m + j + 1] + A[i * m + j - 1] + A[(i - 1) * m + j] + A[(i + 1) * m + j]);
        err = fmax(err, fabs(An[i * m + j] - A[i * m + j]));
      }
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < m - 1; j++) A[i * m + j] = An[i * m + j];
    it++;
  }
  printf("jacnorm %d %.6e\n", it, err);
  return 0;
}
