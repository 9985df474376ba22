/* parallel sections, correctly synchronised: the kernel and the host write + `target update` are in
 * the same named critical section, so one runs entirely before the other. */
#include <stdio.h>
#define N 1024
static int arrived[2];
static void meet(int me) {
#pragma omp atomic write
  arrived[me] = 1;
  for (int other = 0;;) {
#pragma omp atomic read
    other = arrived[1 - me];
    if (other) break;
  }
}
int main(void) {
  double a[N], r[N];
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target data map(to: a[0:N]) map(from: r[0:N])
  {
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
      {
        meet(0);
#pragma omp critical(dev)
#pragma omp target
        for (int i = 0; i < N; i++) r[i] = 2.0 * a[i];
      }
#pragma omp section
      {
        meet(1);
#pragma omp critical(dev)
        {
          for (int i = 0; i < N; i++) a[i] = -1.0;
#pragma omp target update to(a[0:N])
        }
      }
    }
  }
  printf("%f\n", r[5]);
  return 0;
}
