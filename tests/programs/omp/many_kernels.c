/* Many small target regions, each with its own map clauses (tests/tracer/test_finalize_medium.py):
 * per step an axpy mapping a global coefficient table and x to, y tofrom, then, inside a `target
 * data` region (finalize gives its enter/exit constructs their TARGET_DATA kinds), a kernel that reads
 * y into z. Global and stack objects are mapped. Each step logs ~48 rows: 400 steps are more than a
 * small log (2^14 rows) and far less than a record batch (2^18). Args: steps (default 400). Clean. */
#include <stdio.h>
#include <stdlib.h>
#define N 64

float coef[4] = {0.5f, 0.25f, 0.125f, 0.0625f};

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 400;
  float x[N], y[N], *z = malloc(sizeof(float) * N);
  for (int i = 0; i < N; i++) { x[i] = (float)(i % 5); y[i] = 1.0f; z[i] = 0.0f; }
  for (int s = 0; s < steps; s++) {
    #pragma omp target teams distribute parallel for map(to: coef[0:4], x[0:N]) map(tofrom: y[0:N])
    for (int i = 0; i < N; i++) y[i] += coef[s % 4] * x[i];
    #pragma omp target data map(to: y[0:N]) map(from: z[0:N])
    {
      #pragma omp target teams distribute parallel for
      for (int i = 0; i < N; i++) z[i] = 0.5f * y[i];
    }
  }
  double sum = 0;
  for (int i = 0; i < N; i++) sum += z[i];
  printf("%.3f\n", sum);
  free(z);
  return 0;
}
