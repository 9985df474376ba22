/* parallel sections: one section offloads a kernel that reads a, the other writes a on the host and
 * copies it to the device with `target update`. Nothing orders the two sections.
 * (The handshake only makes sure two threads run the sections; it orders neither: a kernel after the host's writes reads stale data.) */
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
#pragma omp target
        for (int i = 0; i < N; i++) r[i] = 2.0 * a[i]; /* expect data-race a */ /* may use-of-stale-data a */
      }
#pragma omp section
      {
        meet(1);
        for (int i = 0; i < N; i++) a[i] = -1.0;
#pragma omp target update to(a[0:N]) /* expect data-race a */
      }
    }
  }
  printf("%f\n", r[5]);
  return 0;
}
