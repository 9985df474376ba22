/* A host loop refreshes an array the device already holds and sends each chunk with
 * `target update to` as soon as the chunk is written, inside the same loop; a kernel then reads it.
 * The stores of the loop are appended to their run by the program itself (call-site cache): every
 * update must still come after the writes of its chunk in the log. The last chunk's update is
 * issued one element early, so the device reads one stale element. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4000, k = 250;
  double *a = malloc(n * sizeof(double)), s = 0.0;
  for (int i = 0; i < n; i++) a[i] = 1.0;
#pragma omp target enter data map(to: a[0:n])
  for (int i = 0; i < n; i++) {
    if (i == n - 1) {
#pragma omp target update to(a[n - k:k])
    }
    a[i] = 0.5 * i;
    if ((i + 1) % k == 0 && i != n - 1) {
#pragma omp target update to(a[i + 1 - k:k])
    }
  }
#pragma omp target teams distribute parallel for map(tofrom: s) reduction(+: s)
  for (int i = 0; i < n; i++)
    s += a[i]; /* expect use-of-stale-data a */
#pragma omp target exit data map(delete: a[0:n])
  printf("%.1f\n", s);
  free(a);
  return 0;
}
