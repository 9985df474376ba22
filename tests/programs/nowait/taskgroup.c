/* Correct: two nowait kernels inside a taskgroup; the host reads after it ends. */
#include <stdio.h>
#define N 200
int main(void) {
  int a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = b[i] = i;
#pragma omp taskgroup
  {
#pragma omp target nowait map(tofrom: a[0:N])
    for (int i = 0; i < N; i++) a[i] += 1;
#pragma omp target nowait map(tofrom: b[0:N])
    for (int i = 0; i < N; i++) b[i] += 2;
  }
  printf("%d %d\n", a[N - 1], b[N - 1]);
  return 0;
}
