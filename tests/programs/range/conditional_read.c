/* Only odd elements are written and only odd elements are read (a branch inside the loop):
 * a conditional access must not be hoisted as a range over the whole array. No finding. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  long *b = malloc(n * sizeof(long)), s = 0;
#pragma omp target enter data map(alloc: b[0:n])
#pragma omp target
  for (int i = 1; i < n; i += 2) b[i] = i;
#pragma omp target map(tofrom: s)
  for (int i = 0; i < n; i++)
    if (i & 1) s += b[i];
#pragma omp target exit data map(delete: b[0:n])
  printf("%ld\n", s);
  free(b);
  return 0;
}
