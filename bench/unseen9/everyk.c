// A 1D smoother that updates only the cells of one colour of a 3-colouring (i % 3 == c), the colour
// changing per sweep: conditional on the index, not on data; a regular gap of two in every stream.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 22, steps = argc > 2 ? atoi(argv[2]) : 30;
  double *x = malloc(sizeof(double) * n), *f = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) { x[i] = 0; f[i] = (i % 11) * 0.1; }
#pragma omp target data map(tofrom: x[0:n]) map(to: f[0:n])
  for (int s = 0; s < steps; s++) {
    int c = s % 3;
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      if (i % 3 == c) x[i] = 0.5 * (x[i - 1] + x[i + 1] + f[i]);
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += x[i];
  printf("everyk %.6f\n", sum);
  return 0;
}
