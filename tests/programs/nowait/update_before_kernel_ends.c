/* `target update from` may run before the nowait kernel ends: the host may then read stale x. */
#include <stdio.h>
#define N 512
int main(void) {
  double x[N];
  for (int i = 0; i < N; i++) x[i] = 0.0;
#pragma omp target enter data map(to: x[0:N])
#pragma omp target nowait map(tofrom: x[0:N])
  for (int i = 0; i < N; i++) x[i] = 0.5 * i;
#pragma omp target update from(x[0:N]) /* line 10: missing depend / taskwait */
  printf("%f\n", x[N - 1]);              /* line 11: stale in some schedules */
#pragma omp taskwait
#pragma omp target exit data map(release: x[0:N])
  return 0;
}
