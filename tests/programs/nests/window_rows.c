/* Rows of 5 elements, once with gaps (stride 8: the 3 elements between rows are never written,
 * never read; no finding there) and once overlapping (stride 3: each row shares 2 elements with the
 * next, and covers the unwritten elements). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int m = argc > 1 ? atoi(argv[1]) : 100;
  size_t total = (size_t)m * 8;
  int *a = malloc(total * sizeof(int));
  long s1 = 0, s2 = 0;
#pragma omp target data map(alloc: a[0:total]) map(tofrom: s1, s2)
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < m; i++)
      for (int j = 0; j < 5; j++) a[(size_t)i * 8 + j] = i + j;
#pragma omp target teams distribute parallel for reduction(+: s1)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < 5; j++) s1 += a[(size_t)i * 8 + j];
#pragma omp target teams distribute parallel for reduction(+: s2)
    for (int i = 0; i < (m * 8 - 5) / 3; i++)
      for (int j = 0; j < 5; j++) s2 += a[(size_t)i * 3 + j]; /* expect use-of-uninitialized-memory a */
  }
  printf("%ld %ld\n", s1, s2);
  free(a);
  return 0;
}
