/* Iteration i writes every second point of row i, then reads those of row i + 2, which iteration
 * i + 2 writes: on device memory no clause initialises, every read is of memory not yet written.
 * The writes of rows i, i + 2, i + 4 of one parity have one shape at one distance (planes), and so
 * have the reads; but the write of row i + 2 stamped with the time of row i's write (the first of
 * its held row, before the first read) would put it before its read, and the reads of rows
 * 2 .. ROWS - 1 would look initialised. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40, rows = argc > 2 ? atoi(argv[2]) : 120;
  double *v = malloc(sizeof(double) * n * (rows + 2)), *out = malloc(sizeof(double) * n * rows);
  for (int k = 0; k < n * rows; k++) out[k] = 0.0;
#pragma omp target map(alloc: v[0:n * (rows + 2)]) map(tofrom: out[0:n * rows])
#pragma omp parallel for num_threads(1)
  for (int i = 0; i < rows; i++) {
    for (int j = i % 2; j < n; j += 2)
      v[i * n + j] = i + j;
    for (int j = i % 2; j < n; j += 2)
      out[i * n + j] = v[(i + 2) * n + j] * 0.0; /* expect use-of-uninitialized-memory v */
  }
  printf("%d rows\n", rows);
  free(v);
  free(out);
  return 0;
}
