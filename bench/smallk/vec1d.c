/* Many small 1-D kernels, each with its own map clauses (issue 16, the jac2d helper's second shape):
 * per step an axpy that maps x to and y tofrom, then a scaled copy that maps y to and z from. Every
 * kernel transfers its vectors (no enclosing `target data`), so each target region has data ops
 * (alloc, copies, delete) besides its accesses. Args: n (vector length) and steps. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 256;
  int steps = argc > 2 ? atoi(argv[2]) : 1000;
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n), *z = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) { x[i] = (float)(i % 11); y[i] = 1.0f; z[i] = 0.0f; }
  for (int s = 0; s < steps; s++) {
    float a = 0.5f / (float)(s + 1);
    #pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
    for (int i = 0; i < n; i++) y[i] += a * x[i];
    #pragma omp target teams distribute parallel for map(to: y[0:n]) map(from: z[0:n])
    for (int i = 0; i < n; i++) z[i] = 0.25f * y[i];
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += z[i];
  printf("%f\n", sum);
  free(x); free(y); free(z);
  return 0;
}
