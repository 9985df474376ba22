/* Device thresholding with a conditional store and a periodic neighbour ((j + 1) % n): the store
 * happens on some elements only, and the index wraps (not affine). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000, steps = argc > 2 ? atoi(argv[2]) : 20;
  double *u = malloc(sizeof(double) * n * n), *v = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) u[i] = v[i] = (i * 37 % 101) * 0.01;
#pragma omp target data map(tofrom: u[0:n*n], v[0:n*n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double d = u[i * n + (j + 1) % n] - u[i * n + j];
        if (d > 0.2) v[i * n + j] = u[i * n + j] + 0.5 * d;
      }
    double *t = u; u = v; v = t;
  }
  printf("masked %.5f\n", u[(n / 2) * n + 3]);
  free(u); free(v);
  return 0;
}
