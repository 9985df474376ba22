/* Transfers that are never needed, on purpose:
 *  - `big` is copied in by the enter data (line 16) but the kernel overwrites it before reading;
 *  - `out` is mapped tofrom but the kernel only writes it: the copy in is wasted (line 17);
 *  - `in` is mapped to and read by the kernel: fine;
 *  - `big` is copied back by an update (line 23) and overwritten on the host before anyone reads it. */
#include <stdio.h>
#define N 256

int main(void) {
  double in[N], out[N], big[N];
  for (int i = 0; i < N; i++) {
    in[i] = i;
    out[i] = -1.0;
    big[i] = 0.0;
  }

#pragma omp target enter data map(to: big[0:N])
#pragma omp target map(to: in[0:N]) map(tofrom: out[0:N])
  for (int i = 0; i < N; i++) {
    out[i] = 2.0 * in[i];
    big[i] = out[i];
  }

#pragma omp target update from(big[0:N])
  for (int i = 0; i < N; i++)
    big[i] = 1.0;
  double sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += out[i] + big[i];
#pragma omp target exit data map(release: big[0:N])
  printf("sum = %.1f\n", sum);
  return 0;
}
