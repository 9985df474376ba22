/* One store instruction alternates between two arrays every iteration (`(i & 1 ? odd : even)[i / 2]`):
 * its call site feeds two runs in turn, so the run it appends to inline changes at every call. The
 * host refreshes both arrays after mapping them but sends only part of `odd` to the device. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3000, h = n / 2;
  double *even = malloc(h * sizeof(double)), *odd = malloc(h * sizeof(double)), s = 0.0;
  for (int i = 0; i < h; i++) even[i] = odd[i] = 0.0;
#pragma omp target data map(to: even[0:h], odd[0:h])
  {
    for (int i = 0; i < n; i++) {
      double *p = i & 1 ? odd : even;
      p[i / 2] = i * 0.25;
    }
#pragma omp target update to(even[0:h], odd[0:h - 1])
#pragma omp target map(tofrom: s)
    for (int i = 0; i < h; i++) {
      s += even[i];
      s += odd[i]; /* expect use-of-stale-data odd */
    }
  }
  printf("%.1f\n", s);
  free(even);
  free(odd);
  return 0;
}
