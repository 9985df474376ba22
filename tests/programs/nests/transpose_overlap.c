/* A transpose within one array: iteration (i, j) writes e[j][i] and then reads e[i][j], so a row is
 * written only up to its diagonal when it is read. The read's row and the written column overlap:
 * the run-time disjointness check fails and the loop's per-access copy runs, so the bytes read
 * before they are written are exactly the upper triangle (a range of the row and a strided record
 * of the column would report every read before any write). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  size_t total = (size_t)n * n;
  float *e = malloc(total * sizeof(float));
  float s = 0.0f;
#pragma omp target map(alloc: e[0:total]) map(tofrom: s)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      e[(size_t)j * n + i] = (float)(i + j);
      s += e[(size_t)i * n + j]; /* expect use-of-uninitialized-memory e */
    }
  printf("done\n");
  free(e);
  return 0;
}
