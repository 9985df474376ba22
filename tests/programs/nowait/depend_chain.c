/* Correct: nowait kernels and a nowait update ordered by depend, then taskwait. */
#include <stdio.h>
#define N 256
int main(void) {
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
#pragma omp target enter data map(to: x[0:N]) map(alloc: y[0:N])
#pragma omp target nowait depend(inout: x) map(tofrom: x[0:N])
  for (int i = 0; i < N; i++) x[i] = 2.0f * x[i];
#pragma omp target nowait depend(in: x) depend(out: y) map(to: x[0:N]) map(from: y[0:N])
  for (int i = 0; i < N; i++) y[i] = x[i] + 1.0f;
#pragma omp target update from(y[0:N]) nowait depend(in: y)
#pragma omp taskwait
  printf("%f\n", y[N - 1]);
#pragma omp target exit data map(release: x[0:N], y[0:N])
  return 0;
}
