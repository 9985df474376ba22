#include <stdio.h>
#include <stdlib.h>
/* In-place LU without pivoting on the device: one kernel per pivot, a shrinking trailing block. */
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 600;
  double *m = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) m[i * n + j] = (i == j) ? n + 1.0 : 1.0 / (1 + i + j);
  #pragma omp target data map(tofrom: m[0:n*n])
  for (int k = 0; k < n - 1; k++) {
    #pragma omp target teams distribute parallel for
    for (int i = k + 1; i < n; i++) {
      double l = m[i * n + k] / m[k * n + k];
      m[i * n + k] = l;
      for (int j = k + 1; j < n; j++) m[i * n + j] -= l * m[k * n + j];
    }
  }
  printf("m[last]=%f\n", m[n * n - 1]);
  free(m);
  return 0;
}
