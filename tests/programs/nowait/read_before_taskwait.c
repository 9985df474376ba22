/* The host reads `a` while the nowait kernel may still be copying it back. */
#include <stdio.h>
#define N 1000
int main(void) {
  int a[N];
#pragma omp target map(from: a[0:N])
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target nowait map(tofrom: a[0:N])
  for (int i = 0; i < N; i++) a[i] += 1;
  printf("%d\n", a[0]); /* line 10: not ordered with the copy back */
#pragma omp taskwait
  printf("%d\n", a[N - 1]);
  return 0;
}
