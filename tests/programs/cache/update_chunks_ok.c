/* Clean counterpart of update_chunks.c: each chunk is sent right after its last write, inside the
 * loop that writes it, and the device reads the whole array afterwards. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4000, k = 250;
  double *a = malloc(n * sizeof(double)), s = 0.0;
  for (int i = 0; i < n; i++) a[i] = 1.0;
#pragma omp target enter data map(to: a[0:n])
  for (int i = 0; i < n; i++) {
    a[i] = 0.5 * i;
    if ((i + 1) % k == 0) {
#pragma omp target update to(a[i + 1 - k:k])
    }
  }
#pragma omp target teams distribute parallel for map(tofrom: s) reduction(+: s)
  for (int i = 0; i < n; i++) s += a[i];
#pragma omp target exit data map(delete: a[0:n])
  printf("%.1f\n", s);
  free(a);
  return 0;
}
