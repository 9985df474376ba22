/* A host team fills a mapped array in parallel (static chunks: each thread's stores are appended to
 * its own run by its own call-site cache), the master sends it with `target update to`, the device
 * reads it. The team's barrier must end every thread's runs before the update. Then a second fill
 * without an update: the device reads stale data. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 6000;
  double *a = malloc(n * sizeof(double)), s = 0.0, r = 0.0;
  for (int i = 0; i < n; i++) a[i] = 0.0;
#pragma omp target enter data map(to: a[0:n])
#pragma omp parallel for num_threads(2) schedule(static)
  for (int i = 0; i < n; i++) a[i] = 0.5 * i;
#pragma omp target update to(a[0:n])
#pragma omp target teams distribute parallel for map(tofrom: s) reduction(+: s)
  for (int i = 0; i < n; i++) s += a[i];
#pragma omp parallel for num_threads(2) schedule(static)
  for (int i = 0; i < n; i++) a[i] = 0.25 * i;
#pragma omp target teams distribute parallel for map(tofrom: r) reduction(+: r)
  for (int i = 0; i < n; i++) r += a[i]; /* expect use-of-stale-data a */
#pragma omp target exit data map(delete: a[0:n])
  printf("%.1f %.1f\n", s, r);
  free(a);
  return 0;
}
