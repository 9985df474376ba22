/* Synchronisation inside kernels is not written (SYNC rows are host-side only, docs/record.md);
 * the host threads' around them is: two host parallel regions around kernels whose teams fork,
 * meet at barriers and take a critical section. */
#include <stdio.h>
#define N 256
int main(void) {
  double a[N], s = 0;
  int hits = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp critical
    hits += 1;
  }
#pragma omp target data map(tofrom: a[0:N], hits)
  {
    for (int k = 0; k < 3; k++) {
#pragma omp target teams distribute parallel for
      for (int i = 0; i < N; i++)
        a[i] = i + k;
#pragma omp target parallel num_threads(2) map(tofrom: a[0:N], hits)
      {
#pragma omp critical
        hits += 1;
#pragma omp barrier
        a[0] += 0;
      }
    }
  }
#pragma omp parallel num_threads(2)
  {
#pragma omp critical
    hits += 1;
  }
  for (int i = 0; i < N; i++)
    s += a[i];
  printf("%.0f %d\n", s, hits);
  return 0;
}
