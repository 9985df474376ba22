/* Every second element of a row from the one two before: a[r*n + j] = a[r*n + j - 2] + 1, j += 2.
 * The load and the store are strided records of one stride at the same residue: each read sees the
 * previous iteration's write, so there is no finding (only columns 0 and 1 are written before).
 * Reporting the rows' reads before their writes would flag the rest: the load/store check (hulls,
 * then residues) must fail and the loop fall back to per access. The odd columns stay unread. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 16, n = argc > 2 ? atoi(argv[2]) : 64;
  double *a = malloc(sizeof(double) * rows * n);
#pragma omp target enter data map(alloc: a[0:rows*n])
#pragma omp target teams distribute parallel for
  for (int r = 0; r < rows; r++) a[r * n] = a[r * n + 1] = 1.0;
#pragma omp target teams distribute parallel for
  for (int r = 0; r < rows; r++)
    for (int j = 2; j < n; j += 2) a[r * n + j] = a[r * n + j - 2] + 1.0;
#pragma omp target exit data map(from: a[0:rows*n])
  printf("%.1f\n", a[rows * n - 2]);
  free(a);
  return 0;
}
