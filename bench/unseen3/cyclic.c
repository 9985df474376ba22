/* Device 2-D 9-point smoothing with schedule(static, 1): consecutive rows go to different threads
 * (a thread's rows are nthreads apart, not one chunk). Single-precision, rows of n-2 floats. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024, steps = argc > 2 ? atoi(argv[2]) : 20;
  float *u = malloc(sizeof(float) * n * n), *v = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; i++) u[i] = v[i] = (float)(i % 7);
#pragma omp target data map(tofrom: u[0:n*n], v[0:n*n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for schedule(static, 1)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++) {
        float acc = 0;
        for (int di = -1; di <= 1; di++)
          for (int dj = -1; dj <= 1; dj++) acc += u[(i + di) * n + j + dj];
        v[i * n + j] = acc / 9.0f;
      }
    float *t = u; u = v; v = t;
  }
  printf("cyclic %.5f\n", u[(n / 2) * n + n / 2]);
  free(u); free(v);
  return 0;
}
