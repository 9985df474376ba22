/* A read whose index wraps (`a[2*(r % m) + 1]`) in the loop that writes `a[2*r]`: the read's hull over
 * the loop (odd elements below 2m) meets the store's (every even element of the chunk) though their
 * bytes never do, so the run-time check fails and the loop runs its per-access version: the same bytes
 * as per access, and no race between the odd reads and the even writes. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 300, m = argc > 2 ? atoi(argv[2]) : 8;
  double *a = malloc(sizeof(double) * 2 * n), *b = malloc(sizeof(double) * n);
  for (int i = 0; i < 2 * n; i++) a[i] = i;
  for (int i = 0; i < n; i++) b[i] = 1.0 / (i + 1);
#pragma omp target data map(tofrom: a[0:2 * n]) map(to: b[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int r = 0; r < n; r++)
      a[2 * r] = a[2 * (long)(r % m) + 1] * 0.5 + b[r];
  }
  printf("%.4f %.4f\n", a[2 * (n / 2)], a[2 * n - 2]);
  free(a); free(b);
  return 0;
}
