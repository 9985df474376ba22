/* A time loop on the host launches a kernel per step whose threads each write a slice of `next`
 * through a store the compiler keeps per access (the index wraps), then copies part of the result
 * back. The device loop's call sites keep their caches across steps only until the kernel ends.
 * The host reads one element the last step did not copy back. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2400, steps = 4, shift = 7;
  double *cur = malloc(n * sizeof(double)), *next = malloc(n * sizeof(double)), s = 0.0;
  for (int i = 0; i < n; i++) cur[i] = next[i] = 1.0;
#pragma omp target data map(to: cur[0:n]) map(tofrom: next[0:n])
  for (int t = 0; t < steps; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) next[(i + shift * t) % n] = cur[i] * 0.5 + t;
#pragma omp target update from(next[0:n - (t == steps - 1)])
    for (int i = 0; i < n - 1; i++) s += next[i];
    s += next[n - 1]; /* expect use-of-stale-data next */
  }
  printf("%.1f\n", s);
  free(cur);
  free(next);
  return 0;
}
