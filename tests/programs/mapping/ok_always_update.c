/* Correct: `always` and `target update` keep both copies in step; nested data regions. */
#include <stdio.h>
#define N 64
int main(void) {
  int a[N], b[N], s = 0;
  for (int i = 0; i < N; i++) { a[i] = 1; b[i] = 2; }
#pragma omp target data map(to: a[0:N]) map(tofrom: b[0:N])
  {
    for (int i = 0; i < N; i++) a[i] = 3;
#pragma omp target map(always, to: a[0:N]) map(tofrom: s)
    for (int i = 0; i < N; i++) s += a[i];
    for (int i = 0; i < N; i++) a[i] = 4;
#pragma omp target update to(a[0:N])
#pragma omp target data map(to: a[0:N])
    {
#pragma omp target
      for (int i = 0; i < N; i++) b[i] += a[i];
    }
#pragma omp target update from(b[0:N])
    for (int i = 0; i < N; i++) s += b[i];
  }
  printf("%d %d\n", s, b[3]);
  return 0;
}
