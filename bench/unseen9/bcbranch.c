// Boundary conditions handled inside the loop: a 2D heat step where the border cells copy the old value
// and the interior cells take the 5-point update, both branches storing into the same array (rows of n
// floats, collapse(2), pointer swap).
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 512, steps = argc > 2 ? atoi(argv[2]) : 40;
  float *u = malloc(sizeof(float) * n * n), *w = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; i++) u[i] = (float)(i % 29);
#pragma omp target data map(tofrom: u[0:n*n]) map(alloc: w[0:n*n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        int k = i * n + j;
        if (i == 0 || j == 0 || i == n - 1 || j == n - 1)
          w[k] = u[k];
        else
          w[k] = u[k] + 0.2f * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - 4.0f * u[k]);
      }
    float *t = u; u = w; w = t;
  }
  double sum = 0;
  for (int i = 0; i < n * n; i++) sum += u[i];
  printf("bcbranch %.3f\n", sum);
  return 0;
}
