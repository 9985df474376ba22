/* In-place recurrence a[i] = a[i-1] + 1 on a device copy nobody initialised but a[0]: every read
 * sees the previous iteration's write, so there is no finding. Reporting the loop's reads before
 * its writes would flag a[1..n-2]: the range pass reports a[0]'s read, the writes, then the other
 * reads (a recurrence, quiver_range.cpp recurrence()), or falls back to per access. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  int *a = malloc(n * sizeof(int));
#pragma omp target enter data map(alloc: a[0:n])
#pragma omp target
  {
    /* one line: per access, a[0]'s write and the loop's are one run, which takes the first one's line */
    a[0] = 1; for (int i = 1; i < n; i++) a[i] = a[i - 1] + 1;
  }
#pragma omp target exit data map(from: a[0:n])
  printf("%d\n", a[n - 1]);
  free(a);
  return 0;
}
