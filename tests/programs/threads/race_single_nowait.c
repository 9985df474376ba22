/* parallel + single nowait: the thread that runs the first single offloads a kernel reading a; the
 * other thread does not wait at the end of it and rewrites a with `target update` in the second single.
 * (The handshake only makes sure two threads run the singles; it orders neither operation.) */
#include <stdio.h>
#define N 2048
static int started[2];
static void meet(int me) {
#pragma omp atomic write
  started[me] = 1;
  for (int other = 0;;) {
#pragma omp atomic read
    other = started[1 - me];
    if (other) break;
  }
}
int main(void) {
  float a[N], r[N];
  for (int i = 0; i < N; i++) a[i] = (float)i;
#pragma omp target enter data map(to: a[0:N]) map(alloc: r[0:N])
#pragma omp parallel num_threads(2)
  {
#pragma omp single nowait
    {
      meet(0);
#pragma omp target
      for (int i = 0; i < N; i++) r[i] = a[i] + 1.0f; /* expect data-race a */ /* may use-of-stale-data a */
    }
#pragma omp single nowait
    {
      meet(1);
      for (int i = 0; i < N; i++) a[i] = 0.0f;
#pragma omp target update to(a[0:N]) /* expect data-race a */
    }
  }
#pragma omp target exit data map(from: r[0:N]) map(delete: a[0:N])
  printf("%f\n", r[7]);
  return 0;
}
